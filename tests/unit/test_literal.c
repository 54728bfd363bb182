/* Unit tests for f16/bf16 conversions (exhaustive), literal creation with
 * padding, relayout, conversion from literal text trees (with XLA's error
 * messages) and printing exactly as XLA's Literal::ToString(). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/half.h"
#include "core/index.h"
#include "core/literal.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/strbuf.h"
#include "unit.h"

/* --- helpers -------------------------------------------------------------- */

static uint32_t fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float bitsf(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint64_t dbits(double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	return u;
}

/* A tiny reader for literal text, building lit_node trees with byte
 * locations (the real one is the HLO parser's). */
typedef struct tree_reader {
	arena a;
	const char *text;
	size_t pos;
} tree_reader;

static void tr_skip(tree_reader *r)
{
	while (r->text[r->pos] == ' ' || r->text[r->pos] == ',' || r->text[r->pos] == '\n')
		r->pos++;
}

static lit_node *tr_node(tree_reader *r)
{
	tr_skip(r);
	lit_node *n = arena_alloc(&r->a, sizeof *n);
	const char *t = r->text;
	n->at.start = r->pos;
	if (t[r->pos] == '{' || t[r->pos] == '(') {
		char close = t[r->pos] == '{' ? '}' : ')';
		if (!strncmp(t + r->pos, "{...}", 5)) {
			n->kind = LIT_ELIDED;
			r->pos += 5;
			n->at.end = r->pos;
			return n;
		}
		n->kind = close == '}' ? LIT_LIST : LIT_TUPLE;
		r->pos++;
		lit_node *kids[64];
		int nk = 0;
		for (;;) {
			tr_skip(r);
			if (t[r->pos] == close || t[r->pos] == '\0')
				break;
			kids[nk++] = tr_node(r);
		}
		r->pos++;
		n->n = nk;
		n->kids = arena_array(&r->a, (size_t)(nk ? nk : 1), sizeof *n->kids);
		memcpy(n->kids, kids, (size_t)nk * sizeof *kids);
		n->at.end = r->pos;
		return n;
	}
	size_t s = r->pos;
	while (t[r->pos] && !strchr(" ,{}()\n", t[r->pos]))
		r->pos++;
	if (t[r->pos] == '(') /* nan(0x..) */
		while (t[r->pos] && t[r->pos++] != ')')
			;
	n->text = arena_strndup(&r->a, t + s, r->pos - s);
	char c0 = t[s] == '-' || t[s] == '+' ? t[s + 1] : t[s];
	n->kind = (c0 >= '0' && c0 <= '9') || c0 == '.' ? LIT_NUMBER : LIT_WORD;
	n->at.end = r->pos;
	return n;
}

typedef struct fixture {
	hloi_context *ctx;
	hloi_literal *lit;
	hloi_status st;
} fixture;

/* Converts `text` for shape s into f->lit. */
static hloi_status from_text(fixture *f, const char *text, const shape *s)
{
	if (!f->ctx)
		CU_ASSERT_FATAL(hloi_context_new(&f->ctx) == HLOI_OK);
	hloi_context_clear(f->ctx);
	literal_destroy(f->lit);
	f->lit = NULL;
	tree_reader r;
	arena_init(&r.a);
	r.text = text;
	r.pos = 0;
	lit_node *tree = tr_node(&r);
	int src = diag_add_source(f->ctx, "t.hlo", text, strlen(text));
	f->st = literal_from_tree(&f->lit, f->ctx, src, tree, s);
	arena_release(&r.a);
	return f->st;
}

static void fixture_done(fixture *f)
{
	literal_destroy(f->lit);
	hloi_context_free(f->ctx);
	f->lit = NULL;
	f->ctx = NULL;
}

static const char *last_msg(const fixture *f)
{
	const char *m = hloi_context_last_error(f->ctx);
	return m ? m : "(none)";
}

static size_t last_col(const fixture *f)
{
	return f->ctx->ndiags ? f->ctx->diags[f->ctx->ndiags - 1].at.start : (size_t)-1;
}

#define EXPECT_MSG(f, msg)                                                   \
	do {                                                                 \
		CU_ASSERT_STRING_EQUAL(last_msg(f), msg);                    \
		if (strcmp(last_msg(f), msg))                                \
			fprintf(stderr, "\n  got:  %s\n  want: %s\n", last_msg(f), msg); \
	} while (0)

static shape mk(etype t, int rank, const int64_t *dims)
{
	shape s;
	shape_make_array(&s, t, rank, dims);
	return s;
}

static shape mk1(etype t, int64_t d0)
{
	return mk(t, 1, &d0);
}

static shape mk2(etype t, int64_t d0, int64_t d1)
{
	int64_t d[2] = { d0, d1 };
	return mk(t, 2, d);
}

/* Prints and compares; reports the difference on failure. */
static void expect_print(const hloi_literal *lit, int with_shape, int oneline, const char *want)
{
	strbuf b = STRBUF_INIT;
	literal_print(&b, lit, with_shape, oneline);
	CU_ASSERT_STRING_EQUAL(sb_str(&b), want);
	if (strcmp(sb_str(&b), want))
		fprintf(stderr, "\n--- got:\n%s\n--- want:\n%s\n", sb_str(&b), want);
	sb_free(&b);
}

static void expect_text_prints(const char *text, const shape *s, const char *want, const char *want_oneline)
{
	fixture f = { 0 };
	CU_ASSERT_EQUAL(from_text(&f, text, s), HLOI_OK);
	if (f.st != HLOI_OK) {
		fprintf(stderr, "\n  conversion failed: %s\n", last_msg(&f));
	} else {
		if (want)
			expect_print(f.lit, 1, 0, want);
		if (want_oneline)
			expect_print(f.lit, 0, 1, want_oneline);
	}
	fixture_done(&f);
}

/* --- half ------------------------------------------------------------------- */

static double f16_reference(uint16_t h)
{
	int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
	double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
	return sign ? -v : v;
}

static void test_f16_exhaustive_roundtrip(void)
{
	int bad = 0;
	for (uint32_t i = 0; i < 65536; i++) {
		uint16_t h = (uint16_t)i;
		float f = f16_to_f32(h);
		int e = (h >> 10) & 31;
		if (e == 31 && (h & 1023)) {
			/* NaN: stays NaN, sign kept, payload kept, made quiet */
			bad += !isnan(f) || (fbits(f) >> 31) != (h >> 15u);
			bad += f32_to_f16(f) != (h | 0x200);
			bad += f64_to_f16((double)f) != (h | 0x200);
			continue;
		}
		if (e == 31) {
			bad += !isinf(f) || (f < 0) != (h >> 15);
		} else {
			bad += (double)f != f16_reference(h);
			bad += (fbits(f) >> 31) != (uint32_t)(h >> 15); /* -0 keeps its sign */
		}
		bad += f32_to_f16(f) != h;
		bad += f64_to_f16((double)f) != h;
	}
	CU_ASSERT_EQUAL(bad, 0);
}

static void test_bf16_exhaustive_roundtrip(void)
{
	int bad = 0;
	for (uint32_t i = 0; i < 65536; i++) {
		uint16_t h = (uint16_t)i;
		float f = bf16_to_f32(h);
		bad += fbits(f) != (uint32_t)h << 16;
		if ((h & 0x7f80) == 0x7f80 && (h & 0x7f)) {
			bad += !isnan(f);
			bad += f32_to_bf16(f) != (h | 0x40);
			bad += f64_to_bf16((double)f) != (h | 0x40);
			continue;
		}
		bad += f32_to_bf16(f) != h;
		bad += f64_to_bf16((double)f) != h;
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* For every pair of neighbouring positive finite f16 values a < b: the exact
 * midpoint goes to the even one, one ulp (of f32 / f64) either side goes to
 * the nearer one. Covers subnormals, the subnormal/normal boundary and the
 * top of the range (65504 .. 65520 -> inf). */
static void test_f16_ties_to_even(void)
{
	int bad = 0;
	for (uint16_t h = 0; h < 0x7c00; h++) {
		double a = f16_reference(h);
		double b = h + 1 < 0x7c00 ? f16_reference((uint16_t)(h + 1)) : 65536.0;
		uint16_t hb = (uint16_t)(h + 1); /* 0x7c00 = inf */
		double mid = (a + b) / 2;
		uint16_t even = (h & 1) ? hb : h;
		bad += f64_to_f16(mid) != even;
		bad += f64_to_f16(nextafter(mid, 0)) != h;
		bad += f64_to_f16(nextafter(mid, INFINITY)) != hb;
		bad += f32_to_f16((float)mid) != even;
		bad += f32_to_f16(nextafterf((float)mid, 0)) != h;
		bad += f32_to_f16(nextafterf((float)mid, INFINITY)) != hb;
		/* negative side */
		bad += f64_to_f16(-mid) != (even | 0x8000);
		bad += f32_to_f16(-nextafterf((float)mid, 0)) != (h | 0x8000);
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(f32_to_f16(65504.0f), 0x7bff);
	CU_ASSERT_EQUAL(f32_to_f16(65519.99f), 0x7bff);
	CU_ASSERT_EQUAL(f32_to_f16(65520.0f), 0x7c00);
	CU_ASSERT_EQUAL(f64_to_f16(1e300), 0x7c00);
	CU_ASSERT_EQUAL(f64_to_f16(-1e300), 0xfc00);
	CU_ASSERT_EQUAL(f32_to_f16(INFINITY), 0x7c00);
	CU_ASSERT_EQUAL(f32_to_f16(ldexpf(1, -24)), 0x0001);   /* smallest subnormal */
	CU_ASSERT_EQUAL(f32_to_f16(ldexpf(1, -25)), 0x0000);   /* tie -> even (zero) */
	CU_ASSERT_EQUAL(f32_to_f16(ldexpf(1.5f, -25)), 0x0001);
	CU_ASSERT_EQUAL(f32_to_f16(ldexpf(3, -25)), 0x0002);   /* 1.5 ulp tie -> 2 */
	CU_ASSERT_EQUAL(f32_to_f16(ldexpf(1, -14)), 0x0400);   /* smallest normal */
	CU_ASSERT_EQUAL(f64_to_f16(ldexp(1, -40)), 0x0000);
	CU_ASSERT_EQUAL(f32_to_f16(-0.0f), 0x8000);
	CU_ASSERT_EQUAL(f32_to_f16(1.0f), 0x3c00);
	CU_ASSERT_EQUAL(f32_to_f16(bitsf(0xffc00001u)), 0xfe00); /* -NaN stays -NaN */
	/* one rounding from double: 1 + 2^-11 + 2^-40 is above the tie */
	CU_ASSERT_EQUAL(f64_to_f16(1.0 + ldexp(1, -11) + ldexp(1, -40)), 0x3c01);
	CU_ASSERT_EQUAL(f64_to_f16(1.0 + ldexp(1, -11)), 0x3c00);
}

static void test_bf16_ties_to_even(void)
{
	int bad = 0;
	for (uint32_t h = 0; h < 0x7f80; h++) {
		double a = (double)bf16_to_f32((uint16_t)h);
		double b = h < 0x7f7f ? (double)bf16_to_f32((uint16_t)(h + 1)) : ldexp(1, 128);
		double mid = (a + b) / 2;
		uint16_t even = (uint16_t)((h & 1) ? h + 1 : h);
		bad += f32_to_bf16((float)mid) != even;
		bad += f32_to_bf16(nextafterf((float)mid, 0)) != h;
		bad += f32_to_bf16(nextafterf((float)mid, INFINITY)) != h + 1;
		bad += f64_to_bf16(mid) != even;
		bad += f64_to_bf16(nextafter(mid, 0)) != h;
		bad += f64_to_bf16(nextafter(mid, INFINITY)) != h + 1;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(f32_to_bf16(3.14f), 0x4049); /* 3.140625 */
	CU_ASSERT_EQUAL(f32_to_bf16(FLT_MAX), 0x7f80);
	CU_ASSERT_EQUAL(f64_to_bf16(1e39), 0x7f80);
	CU_ASSERT_EQUAL(f32_to_bf16(bitsf(0x00000001u)), 0x0000);
	CU_ASSERT_EQUAL(f32_to_bf16(bitsf(0x00008000u)), 0x0000); /* tie -> even */
	CU_ASSERT_EQUAL(f32_to_bf16(bitsf(0x00018000u)), 0x0002);
	CU_ASSERT_EQUAL(f32_to_bf16(bitsf(0x7f800001u)), 0x7fc0); /* sNaN -> qNaN */
	CU_ASSERT_EQUAL(f64_to_bf16(-NAN), 0xffc0);
	/* through f32 this would be a tie rounding to 0x3f82; one rounding gives 0x3f81 */
	CU_ASSERT_EQUAL(f64_to_bf16(1.0 + ldexp(1, -7) + ldexp(1, -8) - ldexp(1, -30)), 0x3f81);
	CU_ASSERT_EQUAL(f64_to_bf16(1.0 + ldexp(1, -7) + ldexp(1, -8) + ldexp(1, -30)), 0x3f82);
}

/* --- creation, padding, relayout ------------------------------------------- */

static shape padded_2x3(etype t, pad_value pv)
{
	shape s = mk2(t, 2, 3);
	s.layout.minor_to_major[0] = 0;
	s.layout.minor_to_major[1] = 1;
	s.layout.n_padded = 2;
	s.layout.padded_dimensions[0] = 3;
	s.layout.padded_dimensions[1] = 5;
	s.layout.padding_value = pv;
	return s;
}

static void test_create_padding(void)
{
	shape s = padded_2x3(ET_F32, PAD_LOWEST);
	hloi_literal *lit = NULL;
	CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
	CU_ASSERT_EQUAL(lit->nbytes, 15 * 4);
	CU_ASSERT_EQUAL((uintptr_t)lit->data % 64, 0);
	float *p = lit->data;
	/* memory order a d P b e P c f P P P P P P P */
	const char *want = "..P..P..PPPPPPP";
	for (int i = 0; i < 15; i++) {
		if (want[i] == 'P') {
			CU_ASSERT(isinf(p[i]) && p[i] < 0);
		} else {
			CU_ASSERT(p[i] == 0.0f && !signbit(p[i]));
		}
	}
	int64_t idx[2] = { 1, 2 };
	CU_ASSERT_PTR_EQUAL(literal_element(lit, idx), &p[7]);
	literal_destroy(lit);

	/* every padding position, for a rank-3 layout {1,2,0} with pad */
	int64_t d3[3] = { 2, 1, 3 };
	shape s3 = mk(ET_S16, 3, d3);
	s3.layout.minor_to_major[0] = 1;
	s3.layout.minor_to_major[1] = 2;
	s3.layout.minor_to_major[2] = 0;
	s3.layout.n_padded = 3;
	s3.layout.padded_dimensions[0] = 3;
	s3.layout.padded_dimensions[1] = 2;
	s3.layout.padded_dimensions[2] = 4;
	s3.layout.padding_value = PAD_HIGHEST;
	CU_ASSERT_FATAL(literal_create(&lit, &s3) == HLOI_OK);
	CU_ASSERT_EQUAL(lit->nbytes, 24 * 2);
	int16_t *q = lit->data;
	int bad = 0;
	for (int64_t lin = 0; lin < 24; lin++) {
		int64_t ix[3];
		int pad = index_from_linear(&s3, lin, ix);
		bad += q[lin] != (pad ? 32767 : 0);
	}
	CU_ASSERT_EQUAL(bad, 0);
	literal_destroy(lit);

	/* a layout that is not a permutation is refused (no out-of-bounds writes) */
	int64_t d31[2] = { 3, 1 };
	shape dup = mk(ET_F32, 2, d31);
	dup.layout.minor_to_major[0] = 0; /* {0,0} */
	CU_ASSERT_EQUAL(literal_create(&lit, &dup), HLOI_EINVAL);
	dup.layout.minor_to_major[0] = 1;
	dup.layout.minor_to_major[1] = 2; /* {1,2} */
	CU_ASSERT_EQUAL(literal_create(&lit, &dup), HLOI_EINVAL);
	dup = mk(ET_F32, 2, d31);
	dup.layout.n_minor_to_major = 1;
	CU_ASSERT_EQUAL(literal_create(&lit, &dup), HLOI_EINVAL);
	fixture f = { 0 };
	CU_ASSERT_EQUAL(from_text(&f, "{{1},{2},{3}}", &dup), HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(last_msg(&f), "literal of shape f32[3,1] has an invalid layout");
	fixture_done(&f);

	/* size overflow */
	int64_t huge[2] = { INT64_C(1) << 40, INT64_C(1) << 40 };
	shape sh = mk(ET_F32, 2, huge);
	CU_ASSERT_EQUAL(literal_create(&lit, &sh), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(lit);
}

static void test_padding_bits(void)
{
	unsigned char buf[16];
	shape s = mk1(ET_S8, 1);
	s.layout.padding_value = PAD_LOWEST;
	literal_padding_bits(&s, buf);
	CU_ASSERT_EQUAL((int8_t)buf[0], -128);
	s.layout.padding_value = PAD_HIGHEST;
	literal_padding_bits(&s, buf);
	CU_ASSERT_EQUAL((int8_t)buf[0], 127);
	s.type = ET_U16;
	uint16_t u16;
	literal_padding_bits(&s, buf);
	memcpy(&u16, buf, 2);
	CU_ASSERT_EQUAL(u16, 65535);
	s.layout.padding_value = PAD_LOWEST;
	literal_padding_bits(&s, buf);
	memcpy(&u16, buf, 2);
	CU_ASSERT_EQUAL(u16, 0);
	s.type = ET_F16;
	literal_padding_bits(&s, buf);
	memcpy(&u16, buf, 2);
	CU_ASSERT_EQUAL(u16, 0xfc00);
	s.layout.padding_value = PAD_ONE;
	literal_padding_bits(&s, buf);
	memcpy(&u16, buf, 2);
	CU_ASSERT_EQUAL(u16, 0x3c00);
	s.type = ET_BF16;
	s.layout.padding_value = PAD_HIGHEST;
	literal_padding_bits(&s, buf);
	memcpy(&u16, buf, 2);
	CU_ASSERT_EQUAL(u16, 0x7f80);
	s.layout.padding_value = PAD_ONE;
	literal_padding_bits(&s, buf);
	memcpy(&u16, buf, 2);
	CU_ASSERT_EQUAL(u16, 0x3f80);
	s.type = ET_PRED;
	s.layout.padding_value = PAD_HIGHEST;
	literal_padding_bits(&s, buf);
	CU_ASSERT_EQUAL(buf[0], 1);
	s.layout.padding_value = PAD_LOWEST;
	literal_padding_bits(&s, buf);
	CU_ASSERT_EQUAL(buf[0], 0);
	s.type = ET_S64;
	int64_t i64;
	literal_padding_bits(&s, buf);
	memcpy(&i64, buf, 8);
	CU_ASSERT_EQUAL(i64, INT64_MIN);
	s.type = ET_U32;
	s.layout.padding_value = PAD_HIGHEST;
	uint32_t u32;
	literal_padding_bits(&s, buf);
	memcpy(&u32, buf, 4);
	CU_ASSERT_EQUAL(u32, UINT32_MAX);
	s.type = ET_F64;
	double d;
	literal_padding_bits(&s, buf);
	memcpy(&d, buf, 8);
	CU_ASSERT(isinf(d) && d > 0);
	s.layout.padding_value = PAD_ONE;
	literal_padding_bits(&s, buf);
	memcpy(&d, buf, 8);
	CU_ASSERT_EQUAL(d, 1.0);
	s.type = ET_S32;
	s.layout.padding_value = PAD_ZERO;
	int32_t i32 = 5;
	literal_padding_bits(&s, buf);
	memcpy(&i32, buf, 4);
	CU_ASSERT_EQUAL(i32, 0);
}

static void test_tuple_create_clone(void)
{
	shape inner[2], outer[3];
	inner[0] = mk(ET_S32, 0, NULL);
	inner[1] = mk1(ET_PRED, 3);
	outer[0] = mk1(ET_F32, 2);
	memset(&outer[1], 0, sizeof outer[1]);
	outer[1].type = ET_TUPLE;
	outer[1].ntuple = 2;
	outer[1].tuple = inner;
	memset(&outer[2], 0, sizeof outer[2]);
	outer[2].type = ET_TUPLE; /* empty tuple */
	shape top;
	memset(&top, 0, sizeof top);
	top.type = ET_TUPLE;
	top.ntuple = 3;
	top.tuple = outer;

	hloi_literal *lit = NULL, *c = NULL;
	CU_ASSERT_FATAL(literal_create(&lit, &top) == HLOI_OK);
	CU_ASSERT_EQUAL(lit->nelems, 3);
	CU_ASSERT_PTR_EQUAL(lit->shape.tuple, lit->tuple_shapes);
	CU_ASSERT_PTR_NOT_EQUAL(lit->shape.tuple, outer); /* deep copy */
	CU_ASSERT_PTR_EQUAL(lit->tuple_shapes[1].tuple, lit->elems[1]->tuple_shapes);
	CU_ASSERT_EQUAL(lit->elems[1]->elems[1]->shape.dims[0], 3);
	CU_ASSERT_EQUAL(lit->elems[2]->nelems, 0);
	/* change the caller's shapes: the literal must not care */
	inner[1].dims[0] = 99;
	CU_ASSERT_EQUAL(lit->tuple_shapes[1].tuple[1].dims[0], 3);
	((float *)lit->elems[0]->data)[1] = 2.5f;
	((uint8_t *)lit->elems[1]->elems[1]->data)[2] = 1;
	CU_ASSERT_FATAL(literal_clone(&c, lit) == HLOI_OK);
	literal_destroy(lit);
	CU_ASSERT_EQUAL(((float *)c->elems[0]->data)[1], 2.5f);
	CU_ASSERT_EQUAL(((uint8_t *)c->elems[1]->elems[1]->data)[2], 1);
	CU_ASSERT_PTR_EQUAL(c->tuple_shapes[1].tuple, c->elems[1]->tuple_shapes);
	expect_print(c, 1, 0, "(\nf32[2] {0, 2.5},\n(\ns32[] 0,\npred[3] {0, 0, 1}\n),\n(\n\n)\n)");
	expect_print(c, 1, 1, "( f32[2] {0, 2.5}, ( s32[] 0, pred[3] {0, 0, 1} ), (  ) )");
	literal_destroy(c);
}

static void test_relayout(void)
{
	shape s = mk2(ET_S32, 2, 3);
	hloi_literal *lit = NULL, *r = NULL, *back = NULL;
	CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
	for (int i = 0; i < 6; i++)
		((int32_t *)lit->data)[i] = i + 1; /* 1 2 3 / 4 5 6 */
	shape t = padded_2x3(ET_S32, PAD_ONE);
	CU_ASSERT_FATAL(literal_relayout(&r, lit, &t) == HLOI_OK);
	const int32_t want[15] = { 1, 4, 1, 2, 5, 1, 3, 6, 1, 1, 1, 1, 1, 1, 1 };
	CU_ASSERT_EQUAL(memcmp(r->data, want, sizeof want), 0);
	CU_ASSERT_FATAL(literal_relayout(&back, r, &s) == HLOI_OK);
	CU_ASSERT_EQUAL(back->nbytes, 24);
	CU_ASSERT_EQUAL(memcmp(back->data, lit->data, 24), 0);
	expect_print(r, 1, 0, "s32[2,3] {\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n}");
	literal_destroy(back);
	literal_destroy(r);
	shape bad = mk2(ET_S32, 3, 2);
	CU_ASSERT_EQUAL(literal_relayout(&r, lit, &bad), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(r);
	literal_destroy(lit);
}

/* --- literal_from_tree ------------------------------------------------------ */

static void test_from_tree_values(void)
{
	fixture f = { 0 };
	shape s = mk2(ET_S32, 2, 3);
	CU_ASSERT_FATAL(from_text(&f, "{ {1, 2, 3}, {4, 5, -6} }", &s) == HLOI_OK);
	const int32_t w32[6] = { 1, 2, 3, 4, 5, -6 };
	CU_ASSERT_EQUAL(memcmp(f.lit->data, w32, sizeof w32), 0);

	shape u8 = mk1(ET_U8, 3);
	CU_ASSERT_FATAL(from_text(&f, "{0, 255, true}", &u8) == HLOI_OK);
	CU_ASSERT(((uint8_t *)f.lit->data)[1] == 255 && ((uint8_t *)f.lit->data)[2] == 1);

	shape s64 = mk1(ET_S64, 2);
	CU_ASSERT_FATAL(from_text(&f, "{-9223372036854775808, 9223372036854775807}", &s64) == HLOI_OK);
	CU_ASSERT_EQUAL(((int64_t *)f.lit->data)[0], INT64_MIN);
	CU_ASSERT_EQUAL(((int64_t *)f.lit->data)[1], INT64_MAX);
	shape u64 = mk1(ET_U64, 1);
	CU_ASSERT_FATAL(from_text(&f, "{18446744073709551615}", &u64) == HLOI_OK);
	CU_ASSERT_EQUAL(((uint64_t *)f.lit->data)[0], UINT64_MAX);

	shape pred = mk1(ET_PRED, 4);
	CU_ASSERT_FATAL(from_text(&f, "{true, false, 0, 5}", &pred) == HLOI_OK);
	const uint8_t wp[4] = { 1, 0, 0, 1 };
	CU_ASSERT_EQUAL(memcmp(f.lit->data, wp, 4), 0);

	shape f32 = mk1(ET_F32, 5);
	CU_ASSERT_FATAL(from_text(&f, "{1, -2.5, 1e10, 0.1, -0}", &f32) == HLOI_OK);
	float *pf = f.lit->data;
	CU_ASSERT(pf[0] == 1.0f && pf[1] == -2.5f && pf[2] == 1e10f && pf[3] == 0.1f);
	CU_ASSERT(pf[4] == 0.0f && signbit(pf[4]));

	shape f64 = mk1(ET_F64, 2);
	CU_ASSERT_FATAL(from_text(&f, "{0.1, 1e308}", &f64) == HLOI_OK);
	CU_ASSERT_EQUAL(((double *)f.lit->data)[0], 0.1);

	shape f16 = mk1(ET_F16, 4);
	CU_ASSERT_FATAL(from_text(&f, "{65519, 1e-8, 3.14, -inf}", &f16) == HLOI_OK);
	const uint16_t wh[4] = { 0x7bff, 0x0000, 0x4248, 0xfc00 };
	CU_ASSERT_EQUAL(memcmp(f.lit->data, wh, 8), 0);

	shape bf16 = mk1(ET_BF16, 3);
	CU_ASSERT_FATAL(from_text(&f, "{3.14, 1, inf}", &bf16) == HLOI_OK);
	const uint16_t wb[3] = { 0x4049, 0x3f80, 0x7f80 };
	CU_ASSERT_EQUAL(memcmp(f.lit->data, wb, 6), 0);

	shape sc = mk(ET_S16, 0, NULL);
	CU_ASSERT_FATAL(from_text(&f, "-32768", &sc) == HLOI_OK);
	CU_ASSERT_EQUAL(*(int16_t *)f.lit->data, -32768);

	/* empty dimensions */
	shape e1 = mk1(ET_F32, 0);
	CU_ASSERT_EQUAL(from_text(&f, "{}", &e1), HLOI_OK);
	shape e2 = mk2(ET_F32, 2, 0);
	CU_ASSERT_EQUAL(from_text(&f, "{ {}, {} }", &e2), HLOI_OK);
	shape e3 = mk2(ET_F32, 0, 3);
	CU_ASSERT_EQUAL(from_text(&f, "{ }", &e3), HLOI_OK);
	fixture_done(&f);
}

static void test_from_tree_nan_inf(void)
{
	fixture f = { 0 };
	shape f32 = mk1(ET_F32, 6);
	CU_ASSERT_FATAL(from_text(&f, "{nan, -nan, nan(0x1), -nan(0x7fffff), inf, -inf}", &f32) == HLOI_OK);
	uint32_t *u = f.lit->data;
	CU_ASSERT_EQUAL(u[0], 0x7fc00000u);
	CU_ASSERT_EQUAL(u[1], 0xffc00000u);
	CU_ASSERT_EQUAL(u[2], 0x7f800001u);
	CU_ASSERT_EQUAL(u[3], 0xffffffffu);
	CU_ASSERT_EQUAL(u[4], 0x7f800000u);
	CU_ASSERT_EQUAL(u[5], 0xff800000u);
	expect_print(f.lit, 1, 0, "f32[6] {nan, -nan, nan(0x1), -nan(0x7fffff), inf, -inf}");

	shape f16 = mk1(ET_F16, 3);
	CU_ASSERT_FATAL(from_text(&f, "{nan(0x3ff), -nan, nan(0x200)}", &f16) == HLOI_OK);
	const uint16_t wh[3] = { 0x7fff, 0xfe00, 0x7e00 };
	CU_ASSERT_EQUAL(memcmp(f.lit->data, wh, 6), 0);
	expect_print(f.lit, 1, 0, "f16[3] {nan(0x3ff), -nan, nan}");

	shape bf16 = mk1(ET_BF16, 2);
	CU_ASSERT_FATAL(from_text(&f, "{nan(0x1), -nan}", &bf16) == HLOI_OK);
	const uint16_t wb[2] = { 0x7f81, 0xffc0 };
	CU_ASSERT_EQUAL(memcmp(f.lit->data, wb, 4), 0);
	expect_print(f.lit, 1, 0, "bf16[2] {nan(0x1), -nan}");

	shape f64 = mk1(ET_F64, 2);
	CU_ASSERT_FATAL(from_text(&f, "{nan(0xfffffffffffff), -nan}", &f64) == HLOI_OK);
	CU_ASSERT_EQUAL(((uint64_t *)f.lit->data)[0], UINT64_C(0x7fffffffffffffff));
	CU_ASSERT_EQUAL(((uint64_t *)f.lit->data)[1], UINT64_C(0xfff8000000000000));

	CU_ASSERT_EQUAL(from_text(&f, "{nan(0x400), 1, 2}", &f16), HLOI_EPARSE);
	EXPECT_MSG(&f, "NaN payload 0x400 does not fit in the 10 fraction bits of f16");
	CU_ASSERT_EQUAL(last_col(&f), 1);
	CU_ASSERT_EQUAL(from_text(&f, "{nan(0x0), 1, 2}", &f16), HLOI_EPARSE);
	EXPECT_MSG(&f, "NaN payload must not be zero (that is infinity)");
	CU_ASSERT_EQUAL(from_text(&f, "{1, 2, nan(0x80)}", &f16), HLOI_OK);
	shape s32 = mk1(ET_S32, 1);
	CU_ASSERT_EQUAL(from_text(&f, "{nan}", &s32), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects integer for primitive type: s32");
	CU_ASSERT_EQUAL(from_text(&f, "{bogus, 1, 2}", &f16), HLOI_EPARSE);
	EXPECT_MSG(&f, "expect floating point value for primitive type: f16");
	fixture_done(&f);
}

static void test_from_tree_errors(void)
{
	fixture f = { 0 };
	shape sc = mk(ET_S32, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "{1}", &sc), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects nested array in rank 0, but sees larger");
	CU_ASSERT_PTR_NULL(f.lit);

	shape s22 = mk2(ET_S32, 2, 2);
	CU_ASSERT_EQUAL(from_text(&f, "{1, 2}", &s22), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects nested array in rank 2, but sees 1");
	CU_ASSERT_EQUAL(last_col(&f), 1);
	CU_ASSERT_EQUAL(from_text(&f, "7", &s22), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects nested array in rank 2, but sees 0");
	CU_ASSERT_EQUAL(from_text(&f, "{{{1}}, {2, 3}}", &s22), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects nested array in rank 2, but sees larger");
	CU_ASSERT_EQUAL(last_col(&f), 2);
	CU_ASSERT_EQUAL(from_text(&f, "{{1, 2}, {3}}", &s22), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects 2 elements in the [1]th element, but sees 1");
	CU_ASSERT_EQUAL(last_col(&f), 11); /* the closing brace of {3} */
	CU_ASSERT_EQUAL(from_text(&f, "{{1, 2}, {3, 4}, {5, 6}}", &s22), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects 2 elements in the []th element, but sees more");
	CU_ASSERT_EQUAL(last_col(&f), 17);
	CU_ASSERT_EQUAL(from_text(&f, "{{1, 2}}", &s22), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects 2 elements in the []th element, but sees 1");
	CU_ASSERT_EQUAL(from_text(&f, "{{1, 2}, {3, 4, 5}}", &s22), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects 2 elements on the minor-most dimension, but sees more");
	CU_ASSERT_EQUAL(last_col(&f), 16);
	CU_ASSERT_EQUAL(from_text(&f, "{ {...}, {1, 2} }", &s22), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects `...` at nest level 1, but sees it at nest level 2");

	int64_t d3[3] = { 2, 2, 2 };
	shape s3 = mk(ET_S32, 3, d3);
	CU_ASSERT_EQUAL(from_text(&f, "{{{1,2},{3,4}},{{5,6},{7}}}", &s3), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects 2 elements in the [1,1]th element, but sees 1");

	shape s2 = mk1(ET_S32, 2);
	CU_ASSERT_EQUAL(from_text(&f, "{1.5, 2}", &s2), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects integer for primitive type: s32");
	CU_ASSERT_EQUAL(from_text(&f, "(1, 2)", &s2), HLOI_EPARSE);
	EXPECT_MSG(&f, "unexpected '(' in literal.  Parens are only valid for complex literals");

	shape u8 = mk(ET_U8, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "300", &u8), HLOI_EPARSE);
	EXPECT_MSG(&f, "value 300 is out of range for literal's primitive type u8 namely [0, 255].");
	CU_ASSERT_EQUAL(from_text(&f, "-1", &u8), HLOI_EPARSE);
	EXPECT_MSG(&f, "value -1 is out of range for literal's primitive type u8 namely [0, 255].");
	shape s8 = mk(ET_S8, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "-129", &s8), HLOI_EPARSE);
	EXPECT_MSG(&f, "value -129 is out of range for literal's primitive type s8 namely [-128, 127].");
	shape s64 = mk(ET_S64, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "9223372036854775808", &s64), HLOI_EPARSE);
	EXPECT_MSG(&f, "value 9223372036854775808 is out of range for literal's primitive type s64 namely "
		       "[-9223372036854775808, 9223372036854775807].");
	shape u64 = mk(ET_U64, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "18446744073709551616", &u64), HLOI_EPARSE);
	EXPECT_MSG(&f, "value 18446744073709551616 is out of range for literal's primitive type u64 namely "
		       "[0, 18446744073709551615].");
	shape u32 = mk(ET_U32, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "4294967296", &u32), HLOI_EPARSE);
	EXPECT_MSG(&f, "value 4294967296 is out of range for literal's primitive type u32 namely [0, 4294967295].");
	shape pred = mk(ET_PRED, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "0.5", &pred), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects integer for primitive type: pred");

	shape bf16 = mk(ET_BF16, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "1e100", &bf16), HLOI_EPARSE);
	EXPECT_MSG(&f, "value 1e+100 is out of range for literal's primitive type bf16 namely "
		       "[-3.38953e+38, 3.38953e+38].");
	shape f16 = mk(ET_F16, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "-65520", &f16), HLOI_EPARSE);
	EXPECT_MSG(&f, "value -65520 is out of range for literal's primitive type f16 namely [-65504, 65504].");
	shape f32 = mk(ET_F32, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "1e39", &f32), HLOI_EPARSE);
	EXPECT_MSG(&f, "value 1e+39 is out of range for literal's primitive type f32 namely "
		       "[-3.40282e+38, 3.40282e+38].");
	CU_ASSERT_EQUAL(from_text(&f, "3.4028235e38", &f32), HLOI_OK); /* rounds to FLT_MAX */
	CU_ASSERT_EQUAL(from_text(&f, "1e-50", &f32), HLOI_OK);        /* underflow is fine */
	shape f64 = mk(ET_F64, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "1e400", &f64), HLOI_EPARSE);
	EXPECT_MSG(&f, "Constant is out of range for double (+/-1.79769e+308) and so is unparsable.");

	shape c64 = mk1(ET_C64, 1);
	CU_ASSERT_EQUAL(from_text(&f, "{1}", &c64), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects '(' before complex number (real, imag) for primitive type: c64");
	fixture_done(&f);
}

static void test_from_tree_layout_padding(void)
{
	fixture f = { 0 };
	shape s = padded_2x3(ET_F32, PAD_HIGHEST);
	CU_ASSERT_FATAL(from_text(&f, "{ {1, 2, 3}, {4, 5, 6} }", &s) == HLOI_OK);
	float *p = f.lit->data;
	const float want[15] = { 1, 4, INFINITY, 2, 5, INFINITY, 3, 6, INFINITY, INFINITY,
				 INFINITY, INFINITY, INFINITY, INFINITY, INFINITY };
	CU_ASSERT_EQUAL(memcmp(p, want, sizeof want), 0);
	expect_print(f.lit, 1, 0, "f32[2,3] {\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n}");

	shape c = mk2(ET_U8, 2, 2);
	c.layout.minor_to_major[0] = 0;
	c.layout.minor_to_major[1] = 1;
	CU_ASSERT_FATAL(from_text(&f, "{{1,2},{3,4}}", &c) == HLOI_OK);
	const uint8_t wc[4] = { 1, 3, 2, 4 };
	CU_ASSERT_EQUAL(memcmp(f.lit->data, wc, 4), 0);
	fixture_done(&f);
}

static void test_from_tree_tuples_elided(void)
{
	fixture f = { 0 };
	shape el[2];
	el[0] = mk(ET_F32, 0, NULL);
	el[1] = mk1(ET_S32, 2);
	shape t;
	memset(&t, 0, sizeof t);
	t.type = ET_TUPLE;
	t.ntuple = 2;
	t.tuple = el;
	CU_ASSERT_FATAL(from_text(&f, "(1.5, {2, 3})", &t) == HLOI_OK);
	CU_ASSERT_EQUAL(*(float *)f.lit->elems[0]->data, 1.5f);
	CU_ASSERT_EQUAL(((int32_t *)f.lit->elems[1]->data)[1], 3);
	expect_print(f.lit, 1, 0, "(\nf32[] 1.5,\ns32[2] {2, 3}\n)");
	expect_print(f.lit, 0, 1, "( 1.5, {2, 3} )");
	CU_ASSERT_EQUAL(from_text(&f, "(1.5)", &t), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects 2 elements in the tuple literal, but sees 1");
	CU_ASSERT_EQUAL(from_text(&f, "{1, 2}", &t), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects '(' in front of tuple elements");
	CU_ASSERT_EQUAL(from_text(&f, "(1, {2, 3, 4})", &t), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects 2 elements on the minor-most dimension, but sees more");
	CU_ASSERT_EQUAL(last_col(&f), 11);
	CU_ASSERT_PTR_NULL(f.lit);

	/* elided: no error, flagged, no buffer (the values are unknown) */
	shape big = mk1(ET_F32, 1000);
	CU_ASSERT_FATAL(from_text(&f, "{...}", &big) == HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->elided, 1);
	CU_ASSERT_PTR_NULL(f.lit->data);
	CU_ASSERT_EQUAL(f.lit->nbytes, 0);
	CU_ASSERT_EQUAL(hloi_context_error_count(f.ctx), 0);
	expect_print(f.lit, 0, 1, "{...}");
	/* a tuple with an elided element is elided (its values are not all
	 * known); the element has no buffer, the written one its value */
	CU_ASSERT_FATAL(from_text(&f, "(2, {...})", &t) == HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->elided, 1);
	CU_ASSERT_EQUAL(f.lit->elems[0]->elided, 0);
	CU_ASSERT_EQUAL(f.lit->elems[1]->elided, 1);
	CU_ASSERT_PTR_NULL(f.lit->elems[1]->data);
	CU_ASSERT_EQUAL(f.lit->elems[1]->nbytes, 0);
	expect_print(f.lit, 0, 1, "( 2, {...} )");
	CU_ASSERT_FATAL(from_text(&f, "(2, {1, 3})", &t) == HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->elided, 0);
	shape sc = mk(ET_F32, 0, NULL);
	CU_ASSERT_EQUAL(from_text(&f, "{...}", &sc), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects nested array in rank 0, but sees larger");

	/* deeply nested tuple shapes are refused, not a stack overflow */
	enum { DEEP = 1200 };
	static shape chain[DEEP];
	for (int i = 0; i < DEEP; i++) {
		memset(&chain[i], 0, sizeof chain[i]);
		chain[i].type = ET_TUPLE;
		chain[i].ntuple = i + 1 < DEEP ? 1 : 0;
		chain[i].tuple = i + 1 < DEEP ? &chain[i + 1] : NULL;
	}
	hloi_literal *lit = NULL;
	CU_ASSERT_EQUAL(literal_create(&lit, &chain[0]), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(lit);
	fixture_done(&f);
}

/* --- printing --------------------------------------------------------------- */

static void test_print_arrays(void)
{
	shape s23 = mk2(ET_S32, 2, 3);
	expect_text_prints("{{8, 10, 12}, {11, 13, 15}}", &s23, "s32[2,3] {\n  { 8, 10, 12 },\n  { 11, 13, 15 }\n}",
			   "{ { 8, 10, 12 }, { 11, 13, 15 } }");
	shape f3 = mk1(ET_F32, 3);
	expect_text_prints("{1, 2, 3}", &f3, "f32[3] {1, 2, 3}", "{1, 2, 3}");
	shape sc = mk(ET_F32, 0, NULL);
	expect_text_prints("1", &sc, "f32[] 1", "1");
	shape s32sc = mk(ET_S32, 0, NULL);
	expect_text_prints("-42", &s32sc, "s32[] -42", "-42");
	shape e0 = mk1(ET_F32, 0);
	expect_text_prints("{}", &e0, "f32[0] {}", "{}");
	shape p3 = mk1(ET_PRED, 3);
	expect_text_prints("{true, false, true}", &p3, "pred[3] {1, 0, 1}", "{1, 0, 1}");
	shape psc = mk(ET_PRED, 0, NULL);
	expect_text_prints("true", &psc, "pred[] true", "true");
	expect_text_prints("false", &psc, "pred[] false", "false");
	shape s21 = mk2(ET_F32, 2, 1);
	expect_text_prints("{{1}, {2}}", &s21, "f32[2,1] {\n  {1},\n  {2}\n}", "{ {1}, {2} }");
	shape s20 = mk2(ET_F32, 2, 0);
	expect_text_prints("{{}, {}}", &s20, "f32[2,0] {\n  {},\n  {}\n}", "{ {}, {} }");
	shape s03 = mk2(ET_F32, 0, 3);
	expect_text_prints("{}", &s03, "f32[0,3] {\n\n}", "{  }");
	int64_t d3[3] = { 2, 2, 2 };
	shape s3 = mk(ET_S32, 3, d3);
	expect_text_prints("{{{1,2},{3,4}},{{5,6},{7,8}}}", &s3,
			   "s32[2,2,2] {\n{\n  { 1, 2 },\n  { 3, 4 }\n},\n{\n  { 5, 6 },\n  { 7, 8 }\n}\n}",
			   "{ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }");
	int64_t d4[4] = { 2, 1, 1, 2 };
	shape s4 = mk(ET_S32, 4, d4);
	expect_text_prints("{{{{1,2}}},{{{3,4}}}}", &s4,
			   "s32[2,1,1,2] {\n{ /*i0=0*/\n{ /*i1=0*/\n  { 1, 2 }\n}\n},\n"
			   "{ /*i0=1*/\n{ /*i1=0*/\n  { 3, 4 }\n}\n}\n}",
			   "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } } }, { /*i0=1*/ { /*i1=0*/ { 3, 4 } } } }");
	int64_t d4e[4] = { 2, 0, 4, 3 };
	shape s4e = mk(ET_F32, 4, d4e);
	expect_text_prints("{{},{}}", &s4e, "f32[2,0,4,3] {\n{ /*i0=0*/\n},\n{ /*i0=1*/\n}\n}",
			   "{ { /*i0=0*/ }, { /*i0=1*/ } }");
	int64_t d4m[4] = { 1, 1, 1, 1 };
	shape s4m = mk(ET_F32, 4, d4m);
	expect_text_prints("{{{{-1}}}}", &s4m, NULL, "{ { /*i0=0*/ { /*i1=0*/ {-1} } } }");
	/* padded, column-major storage prints in logical order */
	shape u8 = mk2(ET_U8, 2, 2);
	u8.layout.minor_to_major[0] = 0;
	u8.layout.minor_to_major[1] = 1;
	expect_text_prints("{{1,2},{3,255}}", &u8, "u8[2,2] {\n  { 1, 2 },\n  { 3, 255 }\n}", NULL);
	shape pred2 = mk2(ET_PRED, 1, 2);
	expect_text_prints("{{1, 0}}", &pred2, "pred[1,2] {\n  { 1, 0 }\n}", "{ { 1, 0 } }");
}

static void expect_f32(float v, const char *want)
{
	strbuf b = STRBUF_INIT;
	literal_print_element(&b, ET_F32, &v);
	CU_ASSERT_STRING_EQUAL(sb_str(&b), want);
	if (strcmp(sb_str(&b), want))
		fprintf(stderr, "\n  f32 got %s want %s\n", sb_str(&b), want);
	sb_free(&b);
}

static void expect_elem(etype t, const void *p, const char *want)
{
	strbuf b = STRBUF_INIT;
	literal_print_element(&b, t, p);
	CU_ASSERT_STRING_EQUAL(sb_str(&b), want);
	if (strcmp(sb_str(&b), want))
		fprintf(stderr, "\n  %s got %s want %s\n", etype_name(t), sb_str(&b), want);
	sb_free(&b);
}

static void test_print_floats(void)
{
	expect_f32(1.0f, "1");
	expect_f32(0.1f, "0.1");
	expect_f32(1.0f / 3.0f, "0.333333343");
	expect_f32(1e10f, "1e+10");
	expect_f32(1e6f, "1e+06");
	expect_f32(100000.0f, "100000");
	expect_f32(-0.0f, "-0");
	expect_f32(3.14f, "3.14");
	expect_f32(16777217.0f, "16777216");
	expect_f32(FLT_MAX, "3.40282347e+38");
	expect_f32(ldexpf(1, -149), "1.4013e-45");
	expect_f32(INFINITY, "inf");
	expect_f32(-INFINITY, "-inf");
	expect_f32(NAN, "nan");
	expect_f32(-NAN, "-nan");
	expect_f32(bitsf(0x7f800001u), "nan(0x1)");
	expect_f32(bitsf(0xffc00001u), "-nan(0x400001)");
	double d = 0.1;
	expect_elem(ET_F64, &d, "0.1");
	d = 1.0 / 3.0;
	expect_elem(ET_F64, &d, "0.33333333333333331");
	d = 1e100;
	expect_elem(ET_F64, &d, "1e+100");
	d = -0.0;
	expect_elem(ET_F64, &d, "-0");
	uint64_t nb = UINT64_C(0x7ff0000000000001);
	memcpy(&d, &nb, 8);
	expect_elem(ET_F64, &d, "nan(0x1)");
	CU_ASSERT_EQUAL(dbits(d), nb);
	uint16_t h = 0x4049; /* bf16 3.140625: XLA's literal_test expects 3.141 */
	expect_elem(ET_BF16, &h, "3.141");
	h = 0x3f00;
	expect_elem(ET_BF16, &h, "0.5");
	h = 0x4110; /* 9 */
	expect_elem(ET_BF16, &h, "9");
	h = 0x7f7f;
	expect_elem(ET_BF16, &h, "3.39e+38");
	h = 0x7fc0;
	expect_elem(ET_BF16, &h, "nan");
	h = 0x4248; /* f16 3.140625 */
	expect_elem(ET_F16, &h, "3.1406");
	h = 0x7bff;
	expect_elem(ET_F16, &h, "65504");
	h = 0x0001;
	expect_elem(ET_F16, &h, "5.9605e-08");
	h = 0x8000;
	expect_elem(ET_F16, &h, "-0");
	h = 0xfc00;
	expect_elem(ET_F16, &h, "-inf");
	h = 0x7c01;
	expect_elem(ET_F16, &h, "nan(0x1)");
	uint8_t p = 1;
	expect_elem(ET_PRED, &p, "true");
	p = 0;
	expect_elem(ET_PRED, &p, "false");
	int8_t s8 = -128;
	expect_elem(ET_S8, &s8, "-128");
	uint8_t u8 = 200;
	expect_elem(ET_U8, &u8, "200");
	int64_t s64 = INT64_MIN;
	expect_elem(ET_S64, &s64, "-9223372036854775808");
	uint64_t u64 = UINT64_MAX;
	expect_elem(ET_U64, &u64, "18446744073709551615");
	uint16_t u16 = 65535;
	expect_elem(ET_U16, &u16, "65535");

	/* every f16 value prints as a string that reads back to itself */
	int bad = 0;
	for (uint32_t i = 0; i < 65536; i++) {
		uint16_t v = (uint16_t)i;
		if ((v & 0x7c00) == 0x7c00)
			continue;
		strbuf b = STRBUF_INIT;
		literal_print_element(&b, ET_F16, &v);
		bad += f64_to_f16(strtod(sb_str(&b), NULL)) != v;
		sb_reset(&b);
		literal_print_element(&b, ET_BF16, &v);
		if ((v & 0x7f80) != 0x7f80)
			bad += f64_to_bf16(strtod(sb_str(&b), NULL)) != v;
		sb_free(&b);
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* Every allocation failing in turn: ENOMEM and no leaks (ASan checks). */
/* mk1 in one of a few static slots, for passing by pointer inline. */
static const shape *mk1p(etype t, int64_t d0)
{
	static shape slots[4];
	static int next;
	shape *s = &slots[next++ % 4];
	*s = mk1(t, d0);
	return s;
}

/* --- the new types' text ------------------------------------------------------- */

static void test_new_types_text(void)
{
	fixture f = { 0 };
	/* complex: (re, im) per element, scalars bare, payloads and signs per part */
	shape c64 = mk1(ET_C64, 3), c128s = mk(ET_C128, 0, NULL);
	expect_text_prints("{(1, 2), (nan(0x1), -nan), (-0.0, inf)}", &c64,
			   "c64[3] {(1, 2), (nan(0x1), -nan), (-0, inf)}", "{(1, 2), (nan(0x1), -nan), (-0, inf)}");
	expect_text_prints("(0.1, -1e-320)", &c128s, "c128[] (0.1, -9.99988867182683e-321)",
			   "(0.1, -9.99988867182683e-321)");
	CU_ASSERT_EQUAL(from_text(&f, "{(1, 2), (3, 4e38)}", mk1p(ET_C64, 2)), HLOI_EPARSE);
	EXPECT_MSG(&f, "imaginary part 4e+38 is out of range for literal's primitive type c64, namely "
		       "[-3.40282e+38, 3.40282e+38].");
	CU_ASSERT_EQUAL(from_text(&f, "{(1, 2), (3, nan(0x800000))}", mk1p(ET_C64, 2)), HLOI_EPARSE);
	EXPECT_MSG(&f, "NaN payload 0x800000 does not fit in the 23 fraction bits of f32");
	CU_ASSERT_EQUAL(from_text(&f, "(1)", &c128s), HLOI_EPARSE);
	EXPECT_MSG(&f, "expects a complex number (real, imag) with 2 parts, but sees 1");
	CU_ASSERT_EQUAL(from_text(&f, "{1, (2, 3)}", mk1p(ET_S32, 2)), HLOI_EPARSE);
	EXPECT_MSG(&f, "unexpected '(' in literal.  Parens are only valid for complex literals");
	/* sub-byte integers: the bit width's range */
	expect_text_prints("{-8, 7, -1}", mk1p(ET_S4, 3), "s4[3] {-8, 7, -1}", "{-8, 7, -1}");
	expect_text_prints("{0, 3}", mk1p(ET_U2, 2), "u2[2] {0, 3}", "{0, 3}");
	CU_ASSERT_EQUAL(from_text(&f, "{0, -3}", mk1p(ET_S2, 2)), HLOI_EPARSE);
	EXPECT_MSG(&f, "value -3 is out of range for literal's primitive type s2 namely [-2, 1].");
	CU_ASSERT_EQUAL(from_text(&f, "{2}", mk1p(ET_U1, 1)), HLOI_EPARSE);
	EXPECT_MSG(&f, "value 2 is out of range for literal's primitive type u1 namely [0, 1].");
	int8_t s4v[3];
	CU_ASSERT_EQUAL(from_text(&f, "{-8, 7, -1}", mk1p(ET_S4, 3)), HLOI_OK);
	memcpy(s4v, f.lit->data, 3);
	CU_ASSERT(s4v[0] == -8 && s4v[1] == 7 && s4v[2] == -1); /* stored sign-extended */
	/* the small floats: max_digits10, NaN and inf words per format */
	expect_text_prints("{0.1, 3.14159, 1e-9, nan, -inf}", mk1p(ET_F8E4M3FN, 5),
			   "f8e4m3fn[5] {0.102, 3.25, 0, nan, -nan}", NULL);
	expect_text_prints("{nan(0x1), -nan(0x3), inf}", mk1p(ET_F8E5M2, 3), "f8e5m2[3] {nan(0x1), -nan(0x3), inf}",
			   NULL);
	expect_text_prints("{nan, -nan, inf, -0.0}", mk1p(ET_F8E5M2FNUZ, 4), "f8e5m2fnuz[4] {-nan, -nan, -nan, 0}",
			   NULL);
	expect_text_prints("{1e-50, 3, 1.5e38}", mk1p(ET_F8E8M0FNU, 3), "f8e8m0fnu[3] {5.9e-39, 4, 1.7e+38}", NULL);
	expect_text_prints("{100, nan, -nan, 0.75}", mk1p(ET_F4E2M1FN, 4), "f4e2m1fn[4] {6, -0, 0, 1}", NULL);
	CU_ASSERT_EQUAL(from_text(&f, "{241}", mk1p(ET_F8E4M3FNUZ, 1)), HLOI_OK); /* rounds to 240 */
	CU_ASSERT_EQUAL(from_text(&f, "{248}", mk1p(ET_F8E4M3FNUZ, 1)), HLOI_EPARSE);
	EXPECT_MSG(&f, "value 248 is out of range for literal's primitive type f8e4m3fnuz namely [-240, 240].");
	CU_ASSERT_EQUAL(from_text(&f, "{-1}", mk1p(ET_F8E8M0FNU, 1)), HLOI_EPARSE);
	EXPECT_MSG(&f, "value -1 is out of range for literal's primitive type f8e8m0fnu namely "
		       "[5.87747e-39, 1.70141e+38].");
	CU_ASSERT_EQUAL(from_text(&f, "{nan(0x1)}", mk1p(ET_F8E4M3FNUZ, 1)), HLOI_EPARSE);
	EXPECT_MSG(&f, "f8e4m3fnuz does not support NaN payloads");
	CU_ASSERT_EQUAL(from_text(&f, "{nan(0x4)}", mk1p(ET_F8E4M3, 1)), HLOI_OK);
	CU_ASSERT_EQUAL(from_text(&f, "{nan(0x8)}", mk1p(ET_F8E4M3, 1)), HLOI_EPARSE);
	EXPECT_MSG(&f, "NaN payload 0x8 does not fit in the 3 fraction bits of f8e4m3");
	fixture_done(&f);

	/* padding values of the new types */
	unsigned char buf[16];
	shape s = mk1(ET_F8E4M3FN, 1);
	s.layout.padding_value = PAD_LOWEST;
	literal_padding_bits(&s, buf);
	CU_ASSERT_EQUAL(buf[0], 0xfe); /* no infinity: -448 */
	s.layout.padding_value = PAD_HIGHEST;
	s.type = ET_F8E5M2;
	literal_padding_bits(&s, buf);
	CU_ASSERT_EQUAL(buf[0], 0x7c); /* inf */
	s.type = ET_F8E8M0FNU;
	s.layout.padding_value = PAD_LOWEST;
	literal_padding_bits(&s, buf);
	CU_ASSERT_EQUAL(buf[0], 0x00); /* 2^-127 */
	s.type = ET_S4;
	literal_padding_bits(&s, buf);
	CU_ASSERT_EQUAL((int8_t)buf[0], -8);
	s.type = ET_U2;
	s.layout.padding_value = PAD_HIGHEST;
	literal_padding_bits(&s, buf);
	CU_ASSERT_EQUAL(buf[0], 3);
	s.type = ET_F4E2M1FN;
	s.layout.padding_value = PAD_ONE;
	literal_padding_bits(&s, buf);
	CU_ASSERT_EQUAL(buf[0], 0x02);
	s.type = ET_C64;
	s.layout.padding_value = PAD_LOWEST;
	float c[2];
	literal_padding_bits(&s, buf);
	memcpy(c, buf, 8);
	CU_ASSERT(isinf(c[0]) && c[0] < 0 && c[1] == 0);
}

static void test_out_of_memory(void)
{
	shape el[2];
	el[0] = mk(ET_F32, 0, NULL);
	el[1] = mk2(ET_S32, 2, 2);
	el[1].layout.n_padded = 2;
	el[1].layout.padded_dimensions[0] = 3;
	el[1].layout.padded_dimensions[1] = 3;
	shape t;
	memset(&t, 0, sizeof t);
	t.type = ET_TUPLE;
	t.ntuple = 2;
	t.tuple = el;
	int done = 0;
	for (long n = 0; n < 200 && !done; n++) {
		fixture f = { 0 };
		CU_ASSERT_FATAL(hloi_context_new(&f.ctx) == HLOI_OK);
		tree_reader r;
		arena_init(&r.a);
		r.text = "(1, {{1, 2}, {3, 4}})";
		r.pos = 0;
		lit_node *tree = tr_node(&r);
		alloc_fail_after(n);
		hloi_status st = literal_from_tree(&f.lit, f.ctx, -1, tree, &t);
		hloi_literal *c = NULL, *rl = NULL;
		if (st == HLOI_OK) {
			st = literal_clone(&c, f.lit);
			if (st == HLOI_OK)
				st = literal_relayout(&rl, c->elems[1], &el[1]);
		}
		alloc_fail_after(-1);
		CU_ASSERT(st == HLOI_OK || st == HLOI_ENOMEM);
		if (st == HLOI_OK) {
			done = 1;
			expect_print(rl, 1, 0, "s32[2,2] {\n  { 1, 2 },\n  { 3, 4 }\n}");
		}
		literal_destroy(rl);
		literal_destroy(c);
		arena_release(&r.a);
		fixture_done(&f);
	}
	CU_ASSERT(done);
}

static const unit_test half_tests[] = {
	{ "f16_exhaustive_roundtrip", test_f16_exhaustive_roundtrip },
	{ "bf16_exhaustive_roundtrip", test_bf16_exhaustive_roundtrip },
	{ "f16_ties_to_even", test_f16_ties_to_even },
	{ "bf16_ties_to_even", test_bf16_ties_to_even },
	{ NULL, NULL },
};

static const unit_test literal_tests[] = {
	{ "new_types_text", test_new_types_text },
	{ "create_padding", test_create_padding },
	{ "padding_bits", test_padding_bits },
	{ "tuple_create_clone", test_tuple_create_clone },
	{ "relayout", test_relayout },
	{ "from_tree_values", test_from_tree_values },
	{ "from_tree_nan_inf", test_from_tree_nan_inf },
	{ "from_tree_errors", test_from_tree_errors },
	{ "from_tree_layout_padding", test_from_tree_layout_padding },
	{ "from_tree_tuples_elided", test_from_tree_tuples_elided },
	{ "print_arrays", test_print_arrays },
	{ "print_floats", test_print_floats },
	{ "out_of_memory", test_out_of_memory },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "half", half_tests },
	{ "literal", literal_tests },
	{ NULL, NULL },
};
