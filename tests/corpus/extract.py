#!/usr/bin/env python3
"""Gathers HLO text modules from git checkouts of public repositories.

This is how testdata/corpus/ was made (see testdata/corpus/README.md); it is
not run by the tests. Two steps:

  extract.py candidates --git-dir DIR --origin OWNER/NAME --license LICENSE
                        [--commit SHA] [--include GLOB]... [--exclude GLOB]...
                        --out FILE.jsonl
      Reads every matching file at the commit (default HEAD) with `git show`
      and writes one JSON line per HLO module found in it:
        - .hlo/.txt files: the file, split at `// -----` separator lines;
        - C/C++ files: every raw string literal R"tag(...)tag" holding a
          module, except those inside a test whose body expects an error and
          those with printf/Substitute placeholders or FileCheck patterns;
        - Python files: triple-quoted strings; Markdown: fenced code blocks;
          JavaScript: template literals.
      A module is text whose code (comments removed) starts with `HloModule`
      or holds an `ENTRY` computation.

  extract.py select CANDIDATES.jsonl... --out DIR [--target N] [--max-bytes B]
      Picks a subset for breadth: first, modules that add constructs not yet
      covered (opcodes, element types, attribute names, layout and syntax
      features) until each is covered a few times; then modules taken in turn
      from each source file until the target count. Writes DIR/<repo dir>/
      <source path without extension>[-N].hlo.txt, each file starting with a
      `// origin:` comment line.

Only the Python standard library is used.
"""
import argparse
import fnmatch
import hashlib
import json
import os
import re
import subprocess
import sys

MAX_MODULE_BYTES = 300 * 1024

# --- reading sources ---------------------------------------------------------


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir] + list(args), check=True,
                          stdout=subprocess.PIPE).stdout


def strip_comments(text):
    """HLO code without // and /* */ comments (quoted strings kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            out.append(" ")
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_quoted(code):
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', code)


PLACEHOLDER = re.compile(r"\$[0-9A-Za-z_{]|%[sdviu](?![A-Za-z0-9_.\-])|%%|<<[A-Z0-9_]+>>")
FILECHECK = re.compile(r"\{\{\.\*\}\}|\[\[[A-Za-z_0-9]+(?::|\]\])|^\s*CHECK", re.M)


def is_module(text):
    code = strip_comments(text)
    bare = strip_quoted(code)
    s = bare.lstrip()
    if not (s.startswith("HloModule") or re.search(r"(^|\s)ENTRY\s", bare)):
        return False
    # the text is HLO from its first word: a header, ENTRY or a computation
    if not re.match(r"(HloModule\s|ENTRY\s|%?[A-Za-z_][\w.\-]*\s*[({])", s):
        return False
    if "{" not in bare or not re.search(r"=\s*\S.*\(", bare):
        return False
    for m in PLACEHOLDER.finditer(bare):
        tok = m.group(0)
        if tok.startswith("%") and tok != "%%":
            # `%d` is a placeholder unless the module defines an instruction d
            name = tok[1:]
            if re.search(r"(^|[\s%])" + re.escape(name) + r"\s*=", bare, re.M):
                continue
        return False
    if FILECHECK.search(bare):
        return False
    return True


NEGATIVE = re.compile(
    r"EXPECT_FALSE\([^;]*\bok\(\)|ASSERT_FALSE\([^;]*\bok\(\)|StatusIs\(|"
    r"Not\(IsOk\(\)\)|EXPECT_DEATH|ExpectHasSubstr|IsError|"
    r"\.status\(\)\.message\(\)|status\(\)\.ToString\(\)|"
    r"k(?:InvalidArgument|FailedPrecondition|Unimplemented|Internal)\b|"
    r"EXPECT_THAT\([^;]*status\(\)|HasSubstr\([^;]*\n?[^;]*status|"
    r"TF_EXPECT_NOT_OK|EXPECT_NOK|ASSERT_NOK|IsNotOk|absl::IsInvalidArgument|"
    r"(?:EXPECT|ASSERT)_NE\((?:absl::)?OkStatus\(\)|(?:EXPECT|ASSERT)_NE\([^;]*,\s*(?:absl::)?OkStatus\(\)")
TEST_START = re.compile(r"^(?:TEST|TEST_F|TEST_P|XLA_TEST_F|XLA_TEST_P|XLA_TYPED_TEST)\(", re.M)


def cc_modules(src):
    """Raw string literals holding modules, skipping negative tests."""
    starts = [m.start() for m in TEST_START.finditer(src)] + [len(src)]
    found = []
    for m in re.finditer(r'(?<![A-Za-z0-9_])R"([^()\\\s"]{0,16})\(', src):
        tag = m.group(1)
        end = src.find(")" + tag + '"', m.end())
        if end < 0:
            continue
        text = src[m.end():end]
        if not is_module(text):
            continue
        # the enclosing test body, if any
        body = None
        for k in range(len(starts) - 1):
            if starts[k] <= m.start() < starts[k + 1]:
                body = src[starts[k]:starts[k + 1]]
                break
        if body is not None and NEGATIVE.search(body):
            continue
        # the statement using the literal formats it
        before = src[max(0, m.start() - 200):m.start()]
        if re.search(r"StrFormat|Substitute|StrReplaceAll|StrCat|absl::StrJoin", before.split(";")[-1]):
            continue
        found.append(text)
    return found


def py_modules(src):
    found = []
    for m in re.finditer(r'[rRbBuU]?("""|\'\'\')(.*?)\1', src, re.S):
        if is_module(m.group(2)):
            found.append(m.group(2))
    return found


def md_modules(src):
    found = []
    for m in re.finditer(r"^```[^\n]*\n(.*?)^```", src, re.S | re.M):
        if is_module(m.group(1)):
            found.append(m.group(1))
    return found


def js_modules(src):
    found = []
    for m in re.finditer(r"`([^`]*)`", src, re.S):
        if is_module(m.group(1)):
            found.append(m.group(1))
    return found


def hlo_modules(src):
    parts = re.split(r"^// -----.*\n", src, flags=re.M)
    return [p for p in parts if is_module(p)]


def modules_of(path, src):
    ext = os.path.splitext(path)[1]
    if ext in (".hlo", ".txt"):
        return hlo_modules(src)
    if ext in (".cc", ".cpp", ".h", ".c"):
        return cc_modules(src)
    if ext == ".py":
        return py_modules(src)
    if ext == ".md":
        return md_modules(src)
    if ext == ".js":
        return js_modules(src)
    return []


def cmd_candidates(args):
    commit = git(args.git_dir, "rev-parse", args.commit).decode().strip()
    names = git(args.git_dir, "ls-tree", "-r", "--name-only", commit).decode().splitlines()
    n_files = n_mods = 0
    with open(args.out, "w") as out:
        for path in names:
            if args.include and not any(fnmatch.fnmatch(path, g) for g in args.include):
                continue
            if any(fnmatch.fnmatch(path, g) for g in args.exclude or []):
                continue
            try:
                raw = git(args.git_dir, "show", commit + ":" + path)
            except subprocess.CalledProcessError:
                continue  # a blob the snapshot does not hold
            try:
                src = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if "ENTRY" not in src and "HloModule" not in src:
                continue
            mods = modules_of(path, src)
            if not mods:
                continue
            n_files += 1
            single = len(mods) == 1 and os.path.splitext(path)[1] in (".hlo", ".txt")
            for i, text in enumerate(mods, 1):
                text = text.strip("\n") + "\n"
                if len(text.encode()) > MAX_MODULE_BYTES:
                    continue
                n_mods += 1
                out.write(json.dumps({
                    "repo": args.origin, "path": path, "commit": commit,
                    "license": args.license, "index": 0 if single else i,
                    "text": text}) + "\n")
    print(f"{args.origin}: {n_mods} modules from {n_files} files", file=sys.stderr)


# --- selection -----------------------------------------------------------------

def xla_rejects(text):
    """Known ways a test module is broken for XLA's parser (the test that
    holds it never parses it): an array constant written as a scalar,
    `f32[3072] constant(0.3)`."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import hlo_compare
    try:
        m = hlo_compare.parse(text)
    except hlo_compare.HloSyntaxError:
        return False  # hloi's business: the corpus test reports it

    def bad(ins):
        if (ins.opcode == "constant" and ins.shape is not None and ins.shape.kind == "array"
                and ins.shape.dims and ins.literal and not any(t.text == "{" for t in ins.literal)):
            return True
        return any(o.kind == "nested" and bad(o.instr) for o in ins.operands)
    return any(bad(i) for c in m.computations for i in c.instrs)


TYPES = ("pred s1 s2 s4 s8 s16 s32 s64 u1 u2 u4 u8 u16 u32 u64 f16 bf16 f32 f64 "
         "f8e5m2 f8e4m3 f8e4m3fn f8e4m3b11fnuz f8e3m4 f8e5m2fnuz f8e4m3fnuz f4e2m1fn "
         "f8e8m0fnu c64 c128 token opaque").split()
TYPE_RE = re.compile(r"\b(" + "|".join(sorted(TYPES, key=len, reverse=True)) + r")\[")
OPCODE_RE = re.compile(r"(?:^|[\s\]\})])([a-z][a-z0-9\-]*)\(")
ATTR_RE = re.compile(r"[,\s]([a-z_][a-z0-9_\-]*)=")
NOT_OPCODES = {"nan", "b", "mesh"}


def features(text):
    code = strip_quoted(strip_comments(text))
    f = set()
    for m in OPCODE_RE.finditer(code):
        if m.group(1) not in NOT_OPCODES:
            f.add("op:" + m.group(1))
    for m in TYPE_RE.finditer(code):
        f.add("type:" + m.group(1))
    for m in ATTR_RE.finditer(code):
        f.add("attr:" + m.group(1))
    checks = {
        "no-header": not code.lstrip().startswith("HloModule"),
        "no-entry-keyword": not re.search(r"\bENTRY\b", code),
        "sigils": "%" in code,
        "typed-operands": re.search(r"\(\s*(?:" + "|".join(TYPES) + r")\[[^\]]*\](?:\{[^}]*\})?\s+%?[\w.\-]+\s*[,)]", code) is not None,
        "nested-operand": re.search(r"[(,]\s*(?:\w+\[[^\]]*\](?:\{[^}]*\})?\s+)?[a-z][a-z0-9\-]*\(", re.sub(r"^[^=]*=", "", code, flags=re.M)) is not None,
        "tuple-index-operand": re.search(r"[\w.\-]#\d", code) is not None,
        "tiled-layout": ":T(" in code,
        "memory-space": re.search(r":[^}]*S\(\d", code) is not None,
        "element-size": re.search(r":[^}]*E\(\d", code) is not None,
        "bounded-dynamic": "<=" in re.sub(r"\]<=\[", "", code) and re.search(r"\[[^\]]*<=\d", code) is not None,
        "unbounded-dynamic": re.search(r"\[[^\]]*\?", code) is not None,
        "iota-replica-groups": re.search(r"replica_groups=\[", code) is not None,
        "iota-tile-assignment": "]<=[" in code,
        "inline-computation": re.search(r"(to_apply|calls|body|condition)=\{", code) is not None,
        "buffer-shape": re.search(r"\bb\(", code) is not None,
        "scheduled": "is_scheduled=true" in code,
        "elided-constant": "{...}" in code,
        "tuple-shape": re.search(r"=\s*\(", code) is not None,
        "scalar-layout": re.search(r"\[\]\{", code) is not None,
        "no-result-shape": re.search(r"=\s*[a-z][a-z0-9\-]*\(", code) is not None,
        "control-predecessors": "control-predecessors" in code,
        "execution-thread": "execution_thread" in code,
        "backend-config-json": "backend_config={" in code,
    }
    for k, v in checks.items():
        if v:
            f.add("syntax:" + k)
    m = re.match(r"\s*HloModule\s+[^,\n]*((?:,[^\n]*)?)", code)
    if m:
        for a in re.findall(r"([a-z_]+)=", m.group(1)):
            f.add("header:" + a)
    return f


def out_name(c, primary):
    repo_dir = c["repo"].replace("/", "-")
    base = os.path.splitext(c["path"])[0]
    if c["index"]:
        base += "-%d" % c["index"]
    if c["commit"] != primary[c["repo"]]:
        base += "@" + c["commit"][:7]  # an older snapshot of the same path
    return os.path.join(repo_dir, base + ".hlo.txt")


def cmd_select(args):
    cands = []
    seen = set()
    for fn in args.candidates:
        fill = os.path.basename(fn) not in (args.no_fill or [])
        with open(fn) as f:
            for line in f:
                c = json.loads(line)
                c["fill"] = fill
                if "%s:%s:%d" % (c["repo"], c["path"], c["index"]) in (args.drop or []):
                    continue
                if xla_rejects(c["text"]):
                    continue
                key = hashlib.sha1(re.sub(r"\s+", " ", strip_comments(c["text"])).strip().encode()).hexdigest()
                if key in seen:
                    continue
                seen.add(key)
                c["features"] = features(c["text"])
                c["size"] = len(c["text"].encode())
                cands.append(c)
    print(f"{len(cands)} distinct candidate modules", file=sys.stderr)
    chosen, chosen_ids, total = [], set(), 0
    cover = {}

    def take(i):
        nonlocal total
        chosen.append(cands[i])
        chosen_ids.add(i)
        total += cands[i]["size"]
        for f in cands[i]["features"]:
            cover[f] = cover.get(f, 0) + 1

    # preferred sources first (all of their modules): e.g. the parser's tests
    for i, c in enumerate(cands):
        key = c["repo"] + ":" + c["path"]
        if (c["size"] <= args.prefer_max_size and any(fnmatch.fnmatch(key, g) for g in args.prefer or [])) \
                or any(fnmatch.fnmatch(key, g) for g in args.prefer_big or []):
            take(i)
    # coverage rounds
    for want in range(1, args.cover + 1):
        while True:
            best, best_score = None, 0.0
            for i, c in enumerate(cands):
                if i in chosen_ids or total + c["size"] > args.max_bytes:
                    continue
                gain = sum(1 for f in c["features"] if cover.get(f, 0) < want)
                if gain == 0:
                    continue
                score = gain / (1.0 + c["size"] / 20000.0)
                if score > best_score:
                    best, best_score = i, score
            if best is None:
                break
            take(best)
    print(f"preferred and coverage: {len(chosen)} modules", file=sys.stderr)
    # round robin over source files, smaller modules first: first within each
    # --quota GLOB=N group up to N modules, then over all files
    by_file = {}
    for i, c in enumerate(cands):
        if i not in chosen_ids and c["fill"] and c["size"] <= args.fill_max_size:
            by_file.setdefault((c["repo"], c["path"]), []).append(i)
    order = sorted(by_file, key=lambda k: hashlib.sha1((k[0] + k[1]).encode()).hexdigest())
    queues = {k: sorted(by_file[k], key=lambda i: (cands[i]["size"], cands[i]["index"])) for k in order}

    def round_robin(keys, limit):
        n = 0
        while n < limit and len(chosen) < args.target and any(queues[k] for k in keys):
            for k in keys:
                if not queues[k] or n >= limit or len(chosen) >= args.target:
                    continue
                i = queues[k].pop(0)
                if total + cands[i]["size"] <= args.max_bytes:
                    take(i)
                    n += 1
        return n

    for q in args.quota or []:
        glob, limit = q.rsplit("=", 1)
        keys = [k for k in order if fnmatch.fnmatch(k[0] + ":" + k[1], glob)]
        n = round_robin(keys, int(limit))
        print(f"quota {glob}: {n} modules", file=sys.stderr)
    round_robin(order, args.target)
    print(f"selected {len(chosen)} modules, {total} bytes, {len(cover)} features", file=sys.stderr)
    rare = sorted((n, f) for f, n in cover.items() if n < args.cover)
    if rare:
        print("covered fewer than %d times: %s" % (args.cover, ", ".join(f for _, f in rare)), file=sys.stderr)
    commits = {}
    for c in cands:
        commits.setdefault(c["repo"], {}).setdefault(c["commit"], 0)
        commits[c["repo"]][c["commit"]] += 1
    primary = {r: max(v, key=v.get) for r, v in commits.items()}
    for c in chosen:
        name = out_name(c, primary)
        dest = os.path.join(args.out, name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        which = " (module %d)" % c["index"] if c["index"] else ""
        with open(dest, "w") as f:
            f.write("// origin: %s %s @ %s%s, %s\n" % (c["repo"], c["path"], c["commit"], which, c["license"]))
            f.write(c["text"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("candidates")
    a.add_argument("--git-dir", required=True)
    a.add_argument("--origin", required=True)
    a.add_argument("--license", required=True)
    a.add_argument("--commit", default="HEAD")
    a.add_argument("--include", action="append")
    a.add_argument("--exclude", action="append")
    a.add_argument("--out", required=True)
    s = sub.add_parser("select")
    s.add_argument("candidates", nargs="+")
    s.add_argument("--out", required=True)
    s.add_argument("--target", type=int, default=650)
    s.add_argument("--max-bytes", type=int, default=3_500_000)
    s.add_argument("--cover", type=int, default=3)
    s.add_argument("--fill-max-size", type=int, default=30000)
    s.add_argument("--prefer", action="append", help="REPO:PATH glob whose modules are all taken")
    s.add_argument("--prefer-max-size", type=int, default=MAX_MODULE_BYTES)
    s.add_argument("--prefer-big", action="append", help="like --prefer, whatever the size")
    s.add_argument("--quota", action="append", help="REPO:PATH-GLOB=N: fill N modules from these files first")
    s.add_argument("--drop", action="append", help="REPO:PATH:INDEX of a module XLA's parser rejects")
    s.add_argument("--no-fill", action="append", help="candidates file used for coverage only")
    args = ap.parse_args()
    {"candidates": cmd_candidates, "select": cmd_select}[args.cmd](args)


if __name__ == "__main__":
    main()
