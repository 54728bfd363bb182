/* Per-element semantics of the binary ops and compare (doc/spec.md §4), written once
 * per op and element kind and instantiated for every evaluated element type
 * from core/types.def. Both engines call these, so they cannot disagree.
 *
 * For each evaluated type E (storage type T) this defines
 *   T sc_<op>_E(T a, T b)      for the ops the kind supports (SC_OPS_<kind>)
 *   uint8_t sc_compare_E(T a, T b, cmp_direction d, cmp_type t)
 * Integer arithmetic goes through uint64_t on the type's bit width (4 for
 * s4, stored sign-extended in a byte), so wraparound is never UB; f16,
 * bf16 and the f8/f4 types compute in f32 and round once; c64 and c128 are
 * C complex types (multiply as C's Annex G, divide as the C compiler's
 * complex division, power and atan2 through the C library's cpow/clog/csqrt,
 * as XLA's evaluator does through std::complex).
 */
#ifndef HLOI_EVAL_SCALAR_H
#define HLOI_EVAL_SCALAR_H

#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/float8.h"
#include "core/half.h"
#include "core/types.h"
#include "ir/ir.h"

/* C11 7.3.1 lets a program undefine these; keep the names free. */
#undef complex
#undef I

/* The result of a comparison from the three relations (all zero when
 * unordered, i.e. a NaN under FLOAT: then only NE holds). */
static inline uint8_t sc_direction(int lt, int eq, int gt, cmp_direction d)
{
	switch (d) {
	case CMP_EQ: return (uint8_t)eq;
	case CMP_NE: return (uint8_t)!eq;
	case CMP_LT: return (uint8_t)lt;
	case CMP_LE: return (uint8_t)(lt || eq);
	case CMP_GT: return (uint8_t)gt;
	case CMP_GE: return (uint8_t)(gt || eq);
	default: return 0;
	}
}

/* Unsigned key with the order of the value read as unsigned (u), as two's
 * complement (s), or as a sign-magnitude float (TOTALORDER: -NaN < -inf <
 * ... < -0 < +0 < ... < +inf < +NaN); `sign` is the top bit of the width. */
static inline uint64_t sc_key_signed(uint64_t bits, uint64_t sign)
{
	return bits ^ sign;
}

static inline uint64_t sc_key_total(uint64_t bits, uint64_t sign, uint64_t all)
{
	return (bits & sign) ? (~bits & all) : (bits | sign);
}

static inline uint8_t sc_compare_keys(uint64_t x, uint64_t y, cmp_direction d)
{
	return sc_direction(x < y, x == y, x > y, d);
}

/* --- unsigned type of each width --------------------------------------- */
#define SC_UT_1 uint8_t
#define SC_UT_2 uint16_t
#define SC_UT_4 uint32_t
#define SC_UT_8 uint64_t

/* Kind-specific pieces: whether negative values exist. */
#define SC_SIGNED_KIND_SINT 1
#define SC_SIGNED_KIND_UINT 0
#define SC_NEG_KIND_SINT(x) ((x) < 0)
#define SC_NEG_KIND_UINT(x) 0

/* Value bits of each integer type (the sub-byte ones take a byte). */
#define SC_NBITS_S1 1
#define SC_NBITS_S2 2
#define SC_NBITS_S4 4
#define SC_NBITS_S8 8
#define SC_NBITS_S16 16
#define SC_NBITS_S32 32
#define SC_NBITS_S64 64
#define SC_NBITS_U1 1
#define SC_NBITS_U2 2
#define SC_NBITS_U4 4
#define SC_NBITS_U8 8
#define SC_NBITS_U16 16
#define SC_NBITS_U32 32
#define SC_NBITS_U64 64

static inline uint64_t sc_mask(int n)
{
	return n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

/* --- integers (signed and unsigned), on N = SC_NBITS_E value bits -------- */
#define SC_INT(E, T, W, KIND)                                                        \
	/* the N-bit pattern */                                                      \
	static inline uint64_t sc_bits_##E(T a)                                      \
	{                                                                            \
		return (uint64_t)(SC_UT_##W)a & sc_mask(SC_NBITS_##E);               \
	}                                                                            \
	/* the low N bits of r as a value of the type (sign-extended if signed) */  \
	static inline T sc_wrap_##E(uint64_t r)                                      \
	{                                                                            \
		const int n = SC_NBITS_##E;                                          \
		if (n == 8 * (W)) /* the full width: truncation (and vectorises) */  \
			return (T)(SC_UT_##W)r;                                      \
		r &= sc_mask(n);                                                     \
		if (SC_SIGNED_##KIND && ((r >> (n - 1)) & 1))                        \
			r |= ~sc_mask(n);                                            \
		return (T)(SC_UT_##W)r;                                              \
	}                                                                            \
	static inline T sc_add_##E(T a, T b)                                         \
	{                                                                            \
		return sc_wrap_##E(sc_bits_##E(a) + sc_bits_##E(b));                 \
	}                                                                            \
	static inline T sc_subtract_##E(T a, T b)                                    \
	{                                                                            \
		return sc_wrap_##E(sc_bits_##E(a) - sc_bits_##E(b));                 \
	}                                                                            \
	static inline T sc_multiply_##E(T a, T b)                                    \
	{                                                                            \
		return sc_wrap_##E(sc_bits_##E(a) * sc_bits_##E(b));                 \
	}                                                                            \
	/* x / 0 = -1 (all ones); INT_MIN / -1 = INT_MIN (the wrapped -x). */       \
	static inline T sc_divide_##E(T a, T b)                                      \
	{                                                                            \
		if (b == 0)                                                          \
			return sc_wrap_##E(UINT64_MAX);                              \
		if (SC_SIGNED_##KIND && b == (T)-1)                                  \
			return sc_wrap_##E(0 - sc_bits_##E(a));                      \
		return sc_wrap_##E((uint64_t)(a / b));                               \
	}                                                                            \
	/* x % 0 = x; INT_MIN % -1 = 0; the sign follows the dividend. */           \
	static inline T sc_remainder_##E(T a, T b)                                   \
	{                                                                            \
		if (b == 0)                                                          \
			return a;                                                    \
		if (SC_SIGNED_##KIND && b == (T)-1)                                  \
			return 0;                                                    \
		return (T)(a % b);                                                   \
	}                                                                            \
	static inline T sc_maximum_##E(T a, T b)                                     \
	{                                                                            \
		return a >= b ? a : b;                                               \
	}                                                                            \
	static inline T sc_minimum_##E(T a, T b)                                     \
	{                                                                            \
		return a <= b ? a : b;                                               \
	}                                                                            \
	/* 0^0 = 1, 1^y = 1, x^negative = 0; else square-and-multiply, wrapping. */ \
	static inline T sc_power_##E(T a, T b)                                       \
	{                                                                            \
		if (b == 0 || a == 1)                                                \
			return 1;                                                    \
		if (SC_NEG_##KIND(b))                                                \
			return 0;                                                    \
		uint64_t base = sc_bits_##E(a), e = sc_bits_##E(b), r = 1;           \
		while (e) {                                                          \
			if (e & 1)                                                   \
				r *= base;                                           \
			base *= base;                                                \
			e >>= 1;                                                     \
		}                                                                    \
		return sc_wrap_##E(r);                                               \
	}                                                                            \
	static inline T sc_and_##E(T a, T b)                                         \
	{                                                                            \
		return sc_wrap_##E(sc_bits_##E(a) & sc_bits_##E(b));                 \
	}                                                                            \
	static inline T sc_or_##E(T a, T b)                                          \
	{                                                                            \
		return sc_wrap_##E(sc_bits_##E(a) | sc_bits_##E(b));                 \
	}                                                                            \
	static inline T sc_xor_##E(T a, T b)                                         \
	{                                                                            \
		return sc_wrap_##E(sc_bits_##E(a) ^ sc_bits_##E(b));                 \
	}                                                                            \
	/* Shift amounts are read as unsigned; >= the bit width gives 0. */         \
	static inline T sc_shift_left_##E(T a, T b)                                  \
	{                                                                            \
		uint64_t n = sc_bits_##E(b);                                         \
		return n >= SC_NBITS_##E ? 0 : sc_wrap_##E(sc_bits_##E(a) << n);     \
	}                                                                            \
	static inline T sc_shift_right_logical_##E(T a, T b)                         \
	{                                                                            \
		uint64_t n = sc_bits_##E(b);                                         \
		return n >= SC_NBITS_##E ? 0 : sc_wrap_##E(sc_bits_##E(a) >> n);     \
	}                                                                            \
	/* The bits read as two's complement (also for unsigned types, as XLA);   \
	 * out-of-range amounts give the sign fill. */                              \
	static inline T sc_shift_right_arithmetic_##E(T a, T b)                      \
	{                                                                            \
		uint64_t n = sc_bits_##E(b), x = sc_bits_##E(a);                     \
		uint64_t all = sc_mask(SC_NBITS_##E);                                \
		uint64_t neg = x >> (SC_NBITS_##E - 1);                              \
		if (n >= SC_NBITS_##E)                                               \
			return sc_wrap_##E(neg ? all : 0);                           \
		uint64_t r = x >> n;                                                 \
		if (neg)                                                             \
			r |= all & ~(all >> n);                                      \
		return sc_wrap_##E(r);                                               \
	}                                                                            \
	/* SIGNED / UNSIGNED (the checker allows only the type's default). */       \
	static inline uint8_t sc_compare_##E(T a, T b, cmp_direction d, cmp_type t)  \
	{                                                                            \
		uint64_t x = sc_bits_##E(a), y = sc_bits_##E(b);                     \
		if (t == CMPT_SIGNED) {                                              \
			uint64_t sign = (uint64_t)1 << (SC_NBITS_##E - 1);           \
			x = sc_key_signed(x, sign);                                  \
			y = sc_key_signed(y, sign);                                  \
		}                                                                    \
		return sc_compare_keys(x, y, d);                                     \
	}

#define SC_KIND_SINT(E, T, W) SC_INT(E, T, W, KIND_SINT)
#define SC_KIND_UINT(E, T, W) SC_INT(E, T, W, KIND_UINT)

/* --- pred: values are 0/1 (any nonzero byte reads as true) -------------- */
#define SC_KIND_PRED(E, T, W)                                                        \
	static inline T sc_add_##E(T a, T b)                                         \
	{                                                                            \
		return (T)((a != 0) | (b != 0));                                     \
	}                                                                            \
	static inline T sc_multiply_##E(T a, T b)                                    \
	{                                                                            \
		return (T)((a != 0) & (b != 0));                                     \
	}                                                                            \
	static inline T sc_maximum_##E(T a, T b)                                     \
	{                                                                            \
		return sc_add_##E(a, b);                                             \
	}                                                                            \
	static inline T sc_minimum_##E(T a, T b)                                     \
	{                                                                            \
		return sc_multiply_##E(a, b);                                        \
	}                                                                            \
	static inline T sc_and_##E(T a, T b)                                         \
	{                                                                            \
		return sc_multiply_##E(a, b);                                        \
	}                                                                            \
	static inline T sc_or_##E(T a, T b)                                          \
	{                                                                            \
		return sc_add_##E(a, b);                                             \
	}                                                                            \
	static inline T sc_xor_##E(T a, T b)                                         \
	{                                                                            \
		return (T)((a != 0) ^ (b != 0));                                     \
	}                                                                            \
	static inline uint8_t sc_compare_##E(T a, T b, cmp_direction d, cmp_type t)  \
	{                                                                            \
		(void)t;                                                             \
		return sc_compare_keys(a != 0, b != 0, d);                           \
	}

/* --- floats: compute type, conversions and libm functions per class ----- */

/* Each float type's class: F16, BF16, F32, F64, or F8 (the f8/f4 types,
 * whose conversions take the format core/float8.h names f8_fmt_<E>). */
#define SC_FCLASS_F16 F16
#define SC_FCLASS_BF16 BF16
#define SC_FCLASS_F32 F32
#define SC_FCLASS_F64 F64
#define SC_FCLASS_F8E5M2 F8
#define SC_FCLASS_F8E4M3 F8
#define SC_FCLASS_F8E4M3FN F8
#define SC_FCLASS_F8E4M3B11FNUZ F8
#define SC_FCLASS_F8E3M4 F8
#define SC_FCLASS_F8E5M2FNUZ F8
#define SC_FCLASS_F8E4M3FNUZ F8
#define SC_FCLASS_F4E2M1FN F8
#define SC_FCLASS_F8E8M0FNU F8

/* compute type; storage -> compute; compute -> storage (rounding once) */
#define SC_FT_F16 float
#define SC_FT_BF16 float
#define SC_FT_F32 float
#define SC_FT_F64 double
#define SC_FT_F8 float
#define SC_LOAD_F16(E, x) f16_to_f32(x)
#define SC_LOAD_BF16(E, x) bf16_to_f32(x)
#define SC_LOAD_F32(E, x) (x)
#define SC_LOAD_F64(E, x) (x)
#define SC_LOAD_F8(E, x) f8_to_f32(&f8_fmt_##E, x)
#define SC_STORE_F16(E, v) f32_to_f16(v)
#define SC_STORE_BF16(E, v) f32_to_bf16(v)
#define SC_STORE_F32(E, v) (v)
#define SC_STORE_F64(E, v) (v)
#define SC_STORE_F8(E, v) f8_from_f32(&f8_fmt_##E, v)
#define SC_FMOD_F16 fmodf
#define SC_FMOD_BF16 fmodf
#define SC_FMOD_F32 fmodf
#define SC_FMOD_F64 fmod
#define SC_FMOD_F8 fmodf
#define SC_POW_F16 powf
#define SC_POW_BF16 powf
#define SC_POW_F32 powf
#define SC_POW_F64 pow
#define SC_POW_F8 powf
#define SC_ATAN2_F16 atan2f
#define SC_ATAN2_BF16 atan2f
#define SC_ATAN2_F32 atan2f
#define SC_ATAN2_F64 atan2
#define SC_ATAN2_F8 atan2f
/* TOTALORDER key of the bits u (W bytes): sign-magnitude; the f8/f4
 * formats have their own (f8_total_key: fnuz and e8m0 differ). */
#define SC_TKEY_STD(u, W) sc_key_total(u, (uint64_t)1 << (8 * (W) - 1), (SC_UT_##W) ~(SC_UT_##W)0)
#define SC_TKEY_F16(E, u, W) SC_TKEY_STD(u, W)
#define SC_TKEY_BF16(E, u, W) SC_TKEY_STD(u, W)
#define SC_TKEY_F32(E, u, W) SC_TKEY_STD(u, W)
#define SC_TKEY_F64(E, u, W) SC_TKEY_STD(u, W)
#define SC_TKEY_F8(E, u, W) f8_total_key(&f8_fmt_##E, (uint8_t)(u))

#define SC_KIND_FLOAT(E, T, W) SC_FLOAT_X(E, T, W, SC_FCLASS_##E)
#define SC_FLOAT_X(E, T, W, C) SC_FLOAT_IMPL(E, T, W, C)
#define SC_FLOAT_IMPL(E, T, W, C)                                                    \
	static inline uint64_t sc_bits_##E(T a)                                      \
	{                                                                            \
		SC_UT_##W u;                                                         \
		memcpy(&u, &a, sizeof u);                                            \
		return u;                                                            \
	}                                                                            \
	static inline T sc_add_##E(T a, T b)                                         \
	{                                                                            \
		return SC_STORE_##C(E, SC_LOAD_##C(E, a) + SC_LOAD_##C(E, b));       \
	}                                                                            \
	static inline T sc_subtract_##E(T a, T b)                                    \
	{                                                                            \
		return SC_STORE_##C(E, SC_LOAD_##C(E, a) - SC_LOAD_##C(E, b));       \
	}                                                                            \
	static inline T sc_multiply_##E(T a, T b)                                    \
	{                                                                            \
		return SC_STORE_##C(E, SC_LOAD_##C(E, a) * SC_LOAD_##C(E, b));       \
	}                                                                            \
	static inline T sc_divide_##E(T a, T b)                                      \
	{                                                                            \
		return SC_STORE_##C(E, SC_LOAD_##C(E, a) / SC_LOAD_##C(E, b));       \
	}                                                                            \
	static inline T sc_remainder_##E(T a, T b)                                   \
	{                                                                            \
		return SC_STORE_##C(E, SC_FMOD_##C(SC_LOAD_##C(E, a), SC_LOAD_##C(E, b))); \
	}                                                                            \
	/* NaN propagates (a NaN lhs wins); -0 < +0 (IEEE 754-2019). */             \
	static inline T sc_maximum_##E(T a, T b)                                     \
	{                                                                            \
		SC_FT_##C x = SC_LOAD_##C(E, a), y = SC_LOAD_##C(E, b);              \
		if (isnan(x))                                                        \
			return a;                                                    \
		if (isnan(y))                                                        \
			return b;                                                    \
		if (x == y)                                                          \
			return signbit(x) ? b : a;                                   \
		return x > y ? a : b;                                                \
	}                                                                            \
	static inline T sc_minimum_##E(T a, T b)                                     \
	{                                                                            \
		SC_FT_##C x = SC_LOAD_##C(E, a), y = SC_LOAD_##C(E, b);              \
		if (isnan(x))                                                        \
			return a;                                                    \
		if (isnan(y))                                                        \
			return b;                                                    \
		if (x == y)                                                          \
			return signbit(x) ? a : b;                                   \
		return x < y ? a : b;                                                \
	}                                                                            \
	/* x^0 = 1 and 1^y = 1 for any x, y (even NaN); else C pow. */             \
	static inline T sc_power_##E(T a, T b)                                       \
	{                                                                            \
		SC_FT_##C x = SC_LOAD_##C(E, a), y = SC_LOAD_##C(E, b);              \
		if (y == 0 || x == 1)                                                \
			return SC_STORE_##C(E, (SC_FT_##C)1);                        \
		return SC_STORE_##C(E, SC_POW_##C(x, y));                            \
	}                                                                            \
	static inline T sc_atan2_##E(T a, T b)                                       \
	{                                                                            \
		return SC_STORE_##C(E, SC_ATAN2_##C(SC_LOAD_##C(E, a), SC_LOAD_##C(E, b))); \
	}                                                                            \
	/* FLOAT is IEEE (NaN unordered, -0 == +0); TOTALORDER orders the bit      \
	 * patterns as sign-magnitude integers. */                                  \
	static inline uint8_t sc_compare_##E(T a, T b, cmp_direction d, cmp_type t)  \
	{                                                                            \
		if (t == CMPT_TOTALORDER)                                            \
			return sc_compare_keys(SC_TKEY_##C(E, sc_bits_##E(a), W),    \
					       SC_TKEY_##C(E, sc_bits_##E(b), W), d); \
		SC_FT_##C x = SC_LOAD_##C(E, a), y = SC_LOAD_##C(E, b);              \
		return sc_direction(x < y, x == y, x > y, d);                        \
	}

/* --- complex: C complex types, real part first ------------------------------ */
#define SC_CPART_C64 float
#define SC_CPART_C128 double
#define SC_CPOW_C64 cpowf
#define SC_CPOW_C128 cpow
#define SC_CLOG_C64 clogf
#define SC_CLOG_C128 clog
#define SC_CSQRT_C64 csqrtf
#define SC_CSQRT_C128 csqrt

#define SC_KIND_COMPLEX(E, T, W) SC_COMPLEX_IMPL(E, T, SC_CPART_##E)
#define SC_COMPLEX_IMPL(E, T, P)                                                     \
	static inline P sc_re_##E(T z)                                               \
	{                                                                            \
		P p[2];                                                              \
		memcpy(p, &z, sizeof p);                                             \
		return p[0];                                                         \
	}                                                                            \
	static inline P sc_im_##E(T z)                                               \
	{                                                                            \
		P p[2];                                                              \
		memcpy(p, &z, sizeof p);                                             \
		return p[1];                                                         \
	}                                                                            \
	static inline T sc_make_##E(P re, P im)                                      \
	{                                                                            \
		P p[2] = { re, im };                                                 \
		T z;                                                                 \
		memcpy(&z, p, sizeof z);                                             \
		return z;                                                            \
	}                                                                            \
	static inline T sc_add_##E(T a, T b)                                         \
	{                                                                            \
		return sc_make_##E(sc_re_##E(a) + sc_re_##E(b), sc_im_##E(a) + sc_im_##E(b)); \
	}                                                                            \
	static inline T sc_subtract_##E(T a, T b)                                    \
	{                                                                            \
		return sc_make_##E(sc_re_##E(a) - sc_re_##E(b), sc_im_##E(a) - sc_im_##E(b)); \
	}                                                                            \
	/* C11 Annex G.5.1: (ac - bd) + (ad + bc)i, and when both parts come out   \
	 * NaN an infinite operand is recovered (as __mulsc3 and std::complex). */  \
	static inline T sc_multiply_##E(T z, T w)                                    \
	{                                                                            \
		P a = sc_re_##E(z), b = sc_im_##E(z), c = sc_re_##E(w), d = sc_im_##E(w); \
		P ac = a * c, bd = b * d, ad = a * d, bc = b * c;                    \
		P x = ac - bd, y = ad + bc;                                          \
		if (isnan(x) && isnan(y)) {                                          \
			int again = 0;                                               \
			if (isinf(a) || isinf(b)) {                                  \
				a = (P)copysign(isinf(a) ? 1 : 0, a);                   \
				b = (P)copysign(isinf(b) ? 1 : 0, b);                   \
				if (isnan(c))                                        \
					c = (P)copysign(0, c);                          \
				if (isnan(d))                                        \
					d = (P)copysign(0, d);                          \
				again = 1;                                           \
			}                                                            \
			if (isinf(c) || isinf(d)) {                                  \
				c = (P)copysign(isinf(c) ? 1 : 0, c);                   \
				d = (P)copysign(isinf(d) ? 1 : 0, d);                   \
				if (isnan(a))                                        \
					a = (P)copysign(0, a);                          \
				if (isnan(b))                                        \
					b = (P)copysign(0, b);                          \
				again = 1;                                           \
			}                                                            \
			if (!again && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) { \
				if (isnan(a))                                        \
					a = (P)copysign(0, a);                          \
				if (isnan(b))                                        \
					b = (P)copysign(0, b);                          \
				if (isnan(c))                                        \
					c = (P)copysign(0, c);                          \
				if (isnan(d))                                        \
					d = (P)copysign(0, d);                          \
				again = 1;                                           \
			}                                                            \
			if (again) {                                                 \
				x = (P)INFINITY * (a * c - b * d);                   \
				y = (P)INFINITY * (a * d + b * c);                   \
			}                                                            \
		}                                                                    \
		return sc_make_##E(x, y);                                            \
	}                                                                            \
	/* The C compiler's complex division (libgcc's __divsc3/__divdc3 with     \
	 * GCC), which is what std::complex's operator/ compiles to. */            \
	static inline T sc_divide_##E(T a, T b)                                      \
	{                                                                            \
		return a / b;                                                        \
	}                                                                            \
	/* XLA's special cases, then the C library's cpow (glibc: cexp(y log x)): \
	 * 1^y = x^0 = 1; (+inf + 0i)^y = +inf + 0i for real y > 0 and 0 for     \
	 * real y < 0. */                                                           \
	static inline T sc_power_##E(T a, T b)                                       \
	{                                                                            \
		P ar = sc_re_##E(a), ai = sc_im_##E(a), br = sc_re_##E(b), bi = sc_im_##E(b); \
		if ((ar == 1 && ai == 0) || (br == 0 && bi == 0))                    \
			return sc_make_##E(1, 0);                                    \
		if (ai == 0 && ar > 0 && isinf(ar) && bi == 0) {                     \
			if (br > 0)                                                  \
				return a;                                            \
			if (br < 0)                                                  \
				return sc_make_##E(0, 0);                            \
		}                                                                    \
		return SC_CPOW_##E(a, b);                                            \
	}                                                                            \
	/* XLA's evaluator: atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)). */   \
	static inline T sc_atan2_##E(T y, T x)                                       \
	{                                                                            \
		T i = sc_make_##E(0, 1), minus_i = sc_make_##E(-(P)0, -1);            \
		T s = SC_CSQRT_##E(sc_add_##E(sc_multiply_##E(x, x), sc_multiply_##E(y, y))); \
		T q = sc_divide_##E(sc_add_##E(x, sc_multiply_##E(i, y)), s);       \
		return sc_multiply_##E(minus_i, SC_CLOG_##E(q));                     \
	}                                                                            \
	static inline uint64_t sc_bits_##E(T a)                                      \
	{                                                                            \
		uint64_t u;                                                          \
		memcpy(&u, &a, sizeof u);                                            \
		return u;                                                            \
	}                                                                            \
	/* Only EQ and NE (the checker rejects the other directions). */          \
	static inline uint8_t sc_compare_##E(T a, T b, cmp_direction d, cmp_type t)  \
	{                                                                            \
		(void)t;                                                             \
		int eq = sc_re_##E(a) == sc_re_##E(b) && sc_im_##E(a) == sc_im_##E(b); \
		return (uint8_t)(d == CMP_EQ ? eq : d == CMP_NE ? !eq : 0);          \
	}

/* Instantiate for every evaluated type. */
#define SC_ROW_EVAL(E, ctype, kind, width) SC_##kind(E, ctype, width)
#define SC_ROW_NOEVAL(E, ctype, kind, width)
#define X(E, name, num, width, kind, ctype, ev, npy) SC_ROW_##ev(E, ctype, kind, width)
#include "core/types.def"
#undef X

/* The binary ops each kind supports: Y(OPCODE, fn, E, T) with sc_<fn>_E.
 * These are exactly the checker's type gates (doc/spec.md §4). */
#define SC_OPS_KIND_PRED(Y, E, T)                                                    \
	Y(ADD, add, E, T) Y(MULTIPLY, multiply, E, T) Y(MAXIMUM, maximum, E, T)      \
	Y(MINIMUM, minimum, E, T) Y(AND, and, E, T) Y(OR, or, E, T) Y(XOR, xor, E, T)
#define SC_OPS_INT(Y, E, T)                                                          \
	Y(ADD, add, E, T) Y(SUBTRACT, subtract, E, T) Y(MULTIPLY, multiply, E, T)    \
	Y(DIVIDE, divide, E, T) Y(REMAINDER, remainder, E, T)                        \
	Y(MAXIMUM, maximum, E, T) Y(MINIMUM, minimum, E, T) Y(POWER, power, E, T)    \
	Y(AND, and, E, T) Y(OR, or, E, T) Y(XOR, xor, E, T)                          \
	Y(SHIFT_LEFT, shift_left, E, T)                                              \
	Y(SHIFT_RIGHT_ARITHMETIC, shift_right_arithmetic, E, T)                      \
	Y(SHIFT_RIGHT_LOGICAL, shift_right_logical, E, T) Y(MULHI, mulhi, E, T)
#define SC_OPS_KIND_SINT(Y, E, T) SC_OPS_INT(Y, E, T)
#define SC_OPS_KIND_UINT(Y, E, T) SC_OPS_INT(Y, E, T)
#define SC_OPS_KIND_FLOAT(Y, E, T)                                                   \
	Y(ADD, add, E, T) Y(SUBTRACT, subtract, E, T) Y(MULTIPLY, multiply, E, T)    \
	Y(DIVIDE, divide, E, T) Y(REMAINDER, remainder, E, T)                        \
	Y(MAXIMUM, maximum, E, T) Y(MINIMUM, minimum, E, T) Y(POWER, power, E, T)    \
	Y(ATAN2, atan2, E, T)
/* Complex: no maximum, minimum, remainder (XLA's evaluator rejects them). */
#define SC_OPS_KIND_COMPLEX(Y, E, T)                                                 \
	Y(ADD, add, E, T) Y(SUBTRACT, subtract, E, T) Y(MULTIPLY, multiply, E, T)    \
	Y(DIVIDE, divide, E, T) Y(POWER, power, E, T) Y(ATAN2, atan2, E, T)

/* --- convert and iota (doc/spec.md §4): a value read into a carrier, then written --- */

/* The carrier: floats as double (exact for every evaluated float type;
 * complex values with their imaginary part in im); integers and pred as
 * their two's complement bits in u, with i the signed value (unsigned
 * sources: i is u reinterpreted, and is_unsigned is set). */
typedef struct sc_num {
	int is_float;
	int is_unsigned;
	double f;
	int64_t i;
	uint64_t u;
	int is_complex;
	double im;
} sc_num;

static inline sc_num sc_num_int(int64_t v)
{
	sc_num n = { 0, 0, 0.0, v, (uint64_t)v, 0, 0.0 };
	return n;
}

/* Float -> integer saturates (NaN -> 0); `bits` is the target's width. */
static inline int64_t sc_sat_signed(double d, int bits)
{
	double lim = ldexp(1.0, bits - 1);  /* 2^(bits-1) */
	if (isnan(d))
		return 0;
	if (d <= -lim)
		return bits >= 64 ? INT64_MIN : -(int64_t)((uint64_t)1 << (bits - 1));
	if (d >= lim)
		return bits >= 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
	return (int64_t)d;
}

static inline uint64_t sc_sat_unsigned(double d, int bits)
{
	if (isnan(d) || d <= 0)
		return 0;
	if (d >= ldexp(1.0, bits))
		return bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
	return (uint64_t)d;
}

#define SC_FROM_F64_F16(E, d) f64_to_f16(d)
#define SC_FROM_F64_BF16(E, d) f64_to_bf16(d)
#define SC_FROM_F64_F32(E, d) ((float)(d))
#define SC_FROM_F64_F64(E, d) (d)
#define SC_FROM_F64_F8(E, d) f8_from_f64(&f8_fmt_##E, d)
/* Integers convert with one rounding: to f32 and f64 directly; to f16/bf16
 * through double, exact below 2^53 (beyond, both overflow or round alike);
 * to the f8/f4 types through f32, as ml_dtypes converts an integer. */
#define SC_FROM_S64_F16(E, i) f64_to_f16((double)(i))
#define SC_FROM_S64_BF16(E, i) f64_to_bf16((double)(i))
#define SC_FROM_S64_F32(E, i) ((float)(i))
#define SC_FROM_S64_F64(E, i) ((double)(i))
#define SC_FROM_S64_F8(E, i) f8_from_f32(&f8_fmt_##E, (float)(i))
#define SC_FROM_U64_F16(E, u) f64_to_f16((double)(u))
#define SC_FROM_U64_BF16(E, u) f64_to_bf16((double)(u))
#define SC_FROM_U64_F32(E, u) ((float)(u))
#define SC_FROM_U64_F64(E, u) ((double)(u))
#define SC_FROM_U64_F8(E, u) f8_from_f32(&f8_fmt_##E, (float)(u))

#define SC_RW_KIND_PRED(E, T, W)                                                     \
	static inline sc_num sc_read_##E(const void *p)                              \
	{                                                                            \
		T x;                                                                 \
		memcpy(&x, p, sizeof x);                                             \
		sc_num n = sc_num_int(x != 0);                                       \
		n.is_unsigned = 1;                                                   \
		return n;                                                            \
	}                                                                            \
	/* anything -> pred is `!= 0` (NaN is true, -0 false; complex: either    \
	 * part) */                                                                 \
	static inline void sc_write_##E(void *p, sc_num n)                           \
	{                                                                            \
		T x = (T)(n.is_float ? n.f != 0 || n.im != 0 : n.u != 0);            \
		memcpy(p, &x, sizeof x);                                             \
	}
#define SC_RW_INT(E, T, W, UNS)                                                      \
	static inline sc_num sc_read_##E(const void *p)                              \
	{                                                                            \
		T x;                                                                 \
		memcpy(&x, p, sizeof x);                                             \
		x = sc_wrap_##E(sc_bits_##E(x));                                     \
		sc_num n = sc_num_int((int64_t)x);                                   \
		n.u = UNS ? (uint64_t)x : (uint64_t)(int64_t)x;                      \
		n.i = (int64_t)n.u;                                                  \
		n.is_unsigned = UNS;                                                 \
		return n;                                                            \
	}                                                                            \
	/* integers wrap (two's complement truncation to the bit width); floats    \
	 * saturate at the bit width */                                             \
	static inline void sc_write_##E(void *p, sc_num n)                           \
	{                                                                            \
		uint64_t bits;                                                       \
		if (!n.is_float)                                                     \
			bits = n.u;                                                  \
		else if (UNS)                                                        \
			bits = sc_sat_unsigned(n.f, SC_NBITS_##E);                   \
		else                                                                 \
			bits = (uint64_t)sc_sat_signed(n.f, SC_NBITS_##E);           \
		T x = sc_wrap_##E(bits);                                             \
		memcpy(p, &x, sizeof x);                                             \
	}
#define SC_RW_KIND_SINT(E, T, W) SC_RW_INT(E, T, W, 0)
#define SC_RW_KIND_UINT(E, T, W) SC_RW_INT(E, T, W, 1)
#define SC_RW_KIND_FLOAT(E, T, W) SC_RW_FLOAT_X(E, T, W, SC_FCLASS_##E)
#define SC_RW_FLOAT_X(E, T, W, C) SC_RW_FLOAT(E, T, W, C)
#define SC_RW_FLOAT(E, T, W, C)                                                      \
	static inline sc_num sc_read_##E(const void *p)                              \
	{                                                                            \
		T x;                                                                 \
		memcpy(&x, p, sizeof x);                                             \
		sc_num n = { 1, 0, (double)SC_LOAD_##C(E, x), 0, 0, 0, 0.0 };        \
		return n;                                                            \
	}                                                                            \
	/* from complex: the real part (the checker lets only complex through) */  \
	static inline void sc_write_##E(void *p, sc_num n)                           \
	{                                                                            \
		T x;                                                                 \
		if (n.is_float)                                                      \
			x = SC_FROM_F64_##C(E, n.f);                                 \
		else if (n.is_unsigned)                                              \
			x = SC_FROM_U64_##C(E, n.u);                                 \
		else                                                                 \
			x = SC_FROM_S64_##C(E, n.i);                                 \
		memcpy(p, &x, sizeof x);                                             \
	}
/* Complex: each part converts as a float would; a real value gets a zero
 * imaginary part; integers round once to the part type. */
#define SC_RW_KIND_COMPLEX(E, T, W) SC_RW_COMPLEX(E, T, SC_CPART_##E)
#define SC_RW_COMPLEX(E, T, P)                                                       \
	static inline sc_num sc_read_##E(const void *p)                              \
	{                                                                            \
		T x;                                                                 \
		memcpy(&x, p, sizeof x);                                             \
		sc_num n = { 1, 0, (double)sc_re_##E(x), 0, 0, 1, (double)sc_im_##E(x) }; \
		return n;                                                            \
	}                                                                            \
	static inline void sc_write_##E(void *p, sc_num n)                           \
	{                                                                            \
		T x;                                                                 \
		if (n.is_float)                                                      \
			x = sc_make_##E((P)n.f, n.is_complex ? (P)n.im : (P)0);      \
		else if (n.is_unsigned)                                              \
			x = sc_make_##E((P)n.u, 0);                                  \
		else                                                                 \
			x = sc_make_##E((P)n.i, 0);                                  \
		memcpy(p, &x, sizeof x);                                             \
	}

#define SC_RW_ROW_EVAL(E, ctype, kind, width) SC_RW_##kind(E, ctype, width)
#define SC_RW_ROW_NOEVAL(E, ctype, kind, width)
#define X(E, name, num, width, kind, ctype, ev, npy) SC_RW_ROW_##ev(E, ctype, kind, width)
#include "core/types.def"
#undef X

/* Reads the element at p of type t (an evaluated type). */
static inline sc_num sc_read(etype t, const void *p)
{
	switch (t) {
#define SC_RD_EVAL(E) \
	case ET_##E:  \
		return sc_read_##E(p);
#define SC_RD_NOEVAL(E)
#define X(E, name, num, width, kind, ctype, ev, npy) SC_RD_##ev(E)
#include "core/types.def"
#undef X
#undef SC_RD_EVAL
#undef SC_RD_NOEVAL
	default:
		return sc_num_int(0);
	}
}

/* Writes n converted to type t (doc/spec.md §4's convert rules) at p. */
static inline void sc_write(etype t, void *p, sc_num n)
{
	switch (t) {
#define SC_WR_EVAL(E)            \
	case ET_##E:             \
		sc_write_##E(p, n); \
		break;
#define SC_WR_NOEVAL(E)
#define X(E, name, num, width, kind, ctype, ev, npy) SC_WR_##ev(E)
#include "core/types.def"
#undef X
#undef SC_WR_EVAL
#undef SC_WR_NOEVAL
	default:
		break;
	}
}

/* convert: one element of type st at in to type dt at out. f16 <-> f8e5m2
 * move the bits, as ml_dtypes does (NaN payloads survive). */
static inline void sc_convert(etype dt, void *out, etype st, const void *in)
{
	if (st == ET_F16 && dt == ET_F8E5M2) {
		uint16_t h;
		memcpy(&h, in, 2);
		*(uint8_t *)out = f16_to_f8e5m2(h);
		return;
	}
	if (st == ET_F8E5M2 && dt == ET_F16) {
		uint16_t h = f8e5m2_to_f16(*(const uint8_t *)in);
		memcpy(out, &h, 2);
		return;
	}
	sc_write(dt, out, sc_read(st, in));
}

/* === unary ops, clamp, complex, mulhi, reduce-precision, stochastic-convert ===
 *
 * Per evaluated type E (storage type T), as XLA's evaluator computes them
 * (integers on their bit width, wrapping; f16, bf16 and the f8/f4 types in
 * f32, rounded once; transcendental functions from the C library, complex
 * ones from <complex.h> as std::complex calls them with libstdc++):
 *   T sc_<fn>_E(T)                  SC_UNARY_OPS_<kind> (same type)
 *   uint8_t sc_<fn>_E(T)            SC_UNARY_PRED_OPS_<kind> (is-finite)
 *   P sc_<fn>_E(T)                  SC_UNARY_PART_OPS_<kind> (complex -> part)
 *   T sc_clamp_E(T lo, T x, T hi)   every kind but complex
 *   T sc_mulhi_E(T, T)              integers (in SC_OPS_INT's binary list)
 *   T sc_reduce_precision_E(T, int exponent_bits, int mantissa_bits)  floats
 *   int64_t sc_stochastic_convert_E(T x, uint64_t random, int bits)  floats
 *   C sc_complex_E(P re, P im)      complex E from its parts
 * The row lists Y(OPCODE, fn, E, T) are the checker's type gates. */

/* The C library's function of each float compute class. */
#define SC_LIBM_F16(fn) fn##f
#define SC_LIBM_BF16(fn) fn##f
#define SC_LIBM_F32(fn) fn##f
#define SC_LIBM_F64(fn) fn
#define SC_LIBM_F8(fn) fn##f

/* Bits set in v; bit length of v (0 for 0). */
static inline int sc_popcount64(uint64_t v)
{
	return __builtin_popcountll(v);
}

static inline int sc_bitlen64(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

/* The high 64 bits of the 128-bit product of a and b. */
static inline uint64_t sc_umulhi64(uint64_t a, uint64_t b)
{
	uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
	return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* --- integers ----------------------------------------------------------------- */
#define SC_UNARY_INT(E, T, W, KIND)                                                  \
	static inline T sc_negate_##E(T a)                                           \
	{                                                                            \
		return sc_wrap_##E(0 - sc_bits_##E(a));                              \
	}                                                                            \
	/* |INT_MIN| wraps to INT_MIN */                                             \
	static inline T sc_abs_##E(T a)                                              \
	{                                                                            \
		return SC_NEG_##KIND(a) ? sc_negate_##E(a) : a;                      \
	}                                                                            \
	static inline T sc_sign_##E(T a)                                             \
	{                                                                            \
		return sc_wrap_##E((uint64_t)((int64_t)(a > 0) - (int64_t)SC_NEG_##KIND(a))); \
	}                                                                            \
	static inline T sc_not_##E(T a)                                              \
	{                                                                            \
		return sc_wrap_##E(~sc_bits_##E(a));                                 \
	}                                                                            \
	/* counted on the type's bit width (s4 -1 has 4 bits set) */                \
	static inline T sc_popcnt_##E(T a)                                           \
	{                                                                            \
		return sc_wrap_##E((uint64_t)sc_popcount64(sc_bits_##E(a)));         \
	}                                                                            \
	static inline T sc_clz_##E(T a)                                              \
	{                                                                            \
		return sc_wrap_##E((uint64_t)(SC_NBITS_##E - sc_bitlen64(sc_bits_##E(a)))); \
	}                                                                            \
	/* the high N bits of the 2N-bit product (signed or unsigned) */            \
	static inline T sc_mulhi_##E(T a, T b)                                       \
	{                                                                            \
		const int n = SC_NBITS_##E;                                          \
		if (n < 64)                                                          \
			return sc_wrap_##E((uint64_t)(SC_SIGNED_##KIND ? (uint64_t)(int64_t)a * (uint64_t)(int64_t)b \
								       : (uint64_t)a * (uint64_t)b) >> (n & 63)); \
		uint64_t x = (uint64_t)a, y = (uint64_t)b, h = sc_umulhi64(x, y);    \
		if (SC_SIGNED_##KIND) {                                              \
			if (SC_NEG_##KIND(a))                                        \
				h -= y;                                              \
			if (SC_NEG_##KIND(b))                                        \
				h -= x;                                              \
		}                                                                    \
		return (T)h;                                                         \
	}                                                                            \
	/* min(max(x, lo), hi) as std::max / std::min order them */                \
	static inline T sc_clamp_##E(T lo, T x, T hi)                                \
	{                                                                            \
		T m = x < lo ? lo : x;                                               \
		return m < hi ? m : hi;                                              \
	}
#define SC_UNARY_KIND_SINT(E, T, W) SC_UNARY_INT(E, T, W, KIND_SINT)
#define SC_UNARY_KIND_UINT(E, T, W) SC_UNARY_INT(E, T, W, KIND_UINT)

/* --- pred: not and clamp (logical) ---------------------------------------- */
#define SC_UNARY_KIND_PRED(E, T, W)                                                  \
	static inline T sc_not_##E(T a)                                              \
	{                                                                            \
		return (T)(a == 0);                                                  \
	}                                                                            \
	static inline T sc_clamp_##E(T lo, T x, T hi)                                \
	{                                                                            \
		T l = (T)(lo != 0), v = (T)(x != 0), h = (T)(hi != 0);               \
		T m = v < l ? l : v;                                                 \
		return m < h ? m : h;                                                \
	}

/* --- floats ------------------------------------------------------------------ */

/* reduce-precision on the bits of an f32 or f64 (XLA's algorithm, shared by
 * its evaluator and its CPU and GPU backends): the mantissa rounded to
 * `mbits` bits to nearest, ties to even; then, with `ebits` exponent bits,
 * values above the largest finite exponent become infinity and values at or
 * below the smallest normal exponent's predecessor become zero (subnormals
 * of the narrow format flush to zero), signs kept; a NaN stays the same NaN,
 * or becomes +infinity when there are no mantissa bits. */
#define SC_REDUCE_PRECISION_BITS(NAME, F, U, SRC_M, SRC_E)                           \
	static inline F NAME(F x, int ebits, int mbits)                              \
	{                                                                            \
		U v;                                                                 \
		memcpy(&v, &x, sizeof v);                                            \
		if (mbits < SRC_M) {                                                 \
			int drop = SRC_M - mbits;                                    \
			U last = (U)1 << drop;                                       \
			U bias = (U)((last >> 1) - 1) + (U)((v & last) >> drop);    \
			v = (U)((v + bias) & ~(last - 1));                           \
		}                                                                    \
		if (ebits < SRC_E) {                                                 \
			U sign = (U)1 << (8 * sizeof(U) - 1);                        \
			U expmask = (U)((((U)1 << SRC_E) - 1) << SRC_M);             \
			U src_bias = ((U)1 << (SRC_E - 1)) - 1;                      \
			U red_bias = ((U)1 << (ebits - 1)) - 1;                      \
			U maxe = src_bias + red_bias, mine = src_bias - red_bias;    \
			U e = v & expmask;                                           \
			if (e > (U)(maxe << SRC_M))                                  \
				v = (v & sign) | expmask;                            \
			else if (e <= (U)(mine << SRC_M))                            \
				v = v & sign;                                        \
		}                                                                    \
		F r;                                                                 \
		memcpy(&r, &v, sizeof r);                                            \
		if (isnan(x))                                                        \
			r = mbits > 0 ? x : (F)INFINITY;                             \
		return r;                                                            \
	}
SC_REDUCE_PRECISION_BITS(sc_reduce_precision_f32, float, uint32_t, 23, 8)
SC_REDUCE_PRECISION_BITS(sc_reduce_precision_f64, double, uint64_t, 52, 11)
#define SC_RP_F16 sc_reduce_precision_f32
#define SC_RP_BF16 sc_reduce_precision_f32
#define SC_RP_F32 sc_reduce_precision_f32
#define SC_RP_F64 sc_reduce_precision_f64
#define SC_RP_F8 sc_reduce_precision_f32

/* A float function of the compute value through the C library. */
#define SC_UNARY_LIBM(E, T, C, fn, lib)                                              \
	static inline T sc_##fn##_##E(T a)                                           \
	{                                                                            \
		return SC_STORE_##C(E, SC_LIBM_##C(lib)(SC_LOAD_##C(E, a)));         \
	}

/* negate and abs: on the sign bit for f16 and bf16, as IEEE 754 defines
 * them (NaN payloads, signaling ones too, kept; as f32 and f64 do them);
 * through f32 for the f8/f4 types, whose zeros and NaNs differ (fnuz, no
 * sign). */
#define SC_FNEG_F16(E, T, a) ((T)((a) ^ 0x8000u))
#define SC_FNEG_BF16(E, T, a) ((T)((a) ^ 0x8000u))
#define SC_FNEG_F32(E, T, a) (-(a))
#define SC_FNEG_F64(E, T, a) (-(a))
#define SC_FNEG_F8(E, T, a) SC_STORE_F8(E, -SC_LOAD_F8(E, a))
#define SC_FABS_F16(E, T, a) ((T)((a) & 0x7fffu))
#define SC_FABS_BF16(E, T, a) ((T)((a) & 0x7fffu))
#define SC_FABS_F32(E, T, a) fabsf(a)
#define SC_FABS_F64(E, T, a) fabs(a)
#define SC_FABS_F8(E, T, a) SC_STORE_F8(E, fabsf(SC_LOAD_F8(E, a)))

#define SC_UNARY_KIND_FLOAT(E, T, W) SC_UNARY_FLOAT_X(E, T, W, SC_FCLASS_##E)
#define SC_UNARY_FLOAT_X(E, T, W, C) SC_UNARY_FLOAT(E, T, W, C)
#define SC_UNARY_FLOAT(E, T, W, C)                                                   \
	static inline T sc_negate_##E(T a)                                           \
	{                                                                            \
		return SC_FNEG_##C(E, T, a);                                         \
	}                                                                            \
	static inline T sc_abs_##E(T a)                                              \
	{                                                                            \
		return SC_FABS_##C(E, T, a);                                         \
	}                                                                            \
	/* NaN stays NaN; +-0 keep their sign; else +-1 */                          \
	static inline T sc_sign_##E(T a)                                             \
	{                                                                            \
		SC_FT_##C x = SC_LOAD_##C(E, a);                                     \
		if (isnan(x))                                                        \
			return SC_STORE_##C(E, x);                                   \
		return SC_STORE_##C(E, SC_LIBM_##C(copysign)((SC_FT_##C)(x != 0), x)); \
	}                                                                            \
	SC_UNARY_LIBM(E, T, C, ceil, ceil)                                           \
	SC_UNARY_LIBM(E, T, C, floor, floor)                                         \
	/* half away from zero (C round) / half to even (C nearbyint) */            \
	SC_UNARY_LIBM(E, T, C, round_afz, round)                                     \
	SC_UNARY_LIBM(E, T, C, round_even, nearbyint)                                \
	SC_UNARY_LIBM(E, T, C, exp, exp)                                             \
	SC_UNARY_LIBM(E, T, C, expm1, expm1)                                         \
	SC_UNARY_LIBM(E, T, C, log, log)                                             \
	SC_UNARY_LIBM(E, T, C, log1p, log1p)                                         \
	SC_UNARY_LIBM(E, T, C, sqrt, sqrt)                                           \
	SC_UNARY_LIBM(E, T, C, cbrt, cbrt)                                           \
	SC_UNARY_LIBM(E, T, C, tanh, tanh)                                           \
	SC_UNARY_LIBM(E, T, C, sine, sin)                                            \
	SC_UNARY_LIBM(E, T, C, cosine, cos)                                          \
	SC_UNARY_LIBM(E, T, C, tan, tan)                                             \
	SC_UNARY_LIBM(E, T, C, asin, asin)                                           \
	SC_UNARY_LIBM(E, T, C, acos, acos)                                           \
	SC_UNARY_LIBM(E, T, C, atan, atan)                                           \
	SC_UNARY_LIBM(E, T, C, sinh, sinh)                                           \
	SC_UNARY_LIBM(E, T, C, cosh, cosh)                                           \
	SC_UNARY_LIBM(E, T, C, asinh, asinh)                                         \
	SC_UNARY_LIBM(E, T, C, acosh, acosh)                                         \
	SC_UNARY_LIBM(E, T, C, atanh, atanh)                                         \
	SC_UNARY_LIBM(E, T, C, erf, erf)                                             \
	/* 1 / (1 + exp(-x)) in the compute type: 0 and 1 at large |x| */          \
	static inline T sc_logistic_##E(T a)                                         \
	{                                                                            \
		SC_FT_##C x = SC_LOAD_##C(E, a);                                     \
		return SC_STORE_##C(E, (SC_FT_##C)1 / ((SC_FT_##C)1 + SC_LIBM_##C(exp)(-x))); \
	}                                                                            \
	static inline T sc_rsqrt_##E(T a)                                            \
	{                                                                            \
		return SC_STORE_##C(E, (SC_FT_##C)1 / SC_LIBM_##C(sqrt)(SC_LOAD_##C(E, a))); \
	}                                                                            \
	/* real of a real value is the value (its bits); imag is +0 */              \
	static inline T sc_real_##E(T a)                                             \
	{                                                                            \
		return a;                                                            \
	}                                                                            \
	static inline T sc_imag_##E(T a)                                             \
	{                                                                            \
		(void)a;                                                             \
		return SC_STORE_##C(E, (SC_FT_##C)0);                                \
	}                                                                            \
	static inline uint8_t sc_is_finite_##E(T a)                                  \
	{                                                                            \
		return (uint8_t)(isfinite(SC_LOAD_##C(E, a)) != 0);                  \
	}                                                                            \
	/* the first NaN of lo, x, hi; else min(max(x, lo), hi) as std::max and \
	 * std::min pick them: one of the operands, its bits unchanged */          \
	static inline T sc_clamp_##E(T lo, T x, T hi)                                \
	{                                                                            \
		SC_FT_##C l = SC_LOAD_##C(E, lo), v = SC_LOAD_##C(E, x), h = SC_LOAD_##C(E, hi); \
		if (isnan(l))                                                        \
			return lo;                                                   \
		if (isnan(v))                                                        \
			return x;                                                    \
		if (isnan(h))                                                        \
			return hi;                                                   \
		if (v < l) {                                                         \
			v = l;                                                       \
			x = lo;                                                      \
		}                                                                    \
		return v < h ? x : hi;                                               \
	}                                                                            \
	static inline T sc_reduce_precision_##E(T a, int ebits, int mbits)           \
	{                                                                            \
		return SC_STORE_##C(E, SC_RP_##C(SC_LOAD_##C(E, a), ebits, mbits));  \
	}                                                                            \
	/* XLA's evaluator: +-inf saturate, NaN -> 0, at or beyond the result's   \
	 * limits (as this type rounds them) saturate; else the magnitude's       \
	 * integer part, plus one when `random` (the type's bit width) is below   \
	 * the fraction scaled to that width; the sign applied last. `bits` is the \
	 * signed result's width. Computed in double, where every step is exact. */ \
	static inline int64_t sc_stochastic_convert_##E(T a, uint64_t random, int bits) \
	{                                                                            \
		double x = (double)SC_LOAD_##C(E, a);                                \
		int64_t max = (int64_t)(sc_mask(bits - 1));                          \
		int64_t min = -max - 1;                                              \
		int neg = signbit(x) != 0;                                           \
		if (isinf(x))                                                        \
			return neg ? min : max;                                      \
		if (isnan(x))                                                        \
			return 0;                                                    \
		if (x >= (double)SC_LOAD_##C(E, SC_FROM_S64_##C(E, max)))            \
			return max;                                                  \
		if (x <= (double)SC_LOAD_##C(E, SC_FROM_S64_##C(E, min)))            \
			return min;                                                  \
		/* beyond the range where the limits above are NaN in this type     \
		 * (f8e8m0fnu has no 0; f8e4m3fn overflows to NaN): saturate (the \
		 * evaluator's cast is undefined there) */                         \
		if (x >= ldexp(1.0, bits - 1))                                       \
			return max;                                                  \
		if (x <= -ldexp(1.0, bits - 1))                                      \
			return min;                                                  \
		x = fabs(x);                                                         \
		int64_t t = (int64_t)x;                                              \
		double frac = x - (double)t;                                         \
		if (frac != 0) {                                                     \
			uint64_t fixed = (uint64_t)ldexp(frac, etype_bit_width(ET_##E)); \
			if ((random & sc_mask(etype_bit_width(ET_##E))) < fixed) {   \
				if (t == max)                                        \
					return min;                                  \
				t++;                                                 \
			}                                                            \
		}                                                                    \
		return neg ? -t : t;                                                 \
	}

/* --- complex ------------------------------------------------------------------- */
#define SC_CX_C64(fn) fn##f
#define SC_CX_C128(fn) fn
#define SC_UNARY_KIND_COMPLEX(E, T, W) SC_UNARY_COMPLEX(E, T, SC_CPART_##E)
#define SC_UNARY_CLIB(E, T, fn, lib)                                                 \
	static inline T sc_##fn##_##E(T a)                                           \
	{                                                                            \
		return SC_CX_##E(lib)(a);                                            \
	}
#define SC_UNARY_COMPLEX(E, T, P)                                                    \
	static inline T sc_complex_##E(P re, P im)                                   \
	{                                                                            \
		return sc_make_##E(re, im);                                          \
	}                                                                            \
	static inline T sc_negate_##E(T a)                                           \
	{                                                                            \
		return sc_make_##E(-sc_re_##E(a), -sc_im_##E(a));                    \
	}                                                                            \
	/* |z| is the C library's cabs (hypot) */                                   \
	static inline P sc_abs_##E(T a)                                              \
	{                                                                            \
		return SC_CX_##E(cabs)(a);                                           \
	}                                                                            \
	static inline P sc_real_##E(T a)                                             \
	{                                                                            \
		return sc_re_##E(a);                                                 \
	}                                                                            \
	static inline P sc_imag_##E(T a)                                             \
	{                                                                            \
		return sc_im_##E(a);                                                 \
	}                                                                            \
	/* z / |z| per part, 0 for 0 */                                             \
	static inline T sc_sign_##E(T a)                                             \
	{                                                                            \
		P m = sc_abs_##E(a);                                                 \
		if (m == 0)                                                          \
			return sc_make_##E(0, 0);                                    \
		return sc_make_##E(sc_re_##E(a) / m, sc_im_##E(a) / m);              \
	}                                                                            \
	SC_UNARY_CLIB(E, T, exp, cexp)                                               \
	SC_UNARY_CLIB(E, T, log, clog)                                               \
	SC_UNARY_CLIB(E, T, sqrt, csqrt)                                             \
	SC_UNARY_CLIB(E, T, tanh, ctanh)                                             \
	SC_UNARY_CLIB(E, T, sine, csin)                                              \
	SC_UNARY_CLIB(E, T, cosine, ccos)                                            \
	SC_UNARY_CLIB(E, T, tan, ctan)                                               \
	SC_UNARY_CLIB(E, T, asin, casin)                                             \
	SC_UNARY_CLIB(E, T, acos, cacos)                                             \
	SC_UNARY_CLIB(E, T, atan, catan)                                             \
	SC_UNARY_CLIB(E, T, sinh, csinh)                                             \
	SC_UNARY_CLIB(E, T, cosh, ccosh)                                             \
	SC_UNARY_CLIB(E, T, asinh, casinh)                                           \
	SC_UNARY_CLIB(E, T, acosh, cacosh)                                           \
	SC_UNARY_CLIB(E, T, atanh, catanh)                                           \
	/* 1 / sqrt(z), the division as the compiler's complex division */         \
	static inline T sc_rsqrt_##E(T a)                                            \
	{                                                                            \
		return sc_divide_##E(sc_make_##E(1, 0), SC_CX_##E(csqrt)(a));        \
	}                                                                            \
	/* 1 / (1 + exp(-z)) */                                                     \
	static inline T sc_logistic_##E(T a)                                         \
	{                                                                            \
		T one = sc_make_##E(1, 0);                                           \
		return sc_divide_##E(one, sc_add_##E(one, SC_CX_##E(cexp)(sc_negate_##E(a)))); \
	}

#define SC_UNARY_ROW_EVAL(E, ctype, kind, width) SC_UNARY_##kind(E, ctype, width)
#define SC_UNARY_ROW_NOEVAL(E, ctype, kind, width)
#define X(E, name, num, width, kind, ctype, ev, npy) SC_UNARY_ROW_##ev(E, ctype, kind, width)
#include "core/types.def"
#undef X

/* The unary ops each kind supports, Y(OPCODE, fn, E, T) with sc_<fn>_E:
 * same-type results, pred results, and the complex types' part results.
 * These are exactly the checker's type gates (XLA's shape inference, less
 * what its evaluator refuses: expm1 and log1p of complex). */
#define SC_UNARY_OPS_KIND_PRED(Y, E, T) Y(NOT, not, E, T)
#define SC_UNARY_OPS_KIND_SINT(Y, E, T)                                              \
	Y(ABS, abs, E, T) Y(NEGATE, negate, E, T) Y(SIGN, sign, E, T) Y(NOT, not, E, T) \
	Y(POPCNT, popcnt, E, T) Y(CLZ, clz, E, T)
#define SC_UNARY_OPS_KIND_UINT(Y, E, T)                                              \
	Y(NEGATE, negate, E, T) Y(NOT, not, E, T) Y(POPCNT, popcnt, E, T) Y(CLZ, clz, E, T)
#define SC_UNARY_OPS_KIND_FLOAT(Y, E, T)                                             \
	Y(ABS, abs, E, T) Y(NEGATE, negate, E, T) Y(SIGN, sign, E, T)                \
	Y(CEIL, ceil, E, T) Y(FLOOR, floor, E, T) Y(ROUND_AFZ, round_afz, E, T)      \
	Y(ROUND_EVEN, round_even, E, T) Y(EXP, exp, E, T) Y(EXPM1, expm1, E, T)      \
	Y(LOG, log, E, T) Y(LOG1P, log1p, E, T) Y(LOGISTIC, logistic, E, T)          \
	Y(SQRT, sqrt, E, T) Y(RSQRT, rsqrt, E, T) Y(CBRT, cbrt, E, T)                \
	Y(TANH, tanh, E, T) Y(SINE, sine, E, T) Y(COSINE, cosine, E, T)              \
	Y(TAN, tan, E, T) Y(ASIN, asin, E, T) Y(ACOS, acos, E, T) Y(ATAN, atan, E, T) \
	Y(SINH, sinh, E, T) Y(COSH, cosh, E, T) Y(ASINH, asinh, E, T)                \
	Y(ACOSH, acosh, E, T) Y(ATANH, atanh, E, T) Y(ERF, erf, E, T)                \
	Y(REAL, real, E, T) Y(IMAG, imag, E, T)
#define SC_UNARY_OPS_KIND_COMPLEX(Y, E, T)                                           \
	Y(NEGATE, negate, E, T) Y(SIGN, sign, E, T) Y(EXP, exp, E, T)                \
	Y(LOG, log, E, T) Y(LOGISTIC, logistic, E, T) Y(SQRT, sqrt, E, T)            \
	Y(RSQRT, rsqrt, E, T) Y(TANH, tanh, E, T) Y(SINE, sine, E, T)                \
	Y(COSINE, cosine, E, T) Y(TAN, tan, E, T) Y(ASIN, asin, E, T)                \
	Y(ACOS, acos, E, T) Y(ATAN, atan, E, T) Y(SINH, sinh, E, T)                  \
	Y(COSH, cosh, E, T) Y(ASINH, asinh, E, T) Y(ACOSH, acosh, E, T)              \
	Y(ATANH, atanh, E, T)
#define SC_UNARY_PRED_OPS_KIND_PRED(Y, E, T)
#define SC_UNARY_PRED_OPS_KIND_SINT(Y, E, T)
#define SC_UNARY_PRED_OPS_KIND_UINT(Y, E, T)
#define SC_UNARY_PRED_OPS_KIND_FLOAT(Y, E, T) Y(IS_FINITE, is_finite, E, T)
#define SC_UNARY_PRED_OPS_KIND_COMPLEX(Y, E, T)
#define SC_UNARY_PART_OPS_KIND_PRED(Y, E, T)
#define SC_UNARY_PART_OPS_KIND_SINT(Y, E, T)
#define SC_UNARY_PART_OPS_KIND_UINT(Y, E, T)
#define SC_UNARY_PART_OPS_KIND_FLOAT(Y, E, T)
#define SC_UNARY_PART_OPS_KIND_COMPLEX(Y, E, T) Y(ABS, abs, E, T) Y(REAL, real, E, T) Y(IMAG, imag, E, T)
/* clamp: every kind but complex (XLA's evaluator refuses complex). */
#define SC_CLAMP_KIND_PRED(Y, E, T) Y(CLAMP, clamp, E, T)
#define SC_CLAMP_KIND_SINT(Y, E, T) Y(CLAMP, clamp, E, T)
#define SC_CLAMP_KIND_UINT(Y, E, T) Y(CLAMP, clamp, E, T)
#define SC_CLAMP_KIND_FLOAT(Y, E, T) Y(CLAMP, clamp, E, T)
#define SC_CLAMP_KIND_COMPLEX(Y, E, T)
/* The part type of a complex type, and the complex type of a part type. */
#define SC_PART_OF_C64 F32
#define SC_PART_OF_C128 F64

/* --- the (opcode x element type) dispatch ---------------------------------- *
 *
 * The one copy of the switch every engine uses to pick its function for an
 * (opcode, element type) pair or for an element type alone. A file defines
 * its functions per op and type (el_add_F32, rb_add_F32, rc_F32, ...) and
 * makes its lookup an instantiation:
 *
 *   #define CASE(OPC, fn, E, T) case OP_##OPC: return el_##fn##_##E;
 *           SC_LOOKUP_BY_OP_TYPE(op, t, SC_OPS, CASE)
 *   #undef CASE
 *
 * expands to `switch (t)` over the evaluated types and, in each, `switch (op)`
 * over the op list OPS_<kind> of the type's kind (SC_OPS_<kind> for the
 * binary ops, SC_UNARY_FAMILY_OPS_<kind> for the unary family), CASE(OPC,
 * fn, E, T) for each listed op; every other pair returns NULL. And
 *
 *   SC_LOOKUP_BY_TYPE(t, rc_)
 *
 * returns rc_<E> for each evaluated type t, NULL for the others. Both return
 * from the enclosing function.
 *
 * SC_EVAL_TYPES(Y, ...) is the list they iterate, Y(E, kind, ...) for each
 * row of core/types.def marked EVAL (a #include cannot sit inside a macro,
 * so the list is written out here); the static assertions below it fail the
 * build when it and core/types.def disagree. */
#define SC_EVAL_TYPES(Y, ...)                                                        \
	Y(PRED, KIND_PRED, __VA_ARGS__) Y(S1, KIND_SINT, __VA_ARGS__)                  \
	Y(S2, KIND_SINT, __VA_ARGS__) Y(S4, KIND_SINT, __VA_ARGS__)                    \
	Y(S8, KIND_SINT, __VA_ARGS__) Y(S16, KIND_SINT, __VA_ARGS__)                   \
	Y(S32, KIND_SINT, __VA_ARGS__) Y(S64, KIND_SINT, __VA_ARGS__)                  \
	Y(U1, KIND_UINT, __VA_ARGS__) Y(U2, KIND_UINT, __VA_ARGS__)                    \
	Y(U4, KIND_UINT, __VA_ARGS__) Y(U8, KIND_UINT, __VA_ARGS__)                    \
	Y(U16, KIND_UINT, __VA_ARGS__) Y(U32, KIND_UINT, __VA_ARGS__)                  \
	Y(U64, KIND_UINT, __VA_ARGS__) Y(F16, KIND_FLOAT, __VA_ARGS__)                 \
	Y(BF16, KIND_FLOAT, __VA_ARGS__) Y(F32, KIND_FLOAT, __VA_ARGS__)               \
	Y(F64, KIND_FLOAT, __VA_ARGS__) Y(F8E5M2, KIND_FLOAT, __VA_ARGS__)             \
	Y(F8E4M3, KIND_FLOAT, __VA_ARGS__) Y(F8E4M3FN, KIND_FLOAT, __VA_ARGS__)        \
	Y(F8E4M3B11FNUZ, KIND_FLOAT, __VA_ARGS__) Y(F8E3M4, KIND_FLOAT, __VA_ARGS__)   \
	Y(F8E5M2FNUZ, KIND_FLOAT, __VA_ARGS__) Y(F8E4M3FNUZ, KIND_FLOAT, __VA_ARGS__)  \
	Y(F4E2M1FN, KIND_FLOAT, __VA_ARGS__) Y(F8E8M0FNU, KIND_FLOAT, __VA_ARGS__)     \
	Y(C64, KIND_COMPLEX, __VA_ARGS__) Y(C128, KIND_COMPLEX, __VA_ARGS__)

/* SC_EVAL_TYPES against core/types.def: each EVAL row listed with its kind
 * (an unlisted one is an undeclared identifier), and as many rows. */
#define SC_LK_LISTED(E, kind, unused) sc_lk_listed_kind_##E = kind,
enum { SC_EVAL_TYPES(SC_LK_LISTED, ~) sc_lk_listed_end_ };
#undef SC_LK_LISTED
#define SC_LK_CHECK_EVAL(E, kind)                                                    \
	_Static_assert((int)sc_lk_listed_kind_##E == (int)kind,                      \
		       "SC_EVAL_TYPES: " #E "'s kind differs from core/types.def");
#define SC_LK_CHECK_NOEVAL(E, kind)
#define X(E, name, num, width, kind, ctype, ev, npy) SC_LK_CHECK_##ev(E, kind)
#include "core/types.def"
#undef X
#undef SC_LK_CHECK_EVAL
#undef SC_LK_CHECK_NOEVAL
#define SC_LK_ONE(E, kind, unused) +1
#define SC_LK_COUNT_EVAL +1
#define SC_LK_COUNT_NOEVAL
enum {
	sc_lk_listed_count_ = 0 SC_EVAL_TYPES(SC_LK_ONE, ~),
	sc_lk_eval_count_ = 0
#define X(E, name, num, width, kind, ctype, ev, npy) SC_LK_COUNT_##ev
#include "core/types.def"
#undef X
};
#undef SC_LK_ONE
#undef SC_LK_COUNT_EVAL
#undef SC_LK_COUNT_NOEVAL
_Static_assert(sc_lk_listed_count_ == sc_lk_eval_count_,
	       "SC_EVAL_TYPES lists other types than core/types.def's EVAL rows");

/* The unary family's ops per kind (eval/scalar/unary.h): same-type, pred and
 * part results, clamp, and the ops with parameters or a result-keyed type
 * (reduce-precision, stochastic-convert; complex by its result type). */
#define SC_UNARY_FAMILY_OPS_KIND_PRED(Y, E, T) SC_UNARY_FAMILY_OPS_(KIND_PRED, Y, E, T)
#define SC_UNARY_FAMILY_OPS_KIND_SINT(Y, E, T) SC_UNARY_FAMILY_OPS_(KIND_SINT, Y, E, T)
#define SC_UNARY_FAMILY_OPS_KIND_UINT(Y, E, T) SC_UNARY_FAMILY_OPS_(KIND_UINT, Y, E, T)
#define SC_UNARY_FAMILY_OPS_KIND_FLOAT(Y, E, T)                                      \
	SC_UNARY_FAMILY_OPS_(KIND_FLOAT, Y, E, T)                                    \
	Y(REDUCE_PRECISION, reduce_precision, E, T)                                  \
	Y(STOCHASTIC_CONVERT, stochastic_convert, E, T)
#define SC_UNARY_FAMILY_OPS_KIND_COMPLEX(Y, E, T)                                    \
	SC_UNARY_FAMILY_OPS_(KIND_COMPLEX, Y, E, T) Y(COMPLEX, complex, E, T)
#define SC_UNARY_FAMILY_OPS_(kind, Y, E, T)                                          \
	SC_UNARY_OPS_##kind(Y, E, T) SC_UNARY_PRED_OPS_##kind(Y, E, T)               \
	SC_UNARY_PART_OPS_##kind(Y, E, T) SC_CLAMP_##kind(Y, E, T)

#define SC_LK_OP_ROW(E, kind, op, OPS, CASE)                                         \
	case ET_##E:                                                                 \
		switch (op) {                                                        \
			OPS##_##kind(CASE, E, et_storage_##E)                        \
		default:                                                             \
			return NULL;                                                 \
		}
#define SC_LOOKUP_BY_OP_TYPE(op, t, OPS, CASE)                                       \
	switch (t) {                                                                 \
		SC_EVAL_TYPES(SC_LK_OP_ROW, op, OPS, CASE)                           \
	default:                                                                     \
		return NULL;                                                         \
	}
#define SC_LK_TYPE_ROW(E, kind, prefix)                                              \
	case ET_##E:                                                                 \
		return prefix##E;
#define SC_LOOKUP_BY_TYPE(t, prefix)                                                 \
	switch (t) {                                                                 \
		SC_EVAL_TYPES(SC_LK_TYPE_ROW, prefix)                                \
	default:                                                                     \
		return NULL;                                                         \
	}

#endif
