"""`mi.Precision`: a mixed-precision policy, Mesh-TensorFlow's `VariableDType` for named layouts.

    policy = mi.Precision(master="float32", compute="bfloat16", reduce="float32")
    step = mi.train_step(loss_prog, mi.Adam(1e-3), precision=policy)
    # or once for the program: mi.Program("lm", mesh, precision=policy)

Parameters and optimizer state are stored in `master`; each parameter is cast to `compute` at
each use (before the all-gather of a parameter stored split); activations compute in
`compute`; what needs range (sums, exp, log, rsqrt: softmax and layer-norm statistics, the
loss) stays f32; gradients are reduced across the mesh in `reduce` and applied to the master
weights in `master`. The program's signature does not change. The ops' rules are
transforms/passes/precision.py's; `reduce` wider than `compute` runs transforms/passes/accumulate_wide.py
on the gradient. Decisions: docs/precision.md.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect import attribute_names
from meshir.dialect import MeshIRError, MeshIRTypeError, MeshIRValueError, get_context
from meshir.dialect.ops.elementwise import CastOp
from meshir.dialect.signature import entry_function, refresh_function_type, signature
from meshir.dialect.tensor_type import FLOAT_TYPES, TensorType, wider_floats
from meshir.transforms import Pipeline
from meshir.transforms.passes.accumulate_wide import AccumulateWidePass
from meshir.transforms.passes.precision import ApplyPrecisionPass

from meshir.api import _checks as checks
from meshir.api.programs._locations import located_error

#: The function attribute that holds a program's default policy.
ATTRIBUTE = attribute_names.PRECISION


@dataclass(frozen=True, init=False)
class Precision:
    """A mixed-precision policy: element types for stored parameters (`master`), arithmetic
    (`compute`) and gradient sums across devices (`reduce`: `compute` or `master`). Types
    are MeshIR's or NumPy's names ("bf16" or "bfloat16"); they are kept as MeshIR's."""

    master: str
    compute: str
    reduce: str

    def __init__(self, master="float32", compute="bfloat16", reduce="float32"):
        names = {}
        for field, value in (("master", master), ("compute", compute), ("reduce", reduce)):
            name = checks.element_type(value, f"mi.Precision {field}")
            if name not in FLOAT_TYPES:
                raise located_error(f"mi.Precision {field} must be a float type (f32, bf16, f64), got {value!r}",
                                    MeshIRValueError)
            names[field] = name
        m, c, r = names["master"], names["compute"], names["reduce"]
        if c == "f16":
            raise located_error(f"mi.Precision compute {compute!r}: float16 needs loss scaling to keep small "
                                "gradients, which MeshIR does not do; use bfloat16 (same width, f32's range)",
                                MeshIRValueError)
        if m != c and m not in wider_floats(c):
            raise located_error(f"mi.Precision master {master!r} is narrower than compute {compute!r}: parameters "
                                "must be stored at least as wide as they compute", MeshIRValueError)
        if r not in (c, m):
            raise located_error(f"mi.Precision reduce {reduce!r} must be the compute type {c} or the master type {m}",
                                MeshIRValueError)
        for field, name in names.items():
            object.__setattr__(self, field, name)

    @property
    def mixed(self) -> bool:
        """True when arithmetic is narrower than storage (the policy changes the program)."""
        return self.compute != self.master

    def to_text(self) -> str:
        return f"master={self.master},compute={self.compute},reduce={self.reduce}"

    @staticmethod
    def from_text(text: str) -> "Precision":
        fields = dict(item.split("=", 1) for item in text.split(","))
        return Precision(**fields)


def check(value, what: str) -> Precision | None:
    """`value` if it is a Precision or None."""
    if value is not None and not isinstance(value, Precision):
        raise located_error(f"{what} must be an mi.Precision or None, got {checks.describe(value)}", MeshIRTypeError)
    return value


def program_default(module) -> Precision | None:
    """The policy a program was built with (`mi.Program(..., precision=)`), if any."""
    try:
        fn = entry_function(module)
    except MeshIRError:  # no single entry: whoever needs one says so
        return None
    if ATTRIBUTE not in fn.attributes:
        return None
    return Precision.from_text(ir.StringAttr(fn.attributes[ATTRIBUTE]).value)


def set_default(module, policy: Precision | None) -> None:
    """Record `policy` as the program's default on its entry function (None: remove it)."""
    fn = entry_function(module)
    if policy is None:
        if ATTRIBUTE in fn.attributes:
            del fn.attributes[ATTRIBUTE]
        return
    with module.context:
        fn.attributes[ATTRIBUTE] = ir.StringAttr.get(policy.to_text())


def check_arguments(module, policy: Precision, names=None, what: str = "the program") -> None:
    """Every float argument (or those in `names`) stored in the master type, else a located
    error naming them: casting narrow arguments up would not give master-precision weights."""
    sig = signature(entry_function(module))
    wrong = [f"'{n}' ({t.element_type})" for n, t in zip(sig.arg_names, sig.arg_types)
             if t.is_float and (names is None or n in names) and t.element_type != policy.master]
    if wrong:
        raise located_error(f"precision {policy.to_text()}: {what} has float arguments {', '.join(wrong)} that are "
                            f"not stored in the master type {policy.master}; build them as {policy.master} "
                            "(the policy casts them to the compute type at each use)", MeshIRValueError)


def copy(module):
    with get_context():
        return module.operation.clone()


def applied(module, policy: Precision):
    """A copy of `module` computing under `policy` (mtf-apply-precision), with no default
    left on it (the policy is in its ops now)."""
    result = copy(module)
    set_default(result, None)
    if policy.mixed:
        Pipeline([ApplyPrecisionPass(compute=policy.compute)]).apply(result)
    return result


def under_default(module, what: str, names=None):
    """(`module` computing under the policy it was built with - a copy - and that policy), or
    (`module`, None) when it has none. The arguments (those in `names`) must be stored in the
    policy's master type; `what` names the program in that error."""
    policy = program_default(module)
    if policy is None:
        return module, None
    check_arguments(module, policy, names, what)
    return applied(module, policy), policy


def narrow_gradient_results(module, policy: Precision) -> None:
    """With `reduce` equal to `compute`: the gradients (the results after the value) that are
    a cast of a `compute` value up to `master` (a gradient's last step) return the `compute`
    value, so mi.train_step sums it across devices - all-reduced or reduce-scattered onto the
    update layout - before casting it up."""
    if not policy.mixed or policy.reduce != policy.compute:
        return
    fn = entry_function(module)
    ret = list(fn.regions[0].blocks[0].operations)[-1].operation
    with module.context:
        for i in range(1, len(ret.operands)):
            value = ret.operands[i]
            owner = value.owner.operation if isinstance(value, ir.OpResult) else None
            if owner is not None and owner.name == CastOp.OPERATION_NAME \
                    and TensorType.from_mlir(owner.operands[0].type).element_type == policy.compute:
                ret.operands[i] = owner.operands[0]
                if not list(value.uses):
                    owner.erase()
        refresh_function_type(fn)


def widen_gradient_sums(module, policy: Precision) -> None:
    """After autodiff: gradients summed in `reduce` when it is wider than `compute`."""
    if policy.mixed and policy.reduce != policy.compute:
        Pipeline([AccumulateWidePass()]).apply(module)
