// Shardy's propagation, export and explicit-reshard passes segfault on a sharding whose mesh
// is inlined (`mesh<[...]>` instead of `@mesh`), in jaxlib 0.10 to 0.12; jaxlib 0.12's
// sdy-export-pipeline ends by inlining every mesh, so a pass after it meets them. MeshIR
// refuses such input before each of those passes, at the op (issue 28).
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --sdy-insert-explicit-reshards
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --sdy-user-priority-propagate
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --sdy-export-pipeline
// Lifted first, the same input is fine:
// RUN: meshir-opt %s --split-input-file --sdy-lift-inlined-meshes --sdy-insert-explicit-reshards | filecheck %s --check-prefix=LIFTED

// LIFTED: sdy.mesh @mesh = <["x"=4, "y"=2]>
// LIFTED: func.func @main
// expected-error @+1 {{'func.func' op has a Shardy sharding with an inlined mesh (`mesh<[...]>`): Shardy pass}}
func.func @main(%a: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=4, "y"=2]>, [{}, {"y"}]>}, %b: tensor<64xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=4, "y"=2]>, [{"x"}]>}) -> tensor<64x32xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [1] x [0], contracting_dims = [] x [] : (tensor<32x64xf32>, tensor<64xf32>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

// On an op's own sharding, the error is at the op.
// LIFTED: sdy.mesh @mesh = <["x"=2]>
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  // expected-error @+1 {{'stablehlo.negate' op has a Shardy sharding with an inlined mesh}}
  %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<mesh<["x"=2]>, [{}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
