// An unknown pass is reported with its column in the pipeline and the closest known name;
// as a flag, it may also be a misspelled option.
// RUN: not meshir-opt %s --pass-pipeline='builtin.module(mtf-verfy, cse)' 2>&1 | filecheck %s --check-prefix=PIPELINE
// RUN: not meshir-opt %s --pass-pipeline='builtin.module(func.func(csee))' 2>&1 | filecheck %s --check-prefix=NESTED
// RUN: not meshir-opt %s --mtf-strip-layout 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not meshir-opt %s --split-input-files 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not meshir-opt %s --pass-pipeline='builtin.module(func.func(mtf-verify))' 2>&1 | filecheck %s --check-prefix=MODULE-PASS
// RUN: not meshir-opt %s --pass-pipeline='mtf-verify' --cse 2>&1 | filecheck %s --check-prefix=BOTH

// PIPELINE: <pass-pipeline>:1:16: error: unknown pass 'mtf-verfy'; did you mean 'mtf-verify'? (known passes: {{.*}}mtf-strip-layouts, mtf-verify{{.*}})
// PIPELINE-NEXT: builtin.module(mtf-verfy, cse)
// PIPELINE-NEXT: {{^}}               ^
// PIPELINE-NOT: Traceback

// NESTED: <pass-pipeline>:1:26: error: unknown pass 'csee'; did you mean 'cse'?

// FLAG: meshir-opt: error: unknown option or pass '--mtf-strip-layout'; did you mean '--mtf-strip-layouts'?

// OPTION: meshir-opt: error: unknown option or pass '--split-input-files'; did you mean '--split-input-file'?

// MODULE-PASS: error: MeshIR pass 'mtf-verify' runs on the whole module: put it at the top level of the pipeline, not inside 'func.func(...)'

// BOTH: meshir-opt: error: use either --pass-pipeline or pass flags (--cse), not both

func.func @f() {
  return
}
