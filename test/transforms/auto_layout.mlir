// mtf-auto-layout writes the rules its search chooses as mtf.layout_rules, keeping the
// function's own rules (batch:x here) as fixed points; the rest of the pipeline then runs
// as with hand-written rules. Under goal=memory the FFN's weights and d_ff activations split
// over y too. Under goal=time on cpu-virtual (this machine's calibrated row, device_kinds.py) the
// all_reduce that splitting d_ff needs costs more than the compute it saves: batch:x alone,
// and no collective. A budget no candidate fits is an error naming the least-memory one.
// RUN: meshir-opt %s --mtf-auto-layout="goal=memory" | filecheck %s --check-prefix=MEMORY
// RUN: meshir-opt %s --mtf-auto-layout="device=cpu-virtual" --mtf-propagate-sharding --mtf-insert-collectives | filecheck %s --check-prefix=TIME
// RUN: not meshir-opt %s --mtf-auto-layout="memory-budget=1KiB" 2>&1 | filecheck %s --check-prefix=BUDGET
// RUN: not meshir-opt %s --mtf-auto-layout="time-limit=-1" 2>&1 | filecheck %s --check-prefix=LIMIT

sdy.mesh @mesh = <["x"=4, "y"=2]>
// MEMORY-LABEL: func.func @ffn
// MEMORY-SAME: mtf.layout_rules = {batch = ["x"], d_ff = ["y"]}
// TIME-LABEL: func.func @ffn
// TIME-SAME: !mtf.tensor<batch=64@x, d_model=16@(), f32>
// TIME-SAME: mtf.layout_rules = {batch = ["x"]}
// TIME-NOT: mtf.all_reduce
// BUDGET: error: pass 'mtf-auto-layout' failed: no layout fits the memory budget of 1 KiB per device
// BUDGET-SAME: (batch:x, d_ff:y)
// LIMIT: error: pass 'mtf-auto-layout' failed: time-limit must be a positive number of seconds, got -1.0
func.func @ffn(%x: !mtf.tensor<batch=64, d_model=16, f32>, %w1: !mtf.tensor<d_model=16, d_ff=64, f32>, %w2: !mtf.tensor<d_ff=64, d_model=16, f32>) -> !mtf.tensor<batch=64, d_model=16, f32> attributes {mtf.mesh = @mesh, mtf.layout_rules = {batch = ["x"]}} {
  %h = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=64, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<batch=64, d_ff=64, f32>
  %r = "mtf.relu"(%h) : (!mtf.tensor<batch=64, d_ff=64, f32>) -> !mtf.tensor<batch=64, d_ff=64, f32>
  %y = "mtf.einsum"(%r, %w2) : (!mtf.tensor<batch=64, d_ff=64, f32>, !mtf.tensor<d_ff=64, d_model=16, f32>) -> !mtf.tensor<batch=64, d_model=16, f32>
  return %y : !mtf.tensor<batch=64, d_model=16, f32>
}
