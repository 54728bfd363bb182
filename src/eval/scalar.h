/* Per-element semantics of the binary ops and compare (SPEC §4), written once
 * per op and element kind and instantiated for every evaluated element type
 * from core/types.def. Both engines call these, so they cannot disagree.
 *
 * For each evaluated type E (storage type T) this defines
 *   T sc_<op>_E(T a, T b)      for the ops the kind supports (SC_OPS_<kind>)
 *   uint8_t sc_compare_E(T a, T b, cmp_direction d, cmp_type t)
 * Integer arithmetic goes through uint64_t, so wraparound is never UB;
 * f16 and bf16 compute in f32 and round once.
 */
#ifndef HLOI_EVAL_SCALAR_H
#define HLOI_EVAL_SCALAR_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/half.h"
#include "core/types.h"
#include "ir/ir.h"

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

/* --- integers (signed and unsigned) ------------------------------------- */
#define SC_INT(E, T, W, KIND)                                                        \
	static inline uint64_t sc_bits_##E(T a)                                      \
	{                                                                            \
		return (uint64_t)(SC_UT_##W)a;                                       \
	}                                                                            \
	static inline T sc_wrap_##E(uint64_t r)                                      \
	{                                                                            \
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
			return (T)-1;                                                \
		if (SC_SIGNED_##KIND && b == (T)-1)                                  \
			return sc_wrap_##E(0 - sc_bits_##E(a));                      \
		return (T)(a / b);                                                   \
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
		return n >= 8 * (W) ? 0 : sc_wrap_##E(sc_bits_##E(a) << n);          \
	}                                                                            \
	static inline T sc_shift_right_logical_##E(T a, T b)                         \
	{                                                                            \
		uint64_t n = sc_bits_##E(b);                                         \
		return n >= 8 * (W) ? 0 : sc_wrap_##E(sc_bits_##E(a) >> n);          \
	}                                                                            \
	/* The bits read as two's complement (also for unsigned types, as XLA);   \
	 * out-of-range amounts give the sign fill. */                              \
	static inline T sc_shift_right_arithmetic_##E(T a, T b)                      \
	{                                                                            \
		uint64_t n = sc_bits_##E(b), x = sc_bits_##E(a);                     \
		uint64_t all = (SC_UT_##W) ~(SC_UT_##W)0;                            \
		uint64_t neg = x >> (8 * (W) - 1);                                   \
		if (n >= 8 * (W))                                                    \
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
			uint64_t sign = (uint64_t)1 << (8 * (W) - 1);                \
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

/* --- floats: compute type, conversions and libm functions per type ------ */
#define SC_FT_F16 float
#define SC_FT_BF16 float
#define SC_FT_F32 float
#define SC_FT_F64 double
#define SC_LOAD_F16(x) f16_to_f32(x)
#define SC_LOAD_BF16(x) bf16_to_f32(x)
#define SC_LOAD_F32(x) (x)
#define SC_LOAD_F64(x) (x)
#define SC_STORE_F16(v) f32_to_f16(v)
#define SC_STORE_BF16(v) f32_to_bf16(v)
#define SC_STORE_F32(v) (v)
#define SC_STORE_F64(v) (v)
#define SC_FMOD_F16 fmodf
#define SC_FMOD_BF16 fmodf
#define SC_FMOD_F32 fmodf
#define SC_FMOD_F64 fmod
#define SC_POW_F16 powf
#define SC_POW_BF16 powf
#define SC_POW_F32 powf
#define SC_POW_F64 pow
#define SC_ATAN2_F16 atan2f
#define SC_ATAN2_BF16 atan2f
#define SC_ATAN2_F32 atan2f
#define SC_ATAN2_F64 atan2

#define SC_KIND_FLOAT(E, T, W)                                                       \
	static inline uint64_t sc_bits_##E(T a)                                      \
	{                                                                            \
		SC_UT_##W u;                                                         \
		memcpy(&u, &a, sizeof u);                                            \
		return u;                                                            \
	}                                                                            \
	static inline T sc_add_##E(T a, T b)                                         \
	{                                                                            \
		return SC_STORE_##E(SC_LOAD_##E(a) + SC_LOAD_##E(b));                \
	}                                                                            \
	static inline T sc_subtract_##E(T a, T b)                                    \
	{                                                                            \
		return SC_STORE_##E(SC_LOAD_##E(a) - SC_LOAD_##E(b));                \
	}                                                                            \
	static inline T sc_multiply_##E(T a, T b)                                    \
	{                                                                            \
		return SC_STORE_##E(SC_LOAD_##E(a) * SC_LOAD_##E(b));                \
	}                                                                            \
	static inline T sc_divide_##E(T a, T b)                                      \
	{                                                                            \
		return SC_STORE_##E(SC_LOAD_##E(a) / SC_LOAD_##E(b));                \
	}                                                                            \
	static inline T sc_remainder_##E(T a, T b)                                   \
	{                                                                            \
		return SC_STORE_##E(SC_FMOD_##E(SC_LOAD_##E(a), SC_LOAD_##E(b)));    \
	}                                                                            \
	/* NaN propagates (a NaN lhs wins); -0 < +0 (IEEE 754-2019). */             \
	static inline T sc_maximum_##E(T a, T b)                                     \
	{                                                                            \
		SC_FT_##E x = SC_LOAD_##E(a), y = SC_LOAD_##E(b);                    \
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
		SC_FT_##E x = SC_LOAD_##E(a), y = SC_LOAD_##E(b);                    \
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
		SC_FT_##E x = SC_LOAD_##E(a), y = SC_LOAD_##E(b);                    \
		if (y == 0 || x == 1)                                                \
			return SC_STORE_##E((SC_FT_##E)1);                           \
		return SC_STORE_##E(SC_POW_##E(x, y));                               \
	}                                                                            \
	static inline T sc_atan2_##E(T a, T b)                                       \
	{                                                                            \
		return SC_STORE_##E(SC_ATAN2_##E(SC_LOAD_##E(a), SC_LOAD_##E(b)));   \
	}                                                                            \
	/* FLOAT is IEEE (NaN unordered, -0 == +0); TOTALORDER orders the bit      \
	 * patterns as sign-magnitude integers. */                                  \
	static inline uint8_t sc_compare_##E(T a, T b, cmp_direction d, cmp_type t)  \
	{                                                                            \
		if (t == CMPT_TOTALORDER) {                                          \
			uint64_t sign = (uint64_t)1 << (8 * (W) - 1);                \
			uint64_t all = (SC_UT_##W) ~(SC_UT_##W)0;                    \
			return sc_compare_keys(sc_key_total(sc_bits_##E(a), sign, all), \
					       sc_key_total(sc_bits_##E(b), sign, all), d); \
		}                                                                    \
		SC_FT_##E x = SC_LOAD_##E(a), y = SC_LOAD_##E(b);                    \
		return sc_direction(x < y, x == y, x > y, d);                        \
	}

/* Instantiate for every evaluated type. */
#define SC_ROW_EVAL(E, ctype, kind, width) SC_##kind(E, ctype, width)
#define SC_ROW_NOEVAL(E, ctype, kind, width)
#define X(E, name, num, width, kind, ctype, ev, npy) SC_ROW_##ev(E, ctype, kind, width)
#include "core/types.def"
#undef X

/* The binary ops each kind supports: Y(OPCODE, fn, E, T) with sc_<fn>_E.
 * These are exactly the checker's type gates (SPEC §4). */
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
	Y(SHIFT_RIGHT_LOGICAL, shift_right_logical, E, T)
#define SC_OPS_KIND_SINT(Y, E, T) SC_OPS_INT(Y, E, T)
#define SC_OPS_KIND_UINT(Y, E, T) SC_OPS_INT(Y, E, T)
#define SC_OPS_KIND_FLOAT(Y, E, T)                                                   \
	Y(ADD, add, E, T) Y(SUBTRACT, subtract, E, T) Y(MULTIPLY, multiply, E, T)    \
	Y(DIVIDE, divide, E, T) Y(REMAINDER, remainder, E, T)                        \
	Y(MAXIMUM, maximum, E, T) Y(MINIMUM, minimum, E, T) Y(POWER, power, E, T)    \
	Y(ATAN2, atan2, E, T)

/* --- convert and iota (SPEC §4): a value read into a carrier, then written --- */

/* The carrier: floats as double (exact for every evaluated float type);
 * integers and pred as their two's complement bits in u, with i the signed
 * value (unsigned sources: i is u reinterpreted, and is_unsigned is set). */
typedef struct sc_num {
	int is_float;
	int is_unsigned;
	double f;
	int64_t i;
	uint64_t u;
} sc_num;

static inline sc_num sc_num_int(int64_t v)
{
	sc_num n = { 0, 0, 0.0, v, (uint64_t)v };
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

#define SC_FROM_F64_F16(d) f64_to_f16(d)
#define SC_FROM_F64_BF16(d) f64_to_bf16(d)
#define SC_FROM_F64_F32(d) ((float)(d))
#define SC_FROM_F64_F64(d) (d)
/* Integers convert with one rounding: to f32 and f64 directly; to f16/bf16
 * through double, exact below 2^53 (beyond, both overflow or round alike). */
#define SC_FROM_S64_F16(i) f64_to_f16((double)(i))
#define SC_FROM_S64_BF16(i) f64_to_bf16((double)(i))
#define SC_FROM_S64_F32(i) ((float)(i))
#define SC_FROM_S64_F64(i) ((double)(i))
#define SC_FROM_U64_F16(u) f64_to_f16((double)(u))
#define SC_FROM_U64_BF16(u) f64_to_bf16((double)(u))
#define SC_FROM_U64_F32(u) ((float)(u))
#define SC_FROM_U64_F64(u) ((double)(u))

#define SC_RW_KIND_PRED(E, T, W)                                                     \
	static inline sc_num sc_read_##E(const void *p)                              \
	{                                                                            \
		T x;                                                                 \
		memcpy(&x, p, sizeof x);                                             \
		sc_num n = sc_num_int(x != 0);                                       \
		n.is_unsigned = 1;                                                   \
		return n;                                                            \
	}                                                                            \
	/* anything -> pred is `!= 0` (NaN is true, -0 false) */                    \
	static inline void sc_write_##E(void *p, sc_num n)                           \
	{                                                                            \
		T x = (T)(n.is_float ? n.f != 0 : n.u != 0);                         \
		memcpy(p, &x, sizeof x);                                             \
	}
#define SC_RW_INT(E, T, W, UNS)                                                      \
	static inline sc_num sc_read_##E(const void *p)                              \
	{                                                                            \
		T x;                                                                 \
		memcpy(&x, p, sizeof x);                                             \
		sc_num n = sc_num_int((int64_t)x);                                   \
		n.u = UNS ? (uint64_t)x : (uint64_t)(int64_t)x;                      \
		n.i = (int64_t)n.u;                                                  \
		n.is_unsigned = UNS;                                                 \
		return n;                                                            \
	}                                                                            \
	/* integers wrap (two's complement truncation); floats saturate */          \
	static inline void sc_write_##E(void *p, sc_num n)                           \
	{                                                                            \
		uint64_t bits;                                                       \
		if (!n.is_float)                                                     \
			bits = n.u;                                                  \
		else if (UNS)                                                        \
			bits = sc_sat_unsigned(n.f, 8 * (W));                        \
		else                                                                 \
			bits = (uint64_t)sc_sat_signed(n.f, 8 * (W));                \
		T x = (T)(SC_UT_##W)bits;                                            \
		memcpy(p, &x, sizeof x);                                             \
	}
#define SC_RW_KIND_SINT(E, T, W) SC_RW_INT(E, T, W, 0)
#define SC_RW_KIND_UINT(E, T, W) SC_RW_INT(E, T, W, 1)
#define SC_RW_KIND_FLOAT(E, T, W)                                                    \
	static inline sc_num sc_read_##E(const void *p)                              \
	{                                                                            \
		T x;                                                                 \
		memcpy(&x, p, sizeof x);                                             \
		sc_num n = { 1, 0, (double)SC_LOAD_##E(x), 0, 0 };                   \
		return n;                                                            \
	}                                                                            \
	static inline void sc_write_##E(void *p, sc_num n)                           \
	{                                                                            \
		T x;                                                                 \
		if (n.is_float)                                                      \
			x = SC_FROM_F64_##E(n.f);                                    \
		else if (n.is_unsigned)                                              \
			x = SC_FROM_U64_##E(n.u);                                    \
		else                                                                 \
			x = SC_FROM_S64_##E(n.i);                                    \
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

/* Writes n converted to type t (SPEC §4's convert rules) at p. */
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

/* convert: one element of type st at in to type dt at out. */
static inline void sc_convert(etype dt, void *out, etype st, const void *in)
{
	sc_write(dt, out, sc_read(st, in));
}

#endif
