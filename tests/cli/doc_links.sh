#!/bin/sh
# Every relative Markdown link of README.md and doc/*.md resolves: the file
# or folder it names exists, and an anchor (#name) names a heading of the
# target page, as GitHub makes anchors from headings (lower case, spaces as
# dashes, punctuation dropped, -1, -2, ... after repeats). Links inside code
# (fenced blocks, `spans`) and to other sites are not links.
# Usage: doc_links.sh SOURCE_DIR
set -u
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# the targets of FILE's links, one a line
links() {
	awk '
		/^```/ { fence = !fence; next }
		fence { next }
		{
			line = $0
			gsub(/`[^`]*`/, "", line)
			while (match(line, /\]\([^) ]+\)/)) {
				print substr(line, RSTART + 2, RLENGTH - 3)
				line = substr(line, RSTART + RLENGTH)
			}
		}
	' "$1"
}
# the anchors of FILE's headings, one a line
anchors() {
	awk '
		/^```/ { fence = !fence; next }
		fence || !/^#+ / { next }
		{
			h = $0
			sub(/^#+ /, "", h)
			h = tolower(h)
			gsub(/[^a-z0-9_ -]/, "", h)
			gsub(/ /, "-", h)
			if (h in seen) { n = seen[h]++; print h "-" n } else { seen[h] = 1; print h }
		}
	' "$1"
}
checked=0
for file in "$root"/README.md "$root"/doc/*.md; do
	dir=$(dirname "$file")
	name=${file#"$root"/}
	links "$file" >"$tmp/links"
	while IFS= read -r target; do
		case $target in
		http://* | https://* | mailto:*) continue ;;
		esac
		path=${target%%#*}
		anchor=
		case $target in *'#'*) anchor=${target#*#} ;; esac
		if [ -z "$path" ]; then dest=$file; else dest=$dir/$path; fi
		checked=$((checked + 1))
		if [ ! -e "$dest" ]; then
			echo "FAIL: $name: link to $target: no such file"
			fail=1
			continue
		fi
		if [ -n "$anchor" ]; then
			case $dest in
			*.md)
				if ! anchors "$dest" | grep -qxF -- "$anchor"; then
					echo "FAIL: $name: link to $target: no such heading"
					fail=1
				fi
				;;
			esac
		fi
	done <"$tmp/links"
done
if [ "$checked" -eq 0 ]; then
	echo "FAIL: no links found"
	fail=1
fi
[ "$fail" -eq 0 ] && echo "doc_links: $checked links resolve"
exit "$fail"
