// An mtf declaration has no body to lower: a located error, not a crash.
// RUN: meshir-opt %s --verify-diagnostics --pass-pipeline='builtin.module(mtf-lower-to-stablehlo)'
// RUN: meshir-opt %s --verify-diagnostics --pass-pipeline='builtin.module(mtf-lower-to-stablehlo{mode=gspmd})'

sdy.mesh @mesh = <["x"=2]>
// expected-error @+1 {{'func.func' op @declared is a declaration with !mtf.tensor types: mtf-lower-to-stablehlo lowers function bodies; define @declared or remove it}}
func.func private @declared(%a: !mtf.tensor<a=4@x, f32>) -> !mtf.tensor<a=4@x, f32>
