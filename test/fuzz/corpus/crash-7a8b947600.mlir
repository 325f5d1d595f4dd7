// FUZZ-ARGS: ["--sdy-propagation-pipeline"]
// FUZZ-FOUND: crash:signal on 1cae2bb (found beside issue 27: Shardy's propagation pipeline on a recursive call)
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @main(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
