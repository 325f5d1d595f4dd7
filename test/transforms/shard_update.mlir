// mtf-shard-update decides the layouts mi.train_step(shard_update=...) left to the rules.
// The data axes of "auto" split the batch (x) and no parameter; w's largest unsplit dim
// (d_model) takes them, b's only dim (d_ff, on y by the rules) takes them after y. Each
// marker becomes a boundary on that dim (`cut`): `update` and `stored` pin it to the
// update layout (`stored` also writes it on the argument: b is stored split), `compute`
// leaves it free for the rules and the ops that read it. Propagation and collective
// insertion then give one reduce_scatter per gradient and one all_gather per new parameter.
// RUN: meshir-opt %s --split-input-file --mtf-shard-update='rules="batch:x;d_ff:y"' | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-shard-update='rules="batch:x;d_ff:y"' --mtf-propagate-sharding='rules="batch:x;d_ff:y"' --mtf-insert-collectives | filecheck %s --check-prefix=COLL
// RUN: not meshir-opt %s --split-input-file --mtf-propagate-sharding 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not meshir-opt %s --split-input-file --mtf-shard-update='rules="batch:x;d_ff:(x,y)"' 2>&1 | filecheck %s --check-prefix=NOAXIS

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @sgd_step
// CHECK-SAME: %arg1: !mtf.tensor<d_model=8, d_ff=16, f32> {mtf.name = "w"}
// CHECK-SAME: %arg2: !mtf.tensor<d_ff=16@(y,x), f32> {mtf.name = "b"}
// CHECK-SAME: mtf.update_sharding = {b = {axes = ["y", "x"], dim = "d_ff"}, w = {axes = ["x"], dim = "d_model"}}
// CHECK: "mtf.shard"(%arg1) {cut = ["d_model"], param = "w"} : {{.*}} -> !mtf.tensor<d_model=8, d_ff=16, f32>
// CHECK: "mtf.shard"(%arg2) {cut = ["d_ff"], param = "b"} : {{.*}} -> !mtf.tensor<d_ff=16@(y,x), f32>
// CHECK: {cut = ["d_ff"], param = "b"} : {{.*}} -> !mtf.tensor<d_ff=16, f32>
// CHECK: {cut = ["d_model"], param = "w"} : {{.*}} -> !mtf.tensor<d_model=8@x, d_ff=16, f32>
// CHECK-NOT: param_layout
// COLL-LABEL: func.func @sgd_step
// COLL-DAG: "mtf.reduce_scatter"{{.*}}axes = ["x"]{{.*}}dim = "d_model"
// COLL-DAG: "mtf.all_gather"{{.*}}axes = ["x"]{{.*}}dim = "d_model"
// COLL-DAG: "mtf.all_gather"{{.*}}axes = ["x"]{{.*}}dim = "d_ff"
// COLL-NOT: "mtf.all_reduce"{{.*}}-> !mtf.tensor<d_model
// ORDER: error: this mtf.shard waits for mtf-shard-update {{.*}} run mtf-shard-update before mtf-propagate-sharding
// NOAXIS: error: shard_update=True found no data-parallel mesh axis: none splits an argument other than the parameters
// NOAXIS-NOT: Traceback
func.func @sgd_step(%x: !mtf.tensor<batch=16, d_model=8, f32> {mtf.name = "x"},
                    %w: !mtf.tensor<d_model=8, d_ff=16, f32> {mtf.name = "w"},
                    %b: !mtf.tensor<d_ff=16, f32> {mtf.name = "b"})
    -> (!mtf.tensor<f32>, !mtf.tensor<d_model=8, d_ff=16, f32>, !mtf.tensor<d_ff=16, f32>)
    attributes {mtf.mesh = @mesh, mtf.shard_update = "auto"} {
  %wc = "mtf.shard"(%w) {param = "w", param_layout = "compute"} : (!mtf.tensor<d_model=8, d_ff=16, f32>) -> !mtf.tensor<d_model=8, d_ff=16, f32>
  %bs = "mtf.shard"(%b) {param = "b", param_layout = "stored"} : (!mtf.tensor<d_ff=16, f32>) -> !mtf.tensor<d_ff=16, f32>
  %bc = "mtf.shard"(%bs) {param = "b", param_layout = "compute"} : (!mtf.tensor<d_ff=16, f32>) -> !mtf.tensor<d_ff=16, f32>
  %h = "mtf.einsum"(%x, %wc) : (!mtf.tensor<batch=16, d_model=8, f32>, !mtf.tensor<d_model=8, d_ff=16, f32>) -> !mtf.tensor<batch=16, d_ff=16, f32>
  %hb = "mtf.add"(%h, %bc) : (!mtf.tensor<batch=16, d_ff=16, f32>, !mtf.tensor<d_ff=16, f32>) -> !mtf.tensor<batch=16, d_ff=16, f32>
  %loss = "mtf.reduce_sum"(%hb) : (!mtf.tensor<batch=16, d_ff=16, f32>) -> !mtf.tensor<f32>
  // the gradients of this linear loss: x summed over the batch, and ones
  %ones = "mtf.constant"() {value = 1.0 : f64} : () -> !mtf.tensor<batch=16, d_ff=16, f32>
  %gw = "mtf.einsum"(%x, %ones) : (!mtf.tensor<batch=16, d_model=8, f32>, !mtf.tensor<batch=16, d_ff=16, f32>) -> !mtf.tensor<d_model=8, d_ff=16, f32>
  %gb = "mtf.reduce_sum"(%ones) : (!mtf.tensor<batch=16, d_ff=16, f32>) -> !mtf.tensor<d_ff=16, f32>
  %gws = "mtf.shard"(%gw) {param = "w", param_layout = "update"} : (!mtf.tensor<d_model=8, d_ff=16, f32>) -> !mtf.tensor<d_model=8, d_ff=16, f32>
  %gbs = "mtf.shard"(%gb) {param = "b", param_layout = "update"} : (!mtf.tensor<d_ff=16, f32>) -> !mtf.tensor<d_ff=16, f32>
  %wu = "mtf.shard"(%w) {param = "w", param_layout = "update"} : (!mtf.tensor<d_model=8, d_ff=16, f32>) -> !mtf.tensor<d_model=8, d_ff=16, f32>
  %nw = "mtf.sub"(%wu, %gws) : (!mtf.tensor<d_model=8, d_ff=16, f32>, !mtf.tensor<d_model=8, d_ff=16, f32>) -> !mtf.tensor<d_model=8, d_ff=16, f32>
  %nb = "mtf.sub"(%bs, %gbs) : (!mtf.tensor<d_ff=16, f32>, !mtf.tensor<d_ff=16, f32>) -> !mtf.tensor<d_ff=16, f32>
  %rw = "mtf.shard"(%nw) {param = "w", param_layout = "compute"} : (!mtf.tensor<d_model=8, d_ff=16, f32>) -> !mtf.tensor<d_model=8, d_ff=16, f32>
  %rb = "mtf.shard"(%nb) {param = "b", param_layout = "update"} : (!mtf.tensor<d_ff=16, f32>) -> !mtf.tensor<d_ff=16, f32>
  return %loss, %rw, %rb : !mtf.tensor<f32>, !mtf.tensor<d_model=8, d_ff=16, f32>, !mtf.tensor<d_ff=16, f32>
}
