"""Executable: PJRT runs explicit-mode StableHLO on 1..8 CPU devices and matches NumPy."""
from __future__ import annotations

import re

import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

from meshir.dialect import Mesh, MeshIRError
from meshir.lowering.runtime import Executable
from runtime_modules import elementwise, gather_rows, manual_module, matmul_add, signature, tensor

MESHES = [{"x": 1}, {"x": 2}, {"x": 4}, {"x": 8}, {"x": 2, "y": 2}, {"x": 4, "y": 2}, {"x": 2, "y": 4}, {"x": 1, "y": 2}]
MESH_IDS = ["x".join(map(str, m.values())) for m in MESHES]
RNG = np.random.default_rng(0)


def random_inputs(sig):
    return {n: RNG.standard_normal(t.shape).astype(t.dtype) for n, t in zip(sig.arg_names, sig.arg_types)}


def entry(axes):
    """The PartitionSpec entry of a dim split over `axes`."""
    return None if not axes else axes[0] if len(axes) == 1 else tuple(axes)


def compiled(builder, axes, *options):
    mesh = Mesh(axes)
    text, sig = builder(mesh, *options)
    return Executable(text, mesh, sig), sig


@pytest.mark.parametrize("axes", MESHES, ids=MESH_IDS)
@pytest.mark.parametrize("reduce_first_axis", [True, False], ids=["reduce-major", "reduce-minor"])
def test_matmul_all_reduce_add(axes, reduce_first_axis):
    names = list(axes)
    reduced = names[0] if reduce_first_axis else names[-1]
    exe, sig = compiled(matmul_add, axes, reduced)
    inputs = random_inputs(sig)
    y = exe(**inputs)
    np.testing.assert_allclose(np.asarray(y), inputs["x"] @ inputs["w"] + inputs["b"], rtol=1e-5, atol=1e-5)
    assert y.sharding.spec == P(entry([n for n in names if n != reduced]), None)
    assert y.sharding.mesh.axis_names == tuple(names)


@pytest.mark.parametrize("axes", MESHES, ids=MESH_IDS)
def test_all_gather_keeps_block_order(axes):
    exe, sig = compiled(gather_rows, axes)
    x = np.arange(48, dtype=np.float32).reshape(16, 3)
    y = exe(x)
    np.testing.assert_array_equal(np.asarray(y), x)
    assert y.sharding.spec == P(entry(list(axes)[:-1]), None)


@pytest.mark.parametrize("axes", MESHES, ids=MESH_IDS)
def test_partition_p_holds_block_p_of_a_dim_split_over_all_axes(axes):
    """A module writing `partition_id` into its block: the gathered result is 0..n-1, so
    partition ids, device order and NamedSharding blocks agree (docs/partitioning.md)."""
    mesh = Mesh(axes)
    split = "(" + ",".join(mesh.axis_names) + ")"
    sig = signature({"a": f"!mtf.tensor<p={mesh.size}@{split}, i32>"}, {"ids": f"!mtf.tensor<p={mesh.size}@{split}, i32>"})
    body = (
        "    %0 = stablehlo.partition_id : tensor<ui32>\n"
        "    %1 = stablehlo.convert %0 : (tensor<ui32>) -> tensor<i32>\n"
        "    %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>\n"
        "    %3 = stablehlo.add %2, %a0 : tensor<1xi32>\n"
    )
    exe = Executable(manual_module(mesh, sig.arg_types, sig.result_types, body, ["%3"]), mesh, sig)
    ids = exe(a=np.zeros(mesh.size, np.int32))
    np.testing.assert_array_equal(np.asarray(ids), np.arange(mesh.size))
    for shard in ids.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), [shard.device.id])
    assert ids.sharding.mesh.axis_names == mesh.axis_names


@pytest.mark.parametrize("elem", ["f32", "bf16", "f16", "f64", "i32", "i64", "i1"])
@pytest.mark.parametrize("axes", [{"x": 1}, {"x": 2, "y": 2}], ids=["1", "2x2"])
def test_element_types_survive_the_round_trip(elem, axes):
    exe, sig = compiled(elementwise, axes, elem, "and" if elem == "i1" else "add")
    dtype = sig.arg_types[0].dtype
    if elem == "i1":
        a, b = np.arange(8) % 2 == 0, np.arange(8) % 3 == 0
        expected = a & b
    else:
        big = 2**40 if elem == "i64" else 1.0e300 if elem == "f64" else 1
        a, b = (np.arange(8) * big).astype(dtype), np.ones(8, dtype)
        expected = a + b
    z = exe(a, b)
    assert z.dtype == dtype
    np.testing.assert_array_equal(np.asarray(z), expected)


def test_several_results_come_back_as_a_tuple():
    mesh = Mesh({"x": 2})
    t = "!mtf.tensor<i=4@x, f32>"
    sig = signature({"a": t}, {"twice": t, "same": t})
    local = tensor((2,), "f32")
    exe = Executable(manual_module(mesh, sig.arg_types, sig.result_types, f"    %0 = stablehlo.add %a0, %a0 : {local}\n",
                                   ["%0", "%a0"]), mesh, sig)
    twice, same = exe(np.arange(4.0))
    np.testing.assert_array_equal(np.asarray(twice), [0, 2, 4, 6])
    np.testing.assert_array_equal(np.asarray(same), [0, 1, 2, 3])


def test_entry_may_keep_the_functions_own_name():
    mesh = Mesh({"x": 4, "y": 2})
    text, sig = matmul_add(mesh, "y")
    exe = Executable(text.replace("@main(", "@f("), mesh, sig)
    assert "func.func public @main(" in exe.stablehlo_text()
    inputs = random_inputs(sig)
    np.testing.assert_allclose(np.asarray(exe(**inputs)), inputs["x"] @ inputs["w"] + inputs["b"], rtol=1e-5, atol=1e-5)


def test_module_objects_are_accepted_and_left_untouched():
    from meshir.dialect import parse_module

    mesh = Mesh({"x": 1})
    text, sig = matmul_add(mesh, "x")
    module, _ = parse_module(text)
    before = str(module)
    exe = Executable(module, mesh, sig)
    assert str(module) == before  # the one-device inlining works on a copy
    assert "sdy.manual_computation" in exe.stablehlo_text()


def test_text_report_and_analyses():
    mesh = Mesh({"x": 4, "y": 2})
    text, sig = matmul_add(mesh, "y")
    exe = Executable(text, mesh, sig, report="collectives:\n  %1 all_reduce y 64")
    assert exe.stablehlo_text().startswith("module @m")
    assert "all-reduce" in exe.compiled_hlo_text()
    report = exe.report()
    assert '@f on mesh @mesh = <["x"=4, "y"=2]>: 8 cpu devices, explicit mode' in report
    assert re.search(r"\n  x +!mtf.tensor<m=8@x, k=8@y, f32> +\[2, 4\] f32 +32 +\('x', 'y'\)\n", report)
    assert re.search(r"\nresults:\n.*\n  y +!mtf.tensor<m=8@x, n=4@\(\), f32> +\[2, 4\] f32 +32 +\('x', None\)", report)
    assert "PJRT memory per device: arguments" in report
    assert report.endswith("collectives:\n  %1 all_reduce y 64")
    assert exe.cost_analysis()["flops"] > 0
    assert exe.memory_analysis().argument_size_in_bytes == 4 * (2 * 4 + 4 * 4 + 2 * 4)


def test_module_disagreeing_with_the_signature_is_refused_before_running():
    mesh = Mesh({"x": 4, "y": 2})
    text, sig = matmul_add(mesh, "y")
    _, other = matmul_add(mesh, "y", m=16)
    with pytest.raises(MeshIRError, match=r"argument 'x' of @f: the StableHLO entry has tensor<8x8xf32>, but the signature says"):
        Executable(text, mesh, other)
    _, fewer = elementwise(mesh, "f32")
    with pytest.raises(MeshIRError, match=r"the StableHLO entry has 3 arguments but @f has 2 \(a, b\)"):
        Executable(text, mesh, fewer)


def test_module_sharding_disagreeing_with_the_layout_is_refused():
    """Same shapes everywhere, but the module splits `x` over y where the signature says x."""
    mesh = Mesh({"x": 2, "y": 2})
    text, sig = elementwise(mesh, "f32")
    swapped = signature({"a": "!mtf.tensor<i=8@y, f32>", "b": "!mtf.tensor<i=8@x, f32>"}, {"z": "!mtf.tensor<i=8@x, f32>"})
    with pytest.raises(MeshIRError, match=r"argument 'a' of @f: the StableHLO module lays it out as .* means P\('y',\)"):
        Executable(text, mesh, swapped)


def test_unparsable_module_and_unknown_mode():
    mesh = Mesh({"x": 2})
    text, sig = elementwise(mesh, "f32")
    with pytest.raises(MeshIRError, match="cannot parse the StableHLO module"):
        Executable("module {", mesh, sig)
    with pytest.raises(MeshIRError, match="unknown mode 'magic'"):
        Executable(text, mesh, sig, mode="magic")


PARTITIONED = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @mlp(%a: !mtf.tensor<b=8@x, k=8@y, f32> {mtf.name = "a"}, %w: !mtf.tensor<k=8@y, n=4@(), f32> {mtf.name = "w"}) -> (!mtf.tensor<b=8@(), n=4@(), f32> {mtf.name = "out"}) {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8@x, k=8@y, f32>, !mtf.tensor<k=8@y, n=4@(), f32>) -> !mtf.tensor<b=8@x, n=4@(), f32, partial@y>
  %1 = "mtf.all_reduce"(%0) {reduction = "sum", axes = ["y"], bytes_per_device = 32 : i64} : (!mtf.tensor<b=8@x, n=4@(), f32, partial@y>) -> !mtf.tensor<b=8@x, n=4@(), f32>
  %2 = "mtf.all_gather"(%1) {dim = "b", axes = ["x"], bytes_per_device = 96 : i64} : (!mtf.tensor<b=8@x, n=4@(), f32>) -> !mtf.tensor<b=8@(), n=4@(), f32>
  return %2 : !mtf.tensor<b=8@(), n=4@(), f32>
}
"""


def test_lowered_mtf_program_runs_and_equals_the_interpreter():
    """Partitioned mtf -> mtf-lower-to-stablehlo (in place) -> Executable, named by the mtf signature."""
    from meshir.dialect import parse_module
    from meshir.dialect.interpreter import interpret
    from meshir.dialect.signature import entry_function, signature as signature_of
    from meshir.lowering.stablehlo import lower_module

    module, diags = parse_module(PARTITIONED)
    assert not diags
    sig = signature_of(entry_function(module))
    inputs = random_inputs(sig)
    expected = interpret(module, **inputs)
    lower_module(module)
    exe = Executable(module, Mesh({"x": 4, "y": 2}), sig)
    out = exe(**inputs)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)
    assert out.sharding.spec == P(None, None)
