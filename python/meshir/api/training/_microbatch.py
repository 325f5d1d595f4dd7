"""Gradient accumulation over microbatches inside one training step (`mi.train_step(...,
microbatches={"batch": k})`): a scan over k slices of the named dim, not k unrolled copies.

The loss program is resized to one slice (every type's `dim` of size n becomes n/k) and
differentiated; the step reshapes each argument with `dim` into (`<dim>_microbatch` = k,
`dim` = n/k), scans the gradient program over the slices and *sums* losses and gradients.
Summing gives the full batch's loss and gradient exactly for a loss summed over the batch
and for one averaged over it alike: a program's mean divides by the size it was built with
(a constant), so each slice's loss is its share of the full batch's.
"""
from __future__ import annotations

from meshir.dialect import MeshIRTypeError, MeshIRValueError, TensorType, get_context
from meshir.dialect.signature import entry_function, refresh_function_type, signature
from meshir.dialect.verifier import verify_module
from meshir.dialect.walk import values_within

from meshir.api.programs._locations import located_error
from meshir.api.programs.dims import Dim
from meshir.api.ops.loops import scan
from meshir.api.ops.shape import reshape
from meshir.api.ops.composites import fold_in
from meshir.api.ops.creation import constant, iota


def check_microbatches(microbatches, sig, params) -> tuple[str, int]:
    """(dim, k) of `microbatches={"dim": k}`, checked against the loss program's arguments."""
    if not isinstance(microbatches, dict) or len(microbatches) != 1:
        raise located_error(f"microbatches must be {{dim: count}} for one named dim, got {microbatches!r}",
                            MeshIRTypeError)
    (dim, k), = microbatches.items()
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise located_error(f"microbatches: the count for '{dim}' must be a positive int, got {k!r}", MeshIRValueError)
    sliced = [(n, t) for n, t in zip(sig.arg_names, sig.arg_types) if t.has(dim)]
    if not sliced:
        raise located_error(f"microbatches: no argument of @{sig.function} has dim '{dim}' "
                            f"(arguments: {', '.join(f'{n}: {t}' for n, t in zip(sig.arg_names, sig.arg_types))})",
                            MeshIRValueError)
    for n, t in sliced:
        if n in params:
            raise located_error(f"microbatches: parameter '{n}' has dim '{dim}'; only data is split into "
                                "microbatches", MeshIRValueError)
        if t.size(dim) % k:
            raise located_error(f"microbatches: '{dim}' of size {t.size(dim)} (argument '{n}') does not split into "
                                f"{k} equal microbatches", MeshIRValueError)
    return dim, k


def resized(module, dim: str, k: int):
    """A copy of `module` in which every value's `dim` is k times smaller (one microbatch);
    a program whose ops fix that size otherwise (a slice along it, say) cannot be resized."""
    with get_context():
        copy = module.operation.clone()
        for fn in copy.regions[0].blocks[0].operations:
            if fn.operation.name != "func.func":
                continue
            for v in values_within(fn.regions[0].blocks[0]):
                try:
                    t = TensorType.from_mlir(v.type)
                except ValueError:
                    continue
                if t.has(dim):
                    v.set_type(t.with_dims(d.__class__(d.name, d.size // k, d.axes) if d.name == dim else d
                                           for d in t.dims).to_mlir())
            refresh_function_type(fn)
    problems = verify_module(copy)
    if problems:
        raise located_error(f"microbatches: the loss program does not run on a microbatch ('{dim}' divided by {k}): "
                            f"{problems[0].message}", MeshIRValueError)
    return copy


def accumulate(gradient, program, args: dict, dim: str, k: int, seeds: tuple[str, ...] = ()) -> list:
    """The loss and gradients of `gradient` (the resized value-and-grad program) summed over
    the k microbatches of `args` (Tensors of `program`, by argument name). Each of `seeds`
    (seed arguments) is folded with the microbatch's index, so slices draw different values."""
    micro = f"{dim}_microbatch"
    sliced = [n for n, t in args.items() if t.type.has(dim)]
    xs = []
    for n in sliced:
        dims = []
        for d in args[n].dims:
            dims += [Dim(micro, k), Dim(dim, d.size // k)] if d.name == dim else [d]
        xs.append(reshape(args[n], dims))
    if seeds:
        xs.append(iota([Dim(micro, k)], micro, "i32"))
    outputs = signature(entry_function(gradient.module)).result_types
    zeros = tuple(constant(0.0, [Dim(d.name, d.size) for d in t.dims], dtype=t.element_type) for t in outputs)

    def body(carry, x):
        call_args = dict(args)
        call_args.update(zip(sliced, x))
        for n in seeds:
            call_args[n] = fold_in(args[n], x[-1])
        out = program.call(gradient, **call_args)
        return tuple(a + o for a, o in zip(carry, out)), None

    return list(scan(body, zeros, tuple(xs), dim=micro)[0])
