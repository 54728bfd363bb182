/* Unit tests for the HLO text front end: the lexer and grammar (grammar/),
 * the IR the driver builds, error locations and recovery, and the printer's
 * parse -> print -> parse fixed point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/parse.h"
#include "text/print.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "unit.h"

/* --- helpers ------------------------------------------------------------------ */

static module *parse(hloi_context *ctx, const char *text, hloi_status *st)
{
	module *m = NULL;
	*st = text_parse_module(&m, ctx, "t.hlo", text, strlen(text));
	return m;
}

static char *print(const module *m)
{
	strbuf b = STRBUF_INIT;
	text_print_module(&b, m);
	return sb_take(&b);
}

/* Parses text that must be valid (warnings allowed); prints it, parses and
 * prints the result again and checks the two prints agree. Returns the first
 * print (caller frees). */
static char *roundtrip(const char *text)
{
	hloi_context *ctx;
	hloi_status st;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = parse(ctx, text, &st);
	CU_ASSERT_EQUAL(st, HLOI_OK);
	if (!m) {
		for (size_t i = 0; i < ctx->ndiags; i++)
			fprintf(stderr, "diag: %s\n", ctx->diags[i].message);
		hloi_context_free(ctx);
		return NULL;
	}
	char *p1 = print(m);
	module_destroy(m);
	m = parse(ctx, p1, &st);
	CU_ASSERT_EQUAL(st, HLOI_OK);
	char *p2 = m ? print(m) : NULL;
	CU_ASSERT_PTR_NOT_NULL(p2);
	if (p2 && strcmp(p1, p2) != 0) {
		fprintf(stderr, "not a fixed point:\n%s\n----\n%s\n", p1, p2);
		CU_FAIL("print(parse(print(parse(x)))) != print(parse(x))");
	}
	hloi_free(p2);
	module_destroy(m);
	hloi_context_free(ctx);
	return p1;
}

static void check_print(const char *text, const char *expect)
{
	char *p = roundtrip(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	if (strcmp(p, expect) != 0)
		fprintf(stderr, "got:\n%s\nexpected:\n%s\n", p, expect);
	CU_ASSERT_STRING_EQUAL(p, expect);
	hloi_free(p);
}

/* Diagnostic i of ctx as "LINE:COL-ENDCOL severity: message". */
static void diag_str(const hloi_context *ctx, size_t i, char *buf, size_t size)
{
	const diag *d = &ctx->diags[i];
	const source *s = diag_source(ctx, d->source);
	size_t l = 0, c = 0, l2 = 0, c2 = 0;
	if (s) {
		diag_line_col(s, d->at.start, &l, &c);
		diag_line_col(s, d->at.end, &l2, &c2);
	}
	snprintf(buf, size, "%zu:%zu-%zu %s: %s", l, c, c2,
		 d->severity == DIAG_ERROR ? "error" : d->severity == DIAG_WARNING ? "warning" : "note",
		 d->message);
}

/* Parses `text`, expects HLOI_EPARSE and exactly the diagnostics given
 * (each "LINE:COL-ENDCOL severity: message"), NULL-terminated. */
static void expect_diags(const char *text, size_t len, const char *const *want)
{
	hloi_context *ctx;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = (module *)1;
	hloi_status st = text_parse_module(&m, ctx, "t.hlo", text, len);
	CU_ASSERT_EQUAL(st, HLOI_EPARSE);
	CU_ASSERT_PTR_NULL(m);
	size_t n = 0;
	while (want[n])
		n++;
	char buf[512];
	for (size_t i = 0; i < ctx->ndiags || i < n; i++) {
		if (i < ctx->ndiags)
			diag_str(ctx, i, buf, sizeof buf);
		else
			snprintf(buf, sizeof buf, "(none)");
		const char *w = i < n ? want[i] : "(none)";
		if (strcmp(buf, w) != 0)
			fprintf(stderr, "diag %zu: got '%s', want '%s'\n", i, buf, w);
		CU_ASSERT_STRING_EQUAL(buf, w);
	}
	hloi_context_free(ctx);
}

#define EXPECT_DIAGS(text, ...)                                                   \
	do {                                                                     \
		static const char *const want_[] = { __VA_ARGS__, NULL };        \
		expect_diags(text, strlen(text), want_);                         \
	} while (0)

static const instr *find_instr(const computation *c, const char *name)
{
	for (int i = 0; i < c->ninstrs; i++)
		if (!strcmp(c->instrs[i]->name, name))
			return c->instrs[i];
	return NULL;
}

static char *shape_str(const shape *s)
{
	strbuf b = STRBUF_INIT;
	shape_print(&b, s, 1);
	return sb_take(&b);
}

/* The source text a location covers. */
static int span_is(const char *text, loc at, const char *want)
{
	size_t n = strlen(want);
	return at.end - at.start == n && memcmp(text + at.start, want, n) == 0;
}

/* --- xla-facts §1.7 samples ---------------------------------------------------- */

static const char axpy[] =
	"HloModule axpy_module, entry_computation_layout={(f32[], f32[2,4]{1,0}, f32[2,4]{1,0})->f32[2,4]{1,0}}\n"
	"\n"
	"ENTRY %axpy.v5 (alpha: f32[], x: f32[2,4], y: f32[2,4]) -> f32[2,4] {\n"
	"  %alpha = f32[] parameter(0)\n"
	"  %broadcast = f32[2,4]{1,0} broadcast(f32[] %alpha), dimensions={}\n"
	"  %x = f32[2,4]{1,0} parameter(1)\n"
	"  %multiply = f32[2,4]{1,0} multiply(f32[2,4]{1,0} %broadcast, f32[2,4]{1,0} %x)\n"
	"  %y = f32[2,4]{1,0} parameter(2)\n"
	"  ROOT %add = f32[2,4]{1,0} add(f32[2,4]{1,0} %multiply, f32[2,4]{1,0} %y)\n"
	"}\n";

static void test_axpy_long_format(void)
{
	hloi_context *ctx;
	hloi_status st;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = parse(ctx, axpy, &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	CU_ASSERT_EQUAL(ctx->ndiags, 0);
	CU_ASSERT_TRUE(m->has_header);
	CU_ASSERT_STRING_EQUAL(m->name, "axpy_module");
	CU_ASSERT_STRING_EQUAL(m->filename, "t.hlo");
	CU_ASSERT_TRUE(m->src >= 0);
	CU_ASSERT_STRING_EQUAL(diag_source(ctx, m->src)->name, "t.hlo");
	CU_ASSERT_EQUAL_FATAL(m->nheader_attrs, 1);
	CU_ASSERT_STRING_EQUAL(m->header_attrs[0].name, "entry_computation_layout");
	CU_ASSERT_STRING_EQUAL(m->header_attrs[0].value,
			       "{(f32[], f32[2,4]{1,0}, f32[2,4]{1,0})->f32[2,4]{1,0}}");
	CU_ASSERT_EQUAL_FATAL(m->ncomps, 1);
	computation *c = m->comps[0];
	CU_ASSERT_PTR_EQUAL(m->entry, c);
	CU_ASSERT_TRUE(c->is_entry);
	CU_ASSERT_STRING_EQUAL(c->name, "axpy.v5");
	CU_ASSERT_TRUE(span_is(axpy, c->name_at, "%axpy.v5"));
	CU_ASSERT_EQUAL_FATAL(c->ninstrs, 6);
	CU_ASSERT_TRUE(c->has_signature);
	CU_ASSERT_EQUAL_FATAL(c->nsig_params, 3);
	CU_ASSERT_STRING_EQUAL(c->sig_names[1], "x");
	CU_ASSERT_EQUAL(c->sig_shapes[1].rank, 2);
	CU_ASSERT_EQUAL(c->sig_shapes[1].dims[1], 4);
	CU_ASSERT_FALSE(c->sig_shapes[1].has_layout);
	CU_ASSERT_EQUAL(c->sig_result.type, ET_F32);
	CU_ASSERT_TRUE(span_is(axpy, c->sig_at, "(alpha: f32[], x: f32[2,4], y: f32[2,4]) -> f32[2,4]"));

	const instr *add = find_instr(c, "add");
	CU_ASSERT_PTR_NOT_NULL_FATAL(add);
	CU_ASSERT_PTR_EQUAL(c->root, add);
	CU_ASSERT_TRUE(add->is_root);
	CU_ASSERT_EQUAL(add->op, OP_ADD);
	CU_ASSERT_TRUE(add->has_shape);
	CU_ASSERT_TRUE(add->shape->has_layout);
	CU_ASSERT_EQUAL(add->shape->layout.n_minor_to_major, 2);
	CU_ASSERT_EQUAL(add->shape->layout.minor_to_major[0], 1);
	CU_ASSERT_EQUAL_FATAL(add->nops, 2);
	CU_ASSERT_STRING_EQUAL(add->ops[0].name, "multiply");
	CU_ASSERT_TRUE(add->ops[0].has_shape);
	CU_ASSERT_EQUAL(add->ops[0].declared->dims[0], 2);
	CU_ASSERT_TRUE(span_is(axpy, add->ops[1].at, "%y"));
	CU_ASSERT_TRUE(span_is(axpy, add->name_at, "%add"));
	CU_ASSERT_TRUE(span_is(axpy, add->op_at, "add"));
	CU_ASSERT_TRUE(span_is(axpy, add->at,
			       "ROOT %add = f32[2,4]{1,0} add(f32[2,4]{1,0} %multiply, f32[2,4]{1,0} %y)"));

	const instr *alpha = find_instr(c, "alpha");
	CU_ASSERT_EQUAL(alpha->op, OP_PARAMETER);
	CU_ASSERT_EQUAL(alpha->parameter_number, 0);
	CU_ASSERT_FALSE(alpha->shape->has_layout);
	CU_ASSERT_EQUAL(alpha->shape->rank, 0);
	CU_ASSERT_TRUE(span_is(axpy, alpha->parameter_at, "parameter(0)"));
	const instr *y = find_instr(c, "y");
	CU_ASSERT_EQUAL(y->parameter_number, 2);
	CU_ASSERT_TRUE(span_is(axpy, y->at, "%y = f32[2,4]{1,0} parameter(2)"));
	CU_ASSERT_TRUE(span_is(axpy, y->name_at, "%y"));

	const instr *bc = find_instr(c, "broadcast");
	const int_list *bd = instr_ints(bc, ATTR_DIMENSIONS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(bd);
	CU_ASSERT_EQUAL(bd->n, 0);
	CU_ASSERT_TRUE(span_is(axpy, instr_attr_loc(bc, ATTR_DIMENSIONS), "dimensions={}"));
	CU_ASSERT_PTR_NULL(instr_ints(bc, ATTR_BROADCAST_DIMENSIONS));
	CU_ASSERT_EQUAL(bc->nattrs, 1);
	module_destroy(m);
	hloi_context_free(ctx);

	check_print(axpy,
		    "HloModule axpy_module, entry_computation_layout={(f32[], f32[2,4]{1,0}, f32[2,4]{1,0})->f32[2,4]{1,0}}\n"
		    "\n"
		    "ENTRY axpy.v5 (alpha: f32[], x: f32[2,4], y: f32[2,4]) -> f32[2,4] {\n"
		    "  alpha = f32[] parameter(0)\n"
		    "  broadcast = f32[2,4]{1,0} broadcast(alpha), dimensions={}\n"
		    "  x = f32[2,4]{1,0} parameter(1)\n"
		    "  multiply = f32[2,4]{1,0} multiply(broadcast, x)\n"
		    "  y = f32[2,4]{1,0} parameter(2)\n"
		    "  ROOT add = f32[2,4]{1,0} add(multiply, y)\n"
		    "}\n");
}

static void test_short_format(void)
{
	const char *text = "HloModule f\n"
			   "ENTRY f {\n"
			   "  p0 = s32[12] parameter(0)\n"
			   "  c1 = s32[12] constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})\n"
			   "  c2 = s32[12] constant({10, 6, 3, 2, 5, 3, 7, 4, 2, 3, 1, 0})\n"
			   "  x = s32[12] multiply(p0, c1)\n"
			   "  ROOT y = s32[12] add(x, c2)\n"
			   "}\n";
	check_print(text, "HloModule f\n"
			  "\n"
			  "ENTRY f {\n"
			  "  p0 = s32[12] parameter(0)\n"
			  "  c1 = s32[12] constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})\n"
			  "  c2 = s32[12] constant({10, 6, 3, 2, 5, 3, 7, 4, 2, 3, 1, 0})\n"
			  "  x = s32[12] multiply(p0, c1)\n"
			  "  ROOT y = s32[12] add(x, c2)\n"
			  "}\n");
	hloi_context *ctx;
	hloi_status st;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = parse(ctx, text, &st);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	const instr *c1 = find_instr(m->entry, "c1");
	CU_ASSERT_EQUAL(c1->op, OP_CONSTANT);
	CU_ASSERT_EQUAL_FATAL(c1->literal->kind, LIT_LIST);
	CU_ASSERT_EQUAL_FATAL(c1->literal->n, 12);
	CU_ASSERT_STRING_EQUAL(c1->literal->kids[11]->text, "11");
	CU_ASSERT_TRUE(span_is(text, c1->literal->kids[11]->at, "11"));
	CU_ASSERT_TRUE(span_is(text, c1->literal->at, "{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}"));
	module_destroy(m);
	hloi_context_free(ctx);
}

static void test_comments_everywhere(void)
{
	const char *text =
		"// leading comment\n"
		"HloModule /* here */ m // there\n"
		"ENTRY /*a*/ main /*b*/ { // body\n"
		"  /*c*/ p = (f32[], s32[], f32[], s32[], f32[], /*index=5*/ pred[2]) /*d*/ parameter(/*e*/0)\n"
		"  c = f32[2,2] constant({ /*i0=0*/ {1, 2}, /*i0=1*/ {3, /* x */ 4} })\n"
		"  ROOT r = f32[2,2] add(c, // operand\n"
		"                        c)\n"
		"} // end\n";
	check_print(text, "HloModule m\n"
			  "\n"
			  "ENTRY main {\n"
			  "  p = (f32[], s32[], f32[], s32[], f32[], /*index=5*/pred[2]) parameter(0)\n"
			  "  c = f32[2,2] constant({ { 1, 2 }, { 3, 4 } })\n"
			  "  ROOT r = f32[2,2] add(c, c)\n"
			  "}\n");
}

static void test_no_header_and_computations(void)
{
	const char *text = "add_f32 {\n"
			   "  a = f32[] parameter(0)\n"
			   "  b = f32[] parameter(1)\n"
			   "  ROOT s = f32[] add(a, b)\n"
			   "}\n"
			   "ENTRY main {\n"
			   "  x = f32[4] parameter(0)\n"
			   "  r = f32[] reduce(x, x), dimensions={0}, to_apply=%add_f32\n"
			   "  t = f32[4] negate(x)\n"
			   "}\n"
			   "other { z = f32[] parameter(0) }\n";
	hloi_context *ctx;
	hloi_status st;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = parse(ctx, text, &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	CU_ASSERT_FALSE(m->has_header);
	CU_ASSERT_STRING_EQUAL(m->name, "module_main");
	CU_ASSERT_EQUAL_FATAL(m->ncomps, 3);
	CU_ASSERT_STRING_EQUAL(m->entry->name, "main");
	CU_ASSERT_PTR_EQUAL(module_find_computation(m, "other"), m->comps[2]);
	computation *main = m->comps[1];
	CU_ASSERT_STRING_EQUAL(main->root->name, "t");
	CU_ASSERT_FALSE(main->root->is_root);
	const instr *r = find_instr(main, "r");
	CU_ASSERT_STRING_EQUAL(instr_text(r, ATTR_TO_APPLY), "add_f32");
	CU_ASSERT_TRUE(span_is(text, instr_attr(r, ATTR_TO_APPLY)->vat, "add_f32"));
	CU_ASSERT_EQUAL(instr_ints(r, ATTR_DIMENSIONS)->n, 1);
	CU_ASSERT_STRING_EQUAL(m->comps[0]->root->name, "s");
	module_destroy(m);

	/* several instructions may share a line */
	m = parse(ctx, "ENTRY e { a = f32[] parameter(0) b = f32[] negate(a) ROOT c = f32[] add(a, b) }", &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	CU_ASSERT_EQUAL(m->entry->ninstrs, 3);
	CU_ASSERT_STRING_EQUAL(m->entry->root->name, "c");
	module_destroy(m);

	/* no ENTRY: the last computation is the entry */
	m = parse(ctx, "a { x = f32[] parameter(0) }\nb { y = f32[] parameter(0) }\n", &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	CU_ASSERT_STRING_EQUAL(m->entry->name, "b");
	CU_ASSERT_FALSE(m->entry->is_entry);
	module_destroy(m);
	hloi_context_free(ctx);

	check_print(text, "add_f32 {\n"
			  "  a = f32[] parameter(0)\n"
			  "  b = f32[] parameter(1)\n"
			  "  ROOT s = f32[] add(a, b)\n"
			  "}\n"
			  "\n"
			  "ENTRY main {\n"
			  "  x = f32[4] parameter(0)\n"
			  "  r = f32[] reduce(x, x), dimensions={0}, to_apply=add_f32\n"
			  "  t = f32[4] negate(x)\n"
			  "}\n"
			  "\n"
			  "other {\n"
			  "  z = f32[] parameter(0)\n"
			  "}\n");
}

static void test_root_and_signature(void)
{
	const char *text = "HloModule m\n"
			   "ENTRY %c () -> s32[] {\n"
			   "  ROOT %k = s32[] constant(-42)\n"
			   "  %unused = s32[] constant(1)\n"
			   "}\n";
	hloi_context *ctx;
	hloi_status st;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = parse(ctx, text, &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	CU_ASSERT_STRING_EQUAL(m->entry->root->name, "k");
	CU_ASSERT_TRUE(m->entry->has_signature);
	CU_ASSERT_EQUAL(m->entry->nsig_params, 0);
	CU_ASSERT_EQUAL(m->entry->sig_result.type, ET_S32);
	CU_ASSERT_STRING_EQUAL(m->entry->root->literal->text, "-42");
	module_destroy(m);
	hloi_context_free(ctx);
	check_print(text, "HloModule m\n\nENTRY c () -> s32[] {\n"
			  "  ROOT k = s32[] constant(-42)\n"
			  "  unused = s32[] constant(1)\n"
			  "}\n");
	check_print("ENTRY e (p: (f32[2]{0}, s32[]), q: pred[<=3]) -> (f32[2], s32[]) {\n"
		    "  p = (f32[2]{0}, s32[]) parameter(0)\n"
		    "  ROOT g = f32[2] get-tuple-element(p), index=0\n}\n",
		    "ENTRY e (p: (f32[2]{0}, s32[]), q: pred[<=3]) -> (f32[2], s32[]) {\n"
		    "  p = (f32[2]{0}, s32[]) parameter(0)\n"
		    "  ROOT g = f32[2] get-tuple-element(p), index=0\n}\n");
}

/* --- shapes and layouts ----------------------------------------------------------- */

static void shape_roundtrip(const char *text, const char *expect)
{
	arena a;
	arena_init(&a);
	hloi_context *ctx;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	shape s;
	hloi_status st = text_parse_shape(&s, &a, ctx, "shape", text, strlen(text));
	CU_ASSERT_EQUAL(st, HLOI_OK);
	if (st == HLOI_OK) {
		char *p = shape_str(&s);
		if (strcmp(p, expect))
			fprintf(stderr, "shape '%s' printed '%s', want '%s'\n", text, p, expect);
		CU_ASSERT_STRING_EQUAL(p, expect);
		hloi_free(p);
	}
	hloi_context_free(ctx);
	arena_release(&a);
}

static void test_layout_forms(void)
{
	shape_roundtrip("f32[2,3]{0,1:pad(3,5)padval(one)}", "f32[2,3]{0,1:pad(3,5)padval(one)}");
	shape_roundtrip("f32[8,128]{1,0:T(8,128)(2,1)}", "f32[8,128]{1,0:T(8,128)(2,1)}");
	shape_roundtrip("f32[8,128]{1,0:T(8,*)}", "f32[8,128]{1,0:T(8,*)}");
	shape_roundtrip("s4[16]{0:E(4)}", "s4[16]{0:E(4)}");
	shape_roundtrip("f32[2,3]{1,0:S(1)}", "f32[2,3]{1,0:S(1)}");
	shape_roundtrip("f32[2]{0:L(4)}", "f32[2]{0:L(4)}");
	shape_roundtrip("f32[2]{0:M(8)}", "f32[2]{0:M(8)}");
	shape_roundtrip("f32[2]{0:T(128)L(2)E(32)S(1)M(4)}", "f32[2]{0:T(128)L(2)E(32)S(1)M(4)}");
	shape_roundtrip("f32[2,3]{0,1:pad(3,5)padval(highest)}", "f32[2,3]{0,1:pad(3,5)padval(highest)}");
	shape_roundtrip("f32[2,3]{0,1:pad(3,5)padval(zero)}", "f32[2,3]{0,1:pad(3,5)}");
	shape_roundtrip("  f32[2,3] { /* layout */ 1 , 0 }  ", "f32[2,3]{1,0}");
	shape_roundtrip("f32[<=4,?,0]", "f32[<=4,?,0]");
	shape_roundtrip("(f32[], (s32[2]{0}, pred[]), ())", "(f32[], (s32[2]{0}, pred[]), ())");
	shape_roundtrip("token[]", "token[]");
	shape_roundtrip("()", "()");
	shape_roundtrip("bf16[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]",
			"bf16[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]");

	/* the same forms survive a module round trip */
	check_print("ENTRY e {\n"
		    "  a = f32[8,128]{1,0:T(8,128)(2,1)} parameter(0)\n"
		    "  b = f32[2,3]{0,1:pad(3,5)padval(lowest)} parameter(1)\n"
		    "  c = s4[16]{0:E(4)S(1)} parameter(2)\n"
		    "  d = f32[<=4,?] parameter(3)\n"
		    "  ROOT t = ((f32[8,128]{1,0:T(8,128)(2,1)}, token[]), ()) tuple(a, b)\n"
		    "}\n",
		    "ENTRY e {\n"
		    "  a = f32[8,128]{1,0:T(8,128)(2,1)} parameter(0)\n"
		    "  b = f32[2,3]{0,1:pad(3,5)padval(lowest)} parameter(1)\n"
		    "  c = s4[16]{0:E(4)S(1)} parameter(2)\n"
		    "  d = f32[<=4,?] parameter(3)\n"
		    "  ROOT t = ((f32[8,128]{1,0:T(8,128)(2,1)}, token[]), ()) tuple(a, b)\n"
		    "}\n");
}

static void test_parse_shape_fields(void)
{
	const char *text = "f32[2,3]{0,1:pad(3,5)padval(one)}";
	arena a;
	arena_init(&a);
	hloi_context *ctx;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	shape s;
	CU_ASSERT_EQUAL_FATAL(text_parse_shape(&s, &a, ctx, "shape", text, strlen(text)), HLOI_OK);
	CU_ASSERT_EQUAL(s.type, ET_F32);
	CU_ASSERT_EQUAL(s.rank, 2);
	CU_ASSERT_EQUAL(s.dims[0], 2);
	CU_ASSERT_EQUAL(s.dims[1], 3);
	CU_ASSERT_TRUE(s.has_layout);
	CU_ASSERT_EQUAL(s.layout.n_minor_to_major, 2);
	CU_ASSERT_EQUAL(s.layout.minor_to_major[0], 0);
	CU_ASSERT_EQUAL(s.layout.minor_to_major[1], 1);
	CU_ASSERT_EQUAL(s.layout.n_padded, 2);
	CU_ASSERT_EQUAL(s.layout.padded_dimensions[0], 3);
	CU_ASSERT_EQUAL(s.layout.padded_dimensions[1], 5);
	CU_ASSERT_EQUAL(s.layout.padding_value, PAD_ONE);

	/* no layout written: none filled in */
	CU_ASSERT_EQUAL_FATAL(text_parse_shape(&s, &a, ctx, "shape", "u8[7]", 5), HLOI_OK);
	CU_ASSERT_FALSE(s.has_layout);
	CU_ASSERT_EQUAL(s.layout.n_minor_to_major, 0);

	/* dynamic dimensions */
	CU_ASSERT_EQUAL_FATAL(text_parse_shape(&s, &a, ctx, "shape", "s32[<=4,?]", 10), HLOI_OK);
	CU_ASSERT_EQUAL(s.dim_kind[0], DIM_BOUNDED);
	CU_ASSERT_EQUAL(s.dims[0], 4);
	CU_ASSERT_EQUAL(s.dim_kind[1], DIM_UNBOUNDED);

	/* tuples keep their elements in the arena */
	CU_ASSERT_EQUAL_FATAL(text_parse_shape(&s, &a, ctx, "shape", "(f32[], (pred[2], ()))", 22), HLOI_OK);
	CU_ASSERT_EQUAL(s.type, ET_TUPLE);
	CU_ASSERT_EQUAL_FATAL(s.ntuple, 2);
	CU_ASSERT_EQUAL(s.tuple[1].ntuple, 2);
	CU_ASSERT_EQUAL(s.tuple[1].tuple[0].type, ET_PRED);
	CU_ASSERT_EQUAL(s.tuple[1].tuple[1].type, ET_TUPLE);
	CU_ASSERT_EQUAL(s.tuple[1].tuple[1].ntuple, 0);
	CU_ASSERT_EQUAL(ctx->ndiags, 0);

	/* errors */
	CU_ASSERT_EQUAL(text_parse_shape(&s, &a, ctx, "shape", "f32[2]{0:D(C)}", 14), HLOI_EPARSE);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "unsupported layout component 'D'");
	CU_ASSERT_EQUAL(text_parse_shape(&s, &a, ctx, "shape", "f32[2]{0:#(u32)}", 16), HLOI_EPARSE);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "unsupported layout component '#'");
	CU_ASSERT_EQUAL(text_parse_shape(&s, &a, ctx, "shape", "f32[2]{0:pad(3)padval(two)}", 27), HLOI_EPARSE);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx),
			       "unknown padding value 'two' (expects zero, one, lowest or highest)");
	CU_ASSERT_EQUAL(text_parse_shape(&s, &a, ctx, "shape", "f32[2] x", 8), HLOI_EPARSE);
	hloi_context_free(ctx);
	arena_release(&a);
}

/* --- literals ------------------------------------------------------------------------ */

static void test_literal_forms(void)
{
	const char *text =
		"ENTRY e {\n"
		"  a = f32[6] constant({nan, 7, nan(0x1), -1, inf, -inf})\n"
		"  b = f32[2] constant({-nan, -nan(0x7f)})\n"
		"  c = pred[2,3] constant({ { 0, 1, 0 }, { 1, 0, 1 } })\n"
		"  d = pred[] constant(true)\n"
		"  e = f32[2,1] constant({{1},{2}})\n"
		"  f = s32[3] constant({1 2 3})\n"
		"  g = f32[1000] constant({...})\n"
		"  h = f32[0] constant({})\n"
		"  i = f32[] constant(.5)\n"
		"  j = f64[2] constant({1., 1.5e-3})\n"
		"  k = (s32[], f32[2]) constant((1, {2, 3}))\n"
		"  l = f32[2,2,1] constant({ { /*i0=0*/ {1}, {2} }, { /*i0=1*/ {3}, {4} } })\n"
		"  m = u64[] constant(18446744073709551615)\n"
		"  n = c64[2] constant({(1, 2), (3, 4)})\n"
		"  o = f32[0,3] constant({ })\n"
		"  ROOT p = pred[] constant(false)\n"
		"}\n";
	check_print(text, "ENTRY e {\n"
			  "  a = f32[6] constant({nan, 7, nan(0x1), -1, inf, -inf})\n"
			  "  b = f32[2] constant({-nan, -nan(0x7f)})\n"
			  "  c = pred[2,3] constant({ { 0, 1, 0 }, { 1, 0, 1 } })\n"
			  "  d = pred[] constant(true)\n"
			  "  e = f32[2,1] constant({ {1}, {2} })\n"
			  "  f = s32[3] constant({1, 2, 3})\n"
			  "  g = f32[1000] constant({...})\n"
			  "  h = f32[0] constant({})\n"
			  "  i = f32[] constant(.5)\n"
			  "  j = f64[2] constant({1., 1.5e-3})\n"
			  "  k = (s32[], f32[2]) constant(( 1, {2, 3} ))\n"
			  "  l = f32[2,2,1] constant({ { {1}, {2} }, { {3}, {4} } })\n"
			  "  m = u64[] constant(18446744073709551615)\n"
			  "  n = c64[2] constant({(1, 2), (3, 4)})\n"
			  "  o = f32[0,3] constant({})\n"
			  "  ROOT p = pred[] constant(false)\n"
			  "}\n");

	hloi_context *ctx;
	hloi_status st;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = parse(ctx, text, &st);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	const lit_node *a = find_instr(m->entry, "a")->literal;
	CU_ASSERT_EQUAL(a->kind, LIT_LIST);
	CU_ASSERT_EQUAL(a->kids[0]->kind, LIT_WORD);
	CU_ASSERT_STRING_EQUAL(a->kids[2]->text, "nan(0x1)");
	CU_ASSERT_EQUAL(a->kids[3]->kind, LIT_NUMBER);
	CU_ASSERT_STRING_EQUAL(a->kids[5]->text, "-inf");
	const lit_node *g = find_instr(m->entry, "g")->literal;
	CU_ASSERT_EQUAL(g->kind, LIT_ELIDED);
	const lit_node *k = find_instr(m->entry, "k")->literal;
	CU_ASSERT_EQUAL(k->kind, LIT_TUPLE);
	CU_ASSERT_EQUAL(k->n, 2);
	CU_ASSERT_EQUAL(k->kids[1]->kind, LIT_LIST);
	const lit_node *d = find_instr(m->entry, "d")->literal;
	CU_ASSERT_EQUAL(d->kind, LIT_WORD);
	CU_ASSERT_STRING_EQUAL(d->text, "true");
	const lit_node *f = find_instr(m->entry, "f")->literal;
	CU_ASSERT_EQUAL(f->n, 3);
	const lit_node *h = find_instr(m->entry, "h")->literal;
	CU_ASSERT_EQUAL(h->kind, LIT_LIST);
	CU_ASSERT_EQUAL(h->n, 0);
	module_destroy(m);
	hloi_context_free(ctx);
}

static void test_parse_literals(void)
{
	const char *text = "f32[2,3] {{1,2,3},{4,5,6}} s32[] -7 (f32[], pred[2]) (1, {1, 0})\n"
			   "f32[2]{0} {1, 2} f32[2] {3, 4} f32[2]{5, 6} f32[2] {0} {7, 8} f32[2]{9,10}";
	arena a;
	arena_init(&a);
	hloi_context *ctx;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	shape *shapes;
	lit_node **trees;
	size_t n;
	int src;
	hloi_status st = text_parse_literals(&a, ctx, &src, "in", text, strlen(text), &shapes, &trees, &n);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	CU_ASSERT_TRUE(src >= 0);
	CU_ASSERT_EQUAL_FATAL(n, 8);
	CU_ASSERT_EQUAL(shapes[0].rank, 2);
	CU_ASSERT_EQUAL(shapes[0].dims[1], 3);
	CU_ASSERT_EQUAL(trees[0]->kind, LIT_LIST);
	CU_ASSERT_EQUAL(trees[0]->n, 2);
	CU_ASSERT_STRING_EQUAL(trees[0]->kids[1]->kids[2]->text, "6");
	CU_ASSERT_EQUAL(shapes[1].type, ET_S32);
	CU_ASSERT_EQUAL(shapes[1].rank, 0);
	CU_ASSERT_EQUAL(trees[1]->kind, LIT_NUMBER);
	CU_ASSERT_STRING_EQUAL(trees[1]->text, "-7");
	CU_ASSERT_TRUE(span_is(text, trees[1]->at, "-7"));
	CU_ASSERT_EQUAL(shapes[2].type, ET_TUPLE);
	CU_ASSERT_EQUAL(shapes[2].ntuple, 2);
	CU_ASSERT_EQUAL(shapes[2].tuple[1].type, ET_PRED);
	CU_ASSERT_EQUAL(trees[2]->kind, LIT_TUPLE);
	CU_ASSERT_EQUAL(trees[2]->kids[1]->n, 2);
	/* `f32[2]{0} {1, 2}` has a layout; `f32[2] {3, 4}` is a value */
	CU_ASSERT_TRUE(shapes[3].has_layout);
	CU_ASSERT_EQUAL(trees[3]->n, 2);
	CU_ASSERT_FALSE(shapes[4].has_layout);
	CU_ASSERT_EQUAL(trees[4]->n, 2);
	/* braces after a shape are its value unless a value follows them */
	CU_ASSERT_FALSE(shapes[5].has_layout);
	CU_ASSERT_STRING_EQUAL(trees[5]->kids[1]->text, "6");
	CU_ASSERT_TRUE(shapes[6].has_layout);
	CU_ASSERT_STRING_EQUAL(trees[6]->kids[1]->text, "8");
	CU_ASSERT_FALSE(shapes[7].has_layout);
	CU_ASSERT_STRING_EQUAL(trees[7]->kids[1]->text, "10");
	CU_ASSERT_EQUAL(ctx->ndiags, 0);

	/* empty input: no literals */
	CU_ASSERT_EQUAL(text_parse_literals(&a, ctx, &src, "in", " // none\n", 9, &shapes, &trees, &n),
			HLOI_OK);
	CU_ASSERT_EQUAL(n, 0);
	/* a shape without its value */
	CU_ASSERT_EQUAL(text_parse_literals(&a, ctx, &src, "in", "f32[2] {1, 2} s32[]", 19, &shapes, &trees, &n),
			HLOI_EPARSE);
	CU_ASSERT_EQUAL(n, 0);
	hloi_context_free(ctx);
	arena_release(&a);
}

/* --- attributes ------------------------------------------------------------------------ */

static void test_attributes(void)
{
	const char *text =
		"ENTRY e {\n"
		"  a = f32[2,3] parameter(0), sharding={replicated}, metadata={op_name=\"a, b\" source_line=3}\n"
		"  b = f32[3] parameter(1)\n"
		"  c = f32[2,3] add(a, b), broadcast_dimensions={1}, foo={1, (2)}, backend_config={\"x\": [1, {}]}\n"
		"  d = pred[2,3] compare(a, c), direction=GE, type=TOTALORDER, frontend_attributes={k=\"v\"}\n"
		"  e = f32[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}, operand_precision={default,high}\n"
		"  f = f32[2,3] convolution(a, a), window={size=1x1 pad=0_0x0_0}, dim_labels=b01f_01io->b01f\n"
		"  g = s32[4] iota(), iota_dimension=0\n"
		"  h = s32[8] all-reduce(g), replica_groups=[2,4]<=[8], to_apply=sum\n"
		"  ROOT i = f32[2,3] fusion(a), kind=kLoop, calls=%fused, backend_config=\"{\\\"k\\\": 1}\"\n"
		"}\n";
	hloi_context *ctx;
	hloi_status st;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = parse(ctx, text, &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(ctx->ndiags, 1);
	char buf[256];
	diag_str(ctx, 0, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "4:53-65 warning: unknown attribute 'foo' ignored (kept as written)");
	computation *c = m->entry;
	const instr *a = find_instr(c, "a");
	CU_ASSERT_EQUAL_FATAL(a->nattrs, 2);
	CU_ASSERT_EQUAL(a->attrs[0].id, ATTR_SHARDING);
	CU_ASSERT_STRING_EQUAL(instr_text(a, ATTR_SHARDING), "{replicated}");
	CU_ASSERT_STRING_EQUAL(instr_text(a, ATTR_METADATA), "{op_name=\"a, b\" source_line=3}");
	const instr *ci = find_instr(c, "c");
	const int_list *cb = instr_ints(ci, ATTR_BROADCAST_DIMENSIONS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cb);
	CU_ASSERT_EQUAL(cb->n, 1);
	CU_ASSERT_EQUAL(cb->v[0], 1);
	CU_ASSERT_TRUE(span_is(text, instr_attr_loc(ci, ATTR_BROADCAST_DIMENSIONS), "broadcast_dimensions={1}"));
	CU_ASSERT_EQUAL_FATAL(ci->nattrs, 3);
	CU_ASSERT_EQUAL(ci->attrs[1].id, ATTR_COUNT);
	CU_ASSERT_STRING_EQUAL(ci->attrs[1].uname, "foo");
	CU_ASSERT_STRING_EQUAL(ci->attrs[1].u.s, "{1, (2)}");
	CU_ASSERT_STRING_EQUAL(instr_text(ci, ATTR_BACKEND_CONFIG), "{\"x\": [1, {}]}");
	const instr *d = find_instr(c, "d");
	CU_ASSERT_EQUAL(instr_direction(d), CMP_GE);
	CU_ASSERT_EQUAL(instr_comparison_type(d), CMPT_TOTALORDER);
	CU_ASSERT_TRUE(span_is(text, instr_attr_loc(d, ATTR_DIRECTION), "direction=GE"));
	const instr *e = find_instr(c, "e");
	CU_ASSERT_EQUAL_FATAL(e->nattrs, 3);
	const attr *prec = instr_attr(e, ATTR_OPERAND_PRECISION);
	CU_ASSERT_PTR_NOT_NULL_FATAL(prec);
	CU_ASSERT_EQUAL_FATAL(prec->u.words.n, 2);
	CU_ASSERT_STRING_EQUAL(prec->u.words.v[1], "high");
	CU_ASSERT_EQUAL(instr_ints(e, ATTR_LHS_CONTRACTING_DIMS)->v[0], 1);
	const instr *f = find_instr(c, "f");
	CU_ASSERT_EQUAL_FATAL(f->nattrs, 2);
	const attr *win = instr_attr(f, ATTR_WINDOW);
	CU_ASSERT_PTR_NOT_NULL_FATAL(win);
	CU_ASSERT_EQUAL_FATAL(win->u.win.n, 2);
	CU_ASSERT_EQUAL(win->u.win.d[1].size, 1);
	CU_ASSERT_EQUAL(win->u.win.d[1].stride, 1);
	const attr *lab = instr_attr(f, ATTR_DIM_LABELS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(lab);
	CU_ASSERT_PTR_NOT_NULL_FATAL(lab->conv);
	CU_ASSERT_EQUAL(lab->conv->nspatial, 2);
	CU_ASSERT_EQUAL(lab->conv->input_feature, 3);
	CU_ASSERT_EQUAL(lab->conv->kernel_output_feature, 3);
	const instr *g = find_instr(c, "g");
	int64_t iod = -1;
	CU_ASSERT_TRUE(instr_int(g, ATTR_IOTA_DIMENSION, &iod));
	CU_ASSERT_EQUAL(iod, 0);
	CU_ASSERT_EQUAL(g->nops, 0);
	const instr *h = find_instr(c, "h");
	const attr *rg = instr_attr(h, ATTR_REPLICA_GROUPS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rg);
	CU_ASSERT_EQUAL(rg->u.rg->form, RG_IOTA);
	CU_ASSERT_EQUAL(rg->u.rg->ngroup_dims, 2);
	CU_ASSERT_EQUAL(rg->u.rg->reshape_dims[0], 8);
	const instr *i = find_instr(c, "i");
	CU_ASSERT_STRING_EQUAL(instr_text(i, ATTR_CALLS), "fused");
	CU_ASSERT_EQUAL_FATAL(i->nattrs, 3);
	CU_ASSERT_STRING_EQUAL(instr_text(i, ATTR_KIND), "kLoop");
	CU_ASSERT_STRING_EQUAL(instr_text(i, ATTR_BACKEND_CONFIG), "\"{\\\"k\\\": 1}\"");
	module_destroy(m);
	hloi_context_free(ctx);

	check_print(text,
		    "ENTRY e {\n"
		    "  a = f32[2,3] parameter(0), sharding={replicated}, metadata={op_name=\"a, b\" source_line=3}\n"
		    "  b = f32[3] parameter(1)\n"
		    "  c = f32[2,3] add(a, b), broadcast_dimensions={1}, foo={1, (2)}, backend_config={\"x\": [1, {}]}\n"
		    "  d = pred[2,3] compare(a, c), direction=GE, type=TOTALORDER, frontend_attributes={k=\"v\"}\n"
		    "  e = f32[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}, operand_precision={default,high}\n"
		    "  f = f32[2,3] convolution(a, a), window={size=1x1}, dim_labels=b01f_01io->b01f\n"
		    "  g = s32[4] iota(), iota_dimension=0\n"
		    "  h = s32[8] all-reduce(g), replica_groups=[2,4]<=[8], to_apply=sum\n"
		    "  ROOT i = f32[2,3] fusion(a), kind=kLoop, calls=fused, backend_config=\"{\\\"k\\\": 1}\"\n"
		    "}\n");
	/* structured attributes print in a fixed order */
	check_print("ENTRY e {\n  x = s32[2] parameter(0)\n"
		    "  ROOT c = pred[2] compare(x, x), type=SIGNED, broadcast_dimensions={0}, direction=LT\n}\n",
		    "ENTRY e {\n  x = s32[2] parameter(0)\n"
		    "  ROOT c = pred[2] compare(x, x), broadcast_dimensions={0}, direction=LT, type=SIGNED\n}\n");
	/* shapes may be left out where XLA infers them */
	check_print("ENTRY e {\n  x = s32[2] parameter(0)\n  y = add(x, x)\n  ROOT t = tuple(x, y)\n}\n",
		    "ENTRY e {\n  x = s32[2] parameter(0)\n  y = add(x, x)\n  ROOT t = tuple(x, y)\n}\n");
	/* reserved words keep their sigil */
	check_print("ENTRY e {\n  %f32 = f32[] parameter(0)\n  ROOT %true = f32[] negate(%f32)\n}\n",
		    "ENTRY e {\n  %f32 = f32[] parameter(0)\n  ROOT %true = f32[] negate(%f32)\n}\n");
}

/* The stack frame tables print as written (the proto writer reads them). */
static void test_stack_frames(void)
{
	static const char frames[] =
		"FileNames\n1 \"main.py\"\n2 \"lib.py\"\n"
		"FunctionNames\n1 \"main\"\n"
		"FileLocations\n1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}\n"
		"StackFrames\n1 {file_location_id=1 parent_frame_id=1}";
	char in[1024], out[1024];
	snprintf(in, sizeof in,
		 "HloModule m, entry_computation_layout={()->f32[]}\n\n%s\n\n\n"
		 "ENTRY e {\n  ROOT c = f32[] constant(1), metadata={stack_frame_id=1}\n}\n",
		 frames);
	snprintf(out, sizeof out,
		 "HloModule m, entry_computation_layout={()->f32[]}\n\n%s\n\n"
		 "ENTRY e {\n  ROOT c = f32[] constant(1), metadata={stack_frame_id=1}\n}\n",
		 frames);
	check_print(in, out);
}

static void test_header(void)
{
	const char *text =
		"HloModule m, is_scheduled=true, input_output_alias={ {}: (0, {}, must-alias), {1, 2}: (1, {3}, may-alias), {4}: (2, {}) },\n"
		"  broadcast_mode=numpy, weird_attr={1, 2}, replica_count=1\n"
		"ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n";
	hloi_context *ctx;
	hloi_status st;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = parse(ctx, text, &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(ctx->ndiags, 1);
	char buf[256];
	diag_str(ctx, 0, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "2:25-42 warning: unknown header attribute 'weird_attr' ignored (kept as written)");
	CU_ASSERT_EQUAL(m->broadcast_mode, HLOI_BROADCAST_NUMPY);
	CU_ASSERT_TRUE(span_is(text, m->broadcast_mode_at, "broadcast_mode=numpy"));
	CU_ASSERT_EQUAL_FATAL(m->nheader_attrs, 5);
	CU_ASSERT_STRING_EQUAL(m->header_attrs[0].name, "is_scheduled");
	CU_ASSERT_STRING_EQUAL(m->header_attrs[1].value,
			       "{ {}: (0, {}, must-alias), {1, 2}: (1, {3}, may-alias), {4}: (2, {}) }");
	CU_ASSERT_STRING_EQUAL(m->header_attrs[2].name, "broadcast_mode");
	/* an unknown attribute is kept as written, in its place */
	CU_ASSERT_STRING_EQUAL(m->header_attrs[3].name, "weird_attr");
	CU_ASSERT_STRING_EQUAL(m->header_attrs[3].value, "{1, 2}");
	CU_ASSERT_STRING_EQUAL(m->header_attrs[4].name, "replica_count");
	CU_ASSERT_EQUAL_FATAL(m->nalias, 3);
	CU_ASSERT_EQUAL(m->alias[0].n_output_index, 0);
	CU_ASSERT_EQUAL(m->alias[0].parameter_number, 0);
	CU_ASSERT_TRUE(m->alias[0].must_alias);
	CU_ASSERT_EQUAL(m->alias[1].n_output_index, 2);
	CU_ASSERT_EQUAL(m->alias[1].output_index[1], 2);
	CU_ASSERT_EQUAL(m->alias[1].parameter_number, 1);
	CU_ASSERT_EQUAL(m->alias[1].n_parameter_index, 1);
	CU_ASSERT_EQUAL(m->alias[1].parameter_index[0], 3);
	CU_ASSERT_FALSE(m->alias[1].must_alias);
	CU_ASSERT_FALSE(m->alias[2].must_alias);
	CU_ASSERT_TRUE(span_is(text, m->alias[1].at, "{1, 2}: (1, {3}, may-alias)"));
	module_destroy(m);
	hloi_context_free(ctx);

	check_print(text,
		    "HloModule m, is_scheduled=true, input_output_alias={ {}: (0, {}, must-alias), {1, 2}: (1, {3}, may-alias), {4}: (2, {}) }, "
		    "broadcast_mode=numpy, weird_attr={1, 2}, replica_count=1\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");

	EXPECT_DIAGS("HloModule m, broadcast_mode=python\nENTRY e { p = f32[] parameter(0) }\n",
		     "1:29-35 error: unknown broadcast_mode 'python' (expects xla or numpy)");
	EXPECT_DIAGS("HloModule m, input_output_alias={ {}: (0 {}) }\nENTRY e { p = f32[] parameter(0) }\n",
		     "1:42-43 error: malformed input_output_alias: expects ','");
	EXPECT_DIAGS("HloModule m, is_scheduled=true, is_scheduled=false\nENTRY e { p = f32[] parameter(0) }\n",
		     "1:33-51 error: attribute is_scheduled already exists");
}

/* XLA's async sugar (hlo_parser_test.cc's custom-call-start and negate-start
 * modules): an async-start wrapping a computation, printed back as written. */
static void test_async_sugar(void)
{
	const char *text =
		"HloModule m\n\nENTRY e {\n"
		"  p0 = f32[10]{0} parameter(0)\n"
		"  s = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-start(p0), async_execution_thread=\"t\", "
		"custom_call_target=\"foo\", metadata={op_name=\"x\"}\n"
		"  u = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-update(s)\n"
		"  ROOT d = f32[20]{0} custom-call-done(u)\n}\n";
	check_print(text, text);
	hloi_context *ctx;
	hloi_status st;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = parse(ctx, text, &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	/* the wrapped computation comes first, as XLA's parser adds it */
	CU_ASSERT_EQUAL_FATAL(m->ncomps, 2);
	const computation *w = m->comps[0];
	CU_ASSERT_STRING_EQUAL(w->name, "s.async_wrapped");
	CU_ASSERT_EQUAL_FATAL(w->ninstrs, 2);
	CU_ASSERT_EQUAL(w->instrs[0]->op, OP_PARAMETER);
	CU_ASSERT_EQUAL(w->root->op, OP_CUSTOM_CALL);
	CU_ASSERT_STRING_EQUAL(instr_text(w->root, ATTR_CUSTOM_CALL_TARGET), "\"foo\"");
	CU_ASSERT_PTR_NULL(instr_attr(w->root, ATTR_METADATA));
	char *sh = shape_str(w->root->shape);
	CU_ASSERT_STRING_EQUAL(sh, "f32[20]{0}");
	hloi_free(sh);
	const instr *s = find_instr(m->entry, "s");
	CU_ASSERT_EQUAL(s->op, OP_ASYNC_START);
	CU_ASSERT_EQUAL(s->async_op, OP_CUSTOM_CALL);
	CU_ASSERT_STRING_EQUAL(instr_text(s, ATTR_CALLS), "s.async_wrapped");
	CU_ASSERT_PTR_NULL(instr_attr(s, ATTR_CUSTOM_CALL_TARGET));
	CU_ASSERT_PTR_NOT_NULL(instr_attr(s, ATTR_METADATA));
	CU_ASSERT_STRING_EQUAL(instr_text(s, ATTR_ASYNC_EXECUTION_THREAD), "\"t\"");
	CU_ASSERT_EQUAL(find_instr(m->entry, "u")->op, OP_ASYNC_UPDATE);
	CU_ASSERT_EQUAL(find_instr(m->entry, "d")->op, OP_ASYNC_DONE);
	CU_ASSERT_EQUAL(find_instr(m->entry, "d")->async_op, OP_CUSTOM_CALL);
	module_destroy(m);
	hloi_context_free(ctx);

	/* a wrapped opcode short of operands gets f32[1] parameters, as in XLA */
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	m = parse(ctx, "ENTRY e {\n  ROOT s = ((), f32[2], u32[]) dot-start()\n}\n", &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(m->comps[0]->ninstrs, 3);
	sh = shape_str(m->comps[0]->instrs[1]->shape);
	CU_ASSERT_STRING_EQUAL(sh, "f32[1]{0}");
	hloi_free(sh);
	CU_ASSERT_STRING_EQUAL(m->comps[0]->instrs[1]->name, "async_param.1");
	module_destroy(m);
	hloi_context_free(ctx);

	/* fusion-start's own calls= goes to the fusion it wraps */
	check_print("ENTRY e {\n  p = f32[] parameter(0)\n"
		    "  ROOT s = ((f32[]), f32[], s32[]) fusion-start(p), kind=kLoop, calls=f\n}\n\n"
		    "f {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}\n",
		    "ENTRY e {\n  p = f32[] parameter(0)\n"
		    "  ROOT s = ((f32[]), f32[], s32[]) fusion-start(p), kind=kLoop, calls=f\n}\n\n"
		    "f {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}\n");

	EXPECT_DIAGS("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT s = negate-start(p)\n}\n",
		     "3:12-24 error: async op async-start must have an explicit shape");
	EXPECT_DIAGS("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT s = (f32[], f32[]) negate-start(p)\n}\n",
		     "3:27-39 error: async-start expects the shape to be in the form of ((operand0_shape, "
		     "operand1_shape, ...), output_shape, ...)");
	EXPECT_DIAGS("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT s = f32[] all-gather-update(p)\n}\n",
		     "3:18-35 error: expects async wrapped opcode but sees: all-gather-update");
	EXPECT_DIAGS("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT s = f32[] frob-done(p)\n}\n",
		     "3:18-27 error: expects async wrapped opcode but sees: frob-done");
}

/* `name#i#j` (hlo_parser_test.cc's compact GTE cases): get-tuple-elements
 * before the user, shared within a computation, renamed when taken. */
static void test_gte_operand(void)
{
	check_print("ENTRY e {\n  p = (f32[], (f32[2])) parameter(0)\n  p_1 = f32[] parameter(1)\n"
		    "  ROOT r = (f32[2], f32[2]) tuple(f32[2] p#1#0, %p#1#0)\n}\n",
		    "ENTRY e {\n  p = (f32[], (f32[2])) parameter(0)\n  p_1 = f32[] parameter(1)\n"
		    "  p_1.1 = get-tuple-element(p), index=1\n"
		    "  p_1_0 = get-tuple-element(p_1.1), index=0\n"
		    "  ROOT r = (f32[2], f32[2]) tuple(p_1_0, p_1_0)\n}\n");
	/* a later name taken too; each computation makes its own */
	check_print("c {\n  q = (f32[]) parameter(0)\n  ROOT r = f32[] copy(q#0)\n}\n\n"
		    "ENTRY e {\n  q = (f32[]) parameter(0)\n  a = f32[] copy(q#0)\n  q_0 = f32[] copy(a)\n}\n",
		    "c {\n  q = (f32[]) parameter(0)\n  q_0 = get-tuple-element(q), index=0\n"
		    "  ROOT r = f32[] copy(q_0)\n}\n\n"
		    "ENTRY e {\n  q = (f32[]) parameter(0)\n  q_0.1 = get-tuple-element(q), index=0\n"
		    "  a = f32[] copy(q_0.1)\n  q_0 = f32[] copy(a)\n}\n");
	EXPECT_DIAGS("ENTRY e {\n  p = (f32[]) parameter(0)\n  ROOT r = f32[] copy(p#)\n}\n",
		     "3:25-26 error: expects integer but sees ')'");
}

/* A computation's execution_thread (XLA's only computation attribute). */
static void test_computation_attrs(void)
{
	const char *text = "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}, execution_thread=\"a\\\"b\"\n";
	check_print(text, text);
	check_print("ENTRY e {\n  ROOT p = f32[] parameter(0)\n}, frob=1\n",
		    "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
	EXPECT_DIAGS("ENTRY e {\n  ROOT p = f32[] parameter(0)\n}, execution_thread=main\n",
		     "3:21-25 error: malformed execution_thread: expects a quoted string");
	EXPECT_DIAGS("ENTRY e {\n  ROOT p = f32[] parameter(0)\n}, execution_thread=\"a\", execution_thread=\"b\"\n",
		     "3:26-46 error: attribute execution_thread already exists");
}

/* dim_labels with `?` dimensions (hlo_parser_test.cc's custom-call case):
 * read, and printed as written. */
static void test_dim_labels_unknown(void)
{
	const char *text = "ENTRY e {\n  ROOT r = f32[100]{0} custom-call(), window={size=2x2}, "
			   "dim_labels=?b01f_0?1io->b01?f, custom_call_target=\"t\"\n}\n";
	check_print(text, text);
	EXPECT_DIAGS("ENTRY e {\n  ROOT r = f32[100]{0} custom-call(), dim_labels=?b0f_0?1io->b01?f, "
		     "custom_call_target=\"t\"\n}\n",
		     "2:50-51 error: malformed dim_labels: expects dimension labels like b01f_01io->b01f (b and f, "
		     "i and o once each, spatial dimensions 0..n-1 once each, the same count in all three parts)");
}

/* replica_groups in every form XLA's parser reads (hlo_parser.cc,
 * ParseCollectiveDeviceListBase and ParseMesh): printed back as written,
 * the iota form kept as numbers; malformed mesh values are located errors. */
static void test_replica_groups(void)
{
	static const char *const forms[] = {
		"{{0,1},{2,3}}",
		"{}",
		"[2,4]<=[8]",
		"[4,2]<=[2,4]T(1,0)",
		"mesh['axis_0'=2,'axis_1'=2] {'axis_1'}",
		"mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0) {'a','b'}",
		"mesh['a'=2,'b'=4], device_ids=([4,2]T(1,0)) {'b':(1)2}",
		"mesh['a'=2,'b'=4], device_ids=([8]) {'a','b':(2)2}",
		"maximal_mesh[device_id=3] {}",
		"mesh[] {}",
	};
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		char text[512];
		snprintf(text, sizeof text,
			 "ENTRY e {\n  p = f32[8]{0} parameter(0)\n  ROOT r = f32[8]{0} all-gather(p), dimensions={0}, "
			 "replica_groups=%s\n}\n",
			 forms[i]);
		check_print(text, text);
	}
	/* the iota form is read into its numbers */
	{
		hloi_context *ctx;
		hloi_status st;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		module *m = parse(ctx,
				  "ENTRY e {\n  p = f32[8]{0} parameter(0)\n  ROOT r = f32[8]{0} all-gather(p), "
				  "dimensions={0}, replica_groups=[4,2]<=[2,4]T(1,0)\n}\n",
				  &st);
		CU_ASSERT_FATAL(st == HLOI_OK && m);
		const instr *r = find_instr(m->entry, "r");
		const attr *a = r ? instr_attr(r, ATTR_REPLICA_GROUPS) : NULL;
		CU_ASSERT_FATAL(a != NULL);
		const replica_groups *rg = a->u.rg;
		CU_ASSERT_EQUAL(rg->form, RG_IOTA);
		CU_ASSERT(rg->ngroup_dims == 2 && rg->group_dims[0] == 4 && rg->group_dims[1] == 2);
		CU_ASSERT(rg->nreshape == 2 && rg->reshape_dims[0] == 2 && rg->reshape_dims[1] == 4);
		CU_ASSERT(rg->nperm == 2 && rg->perm[0] == 1 && rg->perm[1] == 0);
		module_destroy(m);
		hloi_context_free(ctx);
	}
	EXPECT_DIAGS("ENTRY e {\n  ROOT r = f32[8]{0} parameter(0), replica_groups=foo\n}\n",
		     "2:51-52 error: malformed replica_groups: expects '{', '[', 'mesh' or 'maximal_mesh'");
	EXPECT_DIAGS("ENTRY e {\n  ROOT r = f32[8]{0} parameter(0), replica_groups=mesh['a'=x] {}\n}\n",
		     "2:60-61 error: malformed replica_groups: expects an integer");
	EXPECT_DIAGS("ENTRY e {\n  ROOT r = f32[8]{0} parameter(0), replica_groups=mesh['a'=2] {a}\n}\n",
		     "2:64-65 error: malformed replica_groups: expects a quoted axis name");
	EXPECT_DIAGS("ENTRY e {\n  ROOT r = f32[8]{0} parameter(0), replica_groups=mesh['a'=2] {'a':2}\n}\n",
		     "2:68-69 error: malformed replica_groups: expects '('");
	EXPECT_DIAGS("ENTRY e {\n  ROOT r = f32[8]{0} parameter(0), replica_groups=maximal_mesh[id=3] {}\n}\n",
		     "2:64-65 error: malformed replica_groups: expects 'device_id'");
}

/* custom-call's literal=: a shape (layout as written) and a value, or a
 * tuple of literals (XLA's ParseLiteral); printed as XLA's one-line form. */
static void test_custom_call_literal(void)
{
	check_print("ENTRY e {\n  ROOT c = f32[2]{0} custom-call(), custom_call_target=\"t\", literal=s32[2]{0} {1, 2}\n}\n",
		    "ENTRY e {\n  ROOT c = f32[2]{0} custom-call(), custom_call_target=\"t\", literal=s32[2]{0} {1, 2}\n}\n");
	check_print("ENTRY e {\n  ROOT c = f32[2]{0} custom-call(), custom_call_target=\"t\", "
		    "literal=(s32[4]{0} {4, 128, 128, 3},pred[] true, (f32[] 0.5), ())\n}\n",
		    "ENTRY e {\n  ROOT c = f32[2]{0} custom-call(), custom_call_target=\"t\", "
		    "literal=( s32[4]{0} {4, 128, 128, 3}, pred[] true, ( f32[] 0.5 ), () )\n}\n");
	/* the tuple's shape is built from its elements' */
	{
		hloi_context *ctx;
		hloi_status st;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		module *m = parse(ctx,
				  "ENTRY e {\n  ROOT c = f32[2]{0} custom-call(), custom_call_target=\"t\", "
				  "literal=( s32[2]{0} {1, 2}, pred[] true )\n}\n",
				  &st);
		CU_ASSERT_FATAL(st == HLOI_OK && m);
		const instr *c = find_instr(m->entry, "c");
		const attr *a = c ? instr_attr(c, ATTR_LITERAL) : NULL;
		CU_ASSERT_FATAL(a != NULL);
		char *s = shape_str(a->u.lit.shp);
		CU_ASSERT_STRING_EQUAL(s, "(s32[2]{0}, pred[])");
		hloi_free(s);
		CU_ASSERT(a->u.lit.tree->kind == LIT_TUPLE && a->u.lit.tree->n == 2);
		module_destroy(m);
		hloi_context_free(ctx);
	}
	EXPECT_DIAGS("ENTRY e {\n  ROOT c = f32[2]{0} custom-call(), literal=(s32[2]{0} {1, 2} pred[] true)\n}\n",
		     "2:46-47 error: malformed literal: expects one shape and its value");
	/* `(` closed by the computation's `}`: the value ends there */
	EXPECT_DIAGS("ENTRY e {\n  ROOT c = f32[2]{0} custom-call(), literal=(s32[] 1, s32[] 2\n}\n",
		     "4:1-1 error: expects 'ROOT', name, '}' or ',' but sees end of input");
}

/* XLA's buffer shapes `b(shape)`: an array inside, printed back; `b` as a
 * name (instruction, computation) is unaffected. */
static void test_buffer_shapes(void)
{
	const char *text = "b {\n  ROOT b = b(f32[2,4]{0,1}) parameter(0)\n}\n\n"
			   "ENTRY e {\n  p = b(s32[4]) parameter(0)\n  b = s32[4] parameter(1)\n"
			   "  c = b(s32[4]) custom-call(b(s32[4]) p, b), custom_call_target=\"Pin\"\n"
			   "  ROOT t = (b(s32[4]), s32[4]) tuple(c, b)\n}\n";
	char *printed = roundtrip(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(printed);
	/* operand shapes are not printed */
	CU_ASSERT_PTR_NOT_NULL(strstr(printed, "  ROOT b = b(f32[2,4]{0,1}) parameter(0)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(printed, "  c = b(s32[4]) custom-call(p, b), custom_call_target=\"Pin\"\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(printed, "  ROOT t = (b(s32[4]), s32[4]) tuple(c, b)\n"));
	hloi_free(printed);
	hloi_context *ctx;
	hloi_status st;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = parse(ctx, text, &st);
	CU_ASSERT_FATAL(st == HLOI_OK && m);
	const instr *p = find_instr(m->entry, "p");
	const instr *b = find_instr(m->entry, "b");
	CU_ASSERT_FATAL(p && b);
	CU_ASSERT(p->shape->is_buffer && p->shape->type == ET_S32 && p->shape->rank == 1 && p->shape->dims[0] == 4);
	CU_ASSERT(!b->shape->is_buffer);
	module_destroy(m);
	hloi_context_free(ctx);
	EXPECT_DIAGS("ENTRY e {\n  ROOT p = b((s32[4])) parameter(0)\n}\n",
		     "2:14-22 error: a buffer shape b(...) holds an array shape");
	EXPECT_DIAGS("ENTRY e {\n  ROOT p = b(b(s32[4])) parameter(0)\n}\n",
		     "2:14-23 error: a buffer shape b(...) holds an array shape");
	EXPECT_DIAGS("ENTRY e {\n  ROOT p = b(s32[4] parameter(0)\n}\n",
		     "2:21-30 error: expects '{' or ')' but sees 'parameter'");
}

/* --- errors --------------------------------------------------------------------------- */

static void test_errors(void)
{
	EXPECT_DIAGS("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] frobnicate(a)\n}\n",
		     "3:13-23 error: expects opcode but sees: frobnicate");
	EXPECT_DIAGS("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] add(a, a\n  ROOT c = f32[] add(a, a)\n}\n",
		     "4:3-7 error: expects ',' or ')' but sees 'ROOT'");
	EXPECT_DIAGS("ENTRY e {\n  a = f32[] parameter(0) /* open\n}\n",
		     "2:26-28 error: unterminated comment");
	{
		static const char nul[] = "ENTRY e {\n  a = f32[] parameter(0)\0\n}\n";
		static const char *const want[] = { "2:25-26 error: invalid NUL byte in input", NULL };
		expect_diags(nul, sizeof nul - 1, want);
	}
	EXPECT_DIAGS("ENTRY e {\n  a = g32[] parameter(0)\n}\n",
		     "2:7-10 error: unknown element type 'g32'");
	EXPECT_DIAGS("ENTRY a { x = f32[] parameter(0) }\nENTRY b { y = f32[] parameter(0) }\n",
		     "2:1-6 error: expects only one ENTRY");
	EXPECT_DIAGS("a { x = f32[] parameter(0) }\na { y = f32[] parameter(0) }\n",
		     "2:1-2 error: computation already exists: a");
	EXPECT_DIAGS("ENTRY e {\n  ROOT x = f32[] parameter(0)\n  ROOT y = f32[] parameter(1)\n}\n",
		     "3:3-7 error: one computation should have only one ROOT");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1] parameter(0)\n}\n",
		     "2:7-45 error: rank 17 exceeds the limit of 16");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[9223372036854775808] parameter(0)\n}\n",
		     "2:11-30 error: integer 9223372036854775808 is out of range (more than 64 bits)");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[99999999999999999999999] parameter(0)\n}\n",
		     "2:11-34 error: integer 99999999999999999999999 is out of range (more than 64 bits)");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[] constant(1)\n}\nb {}\n",
		     "4:1-2 error: computation b has no instructions");
	EXPECT_DIAGS("ENTRY e {\n  x = constant(1)\n}\n",
		     "2:7-15 error: cannot infer shape for opcode: constant");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[] parameter(-1)\n}\n",
		     "2:23-25 error: parameter number must be >= 0");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[] parameter(0)\n  c = pred[] compare(x, x), direction=XX, type=FUZZY\n}\n",
		     "3:39-41 error: Unknown comparison direction: XX",
		     "3:48-53 error: Unknown comparison type: FUZZY");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[] parameter(0), metadata={}, metadata={}\n}\n",
		     "2:40-51 error: attribute metadata already exists");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[] parameter(0), sharding={(x\n}\n",
		     "2:27-36 error: unbalanced brackets in attribute value");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[] parameter(0) @\n}\n",
		     "2:26-27 error: invalid character '@'");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[] parameter(0)\n  \xff\xfe\n}\n",
		     "3:3-4 error: invalid character '\\xff'");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[2]{0:SC(0:2)} parameter(0)\n"
		     "  y = f32[2]{0:P(f32[2])} parameter(1)\n  z = f32[2]{0:*(u32)} parameter(2)\n}\n",
		     "2:16-23 error: unsupported layout component 'SC'",
		     "3:16-25 error: unsupported layout component 'P'",
		     "4:16-22 error: unsupported layout component '*'");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[] parameter(0)\n", "3:1-1 error: expects 'ROOT', name, '}' or ',' but sees end of input");
	EXPECT_DIAGS("", "1:1-1 error: expects 'HloModule', 'ENTRY' or name but sees end of input");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[2] parameter(0), foo=\n}\n",
		     "2:28-32 error: expects a value after '='",
		     "2:28-32 warning: unknown attribute 'foo' ignored (kept as written)");
	EXPECT_DIAGS("ENTRY e {\n  x = f32[2] parameter(0), s=\"abc\n}\n",
		     "2:30-31 error: unterminated string");
}

static void test_deep_nesting(void)
{
	size_t n = 100000;
	char *text = malloc(n + 32);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	strcpy(text, "ENTRY e { x = ");
	size_t p = strlen(text);
	memset(text + p, '(', n);
	strcpy(text + p + n, " }");
	EXPECT_DIAGS(text, "1:1014-1015 error: brackets nested too deeply (more than 1000 levels)");
	/* deep literal nesting too */
	strcpy(text, "ENTRY e { x = f32[] constant(");
	p = strlen(text);
	memset(text + p, '{', n);
	strcpy(text + p + n, " }");
	EXPECT_DIAGS(text, "1:1028-1029 error: brackets nested too deeply (more than 1000 levels)");
	free(text);

	/* 1000 levels are fine */
	strbuf b = STRBUF_INIT;
	sb_puts(&b, "ENTRY e {\n  x = f32[] constant(");
	for (int i = 0; i < 990; i++)
		sb_putc(&b, '(');
	sb_putc(&b, '1');
	for (int i = 0; i < 990; i++)
		sb_putc(&b, ')');
	sb_puts(&b, ")\n}\n");
	char *p1 = roundtrip(sb_str(&b));
	CU_ASSERT_PTR_NOT_NULL(p1);
	hloi_free(p1);
	sb_free(&b);
}

static void test_several_errors(void)
{
	EXPECT_DIAGS("HloModule m\n"
		     "ENTRY e {\n"
		     "  a = f32[2] parameter(0)\n"
		     "  b = f32[2] add(a a)\n"
		     "  c = f32[2] nope(a)\n"
		     "  d = f32[2] add(a, a), direction=UP\n"
		     "  e = f32[2] = add(a, a)\n"
		     "  ROOT f = f32[2] add(a, a)\n"
		     "}\n"
		     "x {\n"
		     "  y = f32[2] add(a, )\n"
		     "}\n",
		     "4:20-21 error: expects ',' or ')' but sees 'a'",
		     "5:14-18 error: expects opcode but sees: nope",
		     "6:35-37 error: Unknown comparison direction: UP",
		     "7:14-15 error: expects name, 'parameter', 'constant' or '{' but sees '='",
		     "11:21-22 error: expects name, element type or '(' but sees ')'");
}

/* Every allocation failure is HLOI_ENOMEM (or success), never a leak or a crash. */
static void test_out_of_memory(void)
{
	hloi_context *ctx;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	int done = 0;
	for (long n = 0; n < 100000 && !done; n++) {
		module *m = NULL;
		alloc_fail_after(n);
		hloi_status st = text_parse_module(&m, ctx, "t.hlo", axpy, strlen(axpy));
		alloc_fail_after(-1);
		if (st == HLOI_OK) {
			CU_ASSERT_PTR_NOT_NULL(m);
			done = 1;
		} else {
			CU_ASSERT_EQUAL(st, HLOI_ENOMEM);
			CU_ASSERT_PTR_NULL(m);
		}
		module_destroy(m);
		hloi_context_clear(ctx);
	}
	CU_ASSERT_TRUE(done);
	hloi_context_free(ctx);
}

static const unit_test module_tests[] = {
	{ "axpy_long_format", test_axpy_long_format },
	{ "short_format", test_short_format },
	{ "comments_everywhere", test_comments_everywhere },
	{ "no_header_and_computations", test_no_header_and_computations },
	{ "root_and_signature", test_root_and_signature },
	{ "attributes", test_attributes },
	{ "header", test_header },
	{ "stack_frames", test_stack_frames },
	{ "async_sugar", test_async_sugar },
	{ "gte_operand", test_gte_operand },
	{ "computation_attrs", test_computation_attrs },
	{ "dim_labels_unknown", test_dim_labels_unknown },
	{ "replica_groups", test_replica_groups },
	{ "custom_call_literal", test_custom_call_literal },
	{ "buffer_shapes", test_buffer_shapes },
	{ NULL, NULL },
};

static const unit_test shape_literal_tests[] = {
	{ "layout_forms", test_layout_forms },
	{ "parse_shape_fields", test_parse_shape_fields },
	{ "literal_forms", test_literal_forms },
	{ "parse_literals", test_parse_literals },
	{ NULL, NULL },
};

static const unit_test error_tests[] = {
	{ "errors", test_errors },
	{ "deep_nesting", test_deep_nesting },
	{ "several_errors", test_several_errors },
	{ "out_of_memory", test_out_of_memory },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "parser_module", module_tests },
	{ "parser_shapes_literals", shape_literal_tests },
	{ "parser_errors", error_tests },
	{ NULL, NULL },
};
