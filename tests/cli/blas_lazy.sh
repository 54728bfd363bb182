#!/bin/sh
# OpenBLAS is opened only by an evaluation that calls it: `check`, `fmt`,
# `convert`, `layout`, a run without a product and a run of the reference
# engine never load the library (so never start its threads); the fast
# engine's f32 dot does, which shows the probe sees a load when there is
# one. The probe is glibc's dynamic linker (LD_DEBUG=files names every
# library it loads); elsewhere the test is skipped.
# Usage: blas_lazy.sh HLOI
set -u
hloi=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
cat >"$tmp/dot.hlo" <<'HLO'
HloModule dot
ENTRY main {
  a = f32[4,4] parameter(0)
  ROOT d = f32[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
HLO
cat >"$tmp/add.hlo" <<'HLO'
HloModule add
ENTRY main {
  a = f32[4,4] parameter(0)
  ROOT s = f32[4,4] add(a, a)
}
HLO
# loads DESCRIPTION WANT COMMAND...: WANT 1 when the command must load
# OpenBLAS, 0 when it must not
loads() {
	desc=$1
	want=$2
	shift 2
	if ! LD_DEBUG=files "$@" >"$tmp/out" 2>"$tmp/err"; then
		fail=$((fail + 1))
		echo "FAIL: $desc: exit $?"
		grep -v '^ *[0-9]*:' "$tmp/err" | head -5
		return
	fi
	if grep -q 'file=.*openblas' "$tmp/err"; then got=1; else got=0; fi
	if [ "$got" = "$want" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		if [ "$want" = 1 ]; then echo "FAIL: $desc: OpenBLAS was not loaded"; else
			echo "FAIL: $desc: OpenBLAS was loaded"; fi
	fi
}

# the probe: the dynamic linker must report the libraries it loads
LD_DEBUG=files "$hloi" --version >/dev/null 2>"$tmp/probe"
if ! grep -q 'file=' "$tmp/probe"; then
	echo "LD_DEBUG=files says nothing here (not glibc?); skipped"
	exit 77
fi

loads "fast dot" 1 "$hloi" run "$tmp/dot.hlo" --random-inputs
loads "check" 0 "$hloi" check "$tmp/dot.hlo"
loads "fmt" 0 "$hloi" fmt "$tmp/dot.hlo"
loads "convert to .pb" 0 "$hloi" convert "$tmp/dot.hlo" "$tmp/dot.pb"
loads "check of the .pb" 0 "$hloi" check "$tmp/dot.pb"
loads "layout" 0 "$hloi" layout 'f32[4,4]{0,1}'
loads "run without a product" 0 "$hloi" run "$tmp/add.hlo" --random-inputs
loads "reference dot" 0 "$hloi" run "$tmp/dot.hlo" --random-inputs --engine reference
echo "blas_lazy: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
