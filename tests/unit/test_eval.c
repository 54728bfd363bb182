/* Unit tests for evaluation: the per-element semantics of eval/scalar/scalar.h for
 * every op and evaluated type (doc/spec.md §4's edge cases, exact bits for floats),
 * and the reference engine on doc/sources.md A's examples, layouts, padding,
 * inputs, the memory budget and random inputs. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "core/float8.h"
#include "core/half.h"
#include "core/index.h"
#include "core/literal.h"
#include "eval/eval.h"
#include "eval/scalar/scalar.h"
#include "eval/runtime/spmd.h"
#include "ir/groups.h"
#include "text/parse.h"
#include "unit.h"
#include "util/alloc.h"

/* --- bit helpers ------------------------------------------------------------ */

static float f32b(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static uint32_t bf32(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static double f64b(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

static uint64_t bf64(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u;
}

#define F32_NAN 0x7FC00000u
#define F32_NAN_P 0x7FC00001u  /* a NaN with a payload */
#define F32_NNAN 0xFFC00000u
#define F32_INF 0x7F800000u
#define F32_NINF 0xFF800000u
#define F32_NZERO 0x80000000u

/* Binary op on f32 bit patterns, result as bits. */
#define F32OP(op, a, b) bf32(sc_##op##_F32(f32b(a), f32b(b)))
#define F64OP(op, a, b) bf64(sc_##op##_F64(f64b(a), f64b(b)))

/* --- integers ---------------------------------------------------------------- */

static void test_int_wraparound(void)
{
	CU_ASSERT_EQUAL(sc_add_S32(INT32_MAX, 1), INT32_MIN);
	CU_ASSERT_EQUAL(sc_add_S8(127, 1), -128);
	CU_ASSERT_EQUAL(sc_add_S16(INT16_MAX, INT16_MAX), -2);
	CU_ASSERT_EQUAL(sc_add_S64(INT64_MAX, 1), INT64_MIN);
	CU_ASSERT_EQUAL(sc_add_U8(255, 1), 0);
	CU_ASSERT_EQUAL(sc_add_U64(UINT64_MAX, 2), 1);
	CU_ASSERT_EQUAL(sc_subtract_S32(INT32_MIN, 1), INT32_MAX);
	CU_ASSERT_EQUAL(sc_subtract_U32(0, 1), UINT32_MAX);
	CU_ASSERT_EQUAL(sc_subtract_S64(INT64_MIN, 1), INT64_MAX);
	CU_ASSERT_EQUAL(sc_multiply_S32(65536, 65536), 0);
	CU_ASSERT_EQUAL(sc_multiply_S32(INT32_MIN, -1), INT32_MIN);
	CU_ASSERT_EQUAL(sc_multiply_S8(-128, -1), -128);
	CU_ASSERT_EQUAL(sc_multiply_U16(65535, 65535), 1);
	CU_ASSERT_EQUAL(sc_multiply_S64(INT64_MAX, 2), -2);
	CU_ASSERT_EQUAL(sc_multiply_S16(-3, 7), -21);
}

static void test_int_divide_remainder(void)
{
	CU_ASSERT_EQUAL(sc_divide_S32(7, 2), 3);
	CU_ASSERT_EQUAL(sc_divide_S32(-7, 2), -3);
	CU_ASSERT_EQUAL(sc_divide_S32(7, -2), -3);
	CU_ASSERT_EQUAL(sc_divide_S32(5, 0), -1);
	CU_ASSERT_EQUAL(sc_divide_S32(-5, 0), -1);
	CU_ASSERT_EQUAL(sc_divide_S32(0, 0), -1);
	CU_ASSERT_EQUAL(sc_divide_S32(INT32_MIN, -1), INT32_MIN);
	CU_ASSERT_EQUAL(sc_divide_S8(-128, -1), -128);
	CU_ASSERT_EQUAL(sc_divide_S16(INT16_MIN, -1), INT16_MIN);
	CU_ASSERT_EQUAL(sc_divide_S64(INT64_MIN, -1), INT64_MIN);
	CU_ASSERT_EQUAL(sc_divide_S64(9, -1), -9);
	CU_ASSERT_EQUAL(sc_divide_U32(5, 0), UINT32_MAX);
	CU_ASSERT_EQUAL(sc_divide_U8(200, 0), 255);
	CU_ASSERT_EQUAL(sc_divide_U64(7, 0), UINT64_MAX);
	CU_ASSERT_EQUAL(sc_divide_U8(255, 255), 1);  /* not mistaken for -1 */
	CU_ASSERT_EQUAL(sc_divide_U16(65535, 2), 32767);

	CU_ASSERT_EQUAL(sc_remainder_S32(7, 3), 1);
	CU_ASSERT_EQUAL(sc_remainder_S32(-7, 3), -1);
	CU_ASSERT_EQUAL(sc_remainder_S32(7, -3), 1);
	CU_ASSERT_EQUAL(sc_remainder_S32(-7, -3), -1);
	CU_ASSERT_EQUAL(sc_remainder_S32(5, 0), 5);
	CU_ASSERT_EQUAL(sc_remainder_S32(-5, 0), -5);
	CU_ASSERT_EQUAL(sc_remainder_S32(INT32_MIN, -1), 0);
	CU_ASSERT_EQUAL(sc_remainder_S8(-128, -1), 0);
	CU_ASSERT_EQUAL(sc_remainder_S64(INT64_MIN, -1), 0);
	CU_ASSERT_EQUAL(sc_remainder_U8(7, 0), 7);
	CU_ASSERT_EQUAL(sc_remainder_U8(255, 255), 0);
	CU_ASSERT_EQUAL(sc_remainder_U32(UINT32_MAX, 10), 5);
}

static void test_int_shifts(void)
{
	CU_ASSERT_EQUAL(sc_shift_left_S32(1, 31), INT32_MIN);
	CU_ASSERT_EQUAL(sc_shift_left_S32(1, 32), 0);
	CU_ASSERT_EQUAL(sc_shift_left_S32(1, -1), 0);  /* amount read as unsigned */
	CU_ASSERT_EQUAL(sc_shift_left_S32(-1, 4), -16);
	CU_ASSERT_EQUAL(sc_shift_left_S8(1, 7), -128);
	CU_ASSERT_EQUAL(sc_shift_left_S8(3, 7), -128);
	CU_ASSERT_EQUAL(sc_shift_left_U8(0xFF, 4), 0xF0);
	CU_ASSERT_EQUAL(sc_shift_left_U8(1, 8), 0);
	CU_ASSERT_EQUAL(sc_shift_left_U16(0xFFFF, 15), 0x8000);
	CU_ASSERT_EQUAL(sc_shift_left_U64(1, 63), (uint64_t)1 << 63);
	CU_ASSERT_EQUAL(sc_shift_left_U64(1, 64), 0);
	CU_ASSERT_EQUAL(sc_shift_left_S64(1, 63), INT64_MIN);

	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_S32(-8, 1), -4);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_S32(-8, 40), -1);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_S32(8, 40), 0);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_S32(-1, -1), -1);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_S32(INT32_MIN, 31), -1);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_S32(INT32_MAX, 30), 1);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_S8(-128, 7), -1);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_S64(INT64_MIN, 63), -1);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_S64(-5, 0), -5);
	/* unsigned: the bits read as two's complement (XLA) */
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_U8(0x80, 1), 0xC0);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_U8(0x80, 8), 0xFF);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_U8(0x40, 8), 0);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_U32(0x80000000u, 4), 0xF8000000u);

	CU_ASSERT_EQUAL(sc_shift_right_logical_S32(-8, 1), 0x7FFFFFFC);
	CU_ASSERT_EQUAL(sc_shift_right_logical_S32(-8, 32), 0);
	CU_ASSERT_EQUAL(sc_shift_right_logical_S32(-8, -1), 0);
	CU_ASSERT_EQUAL(sc_shift_right_logical_S8(-1, 4), 0x0F);
	CU_ASSERT_EQUAL(sc_shift_right_logical_U8(0x80, 7), 1);
	CU_ASSERT_EQUAL(sc_shift_right_logical_U64(UINT64_MAX, 63), 1);
	CU_ASSERT_EQUAL(sc_shift_right_logical_S16(INT16_MIN, 15), 1);
}

static void test_int_power(void)
{
	CU_ASSERT_EQUAL(sc_power_S32(2, 10), 1024);
	CU_ASSERT_EQUAL(sc_power_S32(0, 0), 1);
	CU_ASSERT_EQUAL(sc_power_S32(5, 0), 1);
	CU_ASSERT_EQUAL(sc_power_S32(0, 5), 0);
	CU_ASSERT_EQUAL(sc_power_S32(2, -1), 0);
	CU_ASSERT_EQUAL(sc_power_S32(1, -5), 1);
	CU_ASSERT_EQUAL(sc_power_S32(-1, -1), 0);  /* XLA: negative exponent, base != 1 */
	CU_ASSERT_EQUAL(sc_power_S32(-1, 3), -1);
	CU_ASSERT_EQUAL(sc_power_S32(-2, 3), -8);
	CU_ASSERT_EQUAL(sc_power_S32(2, 31), INT32_MIN);
	CU_ASSERT_EQUAL(sc_power_S32(2, 32), 0);
	CU_ASSERT_EQUAL(sc_power_S32(3, 40), 689956897);  /* 3^40 mod 2^32 */
	CU_ASSERT_EQUAL(sc_power_S8(-128, 0), 1);
	CU_ASSERT_EQUAL(sc_power_S8(2, 7), -128);
	CU_ASSERT_EQUAL(sc_power_U8(3, 5), 243);
	CU_ASSERT_EQUAL(sc_power_U8(3, 6), 217);  /* 729 mod 256 */
	CU_ASSERT_EQUAL(sc_power_U8(0, 0), 1);
	CU_ASSERT_EQUAL(sc_power_U32(2, 0xFFFFFFFFu), 0);
	CU_ASSERT_EQUAL(sc_power_U64(3, 3), 27);
	CU_ASSERT_EQUAL(sc_power_S64(10, 18), 1000000000000000000LL);
	CU_ASSERT_EQUAL(sc_power_S64(2, 64), 0);
}

static void test_int_minmax_bitwise(void)
{
	CU_ASSERT_EQUAL(sc_maximum_S8(-1, 1), 1);
	CU_ASSERT_EQUAL(sc_minimum_S8(-1, 1), -1);
	CU_ASSERT_EQUAL(sc_maximum_U8(255, 1), 255);
	CU_ASSERT_EQUAL(sc_minimum_U8(255, 1), 1);
	CU_ASSERT_EQUAL(sc_maximum_S64(INT64_MIN, INT64_MAX), INT64_MAX);
	CU_ASSERT_EQUAL(sc_minimum_U64(UINT64_MAX, 0), 0);
	CU_ASSERT_EQUAL(sc_and_U8(0xF0, 0x3C), 0x30);
	CU_ASSERT_EQUAL(sc_or_U8(0xF0, 0x3C), 0xFC);
	CU_ASSERT_EQUAL(sc_xor_U8(0xF0, 0x3C), 0xCC);
	CU_ASSERT_EQUAL(sc_and_S32(-1, 0x1234), 0x1234);
	CU_ASSERT_EQUAL(sc_or_S16(INT16_MIN, 1), INT16_MIN + 1);
	CU_ASSERT_EQUAL(sc_xor_S64(-1, 0), -1);
}

static void test_int_compare(void)
{
	CU_ASSERT_EQUAL(sc_compare_S32(-1, 1, CMP_LT, CMPT_SIGNED), 1);
	CU_ASSERT_EQUAL(sc_compare_S32(-1, 1, CMP_GT, CMPT_SIGNED), 0);
	CU_ASSERT_EQUAL(sc_compare_S32(-1, 1, CMP_LT, CMPT_UNSIGNED), 0);
	CU_ASSERT_EQUAL(sc_compare_S32(3, 3, CMP_EQ, CMPT_SIGNED), 1);
	CU_ASSERT_EQUAL(sc_compare_S32(3, 3, CMP_NE, CMPT_SIGNED), 0);
	CU_ASSERT_EQUAL(sc_compare_S32(3, 3, CMP_LE, CMPT_SIGNED), 1);
	CU_ASSERT_EQUAL(sc_compare_S32(3, 3, CMP_GE, CMPT_SIGNED), 1);
	CU_ASSERT_EQUAL(sc_compare_S8(-128, 127, CMP_LT, CMPT_SIGNED), 1);
	CU_ASSERT_EQUAL(sc_compare_S64(INT64_MIN, 0, CMP_LT, CMPT_SIGNED), 1);
	CU_ASSERT_EQUAL(sc_compare_U32(UINT32_MAX, 1, CMP_GT, CMPT_UNSIGNED), 1);
	CU_ASSERT_EQUAL(sc_compare_U8(200, 100, CMP_GE, CMPT_UNSIGNED), 1);
	CU_ASSERT_EQUAL(sc_compare_U64(UINT64_MAX, 0, CMP_LT, CMPT_UNSIGNED), 0);
}

static void test_pred(void)
{
	CU_ASSERT_EQUAL(sc_add_PRED(1, 1), 1);
	CU_ASSERT_EQUAL(sc_add_PRED(1, 0), 1);
	CU_ASSERT_EQUAL(sc_add_PRED(0, 0), 0);
	CU_ASSERT_EQUAL(sc_add_PRED(2, 0), 1);  /* any nonzero byte is true */
	CU_ASSERT_EQUAL(sc_multiply_PRED(1, 1), 1);
	CU_ASSERT_EQUAL(sc_multiply_PRED(1, 0), 0);
	CU_ASSERT_EQUAL(sc_multiply_PRED(2, 4), 1);
	CU_ASSERT_EQUAL(sc_maximum_PRED(0, 1), 1);
	CU_ASSERT_EQUAL(sc_maximum_PRED(0, 0), 0);
	CU_ASSERT_EQUAL(sc_minimum_PRED(0, 1), 0);
	CU_ASSERT_EQUAL(sc_minimum_PRED(1, 1), 1);
	CU_ASSERT_EQUAL(sc_and_PRED(1, 0), 0);
	CU_ASSERT_EQUAL(sc_and_PRED(1, 1), 1);
	CU_ASSERT_EQUAL(sc_or_PRED(1, 0), 1);
	CU_ASSERT_EQUAL(sc_or_PRED(0, 0), 0);
	CU_ASSERT_EQUAL(sc_xor_PRED(1, 1), 0);
	CU_ASSERT_EQUAL(sc_xor_PRED(1, 0), 1);
	CU_ASSERT_EQUAL(sc_xor_PRED(2, 1), 0);
	CU_ASSERT_EQUAL(sc_compare_PRED(0, 1, CMP_LT, CMPT_UNSIGNED), 1);
	CU_ASSERT_EQUAL(sc_compare_PRED(1, 0, CMP_GT, CMPT_UNSIGNED), 1);
	CU_ASSERT_EQUAL(sc_compare_PRED(1, 2, CMP_EQ, CMPT_UNSIGNED), 1);
	CU_ASSERT_EQUAL(sc_compare_PRED(0, 0, CMP_NE, CMPT_UNSIGNED), 0);
}

/* --- floats -------------------------------------------------------------------- */

static void test_f32_arith(void)
{
	CU_ASSERT_EQUAL(F32OP(add, bf32(0.1f), bf32(0.2f)), 0x3E99999Au);
	CU_ASSERT_EQUAL(F32OP(add, F32_INF, F32_NINF) & 0x7F800000u, 0x7F800000u);
	CU_ASSERT_TRUE(isnan(sc_add_F32(f32b(F32_INF), f32b(F32_NINF))));
	CU_ASSERT_EQUAL(F32OP(subtract, bf32(1.0f), bf32(1.0f)), 0u);
	CU_ASSERT_EQUAL(F32OP(multiply, F32_NZERO, bf32(3.0f)), F32_NZERO);
	CU_ASSERT_EQUAL(F32OP(divide, bf32(1.0f), 0u), F32_INF);
	CU_ASSERT_EQUAL(F32OP(divide, bf32(-1.0f), 0u), F32_NINF);
	CU_ASSERT_EQUAL(F32OP(divide, bf32(1.0f), F32_NZERO), F32_NINF);
	CU_ASSERT_TRUE(isnan(sc_divide_F32(0.0f, 0.0f)));
	CU_ASSERT_EQUAL(sc_divide_F32(7.0f, 2.0f), 3.5f);
	/* remainder = fmod: the dividend's sign */
	CU_ASSERT_EQUAL(sc_remainder_F32(5.5f, 2.0f), 1.5f);
	CU_ASSERT_EQUAL(sc_remainder_F32(-5.5f, 2.0f), -1.5f);
	CU_ASSERT_EQUAL(sc_remainder_F32(5.5f, -2.0f), 1.5f);
	CU_ASSERT_EQUAL(F32OP(remainder, F32_NZERO, bf32(2.0f)), F32_NZERO);
	CU_ASSERT_TRUE(isnan(sc_remainder_F32(1.0f, 0.0f)));
	CU_ASSERT_TRUE(isnan(sc_remainder_F32(f32b(F32_INF), 1.0f)));
	CU_ASSERT_EQUAL(sc_remainder_F32(3.0f, f32b(F32_INF)), 3.0f);
	CU_ASSERT_EQUAL(sc_remainder_F64(-7.0, 3.0), -1.0);
}

static void test_f32_minmax(void)
{
	CU_ASSERT_EQUAL(F32OP(maximum, F32_NAN_P, bf32(1.0f)), F32_NAN_P);
	CU_ASSERT_EQUAL(F32OP(maximum, bf32(1.0f), F32_NAN_P), F32_NAN_P);
	CU_ASSERT_EQUAL(F32OP(maximum, F32_NAN_P, F32_NNAN), F32_NAN_P);  /* lhs NaN wins */
	CU_ASSERT_EQUAL(F32OP(maximum, F32_NNAN, F32_NAN_P), F32_NNAN);
	CU_ASSERT_EQUAL(F32OP(minimum, F32_NAN_P, bf32(1.0f)), F32_NAN_P);
	CU_ASSERT_EQUAL(F32OP(minimum, bf32(1.0f), F32_NNAN), F32_NNAN);
	CU_ASSERT_EQUAL(F32OP(maximum, F32_NZERO, 0u), 0u);  /* IEEE 754-2019: -0 < +0 */
	CU_ASSERT_EQUAL(F32OP(maximum, 0u, F32_NZERO), 0u);
	CU_ASSERT_EQUAL(F32OP(minimum, F32_NZERO, 0u), F32_NZERO);
	CU_ASSERT_EQUAL(F32OP(minimum, 0u, F32_NZERO), F32_NZERO);
	CU_ASSERT_EQUAL(F32OP(maximum, F32_NZERO, F32_NZERO), F32_NZERO);
	CU_ASSERT_EQUAL(F32OP(maximum, F32_NINF, bf32(3.0f)), bf32(3.0f));
	CU_ASSERT_EQUAL(F32OP(minimum, F32_NINF, bf32(3.0f)), F32_NINF);
	CU_ASSERT_EQUAL(F32OP(maximum, F32_INF, bf32(3.0f)), F32_INF);
	CU_ASSERT_EQUAL(F64OP(maximum, 0x8000000000000000ull, 0ull), 0ull);
	CU_ASSERT_EQUAL(F64OP(minimum, 0ull, 0x8000000000000000ull), 0x8000000000000000ull);
	CU_ASSERT_EQUAL(F64OP(maximum, 0x7FF8000000000001ull, bf64(2.0)), 0x7FF8000000000001ull);
}

static void test_f32_power_atan2(void)
{
	CU_ASSERT_EQUAL(F32OP(power, F32_NAN, 0u), bf32(1.0f));       /* x^0 = 1 */
	CU_ASSERT_EQUAL(F32OP(power, F32_NAN, F32_NZERO), bf32(1.0f));
	CU_ASSERT_EQUAL(F32OP(power, bf32(1.0f), F32_NAN), bf32(1.0f)); /* 1^y = 1 */
	CU_ASSERT_EQUAL(F32OP(power, bf32(1.0f), F32_INF), bf32(1.0f));
	CU_ASSERT_EQUAL(F32OP(power, F32_INF, 0u), bf32(1.0f));
	CU_ASSERT_EQUAL(sc_power_F32(2.0f, 10.0f), 1024.0f);
	CU_ASSERT_EQUAL(sc_power_F32(2.0f, -1.0f), 0.5f);
	CU_ASSERT_EQUAL(F32OP(power, 0u, bf32(-1.0f)), F32_INF);
	CU_ASSERT_TRUE(isnan(sc_power_F32(-8.0f, 1.0f / 3.0f)));
	CU_ASSERT_EQUAL(F32OP(power, bf32(2.0f), bf32(0.5f)), 0x3FB504F3u);
	CU_ASSERT_TRUE(isnan(sc_power_F32(f32b(F32_NAN), 2.0f)));
	CU_ASSERT_EQUAL(sc_power_F64(f64b(0x7FF8000000000000ull), 0.0), 1.0);

	/* atan2(lhs = y, rhs = x) */
	CU_ASSERT_EQUAL(F32OP(atan2, bf32(1.0f), 0u), 0x3FC90FDBu);         /* pi/2 */
	CU_ASSERT_EQUAL(F32OP(atan2, 0u, bf32(1.0f)), 0u);
	CU_ASSERT_EQUAL(F32OP(atan2, 0u, bf32(-1.0f)), 0x40490FDBu);        /* pi */
	CU_ASSERT_EQUAL(F32OP(atan2, F32_NZERO, bf32(-1.0f)), 0xC0490FDBu); /* -pi */
	CU_ASSERT_EQUAL(F32OP(atan2, F32_NZERO, bf32(1.0f)), F32_NZERO);
	CU_ASSERT_EQUAL(F32OP(atan2, bf32(-1.0f), 0u), 0xBFC90FDBu);
	CU_ASSERT_EQUAL(F64OP(atan2, bf64(1.0), 0ull), 0x3FF921FB54442D18ull);
	CU_ASSERT_TRUE(isnan(sc_atan2_F32(f32b(F32_NAN), 1.0f)));
}

static void test_float_compare(void)
{
	float nan = f32b(F32_NAN), nnan = f32b(F32_NNAN), nz = f32b(F32_NZERO);
	float inf = f32b(F32_INF), ninf = f32b(F32_NINF);
	/* FLOAT: IEEE */
	CU_ASSERT_EQUAL(sc_compare_F32(nan, nan, CMP_EQ, CMPT_FLOAT), 0);
	CU_ASSERT_EQUAL(sc_compare_F32(nan, nan, CMP_NE, CMPT_FLOAT), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(nan, 1.0f, CMP_LT, CMPT_FLOAT), 0);
	CU_ASSERT_EQUAL(sc_compare_F32(nan, 1.0f, CMP_GE, CMPT_FLOAT), 0);
	CU_ASSERT_EQUAL(sc_compare_F32(1.0f, nan, CMP_NE, CMPT_FLOAT), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(nz, 0.0f, CMP_EQ, CMPT_FLOAT), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(nz, 0.0f, CMP_LT, CMPT_FLOAT), 0);
	CU_ASSERT_EQUAL(sc_compare_F32(-1.0f, 2.0f, CMP_LE, CMPT_FLOAT), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(ninf, -1e38f, CMP_LT, CMPT_FLOAT), 1);
	/* TOTALORDER: -NaN < -inf < -1 < -0 < +0 < 1 < +inf < +NaN */
	CU_ASSERT_EQUAL(sc_compare_F32(nz, 0.0f, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(nz, 0.0f, CMP_EQ, CMPT_TOTALORDER), 0);
	CU_ASSERT_EQUAL(sc_compare_F32(nnan, ninf, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(ninf, -1.0f, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(-2.0f, -1.0f, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(-1.0f, nz, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(1.0f, 2.0f, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(inf, nan, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(nan, nan, CMP_EQ, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F32(nan, f32b(F32_NAN_P), CMP_EQ, CMPT_TOTALORDER), 0);
	CU_ASSERT_EQUAL(sc_compare_F32(nan, f32b(F32_NAN_P), CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F64(f64b(0x8000000000000000ull), 0.0, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F64(f64b(0xFFF8000000000000ull), -INFINITY, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F16(0x8000, 0x0000, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F16(0x8000, 0x0000, CMP_EQ, CMPT_FLOAT), 1);
	CU_ASSERT_EQUAL(sc_compare_F16(0xFE00, 0xFC00, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_BF16(0x7FC0, 0x7FC0, CMP_EQ, CMPT_FLOAT), 0);
	CU_ASSERT_EQUAL(sc_compare_BF16(0xBF80, 0x3F80, CMP_LT, CMPT_FLOAT), 1);
}

static void test_half_rounding(void)
{
	/* f16: computed in f32, rounded once to nearest, ties to even */
	CU_ASSERT_EQUAL(sc_add_F16(0x3C00, 0x1000), 0x3C00);  /* 1 + 2^-11: tie -> even (1) */
	CU_ASSERT_EQUAL(sc_add_F16(0x3C00, 0x1600), 0x3C02);  /* 1 + 1.5 ulp: tie -> even */
	CU_ASSERT_EQUAL(sc_add_F16(0x3C00, 0x1400), 0x3C01);  /* 1 + 1 ulp exactly */
	CU_ASSERT_EQUAL(sc_add_F16(0x7BFF, 0x4C00), 0x7C00);  /* 65504 + 16 -> inf */
	CU_ASSERT_EQUAL(sc_add_F16(0x7BFF, 0x4800), 0x7BFF);  /* 65504 + 8 -> 65504 */
	CU_ASSERT_EQUAL(sc_add_F16(0x0001, 0x0001), 0x0002);  /* subnormals kept */
	CU_ASSERT_EQUAL(sc_multiply_F16(0x0001, 0x3800), 0x0000); /* 2^-25: tie -> 0 */
	CU_ASSERT_EQUAL(sc_multiply_F16(0x0003, 0x3800), 0x0002); /* 1.5 * 2^-24 -> 2 */
	CU_ASSERT_EQUAL(sc_divide_F16(0x3C00, 0x0000), 0x7C00);
	CU_ASSERT_EQUAL(sc_subtract_F16(0x3C00, 0x3C00), 0x0000);
	CU_ASSERT_EQUAL(sc_maximum_F16(0x8000, 0x0000), 0x0000);
	CU_ASSERT_EQUAL(sc_minimum_F16(0x0000, 0x8000), 0x8000);
	CU_ASSERT_EQUAL(sc_maximum_F16(0x7E01, 0x3C00), 0x7E01);
	CU_ASSERT_EQUAL(sc_power_F16(0x7E00, 0x0000), 0x3C00);
	CU_ASSERT_EQUAL(sc_remainder_F16(0x4580, 0x4000), 0x3E00); /* fmod(5.5, 2) = 1.5 */
	/* bf16 */
	CU_ASSERT_EQUAL(sc_add_BF16(0x3F80, 0x3B80), 0x3F80);  /* 1 + 2^-8: tie -> even */
	CU_ASSERT_EQUAL(sc_add_BF16(0x3F80, 0x3C40), 0x3F82);  /* 1 + 1.5 ulp -> even */
	CU_ASSERT_EQUAL(sc_add_BF16(0x3F81, 0x3B80), 0x3F82);  /* odd + half ulp -> up */
	CU_ASSERT_EQUAL(sc_multiply_BF16(0x4040, 0x4040), 0x4110); /* 3 * 3 = 9 */
	CU_ASSERT_EQUAL(sc_maximum_BF16(0x8000, 0x0000), 0x0000);
	CU_ASSERT_EQUAL(sc_minimum_BF16(0x8000, 0x0000), 0x8000);
	CU_ASSERT_EQUAL(sc_maximum_BF16(0x7FC1, 0x3F80), 0x7FC1);
	CU_ASSERT_EQUAL(sc_minimum_BF16(0x3F80, 0xFFC1), 0xFFC1);
	CU_ASSERT_EQUAL(sc_power_BF16(0x3F80, 0x7FC0), 0x3F80);
	CU_ASSERT_EQUAL(sc_divide_BF16(0xBF80, 0x0000), 0xFF80);
	CU_ASSERT_EQUAL(sc_atan2_BF16(0x3F80, 0x0000), f32_to_bf16(1.5707964f));
}

/* --- the reference engine ------------------------------------------------------------ */

typedef struct prog {
	hloi_context *ctx;
	module *m;
} prog;

static void load_mode(prog *p, const char *text, hloi_broadcast_mode mode)
{
	CU_ASSERT_FATAL(hloi_context_new(&p->ctx) == HLOI_OK);
	hloi_status st = text_parse_module(&p->m, p->ctx, "t.hlo", text, strlen(text));
	if (st == HLOI_OK) {
		hloi_check_options o = { HLOI_CHECK_OPTIONS_VERSION, 0, mode };
		st = check_module(p->m, p->ctx, &o);
	}
	if (st != HLOI_OK) {
		hloi_context_print_diagnostics(p->ctx, stderr, 0);
		fprintf(stderr, "in:\n%s\n", text);
	}
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
}

static void load(prog *p, const char *text)
{
	load_mode(p, text, HLOI_BROADCAST_DEFAULT);
}

static void unload(prog *p)
{
	module_destroy(p->m);
	hloi_context_free(p->ctx);
}

/* Runs the program on inputs written as literal text; returns the status. */
static hloi_status run_engine_with(prog *p, const char *inputs, uint64_t max_memory, hloi_engine engine,
				   hloi_literal **out)
{
	hloi_literal **in = NULL;
	size_t n = 0;
	if (inputs) {
		hloi_status st = hloi_literal_parse_list(&in, &n, p->ctx, "inputs", inputs, strlen(inputs));
		if (st != HLOI_OK)
			hloi_context_print_diagnostics(p->ctx, stderr, 0);
		CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	}
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.max_memory = max_memory;
	o.engine = engine;
	hloi_status st = eval_module(p->m, p->ctx, in, n, &o, out);
	hloi_literal_array_free(in, n);
	return st;
}

static hloi_status run_with(prog *p, const char *inputs, uint64_t max_memory, hloi_literal **out)
{
	return run_engine_with(p, inputs, max_memory, HLOI_ENGINE_DEFAULT, out);
}

/* Evaluates and compares the result printed as XLA prints it. */
static void expect_result(const char *text, const char *inputs, const char *expect)
{
	prog p;
	hloi_literal *out = NULL;
	load(&p, text);
	hloi_status st = run_with(&p, inputs, 0, &out);
	CU_ASSERT_EQUAL(st, HLOI_OK);
	if (st != HLOI_OK) {
		hloi_context_print_diagnostics(p.ctx, stderr, 0);
	} else {
		strbuf b = STRBUF_INIT;
		literal_print(&b, out, 1, 0);
		CU_ASSERT_STRING_EQUAL(sb_str(&b), expect);
		if (strcmp(sb_str(&b), expect) != 0)
			fprintf(stderr, "\n%s\ngot:\n%s\nexpected:\n%s\n", text, sb_str(&b), expect);
		sb_free(&b);
	}
	literal_destroy(out);
	unload(&p);
}

static void test_sources_a_values(void)
{
	/* matrix plus vector */
	expect_result("ENTRY e {\n  m = s32[2,3] parameter(0)\n  v = s32[3] parameter(1)\n"
		      "  ROOT r = add(m, v), broadcast_dimensions={1}\n}\n",
		      "s32[2,3] {{1,2,3},{4,5,6}} s32[3] {7,8,9}",
		      "s32[2,3] {\n  { 8, 10, 12 },\n  { 11, 13, 15 }\n}");
	/* scalars broadcast without a specification */
	expect_result("ENTRY e {\n  m = s32[2,3] parameter(0)\n  c = s32[] constant(7)\n  ROOT r = add(m, c)\n}\n",
		      "s32[2,3] {{1,2,3},{4,5,6}}",
		      "s32[2,3] {\n  { 8, 9, 10 },\n  { 11, 12, 13 }\n}");
	/* 3x3 matrix with dimension (1): the vector repeats for every row */
	expect_result("ENTRY e {\n  m = s32[3,3] parameter(0)\n  v = s32[3] parameter(1)\n"
		      "  ROOT r = add(m, v), broadcast_dimensions={1}\n}\n",
		      "s32[3,3] {{0,0,0},{0,0,0},{0,0,0}} s32[3] {7,8,9}",
		      "s32[3,3] {\n  { 7, 8, 9 },\n  { 7, 8, 9 },\n  { 7, 8, 9 }\n}");
	/* with dimension (0): each element becomes a row */
	expect_result("ENTRY e {\n  m = s32[3,3] parameter(0)\n  v = s32[3] parameter(1)\n"
		      "  ROOT r = add(m, v), broadcast_dimensions={0}\n}\n",
		      "s32[3,3] {{0,0,0},{0,0,0},{0,0,0}} s32[3] {7,8,9}",
		      "s32[3,3] {\n  { 7, 7, 7 },\n  { 8, 8, 8 },\n  { 9, 9, 9 }\n}");
	/* composition: vector(4) + matrix(1x2) with (0) */
	expect_result("ENTRY e {\n  v = s32[4] parameter(0)\n  m = s32[1,2] parameter(1)\n"
		      "  ROOT r = add(v, m), broadcast_dimensions={0}\n}\n",
		      "s32[4] {1,2,3,4} s32[1,2] {{5,6}}",
		      "s32[4,2] {\n  { 6, 7 },\n  { 7, 8 },\n  { 8, 9 },\n  { 9, 10 }\n}");
	/* 1x2 into 4x3x1 with (1,2) -> 4x3x2 */
	expect_result("ENTRY e {\n  a = s32[1,2] parameter(0)\n  b = s32[4,3,1] parameter(1)\n"
		      "  ROOT r = add(a, b), broadcast_dimensions={1,2}\n}\n",
		      "s32[1,2] {{1,2}} s32[4,3,1] {{{0},{10},{20}},{{30},{40},{50}},{{60},{70},{80}},{{90},{100},{110}}}",
		      "s32[4,3,2] {\n{\n  { 1, 2 },\n  { 11, 12 },\n  { 21, 22 }\n},\n{\n  { 31, 32 },\n  { 41, 42 },\n"
		      "  { 51, 52 }\n},\n{\n  { 61, 62 },\n  { 71, 72 },\n  { 81, 82 }\n},\n{\n  { 91, 92 },\n"
		      "  { 101, 102 },\n  { 111, 112 }\n}\n}");
	/* outer operation (2,1) + (1,3) */
	expect_result("ENTRY e {\n  a = f32[2,1] parameter(0)\n  b = f32[1,3] parameter(1)\n  ROOT r = add(a, b)\n}\n",
		      "f32[2,1] {{10},{20}} f32[1,3] {{1,2,3}}",
		      "f32[2,3] {\n  { 11, 12, 13 },\n  { 21, 22, 23 }\n}");
	/* doc/sources.md C in NumPy mode */
	expect_result("HloModule m, broadcast_mode=numpy\nENTRY e {\n  a = s32[4,3] parameter(0)\n"
		      "  b = s32[3] parameter(1)\n  ROOT r = add(a, b)\n}\n",
		      "s32[4,3] {{0,0,0},{10,10,10},{20,20,20},{30,30,30}} s32[3] {1,2,3}",
		      "s32[4,3] {\n  { 1, 2, 3 },\n  { 11, 12, 13 },\n  { 21, 22, 23 },\n  { 31, 32, 33 }\n}");
	expect_result("HloModule m, broadcast_mode=numpy\nENTRY e {\n  a = s32[4,1] parameter(0)\n"
		      "  b = s32[3] parameter(1)\n  ROOT r = add(a, b)\n}\n",
		      "s32[4,1] {{0},{10},{20},{30}} s32[3] {1,2,3}",
		      "s32[4,3] {\n  { 1, 2, 3 },\n  { 11, 12, 13 },\n  { 21, 22, 23 },\n  { 31, 32, 33 }\n}");
	/* size-0 dims: (1,0) + (2,1) -> (2,0), nothing to compute */
	prog p;
	hloi_literal *out = NULL;
	load(&p, "ENTRY e {\n  a = f32[1,0] parameter(0)\n  b = f32[2,1] parameter(1)\n  ROOT r = add(a, b)\n}\n");
	CU_ASSERT_EQUAL_FATAL(run_with(&p, "f32[1,0] {{}} f32[2,1] {{1},{2}}", 0, &out), HLOI_OK);
	CU_ASSERT_EQUAL(out->shape.rank, 2);
	CU_ASSERT_EQUAL(out->shape.dims[0], 2);
	CU_ASSERT_EQUAL(out->shape.dims[1], 0);
	CU_ASSERT_EQUAL(out->nbytes, 0);
	literal_destroy(out);
	unload(&p);
}

static void test_broadcast_and_compare(void)
{
	expect_result("ENTRY e {\n  a = f32[3] parameter(0)\n  ROOT r = f32[2,3] broadcast(a), dimensions={1}\n}\n",
		      "f32[3] {1,2,3}", "f32[2,3] {\n  { 1, 2, 3 },\n  { 1, 2, 3 }\n}");
	expect_result("ENTRY e {\n  a = f32[3] parameter(0)\n  ROOT r = f32[3,2] broadcast(a), dimensions={0}\n}\n",
		      "f32[3] {1,2,3}", "f32[3,2] {\n  { 1, 1 },\n  { 2, 2 },\n  { 3, 3 }\n}");
	/* size-1 stretching (extension) and a scalar constant */
	expect_result("ENTRY e {\n  a = s32[1,2] parameter(0)\n  b = s32[3,2] broadcast(a), dimensions={0,1}\n"
		      "  c = s32[] constant(5)\n  d = s32[3,2] broadcast(c), dimensions={}\n  ROOT r = multiply(b, d)\n}\n",
		      "s32[1,2] {{1,2}}", "s32[3,2] {\n  { 5, 10 },\n  { 5, 10 },\n  { 5, 10 }\n}");
	/* compare: IEEE by default, total order on request */
	expect_result("ENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
		      "  ROOT r = compare(a, b), direction=LT\n}\n",
		      "f32[4] {nan, -0, 1, -inf} f32[4] {1, 0, nan, 0}", "pred[4] {0, 0, 0, 1}");
	expect_result("ENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
		      "  ROOT r = compare(a, b), direction=LT, type=TOTALORDER\n}\n",
		      "f32[4] {nan, -0, 1, -inf} f32[4] {1, 0, nan, 0}", "pred[4] {0, 1, 1, 1}");
	expect_result("ENTRY e {\n  a = u8[3] parameter(0)\n  b = u8[] constant(128)\n"
		      "  ROOT r = compare(a, b), direction=GE\n}\n",
		      "u8[3] {0, 128, 255}", "pred[3] {0, 1, 1}");
	expect_result("ENTRY e {\n  a = s32[3] parameter(0)\n  z = s32[] constant(0)\n"
		      "  ROOT r = divide(a, z)\n}\n",
		      "s32[3] {5, -5, -2147483648}", "s32[3] {-1, -1, -1}");
	/* the root may be a parameter or a constant */
	expect_result("ENTRY e {\n  ROOT a = s32[2] parameter(0)\n}\n", "s32[2] {3, 4}", "s32[2] {3, 4}");
	expect_result("ENTRY e {\n  ROOT c = pred[] constant(true)\n}\n", NULL, "pred[] true");
}

/* Reads the raw buffer of an f32 literal. */
static void expect_f32_buffer(const hloi_literal *lit, const float *expect, size_t n)
{
	CU_ASSERT_EQUAL_FATAL(lit->nbytes, n * sizeof(float));
	const float *v = lit->data;
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(v[i], expect[i]);
		if (v[i] != expect[i])
			fprintf(stderr, "\nbuffer[%zu] = %g, expected %g\n", i, (double)v[i], (double)expect[i]);
	}
}

static void test_layouts(void)
{
	prog p;
	hloi_literal *out = NULL;
	/* column-major parameter and result: the input is relayouted */
	load(&p, "ENTRY e {\n  a = f32[2,3]{0,1} parameter(0)\n  b = f32[3] parameter(1)\n"
		 "  ROOT r = f32[2,3]{0,1} add(a, b), broadcast_dimensions={1}\n}\n");
	CU_ASSERT_EQUAL_FATAL(run_with(&p, "f32[2,3] {{1,2,3},{4,5,6}} f32[3] {10,20,30}", 0, &out), HLOI_OK);
	static const float colmajor[] = { 11, 14, 22, 25, 33, 36 };
	expect_f32_buffer(out, colmajor, 6);
	literal_destroy(out);
	/* an input already in the parameter's layout */
	CU_ASSERT_EQUAL_FATAL(run_with(&p, "f32[2,3]{0,1} {{1,2,3},{4,5,6}} f32[3] {10,20,30}", 0, &out), HLOI_OK);
	expect_f32_buffer(out, colmajor, 6);
	literal_destroy(out);
	unload(&p);

	/* doc/sources.md B: padded to [3,5], column-major */
	load(&p, "ENTRY e {\n  a = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n"
		 "  ROOT r = f32[2,3]{0,1:pad(3,5)} add(a, z)\n}\n");
	CU_ASSERT_EQUAL_FATAL(run_with(&p, "f32[2,3] {{1,2,3},{4,5,6}}", 0, &out), HLOI_OK);
	static const float padded[] = { 1, 4, 0, 2, 5, 0, 3, 6, 0, 0, 0, 0, 0, 0, 0 };
	expect_f32_buffer(out, padded, 15);
	literal_destroy(out);
	unload(&p);

	/* padval(one); a padded input read through its own layout */
	load(&p, "ENTRY e {\n  a = f32[2,3]{1,0:pad(2,4)} parameter(0)\n  b = f32[2,1] parameter(1)\n"
		 "  ROOT r = f32[2,3]{1,0:pad(3,3)padval(one)} multiply(a, b)\n}\n");
	CU_ASSERT_EQUAL_FATAL(run_with(&p, "f32[2,3] {{1,2,3},{4,5,6}} f32[2,1] {{2},{-1}}", 0, &out), HLOI_OK);
	static const float padval[] = { 2, 4, 6, -4, -5, -6, 1, 1, 1 };
	expect_f32_buffer(out, padval, 9);
	literal_destroy(out);
	unload(&p);

	/* a 3-D permuted layout on an operand of a broadcast */
	expect_result("ENTRY e {\n  a = s32[2,3]{0,1} parameter(0)\n"
		      "  ROOT r = s32[2,2,3]{1,0,2} broadcast(a), dimensions={1,2}\n}\n",
		      "s32[2,3] {{1,2,3},{4,5,6}}",
		      "s32[2,2,3] {\n{\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n},\n{\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n}\n}");
}

static void test_inputs(void)
{
	prog p;
	hloi_literal *out = NULL;
	load(&p, "ENTRY e {\n  x = f32[2,3] parameter(0)\n  y = f32[2,3] parameter(1)\n  ROOT r = add(x, y)\n}\n");
	CU_ASSERT_EQUAL(run_with(&p, "f32[2,3] {{1,2,3},{4,5,6}}", 0, &out), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(out);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(p.ctx), "expected 2 inputs, got 1");
	CU_ASSERT_EQUAL(run_with(&p, "f32[2,3] {{1,2,3},{4,5,6}} s32[3] {1,2,3}", 0, &out), HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(p.ctx),
			       "input 1 for parameter 'y' has shape s32[3], but the parameter is f32[2,3]");
	CU_ASSERT_EQUAL(run_with(&p, "f32[3,2] {{1,2},{3,4},{5,6}} f32[2,3] {{1,2,3},{4,5,6}}", 0, &out),
			HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(p.ctx),
			       "input 0 for parameter 'x' has shape f32[3,2], but the parameter is f32[2,3]");
	unload(&p);
}

/* A budget refusal says what the run needs in all and what the budget is. */
static void budget_error_is(prog *p, long need, long budget)
{
	const char *e = hloi_context_last_error(p->ctx);
	char a[64], b[64];
	snprintf(a, sizeof a, ": need %ld bytes (", need);
	snprintf(b, sizeof b, "), budget %ld bytes", budget);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_TRUE(strncmp(e, "memory budget exceeded at instruction '", 39) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e, a));
	CU_ASSERT_PTR_NOT_NULL(strstr(e, "16 of them inputs and constants"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e, b));
	if (!strstr(e, a) || !strstr(e, b))
		fprintf(stderr, "\n%s\n", e);
}

/* One budget: the 16 bytes of the f32[4] input count in it. */
static void test_memory_budget(void)
{
	prog p;
	hloi_literal *out = NULL;
	const hloi_engine ref = HLOI_ENGINE_REFERENCE, fast = HLOI_ENGINE_FAST;
	/* instruction by instruction (the reference engine), a chain runs in
	 * place: b and c take over a's buffer, so one intermediate is live at
	 * a time; fused (the fast engine), no intermediate exists at all */
	load(&p, "ENTRY e {\n  x = f32[4] parameter(0)\n  a = add(x, x)\n  b = add(a, a)\n"
		 "  ROOT c = add(b, b)\n}\n");
	for (int k = 0; k < 2; k++) {
		hloi_engine en = k ? fast : ref;
		CU_ASSERT_EQUAL(run_engine_with(&p, "f32[4] {1,2,3,4}", 32, en, &out), HLOI_OK);
		CU_ASSERT_EQUAL(out ? ((float *)out->data)[3] : 0, 32.0f);
		literal_destroy(out);
		out = NULL;
		CU_ASSERT_EQUAL(run_engine_with(&p, "f32[4] {1,2,3,4}", 31, en, &out), HLOI_ENOMEM);
		CU_ASSERT_PTR_NULL(out);
		budget_error_is(&p, 32, 31);
	}
	unload(&p);

	/* a is read again after b: two intermediates live at once, and c then
	 * takes over b's buffer (its last use); fused: only the result */
	load(&p, "ENTRY e {\n  x = f32[4] parameter(0)\n  a = add(x, x)\n  b = add(a, a)\n"
		 "  ROOT c = add(b, a)\n}\n");
	CU_ASSERT_EQUAL(run_engine_with(&p, "f32[4] {1,2,3,4}", 48, ref, &out), HLOI_OK);
	CU_ASSERT_EQUAL(out ? ((float *)out->data)[3] : 0, 24.0f);
	literal_destroy(out);
	out = NULL;
	CU_ASSERT_EQUAL(run_engine_with(&p, "f32[4] {1,2,3,4}", 47, ref, &out), HLOI_ENOMEM);
	budget_error_is(&p, 48, 47);
	CU_ASSERT_EQUAL(run_engine_with(&p, "f32[4] {1,2,3,4}", 32, fast, &out), HLOI_OK);
	CU_ASSERT_EQUAL(out ? ((float *)out->data)[3] : 0, 24.0f);
	literal_destroy(out);
	out = NULL;
	unload(&p);

	/* a layout change cannot run in place: a new buffer; fused, the
	 * intermediate's layout does not matter */
	load(&p, "ENTRY e {\n  x = f32[2,2] parameter(0)\n  a = f32[2,2]{1,0} add(x, x)\n"
		 "  ROOT b = f32[2,2]{0,1} add(a, a)\n}\n");
	CU_ASSERT_EQUAL(run_engine_with(&p, "f32[2,2] {{1,2},{3,4}}", 47, ref, &out), HLOI_ENOMEM);
	budget_error_is(&p, 48, 47);
	for (int k = 0; k < 2; k++) {
		CU_ASSERT_EQUAL(run_engine_with(&p, "f32[2,2] {{1,2},{3,4}}", k ? 32 : 48, k ? fast : ref, &out), HLOI_OK);
		CU_ASSERT_EQUAL(out ? ((float *)out->data)[1] : 0, 12.0f); /* {0,1}: element [1,0] = 4*3 */
		literal_destroy(out);
		out = NULL;
	}
	unload(&p);

	/* a relayouted input counts too */
	load(&p, "ENTRY e {\n  x = f32[2,2]{0,1} parameter(0)\n  ROOT a = add(x, x)\n}\n");
	for (int k = 0; k < 2; k++) {
		CU_ASSERT_EQUAL(run_engine_with(&p, "f32[2,2] {{1,2},{3,4}}", 36, k ? fast : ref, &out), HLOI_ENOMEM);
		budget_error_is(&p, 48, 36);
	}
	unload(&p);

	/* the inputs alone over the budget: refused before anything runs */
	load(&p, "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT a = add(x, x)\n}\n");
	CU_ASSERT_EQUAL(run_engine_with(&p, "f32[4] {1,2,3,4}", 15, ref, &out), HLOI_ENOMEM);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(p.ctx) ? hloi_context_last_error(p.ctx) : "",
			       "memory budget exceeded: the inputs hold 16 bytes and the constants 0 bytes, budget 15 bytes");
	unload(&p);
}

/* Allocations of one run of p on inputs `in` (the reference engine: the
 * fast one also allocates per-thread tiles). */
static long run_allocs(prog *p, hloi_literal **in, size_t n)
{
	hloi_literal *out = NULL;
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.engine = HLOI_ENGINE_REFERENCE;
	long before = alloc_count();
	CU_ASSERT_EQUAL(eval_module(p->m, p->ctx, in, n, &o, &out), HLOI_OK);
	long used = alloc_count() - before;
	literal_destroy(out);
	return used;
}

static void test_buffer_reuse(void)
{
	/* Layout changes cannot run in place, but a freed intermediate's
	 * buffer is reused by the next value of its size: a longer chain
	 * allocates nothing more. */
	const char *head = "ENTRY e {\n  x = f32[128,128] parameter(0)\n  a = f32[128,128]{1,0} add(x, x)\n"
			   "  b = f32[128,128]{0,1} add(a, a)\n";
	char text3[512], text4[512];
	snprintf(text3, sizeof text3, "%s  ROOT c = f32[128,128]{1,0} multiply(b, b)\n}\n", head);
	snprintf(text4, sizeof text4,
		 "%s  c = f32[128,128]{1,0} multiply(b, b)\n  ROOT d = f32[128,128]{0,1} subtract(c, x)\n}\n", head);
	prog p3, p4;
	load(&p3, text3);
	load(&p4, text4);
	hloi_literal **in = NULL;
	size_t n = 0;
	CU_ASSERT_EQUAL_FATAL(eval_random_inputs(&in, &n, p3.m, p3.ctx, 1), HLOI_OK);
	long a3 = run_allocs(&p3, in, n), a4 = run_allocs(&p4, in, n);
	CU_ASSERT(a3 > 0);
	CU_ASSERT_EQUAL(a4, a3);
	/* and the values are right: d[i,j] = (4x)^2 - x */
	hloi_literal *out = NULL;
	CU_ASSERT_EQUAL_FATAL(eval_module(p4.m, p4.ctx, in, n, NULL, &out), HLOI_OK);
	int64_t idx[2] = { 5, 77 };
	float x = *(const float *)literal_element(in[0], idx), d = *(const float *)literal_element(out, idx);
	CU_ASSERT_EQUAL(d, (4 * x) * (4 * x) - x);
	literal_destroy(out);
	hloi_literal_array_free(in, n);
	unload(&p3);
	unload(&p4);
}

/* The pool kept from one run for the next: the second run takes the
 * first one's freed buffers (fewer allocations), with the same values and
 * the same peak; a later run under a budget that leaves no room for them
 * still runs. */
static void test_buffer_pool(void)
{
	prog p;
	load(&p, "ENTRY e {\n  x = f32[128,128] parameter(0)\n  a = f32[128,128]{1,0} add(x, x)\n"
		 "  b = f32[128,128]{0,1} add(a, a)\n  c = f32[128,128]{1,0} multiply(b, b)\n"
		 "  ROOT d = f32[128,128]{0,1} subtract(c, x)\n}\n");
	hloi_literal **in = NULL, *out1 = NULL, *out2 = NULL, *out3 = NULL;
	size_t n = 0;
	CU_ASSERT_EQUAL_FATAL(eval_random_inputs(&in, &n, p.m, p.ctx, 1), HLOI_OK);
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.engine = HLOI_ENGINE_REFERENCE;
	eval_stats s1, s2, s3;
	CU_ASSERT_PTR_NULL(atomic_load(&p.m->kept));
	long before = alloc_count();
	CU_ASSERT_EQUAL_FATAL(eval_module_tuned(p.m, p.ctx, in, n, &o, NULL, NULL, &out1, &s1), HLOI_OK);
	long a1 = alloc_count() - before;
	CU_ASSERT_PTR_NOT_NULL(atomic_load(&p.m->kept));
	before = alloc_count();
	CU_ASSERT_EQUAL_FATAL(eval_module_tuned(p.m, p.ctx, in, n, &o, NULL, NULL, &out2, &s2), HLOI_OK);
	long a2 = alloc_count() - before;
	CU_ASSERT(a2 < a1);
	CU_ASSERT_EQUAL(s1.peak_bytes, s2.peak_bytes);
	CU_ASSERT_EQUAL(memcmp(out1->data, out2->data, out1->nbytes), 0);
	/* a budget of the inputs and three values: the kept arrays give way */
	o.max_memory = 4 * 65536;
	CU_ASSERT_EQUAL(eval_module_tuned(p.m, p.ctx, in, n, &o, NULL, NULL, &out3, &s3), HLOI_OK);
	if (out3)
		CU_ASSERT_EQUAL(memcmp(out1->data, out3->data, out1->nbytes), 0);
	literal_destroy(out1);
	literal_destroy(out2);
	literal_destroy(out3);
	hloi_literal_array_free(in, n);
	unload(&p);
}

/* Spare arrays across sizes and tuples: a batch-norm's tuple gives its
 * arrays back one by one, values of sizes no spare array has take one of
 * another size; each run (the first, and those that take the previous
 * run's arrays) gives the values of a run of a freshly loaded module, on
 * both engines, with the same peak. */
static void test_buffer_pool_sizes(void)
{
	static const char text[] =
		"ENTRY e {\n  x = f32[4,8,32,32] parameter(0)\n  s = f32[8] parameter(1)\n  o = f32[8] parameter(2)\n"
		"  bn = (f32[4,8,32,32], f32[8], f32[8]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1\n"
		"  y = f32[4,8,32,32] get-tuple-element(bn), index=0\n  m = f32[8] get-tuple-element(bn), index=1\n"
		"  a = f32[4,8,32,32]{2,3,1,0} add(y, x)\n"
		"  t = f32[4,8,32,24] slice(a), slice={[0:4],[0:8],[0:32],[0:24]}\n"
		"  u = f32[4,8,32,24]{2,3,1,0} multiply(t, t)\n"
		"  bn2 = (f32[4,8,32,24], f32[8], f32[8]) batch-norm-training(u, s, o), epsilon=0.001, feature_index=1\n"
		"  v = f32[4,8,32,24] get-tuple-element(bn2), index=0\n"
		"  c = f32[4,8,64,32] concatenate(a, a), dimensions={2}\n"
		"  w = f32[4,8,64,32]{2,3,1,0} negate(c)\n"
		"  ROOT r = (f32[4,8,32,24], f32[4,8,64,32], f32[8]) tuple(v, w, m)\n}\n";
	for (int engine = 0; engine < 2; engine++) {
		prog p, q;
		load(&p, text);
		load(&q, text);
		hloi_literal **in = NULL, *ref = NULL;
		size_t n = 0;
		CU_ASSERT_EQUAL_FATAL(eval_random_inputs(&in, &n, p.m, p.ctx, 3), HLOI_OK);
		hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
		o.engine = engine ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_FAST;
		eval_stats s0, s;
		CU_ASSERT_EQUAL_FATAL(eval_module_tuned(q.m, q.ctx, in, n, &o, NULL, NULL, &ref, &s0), HLOI_OK);
		for (int run = 0; run < 3; run++) {
			hloi_literal *out = NULL;
			CU_ASSERT_EQUAL_FATAL(eval_module_tuned(p.m, p.ctx, in, n, &o, NULL, NULL, &out, &s), HLOI_OK);
			CU_ASSERT_EQUAL(s.peak_bytes, s0.peak_bytes);
			CU_ASSERT_EQUAL_FATAL(out->nelems, 3);
			for (int k = 0; k < 3; k++)
				CU_ASSERT(out->elems[k]->nbytes == ref->elems[k]->nbytes &&
					  memcmp(out->elems[k]->data, ref->elems[k]->data, ref->elems[k]->nbytes) == 0);
			literal_destroy(out);
		}
		literal_destroy(ref);
		hloi_literal_array_free(in, n);
		unload(&p);
		unload(&q);
	}
}

static void test_run_into(void)
{
	prog p;
	hloi_literal **in = NULL, *out = NULL;
	size_t n = 0;
	load(&p, "ENTRY e {\n  x = f32[2,3] parameter(0)\n  y = f32[3] parameter(1)\n"
		 "  ROOT r = f32[2,3] add(x, y), broadcast_dimensions={1}\n}\n");
	CU_ASSERT_EQUAL_FATAL(hloi_literal_parse_list(&in, &n, p.ctx, "in", "f32[2,3] {{1,2,3},{4,5,6}} f32[3] {10,20,30}",
						      strlen("f32[2,3] {{1,2,3},{4,5,6}} f32[3] {10,20,30}")),
			      HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(eval_module(p.m, p.ctx, in, n, NULL, &out), HLOI_OK);
	void *buf = out->data;
	memset(out->data, 0, out->nbytes);
	CU_ASSERT_EQUAL(hloi_module_run_into(p.m, p.ctx, in, n, NULL, out), HLOI_OK);
	CU_ASSERT_PTR_EQUAL(out->data, buf); /* the same buffer, written again */
	CU_ASSERT_EQUAL(((float *)out->data)[0], 11.0f);
	CU_ASSERT_EQUAL(((float *)out->data)[5], 36.0f);
	/* misuse: another shape, a buffer shared with an input */
	hloi_literal *wrong = NULL;
	hloi_shape *ws = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_shape_parse(&ws, p.ctx, "s", "f32[3,2]"), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(literal_create(&wrong, ws), HLOI_OK);
	hloi_shape_free(ws);
	CU_ASSERT_EQUAL(hloi_module_run_into(p.m, p.ctx, in, n, NULL, wrong), HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(p.ctx),
			       "the result literal is f32[3,2]{1,0}, but the module's result is f32[2,3]{1,0}");
	CU_ASSERT_EQUAL(hloi_module_run_into(p.m, p.ctx, in, n, NULL, in[0]), HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(p.ctx), "the result literal shares its buffer with input 0");
	literal_destroy(wrong);
	literal_destroy(out);
	hloi_literal_array_free(in, n);
	unload(&p);

	/* a module that aliases its result to an input refuses */
	load(&p, "HloModule m, input_output_alias={ {}: (0, {}, must-alias) }\n"
		 "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] add(x, x)\n}\n");
	CU_ASSERT_EQUAL_FATAL(hloi_literal_parse_list(&in, &n, p.ctx, "in", "f32[2] {1,2}", strlen("f32[2] {1,2}")),
			      HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(literal_create(&out, p.m->entry->root->result), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_module_run_into(p.m, p.ctx, in, n, NULL, out), HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(p.ctx),
			       "the module writes its result into input 0 (input_output_alias); run it without a result literal");
	literal_destroy(out);
	hloi_literal_array_free(in, n);
	unload(&p);
}

/* An input converted to its parameter's layout once: the copy is in the
 * parameter's layout with the same values, and runs on it as on the input. */
static void test_conform_input(void)
{
	prog p;
	hloi_literal **in = NULL, *c = NULL, *out = NULL, *out2 = NULL;
	size_t n = 0;
	const char *text = "f32[2,3] {{1,2,3},{4,5,6}} f32[3] {10,20,30}";
	load(&p, "ENTRY e {\n  x = f32[2,3]{0,1} parameter(0)\n  y = f32[3] parameter(1)\n"
		 "  ROOT r = f32[2,3] add(x, y), broadcast_dimensions={1}\n}\n");
	CU_ASSERT_EQUAL_FATAL(hloi_literal_parse_list(&in, &n, p.ctx, "in", text, strlen(text)), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_module_conform_input(p.m, p.ctx, 0, in[0], NULL, &c), HLOI_OK);
	CU_ASSERT_TRUE(layout_equal(&c->shape.layout, &p.m->entry->params[0]->result->layout));
	static const float colmajor[] = { 1, 4, 2, 5, 3, 6 };
	expect_f32_buffer(c, colmajor, 6);
	CU_ASSERT_EQUAL_FATAL(eval_module(p.m, p.ctx, in, n, NULL, &out), HLOI_OK);
	hloi_literal_free(in[0]);
	in[0] = c;
	CU_ASSERT_EQUAL_FATAL(eval_module(p.m, p.ctx, in, n, NULL, &out2), HLOI_OK);
	CU_ASSERT_EQUAL(memcmp(out->data, out2->data, out->nbytes), 0);
	/* already in its layout: a plain copy */
	CU_ASSERT_EQUAL_FATAL(hloi_module_conform_input(p.m, p.ctx, 1, in[1], NULL, &c), HLOI_OK);
	CU_ASSERT_PTR_NOT_EQUAL(c->data, in[1]->data);
	CU_ASSERT_EQUAL(memcmp(c->data, in[1]->data, c->nbytes), 0);
	hloi_literal_free(c);
	/* misuse: no such parameter, another shape */
	CU_ASSERT_EQUAL(hloi_module_conform_input(p.m, p.ctx, 2, in[1], NULL, &c), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(p.ctx), "input 2: the module has no such parameter");
	CU_ASSERT_EQUAL(hloi_module_conform_input(p.m, p.ctx, 0, in[1], NULL, &c), HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(p.ctx),
			       "input 0: not an input of the parameter's type and dimensions");
	literal_destroy(out);
	literal_destroy(out2);
	hloi_literal_array_free(in, n);
	unload(&p);
}

static void test_elided_constant(void)
{
	prog p;
	hloi_literal *out = NULL;
	load(&p, "ENTRY e {\n  x = f32[3] parameter(0)\n  c = f32[3] constant({...})\n  ROOT r = add(x, c)\n}\n");
	CU_ASSERT_EQUAL(run_with(&p, "f32[3] {1,2,3}", 0, &out), HLOI_EUNSUPPORTED);
	CU_ASSERT_PTR_NULL(out);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(p.ctx),
			       "constant 'c' is elided ({...}) and cannot be evaluated; --random-inputs fills it with random values");
	unload(&p);
}

/* hloi_module_fill_elided_constants: constant k (module order, from 1)
 * draws hloi_literal_random's values from seed ^ (0xD1B54A32D192ED03 * k);
 * both engines then run on them. */
static void test_fill_elided_constants(void)
{
	prog p;
	size_t filled = 99;
	load(&p, "ENTRY e {\n  x = f32[3] parameter(0)\n  k = f32[3] constant({1, 2, 3})\n"
		 "  c = f32[3] constant({...})\n  s = add(x, k)\n  ROOT r = add(s, c)\n}\n");
	CU_ASSERT_EQUAL_FATAL(hloi_module_fill_elided_constants(p.m, p.ctx, 5, &filled), HLOI_OK);
	CU_ASSERT_EQUAL(filled, 1);
	hloi_literal *want = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_literal_random(&want, p.ctx, p.m->entry->instrs[2]->result,
						  5 ^ (0xD1B54A32D192ED03ull * 2)), HLOI_OK);
	const float *w = want->data;
	for (int engine = 0; engine < 2; engine++) {
		hloi_literal *out = NULL;
		CU_ASSERT_EQUAL_FATAL(run_engine_with(&p, "f32[3] {-1, -2, -3}", 0,
						      engine ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_FAST, &out), HLOI_OK);
		const float *g = out->data;
		for (int i = 0; i < 3; i++)
			CU_ASSERT_EQUAL(g[i], w[i]);
		literal_destroy(out);
	}
	/* filled once: nothing is left to fill */
	CU_ASSERT_EQUAL(hloi_module_fill_elided_constants(p.m, p.ctx, 5, &filled), HLOI_OK);
	CU_ASSERT_EQUAL(filled, 0);
	literal_destroy(want);
	unload(&p);
}

static void test_random_inputs(void)
{
	prog p;
	load(&p, "ENTRY e {\n  a = f32[40] parameter(0)\n  b = s8[40] parameter(1)\n  c = u64[40] parameter(2)\n"
		 "  d = pred[40] parameter(3)\n  e = bf16[2,20]{0,1} parameter(4)\n  ROOT r = add(a, a)\n}\n");
	hloi_literal **x = NULL, **y = NULL, **z = NULL;
	size_t nx, ny, nz;
	CU_ASSERT_EQUAL_FATAL(eval_random_inputs(&x, &nx, p.m, p.ctx, 42), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(eval_random_inputs(&y, &ny, p.m, p.ctx, 42), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(eval_random_inputs(&z, &nz, p.m, p.ctx, 7), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(nx, 5);
	CU_ASSERT_EQUAL(ny, 5);
	int same_seed = 1, other_seed = 1;
	for (size_t i = 0; i < nx; i++) {
		same_seed &= memcmp(x[i]->data, y[i]->data, x[i]->nbytes) == 0;
		other_seed &= memcmp(x[i]->data, z[i]->data, x[i]->nbytes) == 0;
	}
	CU_ASSERT_TRUE(same_seed);
	CU_ASSERT_FALSE(other_seed);
	const float *f = x[0]->data;
	const int8_t *s = x[1]->data;
	const uint64_t *u = x[2]->data;
	const uint8_t *b = x[3]->data;
	int trues = 0, negs = 0;
	for (int i = 0; i < 40; i++) {
		CU_ASSERT_TRUE(f[i] >= -8.0f && f[i] < 8.0f);
		CU_ASSERT_EQUAL(f[i] * 8.0f, floorf(f[i] * 8.0f));
		CU_ASSERT_TRUE(s[i] >= -8 && s[i] <= 8);
		CU_ASSERT_TRUE(u[i] <= 16);
		CU_ASSERT_TRUE(b[i] <= 1);
		trues += b[i];
		negs += s[i] < 0;
	}
	CU_ASSERT_TRUE(trues > 5 && trues < 35);
	CU_ASSERT_TRUE(negs > 5 && negs < 35);
	CU_ASSERT_STRING_EQUAL(etype_name(x[4]->shape.type), "bf16");
	CU_ASSERT_EQUAL(x[4]->shape.layout.minor_to_major[0], 0);
	const uint16_t *h = x[4]->data;
	for (int i = 0; i < 40; i++) {
		float v = bf16_to_f32(h[i]);
		CU_ASSERT_TRUE(v >= -8.0f && v < 8.0f && v * 8.0f == floorf(v * 8.0f));
	}
	hloi_literal_array_free(x, nx);
	hloi_literal_array_free(y, ny);
	hloi_literal_array_free(z, nz);
	unload(&p);
}

/* Every (op, evaluated type) pair through the engine equals the scalar
 * function applied directly: the dispatch tables cover each pair. */
typedef void (*expect_fn)(void *o, const void *a, const void *b);
#define EXPECT_FN(OPC, fn, E, T)                                               \
	static void ex_##fn##_##E(void *o, const void *a, const void *b)       \
	{                                                                      \
		T x, y, r;                                                     \
		memcpy(&x, a, sizeof x);                                       \
		memcpy(&y, b, sizeof y);                                       \
		r = sc_##fn##_##E(x, y);                                       \
		memcpy(o, &r, sizeof r);                                       \
	}
#define ROW_EVAL(E, T, kind) SC_OPS_##kind(EXPECT_FN, E, T)
#define ROW_NOEVAL(E, T, kind)
#define X(E, name, num, width, kind, ctype, ev, npy) ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X
#undef ROW_EVAL

static const struct {
	opcode op;
	etype t;
	expect_fn fn;
} pairs[] = {
#define PAIR(OPC, fn, E, T) { OP_##OPC, ET_##E, ex_##fn##_##E },
#define ROW_EVAL(E, T, kind) SC_OPS_##kind(PAIR, E, T)
#define X(E, name, num, width, kind, ctype, ev, npy) ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X
#undef ROW_EVAL
};

static void fill_bytes(hloi_literal *lit, uint64_t *state)
{
	unsigned char *p = lit->data;
	for (size_t i = 0; i < lit->nbytes; i++) {
		*state = *state * 6364136223846793005ull + 1442695040888963407ull;
		unsigned char v = (unsigned char)(*state >> 56);
		/* small values for some bytes so that edge cases (0, 1, -1) occur */
		p[i] = (i % 3 == 0) ? (unsigned char)(v % 3) : v;
	}
}

static void test_dispatch(void)
{
	uint64_t state = 1;
	size_t npairs = sizeof pairs / sizeof *pairs;
	/* pred; 14 integer types x 15 ops (mulhi too); 13 float types x 9; c64, c128 x 6 */
	CU_ASSERT_EQUAL(npairs, 7 + 14 * 15 + 13 * 9 + 2 * 6);
	for (size_t i = 0; i < npairs; i++) {
		const char *tn = etype_name(pairs[i].t), *on = opcode_name(pairs[i].op);
		char text[256];
		snprintf(text, sizeof text,
			 "ENTRY e {\n  a = %s[16] parameter(0)\n  b = %s[16] parameter(1)\n  ROOT r = %s(a, b)\n}\n",
			 tn, tn, on);
		prog p;
		load(&p, text);
		hloi_literal *in[2], *out = NULL;
		for (int k = 0; k < 2; k++) {
			CU_ASSERT_FATAL(literal_create(&in[k], p.m->entry->params[k]->result) == HLOI_OK);
			fill_bytes(in[k], &state);
		}
		hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
		CU_ASSERT_EQUAL_FATAL(eval_module(p.m, p.ctx, in, 2, &o, &out), HLOI_OK);
		size_t w = (size_t)etype_byte_width(pairs[i].t);
		int same = 1;
		for (size_t j = 0; j < 16; j++) {
			unsigned char r[16];
			pairs[i].fn(r, (unsigned char *)in[0]->data + j * w, (unsigned char *)in[1]->data + j * w);
			same &= memcmp(r, (unsigned char *)out->data + j * w, w) == 0;
		}
		CU_ASSERT_TRUE(same);
		if (!same)
			fprintf(stderr, "\n%s on %s differs\n", on, tn);
		literal_destroy(in[0]);
		literal_destroy(in[1]);
		literal_destroy(out);
		unload(&p);
	}
}

/* Every allocation failing in turn inside check and run: a clean
 * HLOI_ENOMEM each time, never a crash or a leak (ASan checks leaks). */
static void test_allocation_failures(void)
{
	const char *text = "ENTRY e {\n  a = f32[2,3]{0,1} parameter(0)\n  c = f32[3] constant({1, 2, 3})\n"
			   "  b = f32[2,3] broadcast(c), dimensions={1}\n  d = add(a, b)\n"
			   "  ROOT r = f32[2,3]{0,1:pad(3,4)} multiply(d, c), broadcast_dimensions={1}\n}\n";
	int succeeded = 0;
	for (long n = 0; n < 200 && !succeeded; n++) {
		hloi_context *ctx = NULL;
		module *m = NULL;
		hloi_literal **in = NULL, *out = NULL;
		size_t nin = 0;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		CU_ASSERT_FATAL(text_parse_module(&m, ctx, "t.hlo", text, strlen(text)) == HLOI_OK);
		alloc_fail_after(n);
		hloi_status st = check_module(m, ctx, NULL);
		if (st == HLOI_OK)
			st = eval_random_inputs(&in, &nin, m, ctx, 1);
		if (st == HLOI_OK) {
			hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
			st = eval_module(m, ctx, in, nin, &o, &out);
		}
		alloc_fail_after(-1);
		CU_ASSERT(st == HLOI_OK || st == HLOI_ENOMEM);
		if (st == HLOI_OK) {
			succeeded = 1;
			CU_ASSERT_PTR_NOT_NULL(out);
		} else {
			CU_ASSERT_PTR_NULL(out);
		}
		literal_destroy(out);
		hloi_literal_array_free(in, nin);
		module_destroy(m);
		hloi_context_free(ctx);
	}
	CU_ASSERT_TRUE(succeeded);
}

/* --- convert, data-movement ops, calls, in-place results (issue 3) ---------------- */

static void test_convert_scalar(void)
{
	uint8_t b[8];
	float f = f32b(F32_NAN);
	/* float -> int saturates, NaN -> 0 */
	int32_t i32;
	sc_convert(ET_S32, &i32, ET_F32, &f);
	CU_ASSERT_EQUAL(i32, 0);
	f = 3e9f;
	sc_convert(ET_S32, &i32, ET_F32, &f);
	CU_ASSERT_EQUAL(i32, INT32_MAX);
	f = -3e9f;
	sc_convert(ET_S32, &i32, ET_F32, &f);
	CU_ASSERT_EQUAL(i32, INT32_MIN);
	f = -2.9f;
	sc_convert(ET_S32, &i32, ET_F32, &f);
	CU_ASSERT_EQUAL(i32, -2);
	double d = 1e30;
	uint64_t u64;
	sc_convert(ET_U64, &u64, ET_F64, &d);
	CU_ASSERT_EQUAL(u64, UINT64_MAX);
	d = -1;
	sc_convert(ET_U64, &u64, ET_F64, &d);
	CU_ASSERT_EQUAL(u64, 0);
	d = 9223372036854775808.0;  /* 2^63 */
	int64_t i64;
	sc_convert(ET_S64, &i64, ET_F64, &d);
	CU_ASSERT_EQUAL(i64, INT64_MAX);
	/* anything -> pred is != 0 */
	f = f32b(F32_NZERO);
	sc_convert(ET_PRED, b, ET_F32, &f);
	CU_ASSERT_EQUAL(b[0], 0);
	f = f32b(F32_NNAN);
	sc_convert(ET_PRED, b, ET_F32, &f);
	CU_ASSERT_EQUAL(b[0], 1);
	int8_t s8 = -128;
	sc_convert(ET_PRED, b, ET_S8, &s8);
	CU_ASSERT_EQUAL(b[0], 1);
	/* integer narrowing wraps; widening extends by signedness */
	int32_t big = 300;
	sc_convert(ET_S8, &s8, ET_S32, &big);
	CU_ASSERT_EQUAL(s8, 44);
	uint8_t u8 = 255;
	sc_convert(ET_S64, &i64, ET_U8, &u8);
	CU_ASSERT_EQUAL(i64, 255);
	s8 = -1;
	uint32_t u32;
	sc_convert(ET_U32, &u32, ET_S8, &s8);
	CU_ASSERT_EQUAL(u32, UINT32_MAX);
	/* to floats: one rounding, ties to even; u64 max */
	i32 = 16777217;
	sc_convert(ET_F32, &f, ET_S32, &i32);
	CU_ASSERT_EQUAL(bf32(f), bf32(16777216.0f));
	u64 = UINT64_MAX;
	sc_convert(ET_F32, &f, ET_U64, &u64);
	CU_ASSERT_EQUAL(bf32(f), bf32(18446744073709551616.0f));
	uint16_t h;
	i32 = 2049;
	sc_convert(ET_F16, &h, ET_S32, &i32);
	CU_ASSERT_EQUAL(h, f32_to_f16(2048.0f));
	f = 1.00390625f;  /* 1 + 2^-8: a bf16 tie */
	sc_convert(ET_BF16, &h, ET_F32, &f);
	CU_ASSERT_EQUAL(h, 0x3F80);
	uint8_t t = 1;
	sc_convert(ET_F64, &d, ET_PRED, &t);
	CU_ASSERT_EQUAL(d, 1.0);
}

/* --- the new types' scalar semantics ------------------------------------------ */

static void test_subbyte_scalars(void)
{
	/* s4: wraps at 4 bits; division, remainder and shifts at width 4 */
	CU_ASSERT_EQUAL(sc_add_S4(7, 1), -8);
	CU_ASSERT_EQUAL(sc_subtract_S4(-8, 1), 7);
	CU_ASSERT_EQUAL(sc_multiply_S4(-8, -1), -8);
	CU_ASSERT_EQUAL(sc_divide_S4(-8, -1), -8);
	CU_ASSERT_EQUAL(sc_divide_S4(5, 0), -1);
	CU_ASSERT_EQUAL(sc_remainder_S4(-8, -1), 0);
	CU_ASSERT_EQUAL(sc_remainder_S4(-7, 0), -7);
	CU_ASSERT_EQUAL(sc_shift_left_S4(1, 3), -8);
	CU_ASSERT_EQUAL(sc_shift_left_S4(1, 4), 0);
	CU_ASSERT_EQUAL(sc_shift_right_logical_S4(-8, 1), 4);   /* 1000 -> 0100 */
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_S4(-8, 1), -4);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_S4(-8, -1), -1); /* 15 >= 4: sign fill */
	CU_ASSERT_EQUAL(sc_power_S4(3, 3), -5);                  /* 27 = 0x1b -> 1011 */
	CU_ASSERT_EQUAL(sc_xor_S4(-1, 7), -8);
	CU_ASSERT_EQUAL(sc_compare_S4(-8, 7, CMP_LT, CMPT_SIGNED), 1);
	/* u4, u2, u1, s2, s1 */
	CU_ASSERT_EQUAL(sc_add_U4(15, 1), 0);
	CU_ASSERT_EQUAL(sc_divide_U4(3, 0), 15);
	CU_ASSERT_EQUAL(sc_subtract_U4(0, 1), 15);
	CU_ASSERT_EQUAL(sc_shift_right_arithmetic_U4(8, 1), 12);  /* the bits as two's complement */
	CU_ASSERT_EQUAL(sc_compare_U4(15, 1, CMP_GT, CMPT_UNSIGNED), 1);
	CU_ASSERT_EQUAL(sc_multiply_U2(3, 3), 1);
	CU_ASSERT_EQUAL(sc_add_U1(1, 1), 0);
	CU_ASSERT_EQUAL(sc_divide_U1(1, 0), 1);
	CU_ASSERT_EQUAL(sc_add_S2(1, 1), -2);
	CU_ASSERT_EQUAL(sc_divide_S2(-2, -1), -2);
	CU_ASSERT_EQUAL(sc_add_S1(-1, -1), 0);
	CU_ASSERT_EQUAL(sc_divide_S1(-1, 0), -1);
	CU_ASSERT_EQUAL(sc_compare_S1(-1, 0, CMP_LT, CMPT_SIGNED), 1);
	/* convert: integers wrap, floats saturate, at the bit width */
	int8_t s4;
	int32_t i = 9;
	sc_convert(ET_S4, &s4, ET_S32, &i);
	CU_ASSERT_EQUAL(s4, -7);
	float f = 100.0f;
	sc_convert(ET_S4, &s4, ET_F32, &f);
	CU_ASSERT_EQUAL(s4, 7);
	f = -9.5f;
	sc_convert(ET_S4, &s4, ET_F32, &f);
	CU_ASSERT_EQUAL(s4, -8);
	uint8_t u2;
	f = 7.0f;
	sc_convert(ET_U2, &u2, ET_F32, &f);
	CU_ASSERT_EQUAL(u2, 3);
	s4 = -1;
	uint8_t u4;
	sc_convert(ET_U4, &u4, ET_S4, &s4);
	CU_ASSERT_EQUAL(u4, 15);
	int64_t i64;
	sc_convert(ET_S64, &i64, ET_S4, &s4);
	CU_ASSERT_EQUAL(i64, -1);
}

static void test_small_float_scalars(void)
{
	/* computed in f32, rounded once */
	const f8_format *fn = f8_format_of(ET_F8E4M3FN), *e8 = f8_format_of(ET_F8E8M0FNU);
	uint8_t one = f8_from_f64(fn, 1.0), sixteenth = f8_from_f64(fn, 0.0625);
	CU_ASSERT_EQUAL(sc_add_F8E4M3FN(one, sixteenth), one);  /* tie -> even */
	CU_ASSERT_EQUAL(sc_add_F8E4M3FN(0x7e, 0x7e), 0x7f);       /* 896 -> NaN */
	CU_ASSERT_EQUAL(sc_multiply_F8E4M3FN(0xfe, 0x7e), 0xff);  /* -200704 -> -NaN */
	CU_ASSERT_EQUAL(sc_maximum_F8E4M3FN(0x80, 0x00), 0x00);   /* -0 < +0 */
	CU_ASSERT_EQUAL(sc_maximum_F8E4M3FN(0x7f, one), 0x7f);    /* NaN wins */
	CU_ASSERT_EQUAL(sc_power_F8E4M3FN(0x7f, 0x00), one);      /* NaN^0 = 1 */
	CU_ASSERT_EQUAL(sc_compare_F8E4M3FN(0x7f, 0x7f, CMP_EQ, CMPT_FLOAT), 0);
	CU_ASSERT_EQUAL(sc_compare_F8E4M3FN(0x7f, 0x7f, CMP_EQ, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F8E4M3FN(0x80, 0x00, CMP_LT, CMPT_TOTALORDER), 1);
	/* fnuz: one NaN (0x80), sorting first; no -0 */
	CU_ASSERT_EQUAL(sc_compare_F8E4M3FNUZ(0x80, 0xff, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_multiply_F8E4M3FNUZ(0xc0, 0x00), 0x00); /* -1 * 0 = +0 */
	CU_ASSERT_EQUAL(sc_subtract_F8E5M2FNUZ(0x40, 0x40), 0x00);
	/* e5m2 has infinities */
	CU_ASSERT_EQUAL(sc_add_F8E5M2(0x7b, 0x7b), 0x7c);
	CU_ASSERT_EQUAL(sc_subtract_F8E5M2(0x7c, 0x7c) & 0x7f, 0x7e); /* inf - inf: a NaN */
	/* e8m0: powers of two; 2 + 4 ties up to 8; 2 - 2 = 0 is NaN */
	uint8_t two = f8_from_f64(e8, 2), four = f8_from_f64(e8, 4);
	CU_ASSERT_EQUAL(sc_add_F8E8M0FNU(two, four), f8_from_f64(e8, 8));
	CU_ASSERT_EQUAL(sc_subtract_F8E8M0FNU(two, two), 0xff);
	CU_ASSERT_EQUAL(sc_divide_F8E8M0FNU(two, four), f8_from_f64(e8, 0.5));
	CU_ASSERT_EQUAL(sc_compare_F8E8M0FNU(0xff, two, CMP_GT, CMPT_TOTALORDER), 1);
	/* f4e2m1fn saturates */
	CU_ASSERT_EQUAL(sc_add_F4E2M1FN(0x07, 0x07), 0x07);
	CU_ASSERT_EQUAL(sc_multiply_F4E2M1FN(0x0f, 0x07), 0x0f);
	CU_ASSERT_EQUAL(sc_compare_F4E2M1FN(0x0f, 0x07, CMP_LT, CMPT_TOTALORDER), 1);
	CU_ASSERT_EQUAL(sc_compare_F4E2M1FN(0x08, 0x00, CMP_LT, CMPT_TOTALORDER), 1);
	/* converts: integers through f32; f16 <-> e5m2 by bits */
	uint8_t v;
	int64_t big = 16777217; /* f32 16777216, then e8m0 2^24 */
	sc_convert(ET_F8E8M0FNU, &v, ET_S64, &big);
	CU_ASSERT_EQUAL(v, 127 + 24);
	uint16_t h = 0x7d01;
	sc_convert(ET_F8E5M2, &v, ET_F16, &h);
	CU_ASSERT_EQUAL(v, 0x7f);
	v = 0x7d;
	sc_convert(ET_F16, &h, ET_F8E5M2, &v);
	CU_ASSERT_EQUAL(h, 0x7d00);
	v = 0x7d;
	uint8_t w;
	sc_convert(ET_F8E4M3FN, &w, ET_F8E5M2, &v); /* NaN: the quiet NaN */
	CU_ASSERT_EQUAL(w, 0x7f);
	int32_t i32;
	v = 0xfe; /* e8m0 2^127 */
	sc_convert(ET_S32, &i32, ET_F8E8M0FNU, &v);
	CU_ASSERT_EQUAL(i32, INT32_MAX);
}

typedef float _Complex c64_t;
typedef double _Complex c128_t;

static c64_t c64(float re, float im)
{
	return sc_make_C64(re, im);
}

static int c64_is(c64_t z, float re, float im)
{
	float p[2], q[2] = { re, im };
	memcpy(p, &z, sizeof p);
	return memcmp(p, q, sizeof p) == 0;
}

static void test_complex_scalars(void)
{
	CU_ASSERT(c64_is(sc_add_C64(c64(1, 2), c64(3, -4)), 4, -2));
	CU_ASSERT(c64_is(sc_subtract_C64(c64(1, 2), c64(3, -4)), -2, 6));
	CU_ASSERT(c64_is(sc_multiply_C64(c64(1.5f, 2.5f), c64(1.5f, 2.5f)), -4, 7.5f));
	CU_ASSERT(c64_is(sc_divide_C64(c64(4, -2), c64(1, 1)), 1, -3));
	/* Annex G: an infinite operand stays infinite */
	c64_t z = sc_multiply_C64(c64(INFINITY, NAN), c64(2, 3));
	CU_ASSERT(c64_is(z, INFINITY, INFINITY));
	z = sc_multiply_C64(c64(NAN, 0), c64(1, 0));
	CU_ASSERT(isnan(sc_re_C64(z)) && isnan(sc_im_C64(z)));
	/* power: 1^y = x^0 = 1; inf^a = inf (a > 0) or 0 (a < 0) */
	CU_ASSERT(c64_is(sc_power_C64(c64(1, 0), c64(NAN, NAN)), 1, 0));
	CU_ASSERT(c64_is(sc_power_C64(c64(NAN, 1), c64(0, -0.0f)), 1, 0));
	CU_ASSERT(c64_is(sc_power_C64(c64(INFINITY, -0.0f), c64(2, 0)), INFINITY, -0.0f));
	CU_ASSERT(c64_is(sc_power_C64(c64(INFINITY, 0), c64(-0.5f, 0)), 0, 0));
	z = sc_power_C64(c64(0, 1), c64(2, 0)); /* i^2 = -1 (cpowf: within a few ulp) */
	CU_ASSERT(fabsf(sc_re_C64(z) + 1) < 1e-6f && fabsf(sc_im_C64(z)) < 1e-6f);
	/* atan2(1, 0) = pi/2 - 0i */
	c128_t a = sc_atan2_C128(sc_make_C128(1, 0), sc_make_C128(0, 0));
	CU_ASSERT_DOUBLE_EQUAL(sc_re_C128(a), 1.5707963267948966, 1e-15);
	CU_ASSERT(sc_im_C128(a) == 0 && signbit(sc_im_C128(a)));
	/* compare: EQ/NE only, NaN unequal, -0 == +0 */
	CU_ASSERT_EQUAL(sc_compare_C64(c64(-0.0f, 0), c64(0, 0), CMP_EQ, CMPT_FLOAT), 1);
	CU_ASSERT_EQUAL(sc_compare_C64(c64(NAN, 0), c64(NAN, 0), CMP_NE, CMPT_FLOAT), 1);
	CU_ASSERT_EQUAL(sc_compare_C64(c64(1, 2), c64(1, 3), CMP_EQ, CMPT_FLOAT), 0);
	/* convert: parts round separately; real -> complex has imaginary 0 */
	c128_t w = sc_make_C128(0.1, 16777217.0);
	c64_t n;
	sc_convert(ET_C64, &n, ET_C128, &w);
	CU_ASSERT(c64_is(n, 0.1f, 16777216.0f));
	int64_t i = -3;
	sc_convert(ET_C64, &n, ET_S64, &i);
	CU_ASSERT(c64_is(n, -3, 0));
	uint8_t e = 0x7e; /* e4m3fn 448 */
	sc_convert(ET_C64, &n, ET_F8E4M3FN, &e);
	CU_ASSERT(c64_is(n, 448, 0));
	sc_convert(ET_C128, &w, ET_C64, &n);
	CU_ASSERT(sc_re_C128(w) == 448 && sc_im_C128(w) == 0);
}

/* One value list per type: the candidates both types hold exactly. */
static int holds(etype t, double v)
{
	etype_kind k = etype_get_kind(t);
	int bits = etype_bit_width(t);
	if (t == ET_PRED)
		return v == 0 || v == 1;
	if (k == KIND_SINT)
		return v == floor(v) && v >= -ldexp(1, bits - 1) && v < ldexp(1, bits - 1);
	if (k == KIND_UINT)
		return v == floor(v) && v >= 0 && v < ldexp(1, bits);
	const f8_format *f = f8_format_of(t);
	if (f)
		return f8_to_f64(f, f8_from_f64(f, v)) == v;
	return 1;
}

/* convert between every pair of evaluated types: values both types hold
 * exactly come through unchanged, compared (compare EQ) with the
 * destination's own literal of them; complex -> real is refused. */
static void test_convert_every_pair(void)
{
	static const char *const cands[] = { "0", "1", "-1", "2", "-2", "3", "0.5", "4", "6" };
	const int nc = (int)(sizeof cands / sizeof cands[0]);
	int pairs = 0, refused = 0, disjoint = 0;
	for (int a = 0; a < 64; a++) {
		etype st = (etype)a;
		if (!etype_name(st) || !etype_is_evaluated(st) || st == ET_TUPLE)
			continue;
		for (int b = 0; b < 64; b++) {
			etype dt = (etype)b;
			if (!etype_name(dt) || !etype_is_evaluated(dt) || dt == ET_TUPLE)
				continue;
			int sc = etype_get_kind(st) == KIND_COMPLEX, dc = etype_get_kind(dt) == KIND_COMPLEX;
			char src[256], dst[256], text[1024];
			size_t ls = 0, ld = 0;
			int n = 0;
			for (int k = 0; k < nc; k++) {
				double v = strtod(cands[k], NULL);
				if (!holds(st, v) || !holds(dt, v))
					continue;
				char sv[32], dv[32];
				if (st == ET_PRED)
					snprintf(sv, sizeof sv, "%s", v != 0 ? "true" : "false");
				else
					snprintf(sv, sizeof sv, sc ? "(%s, 0)" : "%s", cands[k]);
				if (dt == ET_PRED)
					snprintf(dv, sizeof dv, "%s", v != 0 ? "true" : "false");
				else
					snprintf(dv, sizeof dv, dc ? "(%s, 0)" : "%s", cands[k]);
				ls += (size_t)snprintf(src + ls, sizeof src - ls, "%s%s", n ? ", " : "", sv);
				ld += (size_t)snprintf(dst + ld, sizeof dst - ld, "%s%s", n ? ", " : "", dv);
				n++;
			}
			if (n == 0) {
				disjoint++; /* s1 {-1, 0} and f8e8m0fnu (positive) */
				continue;
			}
			snprintf(text, sizeof text,
				 "ENTRY e {\n  a = %s[%d] constant({%s})\n  c = %s[%d] convert(a)\n"
				 "  d = %s[%d] constant({%s})\n  ROOT r = pred[%d] compare(c, d), direction=EQ\n}\n",
				 etype_name(st), n, src, etype_name(dt), n, etype_name(dt), n, dst, n);
			prog p;
			CU_ASSERT_FATAL(hloi_context_new(&p.ctx) == HLOI_OK);
			p.m = NULL;
			hloi_status st1 = text_parse_module(&p.m, p.ctx, "t.hlo", text, strlen(text));
			CU_ASSERT_EQUAL(st1, HLOI_OK);
			if (st1 == HLOI_OK)
				st1 = check_module(p.m, p.ctx, NULL);
			if (sc && !dc) {
				CU_ASSERT_EQUAL(st1, HLOI_ETYPE);
				refused++;
				unload(&p);
				continue;
			}
			if (st1 != HLOI_OK) {
				hloi_context_print_diagnostics(p.ctx, stderr, 0);
				fprintf(stderr, "%s\n", text);
			}
			CU_ASSERT_EQUAL_FATAL(st1, HLOI_OK);
			hloi_literal *out = NULL;
			hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
			CU_ASSERT_EQUAL_FATAL(eval_module(p.m, p.ctx, NULL, 0, &o, &out), HLOI_OK);
			int all = 1;
			for (int k = 0; k < n; k++)
				all &= ((const uint8_t *)out->data)[k] == 1;
			CU_ASSERT(all);
			if (!all)
				fprintf(stderr, "\n%s -> %s differs:\n%s\n", etype_name(st), etype_name(dt), text);
			literal_destroy(out);
			unload(&p);
			pairs++;
		}
	}
	/* 30 evaluated types: 900 pairs; complex -> the 28 real types refused */
	CU_ASSERT_EQUAL(pairs + refused + disjoint, 30 * 30);
	CU_ASSERT_EQUAL(disjoint, 2);
	CU_ASSERT_EQUAL(refused, 2 * 28);
}

/* Random inputs for a tuple parameter: every element drawn, depth first,
 * the same values as the flattened parameters would get. */
static void test_random_tuple_inputs(void)
{
	prog p, q;
	hloi_literal **x = NULL, **y = NULL;
	size_t nx, ny;
	load(&p, "ENTRY e {\n  t = (s32[3], (f32[2], u8[])) parameter(0)\n  ROOT g = s32[3] get-tuple-element(t), index=0\n}\n");
	load(&q, "ENTRY e {\n  a = s32[3] parameter(0)\n  b = f32[2] parameter(1)\n  c = u8[] parameter(2)\n"
		 "  ROOT r = add(a, a)\n}\n");
	CU_ASSERT_EQUAL_FATAL(eval_random_inputs(&x, &nx, p.m, p.ctx, 42), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(eval_random_inputs(&y, &ny, q.m, q.ctx, 42), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(nx, 1);
	CU_ASSERT_EQUAL_FATAL(ny, 3);
	const hloi_literal *t = x[0];
	CU_ASSERT_EQUAL_FATAL(t->nelems, 2);
	CU_ASSERT_EQUAL(memcmp(t->elems[0]->data, y[0]->data, 12), 0);
	CU_ASSERT_EQUAL(memcmp(t->elems[1]->elems[0]->data, y[1]->data, 8), 0);
	CU_ASSERT_EQUAL(memcmp(t->elems[1]->elems[1]->data, y[2]->data, 1), 0);
	hloi_literal_array_free(x, nx);
	hloi_literal_array_free(y, ny);
	unload(&p);
	unload(&q);
}

static void test_data_ops(void)
{
	expect_result("ENTRY e {\n  ROOT i = s32[2,3]{0,1} iota(), iota_dimension=0\n}\n", NULL,
		      "s32[2,3] {\n  { 0, 0, 0 },\n  { 1, 1, 1 }\n}");
	expect_result("ENTRY e {\n  x = s32[2,3]{0,1} parameter(0)\n  ROOT r = s32[3,2] reshape(x)\n}\n",
		      "s32[2,3] {{1,2,3},{4,5,6}}", "s32[3,2] {\n  { 1, 2 },\n  { 3, 4 },\n  { 5, 6 }\n}");
	expect_result("ENTRY e {\n  x = s32[2,3] parameter(0)\n  ROOT r = s32[3,2] transpose(x), dimensions={1,0}\n}\n",
		      "s32[2,3] {{1,2,3},{4,5,6}}", "s32[3,2] {\n  { 1, 4 },\n  { 2, 5 },\n  { 3, 6 }\n}");
	expect_result("ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = u8[4] convert(x)\n}\n",
		      "f32[4] {nan, -1, 255.5, 1e10}", "u8[4] {0, 0, 255, 255}");
	expect_result("ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = u32[2] bitcast-convert(x)\n}\n",
		      "f32[2] {1, -2}", "u32[2] {1065353216, 3221225472}");
	expect_result("ENTRY e {\n  p = pred[3] parameter(0)\n  a = s32[3] parameter(1)\n  b = s32[3] parameter(2)\n"
		      "  ROOT r = select(p, a, b)\n}\n",
		      "pred[3] {1, 0, 1} s32[3] {1, 2, 3} s32[3] {-1, -2, -3}", "s32[3] {1, -2, 3}");
	expect_result("ENTRY e {\n  a = s32[] parameter(0)\n  b = f32[2] parameter(1)\n  t = tuple(a, b)\n"
		      "  g = f32[2] get-tuple-element(t), index=1\n  ROOT r = tuple(g, t)\n}\n",
		      "s32[] 7 f32[2] {1.5, 2}", "(\nf32[2] {1.5, 2},\n(\ns32[] 7,\nf32[2] {1.5, 2}\n)\n)");
	expect_result("sq {\n  p = f32[2] parameter(0)\n  ROOT m = f32[2] multiply(p, p)\n}\n"
		      "ENTRY e {\n  a = f32[2] parameter(0)\n  c = f32[2] call(a), to_apply=sq\n"
		      "  ROOT f = f32[2] fusion(c), kind=kLoop, calls=sq\n}\n",
		      "f32[2] {2, 3}", "f32[2] {16, 81}");
	/* a tuple-shaped parameter */
	expect_result("ENTRY e {\n  p = (f32[2], s32[]) parameter(0)\n  ROOT g = s32[] get-tuple-element(p), index=1\n}\n",
		      "(f32[2], s32[]) ({1, 2}, 9)", "s32[] 9");
	/* copy changes the layout of the buffer only */
	prog p;
	hloi_literal *out = NULL;
	load(&p, "ENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT c = f32[2,3]{0,1} copy(x)\n}\n");
	CU_ASSERT_EQUAL_FATAL(run_with(&p, "f32[2,3] {{1,2,3},{4,5,6}}", 0, &out), HLOI_OK);
	static const float colmajor[] = { 1, 4, 2, 5, 3, 6 };
	expect_f32_buffer(out, colmajor, 6);
	literal_destroy(out);
	unload(&p);
}

/* input_output_alias: the result is the parameter's buffer. */
static void test_in_place(void)
{
	prog p;
	hloi_literal **in = NULL, *out = NULL;
	size_t n = 0;
	load(&p, "HloModule m, input_output_alias={ {}: (0, {}, must-alias) }, broadcast_mode=numpy\n"
		 "ENTRY e {\n  x = f32[2,3] parameter(0)\n  y = f32[3] parameter(1)\n  ROOT r = add(x, y)\n}\n");
	CU_ASSERT_EQUAL(hloi_module_aliased_input(p.m), 0);
	const char *text = "f32[2,3] {{1,2,3},{4,5,6}} f32[3] {10,20,30}";
	CU_ASSERT_EQUAL_FATAL(hloi_literal_parse_list(&in, &n, p.ctx, "in", text, strlen(text)), HLOI_OK);
	void *buf = in[0]->data;
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	CU_ASSERT_EQUAL_FATAL(eval_module(p.m, p.ctx, in, n, &o, &out), HLOI_OK);
	/* same buffer, moved into the result; the input no longer holds it */
	CU_ASSERT_PTR_EQUAL(out->data, buf);
	CU_ASSERT_PTR_NULL(in[0]->data);
	static const float sum[] = { 11, 22, 33, 14, 25, 36 };
	expect_f32_buffer(out, sum, 6);
	literal_destroy(out);
	out = NULL;
	/* running again on the moved-from input is an error, not a crash */
	CU_ASSERT_EQUAL(eval_module(p.m, p.ctx, in, n, &o, &out), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(out);
	hloi_literal_array_free(in, n);
	/* the reference engine does the same */
	CU_ASSERT_EQUAL_FATAL(hloi_literal_parse_list(&in, &n, p.ctx, "in", text, strlen(text)), HLOI_OK);
	buf = in[0]->data;
	o.engine = HLOI_ENGINE_REFERENCE;
	CU_ASSERT_EQUAL_FATAL(eval_module(p.m, p.ctx, in, n, &o, &out), HLOI_OK);
	CU_ASSERT_PTR_EQUAL(out->data, buf);
	expect_f32_buffer(out, sum, 6);
	literal_destroy(out);
	hloi_literal_array_free(in, n);
	/* an input in another layout: its converted copy becomes the result and
	 * the caller's input stays as it was */
	const char *cm = "f32[2,3]{0,1} {{1,2,3},{4,5,6}} f32[3] {10,20,30}";
	CU_ASSERT_EQUAL_FATAL(hloi_literal_parse_list(&in, &n, p.ctx, "in", cm, strlen(cm)), HLOI_OK);
	buf = in[0]->data;
	CU_ASSERT_EQUAL_FATAL(eval_module(p.m, p.ctx, in, n, &o, &out), HLOI_OK);
	CU_ASSERT_PTR_NOT_EQUAL(out->data, buf);
	CU_ASSERT_PTR_EQUAL(in[0]->data, buf);
	expect_f32_buffer(out, sum, 6);
	static const float orig[] = { 1, 4, 2, 5, 3, 6 };
	expect_f32_buffer(in[0], orig, 6);
	literal_destroy(out);
	hloi_literal_array_free(in, n);
	unload(&p);

	load(&p, "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = add(x, x)\n}\n");
	CU_ASSERT_EQUAL(hloi_module_aliased_input(p.m), -1);
	unload(&p);

	/* the root reads its destination out of place: computed aside, copied in */
	load(&p, "HloModule m, input_output_alias={ {}: (0, {}, must-alias) }\n"
		 "ENTRY e {\n  x = f32[2,2] parameter(0)\n  t = f32[2,2] transpose(x), dimensions={1,0}\n"
		 "  ROOT r = add(t, x)\n}\n");
	const char *sq = "f32[2,2] {{1,2},{3,4}}";
	CU_ASSERT_EQUAL_FATAL(hloi_literal_parse_list(&in, &n, p.ctx, "in", sq, strlen(sq)), HLOI_OK);
	buf = in[0]->data;
	o.engine = HLOI_ENGINE_DEFAULT;
	CU_ASSERT_EQUAL_FATAL(eval_module(p.m, p.ctx, in, n, &o, &out), HLOI_OK);
	CU_ASSERT_PTR_EQUAL(out->data, buf);
	static const float sym[] = { 2, 5, 5, 8 };
	expect_f32_buffer(out, sym, 4);
	literal_destroy(out);
	hloi_literal_array_free(in, n);
	unload(&p);

	/* through a fusion, as XLA dumps donated buffers */
	load(&p, "HloModule m, input_output_alias={ {}: (0, {}, may-alias) }\n"
		 "f {\n  a = f32[3] parameter(0)\n  b = f32[3] parameter(1)\n  ROOT m = f32[3] multiply(a, b)\n}\n"
		 "ENTRY e {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n"
		 "  ROOT r = f32[3] fusion(x, y), kind=kLoop, calls=f\n}\n");
	const char *v = "f32[3] {1,2,3} f32[3] {4,5,6}";
	CU_ASSERT_EQUAL_FATAL(hloi_literal_parse_list(&in, &n, p.ctx, "in", v, strlen(v)), HLOI_OK);
	buf = in[0]->data;
	CU_ASSERT_EQUAL_FATAL(eval_module(p.m, p.ctx, in, n, &o, &out), HLOI_OK);
	CU_ASSERT_PTR_EQUAL(out->data, buf);
	static const float prod[] = { 4, 10, 18 };
	expect_f32_buffer(out, prod, 3);
	literal_destroy(out);
	hloi_literal_array_free(in, n);
	unload(&p);
}

/* One module with `?` callees run again and again with other sizes, on
 * both engines: each run checks it with its inputs' sizes, and the calls
 * run the sized copies of their callees (a while loop doubling its `?`
 * state three times, a call negating it). */
static void test_unbounded_callee_runs(void)
{
	static const char text[] =
		"cond {\n  s = (s32[], f32[?]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
		"  k = s32[] constant(3)\n  ROOT lt = pred[] compare(i, k), direction=LT\n}\n\n"
		"body {\n  s = (s32[], f32[?]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
		"  x = f32[?] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
		"  y = f32[?] add(x, x)\n  ROOT r = (s32[], f32[?]) tuple(j, y)\n}\n\n"
		"neg {\n  p = f32[?] parameter(0)\n  ROOT n = f32[?] negate(p)\n}\n\n"
		"ENTRY e {\n  x = f32[?] parameter(0)\n  z = s32[] constant(0)\n  s = (s32[], f32[?]) tuple(z, x)\n"
		"  w = (s32[], f32[?]) while(s), condition=cond, body=body\n  v = f32[?] get-tuple-element(w), index=1\n"
		"  ROOT n = f32[?] call(v), to_apply=neg\n}\n";
	static const struct {
		const char *in, *out;
	} runs[] = {
		{ "f32[2] {1, 2}", "f32[2] {-8, -16}" },
		{ "f32[5] {1, 0, -1, 2, 3}", "f32[5] {-8, -0, 8, -16, -24}" },
		{ "f32[0] {}", "f32[0] {}" },
		{ "f32[2] {3, 4}", "f32[2] {-24, -32}" },
	};
	prog p;
	load(&p, text);
	for (int engine = 0; engine < 2; engine++) {
		for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
			hloi_literal **in = NULL, *out = NULL;
			size_t n = 0;
			CU_ASSERT_EQUAL_FATAL(hloi_literal_parse_list(&in, &n, p.ctx, "inputs", runs[k].in, strlen(runs[k].in)),
					      HLOI_OK);
			hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
			o.engine = engine ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_FAST;
			hloi_status st = hloi_module_run(p.m, p.ctx, in, n, &o, &out);
			CU_ASSERT_EQUAL(st, HLOI_OK);
			if (st == HLOI_OK) {
				strbuf b = STRBUF_INIT;
				literal_print(&b, out, 1, 0);
				CU_ASSERT_STRING_EQUAL(sb_str(&b), runs[k].out);
				sb_free(&b);
			} else {
				hloi_context_print_diagnostics(p.ctx, stderr, 0);
			}
			literal_destroy(out);
			hloi_literal_array_free(in, n);
		}
	}
	/* three sizes seen (2, 5, 0): three copies of body, the second run of
	 * 2 elements taking the first's */
	int copies = 0;
	for (const computation *c = module_find_computation(p.m, "body")->sized_copies; c; c = c->next_sized)
		copies++;
	CU_ASSERT_EQUAL(copies, 3);
	unload(&p);
}

static const unit_test semantics_tests[] = {
	{ "int_wraparound", test_int_wraparound },
	{ "int_divide_remainder", test_int_divide_remainder },
	{ "int_shifts", test_int_shifts },
	{ "int_power", test_int_power },
	{ "int_minmax_bitwise", test_int_minmax_bitwise },
	{ "int_compare", test_int_compare },
	{ "pred", test_pred },
	{ "f32_arith", test_f32_arith },
	{ "f32_minmax", test_f32_minmax },
	{ "f32_power_atan2", test_f32_power_atan2 },
	{ "float_compare", test_float_compare },
	{ "half_rounding", test_half_rounding },
	{ "subbyte_scalars", test_subbyte_scalars },
	{ "small_float_scalars", test_small_float_scalars },
	{ "complex_scalars", test_complex_scalars },
	{ NULL, NULL },
};

static const unit_test engine_tests[] = {
	{ "sources_a_values", test_sources_a_values },
	{ "broadcast_and_compare", test_broadcast_and_compare },
	{ "layouts", test_layouts },
	{ "inputs", test_inputs },
	{ "memory_budget", test_memory_budget },
	{ "buffer_reuse", test_buffer_reuse },
	{ "buffer_pool", test_buffer_pool },
	{ "buffer_pool_sizes", test_buffer_pool_sizes },
	{ "run_into", test_run_into },
	{ "conform_input", test_conform_input },
	{ "elided_constant", test_elided_constant },
	{ "fill_elided_constants", test_fill_elided_constants },
	{ "random_inputs", test_random_inputs },
	{ "dispatch", test_dispatch },
	{ "allocation_failures", test_allocation_failures },
	{ "convert_scalar", test_convert_scalar },
	{ "convert_every_pair", test_convert_every_pair },
	{ "data_ops", test_data_ops },
	{ "in_place", test_in_place },
	{ "random_tuple_inputs", test_random_tuple_inputs },
	{ "unbounded_callee_runs", test_unbounded_callee_runs },
	{ NULL, NULL },
};


/* --- several participants --------------------------------------------------------- */

static void test_groups_iota(void)
{
	/* [2,2]<=[2,2]T(1,0): iota [[0,1],[2,3]] transposed, {{0,2},{1,3}} */
	int64_t gd[2] = { 2, 2 }, rd[2] = { 2, 2 }, perm[2] = { 1, 0 };
	replica_groups rg;
	memset(&rg, 0, sizeof rg);
	rg.form = RG_IOTA;
	rg.ngroup_dims = 2;
	rg.group_dims = gd;
	rg.nreshape = 2;
	rg.reshape_dims = rd;
	rg.nperm = 2;
	rg.perm = perm;
	id_groups g;
	CU_ASSERT_EQUAL_FATAL(groups_expand(&rg, &g, NULL, 0), 0);
	CU_ASSERT_EQUAL(g.ngroups, 2);
	int64_t want[4] = { 0, 2, 1, 3 };
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(g.ids[i], want[i]);
	CU_ASSERT_EQUAL(g.start[1], 2);
	groups_free(&g);
	/* sizes that do not agree */
	gd[0] = 3;
	CU_ASSERT_EQUAL(groups_expand(&rg, &g, NULL, 0), -1);
}

static const char participants_text[] =
	"HloModule p, replica_count=2\n"
	"add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\n"
	"ENTRY e {\n  x = s32[2] parameter(0)\n  id = u32[] replica-id()\n"
	"  s = s32[2] all-reduce(x), replica_groups={}, to_apply=add\n"
	"  g = s32[4] all-gather(x), dimensions={0}, replica_groups={{1,0}}\n"
	"  ROOT r = (u32[], s32[2], s32[4]) tuple(id, s, g)\n}\n";

static void test_participants_run(void)
{
	prog p;
	load(&p, participants_text);
	hloi_literal **in = NULL, *out[2] = { NULL, NULL };
	size_t n = 0;
	const char *inputs = "s32[2] {1, 2}\ns32[2] {10, 20}";
	CU_ASSERT_FATAL(hloi_literal_parse_list(&in, &n, p.ctx, "inputs", inputs, strlen(inputs)) == HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	/* one participant's run refuses a module of two with collectives */
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	CU_ASSERT_EQUAL(eval_module(p.m, p.ctx, in, 1, &o, &out[0]), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(out[0]);
	hloi_context_clear(p.ctx);
	const char *want[2] = { "(\nu32[] 0,\ns32[2] {11, 22},\ns32[4] {10, 20, 1, 2}\n)",
				"(\nu32[] 1,\ns32[2] {11, 22},\ns32[4] {10, 20, 1, 2}\n)" };
	for (int engine = 0; engine < 2; engine++) {
		o.engine = engine ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_FAST;
		hloi_status st = eval_module_participants(p.m, p.ctx, in, 1, &o, out);
		CU_ASSERT_EQUAL(st, HLOI_OK);
		for (int k = 0; k < 2 && st == HLOI_OK; k++) {
			strbuf b = STRBUF_INIT;
			literal_print(&b, out[k], 1, 0);
			CU_ASSERT_STRING_EQUAL(sb_str(&b), want[k]);
			sb_free(&b);
			literal_destroy(out[k]);
			out[k] = NULL;
		}
	}
	hloi_literal_array_free(in, n);
	unload(&p);
}

/* send and recv between two replicas: each sends its parameter to the
 * other, the recv issued before the send it pairs with. */
static const char p2p_text[] =
	"HloModule p, replica_count=2\n"
	"ENTRY e {\n  x = s32[2] parameter(0)\n  t = token[] after-all()\n"
	"  r = (s32[2], u32[], token[]) recv(t), frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,1},{1,0}}\"}\n"
	"  s = (s32[2], u32[], token[]) send(x, t), frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,1},{1,0}}\"}\n"
	"  d = (s32[2], token[]) recv-done(r)\n  sd = token[] send-done(s)\n"
	"  ROOT g = s32[2] get-tuple-element(d), index=0\n}\n";

static void test_participants_send_recv(void)
{
	prog p;
	load(&p, p2p_text);
	hloi_literal **in = NULL, *out[2] = { NULL, NULL };
	size_t n = 0;
	const char *inputs = "s32[2] {1, 2}\ns32[2] {10, 20}";
	CU_ASSERT_FATAL(hloi_literal_parse_list(&in, &n, p.ctx, "inputs", inputs, strlen(inputs)) == HLOI_OK);
	const char *want[2] = { "s32[2] {10, 20}", "s32[2] {1, 2}" };
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	for (int engine = 0; engine < 2; engine++) {
		o.engine = engine ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_FAST;
		hloi_status st = eval_module_participants(p.m, p.ctx, in, 1, &o, out);
		CU_ASSERT_EQUAL(st, HLOI_OK);
		for (int k = 0; k < 2 && st == HLOI_OK; k++) {
			strbuf b = STRBUF_INIT;
			literal_print(&b, out[k], 1, 0);
			CU_ASSERT_STRING_EQUAL(sb_str(&b), want[k]);
			sb_free(&b);
			literal_destroy(out[k]);
			out[k] = NULL;
		}
	}
	hloi_literal_array_free(in, n);
	unload(&p);
}

/* Mesh replica groups expanded as text: "{{0,2},{1,3}}", or "error: "
 * and the reason. */
static const char *mesh_text(const char *raw, char *buf, size_t n)
{
	replica_groups rg;
	memset(&rg, 0, sizeof rg);
	rg.form = RG_RAW;
	rg.raw = raw;
	id_groups g;
	char why[256];
	int rc = groups_expand(&rg, &g, why, sizeof why);
	if (rc) {
		snprintf(buf, n, "error: %s", rc > 0 ? why : "out of memory");
		return buf;
	}
	size_t at = 0;
	at += (size_t)snprintf(buf + at, n - at, "{");
	for (int64_t k = 0; k < g.ngroups && at < n; k++) {
		at += (size_t)snprintf(buf + at, n - at, "%s{", k ? "," : "");
		for (int64_t j = g.start[k]; j < g.start[k + 1] && at < n; j++)
			at += (size_t)snprintf(buf + at, n - at, "%s%lld", j > g.start[k] ? "," : "",
					       (long long)g.ids[j]);
		if (at < n)
			at += (size_t)snprintf(buf + at, n - at, "}");
	}
	if (at < n)
		snprintf(buf + at, n - at, "}");
	groups_free(&g);
	return buf;
}

/* The iota form [G,S]<=[r...]T(p...) expanded as text. */
static const char *iota_text(int64_t groups, int64_t size, int n, const int64_t *reshape, const int64_t *perm,
			     char *buf, size_t len)
{
	int64_t gd[2] = { groups, size };
	replica_groups rg;
	memset(&rg, 0, sizeof rg);
	rg.form = RG_IOTA;
	rg.ngroup_dims = 2;
	rg.group_dims = gd;
	rg.nreshape = n;
	rg.reshape_dims = (int64_t *)reshape;
	rg.nperm = perm ? n : 0;
	rg.perm = (int64_t *)perm;
	id_groups g;
	CU_ASSERT_EQUAL_FATAL(groups_expand(&rg, &g, NULL, 0), 0);
	size_t at = (size_t)snprintf(buf, len, "{");
	for (int64_t k = 0; k < g.ngroups; k++) {
		at += (size_t)snprintf(buf + at, len - at, "%s{", k ? "," : "");
		for (int64_t j = g.start[k]; j < g.start[k + 1]; j++)
			at += (size_t)snprintf(buf + at, len - at, "%s%lld", j > g.start[k] ? "," : "",
					       (long long)g.ids[j]);
		at += (size_t)snprintf(buf + at, len - at, "}");
	}
	snprintf(buf + at, len - at, "}");
	groups_free(&g);
	return buf;
}

#define MESH_EXPECT(raw, want)                                              \
	do {                                                                \
		char buf_[2048];                                            \
		CU_ASSERT_STRING_EQUAL(mesh_text(raw, buf_, sizeof buf_), want); \
	} while (0)

static void test_groups_mesh(void)
{
	/* whole axes: the devices as a=2 x b=2; grouped by {'b','a'}: one
	 * group {0,2,1,3} in the order named */
	MESH_EXPECT("mesh['a'=2,'b'=2] {'b','a'}", "{{0,2,1,3}}");
	/* XLA's replica_group_test.cc, MaterializedReplicaGroups
	 * (openxla/xla xla/hlo/ir/replica_group_test.cc) */
	MESH_EXPECT("mesh['x'=2,'y'=2] {'x'}", "{{0,2},{1,3}}");
	MESH_EXPECT("mesh['x'=2,'y'=2] {'y'}", "{{0,1},{2,3}}");
	MESH_EXPECT("mesh['x'=2,'y'=2] {'x','y'}", "{{0,1,2,3}}");
	/* no axes named: every device its own group (XLA's groups of one, a
	 * no-op reduce) */
	MESH_EXPECT("mesh['x'=2,'y'=2] {}", "{{0},{1},{2},{3}}");
	/* one device: the empty mesh, a maximal mesh */
	MESH_EXPECT("mesh[] {}", "{{0}}");
	MESH_EXPECT("maximal_mesh[device_id=3] {}", "{{3}}");
	MESH_EXPECT("maximal_mesh[device_id=0] {}", "{{0}}");
}

/* Sub-axes 'a':(pre)size: XLA's replica_group_test.cc,
 * MaterializedReplicaGroupsWithSubaxes (openxla/xla
 * xla/hlo/ir/replica_group_test.cc), over a mesh a=6 x b=6. */
static void test_groups_mesh_subaxes(void)
{
	MESH_EXPECT("mesh['a'=6,'b'=6] {'a':(1)2}",
		    "{{0,18},{1,19},{2,20},{3,21},{4,22},{5,23},{6,24},{7,25},{8,26},{9,27},{10,28},{11,29},"
		    "{12,30},{13,31},{14,32},{15,33},{16,34},{17,35}}");
	MESH_EXPECT("mesh['a'=6,'b'=6] {'a':(1)3}",
		    "{{0,12,24},{1,13,25},{2,14,26},{3,15,27},{4,16,28},{5,17,29},{6,18,30},{7,19,31},{8,20,32},"
		    "{9,21,33},{10,22,34},{11,23,35}}");
	MESH_EXPECT("mesh['a'=6,'b'=6] {'a':(3)2}",
		    "{{0,6},{1,7},{2,8},{3,9},{4,10},{5,11},{12,18},{13,19},{14,20},{15,21},{16,22},{17,23},"
		    "{24,30},{25,31},{26,32},{27,33},{28,34},{29,35}}");
	MESH_EXPECT("mesh['a'=6,'b'=6] {'b':(1)2}",
		    "{{0,3},{1,4},{2,5},{6,9},{7,10},{8,11},{12,15},{13,16},{14,17},{18,21},{19,22},{20,23},"
		    "{24,27},{25,28},{26,29},{30,33},{31,34},{32,35}}");
	MESH_EXPECT("mesh['a'=6,'b'=6] {'b':(1)3}",
		    "{{0,2,4},{1,3,5},{6,8,10},{7,9,11},{12,14,16},{13,15,17},{18,20,22},{19,21,23},"
		    "{24,26,28},{25,27,29},{30,32,34},{31,33,35}}");
	MESH_EXPECT("mesh['a'=6,'b'=6] {'b':(3)2}",
		    "{{0,1},{2,3},{4,5},{6,7},{8,9},{10,11},{12,13},{14,15},{16,17},{18,19},{20,21},{22,23},"
		    "{24,25},{26,27},{28,29},{30,31},{32,33},{34,35}}");
	MESH_EXPECT("mesh['a'=6,'b'=6] {'a':(1)2,'b':(1)2}",
		    "{{0,3,18,21},{1,4,19,22},{2,5,20,23},{6,9,24,27},{7,10,25,28},{8,11,26,29},"
		    "{12,15,30,33},{13,16,31,34},{14,17,32,35}}");
	MESH_EXPECT("mesh['a'=6,'b'=6] {'a':(1)3,'b':(1)3}",
		    "{{0,2,4,12,14,16,24,26,28},{1,3,5,13,15,17,25,27,29},{6,8,10,18,20,22,30,32,34},"
		    "{7,9,11,19,21,23,31,33,35}}");
	MESH_EXPECT("mesh['a'=6,'b'=6] {'b':(1)3,'a':(1)3}",
		    "{{0,12,24,2,14,26,4,16,28},{1,13,25,3,15,27,5,17,29},{6,18,30,8,20,32,10,22,34},"
		    "{7,19,31,9,21,33,11,23,35}}");
	MESH_EXPECT("mesh['a'=6,'b'=6] {'a':(3)2,'b':(3)2}",
		    "{{0,1,6,7},{2,3,8,9},{4,5,10,11},{12,13,18,19},{14,15,20,21},{16,17,22,23},"
		    "{24,25,30,31},{26,27,32,33},{28,29,34,35}}");
	/* MaterializedReplicaGroupsMatchExpectedV2: over a mesh a=8, each
	 * form is the iota form XLA's test names */
	static const struct {
		const char *mesh;
		int64_t groups, size;
		int n;
		int64_t reshape[3], perm[3];
	} v2[] = {
		{ "mesh['a'=8] {'a':(1)2}", 4, 2, 2, { 2, 4 }, { 1, 0 } },
		{ "mesh['a'=8] {'a':(1)4}", 2, 4, 2, { 4, 2 }, { 1, 0 } },
		{ "mesh['a'=8] {'a':(2)2}", 4, 2, 3, { 2, 2, 2 }, { 0, 2, 1 } },
		{ "mesh['a'=8] {'a':(2)4}", 2, 4, 1, { 8 }, { 0 } },
		{ "mesh['a'=8] {'a':(4)2}", 4, 2, 1, { 8 }, { 0 } },
		{ "mesh['a'=8] {'a':(1)2,'a':(4)2}", 2, 4, 3, { 2, 2, 2 }, { 1, 0, 2 } },
		{ "mesh['a'=8] {'a':(4)2,'a':(1)2}", 2, 4, 3, { 2, 2, 2 }, { 1, 2, 0 } },
		{ "mesh['a'=8] {'a'}", 1, 8, 1, { 8 }, { 0 } },
	};
	for (size_t i = 0; i < sizeof v2 / sizeof v2[0]; i++) {
		char a[512], b[512];
		CU_ASSERT_STRING_EQUAL(mesh_text(v2[i].mesh, a, sizeof a),
				       iota_text(v2[i].groups, v2[i].size, v2[i].n, v2[i].reshape, v2[i].perm, b, sizeof b));
	}
}

/* Meshes of explicit device ids: the groups name the ids at the mesh
 * positions the whole-axis rule picks. */
static void test_groups_mesh_device_ids(void)
{
	/* XLA's replica_group_test.cc,
	 * MaterializedReplicaGroupsRespectNonIotaDeviceOrdering: devices
	 * {{3,1},{0,2}} (openxla/xla xla/hlo/ir/replica_group_test.cc) */
	MESH_EXPECT("mesh['x'=2,'y'=2], device_ids=(3,1,0,2) {'x'}", "{{3,0},{1,2}}");
	MESH_EXPECT("mesh['x'=2,'y'=2], device_ids=(3,1,0,2) {'y'}", "{{3,1},{0,2}}");
	/* the mesh of XLA's MeshAxesToString test, ooo=10 with devices
	 * (8,3,7,5,4,2,6,0,1,9), grouped by the sub-axis ooo:(5)2, the minor
	 * part of size 2 (position 2i + j, j the member): positions 2i and
	 * 2i+1 */
	MESH_EXPECT("mesh['ooo'=10], device_ids=(8,3,7,5,4,2,6,0,1,9) {'ooo':(5)2}", "{{8,3},{7,5},{4,2},{6,0},{1,9}}");
	/* an iota of devices: ([4,16]T(1,0)) is the list it stands for (the
	 * device at position 4*r+c of the [16,4] transpose is 16*c+r), here
	 * with XLA's MeshAxesToString axes {a,b:(1)2,d} */
	char list[512];
	size_t at = (size_t)snprintf(list, sizeof list, "mesh['a'=2,'b'=4,'c'=4,'d'=2], device_ids=(");
	for (int p = 0; p < 64; p++)
		at += (size_t)snprintf(list + at, sizeof list - at, "%s%d", p ? "," : "", (p % 4) * 16 + p / 4);
	snprintf(list + at, sizeof list - at, ") {'a','b':(1)2,'d'}");
	char a[2048], b[2048];
	CU_ASSERT_STRING_EQUAL(mesh_text("mesh['a'=2,'b'=4,'c'=4,'d'=2], device_ids=([4,16]T(1,0)) {'a','b':(1)2,'d'}", a,
					 sizeof a),
			       mesh_text(list, b, sizeof b));
	CU_ASSERT_STRING_NOT_EQUAL(a, mesh_text("mesh['a'=2,'b'=4,'c'=4,'d'=2] {'a','b':(1)2,'d'}", b, sizeof b));
	MESH_EXPECT("mesh['a'=2,'b'=2], device_ids=([2,2]T(1,0)) {'a'}", "{{0,1},{2,3}}");
	MESH_EXPECT("mesh['a'=4], device_ids=([4]) {'a':(1)2}", "{{0,2},{1,3}}");
	/* axes named by their index (XLA's parser reads a name that is no
	 * axis's as an index) */
	MESH_EXPECT("mesh['x'=2,'y'=2] {'1'}", "{{0,1},{2,3}}");
}

/* Mesh replica groups XLA refuses, with its messages (mesh_and_axis.cc,
 * hlo_parser.cc; XLA's replica_group_test.cc ValidatesIncompatibleAxes
 * and ValidateSubAxesCoexistenceCheck). */
static void test_groups_mesh_errors(void)
{
	MESH_EXPECT("mesh['u'=10] {'1':(1)2}", "error: axis index 1 is out of bounds for mesh mesh['u'=10] which has 1 axes");
	MESH_EXPECT("mesh['u'=10] {'u':(8)2}",
		    "error: Sub-axis next_pre_size must divide the full axis size. Next pre-size: 16, Axis size: 10");
	MESH_EXPECT("mesh['u'=10] {'u':(2)8}",
		    "error: Sub-axis next_pre_size must divide the full axis size. Next pre-size: 16, Axis size: 10");
	MESH_EXPECT("mesh['u'=10] {'u':(1)10}",
		    "error: Sub-axis size must be strictly less than the full axis size. Sub-axis size: 10, Axis size: 10");
	MESH_EXPECT("mesh['u'=30] {'u':(6)5,'u':(10)3}", "error: Axes cannot coexist or axes overlap.");
	MESH_EXPECT("mesh['a'=2] {'a','a'}", "error: Axes cannot coexist or axes overlap.");
	MESH_EXPECT("mesh['a'=8] {'a':(1)2,'a'}", "error: Axes cannot coexist or axes overlap.");
	MESH_EXPECT("mesh['a'=8] {'a':(1)2,'a':(2)2}", "error: Adjacent axes in dimension sharding can be merged: a:(1)2, a:(2)2");
	MESH_EXPECT("mesh['a'=8] {'a':(0)2}", "error: sub-axis pre-size must be >= 1");
	MESH_EXPECT("mesh['a'=8] {'a':(1)1}", "error: sub-axis size must be > 1");
	MESH_EXPECT("mesh['a'=2,'b'=2] {'c'}",
		    "error: axis 'c' is not a valid axis name or index in mesh mesh['a'=2,'b'=2]");
	MESH_EXPECT("maximal_mesh[device_id=3] {'a'}",
		    "error: axis 'a' is not a valid axis name or index in mesh maximal_mesh[device_id=3]");
	MESH_EXPECT("mesh['a'=2,'a'=2] {'a'}", "error: Mesh has duplicate axis names. Duplicate axis name: a");
	MESH_EXPECT("mesh['0'=2] {}", "error: Mesh axis name cannot be an integer to avoid confusion with axis indices: 0");
	MESH_EXPECT("mesh['a'=0] {}", "error: Mesh axis size must be positive: a=0");
	MESH_EXPECT("mesh['a'=2,'b'=2], device_ids=(3,2,1) {'a'}", "error: Expected 4 device_ids based on mesh axes, but got 3");
	MESH_EXPECT("mesh['a'=2,'b'=2], device_ids=(3,2,1,0,4) {'a'}",
		    "error: Expected 4 device_ids based on mesh axes, but got 5");
	MESH_EXPECT("mesh['a'=2,'b'=2], device_ids=(3,2,1,1) {'a'}",
		    "error: Device ids must be a permutation of [0,1,2,3...].");
	MESH_EXPECT("mesh['a'=2,'b'=2], device_ids=(3,2,1,4) {'a'}",
		    "error: Device ids must be a permutation of [0,1,2,3...].");
	MESH_EXPECT("mesh['a'=2,'b'=2], device_ids=(3,-2,1,0) {'a'}",
		    "error: Mesh device ids must be non-negative. Device id: -2");
	MESH_EXPECT("mesh['a'=2,'b'=2], device_ids=(0,1,2,3) {'a'}",
		    "error: Non-iota device assignment has iota device id list [0,1,2,3...].");
	MESH_EXPECT("mesh['a'=2,'b'=2], device_ids=([2,2]) {'a'}",
		    "error: expected 'T(' to start sharding devices iota_transpose_perm");
	MESH_EXPECT("mesh['a'=2,'b'=2], device_ids=([2,2]T(1,2)) {'a'}",
		    "error: Out of range iota minor_to_major value 2, expecting value in range [0, 2)");
	MESH_EXPECT("mesh['a'=2,'b'=2], device_ids=([2,2]T(1,1)) {'a'}",
		    "error: device_ids=(...T(...)): the transpose is not a permutation of the 2 reshape dimensions");
	MESH_EXPECT("mesh['a'=2,'b'=2], device_ids=([2,4]T(1,0)) {'a'}",
		    "error: device_ids=(...) reshapes an iota of other than the mesh's 4 devices");
	MESH_EXPECT("mesh['a'=4096,'b'=4096,'c'=2] {'a'}", "error: a mesh of more than 16777216 devices");
	MESH_EXPECT("mesh['a'=2] {'a'", "error: malformed mesh replica groups");
}

/* Every allocation of a run of two participants failing in turn: an error
 * (out of memory, or released by the participant that ran out), no leak,
 * no hang. */
static void allocation_failures(const char *text)
{
	int succeeded = 0;
	for (long n = 0; n < 400 && !succeeded; n++) {
		hloi_context *ctx = NULL;
		module *m = NULL;
		hloi_literal **in = NULL, *out[2] = { NULL, NULL };
		size_t nin = 0;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		CU_ASSERT_FATAL(text_parse_module(&m, ctx, "t.hlo", text, strlen(text)) == HLOI_OK);
		CU_ASSERT_FATAL(check_module(m, ctx, NULL) == HLOI_OK);
		CU_ASSERT_FATAL(eval_random_inputs(&in, &nin, m, ctx, 1) == HLOI_OK);
		CU_ASSERT_EQUAL_FATAL(nin, 1);
		alloc_fail_after(n);
		hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
		hloi_literal *both[2] = { in[0], in[0] };
		hloi_status st = eval_module_participants(m, ctx, both, 1, &o, out);
		alloc_fail_after(-1);
		CU_ASSERT(st == HLOI_OK || st == HLOI_ENOMEM);
		if (st == HLOI_OK) {
			succeeded = 1;
			CU_ASSERT_PTR_NOT_NULL(out[0]);
			CU_ASSERT_PTR_NOT_NULL(out[1]);
		} else {
			CU_ASSERT_PTR_NULL(out[0]);
			CU_ASSERT_PTR_NULL(out[1]);
		}
		literal_destroy(out[0]);
		literal_destroy(out[1]);
		hloi_literal_array_free(in, nin);
		module_destroy(m);
		hloi_context_free(ctx);
	}
	CU_ASSERT_TRUE(succeeded);
}

static void test_participants_allocation_failures(void)
{
	allocation_failures(participants_text);
	allocation_failures(p2p_text);
}

static const unit_test participant_tests[] = {
	{ "groups_iota", test_groups_iota },
	{ "groups_mesh", test_groups_mesh },
	{ "groups_mesh_subaxes", test_groups_mesh_subaxes },
	{ "groups_mesh_device_ids", test_groups_mesh_device_ids },
	{ "groups_mesh_errors", test_groups_mesh_errors },
	{ "run", test_participants_run },
	{ "send_recv", test_participants_send_recv },
	{ "allocation_failures", test_participants_allocation_failures },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "semantics", semantics_tests },
	{ "engine", engine_tests },
	{ "participants", participant_tests },
	{ NULL, NULL },
};
