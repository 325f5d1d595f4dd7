// A use of a type or attribute alias nests as deep as the alias's definition with every alias
// in it expanded: MLIR prints such aliases inline, so a shallow use of a deep alias printed
// text meshir-opt refused to read back, and a chain of 50,000 aliases (each using the one
// before) overflowed the printer's stack. Location aliases count too (printed with
// --mlir-print-debuginfo). Shallow aliases read back as before.
// RUN: %python -c "print('!t = ' + 'tuple<' * 150 + 'f32' + '>' * 150); print('\"test.op\"() ({\n' * 30 + '\"test.op\"() : () -> !t\n' + '}) : () -> ()\n' * 30)" > %t.type.mlir
// RUN: not meshir-opt %t.type.mlir 2>&1 | filecheck %s --check-prefix=TYPE
// TYPE: type.mlir:32:21: error: '!t' nests deeper than 200 levels of brackets with its alias expanded (as MLIR prints it)
// RUN: %python -c "print('#a0 = [1]'); [print(f'#a{i} = [#a{i - 1}]') for i in range(1, 300)]; print('\"test.op\"() {x = #a299} : () -> ()')" > %t.chain.mlir
// RUN: not meshir-opt %t.chain.mlir 2>&1 | filecheck %s --check-prefix=CHAIN
// CHAIN: chain.mlir:301:18: error: '#a299' nests deeper than 200 levels of brackets with its alias expanded
// RUN: %python -c "print('\"test.op\"() : () -> () loc(#loc49999)'); print('#loc0 = loc(\"a\":1:1)'); [print(f'#loc{i} = loc(callsite(#loc{i - 1} at #loc0))') for i in range(1, 50000)]" > %t.loc.mlir
// RUN: not meshir-opt %t.loc.mlir --mlir-print-debuginfo 2>&1 | filecheck %s --check-prefix=LOC
// LOC: loc.mlir:1:28: error: '#loc49999' nests deeper than 200 levels of brackets with its alias expanded
// RUN: meshir-opt %s | meshir-opt | filecheck %s --check-prefix=OK
// OK: "test.op"() {x = [{{\[}}1]]} : () -> tuple<tuple<f32>>

!t1 = tuple<f32>
!t2 = tuple<!t1>
#a0 = [1]
#a1 = [#a0]
"test.op"() {x = #a1} : () -> !t2
