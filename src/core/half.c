/* f16 (IEEE binary16) and bf16 <-> f32/f64 conversions done on the bits:
 * round to nearest, ties to even, subnormals kept, overflow to infinity,
 * NaN kept as a quiet NaN with its sign and as much payload as fits. */
#include "core/half.h"

#include <string.h>

static uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static uint64_t f64_bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u;
}

/* Shifts `v` right by `s` bits rounding to nearest, ties to even. */
static uint64_t shift_round(uint64_t v, int s)
{
	if (s <= 0)
		return v;
	if (s >= 64)
		return 0;
	uint64_t q = v >> s;
	uint64_t rem = v & ((UINT64_C(1) << s) - 1);
	uint64_t half = UINT64_C(1) << (s - 1);
	if (rem > half || (rem == half && (q & 1)))
		q++;
	return q;
}

/* Rounds a finite nonzero magnitude man * 2^exp2 (man has its top bit at
 * position `top`, i.e. value = man * 2^(exp2)) to a binary format with
 * `mbits` fraction bits and exponent bias `bias`, max biased exponent
 * emax_biased (the all-ones exponent is inf/NaN). Returns the bits without
 * the sign. */
static uint32_t round_to_format(uint64_t man, int exp2, int mbits, int bias)
{
	int top = 63 - __builtin_clzll(man);
	int e = top + exp2; /* unbiased exponent of the leading bit */
	int emin = 1 - bias;
	uint32_t inf = (uint32_t)((2 * bias + 1) << mbits);
	uint64_t q;
	if (e < emin) {
		/* subnormal: units of 2^(emin - mbits) */
		int shift = (emin - mbits) - exp2;
		q = shift >= 0 ? shift_round(man, shift) : man << -shift;
		/* q may round up to the smallest normal: the bit layout still works */
		return (uint32_t)q;
	}
	/* normal: keep mbits bits below the leading one */
	int shift = top - mbits;
	q = shift >= 0 ? shift_round(man, shift) : man << -shift;
	if (q >> (mbits + 1)) { /* rounding carried into a new bit */
		q >>= 1;
		e++;
	}
	if (e + bias >= 2 * bias + 1)
		return inf;
	return (uint32_t)(((uint64_t)(e + bias) << mbits) | (q & ((UINT64_C(1) << mbits) - 1)));
}

uint16_t f32_to_f16(float f)
{
	uint32_t u = f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t exp = (u >> 23) & 0xffu;
	uint32_t man = u & 0x7fffffu;

	if (exp == 0xff) {
		if (man == 0)
			return (uint16_t)(sign | 0x7c00u);
		return (uint16_t)(sign | 0x7e00u | (man >> 13));
	}
	if (exp == 0 && man == 0)
		return sign;
	uint64_t m = exp ? (man | 0x800000u) : man;
	int e2 = (exp ? (int)exp : 1) - 127 - 23;
	return (uint16_t)(sign | round_to_format(m, e2, 10, 15));
}

static uint16_t f64_to_half_format(double d, int mbits, int bias)
{
	uint64_t u = f64_bits(d);
	uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
	uint32_t exp = (uint32_t)((u >> 52) & 0x7ffu);
	uint64_t man = u & ((UINT64_C(1) << 52) - 1);
	uint16_t expmask = (uint16_t)(((1u << (15 - mbits)) - 1u) << mbits);

	if (exp == 0x7ff) {
		if (man == 0)
			return (uint16_t)(sign | expmask);
		return (uint16_t)(sign | expmask | (1u << (mbits - 1)) |
				  (uint16_t)(man >> (52 - mbits)));
	}
	if (exp == 0 && man == 0)
		return sign;
	uint64_t m = exp ? (man | (UINT64_C(1) << 52)) : man;
	int e2 = (exp ? (int)exp : 1) - 1023 - 52;
	return (uint16_t)(sign | round_to_format(m, e2, mbits, bias));
}

uint16_t f64_to_f16(double d)
{
	return f64_to_half_format(d, 10, 15);
}

uint16_t f64_to_bf16(double d)
{
	return f64_to_half_format(d, 7, 127);
}
