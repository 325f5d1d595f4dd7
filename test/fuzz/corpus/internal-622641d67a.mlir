// FUZZ-ARGS: ["--mlir-very-unsafe-disable-verifier-on-parsing", "--mtf-strip-layouts"]
// FUZZ-FOUND: internal:TypeSyntaxError@tensor_type.py:fail on 71f07d4 after 2154 executions
func.func@trailing_comma_in_axes(%a:!mtf.tensor<()>){return}