// --mlir-print-ir-after-all prints the module to stderr after each pass, with mlir-opt's header.
// RUN: meshir-opt %s --pass-pipeline='builtin.module(mtf-strip-layouts, func.func(cse))' --mlir-print-ir-after-all -o %t 2>&1 | filecheck %s

sdy.mesh @mesh = <["x"=2]>

// CHECK: // -----// IR Dump After mtf-strip-layouts //----- //
// CHECK-NEXT: module {
// CHECK: func.func @f(%arg0: !mtf.tensor<b=8, f32>)
// CHECK: // -----// IR Dump After func.func(cse) //----- //
// CHECK-NEXT: module {
// CHECK: func.func @f(%arg0: !mtf.tensor<b=8, f32>)
// CHECK-NOT: IR Dump
func.func @f(%a: !mtf.tensor<b=8@x, f32>) {
  return
}
