// --show-dialects prints the dialects meshir-opt reads, as mlir-opt does, and exits: MLIR's
// registered ones and MeshIR's mtf.
// RUN: meshir-opt --show-dialects | filecheck %s

// CHECK: Available Dialects: {{.*}}builtin,{{.*}}func,{{.*}}mtf,{{.*}}sdy,{{.*}}stablehlo,{{.*}}
// CHECK-NOT: module
