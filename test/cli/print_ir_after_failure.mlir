// --mlir-print-ir-after-failure prints the module after the pass that failed (after its
// error), and nothing after the passes that succeeded.
// RUN: not meshir-opt %s --mtf-strip-layouts --mtf-lower-to-stablehlo --mlir-print-ir-after-failure 2>&1 | filecheck %s

// CHECK-NOT: IR Dump After mtf-strip-layouts
// CHECK: print_ir_after_failure.mlir:[[# @LINE + 7]]:8: error: 'mtf.relu' op is not partitioned
// CHECK: // -----// IR Dump After mtf-lower-to-stablehlo Failed //----- //
// CHECK-NEXT: module {
// CHECK: "mtf.relu"(%arg0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
// CHECK-NOT: IR Dump
sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  return %0 : !mtf.tensor<b=8@x, f32>
}
