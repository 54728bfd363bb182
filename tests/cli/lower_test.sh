#!/bin/sh
# `hloi lower` on the golden corpus: every program that `hloi check` accepts
# but `hloi check --strict` rejects (with the case's --broadcast-mode flag)
# must lower to a program that `hloi check --strict` accepts and that `hloi
# run` evaluates to the same printed result (the case's .inputs, else random
# inputs; warnings on stderr may differ).
# Usage: lower_test.sh HLOI TESTDATA [SUBDIR...]
# (the sanitizer builds scan only the named subdirectories of TESTDATA)
set -u
hloi=$1
data=$2
shift 2
dirs=""
for d in "$@"; do dirs="$dirs $data/$d"; done
[ -n "$dirs" ] || dirs=$data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# the command line: help, usage errors (exit 2), a program that does not check (exit 3)
"$hloi" lower --help >"$tmp/out" 2>&1 && grep -q "usage: hloi lower" "$tmp/out" &&
	grep -q "Example:" "$tmp/out" || bad "lower --help"
"$hloi" lower >/dev/null 2>&1; [ $? -eq 2 ] || bad "lower without PROGRAM: exit 2 expected"
"$hloi" lower --bogus "$data/sources/matrix_plus_vector.hlo" >/dev/null 2>&1
[ $? -eq 2 ] || bad "lower --bogus: exit 2 expected"
"$hloi" lower "$data/broadcast/bad_order.hlo" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 3 ] && [ ! -s "$tmp/out" ] && grep -q "error: Broadcast dimensions order is wrong" "$tmp/err" ||
	bad "lower of a program that does not check: exit 3 and its diagnostics expected"

for f in $(find $dirs -name '*.hlo' | sort); do
	# the case's broadcast mode, from a `// hloi-flags:` line
	mode=""
	first=$(head -n 1 "$f")
	case "$first" in
	"// hloi-flags:"*)
		for w in ${first#// hloi-flags:}; do
			case "$w" in
			--broadcast-mode=*) mode="$w" ;;
			esac
		done
		;;
	esac
	"$hloi" check --strict "$f" $mode >/dev/null 2>&1 && continue
	"$hloi" check "$f" $mode >/dev/null 2>&1 || continue
	name=$(basename "$f" .hlo)
	low="$tmp/$name.hlo"
	if ! "$hloi" lower "$f" $mode >"$low" 2>"$tmp/err"; then
		bad "$f: hloi lower failed"; sed 's/^/  | /' "$tmp/err" | head -5; continue
	fi
	if ! "$hloi" check --strict "$low" >"$tmp/out" 2>&1; then
		bad "$f: the lowered program fails --strict"; sed 's/^/  | /' "$tmp/out" | head -8
		sed 's/^/  > /' "$low"; continue
	fi
	inputs="--random-inputs=7"
	[ -f "${f%.hlo}.inputs" ] && inputs="--inputs ${f%.hlo}.inputs"
	"$hloi" run "$f" $mode $inputs >"$tmp/before" 2>"$tmp/err1"
	rc1=$?
	"$hloi" run "$low" $inputs >"$tmp/after" 2>"$tmp/err2"
	rc2=$?
	if [ "$rc1" -ne 0 ]; then
		bad "$f: hloi run failed on the original"; sed 's/^/  | /' "$tmp/err1" | head -5; continue
	fi
	if [ "$rc1" -ne "$rc2" ] || ! cmp -s "$tmp/before" "$tmp/after"; then
		bad "$f: results differ after lowering (exit $rc1 vs $rc2)"
		diff "$tmp/before" "$tmp/after" | head -10 | sed 's/^/  | /'
		continue
	fi
	pass=$((pass + 1))
done
echo "lower: $pass lowered programs agree, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
