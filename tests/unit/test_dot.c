/* Unit tests for the Graphviz DOT printer (`hloi dot`): exact output for a
 * checked and an unchecked module, broadcast edge labels, clusters and call
 * edges, label escaping, undefined operands, allocation failures. */
#include <stdio.h>
#include <string.h>

#include "check/check.h"
#include "text/dot.h"
#include "text/parse.h"
#include "util/alloc.h"
#include "unit.h"

typedef struct graph {
	hloi_context *ctx;
	module *m;
	strbuf b;
} graph;

/* Parses `text`, checks it when `check` is set (the check must then pass
 * when check > 0 and fail when check < 0), and prints its DOT into g->b. */
static void make(graph *g, const char *text, int check, hloi_broadcast_mode mode)
{
	memset(g, 0, sizeof *g);
	CU_ASSERT_FATAL(hloi_context_new(&g->ctx) == HLOI_OK);
	hloi_status st = text_parse_module(&g->m, g->ctx, "t.hlo", text, strlen(text));
	if (st != HLOI_OK)
		hloi_context_print_diagnostics(g->ctx, stderr, 0);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	if (check) {
		hloi_check_options o = { HLOI_CHECK_OPTIONS_VERSION, 0, mode };
		st = check_module(g->m, g->ctx, &o);
		if (check > 0 && st != HLOI_OK)
			hloi_context_print_diagnostics(g->ctx, stderr, 0);
		CU_ASSERT_EQUAL_FATAL(st == HLOI_OK, check > 0);
		CU_ASSERT_EQUAL(g->m->checked, check > 0);
	}
	text_print_dot(&g->b, g->m);
	CU_ASSERT_FALSE(g->b.oom);
}

static void done(graph *g)
{
	sb_free(&g->b);
	module_destroy(g->m);
	hloi_context_free(g->ctx);
}

/* Prints both texts when they differ, so a failure shows what changed. */
static void expect_text(const char *got, const char *want)
{
	if (strcmp(got, want) != 0)
		fprintf(stderr, "\n--- got:\n%s--- want:\n%s", got, want);
	CU_ASSERT_STRING_EQUAL(got, want);
}

#define HEAD(name)                                                                             \
	"digraph \"" name "\" {\n"                                                             \
	"\tgraph [labelloc=t, ordering=in, fontname=\"Helvetica\", label=\"HloModule " name \
	", ENTRY main\"];\n"                                                                   \
	"\tnode [fontname=\"Helvetica\", fontsize=10];\n"                                      \
	"\tedge [fontname=\"Helvetica\", fontsize=9];\n"

#define PARAM ", shape=ellipse, style=\"filled\", fillcolor=\"#dbe9f6\"];\n"
#define CONST ", shape=box, style=\"filled\", fillcolor=\"#eeeeee\"];\n"
#define OP ", shape=box, style=\"rounded\"];\n"
#define ROOT ", shape=box, style=\"rounded,bold\", penwidth=2];\n"
#define BLUE ", color=\"#1f5fbf\", fontcolor=\"#1f5fbf\"];\n"

static const char small_program[] =
	"HloModule small\n"
	"ENTRY main {\n"
	"  x = f32[2,3]{0,1} parameter(0)\n"
	"  y = f32[3] parameter(1)\n"
	"  s = f32[] constant(2)\n"
	"  a = f32[2,3] add(x, y), broadcast_dimensions={1}\n"
	"  ROOT m = f32[2,3] multiply(a, s)\n"
	"}\n";

/* A checked module: inferred shapes with layouts, the ROOT in bold,
 * parameters as ellipses, constants as filled boxes, broadcast labels. */
static void test_small_checked(void)
{
	graph g;
	make(&g, small_program, 1, HLOI_BROADCAST_DEFAULT);
	expect_text(sb_str(&g.b),
		    HEAD("small")
		    "\tn_0_0 [label=\"x\\nparameter(0)\\nf32[2,3]{0,1}\"" PARAM
		    "\tn_0_1 [label=\"y\\nparameter(1)\\nf32[3]{0}\"" PARAM
		    "\tn_0_2 [label=\"s\\nconstant(2)\\nf32[]\"" CONST
		    "\tn_0_3 [label=\"a\\nadd\\nf32[2,3]{1,0}\"" OP
		    "\tn_0_4 [label=\"ROOT m\\nmultiply\\nf32[2,3]{1,0}\"" ROOT
		    "\tn_0_0 -> n_0_3;\n"
		    "\tn_0_1 -> n_0_3 [label=\"broadcast_dimensions={1}\"" BLUE
		    "\tn_0_3 -> n_0_4;\n"
		    "\tn_0_2 -> n_0_4 [label=\"scalar\"" BLUE
		    "}\n");
	done(&g);
}

/* The same program unchecked: the written shapes (all written here, so the
 * same graph), `x`'s layout as written, the others' default one. */
static void test_small_unchecked(void)
{
	graph g;
	make(&g, small_program, 0, HLOI_BROADCAST_DEFAULT);
	expect_text(sb_str(&g.b),
		    HEAD("small")
		    "\tn_0_0 [label=\"x\\nparameter(0)\\nf32[2,3]{0,1}\"" PARAM
		    "\tn_0_1 [label=\"y\\nparameter(1)\\nf32[3]{0}\"" PARAM
		    "\tn_0_2 [label=\"s\\nconstant(2)\\nf32[]\"" CONST
		    "\tn_0_3 [label=\"a\\nadd\\nf32[2,3]{1,0}\"" OP
		    "\tn_0_4 [label=\"ROOT m\\nmultiply\\nf32[2,3]{1,0}\"" ROOT
		    "\tn_0_0 -> n_0_3;\n"
		    "\tn_0_1 -> n_0_3 [label=\"broadcast_dimensions={1}\"" BLUE
		    "\tn_0_3 -> n_0_4;\n"
		    "\tn_0_2 -> n_0_4 [label=\"scalar\"" BLUE
		    "}\n");
	done(&g);
}

/* Every label kind, checked and unchecked alike. */
static void test_broadcast_labels(void)
{
	static const char text[] =
		"HloModule labels\n"
		"ENTRY main {\n"
		"  col = f32[2,1] parameter(0)\n"
		"  row = f32[1,3] parameter(1)\n"
		"  cube = f32[4,2,3] parameter(2)\n"
		"  outer = f32[2,3] add(col, row)\n"
		"  c = f32[4,2,3] maximum(cube, col), broadcast_dimensions={1,2}\n"
		"  b = f32[4,2,3] broadcast(outer), dimensions={1,2}\n"
		"  ROOT lt = pred[4,2,3] compare(c, b), direction=LT\n"
		"}\n";
	for (int check = 0; check <= 1; check++) {
		graph g;
		make(&g, text, check, HLOI_BROADCAST_DEFAULT);
		const char *s = sb_str(&g.b);
		CU_ASSERT_PTR_NOT_NULL(strstr(s, "\tn_0_0 -> n_0_3 [label=\"degenerate\"" BLUE));
		CU_ASSERT_PTR_NOT_NULL(strstr(s, "\tn_0_1 -> n_0_3 [label=\"degenerate\"" BLUE));
		CU_ASSERT_PTR_NOT_NULL(strstr(s, "\tn_0_2 -> n_0_4;\n"));
		CU_ASSERT_PTR_NOT_NULL(
			strstr(s, "\tn_0_0 -> n_0_4 [label=\"broadcast_dimensions={1,2}\\ndegenerate\"" BLUE));
		CU_ASSERT_PTR_NOT_NULL(strstr(s, "\tn_0_3 -> n_0_5 [label=\"dimensions={1,2}\"" BLUE));
		CU_ASSERT_PTR_NOT_NULL(strstr(s, "\tn_0_4 -> n_0_6;\n\tn_0_5 -> n_0_6;\n"));
		CU_ASSERT_PTR_NOT_NULL(
			strstr(s, "n_0_6 [label=\"ROOT lt\\ncompare direction=LT\\npred[4,2,3]{2,1,0}\"" ROOT));
		done(&g);
	}
}

/* NumPy mode: the implicit trailing alignment is shown as such. */
static void test_numpy_implicit(void)
{
	static const char text[] =
		"HloModule np, broadcast_mode=numpy\n"
		"ENTRY main {\n"
		"  m = f32[4,3] parameter(0)\n"
		"  v = f32[3] parameter(1)\n"
		"  ROOT r = f32[4,3] add(m, v)\n"
		"}\n";
	for (int check = 0; check <= 1; check++) {
		graph g;
		make(&g, text, check, HLOI_BROADCAST_DEFAULT);
		CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&g.b),
			"\tn_0_1 -> n_0_2 [label=\"implicit broadcast_dimensions={1}\"" BLUE));
		CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&g.b), "\tn_0_0 -> n_0_2;\n"));
		done(&g);
	}
}

/* Called computations are clusters; the call site points at their root. */
static void test_clusters(void)
{
	static const char text[] =
		"HloModule calls\n"
		"add.f32 {\n"
		"  a = f32[] parameter(0)\n"
		"  b = f32[] parameter(1)\n"
		"  ROOT s = f32[] add(a, b)\n"
		"}\n"
		"ENTRY main {\n"
		"  x = f32[4] parameter(0)\n"
		"  z = f32[] constant(0)\n"
		"  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add.f32\n"
		"}\n";
	graph g;
	make(&g, text, 1, HLOI_BROADCAST_DEFAULT);
	expect_text(sb_str(&g.b),
		    "digraph \"calls\" {\n"
		    "\tgraph [labelloc=t, ordering=in, fontname=\"Helvetica\", label=\"HloModule calls, ENTRY main\"];\n"
		    "\tnode [fontname=\"Helvetica\", fontsize=10];\n"
		    "\tedge [fontname=\"Helvetica\", fontsize=9];\n"
		    "\tsubgraph \"cluster_add.f32\" {\n"
		    "\t\tlabel=\"add.f32\";\n"
		    "\t\tstyle=\"rounded,filled\";\n"
		    "\t\tfillcolor=\"#f6f6f0\";\n"
		    "\t\tn_0_0 [label=\"a\\nparameter(0)\\nf32[]\"" PARAM
		    "\t\tn_0_1 [label=\"b\\nparameter(1)\\nf32[]\"" PARAM
		    "\t\tn_0_2 [label=\"ROOT s\\nadd\\nf32[]\"" ROOT
		    "\t\tn_0_0 -> n_0_2;\n"
		    "\t\tn_0_1 -> n_0_2;\n"
		    "\t}\n"
		    "\tn_1_0 [label=\"x\\nparameter(0)\\nf32[4]{0}\"" PARAM
		    "\tn_1_1 [label=\"z\\nconstant(0)\\nf32[]\"" CONST
		    "\tn_1_2 [label=\"ROOT r\\nreduce dimensions={0}\\nf32[]\"" ROOT
		    "\tn_1_0 -> n_1_2;\n"
		    "\tn_1_1 -> n_1_2;\n"
		    "\tn_1_2 -> n_0_2 [style=dashed, constraint=false, label=\"to_apply\"];\n"
		    "}\n");
	done(&g);
}

/* Quotes, backslashes and newlines in names cannot break out of a label. */
static void test_escaping(void)
{
	static const char text[] =
		"HloModule esc\n"
		"ENTRY main {\n"
		"  p = f32[2] parameter(0)\n"
		"  ROOT r = f32[2] negate(p)\n"
		"}\n";
	graph g;
	make(&g, text, 0, HLOI_BROADCAST_DEFAULT);
	/* Names from a proto file may hold any text. */
	g.m->name = "m\"x\\y";
	g.m->comps[0]->instrs[0]->name = "a\"b\\c\nd";
	g.m->comps[0]->instrs[1]->ops[0].name = "a\"b\\c\nd";
	sb_reset(&g.b);
	text_print_dot(&g.b, g.m);
	const char *s = sb_str(&g.b);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "digraph \"m\\\"x\\\\y\" {\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "label=\"HloModule m\\\"x\\\\y, ENTRY main\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\tn_0_0 [label=\"a\\\"b\\\\c\\nd\\nparameter(0)\\nf32[2]{0}\"" PARAM));
	/* The operand still resolves to its (oddly named) definition. */
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\tn_0_0 -> n_0_1;\n"));
	/* Outside escapes, quotes come in pairs on every line. */
	for (const char *line = s; *line;) {
		const char *end = strchr(line, '\n');
		int quotes = 0;
		for (const char *p = line; p < end; p++) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				quotes++;
		}
		CU_ASSERT_EQUAL(quotes % 2, 0);
		line = end + 1;
	}
	done(&g);
}

/* An operand nothing defines (a failed check) becomes a red placeholder. */
static void test_undefined_operand(void)
{
	static const char text[] =
		"HloModule undef\n"
		"ENTRY main {\n"
		"  p = f32[2] parameter(0)\n"
		"  ROOT r = f32[2] add(p, q)\n"
		"}\n";
	graph g;
	make(&g, text, -1, HLOI_BROADCAST_DEFAULT);
	const char *s = sb_str(&g.b);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\tn_0_0 -> n_0_1;\n"
					 "\tu_0_1_1 [label=\"q\\n(undefined)\", shape=plaintext, fontcolor=red];\n"
					 "\tu_0_1_1 -> n_0_1 [color=red];\n"));
	done(&g);
}

/* Long constants show only their opcode; short ones their value. */
static void test_constants(void)
{
	static const char text[] =
		"HloModule k\n"
		"ENTRY main {\n"
		"  a = s32[16] constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})\n"
		"  b = s32[2,2] constant({ {1, 2}, {3, 4} })\n"
		"  ROOT r = s32[16] add(a, a)\n"
		"}\n";
	graph g;
	make(&g, text, 1, HLOI_BROADCAST_DEFAULT);
	const char *s = sb_str(&g.b);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\tn_0_0 [label=\"a\\nconstant\\ns32[16]{0}\"" CONST));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\tn_0_1 [label=\"b\\nconstant({{1, 2}, {3, 4}})\\ns32[2,2]{1,0}\"" CONST));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\tn_0_0 -> n_0_2;\n\tn_0_0 -> n_0_2;\n"));
	done(&g);
}

/* The public function writes exactly what text_print_dot builds. */
static void test_api(void)
{
	graph g;
	make(&g, small_program, 1, HLOI_BROADCAST_DEFAULT);
	FILE *f = tmpfile();
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(hloi_module_print_dot(g.m, f), HLOI_OK);
	rewind(f);
	char buf[4096];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf, sb_str(&g.b));
	done(&g);
}

/* Every allocation failing in turn: oom is reported, nothing leaks (ASan). */
static void test_oom(void)
{
	static const char text[] =
		"HloModule calls\n"
		"add {\n"
		"  a = f32[] parameter(0)\n"
		"  b = f32[] parameter(1)\n"
		"  ROOT s = f32[] add(a, b)\n"
		"}\n"
		"ENTRY main {\n"
		"  x = f32[4] parameter(0)\n"
		"  z = f32[] constant({...})\n"
		"  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n"
		"}\n";
	graph g;
	make(&g, text, 0, HLOI_BROADCAST_DEFAULT);
	int failures = 0, success = 0;
	for (long k = 0; k < 200 && !success; k++) {
		strbuf b = STRBUF_INIT;
		alloc_fail_after(k);
		text_print_dot(&b, g.m);
		alloc_fail_after(-1);
		if (b.oom)
			failures++;
		else
			success = !strcmp(sb_str(&b), sb_str(&g.b));
		sb_free(&b);
	}
	CU_ASSERT_TRUE(failures > 0);
	CU_ASSERT_TRUE(success);
	done(&g);
}

static const unit_test dot_tests[] = {
	{ "small program, checked", test_small_checked },
	{ "small program, unchecked", test_small_unchecked },
	{ "broadcast labels", test_broadcast_labels },
	{ "numpy implicit alignment", test_numpy_implicit },
	{ "clusters and call edges", test_clusters },
	{ "escaping", test_escaping },
	{ "undefined operand", test_undefined_operand },
	{ "constants", test_constants },
	{ "public API", test_api },
	{ "allocation failures", test_oom },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "dot", dot_tests },
	{ NULL, NULL },
};
