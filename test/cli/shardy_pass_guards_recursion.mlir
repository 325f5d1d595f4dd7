// Shardy's propagation pipeline segfaulted on a recursive call in a function it keeps (one
// symbol DCE does not drop); MeshIR refuses it at the call, naming the cycle (issue 27).
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --sdy-propagation-pipeline

sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'func.call' op @main calls itself (@main -> @main): Shardy pass 'sdy-propagation-pipeline' crashes on recursive calls}}
  %0 = func.call @main(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @g(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @g(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'func.call' op @g calls @main, which leads back to @g (@main -> @g -> @main)}}
  %0 = func.call @main(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A public recursive function beside @main is kept, so it counts.
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}
func.func @h(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'func.call' op @h calls itself (@h -> @h)}}
  %0 = func.call @h(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A private recursive function nothing uses is dropped before propagation: fine.
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}
func.func private @unused(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @unused(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
