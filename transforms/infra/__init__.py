"""The pass infrastructure: what a pass is and how it is found (`registry.py`), the pipeline
text syntax (`pipeline_syntax.py`), the pass manager that runs and verifies (`pass_manager.py`)
and the guards around upstream MLIR passes (`upstream.py`, `upstream_guards.py`). No pass
lives here, and importing it imports none."""
