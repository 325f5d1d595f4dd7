// Options are checked against what the pass declares, for MeshIR and upstream passes alike.
// RUN: not meshir-opt %s --pass-pipeline='builtin.module(mtf-strip-layouts{keep-collective=1})' 2>&1 | filecheck %s --check-prefix=MESHIR
// RUN: not meshir-opt %s --mtf-strip-layouts='{keep-collectives=maybe}' 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: not meshir-opt %s --mtf-verify='strict=true' 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not meshir-opt %s --pass-pipeline='builtin.module(canonicalize{max-iteration=2})' 2>&1 | filecheck %s --check-prefix=UPSTREAM
// RUN: not meshir-opt %s --pass-pipeline='builtin.module(cse{' 2>&1 | filecheck %s --check-prefix=SYNTAX

// MESHIR: <pass-pipeline>:1:34: error: unknown option 'keep-collective' for pass 'mtf-strip-layouts'; did you mean 'keep-collectives'? (options: keep-collectives)
// MESHIR-NEXT: builtin.module(mtf-strip-layouts{keep-collective=1})
// MESHIR-NEXT: {{^}}                                 ^

// VALUE: meshir-opt: error: --mtf-strip-layouts={keep-collectives=maybe}: option 'keep-collectives' of pass 'mtf-strip-layouts' expects true or false, got 'maybe'

// FLAG: meshir-opt: error: --mtf-verify=strict=true: pass 'mtf-verify' has no options, got 'strict'

// UPSTREAM: <pass-pipeline>:1:16: error: cannot add pass 'canonicalize{max-iteration=2}': no such option max-iteration

// SYNTAX: <pass-pipeline>:1:19: error: unbalanced '{': expected '}'

func.func @f() {
  return
}
