// FUZZ-ARGS: ["--mlir-very-unsafe-disable-verifier-on-parsing", "--mtf-strip-layouts"]
// FUZZ-FOUND: internal:TypeContentError@tensor_type.py:__post_init__ on 71f07d4 after 3644 executions
func.func@name_used_twice(%a:!mtf.tensor<d=4,d=8,f32>){return}