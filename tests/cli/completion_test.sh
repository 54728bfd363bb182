#!/bin/bash
# The shell completions: the bash script, sourced, completes commands,
# options (for each command exactly those its --help lists), option values
# and files by type; the zsh script names every option of --help (and is
# parsed by zsh when zsh is installed). Usage: completion_test.sh HLOI DIR
set -u
hloi=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# shellcheck disable=SC1090,SC1091
source "$dir/hloi.bash"
complete -p hloi >/dev/null 2>&1 || bad "no completion registered for hloi"

# complete WORD... : sets COMPREPLY for the command line "hloi WORD..."
complete_line() {
	COMP_WORDS=(hloi "$@")
	COMP_CWORD=$#
	COMP_LINE="hloi $*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_hloi
}
replies() { printf '%s\n' "${COMPREPLY[@]}" | sort; }

complete_line r
[ "$(replies)" = run ] || bad "'hloi r' -> '$(replies)', expected run"
complete_line c
[ "$(replies | tr '\n' ' ')" = "check convert " ] || bad "'hloi c' -> '$(replies | tr '\n' ' ')'"
complete_line run --eng
[ "$(replies)" = --engine ] || bad "'hloi run --eng' -> '$(replies)'"
complete_line run --engine ""
[ "$(replies | tr '\n' ' ')" = "fast reference " ] || bad "--engine values: '$(replies | tr '\n' ' ')'"
complete_line check --format p
[ "$(replies | tr '\n' ' ')" = "pb pbtxt " ] || bad "--format values: '$(replies | tr '\n' ' ')'"

# each command's options are exactly those of its --help
for cmd in run check fmt lower layout test dot plan bench convert; do
	"$hloi" "$cmd" --help | grep -E '^  (-[a-zA-Z], )?--[a-zA-Z]' |
		sed -E 's/^  (-[a-zA-Z], )?(--[a-zA-Z_-]+).*/\2/' | sort -u >"$tmp/help"
	complete_line "$cmd" --
	replies >"$tmp/bash"
	cmp -s "$tmp/help" "$tmp/bash" || { bad "bash: hloi $cmd options differ from --help"; diff "$tmp/help" "$tmp/bash"; }
	# zsh: every option is named in the command's branch
	while IFS= read -r opt; do
		awk -v c="$cmd" '$0 ~ "^" c " *[|)]" || $0 ~ "\\| *" c "\\)" { on = 1; next } /^\t;;/ { on = 0 } on' \
			"$dir/_hloi" | grep -q -- "[\"'*,]$opt[=[]" ||
			bad "zsh: hloi $cmd does not offer $opt"
	done <"$tmp/help"
done

# files by type: programs for run, .npy and text for --input
mkdir -p "$tmp/w/sub"
: >"$tmp/w/a.hlo"
: >"$tmp/w/b.pb"
: >"$tmp/w/c.npy"
: >"$tmp/w/d.txt"
cd "$tmp/w" || exit 1
complete_line run ""
[ "$(replies | tr '\n' ' ')" = "a.hlo b.pb sub/ " ] || bad "run's program files: '$(replies | tr '\n' ' ')'"
complete_line run a.hlo --input ""
[ "$(replies | tr '\n' ' ')" = "c.npy d.txt sub/ " ] || bad "--input files: '$(replies | tr '\n' ' ')'"

if command -v zsh >/dev/null 2>&1; then
	zsh -n "$dir/_hloi" || bad "zsh cannot parse _hloi"
else
	echo "note: zsh not installed; _hloi checked by its text only"
fi
[ "$fail" -eq 0 ] && echo "completion_test: passed"
exit "$fail"
