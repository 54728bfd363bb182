#!/usr/bin/env python3
"""Conversions unchanged between two builds: every .hlo, .pb and .pbtxt
under the given directories (and the corpus's .txt modules, read as HLO
text) is converted by both `hloi` binaries to each of .hlo, .pb and
.pbtxt, and the two must write the same bytes, say the same on stderr and
exit alike.

    tests/proto/convert_identity.py --old OLD/hloi --new build/hloi testdata

For a change to the writers that must not change what they write (a
faster path, a different buffer): build the commit before the change
once, keep its binary, and run this over testdata/. Prints the first
differences and exits 1 when there are any.
"""
import argparse
import os
import subprocess
import sys
import tempfile

FORMATS = ("hlo", "pb", "pbtxt")


def inputs(roots):
    for root in roots:
        for d, _, files in os.walk(root):
            for f in sorted(files):
                ext = f.rsplit(".", 1)[-1]
                if ext in FORMATS:
                    yield os.path.join(d, f), ext
                elif ext == "txt" and "corpus" in d:
                    yield os.path.join(d, f), "hlo"


def convert(hloi, src, fmt_in, fmt_out, out):
    p = subprocess.run([hloi, "convert", src, out, "--format", fmt_in, "--to", fmt_out, "--color", "never"],
                       capture_output=True, timeout=120)
    data = None
    if os.path.exists(out):
        with open(out, "rb") as f:
            data = f.read()
        os.unlink(out)
    return p.returncode, p.stderr.replace(out.encode(), b"OUT"), data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("roots", nargs="+")
    args = ap.parse_args()
    bad = runs = 0
    with tempfile.TemporaryDirectory(prefix="hloi-identity-") as tmp:
        for src, fmt_in in inputs(args.roots):
            for fmt_out in FORMATS:
                out = os.path.join(tmp, "out." + fmt_out)
                a = convert(args.old, src, fmt_in, fmt_out, out)
                b = convert(args.new, src, fmt_in, fmt_out, out)
                runs += 1
                if a != b:
                    bad += 1
                    what = ("exit %d / %d" % (a[0], b[0]) if a[0] != b[0] else
                            "stderr" if a[1] != b[1] else "bytes (%s / %s)" % (
                                len(a[2]) if a[2] is not None else "none",
                                len(b[2]) if b[2] is not None else "none"))
                    if bad <= 20:
                        print("DIFF %s -> %s: %s" % (src, fmt_out, what))
    print("%d conversions, %d differ" % (runs, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
