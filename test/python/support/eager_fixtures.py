"""Fixtures of the eager tests (test/python/eager/ imports them: a conftest there would shadow
the top conftest for `from conftest import ...`): a count of the programs eager dispatch and
`mi.jit` stage."""
from __future__ import annotations

import pytest

from meshir.api.eager import dispatch, jit


class Compiles:
    """How many one-op programs eager dispatch staged (`eager`) and how many signatures
    `mi.jit` traced (`traced`) since the fixture started: each staging is one compile."""

    def __init__(self):
        self.eager = 0
        self.traced = 0


@pytest.fixture
def compiles(monkeypatch):
    count = Compiles()
    for module, field in ((dispatch, "eager"), (jit, "traced")):
        def counting(*args, _stage=module.stage, _field=field, **kwargs):
            setattr(count, _field, getattr(count, _field) + 1)
            return _stage(*args, **kwargs)

        monkeypatch.setattr(module, "stage", counting)
    return count


@pytest.fixture
def fresh_eager_cache(monkeypatch):
    """An empty EAGER_CACHE for the test (entries counted exactly, whatever ran before)."""
    cache = dispatch.LRU()
    monkeypatch.setattr(dispatch, "EAGER_CACHE", cache)
    return cache
