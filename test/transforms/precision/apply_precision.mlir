// mtf-apply-precision: each op computes in the type its class's PRECISION trait names
// (transforms/passes/precision.py), and the function keeps its signature.
// RUN: meshir-opt %s --split-input-file --mtf-apply-precision | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-apply-precision=compute=f16 | filecheck %s --check-prefix=F16
// RUN: not meshir-opt %s --mtf-apply-precision=compute=i32 2>&1 | filecheck %s --check-prefix=BAD
// BAD: pass 'mtf-apply-precision' failed: mtf-apply-precision: compute must be a float type (bf16, f16, f32, f64), got 'i32'

// Layer-norm statistics stay f32: the sums read the einsum's bf16 result widened once, the
// centering promotes to f32, rsqrt is f32; the scale is cast to bf16 at its use (the
// policy's per-use cast) and promoted back to meet the f32 normalized value.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: -> !mtf.tensor<b=8, f=4, f32>
// CHECK-NEXT: %0 = "mtf.cast"(%arg0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, bf16>
// CHECK-NEXT: %1 = "mtf.cast"(%arg1) : (!mtf.tensor<d=16, f=4, f32>) -> !mtf.tensor<d=16, f=4, bf16>
// CHECK-NEXT: %2 = "mtf.einsum"(%0, %1) : ({{.*}}bf16>, {{.*}}bf16>) -> !mtf.tensor<b=8, f=4, bf16>
// CHECK-NEXT: %3 = "mtf.cast"(%2) : (!mtf.tensor<b=8, f=4, bf16>) -> !mtf.tensor<b=8, f=4, f32>
// CHECK-NEXT: %4 = "mtf.reduce_sum"(%3) : (!mtf.tensor<b=8, f=4, f32>) -> !mtf.tensor<b=8, f32>
// CHECK: %7 = "mtf.sub"(%3, %6) : ({{.*}}f32>, {{.*}}f32>) -> !mtf.tensor<b=8, f=4, f32>
// CHECK: %9 = "mtf.reduce_sum"(%8) : (!mtf.tensor<b=8, f=4, f32>) -> !mtf.tensor<b=8, f32>
// CHECK-NEXT: %10 = "mtf.rsqrt"(%9) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
// CHECK: %12 = "mtf.cast"(%arg2) : (!mtf.tensor<f=4, f32>) -> !mtf.tensor<f=4, bf16>
// CHECK-NEXT: %13 = "mtf.cast"(%12) : (!mtf.tensor<f=4, bf16>) -> !mtf.tensor<f=4, f32>
// CHECK-NEXT: %14 = "mtf.mul"(%11, %13) : ({{.*}}f32>, {{.*}}f32>) -> !mtf.tensor<b=8, f=4, f32>
// CHECK-NEXT: return %14 : !mtf.tensor<b=8, f=4, f32>
// F16-LABEL: func.func @layer_norm
// F16: "mtf.einsum"{{.*}} -> !mtf.tensor<b=8, f=4, f16>
func.func @layer_norm(%x: !mtf.tensor<b=8, d=16, f32>, %w: !mtf.tensor<d=16, f=4, f32>, %scale: !mtf.tensor<f=4, f32>) -> !mtf.tensor<b=8, f=4, f32> {
  %h = "mtf.einsum"(%x, %w) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<d=16, f=4, f32>) -> !mtf.tensor<b=8, f=4, f32>
  %sum = "mtf.reduce_sum"(%h) : (!mtf.tensor<b=8, f=4, f32>) -> !mtf.tensor<b=8, f32>
  %quarter = "mtf.constant"() {value = 0.25 : f64} : () -> !mtf.tensor<f32>
  %mean = "mtf.mul"(%sum, %quarter) : (!mtf.tensor<b=8, f32>, !mtf.tensor<f32>) -> !mtf.tensor<b=8, f32>
  %c = "mtf.sub"(%h, %mean) : (!mtf.tensor<b=8, f=4, f32>, !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f=4, f32>
  %sq = "mtf.mul"(%c, %c) : (!mtf.tensor<b=8, f=4, f32>, !mtf.tensor<b=8, f=4, f32>) -> !mtf.tensor<b=8, f=4, f32>
  %var = "mtf.reduce_sum"(%sq) : (!mtf.tensor<b=8, f=4, f32>) -> !mtf.tensor<b=8, f32>
  %r = "mtf.rsqrt"(%var) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  %y = "mtf.mul"(%c, %r) : (!mtf.tensor<b=8, f=4, f32>, !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f=4, f32>
  %z = "mtf.mul"(%y, %scale) : (!mtf.tensor<b=8, f=4, f32>, !mtf.tensor<f=4, f32>) -> !mtf.tensor<b=8, f=4, f32>
  return %z : !mtf.tensor<b=8, f=4, f32>
}


// -----

// Softmax: the scores stay bf16 through the weak constant (cast to bf16, not promoting the
// scores) and the max (exact in any type); exp widens to f32, so the sum and the division do.
// CHECK-LABEL: func.func @softmax_and_weak_constants
// CHECK: %2 = "mtf.einsum"(%0, %1) : ({{.*}}) -> !mtf.tensor<b=8, m=8, bf16>
// CHECK-NEXT: %3 = "mtf.constant"() {value = 5.000000e-01 : f64} : () -> !mtf.tensor<f32>
// CHECK-NEXT: %4 = "mtf.cast"(%3) : (!mtf.tensor<f32>) -> !mtf.tensor<bf16>
// CHECK-NEXT: %5 = "mtf.mul"(%2, %4) : ({{.*}}) -> !mtf.tensor<b=8, m=8, bf16>
// CHECK-NEXT: %6 = "mtf.reduce_max"(%5) : ({{.*}}) -> !mtf.tensor<b=8, bf16>
// CHECK-NEXT: %7 = "mtf.sub"(%5, %6) : ({{.*}}) -> !mtf.tensor<b=8, m=8, bf16>
// CHECK-NEXT: %8 = "mtf.cast"(%7) : (!mtf.tensor<b=8, m=8, bf16>) -> !mtf.tensor<b=8, m=8, f32>
// CHECK-NEXT: %9 = "mtf.exp"(%8) : ({{.*}}) -> !mtf.tensor<b=8, m=8, f32>
// CHECK-NEXT: %10 = "mtf.reduce_sum"(%9) : ({{.*}}) -> !mtf.tensor<b=8, f32>
// CHECK-NEXT: %11 = "mtf.div"(%9, %10) : ({{.*}}) -> !mtf.tensor<b=8, m=8, f32>
// CHECK-NEXT: return %11 : !mtf.tensor<b=8, m=8, f32>
func.func @softmax_and_weak_constants(%q: !mtf.tensor<b=8, d=16, f32>, %k: !mtf.tensor<m=8, d=16, f32>) -> !mtf.tensor<b=8, m=8, f32> {
  %l = "mtf.einsum"(%q, %k) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<m=8, d=16, f32>) -> !mtf.tensor<b=8, m=8, f32>
  %half = "mtf.constant"() {value = 0.5 : f64} : () -> !mtf.tensor<f32>
  %s = "mtf.mul"(%l, %half) : (!mtf.tensor<b=8, m=8, f32>, !mtf.tensor<f32>) -> !mtf.tensor<b=8, m=8, f32>
  %max = "mtf.reduce_max"(%s) : (!mtf.tensor<b=8, m=8, f32>) -> !mtf.tensor<b=8, f32>
  %sh = "mtf.sub"(%s, %max) : (!mtf.tensor<b=8, m=8, f32>, !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, m=8, f32>
  %e = "mtf.exp"(%sh) : (!mtf.tensor<b=8, m=8, f32>) -> !mtf.tensor<b=8, m=8, f32>
  %sum = "mtf.reduce_sum"(%e) : (!mtf.tensor<b=8, m=8, f32>) -> !mtf.tensor<b=8, f32>
  %p = "mtf.div"(%e, %sum) : (!mtf.tensor<b=8, m=8, f32>, !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, m=8, f32>
  return %p : !mtf.tensor<b=8, m=8, f32>
}


// -----

// A value read by two contractions is cast once, and a rename of it is repeated after the
// cast (the f32 rename goes); an argument read by a range op (exp) is read as it is.
// CHECK-LABEL: func.func @one_cast_per_value
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
// CHECK-NEXT: %1 = "mtf.cast"(%arg1)
// CHECK-NEXT: %2 = "mtf.cast"(%0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, bf16>
// CHECK-NEXT: %3 = "mtf.einsum"(%2, %1)
// CHECK-NEXT: %4 = "mtf.rename"(%2) : (!mtf.tensor<b=8, d=16, bf16>) -> !mtf.tensor<c=8, d=16, bf16>
// CHECK-NEXT: %5 = "mtf.einsum"(%4, %1)
// CHECK-NOT: "mtf.rename"
// CHECK: return
func.func @one_cast_per_value(%x: !mtf.tensor<b=8, d=16, f32>, %w: !mtf.tensor<d=16, f=4, f32>) -> (!mtf.tensor<b=8, f=4, f32>, !mtf.tensor<c=8, f=4, f32>) {
  %e = "mtf.exp"(%x) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %a = "mtf.einsum"(%e, %w) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<d=16, f=4, f32>) -> !mtf.tensor<b=8, f=4, f32>
  %r = "mtf.rename"(%e) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<c=8, d=16, f32>
  %b = "mtf.einsum"(%r, %w) : (!mtf.tensor<c=8, d=16, f32>, !mtf.tensor<d=16, f=4, f32>) -> !mtf.tensor<c=8, f=4, f32>
  return %a, %b : !mtf.tensor<b=8, f=4, f32>, !mtf.tensor<c=8, f=4, f32>
}


// -----

// A scan: the stacked weights are cast before it and its body reads bf16 slices; the carry
// keeps its written f32 type (cast at each read, widened before the yield).
// CHECK-LABEL: func.func @scan_slices_follow_carries_keep
// CHECK-NEXT: %0 = "mtf.cast"(%arg1) : (!mtf.tensor<layers=2, d=16, e=16, f32>) -> !mtf.tensor<layers=2, d=16, e=16, bf16>
// CHECK-NEXT: %1 = "mtf.scan"(%arg0, %0)
// CHECK-NEXT: ^bb0(%arg2: !mtf.tensor<i32>, %arg3: !mtf.tensor<b=8, d=16, f32>, %arg4: !mtf.tensor<d=16, e=16, bf16>):
// CHECK-NEXT: %2 = "mtf.cast"(%arg3) : ({{.*}}f32>) -> !mtf.tensor<b=8, d=16, bf16>
// CHECK-NEXT: %3 = "mtf.einsum"(%2, %arg4)
// CHECK-NEXT: %4 = "mtf.cast"(%3) : ({{.*}}bf16>) -> !mtf.tensor<b=8, e=16, f32>
// CHECK-NEXT: %5 = "mtf.rename"(%4)
// CHECK-NEXT: "mtf.yield"(%5) : (!mtf.tensor<b=8, d=16, f32>) -> ()
// CHECK: -> !mtf.tensor<b=8, d=16, f32>
func.func @scan_slices_follow_carries_keep(%h0: !mtf.tensor<b=8, d=16, f32>, %ws: !mtf.tensor<layers=2, d=16, e=16, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %out = "mtf.scan"(%h0, %ws) ({
  ^bb0(%i: !mtf.tensor<i32>, %h: !mtf.tensor<b=8, d=16, f32>, %w: !mtf.tensor<d=16, e=16, f32>):
    %y = "mtf.einsum"(%h, %w) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<d=16, e=16, f32>) -> !mtf.tensor<b=8, e=16, f32>
    %n = "mtf.rename"(%y) : (!mtf.tensor<b=8, e=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
    "mtf.yield"(%n) : (!mtf.tensor<b=8, d=16, f32>) -> ()
  }) {length = 2, carries = 1, dim = "layers"} : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<layers=2, d=16, e=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %out : !mtf.tensor<b=8, d=16, f32>
}

// -----

// Several public functions and a declaration: no entry, so arguments are read as the ops
// need them (the einsum casts its operand once), and the declaration has no body to retype.
// CHECK-LABEL: func.func private @declared(!mtf.tensor<b=2, f32>) -> !mtf.tensor<b=2, f32>
// CHECK-LABEL: func.func @first
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b=2, f32>) -> !mtf.tensor<b=2, f32>
// CHECK-LABEL: func.func @second
// CHECK-NEXT: %0 = "mtf.cast"(%arg0) : (!mtf.tensor<b=2, d=2, f32>) -> !mtf.tensor<b=2, d=2, bf16>
// CHECK-NEXT: %1 = "mtf.einsum"(%0, %0) : ({{.*}}) -> !mtf.tensor<b=2, bf16>
// CHECK-NEXT: %2 = "mtf.cast"(%1) : (!mtf.tensor<b=2, bf16>) -> !mtf.tensor<b=2, f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=2, f32>
func.func private @declared(%a: !mtf.tensor<b=2, f32>) -> !mtf.tensor<b=2, f32>
func.func @first(%x: !mtf.tensor<b=2, f32>) -> !mtf.tensor<b=2, f32> {
  %0 = "mtf.exp"(%x) : (!mtf.tensor<b=2, f32>) -> !mtf.tensor<b=2, f32>
  return %0 : !mtf.tensor<b=2, f32>
}
func.func @second(%x: !mtf.tensor<b=2, d=2, f32>) -> !mtf.tensor<b=2, f32> {
  %0 = "mtf.einsum"(%x, %x) : (!mtf.tensor<b=2, d=2, f32>, !mtf.tensor<b=2, d=2, f32>) -> !mtf.tensor<b=2, f32>
  return %0 : !mtf.tensor<b=2, f32>
}
