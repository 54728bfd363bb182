"""Name OpenBLAS's kernels for NumPy as hloi names them for itself
(src/eval/lib/blas.c, doc/performance.md "OpenBLAS's kernels"): Debian 12's
OpenBLAS falls back to its SSE3 kernels on CPU models newer than itself, and
a comparison with NumPy is like with like only when both run the same ones.
Import this before NumPy: OpenBLAS reads OPENBLAS_CORETYPE when it loads."""
import os


def choose():
    if "OPENBLAS_CORETYPE" in os.environ:
        return os.environ["OPENBLAS_CORETYPE"]
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return None
    have = set(flags)
    core = None
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= have:
        core = "SkylakeX"
    elif {"avx2", "fma"} <= have:
        core = "Haswell"
    if core:
        os.environ["OPENBLAS_CORETYPE"] = core
    return core


choose()
