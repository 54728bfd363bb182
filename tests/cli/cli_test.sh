#!/bin/sh
# Black-box tests of the hloi command line: exit codes (doc/spec.md §7), help and
# version, input and output files, and failures that golden files cannot
# express (closed or full output, missing files). Usage: cli_test.sh HLOI TESTDATA
set -u
hloi=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect CODE DESCRIPTION -- COMMAND...: runs the command, checks the exit code.
expect() {
	code=$1; desc=$2; shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$code" ]; then ok; else bad "$desc: exit $rc, expected $code"; sed 's/^/  | /' "$tmp/err" | head -5; fi
}
# contains FILE TEXT DESCRIPTION
contains() {
	if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in output"; sed 's/^/  | /' "$1" | head -5; fi
}

mpv="$data/sources/matrix_plus_vector.hlo"
mpv_in="$data/sources/matrix_plus_vector.inputs"

# --- help, version, usage errors (exit 2)
expect 0 "--version" -- "$hloi" --version
contains "$tmp/out" "hloi 0." "--version prints the version"
expect 0 "--help" -- "$hloi" --help
contains "$tmp/out" "usage: hloi COMMAND" "--help prints usage"
for cmd in run check fmt lower layout test dot plan bench convert; do
	expect 0 "$cmd --help" -- "$hloi" "$cmd" --help
	contains "$tmp/out" "usage: hloi $cmd" "$cmd --help"
	contains "$tmp/out" "Example:" "$cmd --help has an example"
done
expect 2 "no command" -- "$hloi"
expect 2 "unknown command" -- "$hloi" frobnicate
contains "$tmp/err" "unknown command 'frobnicate'" "unknown command message"
contains "$tmp/err" "Try 'hloi --help'" "unknown command hint"
expect 2 "a misspelt command" -- "$hloi" rn "$mpv"
contains "$tmp/err" "hloi: unknown command 'rn'; did you mean 'run'?" "the nearest command is suggested"
expect 2 "a misspelt command" -- "$hloi" layuot
contains "$tmp/err" "did you mean 'layout'?" "a swap of two letters is near"
expect 2 "unknown option" -- "$hloi" run --bogus "$mpv"
contains "$tmp/err" "unknown option '--bogus'" "unknown option message"
expect 2 "missing program" -- "$hloi" run
expect 2 "bad --max-memory" -- "$hloi" run --max-memory 12Q "$mpv"
expect 2 "bad --broadcast-mode" -- "$hloi" run --broadcast-mode torch "$mpv"
expect 2 "two input sources" -- "$hloi" run "$mpv" --inputs "$mpv_in" --random-inputs
expect 2 "parameters without inputs" -- "$hloi" run "$mpv"
contains "$tmp/err" "give --input, --inputs or --random-inputs" "missing inputs message"
expect 2 "layout without shape" -- "$hloi" layout

# --- success (exit 0) and the README example
expect 0 "run matrix plus vector" -- "$hloi" run "$mpv" --inputs "$mpv_in"
printf 's32[2,3] {\n  { 8, 10, 12 },\n  { 11, 13, 15 }\n}\n' >"$tmp/want"
if cmp -s "$tmp/out" "$tmp/want"; then ok; else bad "matrix plus vector output"; cat "$tmp/out"; fi
expect 0 "check" -- "$hloi" check "$mpv"
contains "$tmp/out" "ok" "check prints ok"
expect 0 "program from stdin" -- sh -c "\"$hloi\" run - --inputs \"$mpv_in\" < \"$mpv\""
if cmp -s "$tmp/out" "$tmp/want"; then ok; else bad "stdin program output"; fi

# --- inputs one file per parameter, and random inputs are deterministic
printf 's32[2,3] {{1,2,3},{4,5,6}}\n' >"$tmp/x.txt"
printf 's32[3] {7,8,9}\n' >"$tmp/y.txt"
expect 0 "--input per parameter" -- "$hloi" run "$mpv" --input "$tmp/x.txt" --input "$tmp/y.txt"
if cmp -s "$tmp/out" "$tmp/want"; then ok; else bad "--input output"; fi
expect 0 "random inputs" -- "$hloi" run "$mpv" --random-inputs=7 --print-inputs
cp "$tmp/out" "$tmp/r1"
"$hloi" run "$mpv" --random-inputs=7 --print-inputs >"$tmp/r2" 2>/dev/null
if cmp -s "$tmp/r1" "$tmp/r2"; then ok; else bad "random inputs are not deterministic"; fi
contains "$tmp/r1" "** Argument 1 (y) **" "--print-inputs names the parameter"
contains "$tmp/r1" "** Result **" "--print-inputs heads the result"

# --- output files
expect 0 "--output text" -- "$hloi" run "$mpv" --inputs "$mpv_in" --output "$tmp/r.txt"
if [ ! -s "$tmp/out" ] && cmp -s "$tmp/r.txt" "$tmp/want"; then ok; else bad "--output text file"; fi
expect 0 "--output npy + --print" -- "$hloi" run "$mpv" --inputs "$mpv_in" --output "$tmp/r.npy" --print
if cmp -s "$tmp/out" "$tmp/want"; then ok; else bad "--print with --output"; fi
expect 0 "npy result as input" -- "$hloi" run "$(dirname "$0")/plus_one.hlo" --input "$tmp/r.npy"
cp "$tmp/out" "$tmp/plus_one_out"
expect 0 "npy input from standard input" -- sh -c "\"$hloi\" run \"$(dirname "$0")/plus_one.hlo\" --input - < \"$tmp/r.npy\""
if cmp -s "$tmp/out" "$tmp/plus_one_out"; then ok; else bad "npy from standard input differs from the file"; fi
printf 's32[2,3] {{8,10,12},{11,13,15}}' >"$tmp/r_lit.txt"
expect 0 "literal text from standard input" -- sh -c "\"$hloi\" run \"$(dirname "$0")/plus_one.hlo\" --input - < \"$tmp/r_lit.txt\""
if cmp -s "$tmp/out" "$tmp/plus_one_out"; then ok; else bad "text from standard input differs"; fi
if mkfifo "$tmp/fifo.npy" 2>/dev/null; then
	cat "$tmp/r.npy" >"$tmp/fifo.npy" &
	expect 0 "npy input from a FIFO" -- "$hloi" run "$(dirname "$0")/plus_one.hlo" --input "$tmp/fifo.npy"
	wait
	if cmp -s "$tmp/out" "$tmp/plus_one_out"; then ok; else bad "npy from a FIFO differs from the file"; fi
fi

# --- a zero-element result with 100000000 empty sub-arrays: text is refused
# (exit 4) before anything is written; .npy works
zs="$data/bad/print_zero_size_huge.hlo"
expect 4 "huge zero-element result as text" -- "$hloi" run "$zs" --random-inputs --output "$tmp/zs.txt"
contains "$tmp/err" "cannot write f32[100000000,0] as text: 100000000 empty sub-arrays (the limit is 16777216)" "refused text output says why"
if [ -e "$tmp/zs.txt" ]; then bad "refused text output left a file"; else ok; fi
expect 0 "huge zero-element result as .npy" -- "$hloi" run "$zs" --random-inputs --output "$tmp/zs.npy"
expect 4 "--print-inputs of a huge zero-element input" -- "$hloi" run "$zs" --input "$tmp/zs.npy" --print-inputs
contains "$tmp/err" "cannot print argument 0 (p) f32[100000000,0] as text" "refused input names the argument"
if [ -s "$tmp/out" ]; then bad "refused --print-inputs printed something"; else ok; fi

# refused_convert IN OUT DESCRIPTION MESSAGE: convert exits 3 saying MESSAGE
# and leaves no OUT
refused_convert() {
	expect 3 "$3" -- "$hloi" convert "$1" "$2"
	contains "$tmp/err" "$4" "$3: what and where"
	if [ -e "$2" ]; then bad "$3: left a file"; else ok; fi
}

# --- an attribute convert cannot read says what it expected where (the
# reader's expected text is built on its caller's stack)
cat > "$tmp/oa.hlo" <<'EOF'
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(p), custom_call_target="Sharding", output_to_operand_aliasing={x: (0, {})}
}
EOF
refused_convert "$tmp/oa.hlo" "$tmp/oa.pb" "convert of a malformed output_to_operand_aliasing" \
	"oa.hlo:4:94: error: malformed output_to_operand_aliasing: expects '{'"

# --- an elided literal a proto cannot hold: an element of a tuple constant,
# a literal= attribute (once a crash: their values have no buffer)
cat >"$tmp/et.hlo" <<'EOF'
HloModule t
ENTRY main {
  ROOT c = (f32[2], (pred[3])) constant(({1.5, -2}, ({...})))
}
EOF
refused_convert "$tmp/et.hlo" "$tmp/et.pb" "convert of a tuple constant with an elided element" \
	"et.hlo:3:41: error: tuple constant 'c' has an elided element ({...}), which a proto cannot hold"
cat >"$tmp/ea.hlo" <<'EOF'
HloModule t
ENTRY main {
  p = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(p), custom_call_target="foo", literal=s32[3] {...}
}
EOF
refused_convert "$tmp/ea.hlo" "$tmp/ea.pbtxt" "convert of an elided literal= attribute" \
	"ea.hlo:4:69: error: an elided literal ({...}) cannot be written as a proto"
if [ "$(grep -c error "$tmp/err")" = 1 ]; then ok; else bad "elided attribute: one error expected"; cat "$tmp/err"; fi

# --- an attribute kept as written holds bytes that are not UTF-8: a proto
# string may not (the file would not load), so convert refuses, located
printf 'HloModule t\nENTRY main {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p, p), frobnicate=x\377y\n}\n' >"$tmp/nu.hlo"
refused_convert "$tmp/nu.hlo" "$tmp/nu.pb" "convert of an attribute that is not UTF-8" \
	"nu.hlo:4:8: error: field frontend_attributes.map[1].value is not valid UTF-8, which a proto string must be"

# --- a proto constant f32[1099511627776,0]: as text it is refused (exit 4)
# before anything is written; proto to proto, check, run and dot work
zc="$data/bad/fmt_zero_size_huge_constant.pbtxt"
zc_msg="constant 'k' (f32[1099511627776,0]) in computation 'main' as text: 1099511627776 empty sub-arrays (the limit is 16777216)"
expect 0 "huge zero-element constant: pbtxt to pb" -- "$hloi" convert "$zc" "$tmp/zc.pb"
expect 0 "huge zero-element constant: pb to pbtxt" -- "$hloi" convert "$tmp/zc.pb" "$tmp/zc.pbtxt"
contains "$tmp/zc.pbtxt" "dimensions: 1099511627776" "pb to pbtxt keeps the shape"
expect 4 "huge zero-element constant: pb to hlo" -- "$hloi" convert "$tmp/zc.pb" "$tmp/zc.hlo"
contains "$tmp/err" "zc.hlo: error: cannot write $zc_msg; write the program as .pb or .pbtxt" "refused convert names the constant"
if [ -e "$tmp/zc.hlo" ]; then bad "refused convert left a file"; else ok; fi
expect 4 "huge zero-element constant: convert to stdout" -- "$hloi" convert "$zc" -
contains "$tmp/err" "<stdout>: error: cannot write constant 'k'" "refused convert to stdout"
if [ -s "$tmp/out" ]; then bad "refused convert to stdout printed something"; else ok; fi
expect 4 "huge zero-element constant: fmt" -- "$hloi" fmt "$tmp/zc.pb"
contains "$tmp/err" "hloi fmt: cannot print $zc_msg" "refused fmt names the constant"
if [ -s "$tmp/out" ]; then bad "refused fmt printed something"; else ok; fi
expect 4 "huge zero-element constant: lower" -- "$hloi" lower "$zc"
contains "$tmp/err" "hloi lower: cannot print $zc_msg" "refused lower names the constant"
if [ -s "$tmp/out" ]; then bad "refused lower printed something"; else ok; fi
expect 0 "huge zero-element constant: check" -- "$hloi" check "$tmp/zc.pbtxt"
expect 0 "huge zero-element constant: dot" -- "$hloi" dot "$zc"

# --- dot takes the checker's options: NumPy mode labels implicit broadcasts,
# --strict rejects extensions (the graph is still printed, exit 3)
expect 3 "dot: implicit broadcast in xla mode" -- "$hloi" dot "$data/broadcast/numpy_outer_flag.hlo"
expect 0 "dot --broadcast-mode numpy" -- "$hloi" dot --broadcast-mode numpy "$data/broadcast/numpy_outer_flag.hlo"
contains "$tmp/out" 'label="implicit broadcast_dimensions={1}"' "dot labels a NumPy broadcast"
expect 3 "dot --strict" -- "$hloi" dot --strict "$data/sources/matrix_plus_vector.hlo"
contains "$tmp/out" "digraph" "dot --strict still prints the graph"
expect 0 "huge zero-element constant: run to .npy" -- "$hloi" run "$zc" --output "$tmp/zc.npy"

# --- invalid input (exit 3)
expect 3 "missing program file" -- "$hloi" run "$tmp/nope.hlo" --random-inputs
contains "$tmp/err" "nope.hlo" "missing file is named"
printf 'f32[3] {1,2,3}\n' >"$tmp/wrong.txt"
expect 3 "input of the wrong shape" -- "$hloi" run "$mpv" --input "$tmp/wrong.txt" --input "$tmp/y.txt"
contains "$tmp/err" "parameter 'x'" "wrong input names the parameter"
printf 'garbage' >"$tmp/bad.npy"
expect 3 "bad npy" -- "$hloi" run "$mpv" --input "$tmp/bad.npy" --input "$tmp/y.txt"
printf 'HloModule m\nENTRY e {\n  ROOT r = f32[2] add(a, b)\n}\n' >"$tmp/undef.hlo"
expect 3 "check of a bad program" -- "$hloi" check "$tmp/undef.hlo"
contains "$tmp/err" "undef.hlo:3:" "diagnostic is located"
expect 3 "NO_COLOR diagnostics are plain" -- env NO_COLOR=1 "$hloi" check "$tmp/undef.hlo" --color=auto
if grep -q "$(printf '\033')" "$tmp/err"; then bad "colour with NO_COLOR"; else ok; fi
expect 3 "forced colour" -- "$hloi" check "$tmp/undef.hlo" --color=always
if grep -q "$(printf '\033')" "$tmp/err"; then ok; else bad "no colour with --color=always"; fi

# --- runtime failures (exit 4)
expect 4 "memory budget" -- "$hloi" run "$mpv" --inputs "$mpv_in" --max-memory 8
contains "$tmp/err" "memory budget" "budget message"
if [ -w /dev/full ]; then
	expect 4 "full disk on stdout" -- sh -c "\"$hloi\" run \"$mpv\" --inputs \"$mpv_in\" > /dev/full"
	# the .pb is written in pieces as it is packed
	expect 4 "convert to .pb on a full disk" -- "$hloi" convert "$mpv" --to pb /dev/full
	contains "$tmp/err" "cannot write" "full disk message"
fi
expect 4 "unwritable output file" -- "$hloi" run "$mpv" --inputs "$mpv_in" --output "$tmp/no/such/dir/r.txt"

# --- the progress line: on a terminal only (script(1) makes one), not with
# --quiet; HLOI_PROGRESS_AFTER=0 shows it from the start instead of after 2 s
cat >"$tmp/loop.hlo" <<'EOF'
HloModule loop
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(200000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  h = f32[] constant(0.5)
  x1 = f32[] add(x, h)
  ROOT t = (s32[], f32[]) tuple(i1, x1)
}
ENTRY main {
  z = s32[] constant(0)
  f = f32[] constant(0)
  init = (s32[], f32[]) tuple(z, f)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT r = f32[] get-tuple-element(w), index=1
}
EOF
if command -v script >/dev/null 2>&1; then
	expect 0 "run on a terminal" -- env HLOI_PROGRESS_AFTER=0 script -qec "\"$hloi\" run \"$tmp/loop.hlo\"" /dev/null
	contains "$tmp/out" "hloi run: evaluating: " "a progress line on a terminal"
	contains "$tmp/out" "f32[] 100000" "the result after the progress line"
	expect 0 "run --quiet on a terminal" -- env HLOI_PROGRESS_AFTER=0 script -qec "\"$hloi\" run --quiet \"$tmp/loop.hlo\"" /dev/null
	if grep -q "evaluating" "$tmp/out"; then bad "a progress line with --quiet"; else ok; fi
	expect 0 "bench on a terminal" -- env HLOI_PROGRESS_AFTER=0 script -qec "\"$hloi\" bench --iterations 3 --warmup 0 \"$tmp/loop.hlo\"" /dev/null
	contains "$tmp/out" "hloi bench: running: " "a bench progress line on a terminal"
	contains "$tmp/out" "3 iterations" "the bench report after the progress line"
	expect 0 "bench --quiet on a terminal" -- env HLOI_PROGRESS_AFTER=0 script -qec "\"$hloi\" bench --quiet --iterations 3 --warmup 0 \"$tmp/loop.hlo\"" /dev/null
	if grep -q "running" "$tmp/out"; then bad "a bench progress line with --quiet"; else ok; fi
fi
expect 0 "run off a terminal" -- env HLOI_PROGRESS_AFTER=0 "$hloi" run "$tmp/loop.hlo"
if grep -q "evaluating" "$tmp/err"; then bad "a progress line off a terminal"; else ok; fi

# --- the memory ceiling: the budget (--max-memory) plus 64 MiB bounds
# everything hloi holds, parsing and loading included (doc/robustness.md)
awk 'BEGIN { print "HloModule big"; print "ENTRY e {"; print "  p = f32[8] parameter(0)";
	prev = "p"; for (i = 0; i < 400000; i++) { printf "  a%d = f32[8]{0} add(%s, p), metadata={op_name=\"jit(f)/add\"}\n", i, prev; prev = "a" i }
	print "  ROOT r = f32[8]{0} negate(" prev ")"; print "}" }' >"$tmp/big.hlo"
for cmd in check fmt lower plan; do
	expect 4 "$cmd of a large program under --max-memory 1M" -- "$hloi" $cmd --max-memory 1M "$tmp/big.hlo"
	contains "$tmp/err" "memory ceiling of 68157440 bytes" "$cmd names the ceiling"
done
expect 4 "convert under --max-memory 1M" -- "$hloi" convert --max-memory 1M "$tmp/big.hlo" "$tmp/big.pb"
contains "$tmp/err" "memory ceiling" "convert names the ceiling"
if [ -e "$tmp/big.pb" ]; then bad "convert left a partial output"; else ok; fi
expect 0 "the same program fits the default budget" -- "$hloi" check "$tmp/big.hlo"
expect 0 "and converts to .pb" -- "$hloi" convert "$tmp/big.hlo" "$tmp/big.pb"
expect 4 "loading the .pb under --max-memory 1M" -- "$hloi" check --max-memory 1M "$tmp/big.pb"
contains "$tmp/err" "would pass the memory ceiling of 68157440 bytes" ".pb load names the ceiling"
expect 0 "a small program under --max-memory 1M" -- "$hloi" check --max-memory 1M "$mpv"
expect 4 "an endless stream under --max-memory 1M" -- "$hloi" check --max-memory 1M /dev/zero
contains "$tmp/err" "memory ceiling" "the stream is refused at the ceiling"
expect 2 "bad --max-memory on check" -- "$hloi" check --max-memory 0 "$mpv"

# --- engines agree (--compare), bench prints SPEC's JSON object
expect 0 "run --compare" -- "$hloi" run "$mpv" --inputs "$mpv_in" --compare
if cmp -s "$tmp/out" "$tmp/want"; then ok; else bad "--compare output"; fi
expect 0 "bench --json" -- "$hloi" bench "$mpv" --inputs "$mpv_in" --iterations 3 --warmup 1 --json
for key in median_s min_s max_s bytes gbps engine threads peak_bytes; do
	contains "$tmp/out" "\"$key\":" "bench --json has $key"
done
contains "$tmp/out" '"result":"reused"' "bench reuses the result by default"
expect 0 "bench --fresh-result" -- "$hloi" bench "$mpv" --inputs "$mpv_in" --iterations 2 --warmup 0 --fresh-result --json
contains "$tmp/out" '"result":"fresh"' "bench --fresh-result allocates every run"

# --- the evaluation plan: hloi plan, run --dump-plan, dot --plan
cat >"$tmp/fused.hlo" <<'EOF_HLO'
HloModule fused
ENTRY main {
  x = f32[64,32] parameter(0)
  mu = f32[64] parameter(1)
  m = f32[64,32] broadcast(mu), dimensions={0}
  d = f32[64,32] subtract(x, m)
  ROOT r = f32[64,32] multiply(d, d)
}
EOF_HLO
expect 0 "plan" -- "$hloi" plan "$tmp/fused.hlo" --threads 2
contains "$tmp/out" "region 0: 3 instructions fused -> f32[64,32]{1,0}" "plan shows the fused region"
contains "$tmp/out" "d = subtract(x, m)" "plan lists the region's instructions"
contains "$tmp/out" "mu f32[64]{0} as dims {0}" "plan shows a broadcast read"
contains "$tmp/out" "2 threads" "plan shows the threads"
contains "$tmp/out" "peak " "plan shows the peak memory"
expect 0 "plan --engine reference" -- "$hloi" plan "$tmp/fused.hlo" --engine reference
contains "$tmp/out" "0 regions" "the reference engine fuses nothing"
expect 3 "plan of a program that does not check" -- "$hloi" plan "$data/broadcast/numpy_outer_flag.hlo"
expect 2 "plan without a program" -- "$hloi" plan
expect 0 "run --dump-plan" -- "$hloi" run "$tmp/fused.hlo" --random-inputs --dump-plan
contains "$tmp/out" "plan of fused" "run --dump-plan prints the plan"
contains "$tmp/out" "f32[64,32] {" "run --dump-plan prints the result too"
expect 0 "dot --plan" -- "$hloi" dot --plan "$tmp/fused.hlo"
contains "$tmp/out" 'subgraph "cluster_0_g0"' "dot --plan draws the region as a cluster"
contains "$tmp/out" 'label="region 0: 3 fused' "dot --plan labels the region"
expect 3 "dot --plan of a program that does not check" -- "$hloi" dot --plan "$data/broadcast/numpy_outer_flag.hlo"

# --- an in-place (input_output_alias) module under --compare and bench:
# --compare gives each engine its own copy of the input the result is written
# into; bench carries each run's result into the next run as that input (a
# donated buffer), or with --fresh-result gives each run a fresh copy
alias="$data/alias/add_inplace_allowed"
expect 0 "--compare on an in-place module" -- "$hloi" run "$alias.hlo" --inputs "$alias.inputs" --compare
expect 0 "bench on an in-place module" -- "$hloi" bench "$alias.hlo" --inputs "$alias.inputs" --iterations 3 --warmup 1
contains "$tmp/out" "carried result" "bench on an in-place module carries each result into the next run"
expect 0 "bench --fresh-result on an in-place module" -- "$hloi" bench "$alias.hlo" --inputs "$alias.inputs" --iterations 3 --warmup 1 --fresh-result
contains "$tmp/out" "fresh result" "bench --fresh-result on an in-place module makes each result from a copy"

# --- convert: text -> pb -> pbtxt -> text gives the canonical text back
expect 0 "fmt" -- "$hloi" fmt "$mpv"
cp "$tmp/out" "$tmp/canonical.hlo"
expect 0 "convert to pb" -- "$hloi" convert "$mpv" "$tmp/m.pb"
expect 0 "convert pb to pbtxt" -- "$hloi" convert "$tmp/m.pb" "$tmp/m.pbtxt"
expect 0 "convert pbtxt to hlo" -- "$hloi" convert "$tmp/m.pbtxt" "$tmp/back.hlo"
if cmp -s "$tmp/back.hlo" "$tmp/canonical.hlo"; then ok; else bad "text -> pb -> pbtxt -> text round trip"; diff "$tmp/canonical.hlo" "$tmp/back.hlo" | head; fi
expect 0 "run the pb" -- "$hloi" run "$tmp/m.pb" --inputs "$mpv_in"
if cmp -s "$tmp/out" "$tmp/want"; then ok; else bad "pb result"; fi

# --- convert keeps the fields a newer XLA writes (unknown to hloi's schema),
# and a conversion that cannot keep them says so
uf="$data/proto/unknown_fields.pb"
expect 0 "convert pb with unknown fields to pb" -- "$hloi" convert "$uf" "$tmp/uf.pb"
if cmp -s "$uf" "$tmp/uf.pb"; then ok; else bad "unknown fields: pb -> pb changed the bytes"; fi
if [ -s "$tmp/err" ]; then bad "pb -> pb warned"; sed 's/^/  | /' "$tmp/err"; else ok; fi
expect 0 "convert pb with unknown fields to hlo" -- "$hloi" convert "$uf" "$tmp/uf.hlo"
contains "$tmp/err" "uf.hlo: warning: HLO text cannot give back these fields of the proto as they are (it drops them, or shows them as XLA prints them):" "pb -> hlo warns"
contains "$tmp/err" "unknown field 1000 (1 instruction)" "pb -> hlo names the field"
contains "$tmp/err" "7 of them are unknown to hloi's schema" "pb -> hlo counts the unknown fields"
expect 0 "convert pb with unknown fields to pbtxt" -- "$hloi" convert "$uf" "$tmp/uf.pbtxt"
contains "$tmp/err" "7 are dropped" "pb -> pbtxt counts the unknown fields"

# --- golden runner: a failing case gives exit 1, a diff and the summary line
mkdir -p "$tmp/gold"
cp "$mpv" "$tmp/gold/case.hlo"
cp "$mpv_in" "$tmp/gold/case.inputs"
printf 's32[2,3] {\n  { 0, 0, 0 },\n  { 11, 13, 15 }\n}\n' >"$tmp/gold/case.golden"
expect 1 "golden mismatch" -- "$hloi" test "$tmp/gold"
contains "$tmp/out" "-  { 0, 0, 0 }," "diff shows the expected line"
contains "$tmp/out" "+  { 8, 10, 12 }," "diff shows the actual line"
contains "$tmp/out" "0 passed, 1 failed" "summary line"
expect 0 "golden --update" -- "$hloi" test --update "$tmp/gold"
contains "$tmp/out" "updated $tmp/gold/case.golden" "--update says which file"
expect 0 "golden after update" -- "$hloi" test "$tmp/gold"
contains "$tmp/out" "1 passed, 0 failed" "summary after update"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
