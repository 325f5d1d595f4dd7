// --allow-unregistered-dialect is accepted and changes nothing: mtf ops are unregistered ops,
// so meshir-opt always allows them (and ops of other unknown dialects).
// RUN: meshir-opt %s --allow-unregistered-dialect -allow-unregistered-dialect | filecheck %s

// CHECK: "mtf.relu"(%arg0)
// CHECK: "foo.bar"() : () -> ()
func.func @f(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  "foo.bar"() : () -> ()
  return %0 : !mtf.tensor<b=8, f32>
}
