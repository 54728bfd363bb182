#!/usr/bin/env python3
"""The corpus test: hloi against real HLO modules (testdata/corpus/).

usage: corpus_test.py HLOI CORPUS_DIR [--expected FILE] [--update] [--report]
                      [--jobs N] [--timeout SECONDS] [--max-memory SIZE]
                      [--only SUBSTRING]

Every module (CORPUS_DIR/**/*.hlo.txt) goes through these stages; a stage
runs only when the stages it needs passed:

  parse     `hloi fmt MODULE` succeeds
  stable    `hloi fmt` of that output prints the same text again
  faithful  the printed module says what the source says: the same
            computations, instructions, opcodes, operands, shapes (with
            layouts where the source wrote them) and attributes, compared
            by an independent reader (hlo_compare.py)
  check     `hloi check MODULE` accepts it (needs parse)
  run       `hloi run MODULE --random-inputs --compare` succeeds: the fast
            and reference engines agree (needs check), within a time limit
            and a small memory budget (a stage cut off by the time limit is
            reported as inconclusive, neither a pass nor a failure)

The expectations file lists every module and stage that does not pass, one
line each: `PATH STAGE: REASON` (PATH relative to CORPUS_DIR). The test
fails when a module fails a stage it is not listed for, and when a listed
module now passes that stage (remove the line), so the list stays exact.
--update rewrites the file from this run. --report prints the tables of
failure causes (constructs that do not parse, unsupported opcodes and types).

Exit status: 0 when every result matches the list, 1 otherwise, 77 (skip)
when the Python is too old. Only the standard library is used.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

if sys.version_info < (3, 6):
    print("corpus test: Python 3.6 or newer needed; skipped")
    sys.exit(77)

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlo_compare  # noqa: E402

STAGES = ("parse", "stable", "faithful", "check", "run")
REASON_MAX = 160

HEADER = """\
# Modules of testdata/corpus/ that do not pass a stage of the corpus test
# (tests/corpus/corpus_test.py, ctest `corpus`), one line per module and stage:
#   PATH STAGE: REASON
# Stages: parse (hloi fmt), stable (fmt of fmt's output is the same text),
# faithful (the printed module says what the source says), check (hloi check),
# run (hloi run --random-inputs --compare). A module that now passes a listed
# stage fails the test until its line is removed. Regenerate the whole list:
#   python3 tests/corpus/corpus_test.py build/hloi testdata/corpus --update
"""


# --- running hloi -------------------------------------------------------------------

def first_diagnostic(stderr, path):
    """The first diagnostic line, without the file name."""
    lines = [l for l in stderr.splitlines() if l.strip()]
    for l in lines:
        if "error:" in l or l.startswith("hloi") or "ERROR" in l or "Sanitizer" in l:
            return clean(l, path)
    return clean(lines[0], path) if lines else ""


def clean(line, path):
    line = line.replace(path + ":", "").replace(path, "MODULE").strip()
    line = re.sub(r"^/\S+:", "", line)  # a temporary file's name
    if len(line) > REASON_MAX:
        line = line[:REASON_MAX - 3] + "..."
    return line


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def failure(rc, err, path, timeout):
    if rc is None:
        return "timed out after %g s" % timeout
    if rc < 0:
        return "crashed with signal %d: %s" % (-rc, first_diagnostic(err, path))
    d = first_diagnostic(err, path)
    return d if d else "exit code %d with no diagnostic" % rc


class Result:
    def __init__(self, rel):
        self.rel = rel
        self.passed = set()
        self.failed = {}       # stage -> reason
        self.timed_out = set()  # stages cut off by the time limit
        self.unsupported_ops = set()
        self.unsupported_types = set()
        self.parse_cause = None
        self.check_causes = set()
        self.opcodes = set()   # what the module uses, read by hlo_compare
        self.etypes = set()


def uses(m):
    """The opcodes and element types a parsed module uses."""
    ops, types = set(), set()
    if m is None:
        return ops, types

    def shape_types(sh):
        if sh is not None:
            types.update(sh.etypes())

    def walk(ins):
        ops.add(ins.opcode)
        shape_types(ins.shape)
        for o in ins.operands:
            shape_types(o.shape)
            if o.kind == "nested":
                walk(o.instr)
        for v in ins.attrs.values():
            if v.comp is not None:
                for i in v.comp.instrs:
                    walk(i)
    for c in m.computations:
        for ins in c.instrs:
            walk(ins)
    return ops, types


def entry_root_is_npy(m):
    """Whether the entry's result can be written as one .npy: an array of a
    type that holds data (a token or a tuple is written as literal text)."""
    if m is None:
        return False
    root = m.entry().root()
    return root.shape is None or (root.shape.kind == "array" and root.shape.etype != "token")


# The modules of XLA's own tests (openxla-xla/xla/**/NAME_test-N): XLA runs
# them through HloTestBase, whose verifier allows mixed precision.
XLA_TEST_MODULE = re.compile(r"^openxla-xla/xla/.*_test-\d+\.hlo\.txt$")


def check_flags(rel):
    """hloi's check options for the module at rel (relative to the corpus)."""
    return ["--allow-mixed-precision"] if XLA_TEST_MODULE.match(rel.replace(os.sep, "/")) else []


def test_module(args, path, rel, tmp):
    r = Result(rel)
    with open(path, encoding="utf-8") as f:
        src = f.read()
    try:
        parsed = hlo_compare.parse(src)
        parse_error = None
    except hlo_compare.HloSyntaxError as e:
        parsed, parse_error = None, e
    r.opcodes, r.etypes = uses(parsed)
    color = ["--color", "never"]
    # parse
    rc, out, err = run([args.hloi, "fmt", path] + color, args.timeout)
    if rc != 0 or not out:
        r.failed["parse"] = failure(rc, err, path, args.timeout)
        r.parse_cause = parse_cause(r.failed["parse"], src)
        return r
    r.passed.add("parse")
    # stable
    base = os.path.join(tmp, re.sub(r"[^\w.-]", "_", rel))
    printed = base + ".fmt.hlo"
    with open(printed, "w", encoding="utf-8") as f:
        f.write(out)
    rc2, out2, err2 = run([args.hloi, "fmt", printed] + color, args.timeout)
    if rc2 != 0:
        r.failed["stable"] = "the printed module does not parse: " + failure(rc2, err2, printed, args.timeout)
    elif out2 != out:
        a, b = out.splitlines(), out2.splitlines()
        k = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        r.failed["stable"] = clean("printing it again changes line %d: %s" % (
            k + 1, (b[k] if k < len(b) else "(end of text)").strip()), printed)
    else:
        r.passed.add("stable")
    # faithful
    try:
        if parse_error:
            raise parse_error
        d = hlo_compare.compare(parsed, out)
    except hlo_compare.HloSyntaxError as e:
        d = "the comparator cannot read it: %s" % e
    if d:
        r.failed["faithful"] = clean(d, path)
    else:
        r.passed.add("faithful")
    # check
    rc, out, err = run([args.hloi, "check", path] + check_flags(rel) + color, args.timeout)
    for m in re.finditer(r"unsupported opcode '([^']+)'", err):
        r.unsupported_ops.add(m.group(1))
    for m in re.finditer(r"unsupported element type '([^']+)'", err):
        r.unsupported_types.add(m.group(1))
    if rc != 0 or out.strip() != "ok":
        r.failed["check"] = failure(rc, err, path, args.timeout)
        for l in err.splitlines():
            if "error:" in l and "unsupported opcode" not in l and "unsupported element type" not in l:
                r.check_causes.add(normalise(l.split("error:", 1)[1]))
        return r
    r.passed.add("check")
    # run
    result = base + (".out.npy" if entry_root_is_npy(parsed) else ".out.txt")
    rc, out, err = run([args.hloi, "run", path] + check_flags(rel) + ["--random-inputs", "--compare", "--threads", "1",
                        "--max-memory", args.max_memory, "--output", result] + color, args.timeout)
    if rc != 0:
        r.failed["run"] = failure(rc, err, path, args.timeout)
    else:
        r.passed.add("run")
    for fn in (printed, result):
        if os.path.exists(fn):
            os.remove(fn)
    return r


# --- causes of failure, for the report ------------------------------------------------

def normalise(msg):
    msg = msg.strip()
    if re.search(r"cannot compare \(", msg):
        return "--compare cannot compare tuple results (cannot compare (...) with (...))"
    msg = re.sub(r"'[^']*'", "'…'", msg)
    msg = re.sub(r"\b[a-z]+\d*\[[^\]]*\](\{[^}]*\})?", "SHAPE", msg)
    msg = re.sub(r"\d+", "N", msg)
    return msg[:100]


ASYNC_SUFFIX = re.compile(r"-(start|update|done)$")


def parse_cause(reason, src):
    """(cause, detail): the construct that stopped the parser, from the
    diagnostic and the source text at its location."""
    m = re.match(r"(\d+):(\d+): error: (.*)", reason)
    if not m:
        return ("other: " + normalise(reason), "")
    line, col, msg = int(m.group(1)), int(m.group(2)), m.group(3)
    lines = src.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    before, at = text[:col - 1], text[col - 1:]
    op = re.match(r"expects opcode but sees: ([\w.-]+)", msg)
    if op:
        if ASYNC_SUFFIX.search(op.group(1)) and not op.group(1).startswith("async-"):
            return ("async sugar `<op>-start`/`-update`/`-done` on any opcode", op.group(1))
        return ("unknown opcode `%s`" % op.group(1), "")
    m2 = re.match(r"cannot infer shape for opcode: ([\w-]+)", msg)
    if m2:
        return ("result shape left out where it must be inferred", m2.group(1))
    m3 = re.match(r"unknown header attribute '([^']+)'", msg)
    if m3:
        return ("header attribute `%s`" % m3.group(1), "")
    if re.match(r"\s*HloModule\s+[\w.\-]+\s*:", text):
        return ("`HloModule name:` spelling", "")
    if at.startswith("#"):
        return ("compact tuple-element operand `name#N`", "")
    if re.search(r"\b(to_apply|calls|body|condition|branch_computations|select|scatter|comparator|"
                 r"true_computation|false_computation|called_computations)=$", before) and at.startswith("{"):
        return ("computation written inline in an attribute", "")
    if "replica_groups=mesh" in before or re.search(r"replica_groups=$", before) and at.startswith("mesh"):
        return ("mesh replica groups `mesh[...]`", "")
    if re.search(r"replica_groups=$", before) and at.startswith("["):
        return ("iota replica groups `[a,b]<=[n]`", "")
    if re.search(r"\bliteral=", before):
        return ("custom-call `literal=SHAPE VALUE`", "")
    if re.search(r"(=|\(|,)\s*b\(", before) or at.startswith("b("):
        return ("buffer shape `b(...)`", "")
    if msg.startswith("expects ',' or ')' but sees '('") and re.search(r"[a-z][\w-]*$", before):
        return ("nested instruction as an operand", "")
    operand_start = r"(^|[(,])\s*(\w+\[[^\]]*\](\{[^}]*\})?\s+)?"
    if (re.search(operand_start + r"[a-z][\w-]*$", before) and at.startswith("(")) or (
            re.search(operand_start + r"$", before) and re.match(r"[a-z][\w-]*\(", at)):
        return ("nested instruction as an operand", "")
    return ("other: " + normalise(msg), "")


# --- expectations ---------------------------------------------------------------------

LINE_RE = re.compile(r"(\S+) (%s): (.*)$" % "|".join(STAGES))


def read_expected(path):
    exp = {}
    if not os.path.exists(path):
        return exp
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            m = LINE_RE.match(line)
            if not m:
                raise SystemExit("%s:%d: not `PATH STAGE: REASON`: %s" % (path, n, line))
            exp[(m.group(1), m.group(2))] = m.group(3)
    return exp


def write_expected(path, results):
    lines = []
    for r in sorted(results, key=lambda r: r.rel):
        for st in STAGES:
            if st in r.failed:
                lines.append("%s %s: %s" % (r.rel, st, r.failed[st].replace("\n", " ")))
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(HEADER)
        for l in lines:
            f.write(l + "\n")
    os.replace(path + ".tmp", path)
    return len(lines)


# --- the comparator's own test -------------------------------------------------------

SELFTEST_SAME = [
    # sigils, typed operands, layouts the source left out, attribute order
    ("HloModule m\nENTRY %e (p: f32[2]) -> f32[2] {\n  %p = f32[2] parameter(0)\n"
     "  ROOT %n = f32[2] negate(f32[2] %p), metadata={op_name=\"a\" source_line=3}\n}\n",
     "HloModule m\n\nENTRY e {\n  p = f32[2]{0} parameter(0)\n"
     "  ROOT n = f32[2]{0} negate(p), metadata={source_line=3, op_name=\"a\"}\n}\n"),
    # backend_config quoted or not; numbers spelled differently; no ROOT in the source
    ("ENTRY e {\n  c = f32[3] constant({1, 0.1, -0.0, -0})\n  f = f32[3] copy(c), backend_config={\"a\": 1}\n}\n",
     "HloModule module_e\n\nENTRY e {\n  c = f32[3]{0} constant({1.0, 0.100000001, -0.0, 0})\n"
     "  ROOT f = f32[3]{0} copy(c), backend_config=\"{\\\"a\\\":1}\"\n}\n"),
    # a nested instruction and a compact tuple-element operand, printed expanded
    ("HloModule m\nENTRY e {\n  p = (f32[2], s32[]) parameter(0)\n"
     "  ROOT r = f32[2] add(f32[2] negate(p#0), p#0)\n}\n",
     "HloModule m\nENTRY e {\n  p = (f32[2]{0}, s32[]) parameter(0)\n  p_0 = f32[2]{0} get-tuple-element(p), index=0\n"
     "  negate.1 = f32[2]{0} negate(p_0)\n  ROOT r = f32[2]{0} add(negate.1, p_0)\n}\n"),
    # an inline computation printed as a computation
    ("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
     "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply={\n    a = f32[] parameter(0)\n"
     "    b = f32[] parameter(1)\n    ROOT s = f32[] add(a, b)\n  }\n}\n",
     "HloModule m\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
     "ENTRY e {\n  p = f32[4]{0} parameter(0)\n  z = f32[] constant(0)\n"
     "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=sum\n}\n"),
]

SELFTEST_BASE = ("HloModule m, is_scheduled=true\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                 "  ROOT s = f32[] add(x, y)\n}\n\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n"
                 "  q = f32[2,3]{1,0} parameter(1)\n  c = pred[] constant(true)\n  z = f32[] constant(0.5)\n"
                 "  m = f32[2,3]{1,0} multiply(p, q), metadata={op_name=\"mul\"}\n"
                 "  ROOT r = f32[2]{0} reduce(m, z), dimensions={1}, to_apply=add\n}\n")

# (edit of SELFTEST_BASE, what the comparator must say)
SELFTEST_DIFF = [
    (("multiply(p, q)", "multiply(q, p)"), "operand 0"),
    (("multiply(p, q)", "add(p, q)"), "opcode multiply printed as add"),
    (("dimensions={1}", "dimensions={0}"), "attribute dimensions"),
    ((", dimensions={1}", ""), "attribute dimensions dropped"),
    (("ROOT r = f32[2]{0}", "ROOT r = f32[2]{0}"), None),
    (("m = f32[2,3]{1,0} multiply", "m = f32[2,3]{0,1} multiply"), "layout"),
    (("m = f32[2,3]{1,0} multiply", "m = f32[3,2]{1,0} multiply"), "shape"),
    (("constant(0.5)", "constant(0.25)"), "literal element"),
    (("constant(true)", "constant(false)"), "literal element"),
    (("constant(0.5)", "constant(0.5000001)"), "literal element"),  # another f32
    (("z = f32[] constant(0.5)", "z = f32[] constant(-0.0)"), "literal element"),
    (("op_name=\"mul\"", "op_name=\"mu1\""), "attribute metadata"),
    (("is_scheduled=true", "is_scheduled=false"), "header attribute is_scheduled"),
    (("  ROOT s = f32[] add(x, y)", "  s = f32[] add(x, y)\n  ROOT t = f32[] add(s, y)"), "printed but not in the source"),
    (("ROOT r", "r"), None),
    (("  z = f32[] constant(0.5)\n", "  z = f32[] constant(0.5)\n  z2 = f32[] copy(z)\n"), "printed but not in the source"),
    (("to_apply=add", "to_apply=add, sharding={replicated}"), "sharding"),
    (("HloModule m,", "HloModule m2,"), "module name"),
]


# (source, printed, what the comparator must say): differences outside the base
SELFTEST_PAIRS = [
    ("ENTRY e {\n  ROOT c = u64[] constant(9223372036854775808)\n}\n",
     "ENTRY e {\n  ROOT c = u64[] constant(9223372036854775818)\n}\n", "literal element"),
    ("ENTRY e {\n  ROOT c = f32[] constant(-0.0)\n}\n", "ENTRY e {\n  ROOT c = f32[] constant(-0)\n}\n",
     "literal element"),
    ("ENTRY e {\n  ROOT c = bf16[2] constant({1.5, nan})\n}\n", "ENTRY e {\n  ROOT c = bf16[2] constant({1.5, inf})\n}\n",
     "literal element"),
    ("ENTRY e {\n  ROOT c = f32[] constant(1), backend_config=\"{\\\"a\\\":1}\"\n}\n",
     "ENTRY e {\n  ROOT c = f32[] constant(1), backend_config={\"a\":2}\n}\n", "backend_config"),
    ("ENTRY e {\n  p = (f32[2], s32[]) parameter(0)\n  ROOT r = s32[] negate(p#1)\n}\n",
     "ENTRY e {\n  p = (f32[2], s32[]) parameter(0)\n  g = s32[] get-tuple-element(p), index=0\n"
     "  ROOT r = s32[] negate(g)\n}\n", "another index"),
    ("ENTRY e {\n  ROOT r = f32[2] negate(f32[2] abs(f32[2] parameter(0)))\n}\n",
     "ENTRY e {\n  p = f32[2] parameter(0)\n  a = f32[2] sine(p)\n  ROOT r = f32[2] negate(a)\n}\n", "nested abs"),
    ("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}, execution_thread=\"x\"\n",
     "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n", "execution_thread dropped"),
    ("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n",
     "HloModule m\nENTRY e {\n  ROOT c = f32[]{:T(128)} constant(1)\n}\n", None),
    ("HloModule m\nENTRY e {\n  ROOT c = f32[]{:T(128)} constant(1)\n}\n",
     "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n", "layout"),
]


def selftest():
    errors = []
    for k, (a, b, want) in enumerate(SELFTEST_PAIRS):
        try:
            d = hlo_compare.compare(a, b)
        except hlo_compare.HloSyntaxError as e:
            d = "syntax error: %s" % e
        if (want is None and d is not None) or (want is not None and (d is None or want not in d)):
            errors.append("pair %d: want %r, got %r" % (k, want, d))
    for k, (a, b) in enumerate(SELFTEST_SAME):
        try:
            d = hlo_compare.compare(a, b)
        except hlo_compare.HloSyntaxError as e:
            d = "syntax error: %s" % e
        if d is not None:
            errors.append("same case %d: %s" % (k, d))
    # the comparator reads canonical text the same way both sides
    if hlo_compare.compare(SELFTEST_BASE, SELFTEST_BASE) is not None:
        errors.append("base case differs from itself")
    for (old, new), want in SELFTEST_DIFF:
        edited = SELFTEST_BASE.replace(old, new, 1)
        if edited == SELFTEST_BASE and old != new:
            errors.append("edit %r does not apply" % old)
            continue
        if want is None and old != new:
            # the edit drops or adds something only the source may omit
            # (`ROOT`): the texts still say the same thing
            d = hlo_compare.compare(edited, SELFTEST_BASE)
            if d is not None:
                errors.append("edit %r: %s" % (old, d))
            continue
        if want is None:
            continue
        try:
            d1 = hlo_compare.compare(SELFTEST_BASE, edited)
        except hlo_compare.HloSyntaxError as e:
            d1 = "syntax error: %s" % e
        if d1 is None or want not in d1:
            errors.append("edit %r -> %r: want %r, got %r" % (old, new, want, d1))
    # malformed text is refused, not misread
    for bad in ("ENTRY e {\n  p = f32[2] parameter(0)\n", "ENTRY e {\n  ROOT p = f32[2 parameter(0)\n}\n",
                "HloModule m\n"):
        try:
            hlo_compare.parse(bad)
            errors.append("malformed text accepted: %r" % bad)
        except hlo_compare.HloSyntaxError:
            pass
    return errors


# --- main ------------------------------------------------------------------------------

def table(title, counter, total, limit=None, details=None):
    rows = counter.most_common(limit)
    if not rows:
        return
    print("\n%s (modules, of %d)" % (title, total))
    for key, n in rows:
        more = ""
        if details and details.get(key):
            more = " (%s)" % ", ".join("%s %d" % kv for kv in details[key].most_common())
        print("  %5d  %s%s" % (n, key, more))


def main():
    ap = argparse.ArgumentParser(description="hloi against the real HLO modules of testdata/corpus/")
    ap.add_argument("hloi")
    ap.add_argument("corpus")
    ap.add_argument("--expected", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected.txt"))
    ap.add_argument("--update", action="store_true", help="rewrite the expectations file from this run")
    ap.add_argument("--report", action="store_true", help="print the tables of failure causes")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per hloi command")
    ap.add_argument("--max-memory", default="32M", help="hloi run's memory budget")
    ap.add_argument("--only", help="only modules whose path contains this")
    args = ap.parse_args()

    if not (os.path.isfile(args.hloi) and os.access(args.hloi, os.X_OK)):
        print("corpus test: %s is not an executable hloi" % args.hloi)
        return 1
    if not os.path.isdir(args.corpus):
        print("corpus test: %s is not a directory" % args.corpus)
        return 1
    errors = selftest()
    if errors:
        print("corpus test: the comparator fails its own test:")
        for e in errors:
            print("  " + e)
        return 1

    paths = []
    for root, dirs, files in os.walk(args.corpus):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".hlo.txt"):
                p = os.path.join(root, f)
                rel = os.path.relpath(p, args.corpus).replace(os.sep, "/")
                if not args.only or args.only in rel:
                    paths.append((p, rel))
    if not paths:
        print("corpus test: no modules (*.hlo.txt) under %s" % args.corpus)
        return 1

    with tempfile.TemporaryDirectory(prefix="hloi-corpus-") as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(lambda pr: test_module(args, pr[0], pr[1], tmp), paths))

    n = len(results)
    count = collections.Counter()
    for r in results:
        for st in r.passed:
            count[st] += 1
    print("corpus: %d modules: %d parse, %d print stably, %d print faithfully, %d check, %d run and compare"
          % (n, count["parse"], count["stable"], count["faithful"], count["check"], count["run"]))

    if args.report:
        causes = collections.Counter(r.parse_cause[0] for r in results if r.parse_cause)
        details = collections.defaultdict(collections.Counter)
        for r in results:
            if r.parse_cause and r.parse_cause[1]:
                details[r.parse_cause[0]][r.parse_cause[1]] += 1
        table("Constructs that stop the parser", causes, n, details=details)
        unsupported = set(o for r in results for o in r.unsupported_ops)
        unknown = set(r.parse_cause[0].split("`")[1] for r in results
                      if r.parse_cause and r.parse_cause[0].startswith("unknown opcode"))
        table("Opcodes hloi check reports unsupported or the parser does not know: modules that use them",
              collections.Counter(o for r in results for o in r.opcodes if o in unsupported | unknown), n)
        checked = set(o for r in results if "parse" in r.passed for o in r.opcodes)
        only = collections.Counter(o for r in results if "parse" not in r.passed for o in r.opcodes
                                   if o not in checked and o not in unknown)
        if only:
            print("\nOpcodes used only by modules that do not parse (not yet checked): " +
                  ", ".join("%s %d" % kv for kv in sorted(only.items(), key=lambda kv: (-kv[1], kv[0]))))
        types = set(t for r in results for t in r.unsupported_types)
        table("Element types hloi check reports unsupported: modules that use them",
              collections.Counter(t for r in results for t in r.etypes if t in types), n)
        table("Other check errors", collections.Counter(c for r in results for c in r.check_causes), n)
        table("Printing not faithful", collections.Counter(
            normalise(re.sub(r"^(computation [^:]+: )?(instruction [^:]+: )?", "", r.failed["faithful"]))
            for r in results if "faithful" in r.failed), n)
        table("Printing not stable", collections.Counter(
            normalise(r.failed["stable"]) for r in results if "stable" in r.failed), n)
        table("Run failures", collections.Counter(
            normalise(r.failed["run"]) for r in results if "run" in r.failed), n)
        blocked = collections.Counter()
        for r in results:
            if len(r.unsupported_ops) == 1 and not r.unsupported_types and len(r.check_causes) == 0:
                blocked[next(iter(r.unsupported_ops))] += 1
        table("Modules that only one unsupported opcode keeps from checking", blocked, n)

    # A stage cut off by the time limit is inconclusive: how long it takes
    # depends on the machine and its load, not on hloi's answers (speed is
    # measured in tests/bench/). It is neither listed nor compared.
    for r in results:
        for st, why in list(r.failed.items()):
            if why.startswith("timed out after"):
                del r.failed[st]
                r.timed_out.add(st)

    if args.update:
        if args.only:
            print("corpus test: --update with --only would drop the other modules' lines")
            return 1
        k = write_expected(args.expected, results)
        print("wrote %s: %d lines" % (args.expected, k))
        return 0

    expected = read_expected(args.expected)
    problems = []
    seen = set()
    inconclusive = []
    for r in results:
        for st in STAGES:
            key = (r.rel, st)
            seen.add(key)
            if st in r.timed_out:
                inconclusive.append("%s %s" % (r.rel, st))
            elif st in r.failed and key not in expected:
                problems.append("FAIL %s %s: %s" % (r.rel, st, r.failed[st]))
            elif st in r.passed and key in expected:
                problems.append("PASS %s %s: now passes; remove it from %s" % (
                    r.rel, st, os.path.basename(args.expected)))
    by_rel = {r.rel: r for r in results}
    if not args.only:
        for key in sorted(expected):
            if key not in seen:
                problems.append("STALE %s %s: no such module; remove it from %s" % (
                    key[0], key[1], os.path.basename(args.expected)))
            elif key[1] in by_rel[key[0]].timed_out:
                pass
            elif key[1] not in by_rel[key[0]].failed and key[1] not in by_rel[key[0]].passed:
                problems.append("SKIPPED %s %s: the stage did not run (an earlier stage failed); "
                                "remove it from %s" % (key[0], key[1], os.path.basename(args.expected)))
    for p in problems:
        print(p)
    for m in inconclusive:
        print("INCONCLUSIVE %s: timed out after %g s (a time limit says nothing of correctness; "
              "neither a failure nor a pass)" % (m, args.timeout))
    if problems:
        print("corpus test: %d results differ from %s (after checking them, "
              "rewrite it with --update)" % (len(problems), args.expected))
        return 1
    print("corpus test: every result matches %s (%d expected failures)" % (
        os.path.basename(args.expected), len(expected)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
