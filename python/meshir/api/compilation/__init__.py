"""Compiling and inspecting: `compile` and its report, `explain`, `propagate`, `layout_table`,
`visualize`, `auto_layout`."""
