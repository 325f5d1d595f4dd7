// FUZZ-ARGS: ["--verify-diagnostics"]
// FUZZ-FOUND: internal:error@_parser.py:_parse on 71f07d4 after 150 executions
expected-error-re{{{{(}}}}