/* The small float formats (core/float8.h): decoding from each format's
 * fields, encoding by rounding the double's significand once. */
#include "core/float8.h"

#include <math.h>
#include <string.h>

/*                                        type            bits e  m  bias sgn inf nz nan          max   inf   qnan d10 pay */
const f8_format f8_fmt_F8E5M2        = { ET_F8E5M2,        8, 5, 2, 15,  1, 1, 1, F8_NAN_IEEE, 0x7b, 0x7c, 0x7e, 2, 2 };
const f8_format f8_fmt_F8E4M3        = { ET_F8E4M3,        8, 4, 3, 7,   1, 1, 1, F8_NAN_IEEE, 0x77, 0x78, 0x7c, 3, 3 };
const f8_format f8_fmt_F8E4M3FN      = { ET_F8E4M3FN,      8, 4, 3, 7,   1, 0, 1, F8_NAN_FN,   0x7e, 0x7f, 0x7f, 3, 0 };
const f8_format f8_fmt_F8E4M3B11FNUZ = { ET_F8E4M3B11FNUZ, 8, 4, 3, 11,  1, 0, 0, F8_NAN_FNUZ, 0x7f, 0x80, 0x80, 3, 0 };
const f8_format f8_fmt_F8E3M4        = { ET_F8E3M4,        8, 3, 4, 3,   1, 1, 1, F8_NAN_IEEE, 0x6f, 0x70, 0x78, 3, 4 };
const f8_format f8_fmt_F8E5M2FNUZ    = { ET_F8E5M2FNUZ,    8, 5, 2, 16,  1, 0, 0, F8_NAN_FNUZ, 0x7f, 0x80, 0x80, 2, 0 };
const f8_format f8_fmt_F8E4M3FNUZ    = { ET_F8E4M3FNUZ,    8, 4, 3, 8,   1, 0, 0, F8_NAN_FNUZ, 0x7f, 0x80, 0x80, 3, 0 };
const f8_format f8_fmt_F4E2M1FN      = { ET_F4E2M1FN,      4, 2, 1, 1,   1, 0, 1, F8_NAN_NONE, 0x07, 0x07, 0x08, 2, 0 };
const f8_format f8_fmt_F8E8M0FNU     = { ET_F8E8M0FNU,     8, 8, 0, 127, 0, 0, 0, F8_NAN_E8M0, 0xfe, 0xff, 0xff, 2, 0 };

static const f8_format *const formats[] = {
	&f8_fmt_F8E5M2,     &f8_fmt_F8E4M3,     &f8_fmt_F8E4M3FN, &f8_fmt_F8E4M3B11FNUZ, &f8_fmt_F8E3M4,
	&f8_fmt_F8E5M2FNUZ, &f8_fmt_F8E4M3FNUZ, &f8_fmt_F4E2M1FN, &f8_fmt_F8E8M0FNU,
};

const f8_format *f8_format_of(etype t)
{
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
		if (formats[i]->type == t)
			return formats[i];
	return NULL;
}

static uint8_t sign_bit(const f8_format *f)
{
	if (!f->is_signed)
		return 0;
	return (uint8_t)(1u << (f->bits - 1));
}

uint8_t f8_from_byte(const f8_format *f, uint8_t byte)
{
	if (f->bits == 8)
		return byte;
	return (uint8_t)(byte & ((1u << f->bits) - 1u));
}

int f8_is_nan(const f8_format *f, uint8_t v)
{
	uint8_t mag = (uint8_t)(v & ~sign_bit(f));
	switch (f->nan) {
	case F8_NAN_IEEE: {
		unsigned emax = (1u << f->ebits) - 1u;
		return (unsigned)(mag >> f->mbits) == emax && (mag & ((1u << f->mbits) - 1u)) != 0;
	}
	case F8_NAN_FN: return mag == 0x7f;
	case F8_NAN_FNUZ: return v == 0x80;
	case F8_NAN_E8M0: return v == 0xff;
	default: return 0;
	}
}

int f8_is_inf(const f8_format *f, uint8_t v)
{
	return f->has_inf && (uint8_t)(v & ~sign_bit(f)) == f->inf;
}

uint8_t f8_negate(const f8_format *f, uint8_t v)
{
	if (!f->is_signed)
		return f->qnan;
	if (!f->has_neg_zero && (v & 0x7f) == 0)
		return v; /* +0 stays, and so does the NaN */
	return (uint8_t)(v ^ sign_bit(f));
}

double f8_to_f64(const f8_format *f, uint8_t v)
{
	v = f8_from_byte(f, v);
	uint8_t sb = sign_bit(f);
	int neg = (v & sb) != 0;
	if (f8_is_nan(f, v))
		return neg ? -(double)NAN : (double)NAN;
	if (f8_is_inf(f, v))
		return neg ? -(double)INFINITY : (double)INFINITY;
	unsigned mag = (unsigned)(v & ~sb);
	int e = (int)(mag >> f->mbits);
	int m = (int)(mag & ((1u << f->mbits) - 1u));
	double r;
	if (e == 0 && f->nan != F8_NAN_E8M0) /* zero or subnormal */
		r = ldexp((double)m, 1 - f->bias - f->mbits);
	else
		r = ldexp((double)((1 << f->mbits) + m), e - f->bias - f->mbits);
	return neg ? -r : r;
}

float f8_to_f32(const f8_format *f, uint8_t v)
{
	return (float)f8_to_f64(f, v); /* exact: every value fits f32 */
}

/* v / 2^s rounded to nearest, ties to even. */
static uint64_t shift_round(uint64_t v, int s)
{
	if (s <= 0)
		return v;
	if (s >= 64)
		return 0;
	uint64_t q = v >> s, rem = v & ((UINT64_C(1) << s) - 1), half = UINT64_C(1) << (s - 1);
	if (rem > half || (rem == half && (q & 1)))
		q++;
	return q;
}

uint8_t f8_from_f64(const f8_format *f, double d)
{
	int neg = signbit(d) != 0;
	if (isnan(d))
		return neg ? f8_negate(f, f->qnan) : f->qnan;
	if (isinf(d))
		return neg ? f8_negate(f, f->inf) : f->inf;
	if (d == 0) {
		if (f->nan == F8_NAN_E8M0)
			return f->qnan; /* no zero */
		return neg ? f8_negate(f, 0) : 0;
	}
	if (neg && !f->is_signed)
		return f->qnan;
	/* |d| = sig * 2^(e - 52), sig with its leading one at bit 52 */
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	uint64_t frac = u & ((UINT64_C(1) << 52) - 1);
	int ef = (int)((u >> 52) & 0x7ff);
	uint64_t sig;
	int e;
	if (ef == 0) {
		int top = 63 - __builtin_clzll(frac);
		sig = frac << (52 - top);
		e = top - 1074;
	} else {
		sig = frac | (UINT64_C(1) << 52);
		e = ef - 1023;
	}
	/* `base` is the biased exponent minus one: adding the significand
	 * (with its implicit one at bit mbits) to base << mbits gives the
	 * encoding, and a carry from rounding moves into the exponent. Below
	 * the normal range the significand is shifted further (subnormals;
	 * for e8m0, which has none, this rounds up into 2^-127 or 2^-126, as
	 * ml_dtypes does). */
	int base = e + f->bias - 1;
	int shift = 52 - f->mbits + (base < 0 ? -base : 0);
	if (shift > 54)
		shift = 54; /* the result is 0 from there on */
	int64_t enc = (int64_t)shift_round(sig, shift) + ((int64_t)(base > 0 ? base : 0) << f->mbits);
	if (enc > f->max)
		enc = f->inf;
	return neg ? f8_negate(f, (uint8_t)enc) : (uint8_t)enc;
}

uint8_t f8_from_f32(const f8_format *f, float x)
{
	return f8_from_f64(f, (double)x); /* exact widening: one rounding */
}

uint64_t f8_total_key(const f8_format *f, uint8_t v)
{
	v = f8_from_byte(f, v);
	if (!f->is_signed)
		return v;
	uint8_t sb = sign_bit(f);
	int mag = v & ~sb;
	int s;
	if (!f->has_neg_zero && v == 0x80)
		s = -128; /* the fnuz NaN: lowest */
	else if (v & sb)
		s = ~(f->has_neg_zero ? mag : mag - 1);
	else
		s = mag;
	return (uint64_t)(s + (f->has_neg_zero ? sb : 128));
}

uint8_t f16_to_f8e5m2(uint16_t h)
{
	if ((h & 0x7fffu) > 0x7c00u)
		return (uint8_t)((h >> 8) | 0x02u); /* NaN: quiet, top payload bits kept */
	if ((h & 0x7fffu) == 0x7c00u)
		return (uint8_t)(h >> 8);
	uint32_t r = (uint32_t)h + 0x7fu + ((h >> 8) & 1u); /* to nearest even; carries into inf */
	return (uint8_t)(r >> 8);
}

uint16_t f8e5m2_to_f16(uint8_t v)
{
	return (uint16_t)(v << 8);
}
