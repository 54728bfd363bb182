#!/bin/sh
# Diagnostics on very long lines: a 16 MiB line with an error near its end
# is reported in well under a minute (it took minutes when the line was
# echoed a byte per write), as a window of the line around the column; so
# is a long line of NUL bytes.
# Usage: diag_test.sh HLOI
set -u
hloi=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# one line: `ENTRY e { ROOT c = f32[] constant(1) <16 MiB of spaces> bogus }`
{
	printf 'HloModule m\nENTRY e { ROOT c = f32[] constant(1)'
	head -c 16777216 /dev/zero | tr '\0' ' '
	printf ' bogus }\n'
} >"$tmp/long.hlo"
start=$(date +%s)
"$hloi" check "$tmp/long.hlo" >"$tmp/out" 2>"$tmp/err"
rc=$?
end=$(date +%s)
[ "$rc" -eq 3 ] || { echo "FAIL: exit $rc, expected 3"; fail=1; }
[ $((end - start)) -le 20 ] || { echo "FAIL: took $((end - start)) s"; fail=1; }
grep -q "^$tmp/long.hlo:2:16777260: error: expects '=' but sees '}'" "$tmp/err" ||
	{ echo "FAIL: no located error"; head -c 300 "$tmp/err"; fail=1; }
# every line printed is short: the source line is a window with ... at the cut
long=$(awk 'length($0) > 200' "$tmp/err" | wc -l)
[ "$long" -eq 0 ] || { echo "FAIL: $long printed lines longer than 200 bytes"; fail=1; }
grep -q '^\.\.\. .*bogus }$' "$tmp/err" || { echo "FAIL: no window around the column"; head -c 600 "$tmp/err"; fail=1; }
# a long line full of NUL bytes: refused at the first one, before the lexer
# (flex rescanned the token at every NUL: minutes for 400 KB)
awk 'BEGIN { printf "HloModule m\nENTRY e { ROOT c = f32[] constant(1), metadata={op_name=\""
	for (i = 0; i < 200000; i++) printf "a%c", 0; printf "\"} }\n" }' >"$tmp/nul.hlo"
start=$(date +%s)
"$hloi" check "$tmp/nul.hlo" >"$tmp/out" 2>"$tmp/err"
rc=$?
end=$(date +%s)
[ "$rc" -eq 3 ] || { echo "FAIL: NUL line: exit $rc, expected 3"; fail=1; }
[ $((end - start)) -le 20 ] || { echo "FAIL: NUL line took $((end - start)) s"; fail=1; }
grep -q "^$tmp/nul.hlo:2:59: error: invalid NUL byte in input" "$tmp/err" ||
	{ echo "FAIL: NUL line: no located error"; head -c 300 "$tmp/err"; fail=1; }
[ "$fail" -eq 0 ] && echo "diag_test: passed"
exit "$fail"
