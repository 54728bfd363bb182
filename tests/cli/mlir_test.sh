#!/bin/sh
# The StableHLO front end from the command line (doc/stablehlo.md): a
# JAX-style module run on both engines against NumPy, fmt and convert of
# the lowered HLO, format sniffing, check.* assertions (a failed one exits
# 1 naming the element), and bad input located in the .mlir file (exit 3).
# Usage: mlir_test.sh HLOI TESTDATA
set -u
hloi=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# tanh(x @ w).sum(1) against NumPy, on both engines
/usr/bin/python3 - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]
x = np.array([[0.5, -1.25, 2.0], [3.0, 0.25, -0.75]], np.float32)
w = np.array([[1.0, -0.5], [0.125, 2.0], [-1.5, 0.75]], np.float32)
np.save(d + "/x.npy", x)
np.save(d + "/w.npy", w)
np.save(d + "/want.npy", np.tanh(x @ w).sum(axis=1))
PY
for e in fast reference; do
	"$hloi" run --engine $e --input "$tmp/x.npy" --input "$tmp/w.npy" --output "$tmp/got_$e.npy" \
		"$data/stablehlo/jax_matmul_tanh.mlir" >/dev/null 2>"$tmp/err" || bad "run ($e): $(cat "$tmp/err")"
	/usr/bin/python3 -c "
import numpy as np, sys
g, w = np.load('$tmp/got_$e.npy'), np.load('$tmp/want.npy')
sys.exit(0 if g.shape == w.shape and np.allclose(g, w, rtol=1e-6) else 1)" || bad "jax_matmul_tanh ($e) differs from NumPy"
done

# fmt prints the lowered HLO, which runs to the same result; convert to .pb too
"$hloi" fmt "$data/stablehlo/jax_matmul_tanh.mlir" >"$tmp/f.hlo" 2>"$tmp/err" || bad "fmt: $(cat "$tmp/err")"
grep -q "ENTRY main" "$tmp/f.hlo" && grep -q "to_apply=act" "$tmp/f.hlo" || bad "fmt: no ENTRY main calling act"
"$hloi" convert "$data/stablehlo/jax_matmul_tanh.mlir" "$tmp/f.pb" 2>"$tmp/err" || bad "convert to .pb: $(cat "$tmp/err")"
for p in "$tmp/f.hlo" "$tmp/f.pb"; do
	"$hloi" run --input "$tmp/x.npy" --input "$tmp/w.npy" "$p" >"$tmp/a" 2>&1
	"$hloi" run --input "$tmp/x.npy" --input "$tmp/w.npy" "$data/stablehlo/jax_matmul_tanh.mlir" >"$tmp/b" 2>&1
	cmp -s "$tmp/a" "$tmp/b" || bad "$(basename "$p") and the .mlir print different results"
done
"$hloi" convert "$data/stablehlo/jax_matmul_tanh.mlir" "$tmp/out.mlir" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "cannot tell the format" "$tmp/err" || bad "convert to .mlir: exit 2 expected (not written)"

# by content: no extension
cp "$data/stablehlo/generic_forms.mlir" "$tmp/noext"
"$hloi" run "$tmp/noext" >"$tmp/out" 2>"$tmp/err" || bad "sniffed .mlir: $(cat "$tmp/err")"
grep -q "s32\[3\] {1, 2, 3}" "$tmp/out" || bad "generic_forms: sorted keys expected"

# a failed check: exit 1, the element named, located in the file
sed 's/dense<\[1, 2, 3\]>/dense<[1, 5, 3]>/' "$data/stablehlo/generic_forms.mlir" >"$tmp/badcheck.mlir"
for e in fast reference; do
	"$hloi" run --engine $e "$tmp/badcheck.mlir" >/dev/null 2>"$tmp/err"
	[ $? -eq 1 ] && grep -q "badcheck.mlir:15:3: error: check.expect_eq failed at index {1}: 2 (actual) vs 5 (expected)" "$tmp/err" ||
		bad "failed check ($e): exit 1 and the element expected, got: $(cat "$tmp/err")"
done

# bad input: exit 3 with a located error and a caret
expect_err() { # NAME TEXT WANT
	printf '%s\n' "$2" >"$tmp/$1.mlir"
	"$hloi" check "$tmp/$1.mlir" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 3 ] && grep -q "$3" "$tmp/err" && grep -q '\^' "$tmp/err" ||
		bad "$1: exit 3 and '$3' expected, got $rc: $(cat "$tmp/err")"
}
expect_err truncated 'func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>' "truncated.mlir:3:1: error: unexpected end of file"
expect_err unknown_op 'func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.frobnicate %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}' "unknown_op.mlir:2:8: error: unsupported op 'stablehlo.frobnicate'"
expect_err mismatch 'func.func @main(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}' "mismatch.mlir:2:8: error:"
expect_err undefined 'func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %zz : tensor<2xf32>
  return %0 : tensor<2xf32>
}' "undefined.mlir:2:26: error: use of undefined value '%zz'"
expect_err eltype 'func.func @main(%a: tensor<2xf7>) -> tensor<2xf7> {
  return %a : tensor<2xf7>
}' "eltype.mlir:1:30: error: unsupported element type 'f7'"
expect_err quant 'func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 1.0>>) -> tensor<2xf32> {
}' "quant.mlir:1:30: error: unsupported: quantized types"

# every prefix of a program: a located error (exit 3) or a program, never
# another exit (a crash, a sanitizer report)
f="$data/stablehlo/generic_forms.mlir"
n=$(wc -c <"$f")
i=1
while [ $i -lt "$n" ]; do
	head -c $i "$f" >"$tmp/prefix.mlir"
	"$hloi" check "$tmp/prefix.mlir" >/dev/null 2>"$tmp/err"
	rc=$?
	{ [ $rc -eq 3 ] && grep -q "prefix.mlir:[0-9]*:[0-9]*: error:" "$tmp/err"; } || [ $rc -eq 0 ] ||
		bad "prefix of $i bytes: exit $rc: $(head -2 "$tmp/err")"
	i=$((i + 29))
done

[ $fail -eq 0 ] && echo "mlir: all passed"
exit $((fail > 0))
