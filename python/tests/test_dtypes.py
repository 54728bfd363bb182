"""Every element type in and out: a result of each type has the bits the
hloi command prints for it, and goes back in as an input unchanged."""
import subprocess

import numpy as np
import pytest

import hloi
import hloi.testing as ht

TYPES = ["pred", "s1", "s2", "s4", "s8", "s16", "s32", "s64", "u1", "u2", "u4", "u8", "u16", "u32", "u64",
         "f16", "bf16", "f32", "f64", "f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e3m4",
         "f8e5m2fnuz", "f8e4m3fnuz", "f4e2m1fn", "f8e8m0fnu", "c64", "c128"]

# f32 values that reach every kind of element: zeros of both signs,
# subnormals, large values, infinities, NaN, and integers of many sizes.
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0e38, -3.0e38, 1.0e-40, -1.0e-45, np.inf, -np.inf,
                    np.nan, 65504.0, 448.0, 57344.0, 240.0, 6.0, 127.0, -128.0, 255.0, 32767.0, 1.0e9,
                    -1.0e9, 0.1, 0.0078125], np.float32)
N = 64


def inputs():
    g = np.random.default_rng(11)
    x = (g.standard_normal(N) * np.exp2(g.integers(-20, 20, N))).astype(np.float32)
    x[:len(SPECIAL)] = SPECIAL
    return x


def convert_module(t):
    return ("HloModule c\nENTRY main {\n  p = f32[%d] parameter(0)\n"
            "  ROOT c = %s[%d] convert(p)\n}\n" % (N, t, N))


def identity_module(t, layout=""):
    return ("HloModule i\nENTRY main {\n  p = %s[2,%d]%s parameter(0)\n"
            "  ROOT c = %s[2,%d]%s copy(p)\n}\n" % (t, N // 2, layout, t, N // 2, layout))


@pytest.mark.parametrize("t", TYPES)
def test_same_bits_as_cli(hloi_cli, tmp_path, t):
    x = inputs()
    got = hloi.load(convert_module(t)).run(x)
    assert ht.hlo_type_of(got) == t, "a %s result marked %s (dtype %s)" % (t, ht.hlo_type_of(got), got.dtype)
    assert got.shape == (N,)
    prog = tmp_path / "c.hlo"
    prog.write_text(convert_module(t))
    np.save(tmp_path / "x.npy", x)
    out = subprocess.run([hloi_cli, "run", str(prog), "--input", str(tmp_path / "x.npy")], check=True,
                         capture_output=True, text=True).stdout
    (want,) = ht.parse_literals(out, raw=True)
    assert want.hlo_type == t
    ht.assert_results_match(got, want.array, bitwise=True, what="%s result" % t)


@pytest.mark.parametrize("layout", ["", "{0,1}"])
@pytest.mark.parametrize("t", TYPES)
def test_round_trip(t, layout):
    # a result of type t goes back in as the input of a copy, unchanged
    x = inputs()
    a = hloi.load(convert_module(t)).run(x).reshape(2, N // 2)
    assert ht.hlo_type_of(a) == t
    r = hloi.load(identity_module(t, layout)).run(a)
    assert ht.hlo_type_of(r) == t and r.shape == (2, N // 2)
    assert np.array_equal(ht.as_bits(r), ht.as_bits(a))


@pytest.mark.parametrize("t,dtype", [("pred", np.bool_), ("s8", np.int8), ("s16", np.int16), ("s32", np.int32),
                                     ("s64", np.int64), ("u8", np.uint8), ("u16", np.uint16),
                                     ("u32", np.uint32), ("u64", np.uint64), ("f16", np.float16),
                                     ("f32", np.float32), ("f64", np.float64), ("c64", np.complex64),
                                     ("c128", np.complex128)])
def test_numpy_types(t, dtype):
    # the types NumPy has come back as those dtypes, and NumPy's arrays go in
    g = np.random.default_rng(2)
    a = (g.standard_normal(N) * 1000).astype(dtype) if dtype != np.bool_ else g.random(N) < 0.5
    if np.dtype(dtype).kind == "c":
        a = a + 1j * a[::-1]
    r = hloi.load(identity_module(t)).run(a.reshape(2, N // 2))
    assert r.dtype == np.dtype(dtype)
    assert np.array_equal(ht.as_bits(r), ht.as_bits(a.reshape(2, N // 2)))


def test_scalars():
    m = hloi.load("HloModule s\nENTRY main {\n  a = f64[] parameter(0)\n  b = s32[] parameter(1)\n"
                  "  c = f64[] convert(b)\n  ROOT r = f64[] multiply(a, c)\n}\n")
    r = m.run(np.float64(1.5), np.int32(4))
    assert r.shape == () and r.dtype == np.float64 and float(r) == 6.0
    # 0-d arrays are scalars too
    assert float(m.run(np.array(2.0), np.array(3, np.int32))) == 6.0


def test_zero_sized():
    m = hloi.load("HloModule z\nENTRY main {\n  a = f32[0,3] parameter(0)\n"
                  "  ROOT r = f32[0,3] negate(a)\n}\n")
    r = m.run(np.zeros((0, 3), np.float32))
    assert r.shape == (0, 3) and r.dtype == np.float32
    # an empty array in another order, and one NumPy gives odd strides
    m = hloi.load("HloModule z\nENTRY main {\n  a = f32[3,0]{0,1} parameter(0)\n"
                  "  ROOT r = f32[3,0] negate(a)\n}\n")
    assert m.run(np.zeros((3, 0), np.float32)).shape == (3, 0)
    assert m.run(np.zeros((6, 0), np.float32)[::2]).shape == (3, 0)


def test_token_parameter_and_result():
    # a token parameter takes None; a token in the result comes back as None
    m = hloi.load("HloModule t\nENTRY main {\n  t = token[] parameter(0)\n"
                  "  a = f32[2] parameter(1)\n  n = f32[2] negate(a)\n"
                  "  at = token[] after-all(t)\n  ROOT r = (f32[2], token[]) tuple(n, at)\n}\n")
    r = m.run(None, np.ones(2, np.float32))
    assert isinstance(r, tuple) and r[1] is None
    assert r[0].tolist() == [-1.0, -1.0]
    with pytest.raises(TypeError, match="token; pass None"):
        m.run(np.zeros(()), np.ones(2, np.float32))


@pytest.mark.skipif(hloi.have_ml_dtypes, reason="with ml_dtypes, bf16 comes as ml_dtypes.bfloat16")
def test_bits_are_marked_not_guessed():
    # without ml_dtypes a bf16 value is an HloArray of uint16 marked "bf16";
    # a plain uint16 array is refused, not silently taken as bits
    m = hloi.load(identity_module("bf16"))
    plain = np.arange(N, dtype=np.uint16).reshape(2, N // 2) + 0x3f80
    with pytest.raises(TypeError, match="bf16"):
        m.run(plain)
    r = m.run(hloi.bits(plain, "bf16"))
    assert isinstance(r, hloi.HloArray) and r.hlo_type == "bf16" and r.dtype == np.uint16
    assert np.array_equal(r.view(np.ndarray), plain)
    # the mark survives views and copies
    assert r[1:].hlo_type == "bf16" and r.copy().hlo_type == "bf16"
