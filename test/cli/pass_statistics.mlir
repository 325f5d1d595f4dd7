// --mlir-pass-statistics prints mlir-opt's statistics report (pipeline display) after the
// run: every pass, a nested pipeline as '<op>' Pipeline with its passes, and under each step
// the statistics meshir-opt measures, sorted by name and aligned as mlir-opt aligns them.
// RUN: meshir-opt %s --pass-pipeline='builtin.module(mtf-strip-layouts, mtf-canonicalize, func.func(cse))' --mlir-pass-statistics -o %t 2>&1 | filecheck %s

// CHECK: ===-------------------------------------------------------------------------===
// CHECK-NEXT: {{^}}                         ... Pass statistics report ...
// CHECK-NEXT: ===-------------------------------------------------------------------------===
// CHECK-NEXT: mtf-strip-layouts
// CHECK-NEXT: {{^}}  (S) 0 num-ops-added   - Operations added (net, by op name)
// CHECK-NEXT: {{^}}  (S) 0 num-ops-removed - Operations removed (net, by op name)
// CHECK-NEXT: mtf-canonicalize
// CHECK-NEXT: {{^}}  (S) 0 num-ops-added   - Operations added (net, by op name)
// CHECK-NEXT: {{^}}  (S) 2 num-ops-removed - Operations removed (net, by op name)
// CHECK-NEXT: 'func.func' Pipeline
// CHECK-NEXT: {{^}}  (S) 0 num-ops-added   - Operations added (net, by op name)
// CHECK-NEXT: {{^}}  (S) 0 num-ops-removed - Operations removed (net, by op name)
// CHECK-NEXT: {{^}}  cse
// CHECK-EMPTY:
sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  %1 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  %2 = "mtf.exp"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  return %1 : !mtf.tensor<b=8@x, f32>
}
