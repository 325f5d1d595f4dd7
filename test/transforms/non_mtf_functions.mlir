// MeshIR's passes leave functions without mtf types or ops alone, and refuse to lower an mtf
// declaration (it has no body, and left as it is the output would not be StableHLO).
// RUN: meshir-opt %s --pass-pipeline='builtin.module(mtf-insert-collectives, mtf-lower-to-stablehlo)' | filecheck %s
// RUN: meshir-opt %s --pass-pipeline='builtin.module(mtf-lower-to-stablehlo{mode=gspmd})' | filecheck %s

sdy.mesh @mesh = <["x"=2]>
// CHECK-LABEL: func.func @plain_stablehlo
// CHECK-NEXT: stablehlo.add %arg0, %arg0 : tensor<8xf32>
func.func @plain_stablehlo(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %a, %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}
// CHECK: func.func private @plain_declaration(tensor<8xf32>) -> tensor<8xf32>
func.func private @plain_declaration(%a: tensor<8xf32>) -> tensor<8xf32>

