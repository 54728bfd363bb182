/* Unit tests for element types, shapes, layouts and index conversion
 * (doc/sources.md B's examples). */
#include <string.h>

#include "core/index.h"
#include "core/shape.h"
#include "core/types.h"
#include "unit.h"

static void test_type_table(void)
{
	CU_ASSERT_EQUAL(etype_from_name("f32", 3), ET_F32);
	CU_ASSERT_EQUAL(etype_from_name("bf16", 4), ET_BF16);
	CU_ASSERT_EQUAL(etype_from_name("f8e4m3fn", 8), ET_F8E4M3FN);
	CU_ASSERT_EQUAL(etype_from_name("opaque_type", 11), ET_OPAQUE);
	CU_ASSERT_EQUAL(etype_from_name("g32", 3), ET_INVALID);
	CU_ASSERT_EQUAL(etype_from_name("f3", 2), ET_INVALID);
	CU_ASSERT_EQUAL((int)ET_F32, 11);
	CU_ASSERT_EQUAL((int)ET_BF16, 16);
	CU_ASSERT_EQUAL(etype_byte_width(ET_S16), 2);
	CU_ASSERT_EQUAL(etype_byte_width(ET_C128), 16);
	CU_ASSERT_STRING_EQUAL(etype_name(ET_U64), "u64");
	CU_ASSERT_STRING_EQUAL(etype_npy_descr(ET_F16), "<f2");
	CU_ASSERT_TRUE(etype_is_evaluated(ET_BF16));
	CU_ASSERT_TRUE(etype_is_evaluated(ET_C64));
	CU_ASSERT_TRUE(etype_is_evaluated(ET_S4));
	CU_ASSERT_TRUE(etype_is_evaluated(ET_F8E8M0FNU));
	CU_ASSERT_FALSE(etype_is_evaluated(ET_TOKEN));
	CU_ASSERT_EQUAL(etype_bit_width(ET_S2), 2);
	CU_ASSERT_EQUAL(etype_bit_width(ET_F4E2M1FN), 4);
	CU_ASSERT_EQUAL(etype_bit_width(ET_F8E4M3FN), 8);
	CU_ASSERT_EQUAL(etype_from_low_bits(ET_S4, 0x0f), 0xff);  /* -1 */
	CU_ASSERT_EQUAL(etype_from_low_bits(ET_S4, 0xf7), 0x07);  /* upper bits ignored */
	CU_ASSERT_EQUAL(etype_from_low_bits(ET_U2, 0xff), 0x03);
	CU_ASSERT_EQUAL(etype_from_low_bits(ET_S1, 0x01), 0xff);  /* s1: 1 is -1 */
	CU_ASSERT_EQUAL(etype_from_low_bits(ET_F4E2M1FN, 0x9a), 0x0a);
	CU_ASSERT_EQUAL(etype_from_low_bits(ET_S8, 0x9a), 0x9a);
	CU_ASSERT_STRING_EQUAL(etype_npy_descr(ET_C128), "<c16");
	CU_ASSERT_STRING_EQUAL(etype_npy_descr(ET_S4), "|i1");
	CU_ASSERT_STRING_EQUAL(etype_npy_descr(ET_F8E4M3FN), "|u1");
	CU_ASSERT_TRUE(etype_is_signed(ET_S8));
	CU_ASSERT_FALSE(etype_is_signed(ET_U8));
	CU_ASSERT_FALSE(etype_is_integer(ET_PRED));
	CU_ASSERT_EQUAL(etype_from_number(19), ET_F8E5M2);
	CU_ASSERT_EQUAL(etype_from_number(99), ET_INVALID);
}

/* Fills a 2x3 array a b c / d e f into a buffer under the shape's layout and
 * returns the letters in memory order ('0' for padding). */
static void memory_order(const shape *s, char *out)
{
	int64_t n;
	CU_ASSERT_FATAL(shape_buffer_elements(s, &n) == 0);
	for (int64_t lin = 0; lin < n; lin++) {
		int64_t idx[HLOI_MAX_RANK];
		if (index_from_linear(s, lin, idx)) {
			out[lin] = '0';
		} else {
			out[lin] = (char)('a' + idx[0] * s->dims[1] + idx[1]);
			CU_ASSERT_EQUAL(index_to_linear(s, idx), lin);
		}
	}
	out[n] = '\0';
}

static void test_sources_b_layouts(void)
{
	int64_t dims[] = { 2, 3 };
	shape s;
	char buf[64];
	shape_make_array(&s, ET_F32, 2, dims);
	memory_order(&s, buf);
	CU_ASSERT_STRING_EQUAL(buf, "abcdef"); /* default {1,0}: row-major */

	s.layout.minor_to_major[0] = 0;
	s.layout.minor_to_major[1] = 1;
	memory_order(&s, buf);
	CU_ASSERT_STRING_EQUAL(buf, "adbecf"); /* {0,1}: column-major */

	s.layout.n_padded = 2;
	s.layout.padded_dimensions[0] = 3;
	s.layout.padded_dimensions[1] = 5;
	char msg[256];
	CU_ASSERT_EQUAL(shape_validate(&s, msg, sizeof msg), 0);
	memory_order(&s, buf);
	CU_ASSERT_STRING_EQUAL(buf, "ad0be0cf0000000");

	int64_t strides[2];
	index_strides(&s, strides);
	CU_ASSERT_EQUAL(strides[0], 1);
	CU_ASSERT_EQUAL(strides[1], 3);
	int64_t count;
	CU_ASSERT_EQUAL(shape_buffer_elements(&s, &count), 0);
	CU_ASSERT_EQUAL(count, 15);
	CU_ASSERT_EQUAL(shape_element_count(&s, &count), 0);
	CU_ASSERT_EQUAL(count, 6);
}

static void test_layout_print(void)
{
	int64_t dims[] = { 2, 3 };
	shape s;
	shape_make_array(&s, ET_F32, 2, dims);
	strbuf b = STRBUF_INIT;
	shape_print(&b, &s, 1);
	CU_ASSERT_STRING_EQUAL(sb_str(&b), "f32[2,3]{1,0}");
	sb_reset(&b);
	s.layout.minor_to_major[0] = 0;
	s.layout.minor_to_major[1] = 1;
	s.layout.n_padded = 2;
	s.layout.padded_dimensions[0] = 3;
	s.layout.padded_dimensions[1] = 5;
	s.layout.padding_value = PAD_ONE;
	shape_print(&b, &s, 1);
	CU_ASSERT_STRING_EQUAL(sb_str(&b), "f32[2,3]{0,1:pad(3,5)padval(one)}");
	sb_reset(&b);
	shape_print(&b, &s, 0);
	CU_ASSERT_STRING_EQUAL(sb_str(&b), "f32[2,3]");
	sb_reset(&b);
	shape scalar;
	shape_make_array(&scalar, ET_PRED, 0, NULL);
	shape_print(&b, &scalar, 1);
	CU_ASSERT_STRING_EQUAL(sb_str(&b), "pred[]");
	sb_free(&b);
}

static void test_layout_validation(void)
{
	int64_t dims[] = { 2, 2 };
	shape s;
	char msg[256];
	shape_make_array(&s, ET_F32, 2, dims);
	CU_ASSERT_EQUAL(shape_validate(&s, msg, sizeof msg), 0);

	s.layout.minor_to_major[1] = 1;
	CU_ASSERT_NOT_EQUAL(shape_validate(&s, msg, sizeof msg), 0);
	CU_ASSERT_STRING_EQUAL(msg, "layout minor_to_major field has duplicate values: {1,1}; shape: f32[2,2]");

	s.layout.minor_to_major[1] = 2;
	CU_ASSERT_NOT_EQUAL(shape_validate(&s, msg, sizeof msg), 0);
	CU_ASSERT_STRING_EQUAL(msg, "layout minor_to_major field has out-of-bounds value: {1,2}; shape: f32[2,2]");

	s.layout.n_minor_to_major = 1;
	CU_ASSERT_NOT_EQUAL(shape_validate(&s, msg, sizeof msg), 0);
	CU_ASSERT_STRING_EQUAL(msg,
			       "layout minor_to_major field contains 1 elements, but shape has 2 dimensions: {1}; shape: f32[2,2]");

	layout_set_default(&s);
	s.layout.n_padded = 2;
	s.layout.padded_dimensions[0] = 1;
	s.layout.padded_dimensions[1] = 2;
	CU_ASSERT_NOT_EQUAL(shape_validate(&s, msg, sizeof msg), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "dimension padding (1) is smaller than the dimension size (2)"));

	int64_t huge[] = { 4294967296LL, 4294967296LL, 8 };
	shape h;
	shape_make_array(&h, ET_F32, 3, huge);
	CU_ASSERT_NOT_EQUAL(shape_validate(&h, msg, sizeof msg), 0);

	int64_t neg[] = { -1, 3 };
	shape n;
	shape_make_array(&n, ET_F32, 2, neg);
	CU_ASSERT_NOT_EQUAL(shape_validate(&n, msg, sizeof msg), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "Negative dimension at index 0: -1"));
}

static void test_negative_dims(void)
{
	int64_t dims[] = { 4, 5, 6 };
	shape s;
	shape_make_array(&s, ET_F32, 3, dims);
	CU_ASSERT_EQUAL(shape_dim_index(&s, -1), 2);
	CU_ASSERT_EQUAL(s.dims[shape_dim_index(&s, -1)], 6);
	CU_ASSERT_EQUAL(s.dims[shape_dim_index(&s, -2)], 5);
	CU_ASSERT_EQUAL(shape_dim_index(&s, -3), 0);
	CU_ASSERT_EQUAL(shape_dim_index(&s, -4), -1);
	CU_ASSERT_EQUAL(shape_dim_index(&s, 3), -1);
}

static void test_index_roundtrip_all_layouts(void)
{
	/* every permutation of a rank-3 layout, with and without padding */
	static const int perms[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
					 { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	int64_t dims[] = { 2, 3, 4 };
	for (int p = 0; p < 6; p++) {
		for (int pad = 0; pad < 2; pad++) {
			shape s;
			shape_make_array(&s, ET_S32, 3, dims);
			for (int i = 0; i < 3; i++)
				s.layout.minor_to_major[i] = perms[p][i];
			if (pad) {
				s.layout.n_padded = 3;
				s.layout.padded_dimensions[0] = 3;
				s.layout.padded_dimensions[1] = 3;
				s.layout.padded_dimensions[2] = 7;
			}
			int64_t n, real = 0;
			CU_ASSERT_EQUAL(shape_buffer_elements(&s, &n), 0);
			int seen[64] = { 0 };
			for (int64_t lin = 0; lin < n; lin++) {
				int64_t idx[3];
				if (!index_from_linear(&s, lin, idx)) {
					real++;
					CU_ASSERT_EQUAL(index_to_linear(&s, idx), lin);
				}
				CU_ASSERT_TRUE(lin < 64);
				seen[lin]++;
			}
			CU_ASSERT_EQUAL(real, 24);
			/* the most minor dimension has stride 1 */
			int64_t st[3];
			index_strides(&s, st);
			CU_ASSERT_EQUAL(st[perms[p][0]], 1);
		}
	}
}

static void test_index_next(void)
{
	int64_t dims[] = { 2, 2 };
	int64_t idx[2] = { 0, 0 };
	CU_ASSERT_TRUE(index_next(2, dims, idx));
	CU_ASSERT_TRUE(idx[0] == 0 && idx[1] == 1);
	CU_ASSERT_TRUE(index_next(2, dims, idx));
	CU_ASSERT_TRUE(idx[0] == 1 && idx[1] == 0);
	CU_ASSERT_TRUE(index_next(2, dims, idx));
	CU_ASSERT_FALSE(index_next(2, dims, idx));
	CU_ASSERT_TRUE(idx[0] == 0 && idx[1] == 0);
}

static const unit_test shape_tests[] = {
	{ "type_table", test_type_table },
	{ "sources_b_layouts", test_sources_b_layouts },
	{ "layout_print", test_layout_print },
	{ "layout_validation", test_layout_validation },
	{ "negative_dims", test_negative_dims },
	{ "index_roundtrip_all_layouts", test_index_roundtrip_all_layouts },
	{ "index_next", test_index_next },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "shape", shape_tests },
	{ NULL, NULL },
};
