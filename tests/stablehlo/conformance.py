#!/usr/bin/env python3
"""Runs StableHLO test programs through `hloi run` and reports pass / fail /
refused by file (one op per file in stablehlo/tests/interpret/).

A file is split at `// -----` lines (stablehlo-translate's -split-input-file);
each piece runs on its own, on each engine asked for. A piece passes when
hloi exits 0 (its check.* assertions held), fails on exit 1 (an assertion
failed: a wrong answer) or any other failure, and is refused when hloi says
"unsupported" (exit 3). Pieces that do not parse count as errors.

  usage: conformance.py HLOI DIR_OR_FILE... [--engine fast,reference]
         [--jobs N] [--expect-all-pass] [--quiet]

--expect-all-pass exits 1 unless every piece passes (the ctest sample)."""
import argparse
import collections
import concurrent.futures
import os
import subprocess
import sys
import tempfile


def pieces(path):
    text = open(path, encoding="utf-8").read()
    out = []
    for k, part in enumerate(text.split("\n// -----\n")):
        if "func.func" in part:
            out.append((k, part))
    return out


def classify(rc, err):
    if rc == 0:
        return "pass"
    if rc == 1:
        return "fail"
    if rc == 3 and "unsupported" in err:
        return "refused"
    if rc == 3:
        return "error"
    return "fail"


def run_piece(hloi, engine, name, text, tmp):
    fn = os.path.join(tmp, name.replace("/", "_") + ".mlir")
    with open(fn, "w", encoding="utf-8") as f:
        f.write(text)
    try:
        p = subprocess.run([hloi, "run", "--engine", engine, fn], capture_output=True, text=True, timeout=120)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = 124, "timeout"
    first = next((l for l in err.splitlines() if "error" in l), "")
    return classify(rc, err), first.split("error: ", 1)[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--engine", default="fast,reference")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--expect-all-pass", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    files = []
    for p in a.paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".mlir"))
        else:
            files.append(p)
    jobs = []
    for f in files:
        op = os.path.basename(f)[:-5]
        for k, text in pieces(f):
            for e in a.engine.split(","):
                jobs.append((op, k, e, text))
    by_op = collections.defaultdict(collections.Counter)
    total = collections.Counter()
    reasons = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(run_piece, a.hloi, e, f"{op}.{k}.{e}", text, tmp): (op, k, e) for op, k, e, text in jobs}
        for fu in concurrent.futures.as_completed(futs):
            op, k, e = futs[fu]
            res, why = fu.result()
            by_op[op][res] += 1
            total[res] += 1
            if res != "pass":
                reasons[(res, why[:90])] += 1
                if not a.quiet:
                    print(f"{res}: {op} piece {k} ({e}): {why}", file=sys.stderr)
    print(f"{'op':32} {'pass':>5} {'fail':>5} {'refused':>7} {'error':>5}")
    for op in sorted(by_op):
        c = by_op[op]
        print(f"{op:32} {c['pass']:5} {c['fail']:5} {c['refused']:7} {c['error']:5}")
    print(f"{'total':32} {total['pass']:5} {total['fail']:5} {total['refused']:7} {total['error']:5}")
    if not a.quiet:
        print("\nmost common reasons:")
        for (res, why), n in reasons.most_common(25):
            print(f"  {n:4} {res}: {why}")
    if a.expect_all_pass and total["pass"] != sum(total.values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
