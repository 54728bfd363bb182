"""The core of the package: load, run, arguments and results, errors,
threads, stops. Runs against the package on PYTHONPATH (build/python)."""

import os
import pathlib
import signal
import threading
import time

import numpy as np
import pytest

import hloi

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ROOT / "testdata" / "sources"

ADD = """HloModule add
ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  ROOT r = f32[2,3] add(x, y)
}
"""

NEGATE = """HloModule neg
ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] negate(x)
}
"""

# A loop of n iterations, each a few thousand-element adds: long enough to
# stop.
LOOP = """HloModule loop
cond {
  p = (s32[], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(%d)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[256,256] get-tuple-element(p), index=1
  w = f32[256,256] add(v, v)
  ROOT t = (s32[], f32[256,256]) tuple(j, w)
}
ENTRY main {
  x = f32[256,256] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[256,256]) tuple(z, x)
  w = (s32[], f32[256,256]) while(t), condition=cond, body=body
  ROOT r = f32[256,256] get-tuple-element(w), index=1
}
"""


def test_matrix_plus_vector_from_path():
    m = hloi.load(str(SOURCES / "matrix_plus_vector.hlo"))
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    y = np.array([7, 8, 9], np.int32)
    r = m.run(x, y)
    assert isinstance(r, np.ndarray)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, x + y)
    np.testing.assert_array_equal(hloi.run(m, x, y), x + y)


def test_load_text_bytes_pathlike_and_convert(tmp_path):
    for src in (ADD, ADD.encode(), bytearray(ADD.encode())):
        m = hloi.load(src)
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_array_equal(m.run(a, a), a + a)
    m = hloi.load(ADD)
    text = m.text()
    assert "add(" in text and text.startswith("HloModule add")
    for ext in ("pb", "pbtxt", "hlo"):
        p = tmp_path / ("m." + ext)
        m.convert(p)
        m2 = hloi.load(p)
        a = np.ones((2, 3), np.float32)
        np.testing.assert_array_equal(m2.run(a, a), a + a)
        m3 = hloi.load(p.read_bytes(), format=ext)
        np.testing.assert_array_equal(m3.run(a, a), a + a)


def test_parameters():
    m = hloi.load(SOURCES / "matrix_plus_vector.hlo")
    ps = m.parameters
    assert [p.name for p in ps] == ["x", "y"]
    assert ps[0].shape == (2, 3) and ps[1].shape == (3,)
    assert ps[0].dtype == np.dtype(np.int32)
    assert ps[0].hlo_type == "s32"
    assert ps[0].layout == (1, 0)
    assert ps[0].text == "s32[2,3]{1,0}"
    m = hloi.load(ADD.replace("x = f32[2,3]", "x = f32[2,3]{0,1}"))
    assert m.parameters[0].layout == (0, 1)


def test_result_owns_hloi_buffer_and_input_is_borrowed():
    m = hloi.load(NEGATE)
    x = np.arange(4, dtype=np.float32)
    r = m.run(x)
    np.testing.assert_array_equal(r, -x)
    # the result's memory is hloi's, kept alive by a capsule
    assert r.base is not None and type(r.base).__name__ == "PyCapsule"
    assert r.flags.writeable and r.flags.c_contiguous
    r[0] = 42  # writeable, and the input is untouched
    np.testing.assert_array_equal(x, np.arange(4, dtype=np.float32))


def test_alias_never_writes_a_borrowed_input():
    m = hloi.load(ROOT / "testdata" / "alias" / "add_inplace_allowed.hlo")
    x = np.ones((5, 3, 4, 1), np.float32)
    y = np.arange(3, dtype=np.float32).reshape(3, 1, 1)
    keep = x.copy()
    r = m.run(x, y)
    np.testing.assert_array_equal(r, keep + y)
    np.testing.assert_array_equal(x, keep)
    r2 = m.run(x, y)  # the input is still usable
    np.testing.assert_array_equal(r2, keep + y)


def test_layouts_fortran_and_strided_inputs():
    m = hloi.load(ADD)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = np.asfortranarray(a)
    np.testing.assert_array_equal(m.run(f, a), a + a)
    big = np.arange(24, dtype=np.float32).reshape(4, 6)
    s = big[::2, ::2]  # strided, not dense
    np.testing.assert_array_equal(m.run(s, s), s + s)
    t = np.arange(6, dtype=np.float32).reshape(3, 2).T  # a dense transpose
    np.testing.assert_array_equal(m.run(t, a), t + a)
    # a column-major parameter takes a Fortran array as it is, and a
    # column-major result comes back as a strided view
    cm = hloi.load(ADD.replace("f32[2,3] parameter", "f32[2,3]{0,1} parameter")
                   .replace("ROOT r = f32[2,3]", "ROOT r = f32[2,3]{0,1}"))
    r = cm.run(f, a)
    np.testing.assert_array_equal(r, a + a)
    assert r.flags.f_contiguous and not r.flags.c_contiguous


def test_scalars_buffers_and_casting():
    m = hloi.load("""HloModule s
ENTRY main {
  x = s32[] parameter(0)
  y = s32[3] parameter(1)
  ROOT r = s32[3] add(x, y), broadcast_dimensions={}
}
""")
    r = m.run(5, [1, 2, 3])
    np.testing.assert_array_equal(r, np.array([6, 7, 8], np.int32))
    import array
    r = m.run(np.int32(1), memoryview(array.array("i", [1, 2, 3])))
    np.testing.assert_array_equal(r, np.array([2, 3, 4], np.int32))
    with pytest.raises(TypeError, match="parameter 'x'"):
        m.run(1.5, [1, 2, 3])
    with pytest.raises(OverflowError, match="parameter 'x'"):
        m.run(2**40, [1, 2, 3])
    with pytest.raises(TypeError, match="parameter 'y'"):
        m.run(1, np.array([1, 2, 3], np.int64))
    with pytest.raises(ValueError, match="parameter 'y'"):
        m.run(1, np.array([1, 2], np.int32))
    with pytest.raises(TypeError, match="takes 2 arguments"):
        m.run(1)


def test_tuple_parameters_and_results():
    m = hloi.load("""HloModule t
ENTRY main {
  p = (f32[2], s32[]) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  b = s32[] get-tuple-element(p), index=1
  n = f32[2] negate(a)
  ROOT t = (f32[2], s32[], f32[2]) tuple(n, b, a)
}
""")
    r = m.run((np.array([1, 2], np.float32), np.int32(7)))
    assert isinstance(r, tuple) and len(r) == 3
    np.testing.assert_array_equal(r[0], [-1, -2])
    assert r[1] == 7 and r[1].dtype == np.int32
    np.testing.assert_array_equal(r[2], [1, 2])


@pytest.mark.skipif(hloi.have_ml_dtypes, reason="ml_dtypes gives its own dtypes")
def test_bf16_without_ml_dtypes_is_an_hlo_array():
    m = hloi.load("""HloModule b
ENTRY main {
  x = bf16[3] parameter(0)
  ROOT r = bf16[3] add(x, x)
}
""")
    assert m.parameters[0].dtype == "bf16"
    bits = np.array([0x3F80, 0x4000, 0xC040], np.uint16)  # 1, 2, -3
    with pytest.raises(TypeError, match="bf16"):
        m.run(bits)  # never reinterpreted silently
    r = m.run(hloi.bits(bits, "bf16"))
    assert isinstance(r, hloi.HloArray) and r.hlo_type == "bf16"
    assert r.dtype == np.uint16
    np.testing.assert_array_equal(r.view(np.ndarray), [0x4000, 0x4080, 0xC0C0])  # 2, 4, -6
    assert r[1:].hlo_type == "bf16"  # views keep the type
    s4 = hloi.load("""HloModule s
ENTRY main {
  x = s4[3] parameter(0)
  ROOT r = s4[3] negate(x)
}
""")
    r = s4.run(hloi.bits(np.array([1, 0xFE, 7], np.uint8), "s4"))
    assert r.hlo_type == "s4"
    np.testing.assert_array_equal(r.view(np.int8), [-1, 2, -7])


def test_out_argument():
    m = hloi.load(ADD)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.empty((2, 3), np.float32)
    r = m.run(a, a, out=out)
    assert r is out
    np.testing.assert_array_equal(out, a + a)
    fout = np.empty((2, 3), np.float32, order="F")  # another layout: copied in
    assert m.run(a, a, out=fout) is fout
    np.testing.assert_array_equal(fout, a + a)
    with pytest.raises(TypeError):
        m.run(a, a, out=np.empty((2, 3), np.float64))


def test_check_errors_are_located():
    bad = "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[3] add(x, x)\n}\n"
    m = hloi.load(bad)
    with pytest.raises(hloi.CheckError) as e:
        m.check()
    assert isinstance(e.value, ValueError) and isinstance(e.value, hloi.Error)
    assert e.value.diagnostics and "<text>:4:" in e.value.diagnostics[0]
    assert "error:" in str(e.value)
    with pytest.raises(hloi.CheckError):
        m.run(np.zeros(2, np.float32))
    with pytest.raises(hloi.ParseError) as e:
        hloi.load("HloModule m\nENTRY e {\n  x = f32[2] parmeter(0)\n}\n")
    assert isinstance(e.value, ValueError) and "<text>:3:" in str(e.value)
    with pytest.raises(hloi.FileError):
        hloi.load("/nonexistent/file.hlo")


def test_memory_limit_and_timeout():
    m = hloi.load(ADD)
    a = np.ones((2, 3), np.float32)
    with pytest.raises(hloi.MemoryLimitError) as e:
        m.run(a, a, max_memory=8)
    assert isinstance(e.value, MemoryError)
    loop = hloi.load(LOOP % 10_000_000)
    t0 = time.monotonic()
    with pytest.raises(hloi.TimeoutError) as e:
        loop.run(np.ones((256, 256), np.float32), timeout=0.2, max_memory=1 << 30)
    assert isinstance(e.value, TimeoutError)
    assert time.monotonic() - t0 < 10


def test_sigint_stops_a_run():
    loop = hloi.load(LOOP % 10_000_000)
    x = np.ones((256, 256), np.float32)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        loop.run(x)
    timer.join()
    assert time.monotonic() - t0 < 10
    # Python's handler is back
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_threads_run_one_module_concurrently():
    m = hloi.load(LOOP % 50)
    x = np.random.default_rng(1).standard_normal((256, 256)).astype(np.float32)
    want = m.run(x)
    results = [None] * 8
    errors = []

    def work(i):
        try:
            for _ in range(5):
                results[i] = m.run(x * (i + 1), threads=1)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    for i, r in enumerate(results):
        np.testing.assert_allclose(r, want * (i + 1), rtol=1e-6)


def test_gil_is_released_during_a_run():
    m = hloi.load(LOOP % 20000)
    x = np.ones((256, 256), np.float32)
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    t0 = time.monotonic()
    m.run(x, threads=1)
    t1 = time.monotonic()
    done.set()
    t.join()
    during = [k for k in ticks if t0 < k < t1]
    assert t1 - t0 > 0.05
    assert len(during) >= 5


def test_plan_and_cost():
    m = hloi.load(ADD)
    assert "add" in m.plan()
    assert "add" in m.cost()


ALL_REDUCE = """HloModule ar, replica_count=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY main {
  x = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(x), to_apply=add, replica_groups={{0,1}}
}
"""


def test_participants():
    m = hloi.load(ALL_REDUCE)
    assert m.participants == 2
    a = np.array([1, 2], np.float32)
    b = np.array([10, 20], np.float32)
    rs = m.run([a, b])
    assert isinstance(rs, list) and len(rs) == 2
    for r in rs:
        np.testing.assert_array_equal(r, a + b)
    rs = m.run(a)  # one value for every participant
    np.testing.assert_array_equal(rs[1], a + a)
    with pytest.raises(ValueError, match="participants"):
        m.run([a, b, a])
    m4 = hloi.load(ALL_REDUCE.replace("replica_groups={{0,1}}", "replica_groups={}"))
    rs = m4.run(a, replicas=4)
    assert len(rs) == 4 and m4.participants == 4
    np.testing.assert_array_equal(rs[3], 4 * a)


def test_dynamic_dimensions():
    m = hloi.load("""HloModule d
ENTRY main {
  x = f32[<=4] parameter(0)
  ROOT r = f32[<=4] negate(x)
}
""")
    r = m.run(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(r, [0, -1, -2])
    with pytest.raises(ValueError, match="parameter 'x'"):
        m.run(np.arange(5, dtype=np.float32))
    u = hloi.load("""HloModule u
ENTRY main {
  x = f32[?] parameter(0)
  ROOT r = f32[?] negate(x)
}
""")
    assert u.parameters[0].shape == (-1,) and u.parameters[0].layout == (0,)
    np.testing.assert_array_equal(u.run(np.arange(5, dtype=np.float32)), -np.arange(5))
    np.testing.assert_array_equal(u.run(np.arange(2, dtype=np.float32)), [0, -1])
