"""benchmarks/hlo_diff.py: its HLO parsing on a hand-written module, and the LM step at the
tiny size compared with jax's (no timed assertions). The tiny program also pins what the
comparison found: MeshIR's weight gradients reach the CPU matmul library (no more plain
`dot`s than jax's program has)."""
from script_modules import load_benchmark as load


HLO = """HloModule m, num_partitions=8
%fused_computation (p0: f32[4,8]) -> f32[8,4] {
  %p0 = f32[4,8]{1,0} parameter(0)
  %t = f32[8,4]{0,1} transpose(%p0), dimensions={1,0}
  ROOT %c = f32[8,4]{1,0} copy(%t)
}
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (p: f32[4,8]) -> f32[8,8] {
  %p = f32[4,8]{1,0} parameter(0)
  %transpose_copy_fusion.3 = f32[8,4]{1,0} fusion(%p), kind=kLoop, calls=%fused_computation
  %dot.1 = f32[8,8]{1,0} dot(%transpose_copy_fusion.3, %p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %ar = f32[8,8]{1,0} all-reduce(%dot.1), channel_id=1, replica_groups={{0,1},{2,3},{4,5},{6,7}}, to_apply=%add
}
"""


def test_summary_counts_opcodes_fusions_roots_dots_and_collectives():
    s = load("hlo_diff").summary(HLO)
    assert s["opcodes"] == {"parameter": 1, "fusion": 1, "dot": 1, "all-reduce": 1}
    assert s["fusion_kinds"] == {"kLoop": 1} and s["fusion_families"] == {"transpose_copy_fusion": 1}
    assert s["fused_roots"] == {"copy": 1}
    assert s["dots"] == {"f32[8,8]{1,0} lhs_contracting={1} rhs_contracting={0}": 1}
    assert s["collectives"] == {"all-reduce f32[8,8]{1,0} groups 4x2": 1}


def test_lm_step_tiny_size_compares_and_has_no_extra_plain_dots_but_the_recomputed_attention(capsys):
    hlo_diff = load("hlo_diff")
    assert hlo_diff.main(["--size", "tiny", "--all"]) == 0
    out = capsys.readouterr().out
    for heading in ("entry instructions by opcode", "fusions by XLA's name", "collectives:", "memory per device"):
        assert heading in out
    exe, compiled = hlo_diff.compile_both("tiny")
    meshir, jax_ = hlo_diff.summary(exe.compiled_hlo_text()), hlo_diff.summary(compiled.as_text())
    # The attention gradient recomputes q·k (docs/attention.md): one dot per layer jax.jit, which
    # saves the weights from the forward, does not have.
    recomputed = sum(line.startswith("gradient") for line in exe.compile_report.attention)
    assert recomputed >= 1
    assert sum(meshir["dots"].values()) <= sum(jax_["dots"].values()) + recomputed
    assert meshir["collective_summary"]["bytes_per_device"] < jax_["collective_summary"]["bytes_per_device"]
