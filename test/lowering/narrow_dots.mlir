// A bf16 einsum lowers to a dot_general with bf16 operands and an f32 result (bf16 matrix
// units, f32 accumulation), converted to the einsum's type; an einsum that returns f32 keeps
// the dot's f32 result. `narrow-dots=false` (mi.compile's choice on the CPU, whose XLA has
// no such dot) converts the operands to f32 first.
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo=narrow-dots=false | filecheck %s --check-prefix=CPU

sdy.mesh @mesh = <["x"=2]>

// CHECK-LABEL: func.func public @bf16_einsum(
// CHECK: %[[D:.*]] = stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0] : (tensor<4x16xbf16>, tensor<16x4xbf16>) -> tensor<4x4xf32>
// CHECK-NEXT: stablehlo.convert %[[D]] : (tensor<4x4xf32>) -> tensor<4x4xbf16>
// CPU-LABEL: func.func public @bf16_einsum(
// CPU: stablehlo.convert %{{.*}} : (tensor<4x16xbf16>) -> tensor<4x16xf32>
// CPU: stablehlo.convert %{{.*}} : (tensor<16x4xbf16>) -> tensor<16x4xf32>
// CPU-NEXT: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
func.func @bf16_einsum(%x: !mtf.tensor<b=8@x, d=16@(), bf16>, %w: !mtf.tensor<d=16@(), f=4@(), bf16>) -> !mtf.tensor<b=8@x, f=4@(), bf16> {
  %0 = "mtf.einsum"(%x, %w) : (!mtf.tensor<b=8@x, d=16@(), bf16>, !mtf.tensor<d=16@(), f=4@(), bf16>) -> !mtf.tensor<b=8@x, f=4@(), bf16>
  return %0 : !mtf.tensor<b=8@x, f=4@(), bf16>
}

// -----

sdy.mesh @mesh = <["x"=2]>

// CHECK-LABEL: func.func public @bf16_einsum_returning_f32(
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0] : (tensor<4x16xbf16>, tensor<16x4xbf16>) -> tensor<4x4xf32>
// CHECK-NOT: stablehlo.convert
// CHECK: sdy.return
func.func @bf16_einsum_returning_f32(%x: !mtf.tensor<b=8@x, d=16@(), bf16>, %w: !mtf.tensor<d=16@(), f=4@(), bf16>) -> !mtf.tensor<b=8@x, f=4@(), f32> {
  %0 = "mtf.einsum"(%x, %w) : (!mtf.tensor<b=8@x, d=16@(), bf16>, !mtf.tensor<d=16@(), f=4@(), bf16>) -> !mtf.tensor<b=8@x, f=4@(), f32>
  return %0 : !mtf.tensor<b=8@x, f=4@(), f32>
}
