#!/bin/sh
# Profiles, costs and the machine file (doc/performance.md "Profiles",
# "Cost and floor"): `hloi plan --cost` counts a dot's and a padded,
# strided, dilated convolution's FLOPs exactly as the formulas say and a
# fused region's bytes as its inputs and outputs; `hloi run --profile`
# attributes a while loop's body to its instructions with the trip count
# and its shares add up; `hloi bench --profile` covers the timed runs;
# `--trace` writes a Chrome trace with worker tracks; `--calibrate` keeps
# its line in the machine file the reports read, flags override it; bad
# values are usage errors and an unwritable trace an error without a file.
# JSON is read with python3's json module.
# Usage: profile_test.sh HLOI SRCDIR
set -u
hloi=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HLOI_MACHINE_FILE="$tmp/machine"
py=python3
command -v "$py" >/dev/null 2>&1 || { echo "python3 not found; skipped"; exit 77; }
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# check DESCRIPTION FILE PYTHON-EXPRESSION: the expression over d (the
# file's JSON) must be true
check() {
	if "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2" 2>"$tmp/pyerr"; then
		ok
	else
		bad "$1"
		head -c 600 "$2"
		echo
		cat "$tmp/pyerr"
	fi
}

cat >"$tmp/dot.hlo" <<'HLO'
HloModule dot
ENTRY main {
  a = f32[64,32] parameter(0)
  b = f32[32,48] parameter(1)
  d = f32[64,48] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[64,48] exponential(d)
  ROOT r = f32[64,48] add(e, d)
}
HLO
# 1-D convolution along one spatial dim of 10 inputs: window 3, stride 2,
# padding 2 and 1, rhs dilation 2, lhs dilation 2: output 1 + (19 + 3 - 5) / 2 = 9
cat >"$tmp/conv.hlo" <<'HLO'
HloModule conv
ENTRY main {
  x = f32[2,10,3] parameter(0)
  k = f32[3,3,5] parameter(1)
  ROOT c = f32[2,9,5] convolution(x, k), window={size=3 stride=2 pad=2_1 lhs_dilate=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f
}
HLO
if "$hloi" plan --cost --json "$tmp/dot.hlo" >"$tmp/dot.json"; then
	ok
	# dot: 2*64*48*32; exp: 64*48 transcendentals; add 64*48 flops
	check "dot flops" "$tmp/dot.json" "d['total']['gemm_flops'] == 2*64*48*32 and d['total']['flops'] == 2*64*48*32 + 64*48 and d['total']['transcendentals'] == 64*48"
	# the exp and add fused: reads d, writes r
	check "fused region bytes" "$tmp/dot.json" "[s['bytes'] for s in d['computations'][0]['steps'] if s['region']] == [2*64*48*4]"
	check "io bytes" "$tmp/dot.json" "d['total']['io_bytes'] == (64*32 + 32*48 + 64*48) * 4"
else
	bad "plan --cost dot: exit $?"
fi
# the taps that land on an input element, counted by brute force
taps=$("$py" -c "
ext = (10 - 1) * 2 + 1
print(sum(1 for o in range(9) for k in range(3) if 0 <= o*2 + k*2 - 2 < ext and (o*2 + k*2 - 2) % 2 == 0))")
if "$hloi" plan --cost --json "$tmp/conv.hlo" >"$tmp/conv.json"; then
	ok
	check "conv flops ($taps taps)" "$tmp/conv.json" "d['total']['gemm_flops'] == 2 * 2 * 5 * 3 * $taps"
else
	bad "plan --cost conv: exit $?"
fi

# no machine file yet: limits unknown, said so
"$hloi" plan --cost "$tmp/dot.hlo" >"$tmp/cost.txt" 2>&1
grep -q "limits unknown" "$tmp/cost.txt" && ok || bad "unknown limits not said"
"$hloi" plan --cost "$tmp/dot.hlo" --peak-gflops 100 --bandwidth 10 --json >"$tmp/flags.json" &&
	check "flags" "$tmp/flags.json" "d['machine']['gflops'] == 100 and d['machine']['gbps'] == 10 and abs(d['total']['floor_s'] - max(2*64*48*32/100e9, d['total']['io_bytes']/10e9)) < 1e-12" ||
	bad "plan --cost with flags"

# calibration: a line for the thread count, read back by the reports
if "$hloi" bench --calibrate --threads 1 --json >"$tmp/cal.json"; then
	ok
	check "calibration" "$tmp/cal.json" "d['threads'] == 1 and d['gflops'] > 0 and d['gbps'] > 0"
	grep -q '^threads=1 gflops=' "$HLOI_MACHINE_FILE" && ok || bad "machine file line"
	"$hloi" plan --cost --json --threads 1 "$tmp/dot.hlo" >"$tmp/cal2.json" &&
		check "reports read the file" "$tmp/cal2.json" "d['machine']['from'].endswith('machine') and d['machine']['gflops'] > 0" ||
		bad "plan --cost after calibrate"
	"$hloi" bench --calibrate --threads 1 >/dev/null
	[ "$(grep -c '^threads=1 ' "$HLOI_MACHINE_FILE")" = 1 ] && ok || bad "calibrating again keeps one line per thread count"
else
	bad "bench --calibrate: exit $?"
fi

# a while loop: its body's steps counted every iteration, the trip count
if "$hloi" run "$src/testdata/ops/control/while.hlo" --profile=json --top 0 >/dev/null 2>"$tmp/while.json"; then
	ok
	check "trip counts" "$tmp/while.json" "{s['name']: s.get('trip_count') for s in d['steps'] if s['opcode'] == 'while' and s['computation'] == 'main'} == {'a': 1000, 'b': 10, 'c': 4, 'd': 0, 'e': 3}"
	check "body steps per iteration" "$tmp/while.json" "[s['calls'] for s in d['steps'] if s['name'] == 'v.1' and s['computation'] == 'body1000'] == [1000]"
	check "shares add up" "$tmp/while.json" "abs(sum(o['share'] for o in d['by_opcode']) - 1) < 1e-3 and d['runs'] == 1"
else
	bad "run --profile while: exit $?"
fi
# text: the loop named with its iterations
"$hloi" run "$src/testdata/ops/control/while.hlo" --profile >/dev/null 2>"$tmp/while.txt"
grep -q "(while), 1000 iterations" "$tmp/while.txt" && ok || bad "text profile names the trip count"

# bench: the timed runs only, as the `profile` member of --json
if "$hloi" bench "$tmp/dot.hlo" --iterations 7 --warmup 3 --json --profile=json >"$tmp/bench.json"; then
	ok
	check "bench profile runs" "$tmp/bench.json" "d['profile']['runs'] == 7 and d['median_s'] > 0"
	check "bench steps" "$tmp/bench.json" "[s['calls'] for s in d['profile']['steps'] if s['opcode'] == 'dot'] == [1]"
else
	bad "bench --profile --json: exit $?"
fi

# the trace: JSON with complete events, and worker tracks on two threads
cat >"$tmp/big.hlo" <<'HLO'
HloModule big
ENTRY main {
  a = f32[1024,1024] parameter(0)
  b = f32[1024,1024] parameter(1)
  ROOT r = f32[1024,1024] add(a, b)
}
HLO
if "$hloi" bench "$tmp/big.hlo" --iterations 2 --threads 2 --trace "$tmp/t.json" >/dev/null; then
	ok
	check "trace steps" "$tmp/t.json" "sum(1 for e in d['traceEvents'] if e['ph'] == 'X' and e['tid'] == 0 and e['name'] == 'r') == 2"
	check "trace workers" "$tmp/t.json" "set(e['tid'] for e in d['traceEvents'] if e['ph'] == 'X') == {0, 1, 2}"
else
	bad "bench --trace: exit $?"
fi

# participants: a profile per participant, reported per participant
cat >"$tmp/ar.hlo" <<'HLO'
HloModule ar, replica_count=4
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[1000] parameter(0)
  ROOT r = f32[1000] all-reduce(a), replica_groups={}, to_apply=sum
}
HLO
if "$hloi" run "$tmp/ar.hlo" --random-inputs --profile=json --trace "$tmp/ar.trace" >/dev/null 2>"$tmp/ar.json"; then
	ok
	check "participants" "$tmp/ar.json" "d['participants'] == 4 and [s['calls'] for s in d['steps'] if s['opcode'] == 'all-reduce'] == [1]"
	check "a process per participant" "$tmp/ar.trace" "set(e['pid'] for e in d['traceEvents']) == {0, 1, 2, 3}"
else
	bad "run --profile participants: exit $?"
fi

# results do not change under a profile
"$hloi" run "$src/testdata/sources/matrix_plus_vector.hlo" --inputs "$src/testdata/sources/matrix_plus_vector.inputs" >"$tmp/plain.out"
"$hloi" run "$src/testdata/sources/matrix_plus_vector.hlo" --inputs "$src/testdata/sources/matrix_plus_vector.inputs" --profile --compare >"$tmp/prof.out" 2>"$tmp/prof.err"
cmp -s "$tmp/plain.out" "$tmp/prof.out" && grep -q "^profile of" "$tmp/prof.err" && ok || bad "a profiled run prints the same result, the profile on stderr"

# bad values: usage errors (exit 2) naming the option
for args in "--top -1" "--profile=xml" "--peak-gflops 0" "--bandwidth abc" "--trace="; do
	# shellcheck disable=SC2086
	"$hloi" run "$tmp/dot.hlo" --random-inputs $args >/dev/null 2>"$tmp/err"
	rc=$?
	opt=$(echo "$args" | sed -E 's/[= ].*//')
	if [ $rc = 2 ] && grep -q -- "invalid $opt" "$tmp/err"; then ok; else bad "$args: exit $rc: $(cat "$tmp/err")"; fi
done
"$hloi" bench --calibrate "$tmp/dot.hlo" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "takes no PROGRAM" "$tmp/err" && ok || bad "--calibrate with a program"
# a trace that cannot be written: exit 4, a message, no file
"$hloi" run "$tmp/dot.hlo" --random-inputs --trace "$tmp/no/such/dir/t.json" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 4 ] && grep -q "cannot write --trace" "$tmp/err" && ok || bad "unwritable trace: exit $rc: $(cat "$tmp/err")"

echo "profile: $pass passed, $fail failed"
[ $fail = 0 ]
