// --mlir-timing prints mlir-opt's execution time report to stderr: the parser, every pass
// (MLIR's own pass timers: nested pipelines, analyses, MeshIR's verifier between passes),
// the output, then Rest and Total.
// RUN: meshir-opt %s --pass-pipeline='builtin.module(mtf-strip-layouts, func.func(cse))' --mlir-timing -o %t 2>&1 | filecheck %s

// CHECK: ===-------------------------------------------------------------------------===
// CHECK-NEXT: {{^}}                         ... Execution time report ...
// CHECK-NEXT: ===-------------------------------------------------------------------------===
// CHECK-NEXT: {{^}}  Total Execution Time: {{[0-9]+\.[0-9][0-9][0-9][0-9]}} seconds
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}  ----Wall Time----  ----Name----
// CHECK-NEXT: {{^  +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  Parser$}}
// CHECK-NEXT: {{^  +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  StripLayoutsPass$}}
// CHECK-NEXT: {{^  +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  MeshIRVerify$}}
// CHECK-NEXT: {{^  +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  'func.func' Pipeline$}}
// CHECK-NEXT: {{^  +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)    CSEPass$}}
// CHECK-NEXT: {{^  +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)      \(A\) DominanceInfo$}}
// CHECK-NEXT: {{^  +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  MeshIRVerify$}}
// CHECK-NEXT: {{^  +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  Output$}}
// CHECK-NEXT: {{^  +-?[0-9]+\.[0-9][0-9][0-9][0-9] \( *-?[0-9]+\.[0-9]%\)  Rest$}}
// CHECK-NEXT: {{^  +[0-9]+\.[0-9][0-9][0-9][0-9] \(100\.0%\)  Total$}}
sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: !mtf.tensor<b=8@x, f32>) {
  return
}
