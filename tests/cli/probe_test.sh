#!/bin/sh
# hloi run's probes (doc/cli.md "Probes"): --probe and --probe-all write
# each value as DIR/NAME.npy, numbered NAME.N.npy outside the entry
# computation, in DIR/COMPUTATION/ (a loop body's iterations), the values
# of fused instructions included;
# both engines write the same; tuples are left out with a note; unknown
# names, --probe-dir alone, an unwritable directory and the byte limit are
# errors with their exit codes; --compare-with names the first value that
# differs (a perturbed module, other inputs), counts what it could not
# compare, and passes when nothing differs. NumPy (at /usr/bin/python3, or
# the python3 on PATH) is the oracle.
# Usage: probe_test.sh HLOI
set -u
hloi=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=
for c in /usr/bin/python3 python3; do
	if "$c" -c 'import numpy' >/dev/null 2>&1; then
		py=$c
		break
	fi
done
[ -n "$py" ] || { echo "python3 with NumPy not found; skipped"; exit 77; }
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# pyck DESCRIPTION PYTHON: the code (numpy as np, d the probe directory
# $tmp/p) must exit 0
pyck() {
	if (cd "$tmp" && "$py" -c "import numpy as np, os, sys
d = 'p'
def L(n): return np.load(os.path.join(d, n + '.npy'))
x = np.load('x.npy'); y = np.load('y.npy')
$2" 2>"$tmp/pyerr"); then
		ok
	else
		bad "$1"
		cat "$tmp/pyerr"
	fi
}
# run EXPECTED-EXIT DESCRIPTION ARGS...: stderr in $tmp/err
run() {
	want=$1
	what=$2
	shift 2
	"$hloi" run "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -eq "$want" ]; then
		ok
	else
		bad "$what: exit $got, expected $want"
		cat "$tmp/err"
	fi
}
# has DESCRIPTION TEXT: $tmp/err contains TEXT
has() {
	if grep -qF -- "$2" "$tmp/err"; then
		ok
	else
		bad "$1: no '$2' in:"
		cat "$tmp/err"
	fi
}

cat >"$tmp/m.hlo" <<'HLO'
HloModule probe
sum {
  sa = f32[] parameter(0)
  sb = f32[] parameter(1)
  ROOT sc = f32[] add(sa, sb)
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  two = f32[] constant(2)
  t = f32[4] broadcast(two), dimensions={}
  v2 = f32[4] multiply(v, t)
  ROOT r = (s32[], f32[4]) tuple(i2, v2)
}
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[4,8] parameter(0)
  y = f32[4,8] parameter(1)
  a = f32[4,8] add(x, y)
  b = f32[4,8] multiply(a, a)
  zero = f32[] constant(0)
  s = f32[4] reduce(b, zero), dimensions={1}, to_apply=sum
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, s)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  wv = f32[4] get-tuple-element(w), index=1
  ROOT out = f32[4] add(wv, s)
}
HLO
# the same with b = a * x: the first value to differ is b's
sed 's/multiply(a, a)/multiply(a, x)/' "$tmp/m.hlo" >"$tmp/m2.hlo"
(cd "$tmp" && "$py" -c "import numpy as np
r = np.random.default_rng(7)
np.save('x.npy', (1 + r.random((4, 8))).astype(np.float32))
np.save('y.npy', (1 + r.random((4, 8))).astype(np.float32))")

# --probe: a fused intermediate, body's v2 numbered by iteration, body's i
# (a name cond has too)
run 0 "--probe" "$tmp/m.hlo" --input "$tmp/x.npy" --input "$tmp/y.npy" --probe b,body/v2 --probe body/i \
	--probe-dir "$tmp/p" --output "$tmp/out.npy"
has "--probe summary" "probes: 7 files written to $tmp/p (188 bytes)"
pyck "--probe files" "
names = sorted(os.listdir(d))
assert names == ['b.npy', 'body'], names
names = sorted(os.listdir(d + '/body'))
assert names == ['i.0.npy', 'i.1.npy', 'i.2.npy', 'v2.0.npy', 'v2.1.npy', 'v2.2.npy'], names"
pyck "--probe values" "
a = x + y
assert np.array_equal(L('b'), a * a)
s = (a * a).sum(axis=1, dtype=np.float32)
for n in range(3):
    assert np.allclose(L('body/v2.%d' % n), s * 2 ** (n + 1), rtol=1e-6), n
    assert L('body/i.%d' % n) == n and L('body/i.%d' % n).dtype == np.int32
assert np.allclose(np.load('out.npy'), 9 * s, rtol=1e-6)"

# --probe-all, both engines: the same files, the same values
for engine in fast reference; do
	rm -rf "$tmp/p"
	run 0 "--probe-all --engine $engine" "$tmp/m.hlo" --input "$tmp/x.npy" --input "$tmp/y.npy" --probe-all \
		--probe-dir "$tmp/p" --engine $engine
	has "--probe-all tuples noted ($engine)" "tuple or token values not probed"
	pyck "--probe-all files ($engine)" "
names = set()
for r, _, fs in os.walk(d):
    names |= {os.path.relpath(os.path.join(r, f), d) for f in fs}
want = {'x', 'y', 'a', 'b', 'zero', 's', 'z', 'wv', 'out'}
want |= {'body/%s.%d' % (k, n) for k in ('i', 'v', 'one', 'i2', 'two', 't', 'v2') for n in range(3)}
want |= {'cond/%s.%d' % (k, n) for k in ('i', 'n', 'lt') for n in range(4)}
want = {w + '.npy' for w in want}
assert names == want, (sorted(names - want), sorted(want - names))
assert [bool(L('cond/lt.%d' % n)) for n in range(4)] == [True, True, True, False]
assert np.array_equal(L('x'), x) and np.array_equal(L('a'), x + y)
assert np.array_equal(L('body/t.1'), np.full(4, 2, np.float32))"
	cp -r "$tmp/p" "$tmp/p.$engine"
done
if (cd "$tmp" && "$py" -c "import numpy as np, os
for f in os.listdir('p.fast') + ['body/' + f for f in os.listdir('p.fast/body')]:
    if f == 'body' or f == 'cond':
        continue
    a, b = np.load('p.fast/' + f), np.load('p.reference/' + f)
    assert a.dtype == b.dtype and np.allclose(a, b, rtol=1e-6), f") 2>"$tmp/pyerr"; then
	ok
else
	bad "the engines' probe files differ"
	cat "$tmp/pyerr"
fi

# --compare-with: the same run matches, the reference engine too
run 0 "--compare-with itself" "$tmp/m.hlo" --input "$tmp/x.npy" --input "$tmp/y.npy" --compare-with "$tmp/p.fast"
has "--compare-with itself" "all 42 compared values match"
run 0 "--compare-with the other engine" "$tmp/m.hlo" --input "$tmp/x.npy" --input "$tmp/y.npy" \
	--compare-with "$tmp/p.fast" --engine reference
# a perturbed module: b is the first value to differ, in all 32 elements
run 1 "--compare-with a perturbed module" "$tmp/m2.hlo" --input "$tmp/x.npy" --input "$tmp/y.npy" \
	--compare-with "$tmp/p.fast"
has "--compare-with names b" "first difference at 'b' (computation 'main'): 32 of 32 elements differ"
has "--compare-with the largest" "the largest difference: index ("
# other inputs: x differs first
run 1 "--compare-with other inputs" "$tmp/m.hlo" --random-inputs=3 --compare-with "$tmp/p.fast"
has "--compare-with names x" "first difference at 'x' (computation 'main')"
# a file missing: not compared; a loop body's value named with its iteration
rm "$tmp/p.fast/b.npy"
sed 's/multiply(v, t)/add(v, t)/' "$tmp/m.hlo" >"$tmp/m3.hlo"
run 1 "--compare-with a loop body" "$tmp/m3.hlo" --input "$tmp/x.npy" --input "$tmp/y.npy" --compare-with "$tmp/p.fast"
has "--compare-with names v2.0" "first difference at 'v2' (computation 'body', evaluation 0): 4 of 4 elements differ from $tmp/p.fast/body/v2.0.npy"
has "--compare-with counts the missing" "; 1 value without a file there, not compared"
has "--compare-with counts" "differ; 1 value"
# only the probes asked for
run 0 "--compare-with --probe" "$tmp/m3.hlo" --input "$tmp/x.npy" --input "$tmp/y.npy" --compare-with "$tmp/p.fast" \
	--probe a,s
has "--compare-with --probe" "all 2 compared values match"
run 3 "--compare-with nothing to compare" "$tmp/m.hlo" --input "$tmp/x.npy" --input "$tmp/y.npy" \
	--compare-with "$tmp/p.fast" --probe b
has "nothing compared" "nothing compared"
run 3 "--compare-with a missing directory" "$tmp/m.hlo" --random-inputs --compare-with "$tmp/nosuch"

# types that travel as others in .npy (bf16 as <u2, s4 as |i1) compare as themselves
cat >"$tmp/t.hlo" <<'HLO'
HloModule types
ENTRY main {
  x = f32[4] parameter(0)
  h = bf16[4] convert(x)
  q = s4[4] convert(x)
  c = f32[4] convert(h)
  ROOT r = (f32[4], s4[4]) tuple(c, q)
}
HLO
run 0 "bf16 and s4 probes" "$tmp/t.hlo" --random-inputs --probe-all --probe-dir "$tmp/pt"
run 0 "bf16 and s4 --compare-with" "$tmp/t.hlo" --random-inputs --compare-with "$tmp/pt"
has "bf16 and s4 --compare-with" "all 4 compared values match"
run 1 "bf16 --compare-with other inputs" "$tmp/t.hlo" --random-inputs=5 --compare-with "$tmp/pt"

# mistakes
run 2 "unknown --probe" "$tmp/m.hlo" --random-inputs --probe b,nosuch --probe-dir "$tmp/q"
has "unknown --probe" "--probe nosuch: the module has no instruction of that name"
run 2 "unknown --probe in a computation" "$tmp/m.hlo" --random-inputs --probe main/v2 --probe-dir "$tmp/q"
has "unknown --probe in a computation" "no instruction 'v2' in a computation 'main'"
run 2 "empty --probe" "$tmp/m.hlo" --random-inputs --probe b,
run 2 "--probe-dir alone" "$tmp/m.hlo" --random-inputs --probe-dir "$tmp/q"
[ ! -e "$tmp/q" ] && ok || bad "a refused run made its --probe-dir"
run 2 "bad --max-probe-bytes" "$tmp/m.hlo" --random-inputs --probe-all --max-probe-bytes 12X
: >"$tmp/file"
run 4 "unwritable --probe-dir" "$tmp/m.hlo" --random-inputs --probe-all --probe-dir "$tmp/file/sub"
has "unwritable --probe-dir" "cannot make the directory"
# the limit: x (128 bytes) fits in 200, y does not
run 4 "--max-probe-bytes" "$tmp/m.hlo" --random-inputs --probe-all --probe-dir "$tmp/lim" --max-probe-bytes 200
has "--max-probe-bytes" "would take the probe files past --max-probe-bytes 200 (128 bytes in 1 files written)"
has "--max-probe-bytes names y" "'y' (computation 'main')"
[ -f "$tmp/lim/x.npy" ] && [ ! -e "$tmp/lim/y.npy" ] && ok || bad "--max-probe-bytes: files"
# several participants: refused
cat >"$tmp/ar.hlo" <<'HLO'
HloModule ar, replica_count=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(x), replica_groups={}, to_apply=sum
}
HLO
run 2 "--probe with participants" "$tmp/ar.hlo" --random-inputs --probe-all --probe-dir "$tmp/q"
has "--probe with participants" "probes look inside a run of one participant; the module runs as 2"
# existing files are replaced
mkdir -p "$tmp/old"
echo stale >"$tmp/old/b.npy"
run 0 "--probe over an old file" "$tmp/m.hlo" --input "$tmp/x.npy" --input "$tmp/y.npy" --probe b --probe-dir "$tmp/old"
pyck "--probe replaced the old file" "
assert np.array_equal(np.load('old/b.npy'), (x + y) ** 2)"
# default directory: ./probes
(cd "$tmp" && "$hloi" run m.hlo --random-inputs --probe out >/dev/null 2>&1) && [ -f "$tmp/probes/out.npy" ] && ok ||
	bad "--probe without --probe-dir writes to ./probes"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
