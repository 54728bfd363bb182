"""hloi.testing: its reader of literal text against what the hloi command
prints (every encoding of the small float types, random f32/f64 bit
patterns), golden cases, and the comparison helpers' messages."""
import os
import subprocess

import numpy as np
import pytest

import hloi.testing as ht
from conftest import data_path


def run_cli(cli, tmp_path, program, *inputs):
    """`hloi run` of `program` with .npy inputs; its standard output."""
    hlo = tmp_path / "p.hlo"
    hlo.write_text(program)
    args = [cli, "run", str(hlo)]
    for k, x in enumerate(inputs):
        p = tmp_path / ("in%d.npy" % k)
        np.save(p, x)
        args += ["--input", str(p)]
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


SMALL_FLOATS = ["f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e3m4", "f8e5m2fnuz", "f8e4m3fnuz",
                "f8e8m0fnu"]


@pytest.mark.parametrize("t", SMALL_FLOATS + ["f4e2m1fn", "f16", "bf16"])
def test_every_encoding_reads_back(hloi_cli, tmp_path, t):
    # hloi prints every bit pattern of the type (bitcast from an iota); the
    # reader must give back each pattern, NaN payloads and -0 included.
    n, src = {"f4e2m1fn": (16, "u4"), "f16": (65536, "u16"), "bf16": (65536, "u16")}.get(t, (256, "u8"))
    out = run_cli(hloi_cli, tmp_path, "HloModule m\nENTRY main {\n  i = %s[%d] iota(), iota_dimension=0\n"
                  "  ROOT b = %s[%d] bitcast-convert(i)\n}\n" % (src, n, t, n))
    (lit,) = ht.parse_literals(out, raw=True)
    assert lit.hlo_type == t and lit.dims == (n,)
    assert np.array_equal(lit.bits.astype(np.int64), np.arange(n))


@pytest.mark.parametrize("t,u", [("f32", np.uint32), ("f64", np.uint64)])
def test_random_bit_patterns_read_back(hloi_cli, tmp_path, t, u):
    g = np.random.default_rng(7)
    bits = g.integers(0, np.iinfo(u).max, size=4000, dtype=u, endpoint=True)
    # plenty of NaNs with payloads, infinities, subnormals and zeros
    w = 32 if t == "f32" else 64
    m = 23 if t == "f32" else 52
    e = u(((1 << (w - 1 - m)) - 1) << m)
    bits[:500] |= e
    bits[500:1000] &= np.invert(e)
    bits[1000:1010] = np.array([0, 1 << (w - 1)] * 5, dtype=u)
    out = run_cli(hloi_cli, tmp_path, "HloModule m\nENTRY main {\n  i = u%d[4000] parameter(0)\n"
                  "  ROOT b = %s[4000] bitcast-convert(i)\n}\n" % (w, t), bits)
    (lit,) = ht.parse_literals(out, raw=True)
    assert lit.bits.dtype == u
    assert np.array_equal(lit.bits, bits)


def test_complex_and_integer_types(hloi_cli, tmp_path):
    g = np.random.default_rng(3)
    re_, im = g.standard_normal(50).astype(np.float32), g.standard_normal(50).astype(np.float32)
    k = g.integers(-2**63, 2**63 - 1, size=50, dtype=np.int64)
    out = run_cli(hloi_cli, tmp_path, "HloModule m\nENTRY main {\n  a = f32[50] parameter(0)\n"
                  "  b = f32[50] parameter(1)\n  k = s64[50] parameter(2)\n"
                  "  c = c64[50] complex(a, b)\n  s = s4[50] convert(k)\n"
                  "  lt = pred[50] compare(a, b), direction=LT\n"
                  "  ROOT t = (c64[50], s64[50], s4[50], pred[50]) tuple(c, k, s, lt)\n}\n",
                  re_, im, k)
    (c, kk, s, p), = ht.parse_literals(out, raw=True)
    assert c.bits.dtype == np.complex64 and np.array_equal(c.bits, re_ + 1j * im)
    assert kk.bits.dtype == np.int64 and np.array_equal(kk.bits, k)
    # s4: the low four bits, sign-extended
    want = ((k & 0xf) ^ 8) - 8
    assert s.hlo_type == "s4" and np.array_equal(s.bits.astype(np.int64), want)
    assert p.bits.dtype == np.bool_ and np.array_equal(p.bits, re_ < im)


def test_matrix_plus_vector_golden():
    x, y = ht.load_inputs(data_path("sources", "matrix_plus_vector.inputs"))
    want = ht.load_golden(data_path("sources", "matrix_plus_vector.golden"))
    assert want.dtype == np.int32 and x.dtype == np.int32
    assert np.array_equal(want, x + y)


def test_tuple_shape_prefix_and_layouts():
    (a, (b, c)), d = ht.parse_literals(
        "(f32[2], (s32[], pred[2])) ({1.5, -2}, (7, {1, 0}))\n"
        "s32[2,3]{0,1} { /*i=0*/ { 1, 2, 3 }, { 4, 5, 6 } }")
    assert a.dtype == np.float32 and a.tolist() == [1.5, -2.0]
    assert b.shape == () and int(b) == 7 and c.tolist() == [True, False]
    # a layout in the prefix does not change the (logical) order of values
    assert np.array_equal(d, np.arange(1, 7, dtype=np.int32).reshape(2, 3))


def test_dynamic_sizes_and_tokens():
    a, t, s = ht.parse_literals("f32[<=4](2) {1, 2}\ntoken\npred[] true")
    assert a.shape == (2,) and t is None and s.dtype == np.bool_ and bool(s)


@pytest.mark.parametrize("text,message", [
    ("f32[3] {1, 2}", "t:1:14: dimension 0 has 2 elements, the shape says 3"),
    ("s32[2,2] {{1,2},{3}}", "dimension 1 has 1 elements, the shape says 2"),
    ("s4[1] {8}", "8 is out of range of s4"),
    ("f32[2] {1, x}", "'x' is not a f32 value"),
    ("f8e4m3fn[1] {0.3}", "is not a value of f8e4m3fn"),
    ("f32[2] {...}", "elided"),
    ("\n  banana", "t:2:3: expected a literal"),
])
def test_literal_errors(text, message):
    with pytest.raises(ht.LiteralTextError) as e:
        ht.parse_literals(text, name="t")
    assert message in str(e.value)


def test_golden_of_diagnostics_is_refused():
    with pytest.raises(ht.LiteralTextError, match="a golden of diagnostics"):
        ht.load_golden(data_path("broadcast", "rank_mismatch_hint.golden"))


def test_golden_cases():
    every = ht.golden_cases(data_path(), runnable=False)
    runnable = ht.golden_cases(data_path())
    assert len(runnable) > 200 and len(every) > len(runnable)
    by_name = {os.path.relpath(c.hlo_path, data_path()): c for c in every}
    assert by_name[os.path.join("sources", "matrix_plus_vector.hlo")].skip_reason is None
    assert "diagnostics" in by_name[os.path.join("broadcast", "rank_mismatch_hint.hlo")].skip_reason
    for c in runnable:
        assert c.skip_reason is None
        v = ht.load_golden(c.golden_path, raw=True)
        assert isinstance(v, (ht.Literal, tuple, list)) or v is None


def test_assert_results_match_message():
    want = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = want.copy()
    ht.assert_results_match(got, want)
    got[1, 2] += 0.5
    got[0, 1] = np.nan
    with pytest.raises(AssertionError) as e:
        ht.assert_results_match(got, want, rtol=1e-6)
    msg = str(e.value)
    assert "Mismatched elements: 2 / 6" in msg
    assert "Max absolute difference: 0.5 at index (1, 2)" in msg
    assert "(0, 1): nan, 1.0" in msg
    # within tolerance, and NaN against NaN
    want[0, 1] = np.nan
    ht.assert_results_match(got, want, atol=0.6)
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 6"):
        ht.assert_results_match(got, want, atol=0.6, equal_nan=False)


def test_assert_results_match_bitwise_and_structure():
    ht.assert_results_match(np.float32([0.0]), np.float32([-0.0]))
    with pytest.raises(AssertionError, match="bit for bit"):
        ht.assert_results_match(np.float32([0.0]), np.float32([-0.0]), bitwise=True)
    with pytest.raises(AssertionError, match="shape"):
        ht.assert_results_match(np.zeros(3), np.zeros(4))
    with pytest.raises(AssertionError, match="a tuple of 1 elements, expected 2"):
        ht.assert_results_match((np.zeros(3),), (np.zeros(3), np.zeros(3)))
    with pytest.raises(AssertionError, match="element type s32, expected f32"):
        ht.assert_results_match(np.zeros(3, np.int32), np.zeros(3, np.float32))
    with pytest.raises(AssertionError, match=r"Not equal .*\(result, element 1\)"):
        ht.assert_results_match((np.zeros(2), np.ones(2, np.int64)), (np.zeros(2), np.zeros(2, np.int64)))
