"""Import every MeshIR pass module, so that each registers itself in PASSES.

A new pass adds one line here.
"""
from . import insert_collectives, propagate_sharding, strip_layouts, verify  # noqa: F401
from . import lower_to_stablehlo  # noqa: F401,E402
from .autodiff import autodiff_pass  # noqa: F401,E402
from . import inline_calls  # noqa: F401,E402
from . import canonicalize  # noqa: F401,E402
from . import shard_update  # noqa: F401,E402
from . import auto_layout_pass  # noqa: F401,E402
from . import accumulate_wide, precision  # noqa: F401,E402
