// --mlir-print-ir-before-all prints the module to stderr before each pass, with mlir-opt's
// header (naming the pipeline element as written).
// RUN: meshir-opt %s --pass-pipeline='builtin.module(mtf-strip-layouts, func.func(cse))' --mlir-print-ir-before-all -o %t 2>&1 | filecheck %s

// CHECK: // -----// IR Dump Before mtf-strip-layouts //----- //
// CHECK-NEXT: module {
// CHECK: func.func @f(%arg0: !mtf.tensor<b=8@x, f32>)
// CHECK: // -----// IR Dump Before func.func(cse) //----- //
// CHECK-NEXT: module {
// CHECK: func.func @f(%arg0: !mtf.tensor<b=8, f32>)
// CHECK-NOT: IR Dump
sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: !mtf.tensor<b=8@x, f32>) {
  return
}
