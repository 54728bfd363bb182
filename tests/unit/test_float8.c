/* The small float formats (core/float8.c) against an independent oracle:
 * float8_tables.h, generated from the formats' definitions with exact
 * rationals by gen_float8_tables.py. Every encoding of each format to f32
 * and back; f32 and f64 values between, at and around the representable
 * values (ties to even, overflow, underflow to subnormals and zero); the
 * f16 <-> f8e5m2 bit path; the TOTALORDER keys. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/float8.h"
#include "core/half.h"
#include "float8_tables.h"
#include "unit.h"

typedef struct table_set {
	etype type;
	const char *name;
	const uint32_t *decode;
	const uint8_t *back;
	const f8_case32 *round32;
	size_t n32;
	const f8_case64 *round64;
	size_t n64;
} table_set;

#define SET(E, name)                                                                      \
	{ ET_##E, #name, name##_decode, name##_back, name##_round32,                      \
	  sizeof name##_round32 / sizeof name##_round32[0], name##_round64,               \
	  sizeof name##_round64 / sizeof name##_round64[0] }

static const table_set sets[] = {
	SET(F8E5M2, f8e5m2),         SET(F8E4M3, f8e4m3),         SET(F8E4M3FN, f8e4m3fn),
	SET(F8E4M3B11FNUZ, f8e4m3b11fnuz), SET(F8E3M4, f8e3m4),   SET(F8E5M2FNUZ, f8e5m2fnuz),
	SET(F8E4M3FNUZ, f8e4m3fnuz), SET(F4E2M1FN, f4e2m1fn),     SET(F8E8M0FNU, f8e8m0fnu),
};

#define N_SETS ((int)(sizeof sets / sizeof sets[0]))

static uint32_t bits32(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float f32_of(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static double f64_of(uint64_t u)
{
	double d;
	memcpy(&d, &u, 8);
	return d;
}

static void test_every_encoding(void)
{
	for (int s = 0; s < N_SETS; s++) {
		const f8_format *f = f8_format_of(sets[s].type);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		int n = 1 << f->bits, bad = 0;
		for (int v = 0; v < n; v++) {
			uint32_t got = bits32(f8_to_f32(f, (uint8_t)v));
			uint8_t back = f8_from_f32(f, f32_of(sets[s].decode[v]));
			if (got != sets[s].decode[v] || back != sets[s].back[v]) {
				if (bad++ < 5)
					fprintf(stderr, "%s 0x%02x: decodes to 0x%08x (want 0x%08x), back 0x%02x (want 0x%02x)\n",
						sets[s].name, v, got, sets[s].decode[v], back, sets[s].back[v]);
			}
			/* the f64 path agrees */
			double d = f8_to_f64(f, (uint8_t)v);
			if (!(isnan(d) ? isnan(f8_to_f32(f, (uint8_t)v)) : (float)d == f8_to_f32(f, (uint8_t)v)))
				bad++;
		}
		CU_ASSERT_EQUAL(bad, 0);
	}
}

static void test_rounding(void)
{
	for (int s = 0; s < N_SETS; s++) {
		const f8_format *f = f8_format_of(sets[s].type);
		int bad = 0;
		for (size_t i = 0; i < sets[s].n32; i++) {
			uint8_t got = f8_from_f32(f, f32_of(sets[s].round32[i].f32));
			if (got != sets[s].round32[i].enc && bad++ < 5)
				fprintf(stderr, "%s from f32 0x%08x (%.9g): 0x%02x, want 0x%02x\n", sets[s].name,
					sets[s].round32[i].f32, (double)f32_of(sets[s].round32[i].f32), got,
					sets[s].round32[i].enc);
		}
		for (size_t i = 0; i < sets[s].n64; i++) {
			uint8_t got = f8_from_f64(f, f64_of(sets[s].round64[i].f64));
			if (got != sets[s].round64[i].enc && bad++ < 5)
				fprintf(stderr, "%s from f64 %.17g: 0x%02x, want 0x%02x\n", sets[s].name,
					f64_of(sets[s].round64[i].f64), got, sets[s].round64[i].enc);
		}
		CU_ASSERT_EQUAL(bad, 0);
	}
}

/* A few results written out by hand, so that a wrong generator cannot
 * hide a wrong conversion. */
static void test_known_values(void)
{
	const f8_format *fn = f8_format_of(ET_F8E4M3FN), *e5 = f8_format_of(ET_F8E5M2);
	const f8_format *uz = f8_format_of(ET_F8E4M3FNUZ), *e8 = f8_format_of(ET_F8E8M0FNU);
	const f8_format *f4 = f8_format_of(ET_F4E2M1FN), *b11 = f8_format_of(ET_F8E4M3B11FNUZ);
	CU_ASSERT_EQUAL(f8_from_f64(fn, 448.0), 0x7e);
	CU_ASSERT_EQUAL(f8_from_f64(fn, 464.0), 0x7e);   /* tie -> even (448) */
	CU_ASSERT_EQUAL(f8_from_f64(fn, 464.5), 0x7f);   /* -> NaN: no infinity */
	CU_ASSERT_EQUAL(f8_from_f64(fn, -INFINITY), 0xff);
	CU_ASSERT_EQUAL(f8_from_f64(fn, 0.1), 0x1d);     /* 0.1015625 */
	CU_ASSERT_EQUAL(f8_from_f64(e5, 61440.0), 0x7c); /* tie with 65536 -> inf */
	CU_ASSERT_EQUAL(f8_from_f64(e5, 61439.0), 0x7b);
	CU_ASSERT_EQUAL(f8_from_f64(e5, -0.0), 0x80);
	CU_ASSERT_EQUAL(f8_from_f64(uz, -0.0), 0x00);    /* no negative zero */
	CU_ASSERT_EQUAL(f8_from_f64(uz, -1e-9), 0x00);
	CU_ASSERT_EQUAL(f8_from_f64(uz, NAN), 0x80);
	CU_ASSERT(isnan(f8_to_f64(uz, 0x80)) && signbit(f8_to_f64(uz, 0x80)));
	CU_ASSERT_EQUAL(f8_from_f64(e8, 1.5), 0x80);     /* 2: ties up */
	CU_ASSERT_EQUAL(f8_from_f64(e8, 0.0), 0xff);     /* no zero: NaN */
	CU_ASSERT_EQUAL(f8_from_f64(e8, -2.0), 0xff);
	CU_ASSERT_EQUAL(f8_from_f64(e8, 0.1), 0x7c);     /* 0.125 */
	CU_ASSERT_DOUBLE_EQUAL(f8_to_f64(e8, 0x00), ldexp(1.0, -127), 0.0);
	CU_ASSERT_EQUAL(f8_from_f64(f4, 7.0), 0x07);     /* overflow -> 6 */
	CU_ASSERT_EQUAL(f8_from_f64(f4, -100.0), 0x0f);
	CU_ASSERT_EQUAL(f8_from_f64(f4, NAN), 0x08);     /* NaN -> -0 (ml_dtypes) */
	CU_ASSERT_EQUAL(f8_from_f64(f4, 0.25), 0x00);    /* tie -> 0 */
	CU_ASSERT_EQUAL(f8_from_f64(f4, 0.75), 0x02);    /* tie -> 1 (even) */
	CU_ASSERT_DOUBLE_EQUAL(f8_to_f64(f4, 0xf7), 6.0, 0.0); /* upper bits ignored */
	CU_ASSERT_EQUAL(f8_from_f64(b11, 31.0), 0x80);   /* tie with 32 -> NaN */
	CU_ASSERT_DOUBLE_EQUAL(f8_to_f64(b11, 0x7f), 30.0, 0.0);
}

static void test_f16_e5m2(void)
{
	const f8_format *e5 = f8_format_of(ET_F8E5M2);
	int bad = 0;
	for (uint32_t h = 0; h < 0x10000; h++) {
		float x = f16_to_f32((uint16_t)h);
		uint8_t direct = f16_to_f8e5m2((uint16_t)h);
		if (isnan(x)) {
			if (!f8_is_nan(e5, direct) || (direct & 0x80) != ((h >> 8) & 0x80))
				bad++;
		} else if (direct != f8_from_f32(e5, x)) {
			bad++;
		}
	}
	for (int v = 0; v < 256; v++) {
		float x = f16_to_f32(f8e5m2_to_f16((uint8_t)v));
		float y = f8_to_f32(e5, (uint8_t)v);
		if (isnan(y) ? !isnan(x) : bits32(x) != bits32(y))
			bad++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(f16_to_f8e5m2(0x7d00), 0x7f);  /* signaling NaN: made quiet */
	CU_ASSERT_EQUAL(f8e5m2_to_f16(0x7d), 0x7d00);  /* payload kept */
}

/* TOTALORDER keys order the values; -0 before +0; NaN placement. */
static void test_total_order(void)
{
	for (int s = 0; s < N_SETS; s++) {
		const f8_format *f = f8_format_of(sets[s].type);
		int n = 1 << f->bits, bad = 0;
		for (int a = 0; a < n; a++)
			for (int b = 0; b < n; b++) {
				double x = f8_to_f64(f, (uint8_t)a), y = f8_to_f64(f, (uint8_t)b);
				uint64_t kx = f8_total_key(f, (uint8_t)a), ky = f8_total_key(f, (uint8_t)b);
				if ((a == b) != (kx == ky))
					bad++;
				if (!isnan(x) && !isnan(y) && x < y && !(kx < ky))
					bad++;
				if (x == 0 && y == 0 && signbit(x) && !signbit(y) && !(kx < ky))
					bad++;
			}
		CU_ASSERT_EQUAL(bad, 0);
		if (f->nan == F8_NAN_FNUZ)
			CU_ASSERT_EQUAL(f8_total_key(f, 0x80), 0); /* the NaN sorts first */
		if (f->nan == F8_NAN_FN || f->nan == F8_NAN_IEEE) {
			CU_ASSERT(f8_total_key(f, 0xff) < f8_total_key(f, 0x80)); /* -NaN first */
			CU_ASSERT(f8_total_key(f, 0x7f) > f8_total_key(f, f->max)); /* +NaN last */
		}
	}
}

static const unit_test float8_tests[] = {
	{ "every_encoding", test_every_encoding },
	{ "rounding", test_rounding },
	{ "known_values", test_known_values },
	{ "f16_e5m2", test_f16_e5m2 },
	{ "total_order", test_total_order },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "float8", float8_tests },
	{ NULL, NULL },
};
