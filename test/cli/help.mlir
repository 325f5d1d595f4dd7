// --help lists mlir-opt's options, every MeshIR pass with its summary and options, and
// the upstream passes tested with MeshIR.
// RUN: meshir-opt --help | filecheck %s
// RUN: meshir-opt -help | filecheck %s

// CHECK: usage: meshir-opt [options] [--<pass>[=OPTIONS] ...] [input-file]
// CHECK: -o FILE
// CHECK: --pass-pipeline PIPELINE
// CHECK: --dump-pass-pipeline
// CHECK: --split-input-file [=MARKER]
// CHECK: --output-split-marker MARKER
// CHECK: --verify-diagnostics
// CHECK: --emit-bytecode
// CHECK: --mlir-print-op-generic
// CHECK: --mlir-print-debuginfo
// CHECK: --mlir-print-ir-before-all
// CHECK: --mlir-print-ir-after-all
// CHECK: --mlir-print-ir-after-change
// CHECK: --mlir-print-ir-after-failure
// CHECK: --mlir-timing
// CHECK: --mlir-pass-statistics
// CHECK: --allow-unregistered-dialect
// CHECK: --show-dialects
// CHECK: --version
// CHECK: --<pass>[=OPTIONS]
// CHECK: MeshIR passes:
// CHECK-NEXT: --mtf-accumulate-wide {{ +}}Sum a gradient's narrow pieces in the wider type they are cast to (einsums return it)
// CHECK-NEXT: --mtf-apply-precision {{ +}}Compute in a narrow float type
// CHECK-NEXT: compute=<str>  (default: bf16)  the element type contractions and the ops that follow them compute in
// CHECK-NEXT: function=<str>  (default: )  the entry function whose float arguments are cast where read
// CHECK-NEXT: --mtf-auto-layout {{ +}}Choose the layout rules of each function by a search
// CHECK-NEXT: objective=<one of bytes|time>  (default: bytes)  what collectives are chosen to minimise
// CHECK-NEXT: links=<list of str>  (default: ())  α–β link of each mesh axis for objective=time
// CHECK-NEXT: device=<str>  (default: )  device kind
// CHECK-NEXT: memory-budget=<str>  (default: )  bytes per device no candidate may exceed
// CHECK-NEXT: goal=<one of time|bytes|memory>  (default: time)  what the chosen rules minimise per device
// CHECK-NEXT: time-limit=<float>  (default: 10.0)  seconds of search
// CHECK-NEXT: --mtf-autodiff {{ +}}Add <function>_grad: the value and the gradients of a function's scalar result
// CHECK-NEXT: function=<str>  (default: )  the function to differentiate
// CHECK-NEXT: wrt=<list of str>  (default: ())  arguments to differentiate with respect to
// CHECK-NEXT: result=<str>  (default: )  the result to differentiate
// CHECK-NEXT: cotangent=<bool>  (default: false)  take the result's cotangent as a last argument
// CHECK-NEXT: with-value=<bool>  (default: true)  return the differentiated result first
// CHECK-NEXT: --mtf-canonicalize {{ +}}Fold trivial mtf ops, merge identical pure ones (CSE) and erase unused pure ones (DCE)
// CHECK-NEXT: --mtf-gather-params-at-uses {{ +}}Read each named parameter of the entry function through a compute marker
// CHECK-NEXT: params=<list of str>  (default: ())  the entry function's arguments stored split
// CHECK-NEXT: --mtf-inline {{ +}}Inline every call of a function defined in the module
// CHECK-NEXT: keep-marked=<bool>  (default: false)  keep the calls that mtf-autodiff differentiates specially
// CHECK-NEXT: --mtf-insert-collectives {{ +}}Turn reshards and pending reductions into collectives
// CHECK-NEXT: objective=<one of bytes|time>  (default: bytes)  what collectives are chosen to minimise
// CHECK-NEXT: links=<list of str>  (default: ())  α–β link of each mesh axis for objective=time
// CHECK-NEXT: device=<str>  (default: )  device kind
// CHECK-NEXT: explain=<bool>  (default: false)  record on each collective why it exists
// CHECK-NEXT: --mtf-lower-to-stablehlo {{ +}}Lower mtf functions to StableHLO with Shardy shardings
// CHECK-NEXT: mode=<one of explicit|gspmd>  (default: explicit)  explicit: per-device StableHLO {{.*}} gspmd: global StableHLO with sdy.sharding_constraint
// CHECK-NEXT: narrow-dots=<bool>  (default: true)  bf16/f16 dot operands stay narrow with an f32 result
// CHECK-NEXT: --mtf-mark-update-in-loops {{ +}}Repeat a stacked or accumulated gradient's update marker inside the scan
// CHECK-NEXT: --mtf-propagate-sharding {{ +}}Give every dim of every value a layout
// CHECK-NEXT: objective=<one of bytes|time>  (default: bytes)  what collectives are chosen to minimise
// CHECK-NEXT: links=<list of str>  (default: ())  α–β link of each mesh axis for objective=time
// CHECK-NEXT: device=<str>  (default: )  device kind
// CHECK-NEXT: rules=<str>  (default: )  layout rules added to each function's mtf.layout_rules
// CHECK-NEXT: --mtf-shard-update {{ +}}Decide the layouts of weight-update and parameter sharding
// CHECK-NEXT: rules=<str>  (default: )  layout rules added to each function's mtf.layout_rules (give the ones mtf-propagate-sharding gets)
// CHECK-NEXT: off=<bool>  (default: false)  turn weight-update sharding off
// CHECK-NEXT: --mtf-strip-layouts {{ +}}Remove every layout and partial marker from !mtf.tensor types
// CHECK-NEXT: keep-collectives=<bool>  (default: false)  keep collective ops
// CHECK-NEXT: --mtf-verify {{ +}}Check every mtf op and !mtf.tensor type
// CHECK: upstream MLIR and Shardy passes
// CHECK: --canonicalize {{.*}}; leaves mtf ops alone: use --mtf-canonicalize
// CHECK: --cse {{.*}}; leaves mtf ops alone: use --mtf-canonicalize
// CHECK: --sdy-propagation-pipeline
// CHECK: canonicalize and cse
// CHECK-NEXT: neither fold, merge nor erase them; mtf-canonicalize does
