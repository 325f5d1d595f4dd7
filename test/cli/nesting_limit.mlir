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
// Input that is not one top-level `module` op is wrapped in one, a level more: 200 levels of
// it are refused (meshir-opt would print 201, which it refuses to read back); 199 read back
// (found by test/fuzz, issue 27).
// RUN: %python -c "print('\"test.op\"() ({\n' * 100 + '}) : () -> ()\n' * 100)" > %t.wrapped.mlir
// RUN: not meshir-opt %t.wrapped.mlir 2>&1 | filecheck %s --check-prefix=WRAPPED
// WRAPPED: wrapped.mlir:100:14: error: '{' nests deeper than 200 levels of brackets, counting the `module { ... }` MLIR wraps around input that is not one top-level `module` op
// RUN: %python -c "print('\"test.op\"() ({\n' * 99 + '\"test.op\"() : () -> ()\n' + '}) : () -> ()\n' * 99)" > %t.199.mlir
// RUN: meshir-opt %t.199.mlir > %t.199.printed.mlir
// RUN: meshir-opt %t.199.printed.mlir | filecheck %s --check-prefix=OK
