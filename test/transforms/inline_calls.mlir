// RUN: meshir-opt %s --mtf-inline | filecheck %s

// A call of a private function is replaced by a copy of its body; the callee, now unused,
// is removed. Public callees stay.
// CHECK-NOT: func.func private @square
// CHECK-LABEL: func.func @caller
// CHECK-NEXT: %[[M:.*]] = "mtf.mul"(%arg0, %arg0)
// CHECK-NEXT: %[[E:.*]] = "mtf.exp"(%[[M]])
// CHECK-NEXT: %[[A:.*]] = "mtf.add"(%[[E]], %arg0)
// CHECK-NEXT: return %[[A]]
// CHECK-LABEL: func.func @public_callee
func.func private @square(%a: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  %0 = "mtf.mul"(%a, %a) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %0 : !mtf.tensor<b=4, f32>
}
func.func @caller(%x: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  %0 = func.call @square(%x) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = func.call @public_callee(%0) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %2 = "mtf.add"(%1, %x) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %2 : !mtf.tensor<b=4, f32>
}
func.func @public_callee(%a: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %0 : !mtf.tensor<b=4, f32>
}
