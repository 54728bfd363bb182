/* The small float formats: f8e5m2 f8e4m3 f8e4m3fn f8e4m3b11fnuz f8e5m2fnuz
 * f8e4m3fnuz f8e3m4 f8e8m0fnu (one byte each) and f4e2m1fn (the low four
 * bits of a byte), stored as their raw encodings.
 *
 * Conversions follow the ml_dtypes library that XLA's evaluator uses:
 * decoding is exact; encoding rounds once, to nearest with ties to even
 * (the implicit bit counts as the last kept bit, so f8e8m0fnu rounds 1.5
 * up to 2), keeps subnormals, and maps what a format cannot hold as
 * ml_dtypes does without saturation: an overflow becomes the format's
 * infinity, which is a NaN for the fn/fnuz/e8m0 formats and the largest
 * finite value for f4e2m1fn; NaN becomes the quiet NaN (f4e2m1fn: -0 for
 * +NaN, +0 for -NaN); -0 becomes +0 where there is no negative zero (fnuz);
 * f8e8m0fnu turns zero and negative values into its NaN. */
#ifndef HLOI_CORE_FLOAT8_H
#define HLOI_CORE_FLOAT8_H

#include <stdint.h>

#include "core/types.h"

typedef enum f8_nan_style {
	F8_NAN_IEEE,  /* exponent all ones, fraction nonzero (either sign) */
	F8_NAN_FN,    /* S.1111.111 only */
	F8_NAN_FNUZ,  /* 0x80 only (the encoding of -0) */
	F8_NAN_E8M0,  /* 0xff only */
	F8_NAN_NONE   /* f4e2m1fn: no NaN */
} f8_nan_style;

typedef struct f8_format {
	etype type;
	int bits;          /* 8, or 4 for f4e2m1fn */
	int ebits, mbits, bias;
	int is_signed;     /* f8e8m0fnu has no sign bit */
	int has_inf;       /* the IEEE-like formats e5m2, e4m3, e3m4 */
	int has_neg_zero;  /* not the fnuz formats (and e8m0 has no zero) */
	f8_nan_style nan;
	uint8_t max;       /* largest finite encoding */
	uint8_t inf;       /* what +infinity (and overflow) encodes to */
	uint8_t qnan;      /* the quiet NaN a NaN encodes to (sign clear) */
	int max_digits10;  /* C's max_digits10 of the format: printing */
	int payload_bits;  /* NaN payload bits XLA prints and parses (IEEE-like) */
} f8_format;

/* One object per format, for code that knows its type at compile time. */
extern const f8_format f8_fmt_F8E5M2, f8_fmt_F8E4M3, f8_fmt_F8E4M3FN, f8_fmt_F8E4M3B11FNUZ, f8_fmt_F8E3M4,
	f8_fmt_F8E5M2FNUZ, f8_fmt_F8E4M3FNUZ, f8_fmt_F4E2M1FN, f8_fmt_F8E8M0FNU;

/* The format of a small float type, or NULL for any other type. */
const f8_format *f8_format_of(etype t);

/* Exact value; a NaN decodes to a quiet NaN with the encoding's sign (as
 * ml_dtypes: the 0x80 NaN of the fnuz formats is negative). */
double f8_to_f64(const f8_format *f, uint8_t v);
float f8_to_f32(const f8_format *f, uint8_t v);
/* Rounds once from double (see above). */
uint8_t f8_from_f64(const f8_format *f, double d);
uint8_t f8_from_f32(const f8_format *f, float x);

int f8_is_nan(const f8_format *f, uint8_t v);
int f8_is_inf(const f8_format *f, uint8_t v);
/* The negation of an encoding (f8e8m0fnu: its NaN; fnuz: 0 and NaN stay). */
uint8_t f8_negate(const f8_format *f, uint8_t v);
/* A key whose unsigned order is TOTALORDER's order of the encodings:
 * sign-magnitude, -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN; for
 * the fnuz formats negatives move up by one to fill the missing -0 and the
 * NaN (0x80) sorts first; f8e8m0fnu (unsigned) sorts by its bits. */
uint64_t f8_total_key(const f8_format *f, uint8_t v);
/* The encoding kept from a byte that may carry garbage above the format's
 * width (f4e2m1fn: the low four bits). */
uint8_t f8_from_byte(const f8_format *f, uint8_t byte);

/* f16 <-> f8e5m2 move the bits directly (ml_dtypes' special case): the
 * same values as through f32, but NaN payloads survive. */
uint8_t f16_to_f8e5m2(uint16_t h);
uint16_t f8e5m2_to_f16(uint8_t v);

#endif
