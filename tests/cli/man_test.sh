#!/bin/sh
# The man page is in step with --help and with the manual: for every
# command, each long option its --help lists is in the command's section of
# hloi.1, and the section lists no other; the page renders without warnings
# when man is installed. With DOC (doc/cli.md), every option the man page
# lists for a command is in the option list of that command's section of
# DOC (the `--help` block under "#### `hloi CMD --help`"), and that list
# holds no other.
# Usage: man_test.sh HLOI MANPAGE [DOC]
set -u
hloi=$1
page=$2
doc=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# option lines of --help text start with two spaces and a dash; their
# first long name, one a line
help_opts() {
	grep -E '^  (-[a-zA-Z], )?--[a-zA-Z]' |
		sed -E 's/^  (-[a-zA-Z], )?(--[a-zA-Z_-]+).*/\2/' | sort -u
}
# the page: the line after each .TP of the section `.SS "hloi CMD ..."`,
# up to the next .SS or .SH, outside .RS/.RE blocks; its first long name
man_opts() {
	awk -v cmd="$1" '
		/^\.SS / { on = ($2 == "\"hloi" && $3 == cmd) ; next }
		/^\.SH / { on = 0 }
		/^\.RS/ { nested = 1 } /^\.RE/ { nested = 0 }
		on && !nested && tp { print; tp = 0; next }
		on && !nested && /^\.TP/ { tp = 1 }
	' "$page" | while IFS= read -r line; do
		printf '%s\n' "$line" | grep -o '\\-\\-[a-zA-Z_\\-]*' | head -1 | sed 's/\\//g'
	done | sort -u
}
# the manual: in the section "### `hloi CMD`..." (up to the next ## or ###
# heading), the first fenced block after the heading "#### `hloi CMD --help`"
doc_opts() {
	awk -v cmd="$1" '
		/^###? / { on = (index($0, "### `hloi " cmd "`") == 1); want = 0 }
		on && $0 == "#### `hloi " cmd " --help`" { want = 1; next }
		want && /^```/ { if (fence) { want = 0; fence = 0 } else fence = 1; next }
		want && fence { print }
	' "$doc" | help_opts
}
for cmd in run check fmt lower layout test dot bench convert; do
	"$hloi" "$cmd" --help | help_opts >"$tmp/help"
	man_opts "$cmd" >"$tmp/man"
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
# the manual lists, under each command, the options the man page lists
if [ -n "$doc" ]; then
	for cmd in $(sed -n 's/^\.SS "hloi \([a-z]*\) .*/\1/p' "$page"); do
		man_opts "$cmd" >"$tmp/man"
		doc_opts "$cmd" >"$tmp/doc"
		if [ ! -s "$tmp/doc" ]; then
			echo "FAIL: $doc: no option list under \"### \`hloi $cmd\`\""
			fail=1
		elif ! cmp -s "$tmp/man" "$tmp/doc"; then
			echo "FAIL: hloi $cmd: hloi.1 and $doc differ (< man page only, > manual only):"
			diff "$tmp/man" "$tmp/doc" | grep '^[<>]'
			fail=1
		fi
	done
fi
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
