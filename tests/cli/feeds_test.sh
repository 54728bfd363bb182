#!/bin/sh
# hloi run's infeed and outfeed files, black box: --outfeed writes literal
# text that --infeed reads back (tuples too), the errors of an unreadable
# infeed file, an outfeed file that cannot be written and several values
# for one .npy, --participant-input and --participant-infeed (their
# syntax, participants the run does not have, every participant with its
# own inputs), outfeed files per participant, and random infeed values
# that depend on the seed alone.
# Usage: feeds_test.sh HLOI
set -u
hloi=$1
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect() {
	code=$1; desc=$2; shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$code" ]; then ok; else bad "$desc: exit $rc, expected $code"; sed 's/^/  | /' "$tmp/err" | head -5; fi
}
contains() {
	if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in output"; sed 's/^/  | /' "$1" | head -5; fi
}
same() {
	if cmp -s "$1" "$2"; then ok; else bad "$3"; diff "$1" "$2" | head -5; fi
}

# echo: each infeed's value goes to an outfeed, a tuple and an array
cat >"$tmp/echo.hlo" <<'HLO'
HloModule echo
ENTRY main {
  tok = token[] after-all()
  a = ((f32[2], s32[]), token[]) infeed(tok)
  d = (f32[2], s32[]) get-tuple-element(a), index=0
  t = token[] get-tuple-element(a), index=1
  o = token[] outfeed(d, t)
  b = (u8[2,2], token[]) infeed(o)
  e = u8[2,2] get-tuple-element(b), index=0
  t2 = token[] get-tuple-element(b), index=1
  o2 = token[] outfeed(e, t2)
  ROOT r = s32[] get-tuple-element(d), index=1
}
HLO
printf '(f32[2], s32[]) ({1.5, -2}, 7)\nu8[2,2] {{1, 2}, {3, 4}}\n' >"$tmp/q.txt"

expect 0 "--outfeed FILE" -- "$hloi" run "$tmp/echo.hlo" --infeed "$tmp/q.txt" --outfeed "$tmp/o.txt"
printf 's32[] 7\n' >"$tmp/want"
same "$tmp/out" "$tmp/want" "with --outfeed only the result prints"
contains "$tmp/o.txt" "(f32[2], s32[]) ( {1.5, -2}, 7 )" "a tuple is written as its shape and values"
expect 0 "--infeed reads --outfeed's file back" -- "$hloi" run "$tmp/echo.hlo" --infeed "$tmp/o.txt" --outfeed "$tmp/o2.txt"
same "$tmp/o.txt" "$tmp/o2.txt" "the round trip gives the same outfeed file"
# two --infeed files: one after the other
printf '(f32[2], s32[]) ({0, 0}, 1)\n' >"$tmp/q1.txt"
printf 'u8[2,2] {{9, 9}, {9, 9}}\n' >"$tmp/q2.txt"
expect 0 "two --infeed files" -- "$hloi" run "$tmp/echo.hlo" --infeed "$tmp/q1.txt" --infeed "$tmp/q2.txt" --compare
contains "$tmp/out" "** Outfeed 1 (o2) **" "outfeed values print with their names"
contains "$tmp/out" "{ 9, 9 }" "the second file's value is the second infeed's"
contains "$tmp/out" "** Result **" "the result prints under its header after outfeed values"

expect 3 "a missing infeed file" -- "$hloi" run "$tmp/echo.hlo" --infeed "$tmp/none.txt"
contains "$tmp/err" "none.txt" "the missing file is named"
expect 4 "an outfeed file that cannot be written" -- "$hloi" run "$tmp/echo.hlo" --infeed "$tmp/q.txt" \
	--outfeed "$tmp/no/dir/o.txt"
contains "$tmp/err" "o.txt" "the outfeed file is named"
expect 3 "two values for one .npy" -- "$hloi" run "$tmp/echo.hlo" --infeed "$tmp/q.txt" --outfeed "$tmp/o.npy"
contains "$tmp/err" "a .npy file holds one array" "why .npy is refused"
[ ! -e "$tmp/o.npy" ] && ok || bad "no .npy left behind"
mkdir "$tmp/ro" && chmod a-w "$tmp/ro"
if [ "$(id -u)" -ne 0 ]; then
	expect 4 "an outfeed file in a read-only directory" -- "$hloi" run "$tmp/echo.hlo" --infeed "$tmp/q.txt" \
		--outfeed "$tmp/ro/o.txt"
fi
expect 3 "a value of another shape names both" -- "$hloi" run "$tmp/echo.hlo" --infeed "$tmp/q2.txt"
contains "$tmp/err" "infeed 'a' reads (f32[2], s32[]), but value 0 of the infeed queue is u8[2,2]" "both shapes"

# participants
cat >"$tmp/two.hlo" <<'HLO'
HloModule two, replica_count=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[] parameter(0)
  tok = token[] after-all()
  in = (f32[], token[]) infeed(tok)
  v = f32[] get-tuple-element(in), index=0
  t = token[] get-tuple-element(in), index=1
  y = f32[] multiply(v, x)
  o = token[] outfeed(y, t)
  ROOT s = f32[] all-reduce(y), replica_groups={}, to_apply=add
}
HLO
printf 'f32[] 2\n' >"$tmp/x0"
printf 'f32[] 3\n' >"$tmp/x1"
printf 'f32[] 10\n' >"$tmp/v"
printf 'f32[] 100\n' >"$tmp/v1"
expect 0 "every participant with inputs of its own" -- "$hloi" run "$tmp/two.hlo" --participant-input 0:"$tmp/x0" \
	--participant-input 1:"$tmp/x1" --infeed "$tmp/v" --participant-infeed 1:"$tmp/v1" --outfeed "$tmp/r.txt"
contains "$tmp/out" "f32[] 320" "2 * 10 + 3 * 100"
contains "$tmp/r.p0.txt" "f32[] 20" "participant 0's outfeed file"
contains "$tmp/r.p1.txt" "f32[] 300" "participant 1's outfeed file"
expect 2 "a participant the run does not have" -- "$hloi" run "$tmp/two.hlo" --input "$tmp/x0" \
	--participant-infeed 2:"$tmp/v"
contains "$tmp/err" "the module runs as 2 participants (0 to 1)" "the participants named"
expect 2 "--participant-input 2" -- "$hloi" run "$tmp/two.hlo" --participant-input 2:"$tmp/x0"
expect 2 "P:FILE without P" -- "$hloi" run "$tmp/two.hlo" --participant-input "$tmp/x0"
contains "$tmp/err" "P:FILE" "the form is named"
expect 2 "a participant without inputs" -- "$hloi" run "$tmp/two.hlo" --participant-input 0:"$tmp/x0" \
	--infeed "$tmp/v"
contains "$tmp/err" "participant 1 has no inputs" "the participant is named"

# random infeed values: the seed's alone
expect 0 "random infeed values" -- "$hloi" run "$tmp/echo.hlo" --random-inputs=5 --compare
cp "$tmp/out" "$tmp/rand5"
expect 0 "the same seed again" -- "$hloi" run "$tmp/echo.hlo" --random-inputs=5
same "$tmp/out" "$tmp/rand5" "the same seed gives the same infeed values"
expect 0 "another seed" -- "$hloi" run "$tmp/echo.hlo" --random-inputs=6
cmp -s "$tmp/out" "$tmp/rand5" && bad "another seed gives other values" || ok
expect 3 "without --random-inputs, no values" -- "$hloi" run "$tmp/echo.hlo"
contains "$tmp/err" "finds the infeed queue empty" "the empty queue"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
