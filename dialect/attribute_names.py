"""The names of the attributes the `mtf` dialect puts on functions and their arguments (ops
carry theirs in `ATTRIBUTES`), stated once; docs/ir-reference.md describes each.

On a function:
- `MESH`: the `mtf.mesh` symbol it runs on; `LAYOUT_RULES`: its Mesh-TensorFlow rules
  (`{dim = [axes]}`); `PRECISION`: its mixed-precision policy (api/programs/precision.py);
- `SHARD_UPDATE`: the data-parallel axes `mi.train_step(shard_update=...)` asks
  `mtf-shard-update` to split the update over ("auto" or an array); `UPDATE_SHARDING`: what
  that pass decided per parameter (dialect/update_sharding.py reads it);
- `PROVENANCE`: why each reshard of the function exists (dialect/provenance.py).

On a function's arguments and results: `NAME` (the user's name), `TYPE` (the `!mtf.tensor`
type of an exported StableHLO argument). On a `func.call`: `REMAT` (`mi.remat`) and
`CUSTOM_VJP` (`mi.custom_gradient`'s backward function), the calls `mtf-autodiff`
differentiates specially.
"""
MESH = "mtf.mesh"
LAYOUT_RULES = "mtf.layout_rules"
PRECISION = "mtf.precision"
SHARD_UPDATE = "mtf.shard_update"
UPDATE_SHARDING = "mtf.update_sharding"
PROVENANCE = "mtf.provenance"
NAME = "mtf.name"
TYPE = "mtf.type"
REMAT = "mtf.remat"
CUSTOM_VJP = "mtf.custom_vjp"
