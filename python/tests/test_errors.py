"""Errors: their classes, and messages that say what and where, as the
hloi command says them."""
import numpy as np
import pytest

import hloi
from conftest import data_path

MPV = data_path("sources", "matrix_plus_vector.hlo")


def golden_lines(name):
    with open(data_path(*name.split("/")) + ".golden") as f:
        return f.read().splitlines()


def test_classes():
    assert issubclass(hloi.CheckError, hloi.Error) and issubclass(hloi.CheckError, ValueError)
    for e in (hloi.ParseError, hloi.MemoryLimitError, hloi.TimeoutError, hloi.UnsupportedError,
              hloi.InvalidArgumentError, hloi.FileError, hloi.StoppedError):
        assert issubclass(e, hloi.Error)
    assert issubclass(hloi.Error, Exception)
    # the standard exception each one is too
    assert issubclass(hloi.ParseError, ValueError) and issubclass(hloi.FileError, OSError)
    assert issubclass(hloi.MemoryLimitError, MemoryError) and issubclass(hloi.TimeoutError, TimeoutError)
    assert issubclass(hloi.UnsupportedError, NotImplementedError)


def test_check_error_as_the_cli_says_it():
    # the diagnostics of a rejected program: those of its golden, which is
    # what `hloi run` prints (file names there are base names)
    path = data_path("broadcast", "rank_mismatch_hint.hlo")
    m = hloi.load(path)
    with pytest.raises(hloi.CheckError) as e:
        m.check()
    diags = e.value.diagnostics
    assert isinstance(diags, list) and all(isinstance(d, str) for d in diags)
    text = "\n".join(diags) + "\n" + str(e.value)
    want = [line for line in golden_lines("broadcast/rank_mismatch_hint") if ": error: " in line]
    assert want
    for line in want:
        # "NAME.hlo:7:21: error: message" -> ":7:21: error: message"
        assert line[line.index(":"):] in text, "%r not in %r" % (line, text)
    assert "did you mean broadcast_dimensions={1}?" in text
    # a run checks first
    with pytest.raises(hloi.CheckError):
        m.run(np.zeros((4, 3), np.float32), np.zeros(3, np.float32))


def test_parse_error_is_located():
    with pytest.raises(hloi.ParseError) as e:
        hloi.load("HloModule m\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] frobnicate(x)\n}\n")
    msg = str(e.value)
    assert ":4:" in msg and "frobnicate" in msg


def test_python_values_convert():
    # Python sequences and scalars are converted (same-kind casting)
    m = hloi.load(MPV)
    r = m.run([[1, 2, 3], [4, 5, 6]], [7, 8, 9])
    assert r.dtype == np.int32 and r.tolist() == [[8, 10, 12], [11, 13, 15]]


def test_missing_file():
    with pytest.raises(hloi.FileError) as e:
        hloi.load(data_path("no_such_file.hlo"))
    assert "no_such_file.hlo" in str(e.value)


@pytest.mark.parametrize("args,cls,words", [
    ((), TypeError, ["takes 2 arguments", "x", "y", "got 0"]),
    ((np.zeros((2, 3), np.int32),), TypeError, ["takes 2 arguments", "got 1"]),
    ((np.zeros((2, 3), np.int32), np.zeros(3, np.int32), np.zeros(1)), TypeError, ["takes 2 arguments", "got 3"]),
    ((np.zeros((3, 2), np.int32), np.zeros(3, np.int32)), ValueError, ["'x'", "s32[2,3]", "(3, 2)"]),
    ((np.zeros((2, 3), np.int32), np.zeros(4, np.int32)), ValueError, ["'y'", "s32[3]", "(4,)"]),
    ((np.zeros((2, 3), np.float32), np.zeros(3, np.int32)), TypeError, ["'x'", "s32", "float32"]),
    ((np.zeros((2, 3), np.int32), [1.5, 2, 3]), TypeError, ["'y'"]),
])
def test_bad_arguments(args, cls, words):
    m = hloi.load(MPV)
    with pytest.raises(cls) as e:
        m.run(*args)
    msg = str(e.value)
    for w in words:
        assert w in msg, "%r not in %r" % (w, msg)


def test_not_an_array():
    m = hloi.load(MPV)
    with pytest.raises(TypeError):
        m.run(object(), np.zeros(3, np.int32))


def test_memory_limit():
    m = hloi.load("HloModule big\nENTRY main {\n  x = f32[1024,1024] parameter(0)\n"
                  "  ROOT y = f32[1024,1024] add(x, x)\n}\n")
    x = np.ones((1024, 1024), np.float32)
    with pytest.raises(hloi.MemoryLimitError) as e:
        m.run(x, max_memory=1024)
    assert str(e.value)
    # the same module under a budget that suffices
    assert np.array_equal(m.run(x, max_memory=64 << 20), x + x)


def test_unsupported():
    m = hloi.load("HloModule u\nENTRY main {\n  x = f32[2] parameter(0)\n"
                  "  ROOT y = f32[2] custom-call(x), custom_call_target=\"no_such_target_anywhere\"\n}\n")
    with pytest.raises((hloi.UnsupportedError, hloi.CheckError)) as e:
        m.run(np.zeros(2, np.float32))
    assert "no_such_target_anywhere" in str(e.value) + "\n".join(getattr(e.value, "diagnostics", []))


def test_bad_options():
    m = hloi.load(MPV)
    x, y = np.zeros((2, 3), np.int32), np.zeros(3, np.int32)
    with pytest.raises(ValueError, match="engine"):
        m.run(x, y, engine="warp")
    with pytest.raises(ValueError, match="threads"):
        m.run(x, y, threads=-1)
    with pytest.raises(ValueError, match="timeout"):
        m.run(x, y, timeout=-1)
    with pytest.raises(ValueError, match="max_memory"):
        m.run(x, y, max_memory=0)
    with pytest.raises(TypeError):
        m.run(x, y, colour="red")
