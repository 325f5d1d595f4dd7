// FUZZ-ARGS: ["--pass-pipeline=builtin.module(mtf-lower-to-stablehlo)"]
// FUZZ-FOUND: internal:RuntimeError@lower.py:_swap_functions on 71f07d4 after 445 executions
sdy.mesh@mesh=<["x"=2]>func.func@f(%a:!mtf.tensor<b=18446744073709551616,f32>){return}