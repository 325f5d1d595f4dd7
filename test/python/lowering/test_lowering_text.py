"""mtf-lower-to-stablehlo without running: mesh arithmetic (replica groups, permutation
pairs), exact constants, the PJRT entry renaming, and errors."""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from meshir.dialect import Mesh, MeshIRError, TensorType, parse_module
from meshir.lowering.stablehlo import entry_text, lower_module
from meshir.lowering.stablehlo.builder import scalar_literal
from meshir.lowering.stablehlo.groups import coordinates, device_blocks, device_id, permute_pairs, replica_groups
from meshir.transforms import Pipeline, parse_pipeline

MESH_4X2 = Mesh({"x": 4, "y": 2})


@pytest.mark.parametrize("axes,groups", [
    (["x"], [[0, 2, 4, 6], [1, 3, 5, 7]]),
    (["y"], [[0, 1], [2, 3], [4, 5], [6, 7]]),
    (["x", "y"], [[0, 1, 2, 3, 4, 5, 6, 7]]),
    (["y", "x"], [[0, 2, 4, 6, 1, 3, 5, 7]]),
])
def test_replica_groups_differ_only_in_the_axes_and_follow_their_block_order(axes, groups):
    assert replica_groups(MESH_4X2, axes) == groups


def test_coordinates_are_row_major():
    assert [tuple(coordinates(MESH_4X2, p).values()) for p in range(8)] == list(itertools.product(range(4), range(2)))
    assert all(device_id(MESH_4X2, coordinates(MESH_4X2, p)) == p for p in range(8))


def _layouts(mesh: Mesh, size: int):
    """Every layout of one dim of `size` over the mesh's axes (ordered subsets that divide)."""
    names = mesh.axis_names
    for k in range(len(names) + 1):
        for axes in itertools.permutations(names, k):
            if size % int(np.prod([mesh.shape[a] for a in axes], dtype=int)) == 0:
                yield axes


@pytest.mark.parametrize("mesh", [Mesh({"x": 4, "y": 2}), Mesh({"x": 2, "y": 2, "z": 2})], ids=["4x2", "2x2x2"])
def test_permute_pairs_are_a_permutation_delivering_each_block(mesh):
    """For every pair of layouts of a[8], b[4] with equal shard shapes: every device is a
    target once and a source once, and receives the block (and summand) it must hold."""
    layouts = [(a, b) for a in _layouts(mesh, 8) for b in _layouts(mesh, 4) if not set(a) & set(b)]
    checked = 0
    for (a1, b1), (a2, b2) in itertools.product(layouts, repeat=2):
        free = [x for x in mesh.axis_names if x not in a1 + b1 + a2 + b2]
        partial = tuple(free[:1])
        src = TensorType.make([("a", 8, a1), ("b", 4, b1)], partial=partial)
        dst = TensorType.make([("a", 8, a2), ("b", 4, b2)], partial=partial)
        if src.local_shape(mesh.shape) != dst.local_shape(mesh.shape):
            continue
        pairs = permute_pairs(mesh, src, dst)
        assert sorted(s for s, _ in pairs) == list(range(mesh.size)) == sorted(t for _, t in pairs)
        assert all(device_blocks(mesh, src, s) == device_blocks(mesh, dst, t) for s, t in pairs)
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("value,elem,text", [
    (1.5, "f32", "0x3FC00000"), (1.5, "bf16", "0x3FC0"), (-np.inf, "f16", "0xFC00"), (np.nan, "f32", "0x7FC00000"),
    (0.1, "bf16", f"0x{int(np.array(0.1, ml_dtypes.bfloat16).view(np.uint16)):04X}"), (1.0, "f64", "0x3FF0000000000000"),
    (-7, "i32", "-7"), (2**32 - 1, "ui32", "4294967295"), (True, "i1", "true"), (2.7, "i64", "2"),
])
def test_scalar_literals_are_numpys_conversion_bit_for_bit(value, elem, text):
    assert scalar_literal(value, elem) == text


def _module(text):
    module, diags = parse_module(text, source_name="t.mlir")
    assert not diags
    return module


NEG = """sdy.mesh @mesh = <["x"=2]>
func.func @{name}(%a: !mtf.tensor<b=4@x, f32>) -> !mtf.tensor<b=4@x, f32> {{
  %0 = "mtf.neg"(%a) : (!mtf.tensor<b=4@x, f32>) -> !mtf.tensor<b=4@x, f32>
  return %0 : !mtf.tensor<b=4@x, f32>
}}
"""


def test_entry_text_renames_the_function_to_run_main():
    module = _module(NEG.format(name="f"))
    lower_module(module)
    text = entry_text(module)
    assert "func.func public @main(" in text and "@f(" not in text
    assert "func.func public @f(" in str(module)  # the module itself keeps the name


def test_pass_runs_in_a_pipeline_and_output_reparses():
    module = _module(NEG.format(name="f"))
    Pipeline(parse_pipeline("builtin.module(mtf-lower-to-stablehlo{mode=explicit}, canonicalize)")).run(module)
    again = _module(str(module))
    assert "sdy.manual_computation" in str(again)


def test_unknown_mode_is_refused():
    with pytest.raises(MeshIRError, match="unknown mode 'gpsmd'"):
        lower_module(_module(NEG.format(name="f")), mode="gpsmd")


def test_meshes_of_different_sizes_in_one_module_are_refused():
    text = NEG.format(name="f") + NEG.format(name="g").replace('sdy.mesh @mesh = <["x"=2]>', 'sdy.mesh @big = <["x"=4]>').replace(
        "{\n", "attributes {mtf.mesh = @big} {\n", 1)
    text = text.replace("func.func @f(%a: !mtf.tensor<b=4@x, f32>) -> !mtf.tensor<b=4@x, f32> {",
                        "func.func @f(%a: !mtf.tensor<b=4@x, f32>) -> !mtf.tensor<b=4@x, f32> attributes {mtf.mesh = @mesh} {")
    with pytest.raises(MeshIRError, match="meshes of different device counts"):
        lower_module(_module(text))


def test_a_too_narrow_random_range_is_a_located_error():
    text = """sdy.mesh @mesh = <["x"=2]>
func.func @f() -> !mtf.tensor<b=4@x, f32> {
  %0 = "mtf.random_uniform"() {seed = 1, minval = 0.0, maxval = 1.0e-38} : () -> !mtf.tensor<b=4@x, f32>
  return %0 : !mtf.tensor<b=4@x, f32>
}
"""
    with pytest.raises(MeshIRError, match=r"t.mlir:3:8: error: 'mtf.random_uniform' op range .* too narrow"):
        lower_module(_module(text))
