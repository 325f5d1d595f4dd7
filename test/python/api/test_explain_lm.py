"""Every collective of the LM training step (examples/lm's `model.train_step`, compiled as
benchmarks/lm_step.py and examples/transformer_lm.py compile it: `batch:x; heads, d_ff,
vocab:y` on the 4x2 mesh) explains itself at a line of the model's source."""
import pathlib
import sys

import pytest

import meshir as mi
from meshir.dialect import get_context
from meshir.dialect.layout_rules import LayoutRules
from meshir.dialect.provenance import RULE
from meshir.transforms import Pipeline
from meshir.transforms.passes.canonicalize import CanonicalizePass
from meshir.transforms.passes.insert_collectives import InsertCollectivesPass
from meshir.transforms.passes.propagate_sharding import PropagateShardingPass

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"
sys.path.insert(0, str(EXAMPLES))

from lm import model  # noqa: E402


@pytest.fixture(scope="module")
def train_step():
    mesh, rules = model.layout("2d")
    return model.train_step(model.Config(), mesh), rules


@pytest.fixture(scope="module")
def compiled(train_step):
    step, rules = train_step
    return mi.compile(step, layout=rules, donate=True)


def test_every_collective_names_a_line_of_the_model_and_the_rule_behind_it(compiled, train_step):
    records = compiled.compile_report.collectives
    assert len(records) > 20
    source = EXAMPLES / "lm"
    for r in records:
        why = r.provenance
        assert why is not None and why.needed_by and why.reason and r.dims, r
        path, line, _ = r.location.rsplit(":", 2)
        assert pathlib.Path(path).parent == source, r.location
        assert pathlib.Path(path).read_text().splitlines()[int(line) - 1].strip(), r.location  # a line of code
        assert why.sources and all(s.rule in train_step[1] for s in why.sources if s.kind == RULE), why


def test_the_table_has_a_row_per_collective_with_its_line_and_an_alternative(compiled):
    explanations = compiled.explain(show=False)
    assert len(explanations) == len(compiled.compile_report.collectives)
    for e in explanations:
        assert "examples/lm/model.py:" in e.row()[4]
        assert "layout rule" in e.row()[5]
    assert all(e.alternative is not None for e in explanations)  # every one comes from a rule


def test_recording_provenance_changes_no_collective(train_step):
    """Canonicalization merges collectives regardless of their provenance: the same plan."""
    step, rules = train_step

    def collectives(explain: bool):
        with get_context():
            module = step.module.operation.clone()
        Pipeline([PropagateShardingPass(rules=LayoutRules.of(rules)), InsertCollectivesPass(explain=explain),
                  CanonicalizePass()]).apply(module)
        return [str(op.operation.name) + str(op.operation.attributes["bytes_per_device"])
                for fn in module.regions[0].blocks[0].operations if fn.operation.name == "func.func"
                for op in fn.regions[0].blocks[0].operations if "bytes_per_device" in op.operation.attributes]

    assert collectives(True) == collectives(False)
