#!/bin/sh
# Participants as MPI ranks (doc/mpi.md), on this host's loopback: every
# module of testdata/ops/collectives with several participants, one module
# of XLA's tests with four partitions, and a module of every collective on
# bf16, c64, f8e4m3fn, f32 (a reducer that is no monoid) and s32 give under
# `mpirun -np N` what the thread runtime gives (--replicas N): the same
# printed results and exit status, and byte for byte the same result files
# (--output, one per participant, each written by its rank), with one
# participant per rank and with two (threads of one rank); NumPy checks
# an all-reduce and an all-gather of inputs each rank reads for its own
# participants alone (--participant-input); a rank whose input is bad ends
# every rank, naming itself; ranks that wait for one another end at
# --timeout; a job whose ranks cannot share the participants evenly is
# refused; the memory budget is per
# rank (a module the thread runtime refuses under --max-memory runs); hloi
# bench reports once, from rank 0.
# Skipped without Open MPI's mpirun. Each mpirun is bounded by a timeout.
# Usage: mpi_test.sh HLOI TESTDATA
set -u
hloi=$1
data=$2
if ! command -v mpirun >/dev/null 2>&1 || ! mpirun --version 2>/dev/null | grep -q "Open MPI"; then
	echo "Open MPI's mpirun not found (Debian: openmpi-bin); skipped"
	exit 77
fi
# CI runs as root; shared memory between the ranks without ptrace rights
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() {
	pass=$((pass + 1))
}
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*"
}

# without mpirun, a run of several participants never opens MPI (glibc's
# dynamic linker names what it loads)
if LD_DEBUG=files "$hloi" run "$data/ops/collectives/replicas.hlo" >/dev/null 2>"$tmp/ld.err"; then
	if grep -q "libmpi" "$tmp/ld.err"; then
		bad "a run without mpirun loaded libmpi"
	else
		ok
	fi
else
	bad "replicas.hlo without mpirun failed"
fi
# Under ASan, the ranks leave leak checking aside: Open MPI keeps what its
# plugins allocate past MPI_Finalize and unloads them, so that the leaks
# cannot even be told apart by library (the runs in one process keep it).
mpi() {
	n=$1
	shift
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		timeout 60 mpirun --allow-run-as-root --oversubscribe -np "$n" "$hloi" "$@"
}

# same N DESCRIPTION ARGS...: `hloi run ARGS` and N ranks of it print the
# same and exit alike (N below the participants: several on each rank)
same() {
	n=$1
	desc=$2
	shift 2
	"$hloi" run --quiet "$@" >"$tmp/t.out" 2>"$tmp/t.err"
	trc=$?
	mpi "$n" run --quiet "$@" >"$tmp/m.out" 2>"$tmp/m.err"
	mrc=$?
	if [ "$trc" != "$mrc" ] || ! cmp -s "$tmp/t.out" "$tmp/m.out"; then
		bad "$desc: threads exit $trc, $n ranks exit $mrc"
		diff "$tmp/t.out" "$tmp/m.out" | head -5
		head -5 "$tmp/m.err"
	else
		ok
	fi
}

# the participants of a module: its header's counts, or the flags'
count_of() {
	r=$(grep -o 'replica_count=[0-9]*' "$1" | head -1 | cut -d= -f2)
	p=$(grep -o 'num_partitions=[0-9]*' "$1" | head -1 | cut -d= -f2)
	fr=$(echo "$2" | grep -o -- '--replicas[= ][0-9]*' | grep -o '[0-9]*$')
	fp=$(echo "$2" | grep -o -- '--partitions[= ][0-9]*' | grep -o '[0-9]*$')
	echo $(( ${fr:-${r:-1}} * ${fp:-${p:-1}} ))
}

# the goldens: every collective, the four group modes, iota and mesh
# groups, -start/-done, send/recv, a participant that ends early
for f in "$data"/ops/collectives/*.hlo; do
	flags=$(sed -n 's,^// hloi-flags: ,,p' "$f" | head -1)
	n=$(count_of "$f" "$flags")
	[ "$n" -gt 1 ] && [ "$n" -le 8 ] || continue
	case $f in
	*send_recv_deadlock*) continue ;; # ranks cannot tell: --timeout, below
	esac
	# shellcheck disable=SC2086
	same "$n" "$(basename "$f")" $flags "$f"
	# two participants on each rank, one thread each
	# shellcheck disable=SC2086
	[ "$n" -ge 4 ] && same $((n / 2)) "$(basename "$f") on $((n / 2)) ranks" $flags "$f"
done

# a module of XLA's tests with four partitions (its collectives in a loop)
xla="$data/corpus/openxla-xla/xla/hlo/parser/hlo_parser_test-160.hlo.txt"
[ -f "$xla" ] && same 4 "hlo_parser_test-160" --random-inputs=5 "$xla"

# element types and reducers, results compared byte for byte
cat >"$tmp/types.hlo" <<'HLO'
HloModule types, replica_count=4

add_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}

add_c64 {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT s = c64[] add(a, b)
}

max_f8 {
  a = f8e4m3fn[] parameter(0)
  b = f8e4m3fn[] parameter(1)
  ROOT m = f8e4m3fn[] maximum(a, b)
}

halve_add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  h = f32[] constant(0.5)
  ah = f32[] multiply(a, h)
  ROOT s = f32[] add(ah, b)
}

ENTRY main {
  x = bf16[16] parameter(0)
  y = c64[8] parameter(1)
  z = f8e4m3fn[8] parameter(2)
  w = f32[16] parameter(3)
  q = s32[8] parameter(4)
  ar_bf16 = bf16[16] all-reduce(x), replica_groups={{0,1,2,3}}, to_apply=add_bf16
  ar_c64 = c64[8] all-reduce(y), replica_groups={{3,1},{0,2}}, to_apply=add_c64
  ar_f8 = f8e4m3fn[8] all-reduce(z), replica_groups={}, to_apply=max_f8
  ar_odd = f32[16] all-reduce(w), replica_groups={{2,0,3,1}}, to_apply=halve_add
  ag = s32[32] all-gather(q), dimensions={0}, replica_groups={}
  rs = f32[4] reduce-scatter(w), dimensions={0}, replica_groups={{3,2,1,0}}, to_apply=halve_add
  a2a = bf16[16] all-to-all(x), dimensions={0}, replica_groups={{1,0,3,2}}
  cp = c64[8] collective-permute(y), source_target_pairs={{0,3},{3,1},{1,0}}
  ROOT t = (bf16[16], c64[8], f8e4m3fn[8], f32[16], s32[32], f32[4], bf16[16], c64[8]) tuple(ar_bf16, ar_c64, ar_f8, ar_odd, ag, rs, a2a, cp)
}
HLO
same 4 "types (printed)" --random-inputs=7 "$tmp/types.hlo"
same 2 "types (printed) on 2 ranks" --random-inputs=7 "$tmp/types.hlo"
for engine in fast reference; do
	"$hloi" run --quiet --engine "$engine" --random-inputs=9 --output "$tmp/t.npy" "$tmp/types.hlo" 2>"$tmp/t.err" ||
		bad "types ($engine): threads failed: $(head -3 "$tmp/t.err")"
	mpi 4 run --quiet --engine "$engine" --random-inputs=9 --output "$tmp/m.npy" "$tmp/types.hlo" 2>"$tmp/m.err" ||
		bad "types ($engine): ranks failed: $(head -3 "$tmp/m.err")"
	for p in 0 1 2 3; do
		for k in 0 1 2 3 4 5 6 7; do
			if cmp -s "$tmp/t.p$p.$k.npy" "$tmp/m.p$p.$k.npy" && [ -s "$tmp/m.p$p.$k.npy" ]; then
				ok
			else
				bad "types ($engine): participant $p, element $k differs (or is missing)"
			fi
		done
	done
	rm -f "$tmp"/t.p* "$tmp"/m.p*
done

# a large all-reduce, cut into slices each member folds (elements not a
# multiple of the group; a reducer that is no monoid): the same bytes, in
# a budget the whole operands of every member would not fit
cat >"$tmp/ar.hlo" <<'HLO'
HloModule ar, replica_count=4

halve_add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  h = f32[] constant(0.5)
  ah = f32[] multiply(a, h)
  ROOT s = f32[] add(ah, b)
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[1048573] parameter(0)
  a = f32[1048573] all-reduce(x), replica_groups={{3,0,2,1}}, to_apply=add
  b = f32[1048573] all-reduce(a), replica_groups={{1,2},{3,0}}, to_apply=halve_add
  ROOT m = f32[1048573] multiply(a, b)
}
HLO
"$hloi" run --quiet --random-inputs=2 --output "$tmp/art.npy" "$tmp/ar.hlo" 2>"$tmp/t.err" ||
	bad "large all-reduce: threads failed: $(head -3 "$tmp/t.err")"
for n in 4 2; do
	# 19.5M for each participant (a rank's budget is its participants'):
	# the whole operands of every member would need 21M
	mpi "$n" run --quiet --random-inputs=2 --max-memory $((79872 / n))K --output "$tmp/arm.npy" "$tmp/ar.hlo" 2>"$tmp/m.err" ||
		bad "large all-reduce on $n ranks failed: $(head -3 "$tmp/m.err")"
	for p in 0 1 2 3; do
		if cmp -s "$tmp/art.p$p.npy" "$tmp/arm.p$p.npy"; then
			ok
		else
			bad "large all-reduce on $n ranks: participant $p differs"
		fi
	done
	rm -f "$tmp"/arm.p*
done

# reduce-scatter and all-gather along the layout's most major dimension
# (blocks that are runs of bytes, moved alone) and along another, both
# layouts; collective-permute (moved between the pairs alone); all-to-all
# (each block to its member alone)
cat >"$tmp/rs.hlo" <<'HLO'
HloModule rs, replica_count=4

halve_add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  h = f32[] constant(0.5)
  ah = f32[] multiply(a, h)
  ROOT s = f32[] add(ah, b)
}

add_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}

ENTRY main {
  x = f32[8,6]{1,0} parameter(0)
  y = bf16[4,12]{0,1} parameter(1)
  r0 = f32[2,6]{1,0} reduce-scatter(x), dimensions={0}, replica_groups={{2,0,3,1}}, to_apply=halve_add
  r1 = f32[4,6]{1,0} reduce-scatter(x), dimensions={0}, replica_groups={{1,0},{3,2}}, to_apply=halve_add
  r2 = f32[8,3]{1,0} reduce-scatter(x), dimensions={1}, replica_groups={{0,1},{2,3}}, to_apply=halve_add
  r3 = bf16[4,3]{0,1} reduce-scatter(y), dimensions={1}, replica_groups={{3,1,2,0}}, to_apply=add_bf16
  g0 = f32[32,6]{1,0} all-gather(x), dimensions={0}, replica_groups={{2,0,3,1}}
  g1 = f32[16,6]{1,0} all-gather(x), dimensions={0}, replica_groups={{1,0},{3,2}}
  g2 = f32[8,12]{1,0} all-gather(x), dimensions={1}, replica_groups={{0,1},{2,3}}
  g3 = bf16[4,48]{0,1} all-gather(y), dimensions={1}, replica_groups={{3,1,2,0}}
  p0 = f32[8,6]{1,0} collective-permute(x), source_target_pairs={{0,2},{2,3},{3,0}}
  p1 = bf16[4,12]{0,1} collective-permute(y), source_target_pairs={{1,1},{0,3}}
  a0 = f32[8,6]{1,0} all-to-all(x), dimensions={0}, replica_groups={{2,0,3,1}}
  a1 = f32[8,6]{1,0} all-to-all(x), dimensions={1}, replica_groups={{1,0},{3,2}}
  a2 = bf16[4,12]{0,1} all-to-all(y), dimensions={1}, replica_groups={{3,1,2,0}}
  ROOT t = (f32[2,6]{1,0}, f32[4,6]{1,0}, f32[8,3]{1,0}, bf16[4,3]{0,1}, f32[32,6]{1,0}, f32[16,6]{1,0}, f32[8,12]{1,0}, bf16[4,48]{0,1}, f32[8,6]{1,0}, bf16[4,12]{0,1}, f32[8,6]{1,0}, f32[8,6]{1,0}, bf16[4,12]{0,1}) tuple(r0, r1, r2, r3, g0, g1, g2, g3, p0, p1, a0, a1, a2)
}
HLO
"$hloi" run --quiet --random-inputs=4 --output "$tmp/rst.npy" "$tmp/rs.hlo" 2>"$tmp/t.err" ||
	bad "reduce-scatter: threads failed: $(head -3 "$tmp/t.err")"
for n in 4 2; do
	mpi "$n" run --quiet --random-inputs=4 --output "$tmp/rsm.npy" "$tmp/rs.hlo" 2>"$tmp/m.err" ||
		bad "reduce-scatter on $n ranks failed: $(head -3 "$tmp/m.err")"
	for p in 0 1 2 3; do
		for k in 0 1 2 3 4 5 6 7 8 9 10 11 12; do
			if cmp -s "$tmp/rst.p$p.$k.npy" "$tmp/rsm.p$p.$k.npy"; then
				ok
			else
				bad "reduce-scatter, all-gather, permute, all-to-all on $n ranks: participant $p, element $k differs"
			fi
		done
	done
	rm -f "$tmp"/rsm.p*
done

# NumPy: each rank reads its participant's inputs alone
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	cat >"$tmp/np.hlo" <<'HLO'
HloModule np, replica_count=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[1000] parameter(0)
  ar = f32[1000] all-reduce(x), replica_groups={{2,0,3,1}}, to_apply=add
  ag = f32[2000] all-gather(x), dimensions={0}, replica_groups={{1,3},{2,0}}
  ROOT t = (f32[1000], f32[2000]) tuple(ar, ag)
}
HLO
	/usr/bin/python3 - "$tmp" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(3)
for p in range(4):
    np.save(f"{sys.argv[1]}/in{p}.npy", (rng.standard_normal(1000) * 1e3).astype(np.float32))
PY
	mpi 4 run --quiet --participant-input 0:"$tmp/in0.npy" --participant-input 1:"$tmp/in1.npy" \
		--participant-input 2:"$tmp/in2.npy" --participant-input 3:"$tmp/in3.npy" \
		--output "$tmp/np.npy" "$tmp/np.hlo" 2>"$tmp/m.err" || bad "numpy: ranks failed: $(head -3 "$tmp/m.err")"
	if /usr/bin/python3 - "$tmp" <<'PY'; then ok; else bad "numpy: all-reduce or all-gather differs"; fi
import sys, numpy as np
d = sys.argv[1]
x = [np.load(f"{d}/in{p}.npy") for p in range(4)]
acc = x[2]
for j in (0, 3, 1):
    acc = (acc + x[j]).astype(np.float32)
groups = {0: (2, 0), 1: (1, 3), 2: (2, 0), 3: (1, 3)}
for p in range(4):
    ar = np.load(f"{d}/np.p{p}.0.npy")
    ag = np.load(f"{d}/np.p{p}.1.npy")
    assert ar.tobytes() == acc.tobytes(), p
    assert ag.tobytes() == np.concatenate([x[j] for j in groups[p]]).tobytes(), p
PY
else
	echo "NumPy not found: its check skipped"
fi

# --gather-output: rank 0 writes every participant's files, the same bytes
mpi 2 run --quiet --random-inputs=9 --gather-output --output "$tmp/g.npy" "$tmp/types.hlo" 2>"$tmp/m.err" ||
	bad "--gather-output: ranks failed: $(head -3 "$tmp/m.err")"
"$hloi" run --quiet --random-inputs=9 --output "$tmp/t.npy" "$tmp/types.hlo" 2>"$tmp/t.err"
for p in 0 1 2 3; do
	if cmp -s "$tmp/t.p$p.0.npy" "$tmp/g.p$p.0.npy" && cmp -s "$tmp/t.p$p.7.npy" "$tmp/g.p$p.7.npy"; then
		ok
	else
		bad "--gather-output: participant $p's files differ (or are missing)"
	fi
done

# a rank whose input is bad ends every rank, naming itself
printf 'not an array' >"$tmp/bad.npy"
mpi 4 run --quiet --participant-input 0:"$tmp/in0.npy" --participant-input 1:"$tmp/bad.npy" \
	--participant-input 2:"$tmp/in2.npy" --participant-input 3:"$tmp/in3.npy" "$tmp/np.hlo" >"$tmp/m.out" 2>"$tmp/m.err"
rc=$?
if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q "rank 1 of 4 failed" "$tmp/m.err"; then
	ok
else
	bad "a bad input on rank 1: exit $rc, $(grep -m1 -i error "$tmp/m.err")"
fi

# ranks that wait for one another (each a recv-done the other's send
# follows) end at --timeout
mpi 2 run --quiet --replicas 2 --timeout 2 "$data/ops/collectives/send_recv_deadlock.hlo" >"$tmp/m.out" 2>"$tmp/m.err"
rc=$?
if [ "$rc" = 4 ] && grep -q "timed out" "$tmp/m.err"; then
	ok
else
	bad "a deadlock between ranks: exit $rc, not 4 at --timeout"
fi

# a job whose ranks cannot share the participants evenly is refused
mpi 3 run --quiet "$data/ops/collectives/replicas.hlo" >"$tmp/m.out" 2>"$tmp/m.err"
rc=$?
if [ "$rc" = 2 ] && grep -q "the job has 3 ranks" "$tmp/m.err"; then
	ok
else
	bad "4 participants on 3 ranks: exit $rc"
fi

# the budget is per rank: the thread runtime shares --max-memory among its
# participants and refuses what each rank holds alone
cat >"$tmp/big.hlo" <<'HLO'
HloModule big, replica_count=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[64,4096] parameter(0)
  zero = f32[] constant(0)
  rows = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
  ROOT ar = f32[64] all-reduce(rows), replica_groups={}, to_apply=add
}
HLO
"$hloi" run --quiet --random-inputs=1 --max-memory 1500K "$tmp/big.hlo" >"$tmp/t.out" 2>"$tmp/t.err"
trc=$?
mpi 4 run --quiet --random-inputs=1 --max-memory 1500K --output "$tmp/big.npy" "$tmp/big.hlo" >"$tmp/m.out" 2>"$tmp/m.err"
mrc=$?
"$hloi" run --quiet --random-inputs=1 --output "$tmp/bigt.npy" "$tmp/big.hlo" >"$tmp/t.out" 2>"$tmp/t.err"
if [ "$trc" = 4 ] && [ "$mrc" = 0 ] && cmp -s "$tmp/big.p3.npy" "$tmp/bigt.p3.npy"; then
	ok
else
	bad "--max-memory per rank: threads exit $trc (want 4), ranks exit $mrc (want 0) or results differ"
fi

# hloi bench times the runs of all ranks; rank 0 alone reports
mpi 2 bench --quiet --iterations 3 --json "$data/ops/collectives/replicas.hlo" >"$tmp/m.out" 2>"$tmp/m.err"
rc=$?
if [ "$rc" = 0 ] && [ "$(wc -l <"$tmp/m.out")" = 1 ] && grep -q '"median_s":' "$tmp/m.out"; then
	ok
else
	bad "bench on 2 ranks: exit $rc, $(head -2 "$tmp/m.out" "$tmp/m.err")"
fi

echo "mpi: $pass passed, $fail failed"
[ "$fail" = 0 ]
