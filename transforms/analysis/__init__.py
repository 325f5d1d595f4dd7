"""Analyses: what the passes and the reports ask about a program without rewriting it: the
cost model (`cost_model.py`, with the links of `axis_link.py` and the devices of
`device_kinds.py`), memory per device (`memory_estimate.py`) and the layout search
(`layout_search/`, which `mtf-auto-layout` and `mi.auto_layout` run)."""
