#!/usr/bin/python3
"""hloi's model table: XLA's CPU benchmark programs and real model dumps
(testdata/models/) timed with `hloi bench --json --profile=json`, against the
module's floor (its dot and convolution FLOPs at the machine's GEMM speed or
its parameters' and result's bytes at its memory bandwidth, whichever is
longer; doc/performance.md "Cost and floor") and, where one exists, the same
computation in NumPy on the same shapes (in f32: NumPy has no bf16).

Per program: hloi's median and minimum time (`hloi bench`, the iterations
chosen so that a row takes a few seconds; on a shared machine the minimum
is the steadier of the two), the FLOPs (all, and those of dot and convolution),
the bytes every step accesses and those of the parameters and result, the
floor and hloi / floor, the three steps of the profile with the largest
share (opcode and share), and the NumPy peer's median time. Under the table:
the geometric mean of hloi / floor, and every program hloi could not run,
with its error.

The machine's limits come from $HLOI_MACHINE_FILE (`hloi bench --calibrate`
writes it) unless --peak-gflops and --bandwidth are given; they are passed
through to `hloi bench`. Without either, the floor is unknown.

The dumps kept compressed in testdata/models (*.hlo.txt.gz) are unpacked
into --cache; the ones too large to keep (FETCH) are read from --cache, and
downloaded there by --fetch.

usage: /usr/bin/python3 tests/bench/models.py [--hloi BUILD/hloi] [--only NAME,...]
           [--quick] [--json] [--threads N] [--peak-gflops X --bandwidth Y]
           [--seconds S] [--warmup N] [--cache DIR] [--fetch] [--render FILE.json]
"""
import argparse
import datetime
import glob
import gzip
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request

import blas_env  # noqa: F401  (before NumPy: its OpenBLAS kernels)
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
XLA_CPU = os.path.join(ROOT, "testdata", "corpus", "openxla-xla", "xla", "backends", "cpu", "benchmarks", "hlo")
MODELS = os.path.join(ROOT, "testdata", "models")

# The model dumps, in table order: file in testdata/models (.hlo.txt, or
# .hlo.txt.gz unpacked into the cache), what it is.
MODEL_FILES = [
    ("mobilenet_v2_train_step.hlo.txt.gz",
     "vision training step: PyTorch/XLA MobileNetV2, f32, batch 96x3x224x224, batch-norm-training/grad"),
    ("gemma3_1b_flax_call.hlo.txt.gz", "transformer forward pass: Gemma 3 1B (Flax), bf16"),
    ("bert_train_step_graphhelper.hlo.txt",
     "transformer training step: BERT (PyTorch/XLA on AWS Neuron), f32"),
    ("hlo_torax_iterhybrid_predictor_corrector_f64.hlo.txt.gz",
     "scan/while loops: TORAX plasma transport solver step (JAX), f64, 18 while loops"),
    ("jax_issue_33666_linx_slow_0428_module_0006.hlo.txt.gz",
     "while loops: the JAX program of jax issue 33666 (XLA CPU benchmark), f32"),
]

# Dumps too large for the repository: name, what, address (fetched into the
# cache by --fetch).
RAW = "https://raw.githubusercontent.com/openxla/xla/%s/%s"
FETCH = [
    ("ssd_mobilenet_tf.hlo.txt", "vision inference: SSD-MobileNet v1 (TensorFlow), bf16, constants elided",
     RAW % ("7ddd29086633c4e3fa1203d195c3b8b90f45405a", "xla/backends/cpu/benchmarks/hlo/ssd_mobilenet_tf.hlo")),
    ("graphsage_tf.hlo.txt", "graph network inference: GraphSAGE (TensorFlow), bf16, constants elided",
     RAW % ("5c1d47ddbb1c743ca327cf71b321015999281ac9", "xla/backends/cpu/benchmarks/hlo/graphsage_tf.hlo")),
    ("stable_diffusion_tf_bf16_bs1.hlo.txt", "diffusion UNet step: Stable Diffusion (TensorFlow), bf16, batch 1",
     RAW % ("1d50da8d699ca482c7d2e84b6c8edfab3aa8fc4b",
            "xla/backends/cpu/benchmarks/hlo/stable_diffusion_tf_bf16_bs1.hlo")),
]


def f32(rng, *shape):
    return rng.standard_normal(shape, dtype=np.float32)


def peer(name):
    """The NumPy peer of an XLA CPU benchmark: (expression as documented,
    function), on f32 inputs of the program's shapes, or None."""
    rng = np.random.default_rng(42)
    if name.startswith("layer_norm_1x4096x768"):
        x = f32(rng, 4096, 768)

        def layer_norm():
            d = x - x.mean(axis=-1, keepdims=True)
            return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + np.float32(1e-5))
        return "d = x - x.mean(-1, keepdims=True); d / np.sqrt((d*d).mean(-1, keepdims=True) + 1e-5)", layer_norm
    if name.startswith("mean_axis_1x4096x1024"):
        x = f32(rng, 4096, 1024)
        return "x.mean(axis=-1)", lambda: x.mean(axis=-1)
    if name.startswith("sum_axis_1x4096x1024"):
        x = f32(rng, 4096, 1024)
        return "x.sum(axis=-1)", lambda: x.sum(axis=-1)
    if name.startswith("sort_full_1024x4096"):
        x = f32(rng, 1024, 4096)
        return "np.sort(x, axis=1)", lambda: np.sort(x, axis=1)
    if name.startswith("argsort_axis_1024x512"):
        x = f32(rng, 1024, 512)
        return ("np.take_along_axis(x, np.argsort(x, axis=1, kind='stable'), axis=1)",
                lambda: np.take_along_axis(x, np.argsort(x, axis=1, kind="stable"), axis=1))
    if name.startswith("topk_logits_k10_1x50000"):
        x = f32(rng, 50000)

        def topk():
            i = np.argpartition(x, -10)[-10:]
            i = i[np.argsort(-x[i], kind="stable")]
            return x[i], i
        return "i = np.argpartition(x, -10)[-10:]; i = i[np.argsort(-x[i])]; x[i], i", topk
    if name.startswith("mha_block_1x12x128x64"):
        q, k, v = f32(rng, 12, 128, 64), f32(rng, 12, 128, 64), f32(rng, 12, 128, 64)

        def mha():
            s = (q @ k.transpose(0, 2, 1)) * np.float32(0.125)
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            return (e / e.sum(axis=-1, keepdims=True)) @ v
        return ("s = q @ k.transpose(0,2,1) * 0.125; e = np.exp(s - s.max(-1, keepdims=True)); "
                "(e / e.sum(-1, keepdims=True)) @ v"), mha
    return None


def time_numpy(fn, seconds, warmup=2):
    for _ in range(warmup):
        r = fn()
        del r
    t0 = time.perf_counter()
    r = fn()
    del r
    once = max(time.perf_counter() - t0, 1e-6)
    times = []
    for _ in range(max(3, min(200, int(seconds / once)))):
        t0 = time.perf_counter()
        r = fn()
        times.append(time.perf_counter() - t0)
        del r
    return statistics.median(times)


def hloi_bench(args, prog, iterations, warmup, profile=True):
    cmd = [args.hloi, "bench", prog, "--json", "--iterations", str(iterations), "--warmup", str(warmup)]
    if profile:
        cmd += ["--profile=json", "--top", "0"]
    if args.threads is not None:
        cmd += ["--threads", str(args.threads)]
    if args.peak_gflops:
        cmd += ["--peak-gflops", str(args.peak_gflops)]
    if args.bandwidth:
        cmd += ["--bandwidth", str(args.bandwidth)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if "error" in l] or p.stderr.splitlines() or ["exit %d" % p.returncode]
        msg = lines[0]
        if msg.startswith(prog):
            msg = os.path.basename(prog) + msg[len(prog):]
        raise RuntimeError(msg.strip())
    return json.loads(p.stdout)


def measure(args, prog):
    """hloi bench with as many iterations as fill --seconds: a profiled
    probe (--warmup untimed runs, one timed), which is the row when that
    run alone takes half of --seconds, else the profiled run of N
    iterations."""
    probe = hloi_bench(args, prog, 1, args.warmup)
    once = max(probe["median_s"], 1e-6)
    if once >= args.seconds / 2:
        return probe, 1
    n = max(1, min(args.max_iterations, int(args.seconds / once)))
    return hloi_bench(args, prog, n, 1 if once > 0.2 else 2), n


def top_steps(profile, k=3):
    steps = sorted(profile.get("steps", []), key=lambda s: -s.get("share", 0))
    return [(s["opcode"] + (" (fused)" if s.get("region") else ""), s["share"]) for s in steps[:k]
            if s.get("share", 0) >= 0.005]


def programs(args):
    """(name, path or None, what, peer or None, error or None) in table order."""
    out = []
    for path in sorted(glob.glob(os.path.join(XLA_CPU, "*.hlo.txt"))):
        name = os.path.basename(path)[:-len(".hlo.txt")]
        out.append((name, path, "XLA CPU benchmark", name))
    os.makedirs(args.cache, exist_ok=True)
    for fname, what in MODEL_FILES:
        src = os.path.join(MODELS, fname)
        name = fname.split(".hlo.txt")[0]
        path = src
        if fname.endswith(".gz"):
            path = os.path.join(args.cache, fname[:-3])
            if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(src):
                with gzip.open(src, "rb") as f, open(path + ".tmp", "wb") as o:
                    shutil.copyfileobj(f, o)
                os.replace(path + ".tmp", path)
        out.append((name, path, what, None))
    for fname, what, url in FETCH:
        name = fname[:-len(".hlo.txt")]
        path = os.path.join(args.cache, fname)
        if not os.path.exists(path) and args.fetch:
            try:
                with urllib.request.urlopen(url, timeout=60) as r, open(path + ".tmp", "wb") as o:
                    o.write(("// origin: openxla/xla %s, Apache-2.0\n" % url).encode())
                    shutil.copyfileobj(r, o)
                os.replace(path + ".tmp", path)
            except OSError as e:
                print("fetching %s: %s" % (url, e), file=sys.stderr)
        out.append((name, path if os.path.exists(path) else None, what + " (" + url + ")", None))
    return out


def fmt_time(s):
    if s is None:
        return "–"
    if s < 1e-6:
        return "%.0f ns" % (s * 1e9)
    if s < 1e-3:
        return "%.1f us" % (s * 1e6)
    return "%.2f ms" % (s * 1e3) if s < 0.1 else "%.0f ms" % (s * 1e3)


def fmt_ratio(x):
    if not x:
        return "?"
    return "%.0f" % x if x >= 100 else "%.1f" % x


def fmt_si(x, unit):
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return "%.3g %s%s" % (x / scale, prefix, unit)
    return "%.0f %s" % (x, unit)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hloi", default=os.path.join(ROOT, "build", "hloi"), help="the hloi binary (Release)")
    ap.add_argument("--only", default=None, help="comma-separated program names (or parts of them)")
    ap.add_argument("--quick", action="store_true", help="about a second per row instead of a few")
    ap.add_argument("--seconds", type=float, default=None, help="timed seconds per row (default 3, --quick 1)")
    ap.add_argument("--warmup", type=int, default=1,
                    help="untimed runs before the first timed one (0 for programs of a minute)")
    ap.add_argument("--max-iterations", type=int, default=200, help="at most this many timed runs")
    ap.add_argument("--threads", type=int, default=None, help="hloi --threads (default: all cores)")
    ap.add_argument("--peak-gflops", type=float, default=None, help="passed to hloi bench")
    ap.add_argument("--bandwidth", type=float, default=None, help="passed to hloi bench")
    ap.add_argument("--cache", default=os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                    os.path.expanduser("~/.cache"), "hloi", "models"),
                    help="where compressed and fetched dumps are unpacked")
    ap.add_argument("--fetch", action="store_true", help="download the FETCH dumps missing from --cache")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of markdown")
    ap.add_argument("--render", metavar="FILE", help="print the markdown of a --json output, running nothing")
    args = ap.parse_args()
    if args.render:
        with open(args.render) as f:
            print_markdown(json.load(f))
        return 0
    if args.seconds is None:
        args.seconds = 1.0 if args.quick else 3.0
    only = args.only.split(",") if args.only else None

    rows = []
    machine = None
    for name, path, what, peer_name in programs(args):
        if only and not any(o in name for o in only):
            continue
        row = {"name": name, "what": what, "file": os.path.relpath(path, ROOT) if path else None}
        rows.append(row)
        if path is None:
            row["error"] = "not in the cache (--fetch downloads it)"
            continue
        try:
            j, n = measure(args, path)
        except RuntimeError as e:
            row["error"] = str(e)
            print("%s: %s" % (name, e), file=sys.stderr)
            continue
        p = j.get("profile", {})
        machine = p.get("machine", machine)
        row.update(hloi_s=j["median_s"], hloi_min_s=j["min_s"], iterations=n, threads=j.get("threads"),
                   flops=p.get("flops"), gemm_flops=p.get("gemm_flops"), bytes=p.get("bytes"), io_bytes=p.get("io_bytes"),
                   floor_s=p.get("floor_s") or None, top=top_steps(p), peak_bytes=j.get("peak_bytes"))
        row["of_floor"] = row["hloi_s"] / row["floor_s"] if row["floor_s"] else None
        print("%s: %s, %d runs" % (name, fmt_time(row["hloi_s"]), n), file=sys.stderr)
        pe = peer(peer_name) if peer_name else None
        if pe:
            row["peer"], fn = pe
            row["peer_s"] = time_numpy(fn, args.seconds)
            del fn

    ratios = [r["of_floor"] for r in rows if r.get("of_floor")]
    doc = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": machine,
           "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(), "numpy": np.__version__,
           "rows": rows, "geomean_of_floor": math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None,
           "geomean_programs": len(ratios)}
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print_markdown(doc)
    return 0


def print_markdown(doc):
    m = doc.get("machine") or {}
    print("hloi models — %s, %s, %d cores, NumPy %s; machine: %s GFLOP/s GEMM, %s GB/s (%s)" % (
        doc["date"], doc.get("cpu", "?"), doc["cores"], doc["numpy"], m.get("gflops", "?"), m.get("gbps", "?"),
        m.get("from", "?")))
    print()
    print("| program | hloi | hloi min | runs | FLOPs (dot, conv) | bytes accessed (params, result) | floor "
          "| hloi / floor | top steps by share | NumPy |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    rows = doc["rows"]
    for r in rows:
        if "error" in r:
            continue
        top = ", ".join("%s %.0f%%" % (op, 100 * sh) for op, sh in r["top"])
        print("| %s | %s | %s | %d | %s (%s) | %s (%s) | %s | %s | %s | %s |" % (
            r["name"], fmt_time(r["hloi_s"]), fmt_time(r["hloi_min_s"]), r["iterations"],
            fmt_si(r["flops"], "FLOP"), fmt_si(r["gemm_flops"], "FLOP"), fmt_si(r["bytes"], "B"),
            fmt_si(r["io_bytes"], "B"), fmt_time(r["floor_s"]), fmt_ratio(r["of_floor"]),
            top, fmt_time(r.get("peer_s"))))
    if doc["geomean_of_floor"]:
        print()
        print("geometric mean of hloi / floor over %d programs: %.1f" % (
            doc.get("geomean_programs", sum(1 for r in rows if r.get("of_floor"))), doc["geomean_of_floor"]))
    big = [r["of_floor"] for r in rows if r.get("of_floor") and r["floor_s"] >= 1e-4]
    if big:
        # A program whose work is inside it (a loop over a scalar state) has
        # a floor of nanoseconds, and a ratio that says nothing.
        print("over the %d programs whose floor is at least 100 us: %.1f" % (
            len(big), math.exp(sum(map(math.log, big)) / len(big))))
    peers = [r for r in rows if r.get("peer")]
    if peers:
        print()
        print("NumPy peers (f32 on the program's shapes, inputs standard normal, median):")
        for r in peers:
            print("- %s: `%s`" % (r["name"], r["peer"]))
    errs = [r for r in rows if "error" in r]
    if errs:
        print()
        print("Not run:")
        for r in errs:
            print("- %s (%s): %s" % (r["name"], r["what"], r["error"]))

if __name__ == "__main__":
    sys.exit(main())
