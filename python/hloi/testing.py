"""Test helpers for programs run through hloi.

- :func:`assert_run_matches` runs a module and compares its result(s) with
  expected arrays, failing with a NumPy-style message (how many elements
  differ, the worst difference and where).
- :func:`parse_literals` reads literal text as hloi and XLA print it
  (``s32[2,3] {{1,2,3},{4,5,6}}``, tuples, every element type) into NumPy
  arrays, bit for bit (NaN payloads and signed zeros included).
- :func:`load_golden`, :func:`golden_case`, :func:`golden_cases` and
  :func:`assert_matches_golden` read hloi's golden cases (``NAME.hlo`` with
  ``NAME.inputs`` and ``NAME.golden``, the files ``hloi test`` runs) so that
  a pytest suite can pin a program against the answers hloi's golden files
  hold::

      import pytest, hloi.testing as ht

      @pytest.mark.parametrize("case", ht.golden_cases("testdata/sources"), ids=str)
      def test_golden(case):
          case.check()

This module is test tooling: it reads the text hloi prints, it does not
evaluate anything itself. It needs only NumPy and :mod:`hloi`; ``ml_dtypes``
is used when it is importable, as :mod:`hloi` does.
"""
import math
import os
import re
import shlex

import numpy as np

__all__ = [
    "Literal", "LiteralTextError", "GoldenCase", "parse_literals", "load_golden",
    "load_inputs", "golden_case", "golden_cases", "assert_run_matches",
    "assert_results_match", "assert_matches_golden", "hlo_type_of", "as_bits",
]


class LiteralTextError(ValueError):
    """Literal text that cannot be read, with the line and column."""


# --- element types -----------------------------------------------------------

# HLO type -> (storage dtype of the values, bits dtype or None). Integers and
# pred are held as their values (sub-byte ones one per byte, as hloi and
# XLA's literals hold them); float and complex types as bit patterns of the
# bits dtype, viewed as the storage dtype where NumPy has one.
_INT_TYPES = {
    "pred": np.bool_,
    "s1": np.int8, "s2": np.int8, "s4": np.int8, "s8": np.int8,
    "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u1": np.uint8, "u2": np.uint8, "u4": np.uint8, "u8": np.uint8,
    "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
}
_INT_BITS = {"s1": 1, "s2": 2, "s4": 4, "u1": 1, "u2": 2, "u4": 4}

# IEEE-like formats: (bits dtype, exponent bits, mantissa bits, NumPy dtype or None)
_IEEE = {
    "f16": (np.uint16, 5, 10, np.float16),
    "bf16": (np.uint16, 8, 7, None),
    "f32": (np.uint32, 8, 23, np.float32),
    "f64": (np.uint64, 11, 52, np.float64),
}

# The small float formats as hloi's src/core/float8.c describes them:
# (total bits, exponent bits, mantissa bits, bias, signed, has inf,
#  NaN style, printed digits (max_digits10), NaN payload bits).
_F8 = {
    "f8e5m2": (8, 5, 2, 15, True, True, "ieee", 2, 2),
    "f8e4m3": (8, 4, 3, 7, True, True, "ieee", 3, 3),
    "f8e4m3fn": (8, 4, 3, 7, True, False, "fn", 3, 0),
    "f8e4m3b11fnuz": (8, 4, 3, 11, True, False, "fnuz", 3, 0),
    "f8e3m4": (8, 3, 4, 3, True, True, "ieee", 3, 4),
    "f8e5m2fnuz": (8, 5, 2, 16, True, False, "fnuz", 2, 0),
    "f8e4m3fnuz": (8, 4, 3, 8, True, False, "fnuz", 3, 0),
    "f4e2m1fn": (4, 2, 1, 1, True, False, "none", 2, 0),
    "f8e8m0fnu": (8, 8, 0, 127, False, False, "e8m0", 2, 0),
}

# ml_dtypes' names of the types NumPy lacks.
_ML_NAMES = {
    "bf16": "bfloat16", "f8e5m2": "float8_e5m2", "f8e4m3": "float8_e4m3",
    "f8e4m3fn": "float8_e4m3fn", "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "f8e3m4": "float8_e3m4", "f8e5m2fnuz": "float8_e5m2fnuz",
    "f8e4m3fnuz": "float8_e4m3fnuz", "f4e2m1fn": "float4_e2m1fn",
    "f8e8m0fnu": "float8_e8m0fnu", "s4": "int4", "u4": "uint4", "s2": "int2",
    "u2": "uint2",
}

try:  # optional, as in hloi itself
    import ml_dtypes as _ml
except ImportError:  # pragma: no cover - depends on the machine
    _ml = None


def _ml_dtype(t):
    name = _ML_NAMES.get(t)
    if _ml is None or name is None or not hasattr(_ml, name):
        return None
    return np.dtype(getattr(_ml, name))


def _f8_decode(t, code):
    """(value as a float, is NaN, sign) of one encoding of a small float."""
    bits, eb, mb, bias, signed, has_inf, nan, _, _ = _F8[t]
    sign = (code >> (bits - 1)) & 1 if signed else 0
    mag = code & ((1 << (bits - 1)) - 1) if signed else code
    e, m = mag >> mb, mag & ((1 << mb) - 1)
    emax = (1 << eb) - 1
    if nan == "ieee" and e == emax:
        return (float("nan"), True, sign) if m else (-math.inf if sign else math.inf, False, sign)
    if nan == "fn" and e == emax and m == (1 << mb) - 1:
        return float("nan"), True, sign
    if nan == "fnuz" and code == 0x80:
        return float("nan"), True, 1
    if nan == "e8m0" and code == 0xff:
        return float("nan"), True, 0
    if nan == "e8m0":
        return math.ldexp(1.0, e - bias), False, 0
    v = math.ldexp(m, 1 - bias - mb) if e == 0 else math.ldexp((1 << mb) + m, e - bias - mb)
    return (-v if sign else v), False, sign


_F8_TABLES = {}


def _f8_table(t):
    """{printed text: code} and {value: code} of a small float format."""
    if t not in _F8_TABLES:
        bits, digits, pbits = _F8[t][0], _F8[t][7], _F8[t][8]
        by_text, by_value = {}, {}
        for code in range(1 << bits):
            v, is_nan, sign = _f8_decode(t, code)
            if is_nan:
                payload = code & ((1 << pbits) - 1) if pbits else 0
                text = ("-" if sign else "") + "nan"
                if pbits and payload != 1 << (pbits - 1):
                    text += "(0x%x)" % payload
            else:
                text = "%.*g" % (digits, v)
                by_value.setdefault(v if v != 0 or not math.copysign(1, v) < 0 else "-0", code)
            by_text.setdefault(text, code)
        _F8_TABLES[t] = (by_text, by_value)
    return _F8_TABLES[t]


def _ieee_bits(t, text, where):
    """The bit pattern of a float element of type t printed as `text`;
    `where()` locates it for an error."""
    udt, eb, mb, ndt = _IEEE[t]
    m = re.fullmatch(r"([+-]?)nan(?:\(0x([0-9a-fA-F]+)\))?", text)
    if m:
        payload = int(m.group(2), 16) if m.group(2) else 1 << (mb - 1)
        if payload == 0 or payload >> mb:
            raise LiteralTextError("%s: NaN payload %s does not fit %s" % (where(), text, t))
        width = 1 + eb + mb
        return ((1 if m.group(1) == "-" else 0) << (width - 1)) | (((1 << eb) - 1) << mb) | payload
    try:
        v = float(text)
    except ValueError:
        raise LiteralTextError("%s: '%s' is not a %s value" % (where(), text, t)) from None
    if t == "bf16":
        u = int(np.array(v, np.float32).view(np.uint32))
        if (u >> 23) & 0xff == 0xff:
            return u >> 16
        return ((u + 0x7fff + ((u >> 16) & 1)) >> 16) & 0xffff
    return int(np.array(v, ndt).view(udt))


def _f8_code(t, text, where):
    by_text, by_value = _f8_table(t)
    if text in by_text:
        return by_text[text]
    try:
        v = float(text)
    except ValueError:
        v = None
    key = "-0" if v == 0 and math.copysign(1, v) < 0 else v
    if key in by_value:
        return by_value[key]
    raise LiteralTextError("%s: '%s' is not a value of %s" % (where(), text, t))


def _storage(t):
    """(NumPy dtype of the values as parsed, dtype of the bits or None)."""
    if t in _INT_TYPES:
        return np.dtype(_INT_TYPES[t]), None
    if t in _IEEE:
        udt, _, _, ndt = _IEEE[t]
        return np.dtype(ndt if ndt is not None else udt), np.dtype(udt)
    if t in _F8:
        return np.dtype(np.uint8), np.dtype(np.uint8)
    if t == "c64":
        return np.dtype(np.complex64), np.dtype(np.uint32)
    if t == "c128":
        return np.dtype(np.complex128), np.dtype(np.uint64)
    return None, None


def hlo_type_of(array):
    """The HLO element type of an array hloi returned or this module parsed:
    the type hloi marked on it (the arrays of types NumPy lacks), else the
    one its NumPy or ml_dtypes dtype stands for; None if it has none."""
    t = getattr(array, "hlo_type", None)  # hloi.HloArray
    if t is not None:
        return str(t)
    dt = np.asarray(array).dtype
    for name in _ML_NAMES:
        ml = _ml_dtype(name)
        if ml is not None and ml == dt:
            return name
    for name, (udt, _, _, ndt) in _IEEE.items():
        if ndt is not None and dt == np.dtype(ndt):
            return name
    if dt == np.complex64:
        return "c64"
    if dt == np.complex128:
        return "c128"
    if dt == np.bool_:
        return "pred"
    for name in ("s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"):
        if dt == np.dtype(_INT_TYPES[name]):
            return name
    return None


class Literal:
    """A parsed array literal: its HLO type, its shape text and its values.

    ``array`` holds the values in the NumPy dtype hloi returns for the type
    (an ml_dtypes dtype for bf16, the f8 types, s4 ... when ml_dtypes is
    importable; else the raw bits, as unsigned integers, for bf16 and the
    f8 types, and the values for the sub-byte integers). ``bits`` is the
    array of bit patterns of a float or complex type (for exact comparison)
    and the values otherwise."""

    def __init__(self, hlo_type, dims, bits, shape_text):
        self.hlo_type = hlo_type
        self.dims = tuple(dims)
        self.bits = bits
        self.shape_text = shape_text

    @property
    def array(self):
        return _public_array(self.bits, self.hlo_type)

    def __repr__(self):
        return "Literal(%s, %r)" % (self.shape_text, self.array)


def _public_array(bits, t):
    """The array hloi's module returns for values of type t held as `bits`
    (Literal.bits): a NumPy or ml_dtypes array, or for a type without
    either an hloi.HloArray of the unsigned integer of the same width
    (hloi.bits), so that it can be passed to Module.run as it is."""
    ml = _ml_dtype(t)
    if ml is not None:
        if t in _F8 or t == "bf16":
            return bits.view(ml)
        return bits.astype(ml)
    value_dt, bits_dt = _storage(t)
    if t in _F8 or t == "bf16" or t in _INT_BITS:
        u = bits.view(np.uint8) if t in _INT_BITS else bits
        try:
            import hloi
            return hloi.bits(u, t)
        except (ImportError, AttributeError):
            return u if t not in _INT_BITS else bits
    if bits_dt is not None and value_dt != bits_dt:
        return bits.view(value_dt)
    return bits


# --- literal text --------------------------------------------------------------

_TYPE_RE = re.compile(r"(pred|token|opaque|[sufc]\d+|bf16|f8e\w+|f4e\w+)\[")
_WORD_RE = re.compile(r"[A-Za-z0-9_.+\-]+(?:\(0x[0-9a-fA-F]+\))?")


class _Reader:
    def __init__(self, text, name):
        self.text = text
        self.name = name
        self.pos = 0

    def where(self, pos=None):
        pos = self.pos if pos is None else pos
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return "%s:%d:%d" % (self.name, line, col)

    def fail(self, msg, pos=None):
        raise LiteralTextError("%s: %s" % (self.where(pos), msg))

    def skip(self):
        t = self.text
        while self.pos < len(t):
            c = t[self.pos]
            if c in " \t\r\n":
                self.pos += 1
            elif t.startswith("/*", self.pos):
                end = t.find("*/", self.pos + 2)
                if end < 0:
                    self.fail("unterminated comment")
                self.pos = end + 2
            else:
                break

    def peek(self):
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, c):
        if self.peek() != c:
            self.fail("expected '%s'" % c)
        self.pos += 1

    def at_end(self):
        return self.peek() == ""

    def word(self, what):
        self.skip()
        m = _WORD_RE.match(self.text, self.pos)
        if not m:
            self.fail("expected %s" % what)
        self.pos = m.end()
        return m.group(0)

    def literal(self):
        """One literal: an array with its shape prefix, a tuple (its
        elements each with a shape prefix, or a tuple shape before the
        values), a token."""
        self.skip()
        if self.peek() == "(":
            save = self.pos
            try:
                shape = self.shape()
                typed = self.peek() == "("
            except LiteralTextError:
                typed = False
            if typed:
                return self.typed(shape)
            self.pos = save + 1
            elems = []
            while self.peek() != ")":
                if elems:
                    self.expect(",")
                elems.append(self.literal())
            self.pos += 1
            return tuple(elems)
        shape = self.shape()
        return self.typed(shape)

    def shape(self):
        """A shape: ["array", type, dims, text], a tuple of shapes, or None
        (a token)."""
        self.skip()
        start = self.pos
        if self.peek() == "(":
            self.pos += 1
            elems = []
            while self.peek() != ")":
                if elems:
                    self.expect(",")
                elems.append(self.shape())
            self.pos += 1
            return tuple(elems)
        if self.text.startswith("token", self.pos) and not self.text.startswith("token[", self.pos):
            self.pos += 5
            return None
        m = _TYPE_RE.match(self.text, self.pos)
        if not m:
            self.fail("expected a literal (a shape such as f32[2,3], '(' or 'token')")
        t = m.group(1)
        if _storage(t)[0] is None:
            self.fail("literals of type %s have no values" % t)
        self.pos = m.end()
        dims = []
        close = self.text.find("]", self.pos)
        if close < 0:
            self.fail("expected ']'")
        for d in filter(None, self.text[self.pos:close].replace(" ", "").split(",")):
            m2 = re.fullmatch(r"(<=)?(\d+)", d)
            if not m2:
                self.fail("dimension '%s' is not a size" % d)
            dims.append(int(m2.group(2)))
        self.pos = close + 1
        if self.text.startswith("{", self.pos):  # a layout, right after ']'
            depth = 0
            while self.pos < len(self.text):
                c = self.text[self.pos]
                self.pos += 1
                depth += c == "{"
                depth -= c == "}"
                if depth == 0:
                    break
        if self.text.startswith("(", self.pos):  # a dynamic array's sizes
            close = self.text.find(")", self.pos)
            try:
                dims = [int(x) for x in self.text[self.pos + 1:close].split(",") if x.strip()]
            except ValueError:
                self.fail("expected the sizes of a dynamic array")
            self.pos = close + 1
        return ["array", t, dims, self.text[start:self.pos]]

    def typed(self, shape):
        """The values of a literal of a known shape."""
        if isinstance(shape, tuple):
            self.expect("(")
            elems = []
            for i, s in enumerate(shape):
                if i:
                    self.expect(",")
                elems.append(self.typed(s))
            self.expect(")")
            return tuple(elems)
        if shape is None:
            return None
        start = self.pos
        _, t, dims, shape_text = shape
        flat = []
        self.values(t, dims, 0, flat)
        value_dt, bits_dt = _storage(t)
        count = int(np.prod(dims, dtype=np.int64)) if dims else 1
        per = 2 if t in ("c64", "c128") else 1
        if len(flat) != count * per:
            self.fail("%s holds %d values, not %d" % (shape_text, len(flat) // per, count), start)
        if per == 2:
            bits = np.array(flat, dtype=bits_dt).reshape(list(dims) + [2]).view(value_dt).reshape(dims)
        elif bits_dt is not None:
            bits = np.array(flat, dtype=bits_dt).reshape(dims)
        else:
            bits = np.array(flat, dtype=value_dt).reshape(dims)
        return Literal(t, dims, bits, shape_text)

    def values(self, t, dims, depth, flat):
        if depth == len(dims):
            flat.extend(self.element(t))
            return
        if self.peek() == "{" and self.text.startswith("{...}", self.pos):
            self.fail("an elided literal ({...}) has no values")
        self.expect("{")
        n = 0
        while self.peek() != "}":
            if n:
                self.expect(",")
            self.values(t, dims, depth + 1, flat)
            n += 1
        self.pos += 1
        if n != dims[depth]:
            self.fail("dimension %d has %d elements, the shape says %d" % (depth, n, dims[depth]))

    def element(self, t):
        """The stored words of one element (two for a complex one)."""
        if t in ("c64", "c128"):
            self.expect("(")
            re_ = self.word("a real part")
            self.expect(",")
            im = self.word("an imaginary part")
            self.expect(")")
            part = "f32" if t == "c64" else "f64"
            here = self.pos
            return [_ieee_bits(part, re_, lambda: self.where(here)), _ieee_bits(part, im, lambda: self.where(here))]
        if self.peek() == "{":  # a scalar may be written in braces
            self.pos += 1
            v = self.element(t)
            self.expect("}")
            return v
        pos = self.pos
        w = self.word("a %s value" % t)
        if t == "pred":
            if w in ("0", "false"):
                return [False]
            if w in ("1", "true"):
                return [True]
            self.fail("'%s' is not a pred value" % w, pos)
        if t in _INT_TYPES:
            try:
                v = int(w)
            except ValueError:
                self.fail("'%s' is not an integer" % w, pos)
            lo, hi = _int_range(t)
            if not lo <= v <= hi:
                self.fail("%d is out of range of %s" % (v, t), pos)
            return [v]
        if t in _IEEE:
            return [_ieee_bits(t, w, lambda: self.where(pos))]
        return [_f8_code(t, w, lambda: self.where(pos))]


def _int_range(t):
    if t in _INT_BITS:
        n = _INT_BITS[t]
        return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if t[0] == "s" else (0, (1 << n) - 1)
    info = np.iinfo(_INT_TYPES[t])
    return int(info.min), int(info.max)


def _to_values(lit):
    if isinstance(lit, list):
        return [_to_values(x) for x in lit]
    if isinstance(lit, tuple):
        return tuple(_to_values(x) for x in lit)
    if lit is None:
        return None
    return lit.array


def parse_literals(text, name="<text>", raw=False):
    """Reads literal text (one literal after another, as ``hloi run``
    prints results and as ``.inputs`` files hold them) into a list of
    values: a NumPy array per array literal, a tuple per tuple, None for a
    token. With ``raw=True`` the arrays are :class:`Literal` objects (type,
    dims, bit patterns). Raises :class:`LiteralTextError` with the line and
    column of what cannot be read."""
    r = _Reader(text, name)
    out = []
    while not r.at_end():
        lit = r.literal()
        out.append(lit if raw else _to_values(lit))
    return out


# --- golden cases --------------------------------------------------------------

_DIAG_RE = re.compile(r"^[^\s:]+:\d+:\d+: (error|warning|note): ", re.M)
# A run of several participants prints each one's result under a header.
_PARTICIPANT_RE = re.compile(r"^\*\* Replica (\d+), partition (\d+) \*\*\n", re.M)


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def load_golden(path, raw=False):
    """The expected value of a golden file: a NumPy array, or a tuple of
    them for a tuple result (see :func:`parse_literals`); for a run of
    several participants (``** Replica R, partition P **`` headers) a list
    of their values in the file's order, as Module.run returns them. A
    golden that holds diagnostics (the program is rejected) or anything
    else raises :class:`LiteralTextError`."""
    text = _read(path)
    m = _DIAG_RE.search(text)
    if m:
        first = text[m.start():].split("\n", 1)[0]
        raise LiteralTextError("%s: a golden of diagnostics, not of a value: %s" % (path, first))
    name = os.path.basename(path)
    heads = list(_PARTICIPANT_RE.finditer(text))
    if heads and heads[0].start() == 0:
        values = []
        for k, h in enumerate(heads):
            end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
            lits = parse_literals(text[h.end():end], "%s (replica %s, partition %s)" % (name, h.group(1), h.group(2)),
                                  raw=raw)
            if len(lits) != 1:
                raise LiteralTextError("%s: replica %s, partition %s: %d values, not one"
                                       % (path, h.group(1), h.group(2), len(lits)))
            values.append(lits[0])
        return values
    lits = parse_literals(text, name, raw=raw)
    if len(lits) != 1:
        raise LiteralTextError("%s: %d values, not one" % (path, len(lits)))
    return lits[0]


def load_inputs(path, raw=False):
    """The arguments of an ``.inputs`` file, in parameter order."""
    return parse_literals(_read(path), os.path.basename(path), raw=raw)


# hloi-flags a Python run can follow: how each maps to Module.run's keywords
# (None: it changes nothing a Python run returns).
_RUN_FLAGS = {"engine": "engine", "threads": "threads", "max-memory": "max_memory", "replicas": "replicas",
              "partitions": "partitions"}
_NEUTRAL_FLAGS = {"compare", "print"}
# hloi-flags that are Module.check's keywords.
_CHECK_FLAGS = {"strict": "strict", "allow-mixed-precision": "allow_mixed_precision"}


class GoldenCase:
    """A golden case of hloi (``NAME.hlo`` run by ``hloi test``) as a Python
    run: ``hlo_path``, ``golden_path``, ``inputs`` (the arguments, read from
    ``NAME.inputs`` or the case's ``--input`` files), ``run_kwargs`` and
    ``check_kwargs`` (from its ``// hloi-flags:`` line: ``--engine
    --threads --max-memory --replicas --partitions`` for Module.run,
    ``--strict --allow-mixed-precision`` for Module.check) and
    ``skip_reason``: why the case cannot be run from Python as written (a rejected program's golden, another
    command, flags such as ``--random-inputs`` whose values only the command
    line makes), else None."""

    def __init__(self, hlo_path, golden_path=None):
        self.hlo_path = hlo_path
        base = os.path.splitext(hlo_path)[0]
        self.golden_path = golden_path or base + ".golden"
        self.inputs_path = base + ".inputs" if os.path.exists(base + ".inputs") else None
        self.run_kwargs = {}
        self.check_kwargs = {}
        self.input_files = []
        self.skip_reason = None
        self.flags = []
        self._expected = None
        self._read_directives()

    def __str__(self):
        return os.path.relpath(self.hlo_path)

    def __repr__(self):
        return "GoldenCase(%r)" % self.hlo_path

    def _skip(self, why):
        if self.skip_reason is None:
            self.skip_reason = why

    def _read_directives(self):
        lead = "# " if self.hlo_path.endswith(".pbtxt") else "// "
        if self.hlo_path.endswith(".pb"):
            lines = []
        else:
            lines = _read(self.hlo_path).split("\n")
        for line in lines:
            if not line.startswith(lead + "hloi-"):
                break
            d = line[len(lead):]
            if d.startswith("hloi-command:"):
                cmd = d.split(":", 1)[1].strip()
                if cmd != "run":
                    self._skip("runs `hloi %s`, not `hloi run`" % cmd)
            elif d.startswith("hloi-flags:"):
                self.flags += shlex.split(d.split(":", 1)[1])
        words = list(self.flags)
        d = os.path.dirname(self.hlo_path)
        while words:
            w = words.pop(0)
            name, eq, value = w[2:].partition("=")
            if name in _RUN_FLAGS or name in ("input", "inputs"):
                if not eq:
                    value = words.pop(0) if words else ""
                if name == "input":
                    self.input_files.append(os.path.join(d, value))
                elif name == "inputs":
                    self.inputs_path = os.path.join(d, value)
                elif name in ("threads", "replicas", "partitions") or (name == "max-memory" and value.isdigit()):
                    self.run_kwargs[_RUN_FLAGS[name]] = int(value)
                else:
                    self.run_kwargs[_RUN_FLAGS[name]] = value
            elif name in _CHECK_FLAGS and not eq:
                self.check_kwargs[_CHECK_FLAGS[name]] = True
            elif name not in _NEUTRAL_FLAGS:
                self._skip("its flag %s has no Python counterpart here" % w)
                if not eq and words and not words[0].startswith("--"):
                    words.pop(0)
        if not os.path.exists(self.golden_path):
            self._skip("no golden file %s" % self.golden_path)
        elif self.skip_reason is None and _DIAG_RE.search(_read(self.golden_path)):
            self._skip("the golden holds diagnostics (a rejected program)")
        if self.skip_reason is None and not self.input_files and self.inputs_path is None and self._has_parameters():
            self._skip("its parameters have no inputs file")
        if self.skip_reason is None:
            try:
                self._expected = load_golden(self.golden_path, raw=True)
            except LiteralTextError as e:
                self._skip("its golden is not one value (%s)" % e)

    def _has_parameters(self):
        if not self.hlo_path.endswith(".hlo"):
            return False
        m = re.search(r"^ENTRY\b.*?^\}", _read(self.hlo_path), re.M | re.S)
        return bool(m and re.search(r"\bparameter\(", m.group(0)))

    @property
    def inputs(self):
        """The arguments of the run, in parameter order."""
        if self.input_files:
            # --input FILE: a .npy file, or literal text (one literal)
            out = []
            for p in self.input_files:
                if p.endswith(".npy"):
                    out.append(np.load(p, allow_pickle=False))
                else:
                    out.extend(load_inputs(p))
            return out
        if self.inputs_path:
            return load_inputs(self.inputs_path)
        return []

    @property
    def expected(self):
        """The golden's value (a NumPy array or a tuple of them)."""
        if self._expected is None:
            self._expected = load_golden(self.golden_path, raw=True)
        return _to_values(self._expected)

    def check(self, module=None, rtol=None, atol=None, **run_kwargs):
        """Runs the case through hloi's Python module and compares the
        result with the golden: bit for bit (NaN payloads and the sign of
        zero included) unless rtol or atol is given. Skips (pytest.skip)
        a case :attr:`skip_reason` names."""
        if self.skip_reason:
            import pytest
            pytest.skip("%s: %s" % (self, self.skip_reason))
        import hloi
        if module is None:
            module = hloi.load(self.hlo_path)
            if self.check_kwargs:
                module.check(**self.check_kwargs)
        kwargs = dict(self.run_kwargs)
        kwargs.update(run_kwargs)
        self.expected  # noqa: B018 - reads the golden before the run
        if rtol is None and atol is None:
            got = module.run(*self.inputs, **kwargs)
            _assert_tree(got, self._expected, None, None, True, "%s against %s" % (self, self.golden_path))
        else:
            assert_run_matches(module, self.inputs, self.expected, rtol=rtol or 0.0, atol=atol or 0.0,
                               **kwargs)


def golden_case(hlo_path, golden_path=None):
    """The :class:`GoldenCase` of one program file."""
    return GoldenCase(hlo_path, golden_path)


def golden_cases(root, runnable=True):
    """The golden cases (``NAME.hlo``, ``.pb`` or ``.pbtxt`` with
    ``NAME.golden``) below `root`, in
    sorted order, for ``pytest.mark.parametrize``; with ``runnable=True``
    only those a Python run can follow (no :attr:`GoldenCase.skip_reason`)."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            base, ext = os.path.splitext(f)
            if ext in (".hlo", ".pb", ".pbtxt") and os.path.exists(os.path.join(d, base + ".golden")):
                c = GoldenCase(os.path.join(d, f))
                if not runnable or c.skip_reason is None:
                    out.append(c)
    return out


def assert_matches_golden(hlo_path, golden_path=None, module=None, rtol=None, atol=None, **run_kwargs):
    """Runs the program `hlo_path` as ``hloi test`` would (its inputs file,
    its flags) and asserts its result equals the golden (``NAME.golden``
    beside it unless `golden_path` is given): bit for bit unless rtol or
    atol is given."""
    GoldenCase(hlo_path, golden_path).check(module=module, rtol=rtol, atol=atol, **run_kwargs)


# --- comparing results -------------------------------------------------------------

def _float_values(a, t):
    """float64 / complex128 values of an array of type t (decoding the bits
    of a type NumPy lacks)."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if t in _F8 and a.dtype.kind == "u":
        table = np.array([_f8_decode(t, c)[0] for c in range(1 << _F8[t][0])])
        return table[a.astype(np.intp) & ((1 << _F8[t][0]) - 1)]
    if t == "bf16" and a.dtype == np.uint16:
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def _bits_of(a, t):
    a = np.asarray(a)
    _, bits_dt = _storage(t) if t else (None, None)
    if bits_dt is None:
        if t and t in _INT_TYPES and a.dtype.kind not in "biu":
            return a.astype(np.int64)
        if t in _INT_BITS and t[0] == "s" and a.dtype == np.uint8:
            return a.view(np.int8)  # hloi's sub-byte values, sign-extended
        return a
    if t in ("c64", "c128"):
        return np.ascontiguousarray(a).view(bits_dt)  # as_bits gives it its shape
    return np.ascontiguousarray(a).view(bits_dt).reshape(a.shape)


def as_bits(array, hlo_type=None):
    """The bit patterns of an array of a float or complex HLO type (as
    unsigned integers; complex: a trailing axis of two, real first), the
    values of an integer or pred one: what two results must share to be
    the same bit for bit. The type is `hlo_type`, else
    :func:`hlo_type_of`."""
    t = hlo_type or hlo_type_of(array)
    b = _bits_of(array, t)
    if t in ("c64", "c128"):
        b = b.reshape(np.shape(array) + (2,))
    return b


def _fmt_index(i):
    return "(%s)" % ", ".join(str(int(x)) for x in i) if len(i) != 1 else "(%d,)" % int(i[0])


def _assert_leaf(got, want, rtol, atol, bitwise, what, equal_nan=True):
    want_t = want.hlo_type if isinstance(want, Literal) else hlo_type_of(want)
    want_a = want.bits if isinstance(want, Literal) else np.asarray(want)
    got_t = hlo_type_of(got)
    got = np.asarray(got)
    if got.shape != want_a.shape:
        raise AssertionError("%s: shape %s, expected %s" % (what, got.shape, want_a.shape))
    if want_t and got_t and want_t != got_t and not (bitwise is False and {want_t, got_t} <= set(_IEEE)):
        raise AssertionError("%s: element type %s, expected %s" % (what, got_t, want_t))
    t = want_t or got_t
    if bitwise:
        bad = as_bits(got, t) != as_bits(want_a, t)
        if t in ("c64", "c128"):
            bad = bad.any(axis=-1)
        gv, wv = got, (_to_values(want) if isinstance(want, Literal) else want_a)
        kind = "Not equal bit for bit"
    else:
        floaty = t in _IEEE or t in _F8 or t in ("c64", "c128")
        if floaty:
            gv, wv = _float_values(got, got_t or t), _float_values(_public_array(want_a, t) if isinstance(want, Literal) else want_a, t)
            with np.errstate(invalid="ignore", over="ignore"):
                close = np.abs(gv - wv) <= atol + rtol * np.abs(wv)
                close |= gv == wv  # infinities
            if equal_nan:
                close |= np.isnan(gv) & np.isnan(wv)
            bad = ~close
        else:
            gv, wv = _bits_of(got, t), _bits_of(want_a, t)
            bad = gv != wv
        kind = ("Not equal to tolerance rtol=%g, atol=%g" % (rtol, atol) if floaty
                else "Not equal (%s values are compared exactly)" % (t or "integer"))
    bad = np.asarray(bad)
    nbad = int(np.count_nonzero(bad))
    if not nbad:
        return
    n = max(bad.size, 1)
    lines = ["%s (%s)" % (kind, what),
             "Mismatched elements: %d / %d (%.3g%%)" % (nbad, bad.size, 100.0 * nbad / n)]
    gd = np.asarray(gv)
    wd = np.asarray(wv)
    idx = np.argwhere(bad) if bad.ndim else np.zeros((1, 0), dtype=np.intp)
    try:
        gf = _float_values(gd, got_t or t) if gd.dtype.kind not in "fc" else gd
        wf = _float_values(wd, t) if wd.dtype.kind not in "fc" else wd
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            diff = np.abs(gf.astype(np.complex128 if np.iscomplexobj(gf) or np.iscomplexobj(wf) else np.float64)
                          - wf)
            rel = diff / np.abs(wf)
        diff, rel = np.asarray(diff), np.asarray(rel)
        shape = bad.shape
        diffs = np.where(bad & ~np.isnan(diff), diff, -1.0).reshape(-1)
        if (diffs >= 0).any():
            k = np.unravel_index(np.argmax(diffs), shape) if shape else ()
            lines.append("Max absolute difference: %s at index %s" % (diff[k], _fmt_index(k)))
        rels = np.where(bad & np.isfinite(rel), rel, -1.0).reshape(-1)
        if (rels >= 0).any():
            k = np.unravel_index(np.argmax(rels), shape) if shape else ()
            lines.append("Max relative difference: %s at index %s" % (rel[k], _fmt_index(k)))
    except (TypeError, ValueError):
        pass
    lines.append("Mismatches (index: got, expected)%s:" % ("" if nbad <= 10 else ", the first 10"))
    for i in idx[:10]:
        i = tuple(i)
        lines.append(" %s: %s, %s" % (_fmt_index(i), gd[i] if gd.ndim else gd, wd[i] if wd.ndim else wd))
    raise AssertionError("\n".join(lines))


def _assert_tree(got, want, rtol, atol, bitwise, what, equal_nan=True):
    if isinstance(want, list):  # the results of several participants
        if not isinstance(got, list) or len(got) != len(want):
            raise AssertionError("%s: expected a list of %d participants' results, got %s" % (
                what, len(want), "%d" % len(got) if isinstance(got, list) else type(got).__name__))
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_tree(g, w, rtol, atol, bitwise, "%s, participant %d" % (what, i), equal_nan)
        return
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)):
            raise AssertionError("%s: expected a tuple of %d elements, got %s" % (what, len(want), type(got).__name__))
        if len(got) != len(want):
            raise AssertionError("%s: a tuple of %d elements, expected %d" % (what, len(got), len(want)))
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_tree(g, w, rtol, atol, bitwise, "%s, element %d" % (what, i), equal_nan)
        return
    if want is None:
        if got is not None:
            raise AssertionError("%s: expected a token (None), got %r" % (what, got))
        return
    if isinstance(got, (tuple, list)):
        raise AssertionError("%s: expected an array, got a tuple of %d elements" % (what, len(got)))
    _assert_leaf(got, want, rtol, atol, bitwise, what, equal_nan)


def assert_results_match(got, expected, rtol=1e-07, atol=0.0, equal_nan=True, bitwise=False, what="result"):
    """Compares values as :func:`assert_run_matches` does, without running
    anything: `got` and `expected` are arrays or (nested) tuples of them."""
    _assert_tree(got, expected, rtol, atol, bitwise, what, equal_nan)


def assert_run_matches(module, args, expected, rtol=1e-07, atol=0.0, equal_nan=True, bitwise=False,
                       **run_kwargs):
    """Runs ``module.run(*args, **run_kwargs)`` and asserts the result
    matches `expected` (an array, or a tuple of them for a tuple result).

    Float and complex elements match when ``|got - expected| <= atol +
    rtol * |expected|`` (as ``numpy.testing.assert_allclose``; NaN matches
    NaN unless ``equal_nan=False``); integers and pred must be equal;
    ``bitwise=True`` asks for the same bits (the sign of zero, NaN
    payloads). bf16 and the f8 types compare by their values whether they
    come as ml_dtypes arrays or as marked bit patterns. On a mismatch the
    AssertionError says how many elements differ, the largest absolute and
    relative difference and where, and the first mismatching elements.
    `module` is an :class:`hloi.Module` or a path or text
    :func:`hloi.load` reads. Returns the result."""
    if not hasattr(module, "run"):
        import hloi
        module = hloi.load(module)
    got = module.run(*args, **run_kwargs)
    _assert_tree(got, expected, rtol, atol, bitwise, "result", equal_nan)
    return got
