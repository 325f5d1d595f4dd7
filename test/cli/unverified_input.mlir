// With MeshIR's verifier off after parsing, a MeshIR pass that meets a malformed type reports
// the verifier's located diagnostics instead of an internal error.
// RUN: meshir-opt %s --verify-diagnostics --mlir-very-unsafe-disable-verifier-on-parsing --mtf-strip-layouts

// expected-error @+1 {{'func.func' op argument #0: malformed type '!mtf.tensor<()>' at column 13: expected a dimension name or an element type}}
func.func @malformed_type(%a: !mtf.tensor<()>) {
  return
}
