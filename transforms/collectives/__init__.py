"""Collective insertion, split in parts: the layout-to-layout planner (`reshard_plan`), a
shortest-path search priced by the one cost model (transforms/analysis/cost_model.py). Which uses of
a partial value are linear and what an op leaves pending are facts of the dialect
(dialect/linearity.py, dialect/local_semantics.py). The pass is
`transforms/passes/insert_collectives.py`."""
