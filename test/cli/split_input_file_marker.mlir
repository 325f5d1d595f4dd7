// --split-input-file=MARKER cuts at lines that are MARKER; --output-split-marker joins the
// outputs with another line. A marker that is on no line is an error, not one big chunk.
// RUN: meshir-opt %s --split-input-file='//===' --output-split-marker='// ===== next' | filecheck %s
// RUN: not meshir-opt %s --split-input-file='// +++++' 2>&1 | filecheck %s --check-prefix=NEVER

// CHECK: func.func @first
// CHECK: // ===== next
// CHECK-NEXT: module {
// CHECK: func.func @second
// CHECK-NOT: =====

// NEVER: meshir-opt: error: --split-input-file: no line of '{{.*}}split_input_file_marker.mlir' is the marker '// +++++', so nothing is split (a marker is a line of its own; the default is '// -----')
// NEVER-NOT: Traceback
func.func @first() {
  return
}
//===
func.func @second() {
  return
}
