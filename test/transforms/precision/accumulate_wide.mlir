// mtf-accumulate-wide: a gradient's pieces - narrow einsums widened by a cast on their way to
// a result through adds and moves - return the wide type, so their sums (and any sum across
// devices) are f32. Values that do not reach a result that way keep their narrow sums.
// RUN: meshir-opt %s --split-input-file --mtf-accumulate-wide | filecheck %s

// A parameter read twice: its pieces' sum is f32; the piece read only on the way (through a
// transpose) becomes an f32 einsum, the piece also read by the activation gradient %act is
// cast where the sum reads it; %act (returned narrow) keeps its bf16 einsum.
// CHECK-LABEL: func.func @gradient_pieces
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0, %arg1) : ({{.*}}bf16>, {{.*}}bf16>) -> !mtf.tensor<d=16, f=4, bf16>
// CHECK-NEXT: %1 = "mtf.einsum"(%arg0, %arg2) : ({{.*}}bf16>, {{.*}}bf16>) -> !mtf.tensor<f=4, d=16, f32>
// CHECK-NEXT: %2 = "mtf.transpose"(%1) : (!mtf.tensor<f=4, d=16, f32>) -> !mtf.tensor<d=16, f=4, f32>
// CHECK-NEXT: %3 = "mtf.cast"(%0) : (!mtf.tensor<d=16, f=4, bf16>) -> !mtf.tensor<d=16, f=4, f32>
// CHECK-NEXT: %4 = "mtf.add"(%3, %2) : ({{.*}}f32>, {{.*}}f32>) -> !mtf.tensor<d=16, f=4, f32>
// CHECK-NEXT: %5 = "mtf.einsum"(%arg1, %0) : ({{.*}}) -> !mtf.tensor<b=8, d=16, bf16>
// CHECK-NEXT: %6 = "mtf.exp"(%5)
// CHECK-NEXT: return %4, %6 : !mtf.tensor<d=16, f=4, f32>, !mtf.tensor<b=8, d=16, bf16>
func.func @gradient_pieces(%x: !mtf.tensor<b=8, d=16, bf16>, %ct: !mtf.tensor<b=8, f=4, bf16>, %ct2: !mtf.tensor<b=8, f=4, bf16>) -> (!mtf.tensor<d=16, f=4, f32>, !mtf.tensor<b=8, d=16, bf16>) {
  %a = "mtf.einsum"(%x, %ct) : (!mtf.tensor<b=8, d=16, bf16>, !mtf.tensor<b=8, f=4, bf16>) -> !mtf.tensor<d=16, f=4, bf16>
  %b = "mtf.einsum"(%x, %ct2) : (!mtf.tensor<b=8, d=16, bf16>, !mtf.tensor<b=8, f=4, bf16>) -> !mtf.tensor<f=4, d=16, bf16>
  %bt = "mtf.transpose"(%b) : (!mtf.tensor<f=4, d=16, bf16>) -> !mtf.tensor<d=16, f=4, bf16>
  %s = "mtf.add"(%a, %bt) : (!mtf.tensor<d=16, f=4, bf16>, !mtf.tensor<d=16, f=4, bf16>) -> !mtf.tensor<d=16, f=4, bf16>
  %w = "mtf.cast"(%s) : (!mtf.tensor<d=16, f=4, bf16>) -> !mtf.tensor<d=16, f=4, f32>
  %act = "mtf.einsum"(%ct, %a) : (!mtf.tensor<b=8, f=4, bf16>, !mtf.tensor<d=16, f=4, bf16>) -> !mtf.tensor<b=8, d=16, bf16>
  %e = "mtf.exp"(%act) : (!mtf.tensor<b=8, d=16, bf16>) -> !mtf.tensor<b=8, d=16, bf16>
  return %w, %e : !mtf.tensor<d=16, f=4, f32>, !mtf.tensor<b=8, d=16, bf16>
}

// -----

// A bias's gradient: the sum over the batch moves under the cast (summed in f32); a piece
// read twice is cast where it is, and a cast of something else stays.
// CHECK-LABEL: func.func @sums_and_shared_pieces
// CHECK-NEXT: %0 = "mtf.cast"(%arg0) : (!mtf.tensor<b=8, f=4, bf16>) -> !mtf.tensor<b=8, f=4, f32>
// CHECK-NEXT: %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=8, f=4, f32>) -> !mtf.tensor<f=4, f32>
// CHECK-NEXT: %2 = "mtf.einsum"(%arg0, %arg0) : ({{.*}}) -> !mtf.tensor<f=4, bf16>
// CHECK-NEXT: %3 = "mtf.exp"(%2)
// CHECK-NEXT: %4 = "mtf.cast"(%2) : (!mtf.tensor<f=4, bf16>) -> !mtf.tensor<f=4, f32>
// CHECK-NEXT: %5 = "mtf.add"(%1, %4)
// CHECK-NEXT: %6 = "mtf.cast"(%3) : (!mtf.tensor<f=4, bf16>) -> !mtf.tensor<f=4, f32>
// CHECK-NEXT: return %5, %6
func.func @sums_and_shared_pieces(%ct: !mtf.tensor<b=8, f=4, bf16>) -> (!mtf.tensor<f=4, f32>, !mtf.tensor<f=4, f32>) {
  %s = "mtf.reduce_sum"(%ct) : (!mtf.tensor<b=8, f=4, bf16>) -> !mtf.tensor<f=4, bf16>
  %sq = "mtf.einsum"(%ct, %ct) : (!mtf.tensor<b=8, f=4, bf16>, !mtf.tensor<b=8, f=4, bf16>) -> !mtf.tensor<f=4, bf16>
  %e = "mtf.exp"(%sq) : (!mtf.tensor<f=4, bf16>) -> !mtf.tensor<f=4, bf16>
  %t = "mtf.add"(%s, %sq) : (!mtf.tensor<f=4, bf16>, !mtf.tensor<f=4, bf16>) -> !mtf.tensor<f=4, bf16>
  %w = "mtf.cast"(%t) : (!mtf.tensor<f=4, bf16>) -> !mtf.tensor<f=4, f32>
  %ew = "mtf.cast"(%e) : (!mtf.tensor<f=4, bf16>) -> !mtf.tensor<f=4, f32>
  return %w, %ew : !mtf.tensor<f=4, f32>, !mtf.tensor<f=4, f32>
}
