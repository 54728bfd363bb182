"""Known defects of the hloi module that tests meet, each as a pytest
xfail mark restricted to the exception the defect raises (so any other
failure still fails) and not strict (a fixed defect passes). Remove an
entry when its defect is fixed."""
import numpy as np
import pytest

import hloi
import hloi.testing as ht

# Without ml_dtypes, making an hloi.HloArray (a result of bf16, an f8 or
# f4 type or a sub-byte integer, or hloi.bits) raises "TypeError:
# __array_finalize__() takes exactly one argument (2 given)" with NumPy
# 1.24: the subclass's __array_finalize__ does not take the `obj` argument
# NumPy passes.
HLO_ARRAY = pytest.mark.xfail(
    not hloi.have_ml_dtypes, raises=TypeError, strict=False,
    reason="hloi.HloArray.__array_finalize__ takes no argument; NumPy passes one (TypeError)")

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

# A result with dynamic dimensions (`f32[<=8]` of size 5) comes back at its
# bound (8 elements, the padding values included), not at its size as the
# command prints it.
DYNAMIC = pytest.mark.xfail(
    raises=AssertionError, strict=False,
    reason="a dynamic dimension's result comes back at its bound, not its size")

# Diagnostics of CheckError name the computation and instruction instead of
# `file:line:col` as the command prints them (for programs loaded from
# text, whose positions hloi has).
CHECK_LOCATION = pytest.mark.xfail(
    raises=AssertionError, strict=False,
    reason="CheckError's diagnostics have no line:col (the command's have)")

# A missing file raises InvalidArgumentError, not FileError (an OSError) as
# the module's README says.
MISSING_FILE = pytest.mark.xfail(
    raises=hloi.InvalidArgumentError, strict=False,
    reason="a missing file raises InvalidArgumentError, not FileError")

# An HloSnapshot carries its arguments; `hloi run` uses them when given no
# inputs, Module.run() with no arguments refuses (the module takes N).
SNAPSHOT_ARGS = pytest.mark.xfail(
    raises=TypeError, strict=False,
    reason="Module.run() does not use an HloSnapshot's own arguments as `hloi run` does")

NO_NUMPY_TYPE = {"bf16", "f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e3m4", "f8e5m2fnuz",
                 "f8e4m3fnuz", "f4e2m1fn", "f8e8m0fnu", "s4", "u4", "s2", "u2", "s1", "u1"}


def _leaves(v):
    if isinstance(v, tuple):
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
    types = {x.hlo_type for x in want + given if x is not None} | {p.hlo_type for p in params}
    if types & NO_NUMPY_TYPE:
        marks.append(HLO_ARRAY)
    if any(x is None for x in want):
        marks.append(TOKEN)
    if any(x is not None and ("<=" in x.shape_text or "?" in x.shape_text) for x in want):
        marks.append(DYNAMIC)
    if any(x is not None and 0 in x.dims for x in given) or any(0 in tuple(p.shape) for p in params):
        marks.append(ZERO_SIZE)
    if case.hlo_path.endswith((".pb", ".pbtxt")) and params and not case.inputs_path and not case.input_files:
        marks.append(SNAPSHOT_ARGS)
    return marks


def golden_params(cases):
    return [pytest.param(c, id=str(c), marks=golden_marks(c)) for c in cases]
