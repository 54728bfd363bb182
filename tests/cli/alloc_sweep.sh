#!/bin/sh
# Allocation-failure sweep of whole commands: with HLOI_ALLOC_FAIL_AFTER=N
# every allocation after the first N fails. For N = 0, 1, 2, ... until the
# command succeeds, each run must exit 4 (a runtime failure) with a message
# on standard error that speaks of memory, and nothing else: no crash, no
# other exit code, no silent exit, no sanitizer report (under ASan a leak
# makes the exit code differ). The commands read and write every kind of
# file hloi handles: HLO text, .pb, .pbtxt, .npy, literal text.
# Usage: alloc_sweep.sh HLOI [STRIDE]  (STRIDE: try every STRIDE-th N)
set -u
hloi=$1
stride=${2:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

cat >"$tmp/p.hlo" <<'HLO'
HloModule sweep, input_output_alias={ {}: (1, {}, may-alias) }

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[2,3]{0,1} parameter(0)
  y = f32[3] parameter(1)
  b = f32[2,3] broadcast(y), dimensions={1}
  m = f32[2,3] multiply(x, b)
  r = f32[3] reduce(m, f32[] constant(0)), dimensions={0}, to_apply=add
  ROOT t = f32[3] tanh(r)
}
HLO
printf 'HloModule x\nENTRY e {\n  ROOT c = f32[2,3] constant({{1,2,3},{4,5,6}})\n}\n' >"$tmp/x.hlo"
printf 'HloModule y\nENTRY e {\n  ROOT c = f32[3] constant({1,2,3})\n}\n' >"$tmp/y.hlo"
"$hloi" run "$tmp/x.hlo" --output "$tmp/x.npy" >/dev/null 2>&1 &&
	"$hloi" run "$tmp/y.hlo" --output "$tmp/y.npy" >/dev/null 2>&1 ||
	{ echo "FAIL: cannot make the .npy inputs"; exit 1; }
printf 'f32[2,3] {{1,2,3},{4,5,6}}\nf32[3] {1,2,3}\n' >"$tmp/in.txt"
"$hloi" convert "$tmp/p.hlo" "$tmp/p.pb" >/dev/null 2>&1
"$hloi" convert "$tmp/p.hlo" "$tmp/p.pbtxt" >/dev/null 2>&1

sweep() { # NAME -- COMMAND...
	name=$1; shift 2
	n=0
	while :; do
		HLOI_ALLOC_FAIL_AFTER=$n "$@" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ "$rc" -eq 0 ]; then
			pass=$((pass + 1))
			return
		fi
		if [ "$rc" -ne 4 ] || ! grep -q "memory" "$tmp/err"; then
			fail=$((fail + 1))
			echo "FAIL: $name with HLOI_ALLOC_FAIL_AFTER=$n: exit $rc"
			sed 's/^/  | /' "$tmp/err" | head -8
			return
		fi
		n=$((n + stride))
		if [ "$n" -gt 100000 ]; then
			fail=$((fail + 1))
			echo "FAIL: $name: no success within 100000 allocations"
			return
		fi
	done
}

sweep check -- "$hloi" check "$tmp/p.hlo"
sweep fmt -- "$hloi" fmt "$tmp/p.hlo"
sweep "run (text inputs)" -- "$hloi" run "$tmp/p.hlo" --inputs "$tmp/in.txt"
sweep "run (.npy in and out, reference)" -- "$hloi" run "$tmp/p.hlo" --engine reference \
	--input "$tmp/x.npy" --input "$tmp/y.npy" --output "$tmp/r.npy"
sweep "run (.pb, fast)" -- "$hloi" run "$tmp/p.pb" --random-inputs
sweep "convert to .pb" -- "$hloi" convert "$tmp/p.hlo" "$tmp/q.pb"
sweep "convert .pbtxt to text" -- "$hloi" convert "$tmp/p.pbtxt" "$tmp/q.hlo"
sweep lower -- "$hloi" lower "$tmp/p.hlo"
sweep "layout" -- "$hloi" layout 'bf16[5,300]{1,0:T(8,128)(2,1)}' --linear 77

echo "alloc_sweep: $pass commands swept, $fail failed"
[ "$fail" -eq 0 ]
