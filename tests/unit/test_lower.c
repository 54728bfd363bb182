/* Unit tests for `hloi lower` (rewrite/lower.c) and --strict's attribute rules
 * (check/strict.c): each kind of implicit broadcast (vector InDim, scalar,
 * degenerate, InDim + degenerate, compare, NumPy mode), the stretching
 * broadcast and select's scalar pred lower to the expected instructions; the
 * printed result re-parses, passes --strict and evaluates to the same values
 * as the original. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "rewrite/lower.h"
#include "core/literal.h"
#include "eval/eval.h"
#include "text/parse.h"
#include "text/print.h"
#include "unit.h"

/* --- helpers ------------------------------------------------------------------ */

static module *parse_checked(hloi_context *ctx, const char *text, int strict, hloi_broadcast_mode mode,
			     hloi_status *st)
{
	module *m = NULL;
	hloi_status s = text_parse_module(&m, ctx, "t.hlo", text, strlen(text));
	if (s != HLOI_OK) {
		*st = s;
		return m;
	}
	hloi_check_options o = { HLOI_CHECK_OPTIONS_VERSION, strict, mode };
	*st = check_module(m, ctx, &o);
	return m;
}

static char *print_module(const module *m)
{
	strbuf b = STRBUF_INIT;
	text_print_module(&b, m);
	CU_ASSERT_FATAL(!b.oom);
	char *s = strdup(sb_str(&b));
	sb_free(&b);
	return s;
}

static int same_literal(hloi_literal *a, hloi_literal *b)
{
	char x[256], y[256];
	hloi_shape_to_string(hloi_literal_shape(a), 1, x, sizeof x);
	hloi_shape_to_string(hloi_literal_shape(b), 1, y, sizeof y);
	if (strcmp(x, y) != 0) {
		fprintf(stderr, "shapes differ: %s vs %s\n", x, y);
		return 0;
	}
	size_t n = hloi_literal_size_bytes(a);
	return n == hloi_literal_size_bytes(b) &&
	       (n == 0 || memcmp(hloi_literal_data(a), hloi_literal_data(b), n) == 0);
}

/* Lowers `text` (checked in `mode`), expects every line of `want` (lines
 * separated by '\n') in the printed result, checks that the result passes
 * --strict and gives the values of the original on random inputs. */
static void lower_case(const char *text, hloi_broadcast_mode mode, const char *want)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	hloi_status st;
	module *orig = parse_checked(ctx, text, 0, mode, &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	/* the original does not pass --strict */
	module *strict = parse_checked(ctx, text, 1, mode, &st);
	CU_ASSERT_EQUAL(st, HLOI_ETYPE);
	module_destroy(strict);
	hloi_context_clear(ctx);

	module *m = parse_checked(ctx, text, 0, mode, &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(lower_module(m, ctx), HLOI_OK);
	CU_ASSERT_EQUAL(m->checked, 0);
	char *out = print_module(m);
	/* every wanted line is in the output */
	const char *p = want;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)n, p);
		if (!strstr(out, line)) {
			fprintf(stderr, "missing line: %s\nin:\n%s", line, out);
			CU_FAIL("a wanted line is missing from the lowered program");
		}
		p += n + (e ? 1 : 0);
	}
	CU_ASSERT(strstr(out, "broadcast_dimensions") == NULL);
	CU_ASSERT(strstr(out, "broadcast_mode") == NULL);

	/* the printed program re-parses, passes --strict, prints the same */
	module *low = parse_checked(ctx, out, 1, HLOI_BROADCAST_XLA, &st);
	if (st != HLOI_OK) {
		hloi_context_print_diagnostics(ctx, stderr, 0);
		fprintf(stderr, "lowered:\n%s", out);
	}
	CU_ASSERT_EQUAL(st, HLOI_OK);
	if (st == HLOI_OK) {
		char *again = print_module(low);
		CU_ASSERT_STRING_EQUAL(again, out);
		free(again);

		/* the same values on the same inputs */
		hloi_literal **in = NULL, *r1 = NULL, *r2 = NULL;
		size_t nin = 0;
		CU_ASSERT_EQUAL_FATAL(eval_random_inputs(&in, &nin, orig, ctx, 5), HLOI_OK);
		hloi_run_options ro = HLOI_RUN_OPTIONS_INIT;
		ro.engine = HLOI_ENGINE_REFERENCE; /* the oracle engine */
		CU_ASSERT_EQUAL(eval_module(orig, ctx, in, nin, &ro, &r1), HLOI_OK);
		CU_ASSERT_EQUAL(eval_module(low, ctx, in, nin, &ro, &r2), HLOI_OK);
		if (r1 && r2)
			CU_ASSERT(same_literal(r1, r2));
		hloi_literal_free(r1);
		hloi_literal_free(r2);
		hloi_literal_array_free(in, nin);
	}
	module_destroy(low);
	free(out);
	module_destroy(m);
	module_destroy(orig);
	hloi_context_free(ctx);
}

/* --- lowering ------------------------------------------------------------------ */

static void test_vector_indim(void)
{
	lower_case("HloModule m\nENTRY e {\n  x = s32[2,3] parameter(0)\n  y = s32[3] parameter(1)\n"
		   "  ROOT r = s32[2,3] add(x, y), broadcast_dimensions={1}\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "  r.rhs.broadcast = s32[2,3]{1,0} broadcast(y), dimensions={1}\n"
		   "  ROOT r = s32[2,3]{1,0} add(x, r.rhs.broadcast)\n");
	/* the vector on the left, matched to dim 0 */
	lower_case("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4,2] parameter(1)\n"
		   "  ROOT r = f32[4,2] subtract(x, y), broadcast_dimensions={0}\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "  r.lhs.broadcast = f32[4,2]{1,0} broadcast(x), dimensions={0}\n"
		   "  ROOT r = f32[4,2]{1,0} subtract(r.lhs.broadcast, y)\n");
}

static void test_scalar(void)
{
	lower_case("HloModule m\nENTRY e {\n  x = f32[2,2] parameter(0)\n  s = f32[] constant(2)\n"
		   "  m = f32[2,2] multiply(s, x)\n  ROOT r = f32[2,2] power(m, s)\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "  m.lhs.broadcast = f32[2,2]{1,0} broadcast(s), dimensions={}\n"
		   "  m = f32[2,2]{1,0} multiply(m.lhs.broadcast, x)\n"
		   "  r.rhs.broadcast = f32[2,2]{1,0} broadcast(s), dimensions={}\n"
		   "  ROOT r = f32[2,2]{1,0} power(m, r.rhs.broadcast)\n");
}

static void test_degenerate_compare(void)
{
	lower_case("HloModule m\nENTRY e {\n  a = s32[2,1] parameter(0)\n  b = s32[1,3] parameter(1)\n"
		   "  ROOT r = pred[2,3] compare(a, b), direction=LT\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "  r.lhs.reshape = s32[2]{0} reshape(a)\n"
		   "  r.lhs.broadcast = s32[2,3]{1,0} broadcast(r.lhs.reshape), dimensions={0}\n"
		   "  r.rhs.reshape = s32[3]{0} reshape(b)\n"
		   "  r.rhs.broadcast = s32[2,3]{1,0} broadcast(r.rhs.reshape), dimensions={1}\n"
		   "  ROOT r = pred[2,3]{1,0} compare(r.lhs.broadcast, r.rhs.broadcast), direction=LT\n");
}

static void test_indim_degenerate(void)
{
	lower_case("HloModule m\nENTRY e {\n  s = s32[2,1] constant({ {100}, {200} })\n"
		   "  l = s32[2,3,4] parameter(0)\n"
		   "  ROOT r = s32[2,3,4] add(s, l), broadcast_dimensions={0,2}\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "  r.lhs.reshape = s32[2]{0} reshape(s)\n"
		   "  r.lhs.broadcast = s32[2,3,4]{2,1,0} broadcast(r.lhs.reshape), dimensions={0}\n"
		   "  ROOT r = s32[2,3,4]{2,1,0} add(r.lhs.broadcast, l)\n");
	/* a size-1 higher-rank dim takes the lower-rank operand's size */
	lower_case("HloModule m\nENTRY e {\n  v = f32[4] parameter(0)\n  w = f32[1,2] parameter(1)\n"
		   "  ROOT r = f32[4,2] maximum(v, w), broadcast_dimensions={0}\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "  r.lhs.broadcast = f32[4,2]{1,0} broadcast(v), dimensions={0}\n"
		   "  r.rhs.reshape = f32[2]{0} reshape(w)\n"
		   "  r.rhs.broadcast = f32[4,2]{1,0} broadcast(r.rhs.reshape), dimensions={1}\n");
}

static void test_all_ones_and_zero(void)
{
	lower_case("HloModule m\nENTRY e {\n  a = f32[1,1] parameter(0)\n  b = f32[2,3] parameter(1)\n"
		   "  ROOT r = f32[2,3] minimum(a, b)\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "  r.lhs.reshape = f32[] reshape(a)\n"
		   "  r.lhs.broadcast = f32[2,3]{1,0} broadcast(r.lhs.reshape), dimensions={}\n");
	/* size 1 against size 0 stretches to 0 */
	lower_case("HloModule m\nENTRY e {\n  a = s8[1,0] parameter(0)\n  b = s8[2,1] parameter(1)\n"
		   "  ROOT r = s8[2,0] xor(a, b)\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "  r.lhs.reshape = s8[0]{0} reshape(a)\n"
		   "  r.lhs.broadcast = s8[2,0]{1,0} broadcast(r.lhs.reshape), dimensions={1}\n"
		   "  r.rhs.reshape = s8[2]{0} reshape(b)\n"
		   "  r.rhs.broadcast = s8[2,0]{1,0} broadcast(r.rhs.reshape), dimensions={0}\n");
}

static void test_numpy_mode(void)
{
	lower_case("HloModule m, broadcast_mode=numpy\nENTRY e {\n  a = s32[4,3] parameter(0)\n"
		   "  b = s32[3] parameter(1)\n  ROOT r = s32[4,3] shift-left(a, b)\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "HloModule m\n"
		   "  r.rhs.broadcast = s32[4,3]{1,0} broadcast(b), dimensions={1}\n");
	lower_case("HloModule m\nENTRY e {\n  a = f32[2,1,3] parameter(0)\n  b = f32[4,1] parameter(1)\n"
		   "  ROOT r = f32[2,4,3] atan2(a, b)\n}\n",
		   HLOI_BROADCAST_NUMPY,
		   "  r.lhs.reshape = f32[2,3]{1,0} reshape(a)\n"
		   "  r.lhs.broadcast = f32[2,4,3]{2,1,0} broadcast(r.lhs.reshape), dimensions={0,2}\n"
		   "  r.rhs.reshape = f32[4]{0} reshape(b)\n"
		   "  r.rhs.broadcast = f32[2,4,3]{2,1,0} broadcast(r.rhs.reshape), dimensions={1}\n");
}

static void test_stretching_broadcast(void)
{
	lower_case("HloModule m\nENTRY e {\n  v = f32[1,3] parameter(0)\n"
		   "  ROOT b = f32[2,3,4] broadcast(v), dimensions={0,1}\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "  b.reshape = f32[3]{0} reshape(v)\n"
		   "  ROOT b = f32[2,3,4]{2,1,0} broadcast(b.reshape), dimensions={1}\n");
}

static void test_layouts_and_names(void)
{
	lower_case("HloModule m\nENTRY e {\n  x = f32[2,3]{0,1} parameter(0)\n"
		   "  y = f32[2,1]{0,1:pad(4,1)} parameter(1)\n"
		   "  r.rhs.reshape = f32[2,3] add(x, x)\n"
		   "  ROOT r = f32[2,3]{0,1:pad(3,5)} divide(r.rhs.reshape, y)\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "  r.rhs.reshape.1 = f32[2]{0} reshape(y)\n"
		   "  r.rhs.broadcast = f32[2,3]{1,0} broadcast(r.rhs.reshape.1), dimensions={0}\n"
		   "  ROOT r = f32[2,3]{0,1:pad(3,5)} divide(r.rhs.reshape, r.rhs.broadcast)\n");
}

static void test_select_scalar_pred(void)
{
	lower_case("HloModule m\nENTRY e {\n  p = pred[] parameter(0)\n  a = s32[3] parameter(1)\n"
		   "  b = s32[3] parameter(2)\n  ROOT r = s32[3] select(p, a, b)\n}\n",
		   HLOI_BROADCAST_DEFAULT,
		   "  r.pred.broadcast = pred[3]{0} broadcast(p), dimensions={}\n"
		   "  ROOT r = s32[3]{0} select(r.pred.broadcast, a, b)\n");
}

static void test_nothing_to_lower(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	hloi_status st;
	const char *text = "HloModule m\nENTRY e {\n  x = s32[2] parameter(0)\n"
			   "  ROOT r = add(x, x), broadcast_dimensions={0}\n}\n";
	module *m = parse_checked(ctx, text, 0, HLOI_BROADCAST_DEFAULT, &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	CU_ASSERT_EQUAL(lower_module(m, ctx), HLOI_OK);
	char *out = print_module(m);
	CU_ASSERT_STRING_EQUAL(out, "HloModule m\n\nENTRY e {\n  x = s32[2]{0} parameter(0)\n"
				    "  ROOT r = s32[2]{0} add(x, x)\n}\n");
	free(out);
	module_destroy(m);
	hloi_context_free(ctx);
}

static void test_requires_checked(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	const char *text = "ENTRY e {\n  ROOT x = s32[2] parameter(0)\n}\n";
	module *m = NULL;
	CU_ASSERT_EQUAL_FATAL(text_parse_module(&m, ctx, "t.hlo", text, strlen(text)), HLOI_OK);
	CU_ASSERT_EQUAL(lower_module(m, ctx), HLOI_EINVAL);
	CU_ASSERT_EQUAL(hloi_context_error_count(ctx), 1);
	module_destroy(m);
	hloi_context_free(ctx);
}

/* --- --strict attributes --------------------------------------------------------- */

static void test_unknown_recorded(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	const char *text = "HloModule m, zap=1\nENTRY e {\n  x = s32[2] parameter(0), foo=1\n"
			   "  ROOT r = s32[2] add(x, x), bar={1,2}\n}\n";
	hloi_status st;
	module *m = parse_checked(ctx, text, 0, HLOI_BROADCAST_DEFAULT, &st);
	CU_ASSERT_EQUAL(st, HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(m->nunknown, 3);
	const unknown_attr *u = m->unknown;
	CU_ASSERT_STRING_EQUAL(u->name, "zap");
	CU_ASSERT_EQUAL(u->header, 1);
	CU_ASSERT_STRING_EQUAL(u->next->name, "foo");
	CU_ASSERT_EQUAL(u->next->header, 0);
	CU_ASSERT_STRING_EQUAL(u->next->next->name, "bar");
	CU_ASSERT_EQUAL(strncmp(text + u->next->next->at.start, "bar={1,2}", 9), 0);
	CU_ASSERT_EQUAL(u->next->next->at.end - u->next->next->at.start, 9);
	CU_ASSERT_EQUAL(hloi_context_error_count(ctx), 0);
	module_destroy(m);

	/* with --strict each one is an error, after the parser's warning */
	hloi_context_clear(ctx);
	m = parse_checked(ctx, text, 1, HLOI_BROADCAST_DEFAULT, &st);
	CU_ASSERT_EQUAL(st, HLOI_ETYPE);
	CU_ASSERT_EQUAL(hloi_context_error_count(ctx), 3);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx),
			       "unknown attribute 'bar' (not allowed with --strict)");
	int header = 0;
	for (size_t i = 0; i < ctx->ndiags; i++)
		if (!strcmp(ctx->diags[i].message, "unknown header attribute 'zap' (not allowed with --strict)"))
			header = ctx->diags[i].severity == DIAG_ERROR;
	CU_ASSERT(header);
	module_destroy(m);
	hloi_context_free(ctx);
}

static void test_strict_extensions(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	hloi_status st;
	const char *mode = "HloModule m, broadcast_mode=xla\nENTRY e {\n  x = s32[2] parameter(0)\n"
			   "  ROOT r = s32[2] add(x, x)\n}\n";
	module *m = parse_checked(ctx, mode, 1, HLOI_BROADCAST_DEFAULT, &st);
	CU_ASSERT_EQUAL(st, HLOI_ETYPE);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx),
			       "header attribute broadcast_mode is an hloi extension (not allowed with --strict)");
	CU_ASSERT_EQUAL(ctx->diags[0].at.start, strstr(mode, "broadcast_mode") - mode);
	module_destroy(m);

	hloi_context_clear(ctx);
	const char *ident = "ENTRY e {\n  x = s32[2] parameter(0)\n"
			    "  ROOT r = s32[2] add(x, x), broadcast_dimensions={0}\n}\n";
	m = parse_checked(ctx, ident, 1, HLOI_BROADCAST_DEFAULT, &st);
	CU_ASSERT_EQUAL(st, HLOI_ETYPE);
	CU_ASSERT_EQUAL(hloi_context_error_count(ctx), 1);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx),
			       "attribute broadcast_dimensions is an hloi extension (not allowed with --strict)");
	CU_ASSERT_EQUAL(ctx->diags[0].at.start, strstr(ident, "broadcast_dimensions") - ident);
	module_destroy(m);

	/* without --strict all of these are fine */
	hloi_context_clear(ctx);
	m = parse_checked(ctx, ident, 0, HLOI_BROADCAST_DEFAULT, &st);
	CU_ASSERT_EQUAL(st, HLOI_OK);
	module_destroy(m);
	m = parse_checked(ctx, mode, 0, HLOI_BROADCAST_DEFAULT, &st);
	CU_ASSERT_EQUAL(st, HLOI_OK);
	module_destroy(m);
	hloi_context_free(ctx);
}

static const unit_test lower_tests[] = {
	{ "vector InDim", test_vector_indim },
	{ "scalar operands", test_scalar },
	{ "degenerate compare", test_degenerate_compare },
	{ "InDim + degenerate", test_indim_degenerate },
	{ "all size-1 dims, size 0", test_all_ones_and_zero },
	{ "NumPy mode", test_numpy_mode },
	{ "stretching broadcast", test_stretching_broadcast },
	{ "layouts and taken names", test_layouts_and_names },
	{ "select with a scalar pred", test_select_scalar_pred },
	{ "nothing to lower", test_nothing_to_lower },
	{ "requires a checked module", test_requires_checked },
	{ NULL, NULL },
};

static const unit_test strict_tests[] = {
	{ "unknown attributes recorded and rejected", test_unknown_recorded },
	{ "broadcast_mode and identity broadcast_dimensions", test_strict_extensions },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "lower", lower_tests },
	{ "strict attributes", strict_tests },
	{ NULL, NULL },
};
