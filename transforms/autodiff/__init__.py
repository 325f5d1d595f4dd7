"""meshir.transforms.autodiff: reverse-mode differentiation of `mtf` functions.

`autodiff_pass.py` is the `mtf-autodiff` pass, `gradient.py` the driver (global form,
activity, reverse sweep), `emitter.py` the op builder the rules use, and one module per op
family holds the VJP rules (elementwise, contraction, shape, indexing, layout, loops),
registered by op class in op_registry's "vjp" slot (rules.py).
"""
from .autodiff_pass import AutodiffPass  # noqa: F401
from .gradient import AutodiffError, gradient_function  # noqa: F401
from .rules import vjp_classes  # noqa: F401
