"""meshir.visualize: the layout table, and a picture of each tensor's split over the mesh."""
import pytest

pytest.importorskip("matplotlib")

import meshir as mi

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def ffn(mesh=None, layout=None):
    batch, d_model, d_ff = mi.Dim("batch", 8), mi.Dim("d_model", 4), mi.Dim("d_ff", 16)
    with mi.Program("ffn", mesh, layout=layout) as prog:
        x = prog.argument("x", [batch, d_model])
        w1 = prog.argument("w1", [d_model, d_ff])
        w2 = prog.argument("w2", [d_ff, d_model])
        prog.result(mi.einsum(mi.relu(mi.einsum(x, w1, output=[batch, d_ff])), w2, output=[batch, d_model]), name="y")
    return prog


def is_png(path) -> bool:
    data = path.read_bytes()
    return len(data) > 1000 and data.startswith(PNG_MAGIC)


def test_returns_and_prints_the_propagated_table_and_writes_a_png(tmp_path, capsys):
    prog = ffn(mi.Mesh({"x": 4, "y": 2}))
    path = tmp_path / "ffn.png"
    table = mi.visualize(prog, path, layout={"batch": "x", "d_ff": "y"})
    assert table == mi.layout_table(mi.propagate(prog, layout={"batch": "x", "d_ff": "y"}))
    assert "w1 (%arg1)" in table and "d_ff=16@y" in table and "batch=8@x" in table
    assert table in capsys.readouterr().out
    assert is_png(path)


def test_an_executable_with_every_value(tmp_path, capsys):
    exe = mi.compile(ffn(mi.Mesh({"x": 4, "y": 2})), layout={"batch": "x", "d_ff": "y"})
    path = tmp_path / "exe.png"
    table = mi.visualize(exe, str(path), every_value=True, show=False)
    assert "mtf.all_reduce" in table and "partial@y" in table  # the compiled layouts, collectives included
    assert capsys.readouterr().out == ""
    assert is_png(path)
    with pytest.raises(mi.MeshIRError, match="layouts are fixed"):
        mi.visualize(exe, layout={"batch": "x"}, show=False)


def test_without_a_path_only_the_table(tmp_path):
    table = mi.visualize(ffn(mi.Mesh({"x": 2})), layout={"batch": "x"}, show=False)
    assert "batch=8@x" in table
    assert list(tmp_path.iterdir()) == []


def test_a_program_without_mesh_and_a_scalar(tmp_path):
    with mi.Program("total") as prog:
        x = prog.argument("x", [mi.Dim("a", 4), mi.Dim("b", 3)])
        prog.result(mi.reduce_sum(x, output=[]), name="s")
    path = tmp_path / "total.png"
    table = mi.visualize(prog, path, show=False)
    assert "@total (no mesh)" in table and "(4, 3)" in table
    assert is_png(path)


def test_a_large_mesh_draws_without_labels(tmp_path):
    mesh = mi.Mesh({"x": 64, "y": 64})
    with mi.Program("big", mesh) as prog:
        x = prog.argument("x", [mi.Dim("batch", 128), mi.Dim("d", 256)])
        prog.result(mi.relu(x), name="y")
    path = tmp_path / "big.png"
    mi.visualize(prog, path, layout={"batch": "x", "d": "y"}, show=False)
    assert is_png(path)


@pytest.mark.parametrize("bad, message", [
    ("missing_dir/out.png", "directory '.*missing_dir' does not exist"),
    (".", "is a directory"),
    ("out.notanimage", "unknown image format '.notanimage'"),
    ("out", r"unknown image format '\(none\)'"),
])
def test_a_bad_path_is_a_clear_error(tmp_path, monkeypatch, bad, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(mi.MeshIRError, match="visualize: .*" + message):
        mi.visualize(ffn(), bad, show=False)
    assert list(tmp_path.iterdir()) == []


def test_not_a_program():
    with pytest.raises(mi.MeshIRError, match="expected a Program, a module or an Executable, got int"):
        mi.visualize(3)
    with pytest.raises(mi.MeshIRError, match="path must be a file name"):
        mi.visualize(ffn(), path=42, show=False)
