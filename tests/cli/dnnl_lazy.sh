#!/bin/sh
# oneDNN (eval/lib/dnnl.c) is opened only by the fast engine's f32
# convolution and bf16 dot that it covers and that are large enough (or
# any size with HLOI_DNNL=all); the reference engine, an f32 dot, a small
# bf16 dot, a depthwise convolution (hloi's own kernel) and HLOI_DNNL=0
# never load it. With HLOI_DNNL=0 the convolution and the bf16 dot take
# hloi's own paths (the fallback when the library is absent), and every
# run must agree with the reference engine (--compare; one ulp for bf16).
# The probe is glibc's dynamic linker (LD_DEBUG=files); elsewhere the test
# is skipped. Without libdnnl.so.2 the checks that want a load are skipped.
# Usage: dnnl_lazy.sh HLOI
set -u
hloi=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
cat >"$tmp/conv.hlo" <<'HLO'
HloModule conv
ENTRY main {
  x = f32[1,16,16,64] parameter(0)
  k = f32[3,3,64,64] parameter(1)
  ROOT r = f32[1,16,16,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
HLO
cat >"$tmp/small.hlo" <<'HLO'
HloModule small
ENTRY main {
  x = f32[2,3,7,5] parameter(0)
  k = f32[4,3,2,2] parameter(1)
  ROOT r = f32[2,4,4,2] convolution(x, k), window={size=2x2 stride=2x2 pad=1_0x0_-1}, dim_labels=bf01_oi01->bf01
}
HLO
cat >"$tmp/depthwise.hlo" <<'HLO'
HloModule depthwise
ENTRY main {
  x = f32[1,64,32,32] parameter(0)
  k = f32[64,1,3,3] parameter(1)
  ROOT r = f32[1,64,32,32] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=64
}
HLO
cat >"$tmp/dot.hlo" <<'HLO'
HloModule dot
ENTRY main {
  a = f32[64,64] parameter(0)
  ROOT d = f32[64,64] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
HLO
cat >"$tmp/bf16dot.hlo" <<'HLO'
HloModule bf16dot
ENTRY main {
  a = bf16[256,256] parameter(0)
  b = bf16[256,256] parameter(1)
  ROOT d = bf16[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
HLO
cat >"$tmp/bf16small.hlo" <<'HLO'
HloModule bf16small
ENTRY main {
  a = bf16[64,64] parameter(0)
  ROOT d = bf16[64,64] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
HLO
# loads DESCRIPTION WANT ENV COMMAND...: WANT 1 when the command must load
# oneDNN, 0 when it must not; ENV is HLOI_DNNL's value ("" unset)
loads() {
	desc=$1
	want=$2
	val=$3
	shift 3
	if [ -n "$val" ]; then
		HLOI_DNNL=$val LD_DEBUG=files "$@" >"$tmp/out" 2>"$tmp/err"
	else
		env -u HLOI_DNNL LD_DEBUG=files "$@" >"$tmp/out" 2>"$tmp/err"
	fi
	st=$?
	if [ "$st" != 0 ]; then
		fail=$((fail + 1))
		echo "FAIL: $desc: exit $st"
		grep -v '^ *[0-9]*:' "$tmp/err" | head -5
		return
	fi
	if grep -q 'file=.*libdnnl' "$tmp/err"; then got=1; else got=0; fi
	if [ "$want" = 1 ] && [ "$have" = 0 ]; then
		pass=$((pass + 1))  # no oneDNN here: the run passing is all
	elif [ "$got" = "$want" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		if [ "$want" = 1 ]; then echo "FAIL: $desc: oneDNN was not loaded"; else
			echo "FAIL: $desc: oneDNN was loaded"; fi
	fi
}

LD_DEBUG=files "$hloi" --version >/dev/null 2>"$tmp/probe"
if ! grep -q 'file=' "$tmp/probe"; then
	echo "LD_DEBUG=files says nothing here (not glibc?); skipped"
	exit 77
fi
# whether the library is there at all: the first run that wants it says so
have=1
HLOI_DNNL=all LD_DEBUG=files "$hloi" run "$tmp/small.hlo" --random-inputs >/dev/null 2>"$tmp/err"
grep -q 'file=.*libdnnl' "$tmp/err" || have=0
[ "$have" = 1 ] || echo "libdnnl.so.2 not loaded: checking the fallback only"

run="run --random-inputs --compare"
loads "fast f32 convolution" 1 "" "$hloi" $run "$tmp/conv.hlo"
loads "fast f32 convolution, HLOI_DNNL=0 (the fallback)" 0 0 "$hloi" $run "$tmp/conv.hlo"
loads "small convolution (hloi's own path)" 0 "" "$hloi" $run "$tmp/small.hlo"
loads "small convolution, HLOI_DNNL=all" 1 all "$hloi" $run "$tmp/small.hlo"
loads "depthwise convolution" 0 all "$hloi" $run "$tmp/depthwise.hlo"
loads "reference convolution" 0 all "$hloi" run "$tmp/conv.hlo" --random-inputs --engine reference
loads "dot" 0 all "$hloi" $run "$tmp/dot.hlo"
loads "fast bf16 dot" 1 "" "$hloi" $run "$tmp/bf16dot.hlo"
loads "fast bf16 dot, HLOI_DNNL=0 (the f32 GEMM tiles)" 0 0 "$hloi" $run "$tmp/bf16dot.hlo"
loads "small bf16 dot (the f32 GEMM tiles)" 0 "" "$hloi" $run "$tmp/bf16small.hlo"
loads "small bf16 dot, HLOI_DNNL=all" 1 all "$hloi" $run "$tmp/bf16small.hlo"
loads "reference bf16 dot" 0 all "$hloi" run "$tmp/bf16dot.hlo" --random-inputs --engine reference
loads "check" 0 all "$hloi" check "$tmp/conv.hlo"
echo "dnnl_lazy: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
