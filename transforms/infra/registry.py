"""The registry of MeshIR passes: what a pass is, how it declares its options, how it is found.

A pass is a dataclass, xDSL-style: a kebab-case `NAME`, a one-line `SUMMARY`, options as typed
fields declared with `option(default, help)`, and `apply(module_op)` that rewrites the
`builtin.module` op in place and raises `MeshIRError` (with located diagnostics) on failure:

    @register_pass
    @dataclass
    class StripLayoutsPass(ModulePass):
        NAME = "mtf-strip-layouts"
        SUMMARY = "Remove every layout and partial marker from !mtf.tensor types"
        keep_collectives: bool = option(False, "keep collective ops")

        def apply(self, module_op) -> None: ...

Options are spelled in kebab-case in pipelines (`keep-collectives=true`); their values
are converted from text by the field's type (bool, int, float, str, Literal[...] of strings,
tuple[str, ...] / tuple[int, ...] as comma lists, or a class with `from_option_text`, such as
`LayoutRules`). `--help` is generated from the same fields.

Passes do not verify the module themselves: the pass manager verifies it once before the
pipeline and after each pass (pass_manager.py). What a pass produces or needs beyond the
verifier's checks is an `IRForm` (`output_form`, `input_form`): the pipeline checks a form
right after the pass that produces it, and before a pass that needs it only when no earlier
pass of the pipeline produced it.

Passes are imported when asked for by name, as xDSL's are: `PASS_MODULES` names the module of
each MeshIR pass, and `PASSES` (a mapping of NAME to pass class) imports that module the first
time the pass is looked up. Its keys are known without importing anything, so `name in PASSES`
and `sorted(PASSES)` import nothing; `PASSES.values()` imports every pass. A new pass adds one
line to `PASS_MODULES` (test_layers.py checks the table against the `@register_pass` classes).
"""
from __future__ import annotations

import dataclasses
import difflib
import importlib
import typing
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import Callable, ClassVar

from meshir.dialect.diagnostics import MeshIRError

#: The module of every MeshIR pass, by the pass's NAME (in the order `meshir-opt` has always
#: registered them); the module is imported when the pass is first asked for.
PASS_MODULES: dict[str, str] = {
    "mtf-insert-collectives": "meshir.transforms.passes.insert_collectives",
    "mtf-shard-update": "meshir.transforms.passes.shard_update",
    "mtf-propagate-sharding": "meshir.transforms.passes.propagate_sharding",
    "mtf-strip-layouts": "meshir.transforms.passes.strip_layouts",
    "mtf-verify": "meshir.transforms.passes.verify",
    "mtf-lower-to-stablehlo": "meshir.transforms.passes.lower_to_stablehlo",
    "mtf-inline": "meshir.transforms.passes.inline_calls",
    "mtf-autodiff": "meshir.transforms.passes.autodiff",
    "mtf-canonicalize": "meshir.transforms.passes.canonicalize",
    "mtf-auto-layout": "meshir.transforms.passes.auto_layout",
    "mtf-accumulate-wide": "meshir.transforms.passes.accumulate_wide",
    "mtf-apply-precision": "meshir.transforms.passes.precision",
    "mtf-gather-params-at-uses": "meshir.transforms.passes.gather_params_at_uses",
    "mtf-mark-update-in-loops": "meshir.transforms.passes.mark_update_in_loops",
}


class PassTable(MutableMapping):
    """Pass classes by NAME: those of `PASS_MODULES`, imported on lookup, and any registered
    since (`register_pass`: a pass defined outside transforms/, e.g. in a test)."""

    def __init__(self, modules: dict[str, str]):
        self._modules = dict(modules)  # NAME -> module, for every pass known
        self._classes: dict[str, type[ModulePass]] = {}  # NAME -> class, for those imported

    def __getitem__(self, name: str) -> type["ModulePass"]:
        cls = self._classes.get(name)
        if cls is None:
            module = self._modules[name]  # KeyError: no such pass
            importlib.import_module(module)
            cls = self._classes.get(name)
            if cls is None:
                raise ImportError(f"module {module} does not register pass '{name}' (transforms/infra/registry.py: PASS_MODULES)")
        return cls

    def __setitem__(self, name: str, cls: type["ModulePass"]) -> None:
        self._modules.setdefault(name, cls.__module__)
        self._classes[name] = cls

    def __delitem__(self, name: str) -> None:
        del self._modules[name]
        self._classes.pop(name, None)

    def __contains__(self, name) -> bool:
        return name in self._modules

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def registered(self, name: str) -> type["ModulePass"] | None:
        """The class registered under `name`, without importing anything (None if none yet)."""
        return self._classes.get(name)

    def __repr__(self) -> str:
        return f"PassTable({sorted(self._modules)})"


#: Every MeshIR pass class, by its NAME; a pass's module is imported when it is looked up.
PASSES: PassTable = PassTable(PASS_MODULES)

_TRUE = {"true", "1", "on", "yes"}
_FALSE = {"false", "0", "off", "no"}


class PassOptionError(MeshIRError):
    """An option text that names no option or does not convert to the option's type.
    `key` is the option as written, so a pipeline error can point at it."""

    key: str | None = None


def option(default, help: str):
    """Declare a pass option: a dataclass field with its default and `--help` text."""
    if isinstance(default, (list, dict, set)):
        raise TypeError("option defaults must be immutable (use a tuple)")
    return dataclasses.field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class PassOption:
    """One option of a pass, as `--help` shows it."""

    name: str  # kebab-case, as written in pipelines
    field: str  # the dataclass field
    type_text: str  # "bool", "int", "str", "one of a|b", "list of str", ...
    default: object
    help: str
    python_type: object = dataclasses.field(default=str, repr=False, compare=False)

    def convert(self, text: str | None, pass_name: str):
        """The typed value of `text` (None: the option was written without `=value`)."""
        return _convert(self.python_type, text, f"option '{self.name}' of pass '{pass_name}'")


@dataclass(frozen=True)
class PassInfo:
    """What `--help` and did-you-mean know about a pass (MeshIR's or upstream MLIR's)."""

    name: str
    summary: str
    options: tuple[PassOption, ...] = ()


@dataclass(frozen=True)
class IRForm:
    """A form of IR beyond what the verifier checks (e.g. the partitioned form): its name and
    `check(module_op) -> list[Diagnostic]` (empty when the module is in that form)."""

    name: str
    check: Callable = dataclasses.field(compare=False, repr=False)


@dataclass
class ModulePass:
    """Base of MeshIR passes. Subclasses are dataclasses whose fields are their options."""

    NAME: ClassVar[str] = ""
    SUMMARY: ClassVar[str] = ""
    #: A pass that only reads the module (mtf-verify): the IR keeps the forms it was in.
    READS_ONLY: ClassVar[bool] = False
    #: A pass whose output is in every form its input was in, verified included
    #: (mtf-canonicalize: values are replaced by values of their type, unused ops erased):
    #: the IR keeps its forms and is not re-verified after it.
    KEEPS_FORMS: ClassVar[bool] = False

    def apply(self, module_op):
        """Transform `module_op` (a verified `builtin.module` operation) in place; raise
        MeshIRError. Passes do not verify: the pass manager does, between passes. May return
        Diagnostics to report on success (remarks, warnings), which meshir-opt prints."""
        raise NotImplementedError

    def output_form(self) -> IRForm | None:
        """The form this pass's output is in, checked by the pipeline right after it."""
        return None

    def input_form(self) -> IRForm | None:
        """The form this pass needs its input in (checked unless a pass before it produced it)."""
        return None

    @classmethod
    def info(cls) -> PassInfo:
        return PassInfo(cls.NAME, cls.SUMMARY, pass_options(cls))

    @classmethod
    def from_options(cls, options: dict[str, str | None]) -> "ModulePass":
        """An instance configured from option texts `{kebab-name: text}`."""
        known = {o.name: o for o in pass_options(cls)}
        values = {}
        for key, text in options.items():
            try:
                opt = known.get(key) or known.get(key.replace("_", "-"))
                if opt is None:
                    raise PassOptionError(_unknown_option_message(cls, key, known))
                values[opt.field] = opt.convert(text, cls.NAME)
            except PassOptionError as e:
                e.key = key
                raise
        return cls(**values)

    def option_text(self, defaults: bool = False) -> str:
        """`{a=1 b="x y"}` for options that differ from their defaults ('' when none do);
        with `defaults`, for every option (`meshir-opt --dump-pass-pipeline`)."""
        parts = []
        for opt in pass_options(type(self)):
            value = getattr(self, opt.field)
            if defaults or value != opt.default:
                parts.append(f"{opt.name}={_format_value(value)}")
        return "{" + " ".join(parts) + "}" if parts else ""


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: make a pass available to pipelines, `meshir-opt` flags and `--help`."""
    if "__dataclass_fields__" not in vars(cls):  # inherited fields do not count
        raise TypeError(f"{cls.__name__} must be a dataclass (decorate it with @dataclass first)")
    if not cls.NAME or cls.NAME != cls.NAME.lower() or " " in cls.NAME:
        raise TypeError(f"{cls.__name__}.NAME must be a kebab-case pass name, got {cls.NAME!r}")
    if not cls.SUMMARY:
        raise TypeError(f"{cls.__name__} needs a one-line SUMMARY")
    known = PASSES.registered(cls.NAME)
    if known is not None and known is not cls:
        raise TypeError(f"pass name '{cls.NAME}' is registered twice")
    module = PASS_MODULES.get(cls.NAME)
    if module is not None and module != cls.__module__:
        raise TypeError(f"pass '{cls.NAME}' is defined in {cls.__module__}, but PASS_MODULES says {module}")
    pass_options(cls)  # fail at import time on an unsupported option type
    PASSES[cls.NAME] = cls
    return cls


def did_you_mean(name: str, candidates) -> str:
    """`; did you mean 'x'?` for the closest candidate, '' when nothing is close."""
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def pass_options(cls) -> tuple[PassOption, ...]:
    """The options of a pass class, in field order."""
    hints = typing.get_type_hints(cls)
    opts = []
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        opts.append(
            PassOption(
                name=f.name.replace("_", "-"),
                field=f.name,
                type_text=_type_text(tp, cls),
                default=f.default,
                help=f.metadata.get("help", ""),
                python_type=tp,
            )
        )
    return tuple(opts)


def _unknown_option_message(cls, key: str, known: dict) -> str:
    if not known:
        return f"pass '{cls.NAME}' has no options, got '{key}'"
    return (
        f"unknown option '{key}' for pass '{cls.NAME}'{did_you_mean(key, known)} "
        f"(options: {', '.join(known)})"
    )


def _type_text(tp, cls) -> str:
    if tp in (bool, int, float, str):
        return tp.__name__
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal and all(isinstance(a, str) for a in args):
        return "one of " + "|".join(args)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis and args[0] in (str, int):
        return f"list of {args[0].__name__}"
    if hasattr(tp, "from_option_text"):
        return getattr(tp, "OPTION_TYPE_TEXT", tp.__name__)
    raise TypeError(f"{cls.__name__}: unsupported option type {tp!r}")


def _convert(tp, text: str | None, what: str):
    if tp is bool:
        if text is None or text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise PassOptionError(f"{what} expects true or false, got '{text}'")
    if text is None:
        raise PassOptionError(f"{what} needs a value")
    if tp in (int, float):
        try:
            return tp(text)
        except ValueError:
            raise PassOptionError(f"{what} expects {'an integer' if tp is int else 'a number'}, got '{text}'") from None
    if tp is str:
        return text
    if hasattr(tp, "from_option_text"):
        return tp.from_option_text(text)  # a malformed value raises MeshIRError (see pass_manager)
    args = typing.get_args(tp)
    if typing.get_origin(tp) is typing.Literal:
        if text not in args:
            raise PassOptionError(f"{what} must be one of {', '.join(args)}, got '{text}'{did_you_mean(text, args)}")
        return text
    items = [t.strip() for t in text.split(",") if t.strip()]
    return tuple(_convert(args[0], item, what) for item in items)


def _format_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        value = ",".join(str(v) for v in value)
    text = str(value)
    return f'"{text}"' if any(c in text for c in " ,{}()\"'") or not text else text
