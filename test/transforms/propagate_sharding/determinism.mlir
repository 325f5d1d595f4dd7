// Propagation is deterministic (byte-identical output run to run, whatever Python's hash
// seed) and idempotent: propagating its own output changes nothing (the reshards it left,
// marked reshard = true, are not taken for user constraints). Checked on a Transformer
// block with Mesh-TensorFlow rules, then idempotence on every other file of this directory.
// RUN: meshir-opt %s --mtf-propagate-sharding | filecheck %s
// RUN: meshir-opt %s --mtf-propagate-sharding | meshir-opt --mtf-propagate-sharding | filecheck %s
// RUN: meshir-opt %s --mtf-propagate-sharding -o %t.once
// RUN: meshir-opt %t.once --mtf-propagate-sharding -o %t.twice
// RUN: diff %t.once %t.twice
// RUN: env PYTHONHASHSEED=1 meshir-opt %s --mtf-propagate-sharding -o %t.seed1
// RUN: env PYTHONHASHSEED=2 meshir-opt %s --mtf-propagate-sharding -o %t.seed2
// RUN: env PYTHONHASHSEED=12345 meshir-opt %s --mtf-propagate-sharding -o %t.seed3
// RUN: diff %t.once %t.seed1
// RUN: diff %t.once %t.seed2
// RUN: diff %t.once %t.seed3
// RUN: meshir-opt %S/elementwise.mlir --split-input-file --mtf-propagate-sharding -o %t.elementwise.once
// RUN: meshir-opt %t.elementwise.once --split-input-file --mtf-propagate-sharding -o %t.elementwise.twice
// RUN: diff %t.elementwise.once %t.elementwise.twice
// RUN: meshir-opt %S/einsum.mlir --split-input-file --mtf-propagate-sharding -o %t.einsum.once
// RUN: meshir-opt %t.einsum.once --split-input-file --mtf-propagate-sharding -o %t.einsum.twice
// RUN: diff %t.einsum.once %t.einsum.twice
// RUN: meshir-opt %S/reductions.mlir --split-input-file --mtf-propagate-sharding -o %t.reductions.once
// RUN: meshir-opt %t.reductions.once --split-input-file --mtf-propagate-sharding -o %t.reductions.twice
// RUN: diff %t.reductions.once %t.reductions.twice
// RUN: meshir-opt %S/reshape.mlir --split-input-file --mtf-propagate-sharding -o %t.reshape.once
// RUN: meshir-opt %t.reshape.once --split-input-file --mtf-propagate-sharding -o %t.reshape.twice
// RUN: diff %t.reshape.once %t.reshape.twice
// RUN: meshir-opt %S/shape_ops.mlir --split-input-file --mtf-propagate-sharding -o %t.shape_ops.once
// RUN: meshir-opt %t.shape_ops.once --split-input-file --mtf-propagate-sharding -o %t.shape_ops.twice
// RUN: diff %t.shape_ops.once %t.shape_ops.twice
// RUN: meshir-opt %S/indexing_creation.mlir --split-input-file --mtf-propagate-sharding -o %t.indexing_creation.once
// RUN: meshir-opt %t.indexing_creation.once --split-input-file --mtf-propagate-sharding -o %t.indexing_creation.twice
// RUN: diff %t.indexing_creation.once %t.indexing_creation.twice
// RUN: meshir-opt %S/collectives.mlir --split-input-file --mtf-propagate-sharding -o %t.collectives.once
// RUN: meshir-opt %t.collectives.once --split-input-file --mtf-propagate-sharding -o %t.collectives.twice
// RUN: diff %t.collectives.once %t.collectives.twice
// RUN: meshir-opt %S/priorities.mlir --split-input-file --mtf-propagate-sharding -o %t.priorities.once
// RUN: meshir-opt %t.priorities.once --split-input-file --mtf-propagate-sharding -o %t.priorities.twice
// RUN: diff %t.priorities.once %t.priorities.twice

// Embedding lookup, attention (scores, softmax by name, context), residual, a reshape to
// tokens and the FFN, with rules batch:x, heads:y, d_ff:y: batch@x and heads@y/d_ff@y
// everywhere, d_model, seq, mem, d_k replicated, batch's x carried through both reshapes
// (tokens@x), and no reshard at all.
// CHECK-LABEL: func.func @transformer_block_with_rules
// CHECK-SAME: (%arg0: !mtf.tensor<batch=8@x, seq=4@(), i32>, %arg1: !mtf.tensor<vocab=64@(), d_model=16@(), f32>, %arg2: !mtf.tensor<d_model=16@(), heads=2@y, d_k=8@(), f32>, %arg3: !mtf.tensor<d_model=16@(), heads=2@y, d_k=8@(), f32>, %arg4: !mtf.tensor<heads=2@y, d_k=8@(), d_model=16@(), f32>, %arg5: !mtf.tensor<d_model=16@(), d_ff=64@y, f32>, %arg6: !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>
// CHECK-SAME: attributes {mtf.layout_rules = {batch = ["x"], d_ff = ["y"], heads = ["y"]}}
// CHECK-NEXT: %0 = "mtf.gather"(%arg1, %arg0) {dim = "vocab"} : (!mtf.tensor<vocab=64@(), d_model=16@(), f32>, !mtf.tensor<batch=8@x, seq=4@(), i32>) -> !mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>
// CHECK-NEXT: %1 = "mtf.einsum"(%0, %arg2) : (!mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>, !mtf.tensor<d_model=16@(), heads=2@y, d_k=8@(), f32>) -> !mtf.tensor<batch=8@x, seq=4@(), heads=2@y, d_k=8@(), f32>
// CHECK-NEXT: %2 = "mtf.einsum"(%0, %arg3) : (!mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>, !mtf.tensor<d_model=16@(), heads=2@y, d_k=8@(), f32>) -> !mtf.tensor<batch=8@x, seq=4@(), heads=2@y, d_k=8@(), f32>
// CHECK-NEXT: %3 = "mtf.rename"(%2) : (!mtf.tensor<batch=8@x, seq=4@(), heads=2@y, d_k=8@(), f32>) -> !mtf.tensor<batch=8@x, mem=4@(), heads=2@y, d_k=8@(), f32>
// CHECK-NEXT: %4 = "mtf.einsum"(%1, %3) : (!mtf.tensor<batch=8@x, seq=4@(), heads=2@y, d_k=8@(), f32>, !mtf.tensor<batch=8@x, mem=4@(), heads=2@y, d_k=8@(), f32>) -> !mtf.tensor<batch=8@x, heads=2@y, seq=4@(), mem=4@(), f32>
// CHECK-NEXT: %5 = "mtf.reduce_max"(%4) : (!mtf.tensor<batch=8@x, heads=2@y, seq=4@(), mem=4@(), f32>) -> !mtf.tensor<batch=8@x, heads=2@y, seq=4@(), f32>
// CHECK-NEXT: %6 = "mtf.sub"(%4, %5) : (!mtf.tensor<batch=8@x, heads=2@y, seq=4@(), mem=4@(), f32>, !mtf.tensor<batch=8@x, heads=2@y, seq=4@(), f32>) -> !mtf.tensor<batch=8@x, heads=2@y, seq=4@(), mem=4@(), f32>
// CHECK-NEXT: %7 = "mtf.exp"(%6) : (!mtf.tensor<batch=8@x, heads=2@y, seq=4@(), mem=4@(), f32>) -> !mtf.tensor<batch=8@x, heads=2@y, seq=4@(), mem=4@(), f32>
// CHECK-NEXT: %8 = "mtf.reduce_sum"(%7) : (!mtf.tensor<batch=8@x, heads=2@y, seq=4@(), mem=4@(), f32>) -> !mtf.tensor<batch=8@x, heads=2@y, seq=4@(), f32>
// CHECK-NEXT: %9 = "mtf.div"(%7, %8) : (!mtf.tensor<batch=8@x, heads=2@y, seq=4@(), mem=4@(), f32>, !mtf.tensor<batch=8@x, heads=2@y, seq=4@(), f32>) -> !mtf.tensor<batch=8@x, heads=2@y, seq=4@(), mem=4@(), f32>
// CHECK-NEXT: %10 = "mtf.rename"(%0) : (!mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, mem=4@(), d_model=16@(), f32>
// CHECK-NEXT: %11 = "mtf.einsum"(%9, %10, %arg4) : (!mtf.tensor<batch=8@x, heads=2@y, seq=4@(), mem=4@(), f32>, !mtf.tensor<batch=8@x, mem=4@(), d_model=16@(), f32>, !mtf.tensor<heads=2@y, d_k=8@(), d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>
// CHECK-NEXT: %12 = "mtf.add"(%0, %11) : (!mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>, !mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>
// CHECK-NEXT: %13 = "mtf.reshape"(%12) : (!mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>) -> !mtf.tensor<tokens=32@x, d_model=16@(), f32>
// CHECK-NEXT: %14 = "mtf.einsum"(%13, %arg5) : (!mtf.tensor<tokens=32@x, d_model=16@(), f32>, !mtf.tensor<d_model=16@(), d_ff=64@y, f32>) -> !mtf.tensor<tokens=32@x, d_ff=64@y, f32>
// CHECK-NEXT: %15 = "mtf.relu"(%14) : (!mtf.tensor<tokens=32@x, d_ff=64@y, f32>) -> !mtf.tensor<tokens=32@x, d_ff=64@y, f32>
// CHECK-NEXT: %16 = "mtf.einsum"(%15, %arg6) : (!mtf.tensor<tokens=32@x, d_ff=64@y, f32>, !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<tokens=32@x, d_model=16@(), f32>
// CHECK-NEXT: %17 = "mtf.reshape"(%16) : (!mtf.tensor<tokens=32@x, d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>
// CHECK-NEXT: %18 = "mtf.add"(%12, %17) : (!mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>, !mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>
// CHECK-NEXT: return %18 : !mtf.tensor<batch=8@x, seq=4@(), d_model=16@(), f32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @transformer_block_with_rules(%ids: !mtf.tensor<batch=8, seq=4, i32>, %emb: !mtf.tensor<vocab=64, d_model=16, f32>,
                 %wq: !mtf.tensor<d_model=16, heads=2, d_k=8, f32>, %wk: !mtf.tensor<d_model=16, heads=2, d_k=8, f32>,
                 %wo: !mtf.tensor<heads=2, d_k=8, d_model=16, f32>,
                 %w1: !mtf.tensor<d_model=16, d_ff=64, f32>, %w2: !mtf.tensor<d_ff=64, d_model=16, f32>)
    -> !mtf.tensor<batch=8, seq=4, d_model=16, f32>
    attributes {mtf.layout_rules = {batch = ["x"], heads = ["y"], d_ff = ["y"]}} {
  %x = "mtf.gather"(%emb, %ids) {dim = "vocab"} : (!mtf.tensor<vocab=64, d_model=16, f32>, !mtf.tensor<batch=8, seq=4, i32>) -> !mtf.tensor<batch=8, seq=4, d_model=16, f32>
  %q = "mtf.einsum"(%x, %wq) : (!mtf.tensor<batch=8, seq=4, d_model=16, f32>, !mtf.tensor<d_model=16, heads=2, d_k=8, f32>) -> !mtf.tensor<batch=8, seq=4, heads=2, d_k=8, f32>
  %k0 = "mtf.einsum"(%x, %wk) : (!mtf.tensor<batch=8, seq=4, d_model=16, f32>, !mtf.tensor<d_model=16, heads=2, d_k=8, f32>) -> !mtf.tensor<batch=8, seq=4, heads=2, d_k=8, f32>
  %k = "mtf.rename"(%k0) : (!mtf.tensor<batch=8, seq=4, heads=2, d_k=8, f32>) -> !mtf.tensor<batch=8, mem=4, heads=2, d_k=8, f32>
  %s = "mtf.einsum"(%q, %k) : (!mtf.tensor<batch=8, seq=4, heads=2, d_k=8, f32>, !mtf.tensor<batch=8, mem=4, heads=2, d_k=8, f32>) -> !mtf.tensor<batch=8, heads=2, seq=4, mem=4, f32>
  %m = "mtf.reduce_max"(%s) : (!mtf.tensor<batch=8, heads=2, seq=4, mem=4, f32>) -> !mtf.tensor<batch=8, heads=2, seq=4, f32>
  %e0 = "mtf.sub"(%s, %m) : (!mtf.tensor<batch=8, heads=2, seq=4, mem=4, f32>, !mtf.tensor<batch=8, heads=2, seq=4, f32>) -> !mtf.tensor<batch=8, heads=2, seq=4, mem=4, f32>
  %e = "mtf.exp"(%e0) : (!mtf.tensor<batch=8, heads=2, seq=4, mem=4, f32>) -> !mtf.tensor<batch=8, heads=2, seq=4, mem=4, f32>
  %z = "mtf.reduce_sum"(%e) : (!mtf.tensor<batch=8, heads=2, seq=4, mem=4, f32>) -> !mtf.tensor<batch=8, heads=2, seq=4, f32>
  %p = "mtf.div"(%e, %z) : (!mtf.tensor<batch=8, heads=2, seq=4, mem=4, f32>, !mtf.tensor<batch=8, heads=2, seq=4, f32>) -> !mtf.tensor<batch=8, heads=2, seq=4, mem=4, f32>
  %v = "mtf.rename"(%x) : (!mtf.tensor<batch=8, seq=4, d_model=16, f32>) -> !mtf.tensor<batch=8, mem=4, d_model=16, f32>
  %o = "mtf.einsum"(%p, %v, %wo) : (!mtf.tensor<batch=8, heads=2, seq=4, mem=4, f32>, !mtf.tensor<batch=8, mem=4, d_model=16, f32>, !mtf.tensor<heads=2, d_k=8, d_model=16, f32>) -> !mtf.tensor<batch=8, seq=4, d_model=16, f32>
  %r = "mtf.add"(%x, %o) : (!mtf.tensor<batch=8, seq=4, d_model=16, f32>, !mtf.tensor<batch=8, seq=4, d_model=16, f32>) -> !mtf.tensor<batch=8, seq=4, d_model=16, f32>
  %flat = "mtf.reshape"(%r) : (!mtf.tensor<batch=8, seq=4, d_model=16, f32>) -> !mtf.tensor<tokens=32, d_model=16, f32>
  %h = "mtf.einsum"(%flat, %w1) : (!mtf.tensor<tokens=32, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<tokens=32, d_ff=64, f32>
  %a = "mtf.relu"(%h) : (!mtf.tensor<tokens=32, d_ff=64, f32>) -> !mtf.tensor<tokens=32, d_ff=64, f32>
  %y0 = "mtf.einsum"(%a, %w2) : (!mtf.tensor<tokens=32, d_ff=64, f32>, !mtf.tensor<d_ff=64, d_model=16, f32>) -> !mtf.tensor<tokens=32, d_model=16, f32>
  %y1 = "mtf.reshape"(%y0) : (!mtf.tensor<tokens=32, d_model=16, f32>) -> !mtf.tensor<batch=8, seq=4, d_model=16, f32>
  %y = "mtf.add"(%r, %y1) : (!mtf.tensor<batch=8, seq=4, d_model=16, f32>, !mtf.tensor<batch=8, seq=4, d_model=16, f32>) -> !mtf.tensor<batch=8, seq=4, d_model=16, f32>
  return %y : !mtf.tensor<batch=8, seq=4, d_model=16, f32>
}
