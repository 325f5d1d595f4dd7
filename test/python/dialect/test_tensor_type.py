"""The `!mtf.tensor` type: parser, printer, accessors, errors (with hypothesis round trips)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meshir.dialect import Dimension, TensorType, TypeContentError, TypeSyntaxError
from meshir.dialect.tensor_type import ELEMENT_TYPES, PARTIAL_KEYWORDS

NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
AXES = ["x", "y", "z", "w"]


@st.composite
def tensor_types(draw):
    names = draw(st.lists(NAMES, max_size=4, unique=True))
    axes_pool = list(draw(st.permutations(AXES)))
    dims = []
    for name in names:
        kind = draw(st.sampled_from(["free", "replicated", "split"]))
        axes = None
        if kind == "replicated":
            axes = ()
        elif kind == "split" and axes_pool:
            k = draw(st.integers(1, min(2, len(axes_pool))))
            axes, axes_pool = tuple(axes_pool[:k]), axes_pool[k:]
        dims.append(Dimension(name, draw(st.integers(1, 4096)), axes))
    partial = ()
    if axes_pool and draw(st.booleans()):
        partial = tuple(axes_pool[: draw(st.integers(1, len(axes_pool)))])
    reduction = draw(st.sampled_from(sorted(PARTIAL_KEYWORDS))) if partial else "sum"
    return TensorType(tuple(dims), draw(st.sampled_from(sorted(ELEMENT_TYPES))), partial, reduction)


@settings(max_examples=300, deadline=None)
@given(tensor_types())
def test_print_then_parse_is_identity(t):
    assert TensorType.parse(str(t)) == t


@settings(max_examples=100, deadline=None)
@given(tensor_types(), st.sampled_from([" ", "  ", "\t"]))
def test_whitespace_between_tokens_is_ignored(t, space):
    text = str(t).replace(", ", "," + space).replace("=", space + "=" + space)
    assert TensorType.parse(text) == t


@settings(max_examples=50, deadline=None)
@given(tensor_types())
def test_mlir_opaque_type_round_trip(t):
    from meshir.dialect import get_context

    with get_context():
        assert TensorType.from_mlir(t.to_mlir()) == t
        assert str(t.to_mlir()) == str(t)


def test_accessors():
    t = TensorType.parse("!mtf.tensor<batch=8@x, d=16@(y,z), e=3@(), f=5, bf16, partial@w>")
    assert t.names == ("batch", "d", "e", "f")
    assert t.shape == (8, 16, 3, 5)
    assert t.layout == {"batch": ("x",), "d": ("y", "z"), "e": (), "f": None}
    assert t.element_type == "bf16" and t.is_float and not t.is_integer
    assert t.partial == ("w",) and t.partial_reduction == "sum"
    assert t.local_shape({"x": 4, "y": 2, "z": 2, "w": 2}) == (2, 4, 3, 5)
    assert t.num_elements == 8 * 16 * 3 * 5
    assert t.without_layout() == TensorType.parse("!mtf.tensor<batch=8, d=16, e=3, f=5, bf16>")
    assert t.index("e") == 2 and t.size("d") == 16
    assert TensorType.parse("!mtf.tensor<i1>").rank == 0


@pytest.mark.parametrize(
    "text, column, expected",
    [
        ("!mtf.tensor<batch=8@, f32>", 21, "mesh axis name"),
        ("!mtf.tensor<batch=8, f33>", 22, "element type"),
        ("!mtf.tensor<batch=x, f32>", 19, "dimension size"),
        ("!mtf.tensor<a=2 f32>", 17, "','"),
        ("!mtf.tensor<a=2, f32, partial@()>", 33, "at least one mesh axis"),
        ("!mtf.tensor<a=2, f32, total@x>", 23, "'partial'"),
        ("!mtf.tensor<a=2, f32", 21, "'>'"),
        ("!mtf.tensor<a=2, f32> x", 23, "end of type"),
        ("!mtf.tensor<a=2@(x,, f32>", 20, "mesh axis name"),
        ("!mtf.tensr<a=2, f32>", 1, "'!mtf.tensor<'"),
    ],
)
def test_syntax_errors_point_at_the_column(text, column, expected):
    with pytest.raises(TypeSyntaxError) as info:
        TensorType.parse(text)
    assert info.value.column == column
    assert expected in str(info.value)
    caret_line = info.value.render().splitlines()[-1]
    assert caret_line.index("^") - 2 == column - 1


@pytest.mark.parametrize(
    "text, message",
    [
        ("!mtf.tensor<a=2, a=3, f32>", "dimension name 'a' appears twice"),
        ("!mtf.tensor<a=2@x, b=4@x, f32>", "mesh axis 'x' is used more than once"),
        ("!mtf.tensor<a=2@(x,x), f32>", "mesh axis 'x' is used more than once"),
        ("!mtf.tensor<a=2@x, f32, partial@x>", "mesh axis 'x' is used more than once"),
        ("!mtf.tensor<a=0, f32>", "has size 0"),
    ],
)
def test_impossible_types_are_rejected(text, message):
    with pytest.raises(TypeContentError, match=message):
        TensorType.parse(text)


def test_local_shape_errors_name_dim_size_and_axes():
    t = TensorType.parse("!mtf.tensor<batch=6@(x,y), f32>")
    with pytest.raises(TypeContentError, match=r"'batch' of size 6 is not divisible by 8 \(mesh axes \(x,y\)\)"):
        t.local_shape({"x": 4, "y": 2})
    with pytest.raises(TypeContentError, match="unknown mesh axis 'y'"):
        t.local_shape({"x": 2})
