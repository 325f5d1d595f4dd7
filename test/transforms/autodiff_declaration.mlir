// mtf-autodiff on a declaration: a located error (it used to be an internal IndexError).
// RUN: meshir-opt %s --verify-diagnostics --pass-pipeline='builtin.module(mtf-autodiff)'

// expected-error @+1 {{@declared is a declaration (no body): there is nothing to differentiate}}
func.func private @declared(!mtf.tensor<d=4, f32>) -> !mtf.tensor<f32>
