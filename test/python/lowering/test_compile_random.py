"""Random programs (hypothesis) through the whole pipeline — propagation, collective
insertion, explicit StableHLO, PJRT on 2 to 8 CPU devices — against the reference
interpreter: chains of elementwise ops, einsums, reductions, transposes, reshapes, slices
and shard constraints, with random argument layouts and layout rules."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from random_programs import programs

import meshir as mi


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def check_against_the_interpreter(case):
    prog, inputs = case
    exe = mi.compile(prog)
    got = as_tuple(exe(**inputs))
    want = as_tuple(mi.interpret(prog, **inputs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-5)


@settings(max_examples=100, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_on_devices_match_the_interpreter(case):
    """A fixed sample (the same 100 programs every run)."""
    check_against_the_interpreter(case)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_on_devices_match_the_interpreter_fresh_sample(case):
    """400 new programs each run."""
    check_against_the_interpreter(case)
