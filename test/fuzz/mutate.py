"""Mutations of IR text: tokens, numbers, types, names, dim names, regions, nesting, and the
`expected-*` comments of --verify-diagnostics.

Each mutator takes (rng, text, pool) and returns new text; `pool` holds the seeds (for
splicing) and the tokens seen in them (the dictionary). Mutators aim at what MeshIR must
diagnose: impossible sizes, broken `!mtf.tensor` types, renamed symbols and dims, removed
bodies (declarations), deep nesting, and plain syntax damage.
"""
from __future__ import annotations

import re

TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[%@^#!]?[A-Za-z_][\w.$-]*|\d+(?:\.\d+)?(?:e[+-]?\d+)?|\s+|.', re.S)
NUMBERS = ["0", "-1", "1", "2", "3", "7", "64", "2147483648", "8589934592", "9223372036854775807",
           "9223372036854775808", "18446744073709551616", "99999999999999999999999999", "1e309", "-0"]
ELEMENT_TYPES = ["f32", "bf16", "f16", "f64", "i32", "i64", "i1", "f8", "i8", "index", "float32"]
AXES = ["x", "y", "z", "(x,y)", "(x,x)", "()", "(y,x)", "(", "q"]
NESTING = [2, 30, 99, 150, 199, 201, 400, 3000, 30000]
_MTF_TYPE = re.compile(r"!mtf\.tensor<[^<>]*>")
_DIM = re.compile(r"(?<=[<,]\s)?\b([A-Za-z_]\w*)=(\d+)")
_SYMBOL = re.compile(r"@[\w.$-]+")
_VALUE = re.compile(r"%[\w.$-]+")


class Pool:
    """The seeds and a dictionary of their tokens."""

    def __init__(self, texts: list[str]):
        self.texts = texts
        words = {t for text in texts for t in TOKEN.findall(text) if not t.isspace() and len(t) < 40}
        self.tokens = sorted(words)


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def _pick_match(rng, pattern, text):
    found = list(pattern.finditer(text))
    return rng.choice(found) if found else None


def _replace_span(text, start, end, new):
    return text[:start] + new + text[end:]


def number(rng, text, pool):
    """One number, or every occurrence of it (sizes stay consistent, so the program still
    verifies and reaches the passes with its new sizes)."""
    m = _pick_match(rng, re.compile(r"(?<![\w.])\d+(?![\w.])"), text)
    if m is None:
        return text
    new = rng.choice(NUMBERS)
    if rng.random() < 0.5:
        return re.sub(rf"(?<![\w.]){m.group(0)}(?![\w.])", new, text)
    return _replace_span(text, m.start(), m.end(), new)


def expected_text(rng, text, pool):
    """Damage the `{{...}}` of an `expected-*` comment (the --verify-diagnostics convention):
    regex syntax, braces, or turn a plain expectation into an `-re` one."""
    m = _pick_match(rng, re.compile(r"expected-(error|warning|note|remark)(-re)?([^{\n]*)\{\{(.*)\}\}"), text)
    if m is None:
        return text
    body = m.group(4)
    at = rng.randrange(len(body) + 1)
    piece = rng.choice(["[", "(", ")", "*", "+?", "\\", "{{", "}}", "{{[a-", "{{(}}", "{{.*}}", "|", "{{x{2,1}}}"])
    text = _replace_span(text, m.start(4), m.end(4), body[:at] + piece + body[at:])
    if not m.group(2) and rng.random() < 0.5:
        text = _replace_span(text, m.end(1), m.end(1), "-re")
    return text


def token_replace(rng, text, pool):
    toks = tokens(text)
    solid = [i for i, t in enumerate(toks) if not t.isspace()]
    if not solid:
        return rng.choice(pool.tokens)
    toks[rng.choice(solid)] = rng.choice(pool.tokens)
    return "".join(toks)


def token_delete(rng, text, pool):
    toks = tokens(text)
    if toks:
        del toks[rng.randrange(len(toks))]
    return "".join(toks)


def token_insert(rng, text, pool):
    toks = tokens(text)
    toks.insert(rng.randrange(len(toks) + 1), rng.choice(pool.tokens + ["(", "[", "{", "}", ")", "]", "<", ">"]))
    return "".join(toks)


def token_duplicate(rng, text, pool):
    toks = tokens(text)
    if toks:
        i = rng.randrange(len(toks))
        toks.insert(i, toks[i])
    return "".join(toks)


def lines_delete(rng, text, pool):
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    j = min(len(lines), i + rng.choice([1, 1, 2, 3, 10]))
    return "\n".join(lines[:i] + lines[j:])


def line_duplicate(rng, text, pool):
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return "\n".join(lines)


def splice(rng, text, pool):
    """Lines of another seed at a line boundary (crossover)."""
    other = rng.choice(pool.texts).split("\n")
    i = rng.randrange(len(other))
    piece = other[i:i + rng.choice([1, 2, 5, 50])]
    lines = text.split("\n")
    at = rng.randrange(len(lines) + 1)
    return "\n".join(lines[:at] + piece + lines[at:])


def mtf_type(rng, text, pool):
    """Damage one `!mtf.tensor<...>`: element type, sizes, axes, a dim twice or missing, partial."""
    m = _pick_match(rng, _MTF_TYPE, text)
    if m is None:
        return text
    body = m.group(0)[len("!mtf.tensor<"):-1]
    parts = [p.strip() for p in body.split(",")]
    choice = rng.randrange(7)
    if choice == 0:
        parts[-1] = rng.choice(ELEMENT_TYPES)
    elif choice == 1 and len(parts) > 1:
        i = rng.randrange(len(parts) - 1)
        name = parts[i].split("=")[0]
        parts[i] = f"{name}={rng.choice(NUMBERS)}" + (("@" + rng.choice(AXES)) if rng.random() < 0.5 else "")
    elif choice == 2 and len(parts) > 1:
        i = rng.randrange(len(parts) - 1)
        parts.insert(i, parts[i])
    elif choice == 3 and len(parts) > 1:
        del parts[rng.randrange(len(parts) - 1)]
    elif choice == 4:
        parts.append(rng.choice(["partial@x", "partial_max@(x,y)", "partial_min@z", "partial@()", "partial"]))
    elif choice == 5 and len(parts) > 1:
        i = rng.randrange(len(parts) - 1)
        parts[i] = parts[i].split("@")[0] + "@" + rng.choice(AXES)
    else:
        return _replace_span(text, m.start(), m.end(), rng.choice(["tensor<8xf32>", "i32", "none", "!mtf.tensor<f32>", "!mtf.other<a=1>"]))
    return _replace_span(text, m.start(), m.end(), "!mtf.tensor<" + ", ".join(parts) + ">")


def dim_name(rng, text, pool):
    """Rename a dim everywhere (consistent) or once (inconsistent)."""
    found = sorted({m.group(1) for m in _DIM.finditer(text)})
    if not found:
        return text
    old, new = rng.choice(found), rng.choice(found + ["b", "batch", "x", "_", "a1"])
    if rng.random() < 0.5:
        return re.sub(rf"\b{re.escape(old)}=", f"{new}=", text)
    m = _pick_match(rng, re.compile(rf"\b{re.escape(old)}="), text)
    return _replace_span(text, m.start(), m.end(), f"{new}=")


def symbol_name(rng, text, pool):
    """Rename a symbol (@f, @mesh) or an SSA value (%0), everywhere or once."""
    pattern = _SYMBOL if rng.random() < 0.6 else _VALUE
    found = sorted(set(pattern.findall(text)))
    if not found:
        return text
    old = rng.choice(found)
    new = rng.choice(found + ["@main", "@mesh", "@nope", "%0", "%arg0", "%zz"])
    if rng.random() < 0.5:
        return re.sub(re.escape(old) + r"(?![\w.$-])", new, text)
    m = _pick_match(rng, re.compile(re.escape(old) + r"(?![\w.$-])"), text)
    return _replace_span(text, m.start(), m.end(), new)


def remove_region(rng, text, pool):
    """Delete a `{...}` with its contents: a function definition becomes a declaration."""
    opens = [m.start() for m in re.finditer(r"\{", text)]
    if not opens:
        return text
    start, depth = rng.choice(opens), 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[:start] + text[i + 1:]
    return text[:start]


def nest(rng, text, pool):
    """Wrap the text in modules, region ops or attribute arrays, k deep."""
    k = rng.choice(NESTING)
    kind = rng.randrange(3)
    if kind == 0:
        return "module {" * k + text + "}" * k
    if kind == 1:
        return '"test.op"() ({' * k + text + "}) : () -> ()" * k + "\n"
    return text + '\n"test.op"() {a = ' + "[" * k + "]" * k + "} : () -> ()\n"


MUTATORS = [number, number, expected_text, token_replace, token_replace, token_delete, token_insert, token_duplicate,
            lines_delete, lines_delete, line_duplicate, splice, mtf_type, mtf_type, mtf_type, dim_name,
            symbol_name, remove_region, remove_region, nest]


def mutate(rng, text: str, pool: Pool) -> str:
    """`text` after 1 to 4 random mutations."""
    for _ in range(rng.choice([1, 1, 2, 3, 4])):
        text = rng.choice(MUTATORS)(rng, text, pool)
    return text
