// FUZZ-ARGS: ["--pass-pipeline=builtin.module(mtf-autodiff)"]
// FUZZ-FOUND: internal:IndexError@gradient.py:gradient_function on 332d739 after 58918 executions
func.func private@axes_without_mesh(!mtf.tensor<d=4,f32>)->!mtf.tensor<f32>