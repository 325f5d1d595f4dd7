"""`--dump-pass-pipeline`: the pipeline that will run, as mlir-opt prints it to stderr:

    Pass Manager with 2 passes:
    builtin.module(
      mtf-strip-layouts{keep-collectives=false},
      func.func(
        cse
      )
    )

Every pass is written with all its options (MeshIR's in declaration order; upstream ones as
MLIR prints them), so the text can be given back to `--pass-pipeline`. What meshir-opt adds
between passes (its verifier, the guards of upstream passes) is not shown: it is not part of
the pipeline the user asked for.
"""
from __future__ import annotations

from meshir._jax_private import passmanager
from meshir.dialect.context import get_context
from meshir.transforms import PASSES, parse_pipeline


def dump_pipeline(elements) -> str:
    """The text mlir-opt's `--dump-pass-pipeline` prints for the parsed `elements`."""
    body = ",\n".join(_pretty(element, 1) for element in elements)
    return f"Pass Manager with {len(elements)} passes:\nbuiltin.module(\n{body}\n)\n\n"


def _pretty(element, depth: int) -> str:
    indent = "  " * depth
    if element.children is not None:
        inner = ",\n".join(_pretty(child, depth + 1) for child in element.children)
        return f"{indent}{element.name}(\n{inner}\n{indent})"
    cls = PASSES.get(element.name)
    if cls is not None:
        return indent + cls.NAME + cls.from_options(element.option_dict()).option_text(defaults=True)
    return indent + _mlir_text(element)


def _mlir_text(element) -> str:
    """An upstream pass as MLIR prints it (every option), or as written when MLIR cannot add it
    alone (a pass that must be nested: the pipeline nests it when it runs)."""
    try:
        with get_context():
            text = str(passmanager.PassManager.parse(f"builtin.module({element.text})"))
    except ValueError:
        return element.text
    inner = parse_pipeline(text)
    return inner[0].text if len(inner) == 1 and inner[0].children is None else element.text
