#!/bin/sh
# The man page is in step with --help: for every command, each long option
# its --help lists is in the command's section of hloi.1, and the section
# lists no other; the page renders without warnings when man is installed.
# Usage: man_test.sh HLOI MANPAGE
set -u
hloi=$1
page=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for cmd in run check fmt lower layout test dot bench convert; do
	# --help: option lines start with two spaces and a dash
	"$hloi" "$cmd" --help | grep -E '^  (-[a-zA-Z], )?--[a-zA-Z]' |
		sed -E 's/^  (-[a-zA-Z], )?(--[a-zA-Z_-]+).*/\2/' | sort -u >"$tmp/help"
	# the page: the line after each .TP of the section `.SS "hloi CMD ..."`,
	# up to the next .SS or .SH, outside .RS/.RE blocks; its first long name
	awk -v cmd="$cmd" '
		/^\.SS / { on = ($2 == "\"hloi" && $3 == cmd) ; next }
		/^\.SH / { on = 0 }
		/^\.RS/ { nested = 1 } /^\.RE/ { nested = 0 }
		on && !nested && tp { print; tp = 0; next }
		on && !nested && /^\.TP/ { tp = 1 }
	' "$page" | while IFS= read -r line; do
		printf '%s\n' "$line" | grep -o '\\-\\-[a-zA-Z_\\-]*' | head -1 | sed 's/\\//g'
	done | sort -u >"$tmp/man"
	if [ ! -s "$tmp/help" ]; then
		echo "FAIL: hloi $cmd --help lists no options"
		fail=1
	fi
	if ! cmp -s "$tmp/help" "$tmp/man"; then
		echo "FAIL: hloi $cmd: --help and hloi.1 differ (< --help only, > man page only):"
		diff "$tmp/help" "$tmp/man" | grep '^[<>]'
		fail=1
	fi
done
# every command of `hloi --help` has a section
for cmd in $("$hloi" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'); do
	grep -q "^\.SS \"hloi $cmd " "$page" || { echo "FAIL: no section for $cmd"; fail=1; }
done
if command -v man >/dev/null 2>&1; then
	if MANWIDTH=80 man --warnings -l "$page" 2>"$tmp/warn" >/dev/null && [ ! -s "$tmp/warn" ]; then :; else
		echo "FAIL: man warns:"; head "$tmp/warn"; fail=1
	fi
fi
[ "$fail" -eq 0 ] && echo "man_test: passed"
exit "$fail"
