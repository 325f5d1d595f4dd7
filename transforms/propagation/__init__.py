"""Sharding propagation, split like Shardy's: per-op factor rules (`op_rules`, read
from the ops' FACTORS trait; layout projections are dialect/layout_projection.py), the priority-ordered solver (`solver`), seeds from
user statements (`seeds`), and the rewrite that writes layouts and inserts reshards
(`reshards`). The pass itself is `transforms/passes/propagate_sharding.py`."""
