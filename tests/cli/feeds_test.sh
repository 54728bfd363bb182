#!/bin/sh
# hloi run's infeed and outfeed files, black box: --outfeed writes literal
# text that --infeed reads back (tuples too), the errors of an unreadable
# infeed file, an outfeed file that cannot be written and several values
# for one .npy, --participant-input and --participant-infeed (their
# syntax, participants the run does not have, every participant with its
# own inputs), outfeed files per participant, and random infeed values
# that depend on the seed alone. Host transfers (send and recv with
# is_host_transfer=true): --host-send files read back by --host-recv, a
# channel's values kept apart from the others' and from the outfeeds',
# the CH:FILE syntax, a channel's file running out, random values by seed
# for a channel without a file, per-participant --host-send files.
# hloi bench with the same flags: every run reads the queues from their
# start, random values without a file, the usage errors name bench.
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

# random values of MODULE's WHAT (infeeds, host recvs): the seed's alone
seeded() {
	expect 0 "random $2 values" -- "$hloi" run "$1" --random-inputs=5 --compare
	cp "$tmp/out" "$tmp/rand5"
	expect 0 "the same seed again" -- "$hloi" run "$1" --random-inputs=5
	same "$tmp/out" "$tmp/rand5" "the same seed gives the same $2 values"
	expect 0 "another seed" -- "$hloi" run "$1" --random-inputs=6
	cmp -s "$tmp/out" "$tmp/rand5" && bad "another seed gives other $2 values" || ok
}
seeded "$tmp/echo.hlo" infeed
expect 3 "without --random-inputs, no values" -- "$hloi" run "$tmp/echo.hlo"
contains "$tmp/err" "finds the infeed queue empty" "the empty queue"

# host transfers: channel 1 echoes to channel 2, an outfeed in between
cat >"$tmp/host.hlo" <<'HLO'
HloModule host
ENTRY main {
  tok = token[] after-all()
  r = (f32[2], u32[], token[]) recv(tok), channel_id=1, is_host_transfer=true
  rd = (f32[2], token[]) recv-done(r), channel_id=1, is_host_transfer=true
  x = f32[2] get-tuple-element(rd), index=0
  t = token[] get-tuple-element(rd), index=1
  y = f32[2] add(x, x)
  s = (f32[2], u32[], token[]) send(y, t), channel_id=2, is_host_transfer=true
  sd = token[] send-done(s), channel_id=2, is_host_transfer=true
  o = token[] outfeed(x, sd)
  s3 = (f32[2], u32[], token[]) send(x, o), channel_id=3, is_host_transfer=true
  sd3 = token[] send-done(s3), channel_id=3, is_host_transfer=true
  ROOT z = f32[2] negate(x)
}
HLO
printf 'f32[2] {1.5, -4}\n' >"$tmp/h1.txt"
expect 0 "--host-send CH:FILE" -- "$hloi" run "$tmp/host.hlo" --host-recv 1:"$tmp/h1.txt" --host-send 2:"$tmp/s2.txt" \
	--outfeed "$tmp/of.txt" --compare
printf '** Host send 1 (s3, channel 3) **\nf32[2] {1.5, -4}\n** Result **\nf32[2] {-1.5, 4}\n' >"$tmp/want"
same "$tmp/out" "$tmp/want" "channel 3 without a file prints; channel 2 and the outfeed go to their files"
printf 'f32[2] {3, -8}\n' >"$tmp/want"
same "$tmp/s2.txt" "$tmp/want" "channel 2's file holds its value alone"
printf 'f32[2] {1.5, -4}\n' >"$tmp/want"
same "$tmp/of.txt" "$tmp/want" "the outfeed file holds the outfeed's value alone"
expect 0 "--host-recv reads --host-send's file back" -- "$hloi" run "$tmp/host.hlo" --host-recv 1:"$tmp/s2.txt" \
	--host-send 2:"$tmp/s2b.txt" --host-send 3:"$tmp/s3.txt" --outfeed /dev/null
printf 'f32[2] {6, -16}\n' >"$tmp/want"
same "$tmp/s2b.txt" "$tmp/want" "the round trip doubles again"
printf 'f32[2] {-3, 8}\n' >"$tmp/want"
same "$tmp/out" "$tmp/want" "with every value in a file only the result prints"
expect 2 "CH:FILE without CH" -- "$hloi" run "$tmp/host.hlo" --host-recv "$tmp/h1.txt"
contains "$tmp/err" "invalid --host-recv" "the flag is named"
contains "$tmp/err" "CH:FILE" "the form is named"
expect 2 "a negative channel" -- "$hloi" run "$tmp/host.hlo" --host-send -1:"$tmp/x.txt"
expect 3 "another channel's file does not feed channel 1" -- "$hloi" run "$tmp/host.hlo" --host-recv 2:"$tmp/h1.txt"
contains "$tmp/err" "--host-recv 1:FILE" "the missing flag is named"
expect 3 "a missing --host-recv file" -- "$hloi" run "$tmp/host.hlo" --host-recv 1:"$tmp/nothing.txt"
contains "$tmp/err" "nothing.txt" "the file is named"
seeded "$tmp/host.hlo" "host recv"
expect 0 "--random-inputs with a file: the file's values" -- "$hloi" run "$tmp/host.hlo" --random-inputs \
	--host-recv 1:"$tmp/h1.txt"
contains "$tmp/out" "f32[2] {3, -8}" "the file's value, doubled"

# a channel's file runs out: the second iteration's recv fails
cat >"$tmp/host_loop.hlo" <<'HLO'
HloModule host_loop
cond {
  s = (s32[], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  t = token[] get-tuple-element(s), index=1
  r = (s32[], u32[], token[]) recv(t), channel_id=5, is_host_transfer=true
  rd = (s32[], token[]) recv-done(r), channel_id=5, is_host_transfer=true
  x = s32[] get-tuple-element(rd), index=0
  t1 = token[] get-tuple-element(rd), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT next = (s32[], token[]) tuple(i1, t1)
}
ENTRY main {
  tok = token[] after-all()
  zero = s32[] constant(0)
  init = (s32[], token[]) tuple(zero, tok)
  ROOT loop = (s32[], token[]) while(init), condition=cond, body=body
}
HLO
printf 's32[] 4\n' >"$tmp/h5.txt"
expect 3 "channel 5's file holds one value for two recvs" -- "$hloi" run "$tmp/host_loop.hlo" --host-recv 5:"$tmp/h5.txt"
contains "$tmp/err" "receives from the host on channel 5, which gives no value (after 1 value)" "the count so far"

# several participants: each sends its replica id; one file each
cat >"$tmp/host_two.hlo" <<'HLO'
HloModule host_two, replica_count=2
ENTRY main {
  tok = token[] after-all()
  id = u32[] replica-id()
  s = (u32[], u32[], token[]) send(id, tok), channel_id=1, is_host_transfer=true
  sd = token[] send-done(s), channel_id=1, is_host_transfer=true
  ROOT r = u32[] all-reduce(id), replica_groups={{0,1}}, to_apply={
    a = u32[] parameter(0)
    b = u32[] parameter(1)
    ROOT c = u32[] add(a, b)
  }
}
HLO
expect 0 "host sends of two participants" -- "$hloi" run "$tmp/host_two.hlo" --host-send 1:"$tmp/hs.txt"
contains "$tmp/hs.p0.txt" "u32[] 0" "replica 0's host send file"
contains "$tmp/hs.p1.txt" "u32[] 1" "replica 1's host send file"
expect 0 "host sends of two participants printed" -- "$hloi" run "$tmp/host_two.hlo"
contains "$tmp/out" "** Replica 1, partition 0: host send 0 (s, channel 1) **" "the participant is named"

# --- hloi bench: the echo module's two infeeds from a file, every run
# from the queue's start (a queue of exactly two values lasts 5 runs)
expect 0 "bench --infeed" -- "$hloi" bench "$tmp/echo.hlo" --infeed "$tmp/q.txt" --iterations 3 --warmup 2 --json
contains "$tmp/out" '"median_s":' "bench --infeed reports its times"
printf '(f32[2], s32[]) ({0, 0}, 1)\n' >"$tmp/one.txt"
expect 3 "bench --infeed: a queue of one value for two infeeds" -- "$hloi" bench "$tmp/echo.hlo" --infeed "$tmp/one.txt" --iterations 1
contains "$tmp/err" "finds the infeed queue empty (after 1 value)" "bench reads the file's queue"
printf 'f32[3] {1, 2, 3}\n' >"$tmp/wrong.txt"
expect 3 "bench --infeed: a value of another shape" -- "$hloi" bench "$tmp/echo.hlo" --infeed "$tmp/wrong.txt" --iterations 1
expect 0 "bench without --infeed: random infeed values" -- "$hloi" bench "$tmp/echo.hlo" --iterations 2
expect 2 "bench --participant-infeed of a participant the run lacks" -- "$hloi" bench "$tmp/echo.hlo" --participant-infeed 3:"$tmp/q.txt"
contains "$tmp/err" "hloi bench: --participant-infeed 3:" "the usage error names bench"
expect 2 "bench --host-recv without a channel" -- "$hloi" bench "$tmp/echo.hlo" --host-recv "$tmp/q.txt"
contains "$tmp/err" "hloi bench: invalid --host-recv" "the usage error names bench"
printf "s32[] 4\ns32[] 5\n" >"$tmp/h5b.txt"
expect 0 "bench --host-recv" -- "$hloi" bench "$tmp/host_loop.hlo" --host-recv 5:"$tmp/h5b.txt" --iterations 2
expect 3 "bench --host-recv: the channel's file runs out" -- "$hloi" bench "$tmp/host_loop.hlo" --host-recv 5:"$tmp/h5.txt" --iterations 1
contains "$tmp/err" "which gives no value (after 1 value)" "bench reads the channel's file"
# the bytes of a run count a tuple result's elements
cat >"$tmp/tuple.hlo" <<'HLO'
HloModule tuple_bytes
ENTRY main {
  p = f32[1000] parameter(0)
  n = f32[1000] negate(p)
  ROOT r = (f32[1000], (f32[1000], s32[2])) tuple(n, (f32[1000], s32[2]) tuple(p, s32[2] constant({1, 2})))
}
HLO
expect 0 "bench of a tuple result" -- "$hloi" bench "$tmp/tuple.hlo" --iterations 1 --json
contains "$tmp/out" '"bytes":12008,' "the bytes are the input's and every element of the result's"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
