// IR nested deeper than 200 brackets is refused before parsing, at the bracket that goes too
// deep (MLIR's parser overflows its stack at a few thousand levels; dialect/nesting.py).
// RUN: %python -c "print('module {' * 201 + '}' * 201)" > %t.deep.mlir
// RUN: not meshir-opt %t.deep.mlir 2>&1 | filecheck %s --check-prefix=DEEP
// DEEP: deep.mlir:1:1608: error: '{' nests deeper than 200 levels of brackets
// RUN: %python -c "print('\"test.op\"() {a = ' + '[' * 5000 + ']' * 5000 + '} : () -> ()')" > %t.attr.mlir
// RUN: not meshir-opt %t.attr.mlir 2>&1 | filecheck %s --check-prefix=ATTR
// ATTR: attr.mlir:1:217: error: '[' nests deeper than 200 levels
// 200 levels are fine, and the verifier walks them without recursion.
// RUN: %python -c "print('module {' * 100 + '\"test.op\"() ({' * 50 + '}) : () -> ()' * 50 + '}' * 100)" > %t.ok.mlir
// RUN: meshir-opt %t.ok.mlir --pass-pipeline='builtin.module(mtf-verify)' | filecheck %s --check-prefix=OK
// OK: "test.op"() ({
