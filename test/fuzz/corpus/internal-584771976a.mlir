// FUZZ-ARGS: ["--mtf-lower-to-stablehlo=mode=gspmd"]
// FUZZ-FOUND: internal:IndexError@lower.py:_is_mtf_function on 71f07d4 after 2060 executions
func.func private@f(tensor<8xf32>)->tensor<8xf32>