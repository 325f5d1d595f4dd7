// FUZZ-ARGS: ["--mlir-very-unsafe-disable-verifier-on-parsing", "--pass-pipeline=builtin.module(mtf-autodiff)"]
// FUZZ-FOUND: internal:ValueError@signature.py:_names on 536a80c after 38416 executions
func.func@mesh(%x:!mtf.tensor<b=4, f32>)->(!mtf.tensor<b=4, f32>{mtf.name=3}){return %x : !mtf.tensor<b=4, f32>
}