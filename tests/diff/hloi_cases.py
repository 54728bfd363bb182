"""The runner the NumPy differential tests of fft and linear algebra share:
writes each case as a program with .npy inputs, runs them all in one
`hloi test` (outputs kept as .npy), checks each result, prints the
failures with a command that reproduces them. Cases are dicts with
"index", "program" (HLO text), "inputs" (arrays) and "engine", and may
have "options" (more flags of hloi run)."""
import argparse
import os
import shutil
import subprocess
import tempfile
import time

import numpy as np


# The linear-algebra types and their NumPy types.
LINALG_TYPES = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}


def rand(g, shape, t):
    """Standard normal values of `shape` (complex for c64 and c128) from
    the NumPy generator g, in float64 / complex128."""
    x = g.standard_normal(shape)
    if t.startswith("c"):
        x = x + 1j * g.standard_normal(shape)
    return x


def run_cases(name, hloi, cases, check, seed, jobs=2, keep=None):
    """check(case, outputs) returns None or what is wrong. Returns the exit
    status: 0, or 1 when a case failed."""
    start = time.time()
    tmp = keep or tempfile.mkdtemp(prefix="hloi-%s-" % name)
    cases_dir, out = os.path.join(tmp, "cases"), os.path.join(tmp, "out")
    os.makedirs(cases_dir, exist_ok=True)
    for c in cases:
        base = "c%05d" % c["index"]
        flags = []
        for k, x in enumerate(c["inputs"]):
            np.save(os.path.join(cases_dir, "%s.%d.npy" % (base, k)), x, allow_pickle=False)
            flags += ["--input", "%s.%d.npy" % (base, k)]
        flags += ["--output", "out.npy"] + c.get("options", [])
        if c["engine"] != "fast":
            flags.append("--engine=" + c["engine"])
        c["flags"] = " ".join(flags)
        with open(os.path.join(cases_dir, base + ".hlo"), "w") as f:
            f.write("// hloi-flags: " + c["flags"] + "\n" + c["program"])
    p = subprocess.run([hloi, "test", "-j", str(jobs), "--quiet", "--timeout", "120", "--outputs", out, cases_dir],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode not in (0, 1):
        print("%s: hloi test ended with %d: %s" % (name, p.returncode, p.stderr.decode(errors="replace")[:2000]))
    failed = 0
    for c in cases:
        d = os.path.join(out, "c%05d" % c["index"])
        try:
            if os.path.exists(os.path.join(d, "out.npy")):
                got = [np.load(os.path.join(d, "out.npy"))]
            else:
                got = [np.load(os.path.join(d, "out.%d.npy" % k)) for k in range(len(os.listdir(d)))]
            why = check(c, got)
        except OSError:
            why = "no result"
        if why:
            failed += 1
            if failed <= 10:
                print("FAIL case %d (%s engine): %s" % (c["index"], c["engine"], why))
                print(c["program"].rstrip())
                print("reproduce: cd %s && %s run c%05d.hlo %s\n" % (cases_dir, hloi, c["index"], c["flags"]))
    print("%s: %d cases (seed %d), %d failed, %.1f s" % (name, len(cases), seed, failed, time.time() - start))
    if failed:
        print("%s: cases kept in %s" % (name, tmp))
        return 1
    if not keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main(name, gen_case, check, default_cases):
    """The command line every such test has: HLOI [--cases N] [--seed S]
    [--jobs J] [--keep DIR]; cases gen_case(seed, i) for i < N."""
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("--cases", type=int, default=default_cases)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", default=None)
    args = ap.parse_args()
    cases = [gen_case(args.seed, i) for i in range(args.cases)]
    return run_cases(name, args.hloi, cases, check, args.seed, args.jobs, args.keep)
