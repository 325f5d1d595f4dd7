// The `rules=` option reads every text form of layout rules with one parser: MeshIR's
// comma-separated `b:x,d:(y)` and Mesh-TensorFlow's semicolon-separated `b:x;d:y` give the
// same propagation.
// RUN: meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules="b:x,d:(y)"' | filecheck %s
// RUN: meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules="b:x;d:y"' | filecheck %s
// RUN: meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules=" b : x ; d : (y) "' | filecheck %s

// CHECK: func.func @plain(%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK: "mtf.exp"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
