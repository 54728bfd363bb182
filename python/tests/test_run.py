"""Running modules from Python: the quick start, tuples, layouts, zero
copy in and out, out=, the calling overhead's order, and the same answers
as the hloi command."""
import ctypes
import os
import subprocess

import numpy as np
import pytest

import hloi
import hloi.testing as ht
from conftest import SANITIZED, data_path

MPV = data_path("sources", "matrix_plus_vector.hlo")


def mpv_inputs():
    return np.array([[1, 2, 3], [4, 5, 6]], np.int32), np.array([7, 8, 9], np.int32)


def owner_of(a):
    """The object at the end of an array's .base chain."""
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


def capsule_name(obj):
    """The name of a PyCapsule, or None for another object."""
    if type(obj).__name__ != "PyCapsule":
        return None
    get = ctypes.pythonapi.PyCapsule_GetName
    get.restype = ctypes.c_char_p
    get.argtypes = [ctypes.py_object]
    return get(obj).decode()


def assert_hlois(a):
    """The array's memory is a buffer hloi owns (a capsule of its literal)."""
    owner = owner_of(a)
    assert capsule_name(owner) == "hloi.literal", "the array's memory belongs to %r" % (owner,)


def test_quick_start():
    # README's promise: load the sample, run it on NumPy arrays, get an array
    x, y = mpv_inputs()
    r = hloi.load(MPV).run(x, y)
    assert isinstance(r, np.ndarray) and r.dtype == np.int32 and r.shape == (2, 3)
    assert np.array_equal(r, x + y)
    assert np.array_equal(hloi.run(hloi.load(MPV), x, y), x + y)


def test_load_text_and_bytes():
    with open(MPV) as f:
        text = f.read()
    x, y = mpv_inputs()
    for src in (text, text.encode()):
        assert np.array_equal(hloi.load(src).run(x, y), x + y)


def test_tuples():
    m = hloi.load("""HloModule t
ENTRY main {
  x = f32[3] parameter(0)
  y = s32[2] parameter(1)
  s = f32[3] add(x, x)
  e = () tuple()
  inner = (s32[2], f32[3], ()) tuple(y, s, e)
  ROOT t = (f32[3], (s32[2], f32[3], ())) tuple(x, inner)
}
""")
    x = np.array([1.5, -2, 3], np.float32)
    y = np.array([7, -8], np.int32)
    r = m.run(x, y)
    assert isinstance(r, tuple) and len(r) == 2 and isinstance(r[1], tuple) and len(r[1]) == 3
    ht.assert_results_match(r, (x, (y, x + x, ())), bitwise=True)
    assert r[1][2] == ()


def test_tuple_parameter():
    m = hloi.load("""HloModule tp
ENTRY main {
  p = (f32[2], s32[]) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  b = s32[] get-tuple-element(p), index=1
  c = f32[] convert(b)
  cb = f32[2] broadcast(c), dimensions={}
  ROOT r = f32[2] multiply(a, cb)
}
""")
    a = np.array([1.5, -2], np.float32)
    assert np.array_equal(m.run((a, np.int32(3))), a * 3)


@pytest.mark.parametrize("layout", ["{1,0}", "{0,1}", "{0,1:pad(3,5)}", "{1,0:T(2,2)}"])
def test_layouts(layout):
    # the parameter and the result in a layout: the values are logical,
    # whatever the buffer's order
    m = hloi.load("""HloModule l
ENTRY main {
  x = f32[2,3]%s parameter(0)
  one = f32[] constant(1)
  ob = f32[2,3]%s broadcast(one), dimensions={}
  ROOT r = f32[2,3]%s add(x, ob)
}
""" % (layout, layout, layout))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    r = m.run(x)
    assert r.shape == (2, 3) and np.array_equal(r, x + 1)
    # a Fortran-ordered input and a strided view give the same values
    assert np.array_equal(m.run(np.asfortranarray(x)), x + 1)
    big = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert np.array_equal(m.run(big[::2, ::2]), big[::2, ::2] + 1)


def test_column_major_result_is_a_view():
    # a column-major result comes back as a Fortran-ordered view of hloi's
    # buffer (no reordering copy)
    m = hloi.load("""HloModule cm
ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  ROOT r = f32[2,3]{0,1} copy(x)
}
""")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    r = m.run(x)
    assert np.array_equal(r, x)
    assert r.flags.f_contiguous and not r.flags.c_contiguous
    assert_hlois(r)


def test_result_buffer_is_hlois():
    # the result's memory belongs to an hloi object, kept alive by the array
    x, y = mpv_inputs()
    r = hloi.load(MPV).run(x, y)
    assert_hlois(r)
    assert not np.shares_memory(r, x) and not np.shares_memory(r, y)
    # the buffer outlives the module and every other reference
    r2 = r[1:]
    del r
    assert r2.tolist() == [[11, 13, 15]]
    # the elements of a tuple result live in hloi's buffers as well
    m = hloi.load("HloModule t\nENTRY main {\n  x = f32[4] parameter(0)\n  n = f32[4] negate(x)\n"
                  "  ROOT t = (f32[4], f32[4]) tuple(x, n)\n}\n")
    a, b = m.run(np.ones(4, np.float32))
    for e in (a, b):
        assert_hlois(e)
    assert np.array_equal(b, -np.ones(4))


def _peak_rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return None


@pytest.mark.skipif(SANITIZED, reason="ASan's shadow memory and quarantine change the peak")
def test_contiguous_input_is_not_copied():
    # A 256 MiB contiguous input to a program that reads one element of
    # it: the peak resident size grows by far less than a copy would add.
    # (Resetting the peak needs /proc/self/clear_refs.)
    m = hloi.load("HloModule s\nENTRY main {\n  x = f32[64,1048576] parameter(0)\n"
                  "  ROOT r = f32[1,1] slice(x), slice={[5:6], [7:8]}\n}\n")
    x = np.ones((64, 1048576), np.float32)
    x[5, 7] = 42
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pytest.skip("cannot reset the peak resident size (/proc/self/clear_refs)")
    before = _peak_rss()
    r = m.run(x)
    grown = _peak_rss() - before
    assert r.tolist() == [[42.0]]
    assert grown < 64 << 20, "the run's peak grew by %d MiB: the input was copied" % (grown >> 20)
    # a non-contiguous input is gathered first, and still gives the values
    y = np.ones((64, 2 * 1048576), np.float32)[:, ::2]
    y[5, 7] = 7
    assert m.run(y).tolist() == [[7.0]]


def test_input_is_not_written():
    # a module whose result aliases its parameter computes into a copy: the
    # caller's array keeps its values
    m = hloi.load(data_path("alias", "add_inplace_allowed.hlo"))
    args = ht.load_inputs(data_path("alias", "add_inplace_allowed.inputs"))
    saved = [a.copy() for a in args]
    r = m.run(*args)
    for a, s in zip(args, saved):
        assert np.array_equal(a, s)
    ht.assert_results_match(r, ht.load_golden(data_path("alias", "add_inplace_allowed.golden")), bitwise=True)


def test_out():
    x, y = mpv_inputs()
    m = hloi.load(MPV)
    out = np.full((2, 3), -1, np.int32)
    assert m.run(x, y, out=out) is out
    assert np.array_equal(out, x + y)
    # an out= the run cannot write directly (reversed strides) gets a copy
    big = np.full((2, 3), -1, np.int32)
    view = big[:, ::-1]
    assert m.run(x, y, out=view) is view
    assert np.array_equal(view, x + y) and np.array_equal(big, (x + y)[:, ::-1])


def test_bad_out():
    x, y = mpv_inputs()
    m = hloi.load(MPV)
    for bad, words in ((np.zeros((3, 2), np.int32), "shape"), (np.zeros((2, 3), np.float32), "float32"),
                       ([[0, 0, 0], [0, 0, 0]], "array")):
        with pytest.raises(TypeError, match=words):
            m.run(x, y, out=bad)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_engines_and_threads(engine):
    m = hloi.load("HloModule d\nENTRY main {\n  a = f32[64,32] parameter(0)\n  b = f32[32,16] parameter(1)\n"
                  "  ROOT d = f32[64,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n")
    g = np.random.default_rng(1)
    a, b = g.standard_normal((64, 32), np.float32), g.standard_normal((32, 16), np.float32)
    for threads in (0, 1, 2):
        ht.assert_run_matches(m, (a, b), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5, engine=engine,
                              threads=threads)


def test_module_attributes():
    m = hloi.load(MPV)
    ps = m.parameters
    assert [p.name for p in ps] == ["x", "y"]
    assert [tuple(p.shape) for p in ps] == [(2, 3), (3,)]
    assert [p.hlo_type for p in ps] == ["s32", "s32"]
    assert ps[0].dtype == np.int32 and ps[0].layout == (1, 0)
    assert ps[0].text == "s32[2,3]{1,0}"
    assert "add(" in m.text() and "ENTRY" in m.text()
    assert m.check() is m and m.checked
    assert "add" in m.plan()
    assert isinstance(m.cost(), str) and m.cost()


def test_convert_round_trip(tmp_path):
    m = hloi.load(MPV)
    x, y = mpv_inputs()
    for name in ("m.pb", "m.pbtxt", "m.hlo"):
        p = str(tmp_path / name)
        m.convert(p)
        assert os.path.getsize(p) > 0
        assert np.array_equal(hloi.load(p).run(x, y), x + y)


# --- the same answers as the hloi command ------------------------------------------

GOLDEN = ht.golden_cases(data_path())


@pytest.mark.parametrize("case", GOLDEN, ids=str)
def test_golden(case):
    case.check()


def test_golden_sample_size():
    # enough golden cases run from Python to mean something
    assert len(GOLDEN) >= 200


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_same_bits_as_cli(hloi_cli, tmp_path, engine):
    # random f32 inputs through a few ops, the result as .npy from the
    # command and as an array from Python: the same bits
    prog = tmp_path / "p.hlo"
    prog.write_text("HloModule p\nENTRY main {\n  a = f32[40,30] parameter(0)\n  b = f32[30] parameter(1)\n"
                    "  e = f32[40,30] exponential(a)\n  s = f32[40,30] add(e, b), broadcast_dimensions={1}\n"
                    "  z = f32[] constant(0)\n  r = f32[40] reduce(s, z), dimensions={1}, to_apply=sum\n"
                    "  ROOT t = (f32[40,30], f32[40]) tuple(s, r)\n}\n"
                    "sum {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT a = f32[] add(x, y)\n}\n")
    g = np.random.default_rng(5)
    a, b = g.standard_normal((40, 30), np.float32), g.standard_normal(30, np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    subprocess.run([hloi_cli, "run", str(prog), "--input", str(tmp_path / "a.npy"), "--input",
                    str(tmp_path / "b.npy"), "--engine", engine, "--output", str(tmp_path / "out.npy")],
                   check=True)
    want = (np.load(tmp_path / "out.0.npy"), np.load(tmp_path / "out.1.npy"))
    got = hloi.load(str(prog)).run(a, b, engine=engine)
    ht.assert_results_match(got, want, bitwise=True)


# --- hloi.testing against real runs ------------------------------------------------


def test_assert_run_matches():
    x, y = mpv_inputs()
    r = ht.assert_run_matches(MPV, (x, y), x + y)
    assert np.array_equal(r, x + y)
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1 / 6[\s\S]*\(1, 2\): 15, 16"):
        want = x + y
        want[1, 2] = 16
        ht.assert_run_matches(hloi.load(MPV), (x, y), want, engine="reference")


def test_golden_helpers(tmp_path):
    ht.assert_matches_golden(MPV)
    # the same program against a golden with one value changed
    for ext in (".hlo", ".inputs"):
        (tmp_path / ("m" + ext)).write_text(open(MPV[:-4] + ext).read())
    (tmp_path / "m.golden").write_text("s32[2,3] {\n  { 8, 10, 12 },\n  { 11, 13, 16 }\n}\n")
    with pytest.raises(AssertionError, match=r"bit for bit[\s\S]*Mismatched elements: 1 / 6"):
        ht.assert_matches_golden(str(tmp_path / "m.hlo"))
    # a tolerance does not apply to integers
    with pytest.raises(AssertionError, match=r"s32 values are compared exactly"):
        ht.assert_matches_golden(str(tmp_path / "m.hlo"), atol=1)
    # a float golden one ulp off: within a tolerance, not bit for bit
    (tmp_path / "f.hlo").write_text("HloModule f\nENTRY main {\n  a = f32[] constant(0.1)\n"
                                    "  b = f32[] constant(0.2)\n  ROOT c = f32[] add(a, b)\n}\n")
    (tmp_path / "f.golden").write_text("f32[] 0.3\n")
    ht.assert_matches_golden(str(tmp_path / "f.hlo"))
    (tmp_path / "f.golden").write_text("f32[] 0.300000042\n")
    with pytest.raises(AssertionError, match="bit for bit"):
        ht.assert_matches_golden(str(tmp_path / "f.hlo"))
    ht.assert_matches_golden(str(tmp_path / "f.hlo"), rtol=1e-6)


def test_pin_a_program_with_npy_inputs(hloi_cli, tmp_path):
    # doc/python.md's way to pin an exported program: .npy inputs named on
    # the program's hloi-flags line, the golden written by `hloi run`
    g = np.random.default_rng(9)
    a, b = g.standard_normal((4, 8), np.float32), g.standard_normal((8, 3), np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    prog = tmp_path / "f.hlo"
    prog.write_text("// hloi-flags: --input a.npy --input b.npy\nHloModule f\nENTRY main {\n"
                    "  a = f32[4,8] parameter(0)\n  b = f32[8,3] parameter(1)\n"
                    "  d = f32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                    "  ROOT t = f32[4,3] tanh(d)\n}\n")
    golden = subprocess.run([hloi_cli, "run", str(prog), "--input", str(tmp_path / "a.npy"), "--input",
                             str(tmp_path / "b.npy")], check=True, capture_output=True, text=True).stdout
    (tmp_path / "f.golden").write_text(golden)
    subprocess.run([hloi_cli, "test", "--quiet", str(tmp_path)], check=True, capture_output=True)
    (case,) = ht.golden_cases(str(tmp_path))
    assert case.skip_reason is None and len(case.inputs) == 2
    case.check()
    ht.assert_results_match(case.expected, np.tanh(a.astype(np.float64) @ b), rtol=1e-5, atol=1e-6)


def test_snapshot_arguments():
    # an HloSnapshot carries its arguments: run() with none uses them, as
    # `hloi run` does; given arguments replace them
    m = hloi.load(os.path.join(data_path(), "proto", "snapshot.pb"))
    assert len(m.parameters) == 2
    got = m.run()
    assert got.dtype == np.bool_ and got.tolist() == [True, False, False]
    a, b = (np.array(v, np.int32) for v in ([1, 2, 3], [0, 5, 6]))
    assert m.run(a, a).tolist() == [False, False, False]  # compare LT
    assert m.run(a, b).tolist() == [False, True, True]
