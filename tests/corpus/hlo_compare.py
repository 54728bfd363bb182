"""An independent reader of HLO text, for checking `hloi fmt` against its input.

The corpus test (corpus_test.py) reads a module as written in the source and
as `hloi fmt` printed it, and compares what the two say: the module's header
attributes, its computations, and for every instruction its name, opcode,
operands in order, result shape (with the layout when the source wrote one)
and every attribute. Spelling that carries no meaning is normalised away:
white space, comments, `%` sigils, operand shape prefixes, attribute order,
quoted versus unquoted `backend_config`, the order and separators inside
`metadata={...}` and `frontend_attributes={...}`, and the spelling of numbers
(a float literal compares by the value it rounds to in its element type).

Syntax sugar that XLA's parser expands is matched structurally: a nested
instruction operand `add(f32[] constant(1), x)` or a compact tuple-element
operand `t#1` may be printed as a separate instruction that the operand names,
and a computation written inline in an attribute (`to_apply={...}`) may be
printed as a separate computation.

Only the Python standard library is used; the text facts follow XLA's lexer
and parser (hlo_lexer.cc, hlo_parser.cc).
"""
import json
import math
import re
import struct

# --- tokens ---------------------------------------------------------------------


class HloSyntaxError(Exception):
    def __init__(self, msg, pos=None, text=None):
        if pos is not None and text is not None:
            line = text.count("\n", 0, pos) + 1
            col = pos - (text.rfind("\n", 0, pos) + 1) + 1
            msg = "%d:%d: %s" % (line, col, msg)
        super().__init__(msg)


class Tok:
    __slots__ = ("kind", "text", "pos", "sp", "sigil")

    def __init__(self, kind, text, pos, sp, sigil=False):
        self.kind = kind    # 'word', 'str', 'punct', 'raw', 'eof'
        self.text = text    # a word without its '%'; a string unescaped
        self.pos = pos
        self.sp = sp        # white space or a comment came before it
        self.sigil = sigil  # written with '%'

    def __repr__(self):
        return "%s(%r)" % (self.kind, self.text)


WORD_START = re.compile(r"[A-Za-z0-9_.]")
WORD_CHARS = re.compile(r"[A-Za-z0-9_.\-]*")
NUM_RE = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
INT_RE = re.compile(r"-?\d+$")
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "?": "?",
           "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def unescape(s):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 == len(s):
            out.append(c)
            i += 1
            continue
        d = s[i + 1]
        if d in ESCAPES:
            out.append(ESCAPES[d])
            i += 2
        elif d in "01234567":
            j = i + 1
            while j < len(s) and j < i + 4 and s[j] in "01234567":
                j += 1
            out.append(chr(int(s[i + 1:j], 8)))
            i = j
        elif d == "x":
            j = i + 2
            while j < len(s) and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(chr(int(s[i + 2:j], 16)) if j > i + 2 else "x")
            i = j
        else:
            out.append(d)
            i += 2
    return "".join(out)


TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<two>->|<=)
  | (?P<sigil>%[A-Za-z_](?:[A-Za-z0-9_.]|-(?!>))*)
  | (?P<nan>-?nan\(0x[0-9a-fA-F]+\))
  | (?P<word>-?[A-Za-z0-9_.](?:[A-Za-z0-9_.]|-(?!>)|(?<=\d[eE])\+(?=\d))*)
  | (?P<punct>[=,:*\#+~\[\]{}()?<>!@$&|^;])
""", re.S | re.X)


def tokenize(text):
    """XLA's tokens: words (identifiers and numbers), strings (unescaped),
    punctuation, and an unquoted backend_config dict as one raw token."""
    toks = []
    i, n = 0, len(text)
    sp = True
    match = TOKEN_RE.match
    while i < n:
        if (text[i] == "{" and len(toks) >= 2 and toks[-1].text == "=" and toks[-1].kind == "punct"
                and toks[-2].kind == "word" and toks[-2].text == "backend_config"):
            # an unquoted JSON dict: one token, by counting braces
            depth, j = 0, i
            while j < n:
                c = text[j]
                if c in "\"'":
                    j += 1
                    while j < n and text[j] != c:
                        j += 2 if text[j] == "\\" else 1
                elif c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                raise HloSyntaxError("unterminated backend_config dict", i, text)
            toks.append(Tok("raw", text[i:j + 1], i, sp))
            i = j + 1
            sp = False
            continue
        m = match(text, i)
        if not m:
            c = text[i]
            if text.startswith("/*", i):
                raise HloSyntaxError("unterminated /* comment", i, text)
            if c in "\"'":
                raise HloSyntaxError("unterminated string", i, text)
            raise HloSyntaxError("unexpected character %r" % c, i, text)
        kind = m.lastgroup
        j = m.end()
        if kind in ("ws", "comment"):
            sp = True
        else:
            t = m.group(kind)
            if kind == "str":
                toks.append(Tok("str", unescape(t[1:-1]), i, sp))
            elif kind == "sigil":
                toks.append(Tok("word", t[1:], i, sp, sigil=True))
            elif kind in ("word", "nan"):
                toks.append(Tok("word", t, i, sp))
            else:
                toks.append(Tok("punct", t, i, sp))
            sp = False
        i = j
    toks.append(Tok("eof", "", n, True))
    return toks


# --- the parse tree -----------------------------------------------------------------


TYPES = set(("pred s1 s2 s4 s8 s16 s32 s64 u1 u2 u4 u8 u16 u32 u64 f16 bf16 f32 f64 "
             "f8e5m2 f8e4m3 f8e4m3fn f8e4m3b11fnuz f8e3m4 f8e5m2fnuz f8e4m3fnuz f4e2m1fn "
             "f8e8m0fnu c64 c128 token opaque opaque_type").split())


class Shape:
    """kind 'array' (etype, dims, layout text or None), 'tuple' (elems) or
    'buffer' (elems[0])."""

    def __init__(self, kind, etype=None, dims=(), layout=None, elems=()):
        self.kind, self.etype, self.dims, self.layout, self.elems = kind, etype, tuple(dims), layout, list(elems)

    def __str__(self):
        if self.kind == "tuple":
            return "(" + ", ".join(str(e) for e in self.elems) + ")"
        if self.kind == "buffer":
            return "b(" + str(self.elems[0]) + ")"
        return "%s[%s]%s" % (self.etype, ",".join(self.dims), "{" + self.layout + "}" if self.layout is not None else "")

    def etypes(self):
        if self.kind == "array":
            return [self.etype]
        return [t for e in self.elems for t in e.etypes()]


def shape_diff(src, out):
    """None if `out` says what `src` says (layouts compared where src has one)."""
    if src.kind != out.kind:
        return "%s printed as %s" % (src, out)
    if src.kind == "array":
        et = {"opaque_type": "opaque"}
        if et.get(src.etype, src.etype) != et.get(out.etype, out.etype) or src.dims != out.dims:
            return "%s printed as %s" % (src, out)
        if src.layout is not None and norm_layout(src.layout, src.dims) != norm_layout(out.layout or "", out.dims):
            if not src.dims and not out.layout:
                return "scalar layout dropped: %s printed as %s" % (src, out)
            return "layout of %s printed as %s" % (src, out)
        return None
    if len(src.elems) != len(out.elems):
        return "%s printed as %s" % (src, out)
    for a, b in zip(src.elems, out.elems):
        d = shape_diff(a, b)
        if d:
            return d
    return None


def norm_layout(text, dims):
    # `{}` on a scalar is the same as no layout
    return "" if not dims and text == "" else text


class Operand:
    """kind 'ref' (name, gte indices) or 'nested' (an anonymous Instr)."""

    def __init__(self, kind, name=None, gte=(), instr=None, shape=None):
        self.kind, self.name, self.gte, self.instr, self.shape = kind, name, tuple(gte), instr, shape

    def __str__(self):
        if self.kind == "nested":
            return "%s(...)" % self.instr.opcode
        return self.name + "".join("#%d" % g for g in self.gte)


class Instr:
    def __init__(self, name, shape, opcode, operands, literal, attrs, root, pos):
        self.name, self.shape, self.opcode = name, shape, opcode
        self.operands, self.literal, self.attrs = operands, literal, attrs
        self.root, self.pos = root, pos
        self.nested = False


class Computation:
    def __init__(self, name, entry, instrs, attrs, pos):
        self.name, self.entry, self.instrs, self.attrs, self.pos = name, entry, instrs, attrs, pos

    def root(self):
        for ins in self.instrs:
            if ins.root:
                return ins
        return self.instrs[-1] if self.instrs else None


class Module:
    def __init__(self):
        self.has_header = False
        self.name = None
        self.attrs = {}
        self.stack_frames = None
        self.computations = []

    def entry(self):
        for c in self.computations:
            if c.entry:
                return c
        return self.computations[-1] if self.computations else None


class Value:
    """An attribute value: its tokens, or an inline computation."""

    def __init__(self, toks, comp=None):
        self.toks, self.comp = toks, comp

    def text(self):
        return " ".join(tok_repr(t) for t in self.toks)


def tok_repr(t):
    if t.kind == "str":
        return json.dumps(t.text)
    if t.kind == "raw":
        return t.text
    return t.text


# --- the parser ---------------------------------------------------------------------

OPEN = {"(": ")", "[": "]", "{": "}"}
STACK_FRAME_WORDS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
LITERAL_OPCODES = ("constant", "parameter")


class Parser:
    def __init__(self, text):
        self.text = text
        self.toks = tokenize(text)
        self.last = len(self.toks) - 1
        self.toks += [self.toks[-1]] * 8  # peek past the end sees eof
        self.i = 0
        self.anon = 0

    # helpers
    def peek(self, k=0):
        return self.toks[self.i + k]

    def next(self):
        t = self.toks[self.i]
        if self.i < self.last:
            self.i += 1
        return t

    def is_p(self, s, k=0):
        t = self.peek(k)
        return t.kind == "punct" and t.text == s

    def is_w(self, s=None, k=0):
        t = self.peek(k)
        return t.kind == "word" and (s is None or t.text == s)

    def fail(self, msg, tok=None):
        tok = tok or self.peek()
        raise HloSyntaxError(msg + " (at %r)" % (tok.text[:20],), tok.pos, self.text)

    def expect_p(self, s):
        if not self.is_p(s):
            self.fail("expected '%s'" % s)
        return self.next()

    def expect_word(self, what):
        if not self.is_w():
            self.fail("expected %s" % what)
        return self.next()

    def is_attr_name(self, k=0):
        # an identifier written right against '=' (XLA's attribute-name token)
        return self.is_w(k=k) and self.is_p("=", k + 1) and not self.peek(k + 1).sp

    def balanced(self):
        """The tokens of one balanced group starting at an opening bracket."""
        open_tok = self.next()
        out = [open_tok]
        stack = [OPEN[open_tok.text]]
        while stack:
            t = self.next()
            if t.kind == "eof":
                self.fail("unbalanced '%s'" % open_tok.text, open_tok)
            out.append(t)
            if t.kind == "punct":
                if t.text in OPEN:
                    stack.append(OPEN[t.text])
                elif t.text in ")]}":
                    if t.text != stack[-1]:
                        self.fail("mismatched '%s'" % t.text, t)
                    stack.pop()
        return out

    # module
    def module(self):
        m = Module()
        if self.is_w("HloModule"):
            self.next()
            m.has_header = True
            m.name = self.expect_word("a module name").text
            if self.is_p(":"):
                self.next()
            while self.is_p(","):
                self.next()
                if not self.is_attr_name():
                    self.fail("expected a header attribute")
                name = self.next().text
                self.next()  # '='
                if name in m.attrs:
                    self.fail("repeated header attribute %s" % name)
                m.attrs[name] = Value(self.glued_value())
        if self.is_w() and self.peek().text in STACK_FRAME_WORDS:
            m.stack_frames = self.stack_frames()
        while self.peek().kind != "eof":
            m.computations.append(self.computation())
        if not m.computations:
            self.fail("no computation")
        names = [c.name for c in m.computations]
        if len(set(names)) != len(names):
            self.fail("repeated computation name")
        return m

    def glued_value(self):
        """Header values: units written without white space between them."""
        out = []
        while True:
            t = self.peek()
            if t.kind == "eof" or (out and t.sp) or (t.kind == "punct" and t.text == ","):
                break
            if t.kind == "punct" and t.text in OPEN:
                out += self.balanced()
            else:
                out.append(self.next())
        if not out:
            self.fail("expected a value")
        return out

    def stack_frames(self):
        out = []
        while self.is_w() and self.peek().text in STACK_FRAME_WORDS:
            out.append(self.next())
            while self.peek().kind == "word" and INT_RE.match(self.peek().text):
                out.append(self.next())
                if self.is_p("{"):
                    out += self.balanced()
                else:
                    out.append(self.next())
        return Value(out)

    def computation(self):
        pos = self.peek().pos
        entry = False
        if self.is_w("ENTRY"):
            self.next()
            entry = True
        name = self.expect_word("a computation name").text
        if self.is_p("("):
            self.balanced()
            self.expect_p("->")
            self.shape(allow_layout=True)
        instrs = self.body()
        attrs = {}
        while self.is_p(",") and self.is_attr_name(1):
            self.next()
            an = self.next().text
            self.next()
            attrs[an] = Value(self.glued_value())
        return Computation(name, entry, instrs, attrs, pos)

    def body(self):
        self.expect_p("{")
        instrs = []
        names = set()
        while not self.is_p("}"):
            if self.peek().kind == "eof":
                self.fail("unterminated computation")
            ins = self.instruction()
            if ins.name in names:
                self.fail("repeated instruction name %s" % ins.name)
            names.add(ins.name)
            instrs.append(ins)
        self.next()
        if not instrs:
            self.fail("empty computation")
        if sum(1 for x in instrs if x.root) > 1:
            self.fail("two ROOT instructions")
        return instrs

    def starts_shape(self, k=0):
        t = self.peek(k)
        if t.kind == "punct" and t.text == "(":
            return True
        if t.kind == "word" and t.text in TYPES and self.is_p("[", k + 1):
            return True
        if t.kind == "word" and t.text == "b" and self.is_p("(", k + 1):
            return True
        return False

    def shape(self, allow_layout=True):
        if self.is_p("("):
            self.next()
            elems = []
            if not self.is_p(")"):
                elems.append(self.shape())
                while self.is_p(","):
                    self.next()
                    elems.append(self.shape())
            self.expect_p(")")
            return Shape("tuple", elems=elems)
        t = self.expect_word("a shape")
        if t.text == "b" and self.is_p("("):
            self.next()
            inner = self.shape()
            self.expect_p(")")
            return Shape("buffer", elems=[inner])
        if t.text not in TYPES:
            self.fail("expected an element type", t)
        self.expect_p("[")
        dims = []
        while not self.is_p("]"):
            if self.is_p("<="):
                self.next()
                dims.append("<=" + self.expect_word("a bound").text)
            elif self.is_p("?"):
                self.next()
                dims.append("?")
            else:
                d = self.expect_word("a dimension")
                if not INT_RE.match(d.text):
                    self.fail("expected a dimension", d)
                dims.append(str(int(d.text)))
            if self.is_p(","):
                self.next()
            elif not self.is_p("]"):
                self.fail("expected ',' or ']'")
        self.next()
        layout = None
        # XLA: '{' after a shape starts a layout only before an integer or ':'
        if allow_layout and self.is_p("{") and (
                self.is_p(":", 1) or (self.is_w(k=1) and INT_RE.match(self.peek(1).text))):
            toks = self.balanced()[1:-1]
            layout = "".join(t.text for t in toks)
        return Shape("array", t.text, dims, layout)

    def at_instruction_start(self):
        if self.is_w("ROOT"):
            return True
        return self.is_w() and self.is_p("=", 1) and self.peek(1).sp

    def instruction(self, nested=False):
        pos = self.peek().pos
        root = False
        name = None
        if not nested:
            if self.is_w("ROOT"):
                self.next()
                root = True
            name = self.expect_word("an instruction name").text
            self.expect_p("=")
        shape = None
        if self.starts_shape() and not (self.is_w() and self.is_p("(", 1) and not self.is_w("b")):
            shape = self.shape()
        op = self.expect_word("an opcode")
        opcode = op.text
        if not self.is_p("("):
            self.fail("expected '(' after the opcode")
        literal = None
        operands = []
        if opcode in LITERAL_OPCODES:
            literal = self.balanced()[1:-1]
        else:
            self.expect_p("(")
            if not self.is_p(")"):
                operands.append(self.operand())
                while self.is_p(","):
                    self.next()
                    operands.append(self.operand())
            self.expect_p(")")
        attrs = {}
        if not nested:
            while self.is_p(","):
                self.next()
                if not self.is_attr_name():
                    self.fail("expected an attribute")
                an = self.next().text
                self.next()
                if an in attrs:
                    self.fail("repeated attribute %s" % an)
                attrs[an] = self.attr_value()
        else:
            self.anon += 1
            name = "<nested %d>" % self.anon
        ins = Instr(name, shape, opcode, operands, literal, attrs, root, pos)
        ins.nested = nested
        return ins

    def operand(self):
        shape = None
        if self.starts_shape():
            shape = self.shape()
        if self.is_w() and self.is_p("(", 1):
            ins = self.instruction(nested=True)
            if ins.shape is None:
                ins.shape = shape
            return Operand("nested", instr=ins, shape=shape)
        t = self.expect_word("an operand")
        gte = []
        while self.is_p("#"):
            self.next()
            gte.append(int(self.expect_word("a tuple index").text))
        return Operand("ref", name=t.text, gte=gte, shape=shape)

    def attr_value(self):
        """Tokens up to the next top-level ',' or the next instruction."""
        if self.is_p("{") and self.inline_computation_ahead():
            start = self.i
            try:
                instrs = self.body()
                self.anon += 1
                comp = Computation("<inline %d>" % self.anon, False, instrs, {}, self.toks[start].pos)
                return Value(self.toks[start:self.i], comp)
            except HloSyntaxError:
                self.i = start
        out = []
        while True:
            t = self.peek()
            if t.kind == "eof":
                break
            if t.kind == "punct" and t.text in (",", "}"):
                break
            if out and self.at_instruction_start():
                break
            if t.kind == "punct" and t.text in OPEN:
                out += self.balanced()
            else:
                out.append(self.next())
        if not out:
            self.fail("expected an attribute value")
        return Value(out)

    def inline_computation_ahead(self):
        # `{ name = ...` (a name, then '=' with space) starts an inline body
        k = 1
        if self.is_w("ROOT", k):
            k += 1
        return self.is_w(k=k) and self.is_p("=", k + 1) and self.peek(k + 1).sp


def parse(text):
    p = Parser(text)
    return p.module()


# --- value normalisation --------------------------------------------------------

DICT_ATTRS = ("metadata", "frontend_attributes", "statistics", "origin")


def dict_value(toks):
    """`{k=v k2=v2}` or `{k=v, k2=v2}` as a dict of normalised values."""
    if not toks or toks[0].text != "{" or toks[-1].text != "}":
        return None
    inner = toks[1:-1]
    out = {}
    i = 0
    while i < len(inner):
        t = inner[i]
        if t.kind == "punct" and t.text == ",":
            i += 1
            continue
        if t.kind not in ("word", "str") or i + 1 >= len(inner) or inner[i + 1].text != "=":
            return None
        key = t.text
        j = i + 2
        depth = 0
        val = []
        while j < len(inner):
            u = inner[j]
            if u.kind == "punct" and u.text in OPEN:
                depth += 1
            elif u.kind == "punct" and u.text in ")]}":
                depth -= 1
            if depth == 0 and u.kind == "punct" and u.text == "," and val:
                break
            val.append(u)
            j += 1
            if depth == 0 and j < len(inner) and inner[j].sp and inner[j].kind in ("word", "str") \
                    and j + 1 < len(inner) and inner[j + 1].text == "=" and not inner[j + 1].sp:
                break
        out[key] = norm_tokens(val)
        i = j
    return out


def num_value(text):
    t = text.lower()
    if t in ("inf", "+inf"):
        return math.inf
    if t == "-inf":
        return -math.inf
    if t.startswith("nan") or t.startswith("-nan"):
        return math.nan
    if t in ("true",):
        return 1.0
    if t in ("false",):
        return 0.0
    if INT_RE.match(text):
        return float(int(text))  # `-0` is the integer 0
    if NUM_RE.match(text):
        return float(text)
    return None


def norm_tokens(toks):
    out = []
    for t in toks:
        if t.kind == "word":
            v = None
            if NUM_RE.match(t.text):
                v = num_value(t.text)
            if v is not None and not INT_RE.match(t.text):
                out.append(repr(v))
            elif v is not None:
                out.append(str(int(t.text)))
            else:
                out.append(t.text)
        else:
            out.append(tok_repr(t))
    return " ".join(out)


def json_or_text(s):
    try:
        return ("json", json.loads(s))
    except ValueError:
        return ("text", re.sub(r"\s+", "", s))


WINDOW_DEFAULTS = {"stride": "1", "pad": "0_0", "lhs_dilate": "1", "rhs_dilate": "1", "rhs_reversal": "0"}


def window_key(text):
    """window={size=3x3 stride=1x1 ...} with the fields that hold only their
    default value left out (XLA's printer leaves them out)."""
    body = re.sub(r"\s*=\s*", "=", re.sub(r"\s+", " ", text.strip().strip("{}").strip()))
    fields = {}
    for item in body.split(" "):
        if "=" not in item:
            return None
        k, val = item.split("=", 1)
        fields[k] = val
    for k, d in WINDOW_DEFAULTS.items():
        if k in fields and all(x == d for x in fields[k].split("x")):
            del fields[k]
    return ("window", sorted(fields.items()))


def slice_key(text):
    """slice={[a:b], [c:d:1]}: a stride of 1 may be left out."""
    dims = re.findall(r"\[([^\]]*)\]", text)
    out = []
    for d in dims:
        parts = [x.strip() for x in d.split(":")]
        if len(parts) == 3 and parts[2] == "1":
            parts = parts[:2]
        out.append(tuple(parts))
    return ("slice", out)


def padding_key(text):
    """padding=lo_hi_interior x ...: an all-zero interior may be left out."""
    dims = [d.split("_") for d in re.sub(r"\s+", "", text).split("x")]
    if all(len(d) == 3 and d[2] == "0" for d in dims):
        dims = [d[:2] for d in dims]
    return ("padding", dims)


def value_key(name, v):
    """What an attribute value means, as a comparable object."""
    toks = v.toks
    if name == "window":
        k = window_key(v.text())
        if k is not None:
            return k
    if name == "slice":
        return slice_key(v.text())
    if name == "padding":
        return padding_key(v.text())
    if name == "backend_config" and len(toks) == 1 and toks[0].kind in ("str", "raw"):
        return json_or_text(toks[0].text)
    if name in DICT_ATTRS:
        d = dict_value(toks)
        if d is not None:
            return ("dict", sorted(d.items()))
    return ("tokens", norm_tokens(toks))


# --- literals ---------------------------------------------------------------------

# (mantissa bits, minimum normal exponent) of the float element types
FLOAT_FORMATS = {
    "f16": (10, -14), "bf16": (7, -126), "f32": (23, -126), "c64": (23, -126),
    "f8e5m2": (2, -14), "f8e4m3": (3, -6), "f8e4m3fn": (3, -6), "f8e4m3fnuz": (3, -7),
    "f8e5m2fnuz": (2, -15), "f8e4m3b11fnuz": (3, -10), "f8e3m4": (4, -2),
    "f4e2m1fn": (1, 0), "f8e8m0fnu": (0, -127),
}


def round_to(x, etype):
    """x rounded to the nearest value of the float type (ties to even)."""
    if etype not in FLOAT_FORMATS or x == 0 or math.isinf(x) or math.isnan(x):
        return x
    if etype in ("f32", "c64"):
        try:
            return struct.unpack("f", struct.pack("f", x))[0]
        except OverflowError:
            return math.copysign(math.inf, x)
    mant, emin = FLOAT_FORMATS[etype]
    _, e = math.frexp(x)           # x = m * 2**e, 0.5 <= |m| < 1
    e = max(e, emin + 1)           # subnormals keep the fixed exponent
    scale = math.ldexp(1.0, mant + 1 - e)
    return round(x * scale) / scale


def literal_diff(src_toks, out_toks, etypes):
    """None if the two constant literals hold the same values."""
    def elems(toks):
        return [t for t in toks if not (t.kind == "punct" and t.text == ",")]
    a, b = elems(src_toks), elems(out_toks)
    if len(a) != len(b):
        return "literal %s printed as %s" % (short(norm_tokens(src_toks)), short(norm_tokens(out_toks)))
    float_types = [t for t in etypes if t in FLOAT_FORMATS or t in ("f64", "c128")]
    for x, y in zip(a, b):
        if x.kind == "punct" or y.kind == "punct":
            if x.kind != y.kind or x.text != y.text:
                return "literal %s printed as %s" % (short(norm_tokens(src_toks)), short(norm_tokens(out_toks)))
            continue
        if x.text == y.text:
            continue
        if INT_RE.match(x.text) and INT_RE.match(y.text) and (not float_types or int(x.text) == int(y.text)):
            if int(x.text) != int(y.text):  # integers compare exactly, whatever their size
                return "literal element %s printed as %s" % (x.text, y.text)
            continue
        u, v = num_value(x.text), num_value(y.text)
        if u is None or v is None:
            return "literal element %s printed as %s" % (x.text, y.text)
        if math.isnan(u) and math.isnan(v):
            # the payload, when one is written, must survive
            if ("(" in x.text or "(" in y.text) and x.text.lstrip("-") != y.text.lstrip("-"):
                return "literal element %s printed as %s" % (x.text, y.text)
            if x.text.startswith("-") != y.text.startswith("-"):
                return "literal element %s printed as %s" % (x.text, y.text)
            continue
        if u == v and (u != 0 or math.copysign(1, u) == math.copysign(1, v)):
            continue
        if any(round_to(u, t) == round_to(v, t) for t in float_types) and (
                u != 0 or math.copysign(1, u) == math.copysign(1, v)):
            continue
        return "literal element %s printed as %s" % (x.text, y.text)
    return None


def short(s, n=70):
    s = s.replace("\n", " ")
    return s if len(s) <= n else s[:n - 3] + "..."


# --- comparison -------------------------------------------------------------------


class Mismatch(Exception):
    pass


class Comparator:
    def __init__(self, src, out):
        self.src, self.out = src, out
        self.out_comps = {c.name: c for c in out.computations}
        self.synthetic_comps = set()

    def run(self):
        s, o = self.src, self.out
        if s.has_header:
            if s.name != o.name:
                raise Mismatch("module name %s printed as %s" % (s.name, o.name))
            for k, v in s.attrs.items():
                if k not in o.attrs:
                    raise Mismatch("header attribute %s dropped" % k)
                if value_key(k, v) != value_key(k, o.attrs[k]):
                    raise Mismatch("header attribute %s=%s printed as %s" % (
                        k, short(v.text()), short(o.attrs[k].text())))
            for k in o.attrs:
                if k not in s.attrs and k != "entry_computation_layout":
                    raise Mismatch("header attribute %s printed but not in the source" % k)
        if s.stack_frames is not None:
            if o.stack_frames is None:
                raise Mismatch("stack frames (FileNames ... StackFrames) dropped")
            if norm_tokens(s.stack_frames.toks) != norm_tokens(o.stack_frames.toks):
                raise Mismatch("stack frames (FileNames ... StackFrames) differ")
        elif o.stack_frames is not None:
            raise Mismatch("stack frames printed but not in the source")
        src_entry, out_entry = s.entry(), o.entry()
        if src_entry.name != out_entry.name:
            raise Mismatch("entry computation %s printed as %s" % (src_entry.name, out_entry.name))
        for c in s.computations:
            if c.name not in self.out_comps:
                raise Mismatch("computation %s dropped" % c.name)
            self.computation(c, self.out_comps[c.name])
        order = [c.name for c in o.computations if c.name not in self.synthetic_comps]
        if sorted(order) != sorted(c.name for c in s.computations):
            extra = [n for n in order if n not in {c.name for c in s.computations}]
            raise Mismatch("computation %s printed but not in the source" % extra[0])

    def computation(self, sc, oc):
        where = "computation %s: " % sc.name
        for k, v in sc.attrs.items():
            if k not in oc.attrs:
                raise Mismatch(where + "attribute %s dropped" % k)
            if value_key(k, v) != value_key(k, oc.attrs[k]):
                raise Mismatch(where + "attribute %s=%s printed as %s" % (k, short(v.text()), short(oc.attrs[k].text())))
        for k in oc.attrs:
            if k not in sc.attrs:
                raise Mismatch(where + "attribute %s printed but not in the source" % k)
        out_by_name = {i.name: i for i in oc.instrs}
        synthetic = set()
        for si in sc.instrs:
            oi = out_by_name.get(si.name)
            if oi is None:
                raise Mismatch(where + "instruction %s dropped" % si.name)
            self.instruction(si, oi, out_by_name, synthetic, where)
        explicit = [i.name for i in oc.instrs if i.name not in synthetic]
        src_names = [i.name for i in sc.instrs]
        if explicit != src_names:
            extra = [n for n in explicit if n not in set(src_names)]
            if extra:
                raise Mismatch(where + "instruction %s printed but not in the source" % extra[0])
            raise Mismatch(where + "instructions printed in another order")
        sr, orr = sc.root(), oc.root()
        if sr.name != orr.name:
            raise Mismatch(where + "root %s printed as %s" % (sr.name, orr.name))

    def instruction(self, si, oi, out_by_name, synthetic, where):
        w = where + "instruction %s: " % si.name
        if si.opcode != oi.opcode:
            raise Mismatch(w + "opcode %s printed as %s" % (si.opcode, oi.opcode))
        if si.shape is not None:
            if oi.shape is None:
                raise Mismatch(w + "result shape dropped")
            d = shape_diff(si.shape, oi.shape)
            if d:
                raise Mismatch(w + "result shape: " + d)
        if si.literal is not None:
            if oi.literal is None:
                raise Mismatch(w + "literal dropped")
            if si.opcode == "parameter":
                if norm_tokens(si.literal) != norm_tokens(oi.literal):
                    raise Mismatch(w + "parameter number %s printed as %s" % (
                        norm_tokens(si.literal), norm_tokens(oi.literal)))
            else:
                shape = oi.shape or si.shape
                d = literal_diff(si.literal, oi.literal, shape.etypes() if shape else [])
                if d:
                    raise Mismatch(w + d)
        if len(si.operands) != len(oi.operands):
            raise Mismatch(w + "%d operands printed as %d" % (len(si.operands), len(oi.operands)))
        for k, (so, oo) in enumerate(zip(si.operands, oi.operands)):
            self.operand(so, oo, out_by_name, synthetic, w + "operand %d: " % k)
        for k, v in si.attrs.items():
            if k not in oi.attrs:
                raise Mismatch(w + "attribute %s dropped" % k)
            self.attribute(k, v, oi.attrs[k], w)
        for k in oi.attrs:
            # a nested instruction cannot spell attributes: the printed
            # defaults (broadcast's dimensions={}) are fine there
            if k not in si.attrs and not si.nested:
                raise Mismatch(w + "attribute %s=%s printed but not in the source" % (k, short(oi.attrs[k].text(), 40)))

    def attribute(self, k, sv, ov, w):
        if sv.comp is not None:
            # an inline computation: printed inline too, or as a computation
            if ov.comp is not None:
                self.computation(sv.comp, ov.comp)
                return
            if len(ov.toks) != 1 or ov.toks[0].kind != "word" or ov.toks[0].text not in self.out_comps:
                raise Mismatch(w + "inline computation of %s printed as %s" % (k, short(ov.text())))
            name = ov.toks[0].text
            self.synthetic_comps.add(name)
            self.computation(sv.comp, self.out_comps[name])
            return
        if value_key(k, sv) != value_key(k, ov):
            raise Mismatch(w + "attribute %s=%s printed as %s" % (k, short(sv.text()), short(ov.text())))

    def operand(self, so, oo, out_by_name, synthetic, w):
        if so.kind == "ref" and not so.gte:
            if oo.kind != "ref" or oo.gte or oo.name != so.name:
                raise Mismatch(w + "%s printed as %s" % (so, oo))
            return
        if oo.kind == so.kind and str(so) == str(oo) and so.kind == "ref":
            return
        # sugar: the printed operand names an instruction that spells it out
        if oo.kind != "ref" or oo.gte:
            raise Mismatch(w + "%s printed as %s" % (so, oo))
        target = out_by_name.get(oo.name)
        if target is None:
            raise Mismatch(w + "%s printed as %s, which is not defined" % (so, oo))
        if so.kind == "ref":  # name#i#j: nested get-tuple-element
            idx = so.gte[-1]
            if target.opcode != "get-tuple-element":
                raise Mismatch(w + "%s printed as %s, a %s" % (so, oo, target.opcode))
            got = target.attrs.get("index")
            if got is None or norm_tokens(got.toks) != str(idx):
                raise Mismatch(w + "%s printed as %s with another index" % (so, oo))
            if len(target.operands) != 1:
                raise Mismatch(w + "%s printed as a malformed get-tuple-element" % so)
            inner = Operand("ref", name=so.name, gte=so.gte[:-1])
            synthetic.add(target.name)
            self.operand(inner, target.operands[0], out_by_name, synthetic, w)
            return
        ni = so.instr
        if target.opcode != ni.opcode:
            raise Mismatch(w + "nested %s printed as %s, a %s" % (ni.opcode, oo, target.opcode))
        synthetic.add(target.name)
        saved = ni.name
        ni.name = target.name
        try:
            self.instruction(ni, target, out_by_name, synthetic, w + "nested ")
        finally:
            ni.name = saved


def compare(src_text, out_text):
    """None when the printed module says what the source says, else the
    first difference (a short sentence). Raises HloSyntaxError when either
    text cannot be read. Either text may be given already parsed."""
    src = src_text if isinstance(src_text, Module) else parse(src_text)
    out = out_text if isinstance(out_text, Module) else parse(out_text)
    try:
        Comparator(src, out).run()
    except Mismatch as e:
        return str(e)
    return None
