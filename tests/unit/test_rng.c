/* Unit tests of the random-number generators (eval/kernels/rng.h): ThreeFry2x32-20
 * and Philox4x32-10 on Random123's known-answer vectors, and
 * rng-bit-generator over a few million elements in both engines against
 * the same values computed element by element from the scalar functions;
 * a run's states start afresh in the next run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "core/literal.h"
#include "eval/eval.h"
#include "eval/kernels/rng.h"
#include "text/parse.h"
#include "unit.h"

/* Random123's tests/kat_vectors ("threefry2x32 20" and "philox4x32 10"
 * lines: counter, key, expected words), as JAX's tests/random_test.py
 * (testThreefry2x32) quotes the ThreeFry ones. */
static void test_threefry_kat(void)
{
	static const uint32_t v[3][6] = {
		{ 0, 0, 0, 0, 0x6b200159, 0x99ba4efe },
		{ 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7 },
		{ 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xc4923a9c, 0x483df7a0 },
	};
	for (int i = 0; i < 3; i++) {
		uint32_t x[2] = { v[i][0], v[i][1] }, k[2] = { v[i][2], v[i][3] };
		rng_threefry2x32(x, k);
		CU_ASSERT_EQUAL(x[0], v[i][4]);
		CU_ASSERT_EQUAL(x[1], v[i][5]);
	}
}

static void test_philox_kat(void)
{
	static const uint32_t v[3][10] = {
		{ 0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
		{ 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e,
		  0xa20bc7c6, 0x6d5451fd },
		{ 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb,
		  0x5001e420, 0x24126ea1 },
	};
	for (int i = 0; i < 3; i++) {
		uint32_t x[4] = { v[i][0], v[i][1], v[i][2], v[i][3] }, k[2] = { v[i][4], v[i][5] };
		rng_philox4x32(x, k);
		for (int j = 0; j < 4; j++)
			CU_ASSERT_EQUAL(x[j], v[i][6 + j]);
	}
}

static void test_split_and_store(void)
{
	CU_ASSERT_EQUAL(rng_split_dim(0, NULL), -1);
	CU_ASSERT_EQUAL(rng_split_dim(3, (const int64_t[]){ 3, 4, 2 }), 1);
	CU_ASSERT_EQUAL(rng_split_dim(3, (const int64_t[]){ 3, 7, 7 }), 1);
	CU_ASSERT_EQUAL(rng_split_dim(2, (const int64_t[]){ 5, 0 }), 1);
	int8_t s;
	uint8_t u;
	rng_store_bits(ET_S4, &s, 0xABCDEF0Fu);  /* low 4 bits 1111: -1 */
	CU_ASSERT_EQUAL(s, -1);
	rng_store_bits(ET_S4, &s, 0x7u);
	CU_ASSERT_EQUAL(s, 7);
	rng_store_bits(ET_U4, &u, 0xFFu);
	CU_ASSERT_EQUAL(u, 15);
	int16_t h;
	rng_store_bits(ET_S16, &h, 0x12348000u);
	CU_ASSERT_EQUAL(h, -32768);
}

/* --- rng-bit-generator at scale -------------------------------------------------- */

static module *load(hloi_context **ctx, const char *text)
{
	module *m = NULL;
	CU_ASSERT_FATAL(hloi_context_new(ctx) == HLOI_OK);
	hloi_status st = text_parse_module(&m, *ctx, "t.hlo", text, strlen(text));
	if (st == HLOI_OK)
		st = check_module(m, *ctx, NULL);
	if (st != HLOI_OK)
		hloi_context_print_diagnostics(*ctx, stderr, 0);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	return m;
}

static hloi_literal *run(module *m, hloi_context *ctx, hloi_engine engine)
{
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.engine = engine;
	hloi_literal *out = NULL;
	hloi_status st = eval_module(m, ctx, NULL, 0, &o, &out);
	if (st != HLOI_OK)
		hloi_context_print_diagnostics(ctx, stderr, 0);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	return out;
}

enum { ROWS = 1025, COLS = 2048 };  /* 2.1M elements; the split dimension is the 2048 */

/* ThreeFry u32[1025,2048] from counter 2^64 - 1000 (the counters wrap):
 * element (i, j) is word j % 2 of counter ctr + i * 1024 + j / 2. */
static void test_threefry_large(void)
{
	hloi_context *ctx;
	module *m = load(&ctx, "ENTRY e {\n  s = u64[2] constant({12345678901234, 18446744073709550616})\n"
			       "  ROOT r = (u64[2], u32[1025,2048]) rng-bit-generator(s), algorithm=rng_three_fry\n}\n");
	const uint64_t key = 12345678901234u, ctr = 18446744073709550616u;
	uint32_t k[2] = { (uint32_t)key, (uint32_t)(key >> 32) };
	for (int pass = 0; pass < 2; pass++) {
		hloi_literal *out = run(m, ctx, pass ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_DEFAULT);
		const uint64_t *st = out->elems[0]->data;
		CU_ASSERT_EQUAL(st[0], key);
		CU_ASSERT_EQUAL(st[1], ctr + (uint64_t)ROWS * (COLS / 2));
		const uint32_t *v = out->elems[1]->data;
		long bad = 0;
		for (int64_t i = 0; i < ROWS; i++)
			for (int64_t j = 0; j < COLS; j++) {
				uint64_t c = ctr + (uint64_t)(i * (COLS / 2) + j / 2);
				uint32_t x[2] = { (uint32_t)c, (uint32_t)(c >> 32) };
				rng_threefry2x32(x, k);
				bad += v[i * COLS + j] != x[j % 2];
			}
		CU_ASSERT_EQUAL(bad, 0);
		hloi_literal_free(out);
	}
	module_destroy(m);
	hloi_context_free(ctx);
}

/* Philox u32[4000001] and u64[1000003] from a u64[3] state whose counter's
 * low word carries into the high one: element i is word i % 4 (or the
 * words 2(i % 2), 2(i % 2)+1) of counter (lo + i / 4, hi) as a 128-bit sum. */
static void test_philox_large(void)
{
	hloi_context *ctx;
	module *m = load(&ctx, "ENTRY e {\n  s = u64[3] constant({987654321, 18446744073709551000, 77})\n"
			       "  a = (u64[3], u32[4000001]) rng-bit-generator(s), algorithm=rng_philox\n"
			       "  b = (u64[3], u64[1000003]) rng-bit-generator(s), algorithm=rng_default\n"
			       "  ROOT r = tuple(a, b)\n}\n");
	const uint64_t key = 987654321u, lo = 18446744073709551000u, hi = 77;
	uint32_t k[2] = { (uint32_t)key, 0 };
	for (int pass = 0; pass < 2; pass++) {
		hloi_literal *out = run(m, ctx, pass ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_DEFAULT);
		for (int wide = 0; wide < 2; wide++) {
			hloi_literal *t = out->elems[wide];
			int64_t n = wide ? 1000003 : 4000001, per = wide ? 2 : 4, blocks = (n + per - 1) / per;
			const uint64_t *st = t->elems[0]->data;
			uint64_t end = lo + (uint64_t)blocks;
			CU_ASSERT_EQUAL(st[0], key);
			CU_ASSERT_EQUAL(st[1], end);
			CU_ASSERT_EQUAL(st[2], hi + (end < lo));
			long bad = 0;
			uint32_t x[4];
			for (int64_t i = 0; i < n; i++) {
				if (i % per == 0) {
					uint64_t c = lo + (uint64_t)(i / per), ch = hi + (c < lo);
					x[0] = (uint32_t)c;
					x[1] = (uint32_t)(c >> 32);
					x[2] = (uint32_t)ch;
					x[3] = (uint32_t)(ch >> 32);
					rng_philox4x32(x, k);
				}
				if (wide) {
					uint64_t w = (uint64_t)x[2 * (i % 2)] | (uint64_t)x[2 * (i % 2) + 1] << 32;
					bad += ((const uint64_t *)t->elems[1]->data)[i] != w;
				} else {
					bad += ((const uint32_t *)t->elems[1]->data)[i] != x[i % 4];
				}
			}
			CU_ASSERT_EQUAL(bad, 0);
		}
		hloi_literal_free(out);
	}
	module_destroy(m);
	hloi_context_free(ctx);
}

/* Each run starts the states at 0x7012395: two runs of a module give the
 * same values, and two rng instructions the same stream. */
static void test_state_per_run(void)
{
	hloi_context *ctx;
	module *m = load(&ctx, "ENTRY e {\n  a = f32[] constant(0)\n  b = f32[] constant(1)\n"
			       "  u = f32[1000] rng(a, b), distribution=rng_uniform\n"
			       "  v = f32[1000] rng(a, b), distribution=rng_uniform\n"
			       "  s = u64[2] rng-get-and-update-state(), delta=5\n  ROOT r = tuple(u, v, s)\n}\n");
	hloi_literal *x = run(m, ctx, HLOI_ENGINE_DEFAULT), *y = run(m, ctx, HLOI_ENGINE_DEFAULT);
	CU_ASSERT_EQUAL(memcmp(x->elems[0]->data, y->elems[0]->data, 4000), 0);
	CU_ASSERT_EQUAL(memcmp(x->elems[0]->data, x->elems[1]->data, 4000), 0);
	const uint64_t *s = y->elems[2]->data;
	CU_ASSERT_EQUAL(s[0], 0x7012395u);
	CU_ASSERT_EQUAL(s[1], 0);
	const float *u = x->elems[0]->data;
	int inside = 1;
	for (int i = 0; i < 1000; i++)
		inside &= u[i] >= 0.0f && u[i] < 1.0f;
	CU_ASSERT(inside);
	hloi_literal_free(x);
	hloi_literal_free(y);
	module_destroy(m);
	hloi_context_free(ctx);
}

/* Outputs larger than the memory allowed fail with an error, not a crash. */
static void test_out_of_memory(void)
{
	hloi_context *ctx;
	module *m = load(&ctx, "ENTRY e {\n  s = u64[2] constant({1, 2})\n"
			       "  ROOT r = (u64[2], u32[1000000]) rng-bit-generator(s), algorithm=rng_three_fry\n}\n");
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.max_memory = 1 << 20;
	hloi_literal *out = NULL;
	CU_ASSERT_EQUAL(eval_module(m, ctx, NULL, 0, &o, &out), HLOI_ENOMEM);
	CU_ASSERT_PTR_NULL(out);
	module_destroy(m);
	hloi_context_free(ctx);
}

static const unit_test rng_tests[] = {
	{ "threefry_kat", test_threefry_kat },
	{ "philox_kat", test_philox_kat },
	{ "split_and_store", test_split_and_store },
	{ "threefry_large", test_threefry_large },
	{ "philox_large", test_philox_large },
	{ "state_per_run", test_state_per_run },
	{ "out_of_memory", test_out_of_memory },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "rng", rng_tests },
	{ NULL, NULL },
};
