/* Unit tests for tiled layouts: index conversion against hand-worked
 * positions (XLA's docs/tiled_layout.md examples, nested tiles, padding
 * inside tiles, `*` combine dimensions), buffer sizes, validation, and
 * round trips over every position of several shapes. */
#include <stdlib.h>
#include <string.h>

#include "core/index.h"
#include "core/literal.h"
#include "core/shape.h"
#include "hloi.h"
#include "io/npy.h"
#include "util/alloc.h"
#include "unit.h"

/* Parses shape text (the default layout where none is written). */
static shape parse(const char *text)
{
	hloi_context *ctx = NULL;
	hloi_shape *p = NULL;
	shape s;
	memset(&s, 0, sizeof s);
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	hloi_status st = hloi_shape_parse(&p, ctx, "<test>", text);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	s = *p;
	hloi_shape_free(p);
	hloi_context_free(ctx);
	return s;
}

static int64_t lin2(const shape *s, int64_t i, int64_t j)
{
	int64_t idx[2] = { i, j };
	return index_to_linear(s, idx);
}

static int64_t buffer(const shape *s)
{
	int64_t n = -1;
	CU_ASSERT_EQUAL(shape_buffer_elements(s, &n), 0);
	return n;
}

/* The memory order of a rank-2 array of up to 26 elements as letters in
 * row-major order, '0' for padding. */
static void memory_order(const shape *s, char *out)
{
	int64_t n = buffer(s);
	for (int64_t lin = 0; lin < n; lin++) {
		int64_t idx[HLOI_MAX_RANK];
		if (index_from_linear(s, lin, idx))
			out[lin] = '0';
		else
			out[lin] = (char)('a' + idx[0] * s->dims[1] + idx[1]);
	}
	out[n] = '\0';
}

/* docs/tiled_layout.md, Figure 1: F32[3,5]{1,0:T(2,2)}; element (2,3) is
 * at 17. */
static void test_figure1(void)
{
	shape s = parse("f32[3,5]{1,0:T(2,2)}");
	char buf[64];
	CU_ASSERT_EQUAL(buffer(&s), 24);
	memory_order(&s, buf);
	CU_ASSERT_STRING_EQUAL(buf, "abfgcdhie0j0kl00mn00o000");
	CU_ASSERT_EQUAL(lin2(&s, 2, 3), 17);
	int64_t bytes;
	CU_ASSERT_EQUAL(shape_byte_size(&s, &bytes), 0);
	CU_ASSERT_EQUAL(bytes, 96);
	/* column-major: physical [5,3], tiles of 2x2 over it */
	shape c = parse("f32[3,5]{0,1:T(2,2)}");
	CU_ASSERT_EQUAL(buffer(&c), 24);
	memory_order(&c, buf);
	CU_ASSERT_STRING_EQUAL(buf, "afbgk0l0chdim0n0ej00o000");
	CU_ASSERT_EQUAL(lin2(&c, 2, 3), 14);
}

/* Figure 2: 4x8 by (2,4)(2,1): pairs of rows inside each 2x4 tile. */
static void test_figure2_nested(void)
{
	shape s = parse("f32[4,8]{1,0:T(2,4)(2,1)}");
	CU_ASSERT_EQUAL(buffer(&s), 32);
	static const struct {
		int64_t i, j, lin;
	} table[] = {
		{ 0, 0, 0 }, { 1, 0, 1 }, { 0, 1, 2 }, { 1, 1, 3 }, { 0, 3, 6 }, { 1, 3, 7 },
		{ 0, 4, 8 }, { 1, 5, 11 }, { 2, 0, 16 }, { 3, 0, 17 }, { 2, 7, 30 }, { 3, 7, 31 },
	};
	for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
		CU_ASSERT_EQUAL(lin2(&s, table[k].i, table[k].j), table[k].lin);
}

/* The TPU's bf16 format: bf16[5,300]{1,0:T(8,128)(2,1)} pads 5 rows to 8
 * and 300 columns to 384; three 8x128 tiles of 1024 elements each. */
static void test_bf16_8_128_2_1(void)
{
	shape s = parse("bf16[5,300]{1,0:T(8,128)(2,1)}");
	CU_ASSERT_EQUAL(buffer(&s), 3072);
	int64_t bytes;
	CU_ASSERT_EQUAL(shape_byte_size(&s, &bytes), 0);
	CU_ASSERT_EQUAL(bytes, 6144);
	CU_ASSERT_EQUAL(lin2(&s, 0, 0), 0);
	CU_ASSERT_EQUAL(lin2(&s, 1, 0), 1);
	CU_ASSERT_EQUAL(lin2(&s, 0, 1), 2);
	CU_ASSERT_EQUAL(lin2(&s, 4, 0), 512);
	CU_ASSERT_EQUAL(lin2(&s, 0, 128), 1024);
	/* (4,299): tile (0,2), within (4,43); then (2,43) of 2x1 tiles, (0,0) */
	CU_ASSERT_EQUAL(lin2(&s, 4, 299), 2 * 1024 + 2 * 256 + 43 * 2);
	int64_t idx[2];
	CU_ASSERT_EQUAL(index_from_linear(&s, 2646, idx), 0);
	CU_ASSERT_EQUAL(idx[0], 4);
	CU_ASSERT_EQUAL(idx[1], 299);
	/* 513 is row 5 of the first tile: padding inside the tile */
	CU_ASSERT_EQUAL(index_from_linear(&s, 513, idx), 1);
	CU_ASSERT_EQUAL(idx[0], 5);
	CU_ASSERT_EQUAL(idx[1], 0);
	/* column 300 of the third tile */
	CU_ASSERT_EQUAL(index_from_linear(&s, 2048 + 44 * 2, idx), 1);
	CU_ASSERT_EQUAL(idx[0], 0);
	CU_ASSERT_EQUAL(idx[1], 300);

	/* the levels: [5,300] -> [1,3,8,128] -> [1,3,4,128,2,1] */
	index_tiling t;
	CU_ASSERT_EQUAL_FATAL(index_tiling_init(&t, &s), 0);
	const int64_t *d;
	CU_ASSERT_EQUAL(t.nlevels, 2);
	CU_ASSERT_EQUAL(index_tiling_dims(&t, 1, &d), 4);
	CU_ASSERT_EQUAL(d[0], 1);
	CU_ASSERT_EQUAL(d[1], 3);
	CU_ASSERT_EQUAL(d[2], 8);
	CU_ASSERT_EQUAL(d[3], 128);
	CU_ASSERT_EQUAL(index_tiling_dims(&t, 2, &d), 6);
	CU_ASSERT_EQUAL(d[2], 4);
	CU_ASSERT_EQUAL(d[4], 2);
	CU_ASSERT_EQUAL(d[5], 1);
	int64_t e[INDEX_MAX_TILED];
	CU_ASSERT_EQUAL(index_tiling_coords(&t, 2646, 1, e), 4);
	CU_ASSERT_EQUAL(e[0], 0);
	CU_ASSERT_EQUAL(e[1], 2);
	CU_ASSERT_EQUAL(e[2], 4);
	CU_ASSERT_EQUAL(e[3], 43);
	CU_ASSERT_EQUAL(index_tiling_coords(&t, 2646, 2, e), 6);
	CU_ASSERT_EQUAL(e[2], 2);
	CU_ASSERT_EQUAL(e[3], 43);
	CU_ASSERT_EQUAL(e[4], 0);
	CU_ASSERT_EQUAL(index_tiling_coords(&t, 2646, 0, e), 2);
	CU_ASSERT_EQUAL(e[0], 4);
	CU_ASSERT_EQUAL(e[1], 299);
}

/* Figure 4: 8x8 by (2,4)(2,1,1,1), the second tile reaching into the
 * tile-index dimensions: (6,5) is at 51. */
static void test_figure4_cross_tile(void)
{
	shape s = parse("f32[8,8]{1,0:T(2,4)(2,1,1,1)}");
	CU_ASSERT_EQUAL(buffer(&s), 64);
	CU_ASSERT_EQUAL(lin2(&s, 6, 5), 51);
	CU_ASSERT_EQUAL(lin2(&s, 0, 0), 0);
	/* (2,0): tile (1,0) pairs with tile (0,0) as its second half */
	CU_ASSERT_EQUAL(lin2(&s, 2, 0), 1);
}

/* `*` combines dimensions: F32[2,7,8,11,10] by (*,*,2,*,3) is F32[112,110]
 * by (2,3). */
static void test_combine(void)
{
	shape s = parse("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}");
	CU_ASSERT_EQUAL(buffer(&s), 56 * 37 * 6);
	int64_t a[5] = { 1, 6, 7, 10, 9 }; /* row 111, column 109 */
	CU_ASSERT_EQUAL(index_to_linear(&s, a), (55 * 37 + 36) * 6 + 1 * 3 + 1);
	int64_t b[5] = { 0, 0, 0, 1, 0 }; /* row 0, column 10 */
	CU_ASSERT_EQUAL(index_to_linear(&s, b), 3 * 6 + 1);
	int64_t c[5] = { 0, 1, 0, 0, 0 }; /* row 8 */
	CU_ASSERT_EQUAL(index_to_linear(&s, c), 4 * 37 * 6);
	int64_t idx[5];
	CU_ASSERT_EQUAL(index_from_linear(&s, (55 * 37 + 36) * 6 + 4, idx), 0);
	CU_ASSERT_EQUAL(memcmp(idx, a, sizeof a), 0);
	/* column 110 does not exist: padding */
	CU_ASSERT_EQUAL(index_from_linear(&s, (55 * 37 + 36) * 6 + 5, idx), 1);
	/* a combined tile of one entry is a plain flattening */
	shape f = parse("f32[3,4]{1,0:T(*,5)}");
	CU_ASSERT_EQUAL(buffer(&f), 15);
	CU_ASSERT_EQUAL(lin2(&f, 2, 3), 11);
	CU_ASSERT_EQUAL(index_from_linear(&f, 12, idx), 1);
}

/* doc/sources.md B's padding, then tiles over the padded bounds. */
static void test_padding_then_tiles(void)
{
	shape s = parse("f32[2,3]{1,0:pad(3,5)T(2,2)}");
	char buf[64];
	CU_ASSERT_EQUAL(buffer(&s), 24);
	memory_order(&s, buf);
	CU_ASSERT_STRING_EQUAL(buf, "abdec0f00000000000000000");
	/* padding value `one` goes everywhere that is not an element */
	shape p = parse("s32[2,2]{1,0:pad(2,3)padval(one)T(2,2)}");
	CU_ASSERT_EQUAL(buffer(&p), 8);
}

/* Tiles longer than the shape see leading size-1 dimensions: a scalar by
 * T(128) has 128 positions, a vector by T(8,128) whole 8x128 tiles. */
static void test_tile_longer_than_shape(void)
{
	shape s = parse("s32[]{:T(128)}");
	CU_ASSERT_EQUAL(buffer(&s), 128);
	int64_t idx[HLOI_MAX_RANK];
	CU_ASSERT_EQUAL(index_to_linear(&s, idx), 0);
	CU_ASSERT_EQUAL(index_from_linear(&s, 0, idx), 0);
	CU_ASSERT_EQUAL(index_from_linear(&s, 5, idx), 3);
	shape v = parse("f32[300]{0:T(8,128)}");
	CU_ASSERT_EQUAL(buffer(&v), 3072);
	int64_t i[1] = { 299 };
	CU_ASSERT_EQUAL(index_to_linear(&v, i), 2 * 1024 + 43);
	CU_ASSERT_EQUAL(index_from_linear(&v, 128, i), 3); /* row 1 of tile 0: no index of f32[300] */
	shape w = parse("f32[300]{0:T(128)}");
	CU_ASSERT_EQUAL(buffer(&w), 384);
	i[0] = 299;
	CU_ASSERT_EQUAL(index_to_linear(&w, i), 299);
}

/* L(n) rounds the buffer up; E(n) sizes the elements. */
static void test_tail_padding_and_element_size(void)
{
	shape s = parse("f32[3]{0:L(4)}");
	CU_ASSERT_EQUAL(buffer(&s), 4);
	int64_t idx[1];
	CU_ASSERT_EQUAL(index_from_linear(&s, 2, idx), 0);
	CU_ASSERT_EQUAL(index_from_linear(&s, 3, idx), 2);
	shape t = parse("f32[3,5]{1,0:T(2,2)L(7)}");
	CU_ASSERT_EQUAL(buffer(&t), 28);
	int64_t i2[2];
	CU_ASSERT_EQUAL(index_from_linear(&t, 23, i2), 1);
	CU_ASSERT_EQUAL(index_from_linear(&t, 24, i2), 2);
	/* sizes in bits, rounded up to whole bytes (a packed E(4) of an 8-bit type) */
	shape e = parse("u8[5]{0:E(4)}");
	int64_t bytes;
	CU_ASSERT_EQUAL(shape_element_bits(&e), 4);
	CU_ASSERT_EQUAL(shape_byte_size(&e, &bytes), 0);
	CU_ASSERT_EQUAL(bytes, 3);
	/* E(4) on s4, XLA's mark of a packed device buffer: values are held
	 * one per byte, as XLA's literals hold them */
	shape e4 = parse("s4[5]{0:E(4)}");
	CU_ASSERT_EQUAL(shape_element_bits(&e4), 8);
	CU_ASSERT_EQUAL(shape_byte_size(&e4, &bytes), 0);
	CU_ASSERT_EQUAL(bytes, 5);
	shape u = parse("s4[5]");
	CU_ASSERT_EQUAL(shape_element_bits(&u), 8);
	CU_ASSERT_EQUAL(shape_byte_size(&u, &bytes), 0);
	CU_ASSERT_EQUAL(bytes, 5);
	shape f = parse("f32[5]{0:E(32)}");
	CU_ASSERT_EQUAL(shape_byte_size(&f, &bytes), 0);
	CU_ASSERT_EQUAL(bytes, 20);
}

/* Bad tiles get XLA's message (or a clear one for `*` last). */
static void test_validation(void)
{
	char msg[512];
	shape s = parse("f32[4,4]{1,0:T(1,2)}");
	s.layout.tiles[0].dims[0] = 0;
	CU_ASSERT_NOT_EQUAL(shape_validate(&s, msg, sizeof msg), 0);
	CU_ASSERT_STRING_EQUAL(msg, "layout has invalid tiles: f32[4,4]");
	s.layout.tiles[0].dims[0] = -3;
	CU_ASSERT_NOT_EQUAL(shape_validate(&s, msg, sizeof msg), 0);
	CU_ASSERT_STRING_EQUAL(msg, "layout has invalid tiles: f32[4,4]");
	s.layout.tiles[0].n = 0;
	CU_ASSERT_NOT_EQUAL(shape_validate(&s, msg, sizeof msg), 0);
	CU_ASSERT_STRING_EQUAL(msg, "layout has invalid tiles: f32[4,4]");
	int64_t n;
	CU_ASSERT_NOT_EQUAL(shape_buffer_elements(&s, &n), 0);
	shape t = parse("f32[4,4]{1,0:T(2,2)}");
	t.layout.tiles[0].dims[1] = -1; /* T(2,*) */
	CU_ASSERT_NOT_EQUAL(shape_validate(&t, msg, sizeof msg), 0);
	CU_ASSERT_STRING_EQUAL(msg, "layout has invalid tiles: the most minor entry of tile 1 is the combine dimension '*', which combines a dimension with the next more minor one: f32[4,4]{1,0:T(2,*)}");
	CU_ASSERT_NOT_EQUAL(shape_buffer_elements(&t, &n), 0);
	shape l = parse("f32[4]{0:L(2)}");
	l.layout.tail_padding_alignment = -2;
	CU_ASSERT_NOT_EQUAL(shape_validate(&l, msg, sizeof msg), 0);
	CU_ASSERT_STRING_EQUAL(msg, "layout tail_padding_alignment_in_elements field is <= 0: {-2}");
	l.layout.tail_padding_alignment = 0;
	l.layout.element_size_in_bits = -4;
	CU_ASSERT_NOT_EQUAL(shape_validate(&l, msg, sizeof msg), 0);
	CU_ASSERT_STRING_EQUAL(msg, "layout element_size_in_bits field is negative: -4");
	shape ok = parse("f32[4,4]{1,0:T(2,2)(2,1)S(1)}");
	CU_ASSERT_EQUAL(shape_validate(&ok, msg, sizeof msg), 0);
	/* sizes that overflow are refused, not wrapped */
	shape big = parse("f32[5]");
	big.layout.ntiles = 1;
	big.layout.tiles[0].n = 1;
	big.layout.tiles[0].dims[0] = INT64_C(4611686018427387904);
	CU_ASSERT_NOT_EQUAL(shape_validate(&big, msg, sizeof msg), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "size may overflow"));
	shape huge = parse("pred[2000000000,2000000000]");
	huge.layout.ntiles = 1;
	huge.layout.tiles[0].n = 3;
	huge.layout.tiles[0].dims[0] = 3000000000;
	huge.layout.tiles[0].dims[1] = 1;
	huge.layout.tiles[0].dims[2] = 1;
	CU_ASSERT_NOT_EQUAL(shape_buffer_elements(&huge, &n), 0);
}

/* Scalars print a layout with tiles or a memory space, never `{}`. */
static void test_scalar_layout_print(void)
{
	const char *texts[] = { "s32[]{:T(128)}", "s32[]{:T(128)S(2)}", "f32[]{:S(1)}" };
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		shape s = parse(texts[i]);
		strbuf b = STRBUF_INIT;
		shape_print(&b, &s, 1);
		CU_ASSERT_STRING_EQUAL(sb_str(&b), texts[i]);
		sb_free(&b);
	}
	shape p = parse("f32[]");
	strbuf b = STRBUF_INIT;
	shape_print(&b, &p, 1);
	CU_ASSERT_STRING_EQUAL(sb_str(&b), "f32[]");
	sb_free(&b);
}

/* Every position maps back: elements to their index and back to the same
 * position, each element exactly once. */
static void roundtrip(const char *text)
{
	shape s = parse(text);
	int64_t n = buffer(&s), count, elements = 0;
	CU_ASSERT_EQUAL_FATAL(shape_element_count(&s, &count), 0);
	index_tiling t;
	CU_ASSERT_EQUAL_FATAL(index_tiling_init(&t, &s), 0);
	unsigned char *seen = calloc((size_t)n + 1, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(seen);
	for (int64_t lin = 0; lin < n; lin++) {
		int64_t idx[HLOI_MAX_RANK], idx2[HLOI_MAX_RANK];
		int pad = index_from_linear(&s, lin, idx);
		CU_ASSERT_EQUAL(index_tiling_from_linear(&t, &s, lin, idx2), pad);
		if (pad)
			continue;
		CU_ASSERT_EQUAL(memcmp(idx, idx2, sizeof idx[0] * (size_t)s.rank), 0);
		CU_ASSERT_EQUAL(index_to_linear(&s, idx), lin);
		elements++;
	}
	CU_ASSERT_EQUAL(elements, count);
	/* and from the logical side: distinct positions inside the buffer */
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	if (count > 0) {
		do {
			int64_t lin = index_to_linear(&s, idx);
			CU_ASSERT_FATAL(lin >= 0 && lin < n);
			CU_ASSERT_EQUAL(seen[lin], 0);
			seen[lin] = 1;
		} while (index_next(s.rank, s.dims, idx));
	}
	free(seen);
}

static void test_roundtrips(void)
{
	static const char *shapes[] = {
		"f32[3,5]{1,0:T(2,2)}",
		"f32[3,5]{0,1:T(2,2)}",
		"bf16[5,300]{1,0:T(8,128)(2,1)}",
		"f32[8,8]{1,0:T(2,4)(2,1,1,1)}",
		"f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
		"f32[2,7,8,11,10]{0,2,4,1,3:T(*,*,2,*,3)}",
		"f32[3,4,5]{1,2,0:T(2,3)}",
		"f32[3,4,5]{2,0,1:T(2,2,2)(2,1)}",
		"f32[3,4,5]{2,1,0:T(4)(2)}",
		"f32[4,4]{1,0:T(2,2)(3,1)}",
		"f32[2,3]{1,0:pad(3,5)T(2,2)}",
		"f32[2,3]{0,1:pad(4,7)T(3)(2)L(11)}",
		"f32[300]{0:T(8,128)}",
		"s32[]{:T(128)}",
		"f32[0,5]{1,0:T(2,2)}",
		"f32[1,1,1]{2,1,0:T(4,4,4,4)}",
		"s8[9,10]{1,0:T(8,128)(4,1)}",
		"f32[6,10]{1,0:T(4,*,4)(2,2)}",
		"f32[5,6]{0,1:T(3,4)(*,2)}",
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		roundtrip(shapes[i]);
}

/* One literal from text (shape prefix with its layout). */
static hloi_literal *literal(const char *text)
{
	hloi_context *ctx = NULL;
	hloi_literal **lits = NULL;
	size_t n = 0;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_literal_parse_list(&lits, &n, ctx, "<test>", text, strlen(text)), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	hloi_literal *lit = lits[0];
	lits[0] = NULL;
	hloi_literal_array_free(lits, n);
	hloi_context_free(ctx);
	return lit;
}

/* Literal text (always logical) lands in tiled memory order, padding
 * holding the padding value; relayout and .npy give the logical order back. */
static void test_literal_buffers(void)
{
	hloi_literal *lit = literal("s32[3,5]{1,0:pad(3,5)padval(one)T(2,2)} "
				    "{ { 0, 1, 2, 3, 4 }, { 5, 6, 7, 8, 9 }, { 10, 11, 12, 13, 14 } }");
	static const int32_t want[24] = { 0, 1, 5, 6, 2, 3, 7, 8, 4, 1, 9, 1,
					  10, 11, 1, 1, 12, 13, 1, 1, 14, 1, 1, 1 };
	CU_ASSERT_EQUAL_FATAL(lit->nbytes, sizeof want);
	CU_ASSERT_EQUAL(memcmp(lit->data, want, sizeof want), 0);
	/* the same values in a row-major copy */
	shape rm = parse("s32[3,5]");
	hloi_literal *r = NULL;
	CU_ASSERT_EQUAL_FATAL(literal_relayout(&r, lit, &rm), HLOI_OK);
	for (int32_t i = 0; i < 15; i++)
		CU_ASSERT_EQUAL(((int32_t *)r->data)[i], i);
	/* and back into another tiling */
	shape other = parse("s32[3,5]{0,1:T(2,2)(2,1)L(40)}");
	hloi_literal *o = NULL;
	CU_ASSERT_EQUAL_FATAL(literal_relayout(&o, r, &other), HLOI_OK);
	CU_ASSERT_EQUAL(o->nbytes, 40 * 4);
	int64_t idx[2];
	for (idx[0] = 0; idx[0] < 3; idx[0]++)
		for (idx[1] = 0; idx[1] < 5; idx[1]++)
			CU_ASSERT_EQUAL(*(int32_t *)literal_element(o, idx), idx[0] * 5 + idx[1]);
	strbuf b = STRBUF_INIT;
	literal_print(&b, o, 1, 1);
	CU_ASSERT_STRING_EQUAL(sb_str(&b), "s32[3,5] { { 0, 1, 2, 3, 4 }, { 5, 6, 7, 8, 9 }, { 10, 11, 12, 13, 14 } }");
	sb_free(&b);

	/* .npy is the logical array, in C order */
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	unsigned char *bytes = NULL;
	size_t len = 0;
	CU_ASSERT_EQUAL_FATAL(npy_serialize(&bytes, &len, ctx, o), HLOI_OK);
	CU_ASSERT_FATAL(len == 128 + 15 * 4);
	for (int32_t i = 0; i < 15; i++) {
		int32_t v;
		memcpy(&v, bytes + 128 + 4 * i, 4);
		CU_ASSERT_EQUAL(v, i);
	}
	hloi_literal *back = NULL;
	CU_ASSERT_EQUAL_FATAL(npy_parse(&back, ctx, "x.npy", bytes, len, NULL), HLOI_OK);
	CU_ASSERT_EQUAL(memcmp(back->data, r->data, 60), 0);
	hloi_free(bytes);
	/* a tiled vector is not its buffer either: T(8,128) spreads 300 values
	 * over three tiles of 8 rows */
	hloi_literal *v = NULL;
	shape vs = parse("f32[300]{0:T(8,128)}");
	CU_ASSERT_EQUAL_FATAL(literal_create(&v, &vs), HLOI_OK);
	CU_ASSERT_EQUAL(v->nbytes, 3072 * 4);
	for (int64_t i = 0; i < 300; i++)
		*(float *)literal_element(v, &i) = (float)i;
	CU_ASSERT_EQUAL(((float *)v->data)[1024], 128.0f);
	CU_ASSERT_EQUAL_FATAL(npy_serialize(&bytes, &len, ctx, v), HLOI_OK);
	CU_ASSERT_FATAL(len == 128 + 300 * 4);
	for (int i = 0; i < 300; i++) {
		float f;
		memcpy(&f, bytes + 128 + 4 * i, 4);
		CU_ASSERT_EQUAL(f, (float)i);
	}
	hloi_free(bytes);
	/* a new literal is zero, its padding (the tiles' too) the padding value */
	shape ones = parse("s32[3,5]{1,0:pad(3,5)padval(one)T(2,2)L(30)}");
	hloi_literal *z = NULL;
	CU_ASSERT_EQUAL_FATAL(literal_create(&z, &ones), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(z->nbytes, 30 * 4);
	for (int64_t lin = 0; lin < 30; lin++) {
		int64_t ix[2];
		int padding = index_from_linear(&ones, lin, ix) != 0;
		CU_ASSERT_EQUAL(((int32_t *)z->data)[lin], padding ? 1 : 0);
	}
	literal_destroy(z);
	/* E(n) other than the storage width cannot be addressed per byte */
	shape packed = parse("s8[4]{0:E(4)}");
	hloi_literal *p = NULL;
	CU_ASSERT_EQUAL(literal_create(&p, &packed), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(p);
	literal_destroy(v);
	literal_destroy(back);
	literal_destroy(o);
	literal_destroy(r);
	hloi_literal_free(lit);
	hloi_context_free(ctx);
}

/* The public API's view of a tiled shape. */
static void test_api(void)
{
	hloi_context *ctx = NULL;
	hloi_shape *s = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_shape_parse(&s, ctx, "<t>", "bf16[5,300]{1,0:T(8,128)(2,1)S(1)}"), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_shape_tile_count(s), 2);
	int64_t d[HLOI_MAX_TILED_RANK];
	CU_ASSERT_EQUAL(hloi_shape_tile(s, 1, d), 2);
	CU_ASSERT_EQUAL(d[0], 2);
	CU_ASSERT_EQUAL(d[1], 1);
	CU_ASSERT_EQUAL(hloi_shape_tile(s, 2, d), -1);
	CU_ASSERT_EQUAL(hloi_shape_stride(s, 0), -1);
	CU_ASSERT_EQUAL(hloi_shape_byte_size(s), 6144);
	CU_ASSERT_EQUAL(hloi_shape_element_bits(s), 16);
	CU_ASSERT_EQUAL(hloi_shape_memory_space(s), 1);
	CU_ASSERT_EQUAL(hloi_shape_tail_padding_alignment(s), 1);
	CU_ASSERT_EQUAL(hloi_shape_tiled_dims(s, 2, d), 6);
	CU_ASSERT_EQUAL(d[2], 4);
	CU_ASSERT_EQUAL(hloi_shape_tiled_dims(s, 3, d), -1);
	CU_ASSERT_EQUAL(hloi_shape_tiled_coords(s, 2646, 1, d), 4);
	CU_ASSERT_EQUAL(d[1], 2);
	CU_ASSERT_EQUAL(d[3], 43);
	CU_ASSERT_EQUAL(hloi_shape_tiled_coords(s, 3072, 1, d), -1);
	int64_t idx[2] = { 4, 299 }, lin;
	CU_ASSERT_EQUAL(hloi_shape_index_to_linear(s, idx, &lin), HLOI_OK);
	CU_ASSERT_EQUAL(lin, 2646);
	int pad;
	CU_ASSERT_EQUAL(hloi_shape_linear_to_index(s, 513, idx, &pad), HLOI_OK);
	CU_ASSERT_EQUAL(pad, 1);
	hloi_shape_free(s);
	CU_ASSERT_EQUAL_FATAL(hloi_shape_parse(&s, ctx, "<t>", "f32[2,3]{0,1:L(8)}"), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_shape_stride(s, 1), 2);
	CU_ASSERT_EQUAL(hloi_shape_buffer_elements(s), 8);
	CU_ASSERT_EQUAL(hloi_shape_linear_to_index(s, 7, idx, &pad), HLOI_OK);
	CU_ASSERT_EQUAL(pad, 2);
	CU_ASSERT_EQUAL(hloi_shape_tiled_dims(s, 0, d), 2);
	CU_ASSERT_EQUAL(d[0], 3);
	hloi_shape_free(s);
	hloi_context_free(ctx);
}

static const unit_test tiled_tests[] = {
	{ "api", test_api },
	{ "literal_buffers", test_literal_buffers },
	{ "figure1", test_figure1 },
	{ "figure2_nested", test_figure2_nested },
	{ "bf16_8_128_2_1", test_bf16_8_128_2_1 },
	{ "figure4_cross_tile", test_figure4_cross_tile },
	{ "combine", test_combine },
	{ "padding_then_tiles", test_padding_then_tiles },
	{ "tile_longer_than_shape", test_tile_longer_than_shape },
	{ "tail_padding_and_element_size", test_tail_padding_and_element_size },
	{ "validation", test_validation },
	{ "scalar_layout_print", test_scalar_layout_print },
	{ "roundtrips", test_roundtrips },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "tiled", tiled_tests },
	{ NULL, NULL },
};
