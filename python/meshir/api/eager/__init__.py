"""Eager and staged execution, as TF Eager had them: `mi.Array`s whose ops run at once on the
mesh (dispatch.py), `mi.jit`'s tracer (jit.py), both over one staging cache (staging.py),
and `mi.default_layout`, the layout rules in context (context.py)."""
