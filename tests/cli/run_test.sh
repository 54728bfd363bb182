#!/bin/sh
# hloi run's limits, files and XLA compatibility, black box: --timeout,
# --max-steps, SIGINT/SIGTERM (between instructions, and inside a long one
# after the grace), the --output rules (atomic replace, modes,
# symbolic and hard links, read-only files and directories), tuple results
# as one .npy per element, a dynamic result's .npy, input mismatches
# naming their file, and run_hlo_module's flags with RunHloModuleLiterals
# files (checked against protoc's own decoder when protoc is installed).
# Usage: run_test.sh HLOI TESTDATA PROTO_DIR
set -u
hloi=$1
data=$2
protodir=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect() {
	code=$1; desc=$2; shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$code" ]; then ok; else bad "$desc: exit $rc, expected $code"; sed 's/^/  | /' "$tmp/err" | head -5; fi
}
contains() {
	if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in output"; sed 's/^/  | /' "$1" | head -5; fi
}
same() {
	if cmp -s "$1" "$2"; then ok; else bad "$3"; diff "$1" "$2" | head -5; fi
}

mpv="$data/sources/matrix_plus_vector.hlo"
mpv_in="$data/sources/matrix_plus_vector.inputs"
printf 's32[2,3] {\n  { 8, 10, 12 },\n  { 11, 13, 15 }\n}\n' >"$tmp/want"

# A program whose calls fan out: each computation calls the next one twice,
# 40 deep (2^40 calls); it only ends by a limit.
fan="$tmp/fan.hlo"
{
	printf 'HloModule fan\nc0 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] add(p, p)\n}\n'
	k=1
	while [ $k -le 40 ]; do
		printf 'c%d {\n  p = f32[] parameter(0)\n  a = f32[] call(p), to_apply=c%d\n  b = f32[] call(a), to_apply=c%d\n  ROOT r = f32[] add(a, b)\n}\n' $k $((k - 1)) $((k - 1))
		k=$((k + 1))
	done
	printf 'ENTRY main {\n  x = f32[] parameter(0)\n  ROOT y = f32[] call(x), to_apply=c40\n}\n'
} >"$fan"

# --- --max-steps and --timeout (exit 4 with a message)
expect 4 "--max-steps" -- "$hloi" run "$fan" --random-inputs --max-steps 1000
contains "$tmp/err" "limit of 1000 evaluated instructions at instruction 'r' in computation 'c2'" "--max-steps names where it stopped"
expect 2 "bad --max-steps" -- "$hloi" run "$fan" --random-inputs --max-steps 0
expect 0 "--max-steps large enough" -- "$hloi" run "$mpv" --inputs "$mpv_in" --max-steps 3
same "$tmp/out" "$tmp/want" "--max-steps 3 runs a 3-instruction program"
expect 4 "--max-steps 2 on a 3-instruction program" -- "$hloi" run "$mpv" --inputs "$mpv_in" --max-steps 2
start=$(date +%s)
expect 4 "--timeout" -- "$hloi" run "$fan" --random-inputs --timeout 0.3 --max-steps 1000000000000
end=$(date +%s)
contains "$tmp/err" "hloi run: timed out after 0.3 s (--timeout)" "--timeout message"
if [ $((end - start)) -le 20 ]; then ok; else bad "--timeout 0.3 took $((end - start)) s"; fi
if [ -s "$tmp/out" ]; then bad "a timed-out run printed a result"; else ok; fi
expect 2 "bad --timeout" -- "$hloi" run "$mpv" --inputs "$mpv_in" --timeout -1
expect 0 "--timeout not reached" -- "$hloi" run "$mpv" --inputs "$mpv_in" --timeout 60
same "$tmp/out" "$tmp/want" "--timeout leaves a quick run alone"

# --- SIGINT and SIGTERM: exit 130 / 143, the old --output file intact, no
# temporary file left
for sig in INT TERM; do
	mkdir -p "$tmp/sig$sig"
	echo old >"$tmp/sig$sig/r.npy"
	"$hloi" run "$fan" --random-inputs --max-steps 1000000000000 --output "$tmp/sig$sig/r.npy" \
		>"$tmp/out" 2>"$tmp/err" &
	pid=$!
	sleep 1
	kill -s "$sig" "$pid"
	wait "$pid"
	rc=$?
	want=130
	[ "$sig" = TERM ] && want=143
	if [ "$rc" -eq "$want" ]; then ok; else bad "SIG$sig: exit $rc, expected $want"; fi
	if [ "$sig" = INT ]; then contains "$tmp/err" "hloi run: interrupted (SIGINT)" "SIGINT message"; fi
	if [ "$sig" = TERM ]; then contains "$tmp/err" "hloi run: terminated (SIGTERM)" "SIGTERM message"; fi
	if [ "$(cat "$tmp/sig$sig/r.npy")" = old ]; then ok; else bad "SIG$sig replaced the old output"; fi
	if [ "$(ls -A "$tmp/sig$sig")" = r.npy ]; then ok; else bad "SIG$sig left files: $(ls -A "$tmp/sig$sig")"; fi
done

# --- a run inside one long instruction (a 4096^3 reference dot) reads the
# flag only after it: STOP_GRACE_S (2 s) after --timeout or SIGTERM the
# process says so and exits with the same code, no output file touched
cat >"$tmp/longdot.hlo" <<'HLO'
HloModule longdot
ENTRY e {
  a = f32[4096,4096] parameter(0)
  b = f32[4096,4096] parameter(1)
  ROOT d = f32[4096,4096] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
HLO
mkdir -p "$tmp/long"
echo old >"$tmp/long/r.npy"
start=$(date +%s)
expect 4 "--timeout inside one long instruction" -- "$hloi" run "$tmp/longdot.hlo" --random-inputs --engine reference \
	--timeout 0.3 --output "$tmp/long/r.npy"
end=$(date +%s)
contains "$tmp/err" "hloi run: timed out after 0.3 s (--timeout)" "the grace's message says why"
if [ $((end - start)) -le 20 ]; then ok; else bad "--timeout 0.3 inside a long dot took $((end - start)) s"; fi
"$hloi" run "$tmp/longdot.hlo" --random-inputs --engine reference --output "$tmp/long/r.npy" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 1
start=$(date +%s)
kill -s TERM "$pid"
wait "$pid"
rc=$?
end=$(date +%s)
if [ "$rc" -eq 143 ]; then ok; else bad "SIGTERM inside a long dot: exit $rc, expected 143"; fi
contains "$tmp/err" "hloi run: terminated (SIGTERM)" "SIGTERM inside a long dot: the message"
if [ $((end - start)) -le 20 ]; then ok; else bad "SIGTERM inside a long dot took $((end - start)) s"; fi
if [ "$(cat "$tmp/long/r.npy")" = old ] && [ "$(ls -A "$tmp/long")" = r.npy ]; then ok; else bad "a stopped long run touched the output"; fi

# --- --output rules
out="$tmp/rules"
mkdir -p "$out"
echo old >"$out/mode.txt"
chmod 640 "$out/mode.txt"
expect 0 "replace an existing file" -- "$hloi" run "$mpv" --inputs "$mpv_in" --output "$out/mode.txt"
same "$out/mode.txt" "$tmp/want" "the replaced file holds the result"
if [ "$(stat -c %a "$out/mode.txt")" = 640 ]; then ok; else bad "mode not kept: $(stat -c %a "$out/mode.txt")"; fi
echo old >"$out/target.txt"
ln -s target.txt "$out/link.txt"
expect 0 "write through a symbolic link" -- "$hloi" run "$mpv" --inputs "$mpv_in" --output "$out/link.txt"
if [ -L "$out/link.txt" ]; then ok; else bad "the symbolic link was replaced by a file"; fi
same "$out/target.txt" "$tmp/want" "the link's target holds the result"
ln -s missing.txt "$out/dangling.txt"
expect 0 "write through a dangling link" -- "$hloi" run "$mpv" --inputs "$mpv_in" --output "$out/dangling.txt"
same "$out/missing.txt" "$tmp/want" "a dangling link's target is created"
echo old >"$out/h1.txt"
ln "$out/h1.txt" "$out/h2.txt"
expect 0 "write a hard-linked file" -- "$hloi" run "$mpv" --inputs "$mpv_in" --output "$out/h1.txt"
same "$out/h2.txt" "$tmp/want" "every hard link sees the result"
echo old >"$out/ro.txt"
chmod 444 "$out/ro.txt"
expect 4 "a read-only file is not replaced" -- "$hloi" run "$mpv" --inputs "$mpv_in" --output "$out/ro.txt"
contains "$tmp/err" "ro.txt: error: cannot write: the file is read-only" "read-only message"
if [ "$(cat "$out/ro.txt")" = old ]; then ok; else bad "the read-only file changed"; fi
expect 4 "a directory is not replaced" -- "$hloi" run "$mpv" --inputs "$mpv_in" --output "$out"
# a failed write leaves the old file: the text of a huge zero-size result is refused
echo old >"$out/keep.txt"
expect 4 "refused output" -- "$hloi" run "$data/bad/print_zero_size_huge.hlo" --random-inputs --output "$out/keep.txt"
if [ "$(cat "$out/keep.txt")" = old ]; then ok; else bad "a refused write replaced the old file"; fi
if ls -A "$out" | grep -q '\.tmp$'; then bad "temporary files left: $(ls -A "$out")"; else ok; fi

# A read-only directory: the file in it is written in place, a new file
# cannot be made. Root may write anywhere, so that part runs as nobody.
ro="$tmp/rodir"
mkdir -p "$ro/d"
cp "$hloi" "$ro/hloi"
cp "$mpv" "$mpv_in" "$ro/"
echo old >"$ro/d/f.txt"
chmod 666 "$ro/d/f.txt"
chmod 555 "$ro/d"
chmod 755 "$tmp" "$ro"
as=""
if [ "$(id -u)" = 0 ]; then as="setpriv --reuid=65534 --regid=65534 --clear-groups"; fi
if [ -z "$as" ] || command -v setpriv >/dev/null 2>&1; then
	expect 0 "a file in a read-only directory" -- $as "$ro/hloi" run "$ro/matrix_plus_vector.hlo" \
		--inputs "$ro/matrix_plus_vector.inputs" --output "$ro/d/f.txt"
	same "$ro/d/f.txt" "$tmp/want" "written in place in a read-only directory"
	expect 4 "a new file in a read-only directory" -- $as "$ro/hloi" run "$ro/matrix_plus_vector.hlo" \
		--inputs "$ro/matrix_plus_vector.inputs" --output "$ro/d/new.txt"
	contains "$tmp/err" "new.txt: error: cannot create: Permission denied" "read-only directory message"
else
	echo "SKIP: read-only directory (running as root without setpriv)"
fi
chmod 755 "$ro/d"

# --- a tuple result as .npy: one file per array element
tup="$tmp/tuple.hlo"
printf 'HloModule t\nENTRY e {\n  a = s32[2] constant({1, 2})\n  c = f32[] constant(1.5)\n  d = s32[3] constant({7, 8, 9})\n  b = (f32[], s32[3]) tuple(c, d)\n  ROOT t = (s32[2], (f32[], s32[3])) tuple(a, b)\n}\n' >"$tup"
expect 0 "tuple result to .npy" -- "$hloi" run "$tup" --output "$tmp/r.npy"
for f in r.0.npy r.1.0.npy r.1.1.npy; do
	if [ -s "$tmp/$f" ]; then ok; else bad "tuple element file $f missing"; fi
done
if [ -e "$tmp/r.npy" ] || [ -e "$tmp/r.1.npy" ]; then bad "a tuple wrote r.npy or r.1.npy"; else ok; fi
printf 'HloModule p\nENTRY e {\n  p = s32[3] parameter(0)\n  ROOT q = s32[3] copy(p)\n}\n' >"$tmp/copy.hlo"
expect 0 "an element file reads back" -- "$hloi" run "$tmp/copy.hlo" --input "$tmp/r.1.1.npy"
printf 's32[3] {7, 8, 9}\n' >"$tmp/want3"
same "$tmp/out" "$tmp/want3" "element r.1.1.npy holds d"
expect 0 "tuple result as text" -- "$hloi" run "$tup" --output "$tmp/r.txt"
contains "$tmp/r.txt" "s32[3] {7, 8, 9}" "a tuple as text is one file"

# --- a result with a dynamic dimension as .npy: the elements within its sizes
dyn="$tmp/dynamic.hlo"
printf 'HloModule d\nENTRY e {\n  x = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n  n = s32[] constant(2)\n  ROOT d = s32[2,<=3] set-dimension-size(x, n), dimensions={1}\n}\n' >"$dyn"
expect 0 "dynamic result to .npy" -- "$hloi" run "$dyn" --output "$tmp/dyn.npy"
printf 'HloModule p\nENTRY e {\n  p = s32[2,2] parameter(0)\n  ROOT q = s32[2,2] copy(p)\n}\n' >"$tmp/copy22.hlo"
expect 0 "the dynamic result's .npy reads back as s32[2,2]" -- "$hloi" run "$tmp/copy22.hlo" --input "$tmp/dyn.npy"
printf 's32[2,2] {\n  { 1, 2 },\n  { 4, 5 }\n}\n' >"$tmp/want_dyn"
same "$tmp/out" "$tmp/want_dyn" "dyn.npy holds the elements within the sizes"
expect 0 "dynamic result as text" -- "$hloi" run "$dyn"
contains "$tmp/out" "s32[2,<=3](2,2) {" "a dynamic result prints its sizes"

# --- input mismatches name the file; singular and plural
printf 's32[2,3] {{1,2,3},{4,5,6}}\n' >"$tmp/x.txt"
printf 's32[4] {1,2,3,4}\n' >"$tmp/a.txt"
expect 3 "input of the wrong shape" -- "$hloi" run "$mpv" --input "$tmp/x.txt" --input "$tmp/a.txt"
contains "$tmp/err" "a.txt: error: input 1 for parameter 'y' has shape s32[4], but the parameter is s32[3]" "the mismatch names the file"
expect 3 "one value for two parameters" -- "$hloi" run "$mpv" --inputs "$tmp/a.txt"
contains "$tmp/err" "holds 1 value, but the program has 2 parameters" "singular 'value'"
expect 3 "one --input for two parameters" -- "$hloi" run "$mpv" --input "$tmp/a.txt"
contains "$tmp/err" "1 --input file given, but the program has 2 parameters" "singular 'file'"

# --- run_hlo_module's spellings
expect 0 "--input_format=hlo" -- "$hloi" run --input_format=hlo "$mpv" --inputs "$mpv_in"
same "$tmp/out" "$tmp/want" "--input_format=hlo result"
cp "$mpv" "$tmp/noext"
expect 3 "--input_format=pb on text" -- "$hloi" run --input_format=pb "$tmp/noext" --inputs "$mpv_in"
expect 0 "--print_literals" -- "$hloi" run "$mpv" --inputs "$mpv_in" --print_literals
contains "$tmp/out" "** Argument 1 (y) **" "--print_literals prints the arguments"
expect 0 "--output_literals_file (binary)" -- "$hloi" run "$mpv" --random-inputs=5 --compare --output_literals_file "$tmp/l.pb"
cp "$tmp/out" "$tmp/random5"
expect 0 "--input_literals_file (binary)" -- "$hloi" run "$mpv" --input_literals_file "$tmp/l.pb"
same "$tmp/out" "$tmp/random5" "the recorded arguments give the same result"
expect 0 "--output_literals_file (text)" -- "$hloi" run "$mpv" --random-inputs=5 --output_literals_file "$tmp/l.pbtxt"
contains "$tmp/l.pbtxt" "iterations {" "text literals file"
expect 0 "--input_literals_file (text)" -- "$hloi" run "$mpv" --input_literals_file "$tmp/l.pbtxt"
same "$tmp/out" "$tmp/random5" "text literals give the same result"
printf 'arguments { shape { element_type: S32 dimensions: 3 } s32s: [1, 2, 3] }\n' >"$tmp/it.txt"
expect 3 "a bare RunHloModuleIterationLiterals" -- "$hloi" run "$mpv" --input_literals_file "$tmp/it.txt"
contains "$tmp/err" "it.txt: error: holds 1 value, but the program has 2 parameters" "iteration literals are read"
head -c 7 "$tmp/l.pb" >"$tmp/cut.pb"
expect 3 "a truncated literals file" -- "$hloi" run "$mpv" --input_literals_file "$tmp/cut.pb"
expect 2 "two input sources" -- "$hloi" run "$mpv" --input_literals_file "$tmp/l.pb" --random-inputs
if command -v protoc >/dev/null 2>&1; then
	# protoc, with hloi's copy of XLA's schema, decodes what hloi wrote ...
	if protoc --decode=xla.RunHloModuleLiterals -I "$protodir" "$protodir/run_hlo_module.proto" \
		<"$tmp/l.pb" >"$tmp/decoded" 2>"$tmp/err"; then ok; else bad "protoc cannot decode l.pb"; cat "$tmp/err"; fi
	contains "$tmp/decoded" "reference_result {" "--compare records the reference result"
	contains "$tmp/decoded" "  result {" "the result is recorded"
	# ... and hloi reads what protoc encoded
	printf 'iterations { arguments { shape { element_type: S32 dimensions: 2 dimensions: 3 layout { minor_to_major: [1, 0] } } s32s: [1, 2, 3, 4, 5, 6] } arguments { shape { element_type: S32 dimensions: 3 layout { minor_to_major: 0 } } s32s: [7, 8, 9] } }\n' |
		protoc --encode=xla.RunHloModuleLiterals -I "$protodir" "$protodir/run_hlo_module.proto" >"$tmp/enc.pb"
	expect 0 "literals encoded by protoc" -- "$hloi" run "$mpv" --input_literals_file "$tmp/enc.pb"
	same "$tmp/out" "$tmp/want" "protoc's literals give the README result"
else
	echo "SKIP: protoc not installed (tests/setup-deps.sh installs protobuf-compiler)"
fi
expect 0 "run --help mentions protos and snapshots" -- "$hloi" run --help
contains "$tmp/out" "HloSnapshot" "run --help names HloSnapshot"
contains "$tmp/out" ".pbtxt" "run --help names .pbtxt"

# elided constants ({...}): an error without --random-inputs, random values
# with it (a note counts them), the same for the same seed and both engines
cat >"$tmp/elided.hlo" <<'HLO'
HloModule elided
ENTRY main {
  c = f32[3] constant({...})
  k = s32[2,2] constant({...})
  ROOT t = (f32[3], s32[2,2]) tuple(c, k)
}
HLO
expect 3 "an elided constant without --random-inputs" -- "$hloi" run "$tmp/elided.hlo"
contains "$tmp/err" "constant 'c' is elided ({...}) and cannot be evaluated; --random-inputs fills it" "the error names the constant and the way out"
expect 0 "elided constants with --random-inputs" -- "$hloi" run "$tmp/elided.hlo" --random-inputs=3 --compare
contains "$tmp/err" "note: 2 elided constants ({...}) filled with random values (seed 3)" "one note counts the constants"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || bad "the note is one line"
cp "$tmp/out" "$tmp/elided3"
expect 0 "the same seed again" -- "$hloi" run "$tmp/elided.hlo" --random-inputs=3 --engine reference
same "$tmp/out" "$tmp/elided3" "the same seed gives the same constants in either engine"
expect 0 "another seed" -- "$hloi" run "$tmp/elided.hlo" --random-inputs=4
if cmp -s "$tmp/out" "$tmp/elided3"; then bad "another seed gives other constants"; else ok; fi
expect 0 "hloi bench fills elided constants" -- "$hloi" bench "$tmp/elided.hlo" --iterations 1
contains "$tmp/err" "hloi bench: note: 2 elided constants" "bench notes them too"

# A multiplicative reduce over 1024 values keeps the reference order in
# the fast engine: in another order one lane overflows to inf while another
# reaches 0, and inf * 0 gives NaN where the reference gives 0
# (doc/semantics.md, "Which orders the fast engine may change")
cat >"$tmp/mulred.hlo" <<'HLO'
HloModule mulred
mul {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] multiply(x, y)
}
ENTRY main {
  a = f32[8,1024] parameter(0)
  one = f32[] constant(1)
  r = f32[8] reduce(a, one), dimensions={1}, to_apply=mul
  ROOT t = (f32[8], f32[8]) tuple(r, r)
}
HLO
for th in 1 2 3; do
	expect 0 "--compare of a product of 1024 values, $th threads" -- "$hloi" run "$tmp/mulred.hlo" --random-inputs=1 --compare --threads "$th"
done
"$hloi" run "$tmp/mulred.hlo" --random-inputs=1 >"$tmp/mulred.out" 2>&1
if grep -q nan "$tmp/mulred.out" && grep -Eq "[{ ]-?0[,}]" "$tmp/mulred.out"; then ok; else bad "the products reach both 0 and NaN (inf * 0 in the data)"; fi

# --compare on a tuple counts the differing elements and the total over
# the same thing, the elements of its arrays: a dot of 1024 values whose
# sum cancels (1e8, 1022 ones, -1e8) is 0 in the reference's order and not
# in BLAS's, in 8 rows; the tuple's second array (a max) agrees
cat >"$tmp/cancel.hlo" <<'HLO'
HloModule cancel
mx {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
ENTRY main {
  i = s32[8,1024] iota(), iota_dimension=1
  first = s32[] constant(0)
  last = s32[] constant(1023)
  fb = s32[8,1024] broadcast(first), dimensions={}
  lb = s32[8,1024] broadcast(last), dimensions={}
  isf = pred[8,1024] compare(i, fb), direction=EQ
  isl = pred[8,1024] compare(i, lb), direction=EQ
  big = f32[] constant(1e8)
  nbig = f32[] constant(-1e8)
  one = f32[] constant(1)
  bb = f32[8,1024] broadcast(big), dimensions={}
  nb = f32[8,1024] broadcast(nbig), dimensions={}
  ob = f32[8,1024] broadcast(one), dimensions={}
  sel = f32[8,1024] select(isl, nb, ob)
  a = f32[8,1024] select(isf, bb, sel)
  w = f32[1024] broadcast(one), dimensions={}
  d = f32[8] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  m = f32[8] reduce(a, nbig), dimensions={1}, to_apply=mx
  ROOT t = (f32[8], f32[8]) tuple(d, m)
}
HLO
expect 1 "--compare of a differing tuple" -- "$hloi" run "$tmp/cancel.hlo" --compare
contains "$tmp/err" "8 of 16 elements differ" "--compare counts a tuple's elements"

# a token parameter of the entry gets a token: --input files and --inputs
# values leave it out (or give every parameter a value)
cat >"$tmp/tokp.hlo" <<'HLO'
HloModule tokp
ENTRY main {
  t = token[] parameter(0)
  a = f32[2] parameter(1)
  t2 = token[] after-all(t)
  ROOT r = f32[2] add(a, a)
}
HLO
printf 'f32[2] {1, 2}\n' >"$tmp/tokp.in"
expect 0 "--input without the token" -- "$hloi" run "$tmp/tokp.hlo" --input "$tmp/tokp.in"
contains "$tmp/out" "f32[2] {2, 4}" "a token parameter's run"
expect 0 "--inputs without the token" -- "$hloi" run "$tmp/tokp.hlo" --inputs "$tmp/tokp.in" --compare
contains "$tmp/out" "f32[2] {2, 4}" "a token parameter's run from --inputs"
expect 3 "--input files for neither count" -- "$hloi" run "$tmp/tokp.hlo" --input "$tmp/tokp.in" --input "$tmp/tokp.in" --input "$tmp/tokp.in"
contains "$tmp/err" "3 --input files given, but the program has 2 parameters (1 without its token)" "the count names the token"

# token results: printed, compared, written as text; alone as .npy an error,
# in a tuple as .npy files no file
cat >"$tmp/tok.hlo" <<'HLO'
HloModule tok
ENTRY main {
  t = token[] after-all()
  x = f32[2] constant({1, 2})
  ROOT r = (f32[2], token[]) tuple(x, t)
}
HLO
cat >"$tmp/tok1.hlo" <<'HLO'
HloModule tok1
ENTRY main {
  ROOT t = token[] after-all()
}
HLO
expect 0 "a token result compares" -- "$hloi" run "$tmp/tok1.hlo" --compare
printf 'token\n' >"$tmp/want_tok"
same "$tmp/out" "$tmp/want_tok" "a token prints as token"
expect 3 "a token result as .npy" -- "$hloi" run "$tmp/tok1.hlo" --output "$tmp/tok.npy"
contains "$tmp/err" "tok.npy: error: cannot write a token as .npy" "the .npy error names the file"
[ ! -e "$tmp/tok.npy" ] && ok || bad "no file is left for a token"
expect 0 "a token result as text" -- "$hloi" run "$tmp/tok1.hlo" --output "$tmp/tok.txt"
same "$tmp/tok.txt" "$tmp/want_tok" "a token is written as literal text"
expect 0 "a tuple with a token as .npy files" -- "$hloi" run "$tmp/tok.hlo" --compare --output "$tmp/tt.npy"
[ -e "$tmp/tt.0.npy" ] && [ ! -e "$tmp/tt.1.npy" ] && ok || bad "the array element has a file, the token none"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
