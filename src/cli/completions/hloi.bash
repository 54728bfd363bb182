# bash completion for hloi: commands, each command's options, the values of
# options that take a fixed set, and files by type (programs .hlo .pb
# .pbtxt; inputs .npy and literal text). Installed as
# share/bash-completion/completions/hloi; or `source` it.

_hloi_options() {
	case $1 in
	run) echo "--input --inputs --random-inputs --input_literals_file --output --print --print-inputs
		--print_literals --output_literals_file --dump-plan --strict --allow-mixed-precision --broadcast-mode --engine --compare --threads
		--max-memory --max-steps --timeout --quiet --format --input_format --color --replicas --partitions
		--infeed --outfeed --participant-input --participant-infeed --distributed --gather-output --host-recv --host-send
		--profile --top --trace --peak-gflops --bandwidth
		--probe --probe-all --probe-dir --max-probe-bytes --compare-with --help" ;;
	check) echo "--strict --allow-mixed-precision --broadcast-mode --format --max-memory --color --replicas --partitions --help" ;;
	dot) echo "--plan --engine --threads --strict --allow-mixed-precision --broadcast-mode --format --max-memory --color --help" ;;
	plan) echo "--cost --json --peak-gflops --bandwidth --engine --threads --strict --allow-mixed-precision --broadcast-mode
		--format --max-memory --color --help" ;;
	fmt) echo "--format --max-memory --color --help" ;;
	lower) echo "--broadcast-mode --format --max-memory --color --help" ;;
	layout) echo "--index --linear --color --help" ;;
	test) echo "--jobs --shard --junit --timeout --list --quiet --outputs --update --help" ;;
	bench) echo "--iterations --warmup --fresh-result --json --random-inputs --inputs --input --infeed
		--participant-infeed --host-recv --engine
		--threads --max-memory --replicas --partitions --strict --allow-mixed-precision --broadcast-mode --format --color --quiet
		--calibrate --profile --top --trace --peak-gflops --bandwidth --help" ;;
	convert) echo "--format --to --max-memory --color --help" ;;
	esac
}

# Files whose names end in one of the given extensions, and directories.
_hloi_files() {
	local cur=$1 f ext
	shift
	COMPREPLY=()
	while IFS= read -r f; do
		if [ -d "$f" ]; then
			COMPREPLY+=("$f/")
			continue
		fi
		for ext in "$@"; do
			case $f in
			*."$ext") COMPREPLY+=("$f") ;;
			esac
		done
	done < <(compgen -f -- "$cur")
	compopt -o nospace -o filenames 2>/dev/null
}

_hloi() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="run check fmt lower layout test dot plan bench convert"
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
		return
	fi
	local cmd=${COMP_WORDS[1]}
	case $prev in
	--format | --input_format | --to) COMPREPLY=($(compgen -W "hlo pb pbtxt" -- "$cur")); return ;;
	--engine) COMPREPLY=($(compgen -W "fast reference" -- "$cur")); return ;;
	--distributed) COMPREPLY=($(compgen -W "mpi none" -- "$cur")); return ;;
	--broadcast-mode) COMPREPLY=($(compgen -W "xla numpy" -- "$cur")); return ;;
	--color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
	--input) _hloi_files "$cur" npy txt inputs; return ;;
	--inputs) _hloi_files "$cur" inputs txt; return ;;
	--input_literals_file) _hloi_files "$cur" pb pbtxt txt; return ;;
	--output) _hloi_files "$cur" npy txt; return ;;
	--infeed) _hloi_files "$cur" npy txt; return ;;
	--outfeed) _hloi_files "$cur" txt; return ;;
	--participant-input | --participant-infeed | --host-recv | --host-send) return ;;
	--output_literals_file) _hloi_files "$cur" pb pbtxt; return ;;
	--junit) _hloi_files "$cur" xml; return ;;
	--outputs | --probe-dir | --compare-with) COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
	--probe | --max-probe-bytes) return ;;
	--threads | --max-memory | --max-steps | --timeout | --jobs | -j | --shard | --index | --linear | \
		--iterations | --warmup)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_hloi_options "$cmd")" -- "$cur"))
		return
	fi
	case $cmd in
	layout) ;;
	test) _hloi_files "$cur" hlo pb pbtxt shape ;;
	run | check | fmt | lower | dot | plan | bench | convert) _hloi_files "$cur" hlo pb pbtxt ;;
	esac
}

complete -F _hloi hloi
