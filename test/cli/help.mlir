// --help lists mlir-opt's options, every MeshIR pass with its summary and options, and
// the upstream passes tested with MeshIR.
// RUN: meshir-opt --help | filecheck %s
// RUN: meshir-opt -help | filecheck %s

// CHECK: usage: meshir-opt [options] [--<pass>[=OPTIONS] ...] [input-file]
// CHECK: -o FILE
// CHECK: --pass-pipeline PIPELINE
// CHECK: --split-input-file
// CHECK: --verify-diagnostics
// CHECK: --mlir-print-ir-after-all
// CHECK: --mlir-print-debuginfo
// CHECK: --version
// CHECK: --<pass>[=OPTIONS]
// CHECK: MeshIR passes:
// CHECK-NEXT: --mtf-insert-collectives {{ +}}Turn reshards and pending reductions into collectives
// CHECK-NEXT: --mtf-lower-to-stablehlo {{ +}}Lower partitioned mtf functions to StableHLO with Shardy shardings
// CHECK-NEXT: mode=<one of explicit|gspmd>  (default: explicit)
// CHECK-NEXT: --mtf-propagate-sharding {{ +}}Give every dim of every value a layout
// CHECK-NEXT: rules=<str>  (default: )  layout rules added to each function's mtf.layout_rules
// CHECK-NEXT: --mtf-strip-layouts {{ +}}Remove every layout and partial marker from !mtf.tensor types
// CHECK-NEXT: keep-collectives=<bool>  (default: false)  keep collective ops
// CHECK-NEXT: --mtf-verify {{ +}}Check every mtf op and !mtf.tensor type
// CHECK: upstream MLIR and Shardy passes
// CHECK: --canonicalize
// CHECK: --cse
// CHECK: --sdy-propagation-pipeline
