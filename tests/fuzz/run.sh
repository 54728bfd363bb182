#!/bin/sh
# Runs each libFuzzer target for N seconds (default 60): configures a clang
# build with HLOI_FUZZ=ON into build-fuzz (or $HLOI_FUZZ_BUILD), replays the
# regressions first, then fuzzes with the seed corpus from testdata/ and
# tests/fuzz/corpus/. Installs nothing (clang and libclang-rt-14-dev are
# optional packages of tests/setup-deps.sh). A finding is saved in
# build-fuzz/findings/<target>/ and fails the script; move the reproducer into
# tests/fuzz/regressions/<target>/ once it is fixed.
# Usage: tests/fuzz/run.sh [SECONDS] [TARGET...]
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
all="hlo_check hlo_run literal_text npy pb pbtxt proto_run lower layout npy_file test_case"
targets=${*:-$all}
build=${HLOI_FUZZ_BUILD:-$root/build-fuzz}
cc=${HLOI_FUZZ_CC:-clang}

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "run.sh: $cc not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
	exit 1
fi

CC=$cc cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DHLOI_FUZZ=ON -DHLOI_WERROR=OFF >/dev/null
tgts=""
for t in $targets; do
	tgts="$tgts fuzz_$t replay_$t"
done
# shellcheck disable=SC2086
cmake --build "$build" --target $tgts

seed_ext() {
	case $1 in
	hlo_check | hlo_run | lower | test_case) echo .hlo ;;
	literal_text) echo .inputs ;;
	npy | npy_file) echo .npy ;;
	pb) echo .pb ;;
	pbtxt) echo .pbtxt ;;
	proto_run) echo .pb,.pbtxt ;;
	layout) echo .shape ;;
	*)
		echo "run.sh: unknown target $1 (targets: $all)" >&2
		exit 1
		;;
	esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in $targets; do
	ext=$(seed_ext "$t")
	echo "== fuzz $t: replay"
	if ! "$build/tests/fuzz/replay_$t" "$root/tests/fuzz/regressions/$t" --ext "$ext" \
		"$root/testdata" "$root/tests/fuzz/corpus" >"$build/replay_$t.log" 2>&1; then
		tail -40 "$build/replay_$t.log" >&2
		status=1
		continue
	fi
	# Seeds: the regressions, matching testdata files, extra seeds. The
	# working corpus grows in build-fuzz/corpus/<target>.
	work="$build/corpus/$t"
	seeds="$build/seeds/$t"
	findings="$build/findings/$t"
	rm -rf "$seeds"
	mkdir -p "$work" "$seeds" "$findings"
	for e in $(echo "$ext" | tr , ' '); do
		find "$root/testdata" -type f -name "*$e" -exec cp {} "$seeds/" \;
	done
	cp "$root/tests/fuzz/regressions/$t/"* "$seeds/" 2>/dev/null || true
	[ -d "$root/tests/fuzz/corpus/$t" ] && cp "$root/tests/fuzz/corpus/$t/"* "$seeds/"
	dict=""
	case $t in hlo_* | lower | test_case) dict="-dict=$root/tests/fuzz/hlo.dict" ;; esac
	echo "== fuzz $t: ${secs}s"
	# shellcheck disable=SC2086
	if ! "$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" $dict \
		"$work" "$seeds" >"$build/fuzz_$t.log" 2>&1; then
		tail -60 "$build/fuzz_$t.log" >&2
		echo "run.sh: $t: finding in $findings/" >&2
		status=1
	else
		grep -E '^stat::number_of_executed_units|^Done' "$build/fuzz_$t.log" || true
	fi
done
exit $status
