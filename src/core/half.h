/* f16 (IEEE binary16) and bf16 conversions. To 16 bits: round to nearest,
 * ties to even, subnormals kept, NaN stays NaN (sign kept). From 16 bits:
 * exact. */
#ifndef HLOI_CORE_HALF_H
#define HLOI_CORE_HALF_H

#include <stdint.h>
#include <string.h>

uint16_t f32_to_f16(float f);

/* f16 to f32 (exact) inline and without branches, so that loops reading
 * f16 vectorise: the exponent rebiased on the bits; a subnormal, as an
 * f32 of the same bits scaled, minus the implicit one it then carries
 * (exact); inf and NaN keep their payload, shifted to the top. */
static inline float f16_to_f32(uint16_t h)
{
	uint32_t o = (uint32_t)(h & 0x7fffu) << 13, e = o & 0x0f800000u;
	uint32_t n = o + ((uint32_t)(127 - 15) << 23);
	uint32_t inf = n + ((uint32_t)(128 - 16) << 23);
	uint32_t sub = n + (1u << 23);
	float fs, one;
	uint32_t onebits = (uint32_t)(127 - 15 + 1) << 23;  /* 2^-14 */
	memcpy(&fs, &sub, sizeof fs);
	memcpy(&one, &onebits, sizeof one);
	fs -= one;
	uint32_t sb;
	memcpy(&sb, &fs, sizeof sb);
	uint32_t r = e == 0x0f800000u ? inf : e == 0 ? sb : n;
	r |= (uint32_t)(h & 0x8000u) << 16;
	float f;
	memcpy(&f, &r, sizeof f);
	return f;
}

/* bf16 is the top half of an f32. Inline and without branches, so that
 * the loops of both engines that convert bf16 vectorise (a call per
 * element made bf16 elementwise chains 10x slower than f32). */
static inline float bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static inline uint16_t f32_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	/* round to nearest even on the low 16 bits; overflow carries into inf */
	uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
	/* a NaN stays a quiet NaN, sign and top payload kept */
	uint32_t q = (u >> 16) | 0x0040u;
	return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? q : r);
}
/* Directly from double, rounding once (used for literal text). */
uint16_t f64_to_f16(double d);
uint16_t f64_to_bf16(double d);

#endif
