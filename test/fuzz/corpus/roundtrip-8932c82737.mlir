// FUZZ-ARGS: []
// FUZZ-FOUND: roundtrip: printed 201 levels of brackets, which meshir-opt refused to read back on 1cae2bb (issue 27 campaign)
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
"test.op"() ({
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()
}) : () -> ()

