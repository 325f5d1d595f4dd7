"""meshir.transforms.autodiff: reverse-mode differentiation of `mtf` functions.

The `mtf-autodiff` pass is transforms/passes/autodiff.py; here `gradient.py` is the driver (global form,
activity, reverse sweep), `emitter.py` the op builder the rules use, and one module per op
family holds the VJP rules (elementwise, contraction, shape, indexing, layout, loops),
registered by op class in op_registry's "vjp" slot (rules.py).
"""
from .gradient import AutodiffError, gradient_function  # noqa: F401
from .rules import vjp_classes  # noqa: F401
