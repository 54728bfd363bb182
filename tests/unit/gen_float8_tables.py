#!/usr/bin/env python3
"""Generates tests/unit/float8_tables.h: the expected results of converting
every encoding of the small float formats to f32 and back, and of rounding
chosen f32 and f64 values into each format.

An independent oracle: the formats are decoded from their definitions
(exponent and fraction widths, bias, which encodings are NaN and infinity)
with exact rationals, and values are encoded by exact round to nearest,
ties to even, then the format's rule for what it cannot hold. Standard
library only. Run: python3 tests/unit/gen_float8_tables.py > tests/unit/float8_tables.h

The rules, as ml_dtypes (the library XLA's evaluator uses) implements them
without saturation:
- overflow (rounding beyond the largest finite value) gives infinity where
  the format has one, else its NaN (fn, fnuz, e8m0fnu), and for f4e2m1fn
  (no NaN, no infinity) the largest finite value with the input's sign;
- infinity converts like overflow; NaN gives the quiet NaN: IEEE-like
  formats S.1..1.10..0, e4m3fn S.1111.111, fnuz 0x80, e8m0fnu 0xff, and
  f4e2m1fn 0x8 (-0) for +NaN and 0x0 for -NaN (its "NaN" is the encoding of -0);
- -0 and negative underflow give +0 where there is no negative zero (fnuz);
- f8e8m0fnu (unsigned, no zero): zero and negative values give its NaN;
  ties round up (the significand 1 is odd, 2 even); below its smallest
  value 2^-127 ml_dtypes rounds up: x <= 2^-127 gives 2^-127 and
  2^-127 < x < 2^-126 gives 2^-126.
"""
import math
import struct
from fractions import Fraction

# name, total bits, exponent bits, fraction bits, bias, NaN/inf style
FORMATS = [
    ("f8e5m2", 8, 5, 2, 15, "ieee"),
    ("f8e4m3", 8, 4, 3, 7, "ieee"),
    ("f8e4m3fn", 8, 4, 3, 7, "fn"),
    ("f8e4m3b11fnuz", 8, 4, 3, 11, "fnuz"),
    ("f8e3m4", 8, 3, 4, 3, "ieee"),
    ("f8e5m2fnuz", 8, 5, 2, 16, "fnuz"),
    ("f8e4m3fnuz", 8, 4, 3, 8, "fnuz"),
    ("f4e2m1fn", 4, 2, 1, 1, "none"),
    ("f8e8m0fnu", 8, 8, 0, 127, "e8m0"),
]

NAN = "nan"
INF = "inf"


def decode(fmt, v):
    """(sign, value) with value a Fraction, NAN or INF."""
    name, bits, eb, mb, bias, style = fmt
    if style == "e8m0":
        if v == 0xFF:
            return (0, NAN)
        return (0, Fraction(2) ** (v - bias))
    sign = (v >> (bits - 1)) & 1
    mag = v & ((1 << (bits - 1)) - 1)
    e = mag >> mb
    m = mag & ((1 << mb) - 1)
    emax = (1 << eb) - 1
    if style == "ieee" and e == emax:
        return (sign, INF if m == 0 else NAN)
    if style == "fn" and mag == 0x7F:
        return (sign, NAN)
    if style == "fnuz" and v == 0x80:
        return (1, NAN)
    if e == 0:
        val = Fraction(m) * Fraction(2) ** (1 - bias - mb)
    else:
        val = (1 + Fraction(m, 1 << mb)) * Fraction(2) ** (e - bias)
    return (sign, val)


def positive_table(fmt):
    """value -> encoding for the finite values with the sign clear."""
    name, bits, eb, mb, bias, style = fmt
    out = {}
    for v in range(1 << bits):
        s, val = decode(fmt, v)
        if s == 0 and val not in (NAN, INF) and val not in out:
            out[val] = v
    return out


def sign_bit(fmt):
    return 1 << (fmt[1] - 1)


def negate(fmt, enc):
    name, bits, eb, mb, bias, style = fmt
    if style == "e8m0":
        return 0xFF
    if style == "fnuz" and enc & 0x7F == 0:
        return enc
    return enc ^ sign_bit(fmt)


def quiet_nan(fmt):
    name, bits, eb, mb, bias, style = fmt
    if style == "ieee":
        return (((1 << eb) - 1) << mb) | (1 << (mb - 1))
    return {"fn": 0x7F, "fnuz": 0x80, "e8m0": 0xFF, "none": 0x8}[style]


def overflow(fmt):
    name, bits, eb, mb, bias, style = fmt
    if style == "ieee":
        return ((1 << eb) - 1) << mb
    return {"fn": 0x7F, "fnuz": 0x80, "e8m0": 0xFF, "none": 0x7}[style]


def round_even(q):
    n = math.floor(q)
    r = q - n
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2 == 1):
        n += 1
    return n


def encode_positive(fmt, x):
    """x > 0 finite Fraction -> encoding."""
    name, bits, eb, mb, bias, style = fmt
    table = positive_table(fmt)
    vmax = max(table)
    if style == "e8m0" and x < Fraction(2) ** -126:
        return 0x00 if x <= Fraction(2) ** -127 else 0x01
    e = math.floor(math.log2(x))  # refine exactly
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    if style != "e8m0" and e < 1 - bias:
        quantum = Fraction(2) ** (1 - bias - mb)
    else:
        quantum = Fraction(2) ** (e - mb)
    val = round_even(x / quantum) * quantum
    if val > vmax:
        return overflow(fmt)
    return table[val]


def encode(fmt, sign, x):
    """sign 0/1, x a Fraction (>= 0), NAN or INF -> encoding."""
    name, bits, eb, mb, bias, style = fmt
    if x == NAN:
        return negate(fmt, quiet_nan(fmt)) if sign else quiet_nan(fmt)
    if x == INF:
        return negate(fmt, overflow(fmt)) if sign else overflow(fmt)
    if x == 0:
        if style == "e8m0":
            return 0xFF
        return negate(fmt, 0) if sign else 0
    if sign and style == "e8m0":
        return 0xFF
    enc = encode_positive(fmt, x)
    return negate(fmt, enc) if sign else enc


def f32_bits_of(sign, x):
    if x == NAN:
        return 0xFFC00000 if sign else 0x7FC00000
    if x == INF:
        return 0xFF800000 if sign else 0x7F800000
    b = struct.unpack("<I", struct.pack("<f", float(x)))[0]
    assert Fraction(struct.unpack("<f", struct.pack("<I", b))[0]) == x, "not exact in f32"
    return b | (0x80000000 if sign else 0)


def f32_value(b):
    """bits -> (sign, Fraction | NAN | INF)"""
    sign = b >> 31
    if (b & 0x7F800000) == 0x7F800000:
        return (sign, NAN if b & 0x7FFFFF else INF)
    return (sign, Fraction(struct.unpack("<f", struct.pack("<I", b & 0x7FFFFFFF))[0]))


def f32_neighbours(b):
    """the f32 just below and above a positive finite f32 (bits)."""
    return [b - 1, b + 1] if b > 0 else [b + 1]


def rounding_cases(fmt):
    """f32 values between and around the representable values."""
    table = sorted(positive_table(fmt))
    cases = set()
    for a, b in zip(table, table[1:]):
        mid = (a + b) / 2
        mb_ = f32_bits_of(0, mid)
        for c in [mb_] + f32_neighbours(mb_):
            cases.add(c)
        cases.add(f32_bits_of(0, a))
    top = table[-1]
    # beyond the largest value: its half step up and neighbours, and far out
    ulp = table[-1] - table[-2]
    for x in (top + ulp / 2, top + ulp, top * 2, Fraction(1 << 100)):
        if x < Fraction(2) ** 128:
            bb = f32_bits_of(0, x)
            cases.update([bb, bb - 1, bb + 1])
    # below the smallest nonzero value
    small = table[1] if table[0] == 0 else table[0]
    for x in (small / 2, small / 4, small * 3 / 4, Fraction(1, 1 << 140)):
        bb = f32_bits_of(0, x)
        cases.update([bb, bb - 1, bb + 1])
    cases.update([0x00000001, 0x00000000, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7F7FFFFF])
    out = []
    for c in sorted(cases):
        for s in (0, 0x80000000):
            bits = c | s
            sign, val = f32_value(bits)
            out.append((bits, encode(fmt, sign, val)))
    return out


def f64_cases(fmt):
    """double values that round differently from their f32 neighbours."""
    table = sorted(positive_table(fmt))
    out = []
    for a, b in list(zip(table, table[1:]))[:: max(1, len(table) // 24)]:
        mid = (a + b) / 2
        d = float(mid)
        assert Fraction(d) == mid
        for x in (d, math.nextafter(d, math.inf), math.nextafter(d, -math.inf)):
            bits = struct.unpack("<Q", struct.pack("<d", x))[0]
            for s in (0, 1):
                out.append((bits | (s << 63), encode(fmt, s, Fraction(x))))
    return out


def main():
    print("/* Generated by tests/unit/gen_float8_tables.py: do not edit. */")
    print("#include <stdint.h>")
    print()
    print("typedef struct f8_case32 { uint32_t f32; uint8_t enc; } f8_case32;")
    print("typedef struct f8_case64 { uint64_t f64; uint8_t enc; } f8_case64;")
    print()
    for fmt in FORMATS:
        name, bits = fmt[0], fmt[1]
        n = 1 << bits
        dec = [f32_bits_of(*decode(fmt, v)) for v in range(n)]
        back = [encode(fmt, *f32_value(d)) for d in dec]
        print(f"/* {name}: every encoding as f32 bits, and converted back */")
        print(f"static const uint32_t {name}_decode[{n}] = {{")
        for i in range(0, n, 8):
            print("\t" + ", ".join(f"0x{d:08x}" for d in dec[i:i + 8]) + ",")
        print("};")
        print(f"static const uint8_t {name}_back[{n}] = {{")
        for i in range(0, n, 16):
            print("\t" + ", ".join(f"0x{d:02x}" for d in back[i:i + 16]) + ",")
        print("};")
        cases = rounding_cases(fmt)
        print(f"static const f8_case32 {name}_round32[{len(cases)}] = {{")
        for i in range(0, len(cases), 4):
            print("\t" + " ".join(f"{{ 0x{b:08x}, 0x{e:02x} }}," for b, e in cases[i:i + 4]))
        print("};")
        c64 = f64_cases(fmt)
        print(f"static const f8_case64 {name}_round64[{len(c64)}] = {{")
        for i in range(0, len(c64), 3):
            print("\t" + " ".join(f"{{ 0x{b:016x}ull, 0x{e:02x} }}," for b, e in c64[i:i + 3]))
        print("};")
        print()


if __name__ == "__main__":
    main()
