"""Collective insertion, split in parts: byte costs (`costs`), which uses of a partial value
are linear (`linearity`), the layout-to-layout planner (`reshard_plan`), and the per-op rewrite
(`local_ops`). The pass is `transforms/insert_collectives.py`."""
