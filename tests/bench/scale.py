#!/usr/bin/env python3
"""Scale rows of the benchmark (issue: real-dump scale): a generated module
of N instructions, every one with metadata as JAX writes it, read by
`hloi check`, `fmt`, `convert` (to .pb) and `check` of that .pb. Prints wall
time, peak RSS, text throughput and bytes per instruction beside the
targets (check of 1M instructions in <= 5 s and <= 1 GB; fmt and convert
within 1.5x of check).

    python3 tests/bench/scale.py --hloi build-rel/hloi [--instrs 1000000]
        [--metadata short|long] [--runs 3] [--keep DIR]

Each command runs --runs times; the table gives the best and worst wall
time (a shared machine swings by a third from one run to the next), the
ratios use the best of each.

`short` metadata (the default) makes ~105 bytes of text per instruction,
the size of the dumps the targets were set on; `long` makes ~220 bytes
(full op_name paths). Nothing here is a test: it only measures.
"""
import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

OPS = ["add", "multiply", "subtract", "maximum"]


def generate(path, n, long_metadata):
    r = random.Random(1)
    with open(path, "w") as f:
        f.write("HloModule big, entry_computation_layout="
                "{(f32[8,128]{1,0}, f32[8,128]{1,0})->f32[8,128]{1,0}}\n\n")
        f.write("ENTRY main {\n")
        f.write("  p0 = f32[8,128]{1,0} parameter(0)\n")
        f.write("  p1 = f32[8,128]{1,0} parameter(1)\n")
        names = ["p0", "p1"]
        for i in range(n):
            op = OPS[i % 4]
            a = names[-1]
            b = names[r.randrange(max(0, len(names) - 50), len(names))]
            nm = "%s.%d" % (op, i)
            if long_metadata:
                md = ('op_type="%s" op_name="jit(train_step)/jit(main)/transformer/layer_%d/%s" '
                      'source_file="/home/user/model/train.py" source_line=%d'
                      % (op.capitalize(), i % 48, op, 100 + i % 900))
            else:
                md = 'op_name="jit(f)/%s" source_line=%d' % (op, 10 + i % 90)
            f.write("  %s = f32[8,128]{1,0} %s(%s, %s), metadata={%s}\n" % (nm, op, a, b, md))
            names.append(nm)
        f.write("  ROOT r = f32[8,128]{1,0} add(%s, p0)\n}\n" % names[-1])


def measure(cmd, stdout=os.devnull):
    """Wall seconds and peak RSS (bytes) of one run of cmd."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        fd = os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.execv(cmd[0], cmd)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("failed (%d): %s" % (os.waitstatus_to_exitcode(status), " ".join(cmd)))
    return wall, ru.ru_maxrss * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hloi", default="build-rel/hloi")
    ap.add_argument("--instrs", type=int, default=1000000)
    ap.add_argument("--metadata", choices=["short", "long"], default="short")
    ap.add_argument("--runs", type=int, default=3, help="runs of each command (best and worst shown)")
    ap.add_argument("--keep", help="write the generated files here and keep them")
    args = ap.parse_args()
    hloi = os.path.abspath(args.hloi)
    work = args.keep or tempfile.mkdtemp(prefix="hloi-scale-")
    os.makedirs(work, exist_ok=True)
    try:
        hlo = os.path.join(work, "scale_%d.hlo" % args.instrs)
        pb = os.path.join(work, "scale_%d.pb" % args.instrs)
        out = os.path.join(work, "scale_%d.fmt.hlo" % args.instrs)
        generate(hlo, args.instrs, args.metadata == "long")
        size = os.path.getsize(hlo)
        n = args.instrs + 3
        rows = [
            ("check .hlo", [hloi, "check", hlo], os.devnull),
            ("fmt", [hloi, "fmt", hlo], out),
            ("convert .hlo -> .pb", [hloi, "convert", hlo, pb], os.devnull),
            ("check .pb", [hloi, "check", pb], os.devnull),
        ]
        print("%d instructions, %.1f MB of text (%.0f bytes each, %s metadata)"
              % (n, size / 1e6, size / n, args.metadata))
        print("| command | seconds (best-worst of %d) | MB/s of text | peak RSS MB | bytes/instr | target |"
              % max(1, args.runs))
        print("|---|---:|---:|---:|---:|---|")
        base = None
        for name, cmd, stdout in rows:
            runs = [measure(cmd, stdout) for _ in range(max(1, args.runs))]
            wall = min(w for w, _ in runs)
            worst = max(w for w, _ in runs)
            rss = max(r for _, r in runs)
            if base is None:
                base = wall
                target = "<= 5 s, <= 1 GB (1M instrs)"
            elif name == "check .pb":
                target = "as check .hlo"
            else:
                target = "<= 1.5x check (%.2fx)" % (wall / base)
            print("| %s | %.2f-%.2f | %.0f | %.0f | %.0f | %s |"
                  % (name, wall, worst, size / wall / 1e6, rss / 1e6, rss / n, target))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
