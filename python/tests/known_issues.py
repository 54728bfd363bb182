"""Known defects of the hloi module that tests meet, each as a pytest
xfail mark restricted to the exception the defect raises (so any other
failure still fails) and not strict (a fixed defect passes). Remove an
entry when its defect is fixed."""
import pytest

import hloi
import hloi.testing as ht

# A zero-element input (f32[0,3]) raises MemoryLimitError "argument: out
# of memory" instead of running.
ZERO_SIZE = pytest.mark.xfail(
    raises=hloi.MemoryLimitError, strict=False,
    reason="a zero-element input raises MemoryLimitError ('argument: out of memory')")

# A result holding a token (after an outfeed, an async chain) raises
# UnsupportedError "a result of type token has no array value": such
# modules cannot be run from Python at all, where the command prints them.
TOKEN = pytest.mark.xfail(
    raises=hloi.UnsupportedError, strict=False,
    reason="a token in the result raises UnsupportedError (the command prints `token`; None would do)")

# An HloSnapshot carries its arguments; `hloi run` uses them when given no
# inputs, Module.run() with no arguments refuses (the module takes N).
SNAPSHOT_ARGS = pytest.mark.xfail(
    raises=TypeError, strict=False,
    reason="Module.run() does not use an HloSnapshot's own arguments as `hloi run` does")


def _leaves(v):
    if isinstance(v, (tuple, list)):
        for x in v:
            yield from _leaves(x)
    else:
        yield v


def golden_marks(case):
    """The known-issue marks of a golden case (hloi.testing.GoldenCase)."""
    marks = []
    want = [x for x in _leaves(ht.load_golden(case.golden_path, raw=True))]
    given = []
    if case.inputs_path:
        for x in ht.load_inputs(case.inputs_path, raw=True):
            given += list(_leaves(x))
    try:
        params = hloi.load(case.hlo_path).parameters
    except hloi.Error:
        params = []
    if any(x is None for x in want):
        marks.append(TOKEN)
    if any(x is not None and 0 in x.dims for x in given) or any(0 in tuple(p.shape) for p in params):
        marks.append(ZERO_SIZE)
    if case.hlo_path.endswith((".pb", ".pbtxt")) and params and not case.inputs_path and not case.input_files:
        marks.append(SNAPSHOT_ARGS)
    return marks


def golden_params(cases):
    return [pytest.param(c, id=str(c), marks=golden_marks(c)) for c in cases]
