#!/bin/sh
# Renders the DOT of every program in testdata/sources/ with Graphviz
# (`dot -Tpng`), with and without --plan (fused regions as clusters), and
# fails when dot reports an error, so `hloi dot` output stays valid DOT. Exits 77 (skipped) when Graphviz is not installed.
# Usage: dot_render.sh HLOI TESTDATA
set -u
hloi=$1
data=$2

if ! command -v dot >/dev/null 2>&1; then
	echo "dot_render: Graphviz 'dot' not installed; skipping"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

for prog in "$data"/sources/*.hlo "$data"/sources/*.pb "$data"/sources/*.pbtxt; do
	[ -e "$prog" ] || continue
	name=$(basename "$prog")
	# Exit 3 (a program that does not type-check) still prints the graph.
	"$hloi" dot "$prog" >"$tmp/g.dot" 2>"$tmp/hloi.err"
	rc=$?
	hrc=$rc
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
		fail=$((fail + 1)); echo "FAIL: $name: hloi dot exited $rc"
		sed 's/^/  | /' "$tmp/hloi.err" | head -5
		continue
	fi
	if [ ! -s "$tmp/g.dot" ]; then
		fail=$((fail + 1)); echo "FAIL: $name: hloi dot printed no graph"
		continue
	fi
	rm -f "$tmp/g.png"
	dot -Tpng -o "$tmp/g.png" "$tmp/g.dot" 2>"$tmp/dot.err"
	rc=$?
	if [ "$rc" -ne 0 ] || grep -qi "error" "$tmp/dot.err" || [ ! -s "$tmp/g.png" ]; then
		fail=$((fail + 1)); echo "FAIL: $name: dot exited $rc"
		sed 's/^/  | /' "$tmp/dot.err" | head -5
		continue
	fi
	if [ -s "$tmp/dot.err" ]; then
		echo "note: $name: dot said:"
		sed 's/^/  | /' "$tmp/dot.err" | head -5
	fi
	pass=$((pass + 1))
	# a program that checks: its evaluation plan's regions as clusters too
	[ "$hrc" -eq 0 ] || continue
	if ! "$hloi" dot --plan "$prog" >"$tmp/p.dot" 2>"$tmp/hloi.err" || ! dot -Tpng -o "$tmp/p.png" "$tmp/p.dot" 2>"$tmp/dot.err" ||
	    grep -qi "error" "$tmp/dot.err"; then
		fail=$((fail + 1)); echo "FAIL: $name: dot --plan"
		sed 's/^/  | /' "$tmp/hloi.err" "$tmp/dot.err" | head -5
		continue
	fi
	pass=$((pass + 1))
done

if [ $((pass + fail)) -eq 0 ]; then
	echo "FAIL: no programs found in $data/sources"
	exit 1
fi
echo "dot_render: $pass rendered, $fail failed"
[ "$fail" -eq 0 ]
