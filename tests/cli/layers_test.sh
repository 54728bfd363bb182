#!/bin/sh
# The layering of src/: which folder's files may include which folder's
# headers (#include "folder/..."), and the roles of src/eval/, lowest
# first. Fails naming each file and include that breaks it.
#   usage: layers_test.sh SRC_DIR
set -eu
src=${1:?usage: layers_test.sh SRC_DIR}
cd "$src"

# One line per folder of src/: the folder, then the folders its files may
# include besides its own. A new folder needs a line here (its place in
# the order); a folder without one is an error.
folders='
util
core    util
ir      core util
io      core util
text    ir core util
mlir    text ir core util
check   text ir core util
rewrite check text ir core util
proto   text ir core util
eval    text ir core util
api     rewrite check eval proto mlir text io ir core util
cli     api
'

# The roles of src/eval/, lowest first: a file of a role includes headers
# of its own role and of lower ones only. The driver is src/eval/ itself:
# only the files named on its line sit there, and they may include any role.
eval_roles='scalar fast base lib plan kernels runtime'
eval_driver='eval.h run.c'

prog='
BEGIN {
	n = split(folders, lines, "\n")
	for (i = 1; i <= n; i++) {
		k = split(lines[i], w, " ")
		if (k == 0)
			continue
		known[w[1]] = 1
		for (j = 2; j <= k; j++)
			allow[w[1], w[j]] = 1
	}
	nr = split(roles, r, " ")
	for (i = 1; i <= nr; i++)
		rank[r[i]] = i
	nd = split(driver, d, " ")
	for (i = 1; i <= nd; i++)
		isdriver[d[i]] = 1
	bad = 0
}
# the folder of src/ a path names, and for src/eval/ the role
function top(p) { sub(/^\.\//, "", p); return substr(p, 1, index(p, "/") - 1) }
function role(p,   parts, k) {
	sub(/^\.\//, "", p)
	k = split(p, parts, "/")
	if (parts[1] != "eval")
		return ""
	return k == 2 ? "driver" : parts[2]
}
function fail(msg) { print "layers: " msg; bad = 1 }
FNR == 1 {
	file = FILENAME
	sub(/^\.\//, "", file)
	from = top(FILENAME)
	if (from == "")
		fail(file ": a file directly in src/ (put it in a folder)")
	else if (!(from in known))
		fail(file ": folder src/" from "/ is not in the layering table of tests/cli/layers_test.sh: add a line saying what it may include")
	fr = role(FILENAME)
	if (fr == "driver") {
		base = file
		sub(/^eval\//, "", base)
		if (!(base in isdriver))
			fail(file ": only the driver (" driver ") sits directly in src/eval/; put it in a role folder (" roles ")")
	} else if (fr != "" && !(fr in rank))
		fail(file ": src/eval/" fr "/ is not a role of tests/cli/layers_test.sh (" roles ")")
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
	inc = $0
	sub(/^[^"]*"/, "", inc)
	sub(/".*$/, "", inc)
	if (index(inc, "/") == 0)
		next            # hloi.h, generated headers, a file beside it
	to = substr(inc, 1, index(inc, "/") - 1)
	if (to == "hloi")
		next            # the public headers of include/ (hloi/tool.h)
	if (!(to in known)) {
		fail(file ": includes \"" inc "\" from src/" to "/, which is not in the layering table")
		next
	}
	if (to != from && !((from, to) in allow))
		fail(file ": includes \"" inc "\": src/" from "/ may not include src/" to "/")
	if (from == "eval" && to == "eval" && fr != "driver" && (fr in rank)) {
		tr = role("./" inc)
		if (tr == "driver")
			fail(file ": includes \"" inc "\": the " fr " role may not include the driver")
		else if (!(tr in rank))
			fail(file ": includes \"" inc "\": src/eval/" tr "/ is not a role")
		else if (rank[tr] > rank[fr])
			fail(file ": includes \"" inc "\": the " fr " role may not include the higher " tr " role")
	}
}
END { exit bad }
'
if find . -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort |
	xargs awk -v folders="$folders" -v roles="$eval_roles" -v driver="$eval_driver" "$prog"; then
	echo "layers: src/ keeps its layering"
else
	echo "layers: FAILED (see above; the table is in tests/cli/layers_test.sh)"
	exit 1
fi
