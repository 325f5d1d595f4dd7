// RUN: meshir-opt --version | filecheck %s
// CHECK: meshir-opt (MeshIR) {{[0-9]+\.[0-9]+}}{{.*}}, MLIR from jaxlib {{[0-9]+\.[0-9]+}}
