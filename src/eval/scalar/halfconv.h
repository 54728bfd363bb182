/* Conversions from f64 into the 16-bit floats written as short inline C
 * that compilers vectorise (the other way: core/half.h's inline
 * bf16_to_f32 and f16_to_f32): the same results as core/half.c's
 * f64_to_bf16 and f64_to_f16 (to nearest, ties to even, one rounding,
 * subnormals kept, overflow to infinity, NaN quiet with its sign and the
 * leading bits of its payload), for kernels that convert whole rows (tests/unit/test_batchnorm.c checks them against core/half.c).
 * The trick for the roundings from f64: rounding to odd into f32 first
 * (24 bits: at least two more than bf16's 8 and f16's 11), then to nearest
 * even, gives the one rounding to nearest even. */
#ifndef HLOI_EVAL_HALFCONV_H
#define HLOI_EVAL_HALFCONV_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float hc_bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static inline uint32_t hc_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* d rounded to f32 by rounding to odd (toward zero, the last bit set when
 * inexact): rounding that to nearest into bf16 or f16, formats of at least
 * two bits fewer, gives d rounded once (as f64_to_bf16 and f64_to_f16
 * round), subnormals and overflow included. A NaN stays a NaN with the
 * leading bits of its payload. */
static inline uint32_t hc_odd(double d)
{
	float f = (float)d;
	uint32_t u = hc_f32_bits(f);
	double b = (double)f;
	uint32_t down = fabs(b) > fabs(d) ? u - 1 : u;
	return b != d ? down | 1u : u;
}

/* f = (float)d, the double d rounded to nearest into f32, rounded to
 * nearest even into bf16: d rounded once, unless f lies on a midpoint
 * between two bf16 numbers, where the first rounding may have moved d
 * onto it (f32's numbers include bf16's and their midpoints, and rounding
 * is monotonic, so otherwise f and d lie between the same two bf16
 * midpoints); *bad becomes nonzero then. */
static inline uint16_t hc_bf16_from_rounded(float f, uint32_t *bad)
{
	uint32_t u = hc_f32_bits(f);
	*bad |= (uint32_t)((u & 0xffffu) == 0x8000u);
	uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
	return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : r);
}

/* The same into f16 for f in [2^-14, 2^16) and zeros, *bad nonzero for
 * a midpoint or any other f (subnormal, overflowing, inf, NaN). */
static inline uint16_t hc_f16_from_rounded(float f, uint32_t *bad)
{
	uint32_t u = hc_f32_bits(f), a = u & 0x7fffffffu;
	*bad |= ((uint32_t)(a - 0x38800000u >= 0x47800000u - 0x38800000u) & (uint32_t)(a != 0)) |
		(uint32_t)((a & 0x1fffu) == 0x1000u);
	/* rebias by -(127 - 15) << 23 (mod 2^32), round to nearest even on 13 bits */
	uint32_t r = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
	return (uint16_t)((a ? r : 0) | ((u >> 16) & 0x8000u));
}

static inline uint16_t hc_f64_to_bf16(double d)
{
	uint32_t u = hc_odd(d);
	uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
	return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : r);
}

static inline uint16_t hc_f64_to_f16(double d)
{
	uint32_t x = hc_odd(d);
	uint32_t sign = x & 0x80000000u, o;
	x ^= sign;
	if (x >= 0x47800000u) {         /* 2^16 and beyond, inf, NaN */
		o = x > 0x7f800000u ? 0x7e00u | ((x >> 13) & 0x3ffu) : 0x7c00u;
	} else if (x < 0x38800000u) {   /* below 2^-14: subnormal, rounded by adding 0.5 */
		o = hc_f32_bits(hc_bits_f32(x) + 0.5f) - 0x3f000000u;
	} else {                        /* normal: rebias, round to nearest even on 13 bits */
		uint32_t odd = (x >> 13) & 1u;
		o = (x + ((uint32_t)(15 - 127) << 23) + 0xfffu + odd) >> 13;
	}
	return (uint16_t)(o | (sign >> 16));
}

#endif
