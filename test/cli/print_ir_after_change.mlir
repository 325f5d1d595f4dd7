// --mlir-print-ir-after-change, with --mlir-print-ir-after-all, prints the module only after
// the passes that changed it: here cse, which leaves mtf ops alone, prints nothing.
// RUN: meshir-opt %s --mtf-strip-layouts --cse --mtf-canonicalize --mlir-print-ir-after-all --mlir-print-ir-after-change -o %t 2>&1 | filecheck %s

// CHECK: // -----// IR Dump After mtf-strip-layouts //----- //
// CHECK-NEXT: module {
// CHECK: "mtf.relu"(%arg0) : (!mtf.tensor<b=8, f32>)
// CHECK-NEXT: "mtf.relu"(%arg0) : (!mtf.tensor<b=8, f32>)
// CHECK-NOT: IR Dump After cse
// CHECK: // -----// IR Dump After mtf-canonicalize //----- //
// CHECK-NEXT: module {
// CHECK: "mtf.relu"(%arg0) : (!mtf.tensor<b=8, f32>)
// CHECK-NOT: mtf.relu
// CHECK-NOT: IR Dump
sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  %1 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  return %1 : !mtf.tensor<b=8@x, f32>
}
