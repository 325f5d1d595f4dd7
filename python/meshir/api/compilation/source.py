"""What `mi.compile` and `mi.auto_layout` start from: a clone of the program's module with
the mesh declared, calls inlined, under the program's mixed-precision policy."""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect.attribute_names import MESH
from meshir.dialect import Mesh, MeshIRError, get_context
from meshir.dialect.mesh import declare_mesh, function_mesh, module_meshes
from meshir.dialect.signature import entry_function
from meshir.transforms import Pipeline
from meshir.transforms.passes.inline_calls import InlineCallsPass
from meshir.transforms.passes.shard_update import ShardUpdatePass

from meshir.api import _checks as checks
from meshir.api.programs import precision as policies


def declared_source(program_or_module, mesh, function):
    """(a clone of the program's module with `mesh` declared, under the program's
    mixed-precision policy; the entry's name or None): what `mi.compile`'s pipeline runs on."""
    source = checks.module_of(program_or_module, "the program to compile")
    function = checks.optional_name(function, "function")
    if function is None:  # a program built with a mixed-precision policy computes under it
        source, _ = policies.under_default(source, "the program to compile")
    with get_context():
        return _with_mesh(source.operation.clone(), mesh, function), function


def source_passes(drop_update_sharding: bool = False) -> list:
    """The passes before partitioning: `mtf-inline` (mi.remat's and mi.custom_gradient's calls
    mean something to autodiff only), and with `drop_update_sharding` a step's weight-update
    sharding turned off (what layout="auto" chose when it is cheaper without)."""
    return [InlineCallsPass()] + ([ShardUpdatePass(off=True)] if drop_update_sharding else [])


def prepared_source(program_or_module, mesh, function, drop_update_sharding: bool = False):
    """`declared_source` after `source_passes`: what `mi.auto_layout`'s search and
    `mi.compile`'s partitioning start from."""
    source, function = declared_source(program_or_module, mesh, function)
    Pipeline(source_passes(drop_update_sharding)).apply(source)
    return source, function


def _with_mesh(module, mesh: Mesh | None, function: str | None):
    """The module with `mesh` declared for its entry, or unchanged when it already has one."""
    fn = entry_function(module, function)
    have = function_mesh(fn, module_meshes(module.operation))
    if mesh is None or have is not None:
        if mesh is not None and have is not None and (have.axes != mesh.axes):
            raise MeshIRError(f"compile(mesh={mesh}) differs from the program's mesh {have}")
        return module
    with get_context(), ir.Location.unknown():
        body = module.regions[0].blocks[0]
        declare_mesh(mesh, ip=ir.InsertionPoint.at_block_begin(body))
        fn.attributes[MESH] = ir.FlatSymbolRefAttr.get(mesh.name)
    return module
