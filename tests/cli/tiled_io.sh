#!/bin/sh
# Values with tiled layouts in and out of files: a program whose parameters
# and result are tiled (XLA's T(...), nested tiles, `*`, pad + tiles, L(n))
# must read the same .npy and literal-text inputs, and write the same .npy
# and text results byte for byte, as the same program without layouts
# (files are always in logical order), with both engines.
# Usage: tiled_io.sh HLOI
set -u
hloi=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
run() { # DESCRIPTION -- COMMAND...
	desc=$1; shift 2
	if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else bad "$desc: exit $?"; sed 's/^/  | /' "$tmp/err" | head -5; fi
}
same() { # FILE1 FILE2 DESCRIPTION
	if cmp -s "$1" "$2"; then ok; else bad "$3: $1 and $2 differ"; fi
}

# Inputs: two random arrays written by an identity program (no layouts).
cat >"$tmp/make.hlo" <<'HLO'
HloModule make
ENTRY main {
  ROOT x = bf16[5,300] parameter(0)
}
HLO
cat >"$tmp/make_y.hlo" <<'HLO'
HloModule make_y
ENTRY main {
  ROOT y = f32[3,4,10] parameter(0)
}
HLO
run "make x.npy" -- "$hloi" run "$tmp/make.hlo" --random-inputs=7 --output "$tmp/x.npy"
run "make y.npy" -- "$hloi" run "$tmp/make_y.hlo" --random-inputs=8 --output "$tmp/y.npy"
run "make y.txt" -- "$hloi" run "$tmp/make_y.hlo" --random-inputs=8 --output "$tmp/y.txt"

cat >"$tmp/tiled.hlo" <<'HLO'
HloModule tiled
ENTRY main {
  x = bf16[5,300]{1,0:T(8,128)(2,1)} parameter(0)
  y = f32[3,4,10]{2,0,1:T(*,2,4)(2,1)} parameter(1)
  xx = bf16[5,300]{0,1:T(8,128)} multiply(x, x)
  s = bf16[5,300]{1,0:pad(6,384)T(8,128)L(4096)} add(xx, x)
  f = f32[5,300]{1,0:T(4,128)} convert(s)
  yt = f32[10,3,4]{0,2,1:T(3,3)} transpose(y), dimensions={2,0,1}
  yr = f32[10,12]{1,0:T(2,8)} reshape(yt)
  ROOT r = f32[5,300]{0,1:T(2,4)(2,1)} add(f, f)
}
HLO
cat >"$tmp/tiled_y.hlo" <<'HLO'
HloModule tiled_y
ENTRY main {
  y = f32[3,4,10]{2,0,1:T(*,2,4)(2,1)} parameter(0)
  yt = f32[10,3,4]{0,2,1:T(3,3)} transpose(y), dimensions={2,0,1}
  ROOT yr = f32[10,12]{1,0:T(2,8)} reshape(yt)
}
HLO
sed 's/{[0-9,]*:[^}]*}//' "$tmp/tiled.hlo" >"$tmp/plain.hlo"
sed 's/{[0-9,]*:[^}]*}//' "$tmp/tiled_y.hlo" >"$tmp/plain_y.hlo"
if grep -q 'T(' "$tmp/plain.hlo" "$tmp/plain_y.hlo"; then bad "plain programs still have tiles"; fi

for engine in fast reference; do
	run "plain ($engine)" -- "$hloi" run "$tmp/plain.hlo" --engine $engine --input "$tmp/x.npy" --input "$tmp/y.npy" --output "$tmp/plain.npy"
	run "tiled ($engine)" -- "$hloi" run "$tmp/tiled.hlo" --engine $engine --input "$tmp/x.npy" --input "$tmp/y.npy" --output "$tmp/tiled.npy"
	same "$tmp/plain.npy" "$tmp/tiled.npy" ".npy result of the tiled program ($engine)"
	run "plain text ($engine)" -- "$hloi" run "$tmp/plain.hlo" --engine $engine --input "$tmp/x.npy" --input "$tmp/y.txt" --output "$tmp/plain.txt"
	run "tiled text ($engine)" -- "$hloi" run "$tmp/tiled.hlo" --engine $engine --input "$tmp/x.npy" --input "$tmp/y.txt" --output "$tmp/tiled.txt"
	same "$tmp/plain.txt" "$tmp/tiled.txt" "text result of the tiled program ($engine)"
	run "plain y ($engine)" -- "$hloi" run "$tmp/plain_y.hlo" --engine $engine --input "$tmp/y.npy" --output "$tmp/plain_y.npy"
	run "tiled y ($engine)" -- "$hloi" run "$tmp/tiled_y.hlo" --engine $engine --input "$tmp/y.txt" --output "$tmp/tiled_y.npy"
	same "$tmp/plain_y.npy" "$tmp/tiled_y.npy" ".npy result of a tiled reshape ($engine)"
	# a tiled result read back as a tiled input
	run "tiled y again ($engine)" -- "$hloi" run "$tmp/tiled_y.hlo" --engine $engine --input "$tmp/y.npy" --output "$tmp/tiled_y2.npy"
	same "$tmp/tiled_y.npy" "$tmp/tiled_y2.npy" "npy and text inputs agree ($engine)"
done
run "compare engines" -- "$hloi" run "$tmp/tiled.hlo" --compare --input "$tmp/x.npy" --input "$tmp/y.npy"
# random inputs are drawn in logical order: the same values whatever the layout
run "random plain" -- "$hloi" run "$tmp/plain.hlo" --random-inputs=3 --output "$tmp/rp.npy"
run "random tiled" -- "$hloi" run "$tmp/tiled.hlo" --random-inputs=3 --output "$tmp/rt.npy"
same "$tmp/rp.npy" "$tmp/rt.npy" "random inputs into tiled parameters"
# and the .pb form of the tiled program
run "convert to .pb" -- "$hloi" convert "$tmp/tiled.hlo" "$tmp/tiled.pb"
run "run the .pb" -- "$hloi" run "$tmp/tiled.pb" --input "$tmp/x.npy" --input "$tmp/y.npy" --output "$tmp/tiled_pb.npy"
same "$tmp/plain.npy" "$tmp/tiled_pb.npy" ".npy result of the tiled .pb program"

# a tiled constant through protos: LiteralProto values are in logical
# minor_to_major order, never in tiled order
cat >"$tmp/const.hlo" <<'HLO'
HloModule const
ENTRY main {
  c = s32[3,5]{0,1:T(2,2)(2,1)} constant({ { 1, 2, 3, 4, 5 }, { 6, 7, 8, 9, 10 }, { 11, 12, 13, 14, 15 } })
  ROOT r = s32[3,5] copy(c)
}
HLO
run "constant .hlo" -- "$hloi" run "$tmp/const.hlo" --output "$tmp/c_hlo.txt"
for ext in pb pbtxt; do
	run "constant to .$ext" -- "$hloi" convert "$tmp/const.hlo" "$tmp/const.$ext"
	run "constant .$ext" -- "$hloi" run "$tmp/const.$ext" --output "$tmp/c_$ext.txt"
	same "$tmp/c_hlo.txt" "$tmp/c_$ext.txt" "tiled constant through .$ext"
done
if grep -q "s32s: 1\b" "$tmp/const.pbtxt" && [ "$(grep -c 's32s:' "$tmp/const.pbtxt")" -eq 15 ] &&
	[ "$(grep 's32s:' "$tmp/const.pbtxt" | head -3 | tr -d ' ' | tr '\n' ,)" = "s32s:1,s32s:6,s32s:11," ]; then
	ok
else
	bad "the .pbtxt literal of a column-major tiled constant is in minor_to_major order"
	grep 's32s' "$tmp/const.pbtxt" | head -5
fi

# ops whose kernels place elements through strides, on tiled operands and
# results: the values of the same program without tiles, both engines
ops=$(dirname "$0")/../../testdata/layout/tiled_ops.hlo
sed -E 's/:T\([0-9,]+\)//g' "$ops" >"$tmp/ops_plain.hlo"
for eng in fast reference; do
	run "tiled ops ($eng)" -- "$hloi" run --engine $eng "$ops" --output "$tmp/ops_t_$eng.txt"
	run "untiled ops ($eng)" -- "$hloi" run --engine $eng "$tmp/ops_plain.hlo" --output "$tmp/ops_p_$eng.txt"
	sed -E 's/:T\([0-9,]+\)//g' "$tmp/ops_t_$eng.txt" >"$tmp/ops_t_$eng.plain"
	same "$tmp/ops_p_$eng.txt" "$tmp/ops_t_$eng.plain" "tiled ops with the $eng engine"
done
same "$tmp/ops_p_fast.txt" "$tmp/ops_p_reference.txt" "the untiled ops with both engines"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
