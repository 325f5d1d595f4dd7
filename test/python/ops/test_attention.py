"""mi.dot_product_attention against an independent oracle: the attention formula written here
in NumPy float64 (forward) and in jax.numpy float64 under jax.value_and_grad (gradients):
softmax over memory_length of (q.k over d_k) * scale + bias, with every masked or causally
hidden logit REPLACED by MASK_VALUE = -1e9 (as jax.nn.dot_product_attention does, so a fully
masked row averages v over all keys), causal alignment j <= i + (M - L), then weights.v over
memory_length. The reference names its axes like the op does (einsum letters from dim names),
so dims in any order, fewer dims of mask and bias, and a separate value dim are checked too.

Covered: forward of both implementations (and the default) against the oracle and against
mi.interpret, with causal L != M, masks, biases, a fully masked row, ragged and oversize key
blocks; bf16 inputs; split layouts on three meshes; gradients wrt q, k, v and bias; NaN and inf
propagation; located errors for bad input; and that the blockwise form's compiled temp memory
is far below the [length, memory_length] logits that the "xla" form materializes.
"""
import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import meshir as mi

MASK_VALUE = -1e9
SIZES = {"batch": 4, "heads": 2, "length": 24, "memory_length": 24, "d_k": 16, "d_v": 8}
Q, K, V = ("batch", "length", "heads", "d_k"), ("batch", "memory_length", "heads", "d_k"), ("batch", "memory_length", "heads", "d_k")
QUERY, KEY, KEY_DIM = "length", "memory_length", "d_k"


# ---------------------------------------------------------------------------------------------
# The oracle


def _letters(*name_lists):
    names = sorted({n for names in name_lists for n in names})
    return {n: chr(ord("a") + i) for i, n in enumerate(names)}


def _term(names, letters):
    return "".join(letters[n] for n in names)


def _broadcast_to(x, names, target, xp):
    """x (dims `names`, a subset of `target`) transposed to target's order, size 1 where absent."""
    sizes = dict(zip(names, x.shape))
    x = xp.transpose(x, [names.index(n) for n in target if n in names])
    return xp.reshape(x, [sizes.get(n, 1) for n in target])


def value_dim(q_names, v_names):
    """v's dim that is neither memory_length nor a batch dim of q; d_k when v has none."""
    batch = [n for n in q_names if n not in (QUERY, KEY_DIM)]
    rest = [n for n in v_names if n != KEY and n not in batch]
    return rest[0] if rest else KEY_DIM


def out_names(q_names, v_names):
    return tuple(value_dim(q_names, v_names) if n == KEY_DIM else n for n in q_names)


def reference(q, k, v, names, *, causal=False, mask=None, bias=None, scale=None, xp=np):
    """Attention in the arrays' precision (float64 here); `names` gives each argument's dims."""
    qn, kn, vn = names["q"], names["k"], names["v"]
    batch = [n for n in qn if n not in (QUERY, KEY_DIM)]
    weight_names = (*batch, QUERY, KEY)
    letters = _letters(qn, kn, vn, weight_names, out_names(qn, vn))
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[qn.index(KEY_DIM)])
    logits = xp.einsum(f"{_term(qn, letters)},{_term(kn, letters)}->{_term(weight_names, letters)}", q, k) * scale
    if bias is not None:
        logits = logits + _broadcast_to(bias, names["bias"], weight_names, xp)
    keep = xp.ones(logits.shape, bool)
    if mask is not None:
        keep = keep & _broadcast_to(mask, names["mask"], weight_names, xp)
    if causal:
        length, memory_length = q.shape[qn.index(QUERY)], k.shape[kn.index(KEY)]
        i, j = np.arange(length)[:, None], np.arange(memory_length)[None, :]
        keep = keep & xp.asarray(j <= i + (memory_length - length))
    logits = xp.where(keep, logits, MASK_VALUE)
    e = xp.exp(logits - xp.max(logits, axis=-1, keepdims=True))
    weights = e / xp.sum(e, axis=-1, keepdims=True)
    return xp.einsum(f"{_term(weight_names, letters)},{_term(vn, letters)}->{_term(out_names(qn, vn), letters)}",
                     weights, v)


def wide(x):
    return None if x is None else np.asarray(x).astype(np.float64) if x.dtype != bool else x


# ---------------------------------------------------------------------------------------------
# Programs and inputs


def attention_program(mesh, rules, names, variants, sizes=SIZES, dtype="f32", loss=False):
    """Arguments q, k, v (and mask, bias where `names` has them) of the dims `names` gives;
    one result per variant (result name -> keyword arguments of mi.dot_product_attention), or
    with loss=True one variant's scalar result sum(o * w), w an argument of o's dims."""
    with mi.Program("attention", mi.Mesh(mesh), layout=rules) as prog:
        args = {arg: prog.argument(arg, [mi.Dim(n, sizes[n]) for n in dims], "i1" if arg == "mask" else dtype)
                for arg, dims in names.items()}
        extra = {a: args[a] for a in ("mask", "bias") if a in args}
        for result, kwargs in variants.items():
            o = mi.dot_product_attention(args["q"], args["k"], args["v"], **extra, **kwargs)
            assert o.names == out_names(names["q"], names["v"])
            if loss:
                w = prog.argument("w", o.dims, dtype)
                prog.result(mi.reduce_sum(o * w), name="loss")
            else:
                prog.result(o, name=result)
    return prog


def make_inputs(names, sizes=SIZES, seed=0, np_dtype=np.float32):
    r = np.random.default_rng(seed)
    out = {}
    for arg, dims in names.items():
        shape = [sizes[n] for n in dims]
        if arg == "mask":
            out[arg] = r.random(shape) < 0.7
        elif arg == "bias":
            out[arg] = (r.normal(size=shape) * 0.5).astype(np_dtype)
        else:
            out[arg] = r.normal(size=shape).astype(np_dtype)
    return out


def expected(inputs, names, **kwargs):
    return reference(*(wide(inputs[a]) for a in "qkv"), names, mask=inputs.get("mask"), bias=wide(inputs.get("bias")),
                     **kwargs)


def three_variants(block_size=None, **kwargs):
    """The default implementation (with block_size), "blockwise" named, and "xla"."""
    blocks = {} if block_size is None else {"block_size": block_size}
    return {"default": {**kwargs, **blocks}, "blockwise": {**kwargs, **blocks, "implementation": "blockwise"},
            "xla": {**kwargs, "implementation": "xla"}}


def attention_kwargs(kwargs):
    """The keyword arguments the oracle shares with the op."""
    return {k: v for k, v in kwargs.items() if k in ("causal", "scale")}


def test_the_oracle_agrees_with_jax_nn_dot_product_attention():
    """The oracle checked once against jax's own (its softmax runs in f32: atol 1e-6)."""
    names = {"q": Q, "k": K, "v": V, "mask": MASK_BLM, "bias": BIAS_HLM}
    inputs = make_inputs(names, seed=0)
    inputs["mask"][1, 3, :] = False
    with jax.enable_x64(True):
        q, k, v, bias = (jnp.asarray(inputs[a], jnp.float64) for a in ("q", "k", "v", "bias"))
        theirs = jax.nn.dot_product_attention(q, k, v, bias=bias[None], mask=jnp.asarray(inputs["mask"])[:, None],
                                              is_causal=True)
    np.testing.assert_allclose(expected(inputs, names, causal=True), np.asarray(theirs), rtol=0, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# 1. Forward against the oracle and the interpreter

MASK_BLM, MASK_LM = ("batch", "length", "memory_length"), ("length", "memory_length")
BIAS_HLM = ("heads", "length", "memory_length")

FORWARD = {
    "plain": {},
    "causal": {"kwargs": {"causal": True}},
    "causal_fewer_queries": {"sizes": {"length": 5}, "kwargs": {"causal": True, "block_size": 8}},
    # L > M: queries 0..18 see no key (fully hidden rows, a uniform average of v)
    "causal_more_queries": {"sizes": {"memory_length": 5}, "kwargs": {"causal": True, "block_size": 2}},
    "mask_batch_length_memory": {"mask": MASK_BLM},
    "mask_length_memory_causal": {"mask": MASK_LM, "kwargs": {"causal": True, "block_size": 8}},
    "bias_heads_length_memory": {"bias": BIAS_HLM},
    "mask_bias_scale": {"mask": MASK_BLM, "bias": BIAS_HLM, "kwargs": {"scale": 0.3, "block_size": 8}},
    "fully_masked_row_ragged_blocks": {"sizes": {"memory_length": 37}, "mask": MASK_BLM, "bias": BIAS_HLM,
                                       "masked_row": True, "kwargs": {"block_size": 8}},
    "ragged_blocks_causal": {"sizes": {"length": 37, "memory_length": 37}, "kwargs": {"causal": True, "block_size": 8}},
    "block_larger_than_keys": {"kwargs": {"causal": True, "block_size": 64}},
    "blocks_of_one_key": {"sizes": {"memory_length": 5}, "mask": MASK_LM, "kwargs": {"block_size": 1}},
    "single_query_and_key": {"sizes": {"length": 1, "memory_length": 1}, "kwargs": {"causal": True}},
    "value_dim": {"v": ("batch", "memory_length", "heads", "d_v"), "kwargs": {"causal": True, "block_size": 8}},
    # multi-query attention: keys and values shared by the heads (the op's docstring allows k and v
    # to lack some of q's other dims)
    "keys_without_heads": {"k": ("batch", "memory_length", "d_k"), "v": ("memory_length", "batch", "d_v"),
                           "mask": MASK_BLM, "kwargs": {"causal": True, "block_size": 8}},
    "no_batch_dims": {"q": ("length", "d_k"), "k": ("memory_length", "d_k"), "v": ("memory_length", "d_v"),
                      "kwargs": {"causal": True, "block_size": 8}},
    "dims_in_other_orders": {"q": ("heads", "d_k", "batch", "length"), "k": ("memory_length", "batch", "d_k", "heads"),
                             "v": ("d_v", "heads", "memory_length", "batch"), "mask": ("memory_length", "batch"),
                             "bias": ("length", "heads"), "kwargs": {"block_size": 8}},
}


def case_names(case):
    names = {"q": case.get("q", Q), "k": case.get("k", K), "v": case.get("v", V)}
    names.update({a: case[a] for a in ("mask", "bias") if a in case})
    return names


@pytest.mark.parametrize("case_id", sorted(FORWARD))
def test_forward_equals_float64_reference_and_the_interpreter(case_id):
    case = FORWARD[case_id]
    sizes, names, kwargs = {**SIZES, **case.get("sizes", {})}, case_names(case), case.get("kwargs", {})
    prog = attention_program({"x": 4, "y": 2}, {}, names, three_variants(**kwargs), sizes=sizes)
    inputs = make_inputs(names, sizes, seed=1)
    if case.get("masked_row"):
        inputs["mask"][1, 3, :] = False  # batch 1, query 3 sees no key
    want = expected(inputs, names, **attention_kwargs(kwargs))
    if case.get("masked_row"):
        mean_v = inputs["v"][1].astype(np.float64).mean(axis=0)  # [heads, d_k]
        np.testing.assert_allclose(want[1, 3], mean_v, rtol=1e-12, atol=1e-12)
    compiled, interpreted = mi.compile(prog)(**inputs), mi.interpret(prog, **inputs)
    for result in prog.result_names:
        for how, value in (("compiled", getattr(compiled, result)), ("interpreted", getattr(interpreted, result))):
            value = np.asarray(value)
            assert value.dtype == np.float32 and value.shape == want.shape, f"{how} {result}"
            np.testing.assert_allclose(value, want, rtol=2e-5, atol=2e-5, err_msg=f"{how} {result}")


# ---------------------------------------------------------------------------------------------
# 2. bf16


def test_bf16_is_computed_in_f32_and_rounded_once():
    names = {"q": Q, "k": K, "v": V, "bias": BIAS_HLM}
    prog = attention_program({"x": 4, "y": 2}, {"batch": "x"}, names, three_variants(causal=True, block_size=8),
                             dtype="bf16")
    inputs = make_inputs(names, seed=2, np_dtype=ml_dtypes.bfloat16)
    want = expected(inputs, names, causal=True)
    # f32 arithmetic rounded once to bf16 is within one bf16 ulp (2^-7 relative) of the exact value
    ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(want), 1e-30))) - 7)
    compiled, interpreted = mi.compile(prog)(**inputs), mi.interpret(prog, **inputs)
    for result in prog.result_names:
        for how, value in (("compiled", getattr(compiled, result)), ("interpreted", getattr(interpreted, result))):
            value = np.asarray(value)
            assert value.dtype == ml_dtypes.bfloat16, f"{how} {result}"
            value = value.astype(np.float64)
            np.testing.assert_allclose(value, want, rtol=2e-2, atol=2e-2, err_msg=f"{how} {result}")
            worst = np.max(np.abs(value - want) - ulp - 1e-5)
            assert worst <= 0, f"{how} {result}: more than one bf16 rounding off the f32 result (by {worst})"


# ---------------------------------------------------------------------------------------------
# 3. Split layouts

VALUE_V = ("batch", "memory_length", "heads", "d_v")
LAYOUTS = {
    "replicated": ({"x": 4, "y": 2}, {}, {}),
    "batch_heads": ({"x": 4, "y": 2}, {"batch": "x", "heads": "y"}, {}),
    "length_causal": ({"x": 8}, {"length": "x"}, {}),
    "length_causal_more_keys": ({"x": 8}, {"length": "x"}, {"sizes": {"memory_length": 37}}),
    "memory_length": ({"x": 8}, {"memory_length": "x"}, {}),
    "memory_length_more_keys": ({"x": 8}, {"memory_length": "x"}, {"sizes": {"length": 5, "memory_length": 40}}),
    "batch_over_two_axes": ({"x": 2, "y": 4}, {"batch": ("x", "y")}, {"sizes": {"batch": 8}}),
    "value_dim_split": ({"x": 4, "y": 2}, {"batch": "x", "d_v": "y"}, {"v": VALUE_V}),
    "key_dim_split": ({"x": 8}, {"d_k": "x"}, {}),
    "heads_and_length": ({"x": 2, "y": 4}, {"heads": "x", "length": "y"}, {"v": VALUE_V}),
}


@pytest.mark.parametrize("layout_id", list(LAYOUTS))
def test_split_layouts_equal_the_reference(layout_id):
    mesh, rules, extra = LAYOUTS[layout_id]
    sizes = {**SIZES, **extra.get("sizes", {})}
    names = {"q": Q, "k": K, "v": extra.get("v", V), "mask": MASK_BLM, "bias": BIAS_HLM}
    variants = three_variants(causal=True, block_size=8)
    del variants["blockwise"]
    prog = attention_program(mesh, rules, names, variants, sizes=sizes)
    inputs = make_inputs(names, sizes, seed=3)
    want = expected(inputs, names, causal=True)
    got = mi.compile(prog)(**inputs)
    for result in prog.result_names:
        np.testing.assert_allclose(np.asarray(getattr(got, result)), want, rtol=2e-5, atol=2e-5,
                                   err_msg=f"{layout_id} {result}")


@pytest.mark.parametrize("layout_id", ["batch_heads", "memory_length"])
def test_gspmd_mode_equals_the_reference(layout_id):
    mesh, rules, _ = LAYOUTS[layout_id]
    names = {"q": Q, "k": K, "v": V, "mask": MASK_LM}
    prog = attention_program(mesh, rules, names, {"default": {"causal": True, "block_size": 8}})
    inputs = make_inputs(names, seed=4)
    got = np.asarray(mi.compile(prog, mode="gspmd")(**inputs))
    np.testing.assert_allclose(got, expected(inputs, names, causal=True), rtol=2e-5, atol=2e-5)


# ---------------------------------------------------------------------------------------------
# 4. Gradients

GRAD_SIZES = {**SIZES, "memory_length": 37}  # 37 keys: blocks of 8 with a ragged last block
GRAD_CASES = {
    "causal_bias": ({"causal": True}, {"bias": BIAS_HLM}),
    "mask_bias": ({}, {"mask": MASK_BLM, "bias": ("batch", "memory_length")}),
    "causal_value_dim": ({"causal": True}, {"v": VALUE_V, "bias": ("length",)}),
    "keys_without_heads": ({"causal": True}, {"k": ("batch", "memory_length", "d_k"), "v": ("batch", "memory_length", "d_k"),
                                              "bias": BIAS_HLM}),
    # 12 keys for 24 queries: queries 0..11 see no key (their output is the mean of v), and
    # batch 1's query 20 is masked off entirely
    "fully_masked_rows": ({"causal": True}, {"mask": MASK_BLM, "masked_row": True}),
}
GRAD_RUNS = [  # case, mesh, rules, implementation, memory_length
    ("causal_bias", {"x": 4, "y": 2}, {"batch": "x", "heads": "y"}, None, 37),
    ("causal_bias", {"x": 8}, {"length": "x"}, None, 37),
    ("mask_bias", {"x": 4, "y": 2}, {"batch": "x", "heads": "y"}, None, 37),
    ("mask_bias", {"x": 8}, {"length": "x"}, None, 37),
    ("mask_bias", {"x": 2, "y": 4}, {"batch": "x", "length": "y"}, "xla", 37),
    ("causal_value_dim", {"x": 8}, {"memory_length": "x"}, None, 24),
    ("keys_without_heads", {"x": 4, "y": 2}, {"batch": "x", "heads": "y"}, None, 37),
    ("fully_masked_rows", {"x": 4, "y": 2}, {"batch": "x", "heads": "y"}, None, 12),
    ("fully_masked_rows", {"x": 4, "y": 2}, {"batch": "x", "heads": "y"}, "xla", 12),
]


@pytest.mark.parametrize("case_id,mesh,rules,implementation,memory_length", GRAD_RUNS,
                         ids=[f"{c}-{r}-{i or 'default'}" for c, _, r, i, _ in GRAD_RUNS])
def test_gradients_equal_jax_in_float64(case_id, mesh, rules, implementation, memory_length):
    kwargs, extra = GRAD_CASES[case_id]
    sizes = {**SIZES, "memory_length": memory_length}
    names = {"q": Q, "k": K, "v": V, **extra}
    masked_row = names.pop("masked_row", False)
    op_kwargs = {**kwargs, "implementation": implementation}
    if implementation is None:
        op_kwargs["block_size"] = 8
    prog = attention_program(mesh, rules, names, {"o": op_kwargs}, sizes=sizes, loss=True)
    inputs = make_inputs(names, sizes, seed=5)
    if masked_row:
        inputs["mask"][1, 20, :] = False
    inputs["w"] = np.random.default_rng(6).normal(size=[sizes[n] for n in out_names(Q, names["v"])]).astype(np.float32)
    wrt = [a for a in ("q", "k", "v", "bias") if a in names]
    gradient = mi.value_and_grad(prog, wrt=wrt)
    compiled, interpreted = mi.compile(gradient)(**inputs), mi.interpret(gradient, **inputs)
    with jax.enable_x64(True):
        def f(*args):
            arrays = dict(zip(wrt, args))
            o = reference(arrays["q"], arrays["k"], arrays["v"], names, mask=inputs.get("mask"), bias=arrays.get("bias"),
                          xp=jnp, **kwargs)
            return jnp.sum(o * jnp.asarray(inputs["w"], jnp.float64))
        want_loss, want_grads = jax.value_and_grad(f, argnums=tuple(range(len(wrt))))(
            *(jnp.asarray(inputs[a], jnp.float64) for a in wrt))
        want_loss, want_grads = float(want_loss), [np.asarray(g) for g in want_grads]
    for how, (loss, *grads) in (("compiled", compiled), ("interpreted", interpreted)):
        np.testing.assert_allclose(float(np.asarray(loss)), want_loss, rtol=1e-4, atol=1e-5, err_msg=how)
        assert len(grads) == len(wrt)
        for arg, got, want in zip(wrt, grads, want_grads):
            got = np.asarray(got)
            assert got.shape == want.shape, arg
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{how} grad_{arg}")


# ---------------------------------------------------------------------------------------------
# 5. NaN and inf


def test_nan_and_inf_propagate_as_in_the_reference():
    names = {"q": Q, "k": K, "v": V}
    prog = attention_program({"x": 4, "y": 2}, {"batch": "x", "heads": "y"}, names, three_variants(block_size=8))
    inputs = make_inputs(names, seed=7)
    inputs["v"][1, 3, 0, 5] = np.nan  # batch 1, key 3, head 0, d_k 5
    inputs["q"][2, 7, 1, 0] = np.inf  # batch 2, query 7, head 1
    want = expected(inputs, names)
    nan = np.zeros(want.shape, bool)
    nan[1, :, 0, 5] = True  # every query of batch 1, head 0 averages the NaN in
    nan[2, 7, 1, :] = True  # inf - inf in the softmax of that row
    assert np.array_equal(np.isnan(want), nan)
    compiled, interpreted = mi.compile(prog)(**inputs), mi.interpret(prog, **inputs)
    for result in prog.result_names:
        for how, value in (("compiled", getattr(compiled, result)), ("interpreted", getattr(interpreted, result))):
            np.testing.assert_allclose(np.asarray(value), want, rtol=2e-5, atol=2e-5, equal_nan=True,
                                       err_msg=f"{how} {result}")


def test_a_masked_logit_is_replaced_by_the_mask_value():
    """q = 0, so every logit is its bias exactly (f32 holds -1e10 + 1024 j). Logits below -1e9 are
    still a softmax of their own; a hidden key's logit becomes -1e9 whatever it was."""
    sizes = {**SIZES, "length": 4, "memory_length": 37}
    names = {"q": Q, "k": K, "v": V, "mask": MASK_LM, "bias": MASK_LM}
    prog = attention_program({"x": 4, "y": 2}, {"batch": "x"}, names, three_variants(block_size=8), sizes=sizes)
    inputs = make_inputs(names, sizes, seed=8)
    inputs["q"][:] = 0
    bias, mask = np.full((4, 37), -1e10, np.float32), np.ones((4, 37), bool)
    bias[1, 20] += 1024  # row 1: key 20 wins by 1024
    mask[2, :10] = False  # row 2: hidden keys 0..9 (at -1e9) beat the kept ones (at -1e10)
    bias[3], mask[3] = 0, False  # row 3: fully masked
    inputs["bias"], inputs["mask"] = bias, mask
    want = expected(inputs, names)
    v = inputs["v"].astype(np.float64)  # [batch, memory_length, heads, d_k]; want: [batch, length, heads, d_k]
    for row, keys in ((0, slice(None)), (1, slice(20, 21)), (2, slice(0, 10)), (3, slice(None))):
        np.testing.assert_allclose(want[:, row], v[:, keys].mean(axis=1), rtol=1e-12, atol=1e-12)
    compiled, interpreted = mi.compile(prog)(**inputs), mi.interpret(prog, **inputs)
    for result in prog.result_names:
        for how, value in (("compiled", getattr(compiled, result)), ("interpreted", getattr(interpreted, result))):
            for row in range(4):
                np.testing.assert_allclose(np.asarray(value)[:, row], want[:, row], rtol=2e-5, atol=2e-5,
                                           err_msg=f"{how} {result} row {row}")


# ---------------------------------------------------------------------------------------------
# 6. Bad input


def test_bad_input_is_a_located_error():
    B, H, L, M, Kd = (mi.Dim(n, SIZES[n]) for n in ("batch", "heads", "length", "memory_length", "d_k"))
    with mi.Program("bad", mi.Mesh({"x": 2})) as prog:
        q, k, v = prog.argument("q", [B, L, H, Kd]), prog.argument("k", [B, M, H, Kd]), prog.argument("v", [B, M, H, Kd])
        v_short = prog.argument("v_short", [B, mi.Dim("memory_length", 20), H, Kd])
        k_narrow = prog.argument("k_narrow", [B, M, H, mi.Dim("d_k", 8)])
        k_other_heads = prog.argument("k_other_heads", [B, M, mi.Dim("heads", 3), Kd])
        mask_float = prog.argument("mask_float", [L, M])
        mask_d_k = prog.argument("mask_d_k", [L, M, Kd], "i1")
        mask_other = prog.argument("mask_other", [mi.Dim("other", 3), M], "i1")
        mask_short = prog.argument("mask_short", [mi.Dim("length", 5), M], "i1")
        bias_other = prog.argument("bias_other", [L, mi.Dim("other", 3)])
        bias_d_k = prog.argument("bias_d_k", [H, Kd])
        attention = mi.dot_product_attention
        cases = [
            (lambda: attention(q, k, v_short), "memory_length|length"),
            (lambda: attention(q, k_narrow, v), "d_k"),
            (lambda: attention(q, k, v, query_length="nope"), "nope"),
            (lambda: attention(q, k, v, key_length="nope"), "nope"),
            (lambda: attention(q, k, v, key_dim="nope"), "nope"),
            (lambda: attention(q, k_other_heads, v), "heads"),
            (lambda: attention(q, k, v, mask=mask_float), "mask|i1|bool"),
            (lambda: attention(q, k, v, mask=mask_d_k), "d_k"),
            (lambda: attention(q, k, v, mask=mask_other), "other"),
            (lambda: attention(q, k, v, mask=mask_short), "length|size"),
            (lambda: attention(q, k, v, bias=bias_other), "other"),
            (lambda: attention(q, k, v, bias=bias_d_k), "d_k"),
            (lambda: attention(q, k, v, scale=0.0), "scale"),
            (lambda: attention(q, k, v, scale=float("nan")), "scale"),
            (lambda: attention(q, k, v, scale=float("inf")), "scale"),
            (lambda: attention(q, k, v, implementation="flash"), "flash"),
            (lambda: attention(q, k, v, implementation="cudnn"), "cudnn"),
            (lambda: attention(q, k, v, implementation="fast"), "fast"),
            (lambda: attention(q, k, v, block_size=0), "block_size"),
            (lambda: attention(q, k, v, block_size=-4), "block_size"),
        ]
        failures = []
        for i, (make, message) in enumerate(cases):
            try:
                make()
            except mi.MeshIRError as e:
                text = str(e)
                if "test_attention.py" not in text or not re.search(message, text, re.IGNORECASE):
                    failures.append(f"case {i}: unlocated or unclear: {text}")
            else:
                failures.append(f"case {i}: no error (expected one mentioning {message!r})")
        assert not failures, "\n".join(failures)


# ---------------------------------------------------------------------------------------------
# 7. Memory of the blockwise form


def test_blockwise_does_not_materialize_the_logits():
    sizes = {**SIZES, "batch": 1, "heads": 1, "length": 1024, "memory_length": 1024}
    temp = {}
    for implementation in ("blockwise", "xla"):
        kwargs = {"implementation": implementation, **({"block_size": 128} if implementation == "blockwise" else {})}
        prog = attention_program({"x": 8}, {}, {"q": Q, "k": K, "v": V}, {"o": kwargs}, sizes=sizes)
        temp[implementation] = mi.compile(prog).compile_report.xla_memory["temp"]
    assert temp["xla"] >= 1024 * 1024 * 4, temp  # the f32 logits, at least
    assert temp["blockwise"] < temp["xla"] / 4, temp
