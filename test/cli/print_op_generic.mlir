// --mlir-print-op-generic prints every op in the generic form, mtf ops included, and the
// IR dumps of --mlir-print-ir-* too.
// RUN: meshir-opt %s --mlir-print-op-generic --mtf-strip-layouts --mlir-print-ir-after-all 2>&1 | filecheck %s

// CHECK: // -----// IR Dump After mtf-strip-layouts //----- //
// CHECK-NEXT: "builtin.module"() ({
// CHECK: "func.func"() <{function_type = (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>, sym_name = "f"}> ({
// CHECK-NEXT: ^bb0(%arg0: !mtf.tensor<b=8, f32>):
// CHECK-NEXT: %0 = "mtf.relu"(%arg0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
// CHECK-NEXT: "func.return"(%0) : (!mtf.tensor<b=8, f32>) -> ()
// The output, after the dump:
// CHECK: "builtin.module"() ({
// CHECK: "func.return"(%0) : (!mtf.tensor<b=8, f32>) -> ()
// CHECK-NOT: func.func @f
sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  return %0 : !mtf.tensor<b=8@x, f32>
}
