"""mi.export and mi.load: every format read back runs with the results of NumPy and of the
executable it came from (same layouts); the "jax" format runs in jax alone; exports of the
other supported jax version load; what is no export, or cannot be written, is a clear error."""
import glob
import os

import jax
import numpy as np
import pytest

import meshir as mi
from interop_programs import LAYOUTS, inputs, mlp, mlp_numpy

FORMATS = ["mlir", "bytecode", "jax"]
FIXTURES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "fixtures", "jax-*")))


@pytest.fixture(scope="module", params=[("2d", "explicit"), ("data", "explicit"), ("2d", "gspmd")],
                ids=lambda p: "-".join(p))
def compiled(request):
    mesh, rules = LAYOUTS[request.param[0]]
    return mi.compile(mlp(mesh), layout=rules, mode=request.param[1])


def _args(nan=False):
    args = inputs()
    if nan:
        args["x"][0, 0], args["x"][3, 1], args["x"][5, 2] = np.nan, np.inf, -np.inf
    return args


def _same(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_loads_and_runs_as_the_executable(compiled, fmt, tmp_path):
    path = tmp_path / f"mlp.{fmt}"
    data = mi.export(compiled, path, format=fmt)
    assert isinstance(data, str if fmt == "mlir" else bytes)
    assert path.read_bytes() == (data.encode() if fmt == "mlir" else data)
    for source in (path, str(path), data):
        loaded = mi.load(source)
        assert loaded.signature == compiled.signature  # names, dims and layouts read back
        args = _args(nan=True)
        out = loaded(**args)
        _same(out, mlp_numpy(**args))
        _same(out, np.asarray(compiled(**args)))
        assert out.sharding.is_equivalent_to(compiled.out_shardings[0], 2)


def test_the_jax_format_runs_in_jax_alone(compiled):
    exported = jax.export.deserialize(bytearray(mi.export(compiled, format="jax")))
    assert exported.nr_devices == compiled.mesh.size
    args = _args(nan=True)
    placed = [jax.device_put(args[name], s) for name, s in zip(compiled.argument_names, compiled.in_shardings)]
    (out,) = exported.call(*placed)  # positional, in declaration order; results a tuple
    _same(out, mlp_numpy(**args))
    _same(jax.jit(exported.call)(*placed)[0], mlp_numpy(**args))


def test_an_export_of_a_program_compiles_it_first():
    mesh, _ = LAYOUTS["data"]
    loaded = mi.load(mi.export(mlp(mesh)))
    args = _args()
    _same(loaded(**args), mlp_numpy(**args))


@pytest.mark.parametrize("directory", FIXTURES, ids=os.path.basename)
@pytest.mark.parametrize("ext", ["mlir", "mlirbc", "jaxexport"])
def test_exports_of_each_supported_jax_version_load(directory, ext):
    """Written by make_fixtures.py under jax 0.10.2 and 0.12.0.1: the older jax reads the
    newer's artefacts and the other way round (the StableHLO they target is old enough)."""
    loaded = mi.load(os.path.join(directory, f"mlp.{ext}"))
    args = _args(nan=True)
    _same(loaded(**args), mlp_numpy(**args))
    assert [str(t) for t in loaded.signature.arg_types] == [
        "!mtf.tensor<batch=8@x, d_model=4@(), f32>", "!mtf.tensor<d_model=4@(), d_ff=6@y, f32>",
        "!mtf.tensor<d_ff=6@y, d_model=4@(), f32>"]


def test_a_portable_artifact_of_a_newer_format_is_refused_naming_both_versions(compiled):
    data = bytearray(mi.export(compiled, format="bytecode"))
    data[4] = 0x7F  # the bytecode version, after the 4-byte magic: newer than any jaxlib reads
    with pytest.raises(mi.MeshIRValueError, match=rf"not a StableHLO portable artifact this jaxlib can read \(written for "
                       rf"StableHLO [0-9.]+; jax {jax.__version__} reads StableHLO [0-9.]+ and older\)"):
        mi.load(bytes(data))


def test_a_text_export_of_an_unknown_op_names_who_wrote_it(compiled):
    text = mi.export(compiled).replace("meshir 0.1.0, jax " + jax.__version__, "meshir 0.9.0, jax 9.9.9")
    text = text.replace("stablehlo.tanh", "stablehlo.tanh_v2", 1)
    with pytest.raises(mi.MeshIRError, match=r"does not parse as StableHLO \(written by meshir 0.9.0, jax 9.9.9; this is "
                       r"meshir .*\):\n.*stablehlo.tanh_v2"):
        mi.load(text)


@pytest.mark.parametrize("data", [b"hello world", b"\x00" * 64, "module {}\n"], ids=["text", "zeros", "empty-module"])
def test_what_is_no_export_is_refused(data):
    with pytest.raises(mi.MeshIRError, match=r"not a MeshIR export|declares no sdy.mesh|0 public functions"):
        mi.load(data)


def test_paths_that_cannot_be_read_or_written_are_refused(compiled, tmp_path):
    with pytest.raises(mi.MeshIRError, match=r"cannot write the export to '.*/missing/mlp.mlir': No such file"):
        mi.export(compiled, tmp_path / "missing" / "mlp.mlir")
    with pytest.raises(mi.MeshIRError, match=r"cannot read '.*nothing.mlir': No such file"):
        mi.load(str(tmp_path / "nothing.mlir"))
    with pytest.raises(mi.MeshIRValueError, match=r"unknown format 'onnx' \(expected one of mlir, bytecode, jax\)"):
        mi.export(compiled, format="onnx")
    with pytest.raises(mi.MeshIRTypeError, match=r"mi.load takes a path.*got int"):
        mi.load(3)


def test_load_on_a_mesh_of_other_axes_is_refused(compiled):
    with pytest.raises(mi.MeshIRError, match=r"the mesh given .*\"z\"=8.* differs from the one the export was lowered for"):
        mi.load(mi.export(compiled), mesh=mi.Mesh({"z": 8}))


MESHIR_OPT_OUTPUT = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @mlp(%x: !mtf.tensor<batch=8@x, d_model=4@(), f32>, %w: !mtf.tensor<d_model=4@(), d_ff=6@y, f32>)
    -> !mtf.tensor<batch=8@x, d_ff=6@y, f32> {
  %h = "mtf.einsum"(%x, %w) : (!mtf.tensor<batch=8@x, d_model=4@(), f32>, !mtf.tensor<d_model=4@(), d_ff=6@y, f32>)
      -> !mtf.tensor<batch=8@x, d_ff=6@y, f32>
  return %h : !mtf.tensor<batch=8@x, d_ff=6@y, f32>
}
"""


def test_the_stablehlo_meshir_opt_writes_compiles_and_runs(tmp_path, capsys):
    from meshir.cli.opt import main

    source = tmp_path / "mlp.mlir"
    source.write_text(MESHIR_OPT_OUTPUT)
    assert main([str(source), "--mtf-propagate-sharding", "--mtf-insert-collectives", "--mtf-lower-to-stablehlo"]) == 0
    lowered = capsys.readouterr().out
    module, diagnostics = mi.parse_module(lowered)
    assert not diagnostics
    exe = mi.compile(module)
    assert exe.argument_names == ("arg0", "arg1")  # meshir-opt's input named none
    assert str(exe.signature.arg_types[1]) == "!mtf.tensor<d0=4@(), d1=6@y, f32>"  # from the sdy.sharding
    args = _args()
    _same(exe(args["x"], args["w1"]), args["x"] @ args["w1"])
    assert mi.load(lowered).signature == exe.signature
    with pytest.raises(mi.MeshIRError, match="the module is StableHLO already"):
        mi.compile(module, layout={"d0": "x"})


def test_paths_that_look_like_text_are_paths_and_a_parsed_export_compiles(compiled, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mi.export(compiled, "module.mlir")
    args = _args()
    _same(mi.load("module.mlir")(**args), mlp_numpy(**args))
    module, _ = mi.parse_module(mi.export(compiled))
    _same(mi.compile(module)(**args), mlp_numpy(**args))
