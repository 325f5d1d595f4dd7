// A malformed {{regex}} in expected-*-re is reported at its comment, not as an internal error.
// RUN: not meshir-opt %s --verify-diagnostics 2>&1 | filecheck %s
// CHECK: verify_diagnostics_bad_regex.mlir:[[# @LINE + 1]]:4: error: invalid regex in expected-{{e}}rror-re: bad character range
// expected-error-re @+1 {{unknown {{[a-}} 'mtf.bogus'}}
"mtf.bogus"() : () -> ()
// CHECK-NOT: internal error
