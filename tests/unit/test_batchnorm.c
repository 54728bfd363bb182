/* Differential tests of batch-norm-training, -inference and -grad: the
 * fast engine (kernels/batchnorm.c, bn_fast) against the reference engine
 * on random programs: f32, f64, bf16 and f16; rank 1 to 4; every feature
 * index; random layouts (a result laid out otherwise, and a tiled operand,
 * which the fast engine leaves to the reference loop); shapes large enough
 * for several chunks of a feature's sums and several blocks of rows, in
 * both of the kernel's modes (short rows summed by position, long runs);
 * epsilons; scales that overflow and underflow the narrow types.
 *
 * What must agree:
 *   - the fast results on 1, 2 and 3 threads, bit for bit (the blocks of
 *     the sums are fixed by the shape), the run on 2 threads writing its
 *     result with non-temporal stores whatever its size;
 *   - inference with the reference bit for bit: its coefficients and its
 *     per-element expression are the reference's (NaN as any NaN);
 *   - training and grad with the reference within one unit in the last
 *     place of the element type at the reference's value, plus 2^-36 of
 *     the largest magnitude of that result (the sums add up in double in
 *     another order: a difference in their last bits may move the one
 *     rounding into the element type by a unit).
 * HLOI_BN_CASES=N runs N cases (default 400), HLOI_BN_SEED=S another seed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "core/half.h"
#include "core/index.h"
#include "core/literal.h"
#include "eval/eval.h"
#include "eval/fast/fast.h"
#include "eval/scalar/cplx.h"
#include "eval/scalar/halfconv.h"
#include "text/parse.h"
#include "unit.h"
#include "util/strbuf.h"

typedef struct rng {
	uint64_t s;
} rng;

static uint64_t next(rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int rnd(rng *r, int n)
{
	return (int)(next(r) % (uint64_t)n);
}

static double unif(rng *r)
{
	return (double)(next(r) >> 11) / 9007199254740992.0;
}

static double normal(rng *r)
{
	double u = unif(r) + 1e-12, v = unif(r);
	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

#define N_OF(a) ((int)(sizeof a / sizeof a[0]))

static const char *const TNAME[] = { "f32", "f64", "bf16", "f16" };
static const etype TYPE[] = { ET_F32, ET_F64, ET_BF16, ET_F16 };
static const char *const OPS[] = { "batch-norm-training", "batch-norm-inference", "batch-norm-grad" };

/* Shapes of 40K to 130K elements: with the right feature index and layout
 * they make several chunks of a feature (runs) or several blocks of rows. */
static const int64_t LARGE[][4] = {
	{ 2, 3, 120, 80 }, { 4, 50, 50, 8 }, { 3, 30000, 0, 0 }, { 40000, 3, 0, 0 },
	{ 5, 20000, 0, 0 }, { 2, 40, 1030, 0 }, { 64, 33, 7, 9 }, { 1, 129, 1000, 0 },
};

typedef struct bcase {
	int op, t, rank, fi, tiled, other_result;
	int64_t dims[4];
	int perm[4];
	double eps, mag;
} bcase;

static void append_shape(strbuf *sb, const bcase *c, const int *perm, int tiled)
{
	sb_printf(sb, "%s[", TNAME[c->t]);
	for (int d = 0; d < c->rank; d++)
		sb_printf(sb, "%s%lld", d ? "," : "", (long long)c->dims[d]);
	sb_printf(sb, "]{");
	for (int d = 0; d < c->rank; d++)
		sb_printf(sb, "%s%d", d ? "," : "", perm[d]);
	sb_printf(sb, "%s}", tiled ? ":T(2)" : "");
}

static void make_text(strbuf *sb, const bcase *c)
{
	int64_t nf = c->dims[c->fi];
	const char *t = TNAME[c->t];
	int rperm[4];
	for (int d = 0; d < c->rank; d++)
		rperm[d] = c->other_result ? c->perm[c->rank - 1 - d] : c->perm[d];
	sb_printf(sb, "HloModule bn\nENTRY e {\n  x = ");
	append_shape(sb, c, c->perm, c->tiled);
	sb_printf(sb, " parameter(0)\n");
	int nparams = c->op == 0 ? 3 : 5;
	for (int k = 1; k < nparams; k++) {
		if (c->op == 2 && k == 4) {
			sb_printf(sb, "  p4 = ");
			append_shape(sb, c, c->perm, c->tiled);
			sb_printf(sb, " parameter(4)\n");
		} else {
			sb_printf(sb, "  p%d = %s[%lld]{0} parameter(%d)\n", k, t, (long long)nf, k);
		}
	}
	sb_printf(sb, "  ROOT r = ");
	if (c->op != 1)
		sb_printf(sb, "(");
	append_shape(sb, c, rperm, 0);
	if (c->op != 1)
		sb_printf(sb, ", %s[%lld]{0}, %s[%lld]{0})", t, (long long)nf, t, (long long)nf);
	sb_printf(sb, " %s(x", OPS[c->op]);
	for (int k = 1; k < nparams; k++)
		sb_printf(sb, ", p%d", k);
	sb_printf(sb, "), epsilon=%.17g, feature_index=%d\n}\n", c->eps, c->fi);
}

static void make_case(bcase *c, rng *r, int large)
{
	memset(c, 0, sizeof *c);
	c->op = rnd(r, 3);
	c->t = rnd(r, 4);
	if (large) {
		int s = rnd(r, N_OF(LARGE));
		for (c->rank = 0; c->rank < 4 && LARGE[s][c->rank]; c->rank++)
			c->dims[c->rank] = LARGE[s][c->rank];
	} else {
		static const int64_t small[] = { 1, 2, 3, 5, 8, 17 };
		c->rank = 1 + rnd(r, 4);
		for (int d = 0; d < c->rank; d++)
			c->dims[d] = small[rnd(r, N_OF(small))];
	}
	c->fi = rnd(r, c->rank);
	for (int d = 0; d < c->rank; d++)
		c->perm[d] = c->rank - 1 - d;
	if (rnd(r, 2))
		for (int d = c->rank - 1; d > 0; d--) {
			int k = rnd(r, d + 1), tmp = c->perm[d];
			c->perm[d] = c->perm[k];
			c->perm[k] = tmp;
		}
	c->tiled = !large && rnd(r, 20) == 0;
	c->other_result = !large && c->rank > 1 && rnd(r, 20) == 0;
	static const double eps[] = { 0.001, 1e-5, 0.1, 0.0 };
	c->eps = eps[rnd(r, N_OF(eps))];
	/* the scale's magnitude: 1, or one that overflows or underflows the type */
	static const double big[] = { 1e37, 1e300, 1e37, 3e4 }, tiny[] = { 1e-39, 1e-310, 1e-39, 1e-6 };
	int m = rnd(r, 8);
	c->mag = m == 0 ? big[c->t] : m == 1 ? tiny[c->t] : 1.0;
}

/* Fills an input: x and dy normal around 1, scale normal times the case's
 * magnitude, offset and mean normal, var in [0.5, 1.5). */
static void fill(hloi_literal *lit, int param, const bcase *c, rng *r)
{
	etype t = lit->shape.type;
	size_t w = (size_t)etype_byte_width(t);
	unsigned char *p = lit->data;
	int op = c->op;
	for (size_t i = 0; p && i + w <= lit->nbytes; i += w) {
		double v = normal(r);
		if (param == 0 || (op == 2 && param == 4))
			v = v * 3 + 1;
		else if (param == 1)
			v *= c->mag;
		else if ((op == 1 && param == 4) || (op == 2 && param == 3))
			v = unif(r) + 0.5;
		cplx_write(t, p + i, v);
	}
}

/* A run; `stream`: results of any size written with non-temporal stores
 * (where the machine has them), which must not change a bit. */
static hloi_status run(module *m, hloi_context *ctx, hloi_literal **in, size_t nin, hloi_engine eng, int threads,
		       int stream, hloi_literal **out)
{
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.engine = eng;
	o.threads = threads;
	fast_tuning tu;
	fast_default_tuning(&tu);
	if (stream)
		tu.stream_bytes = 0;
	return eval_module_tuned(m, ctx, in, nin, &o, &tu, NULL, out, NULL);
}

/* The unit in the last place of the element type at |v|. */
static double ulp(etype t, double v)
{
	int p = t == ET_F64 ? 53 : t == ET_F32 ? 24 : t == ET_BF16 ? 8 : 11;
	int emin = t == ET_F64 ? -1022 : t == ET_F16 ? -14 : -126;
	int e;
	frexp(fabs(v), &e);
	if (v == 0 || e - 1 < emin)
		e = emin + 1;
	return ldexp(1.0, e - p);
}

/* Whether fast agrees with ref (exact: bit for bit, NaN as NaN). */
static int agree(const hloi_literal *ref, const hloi_literal *fast, int exact, const char *what)
{
	etype t = ref->shape.type;
	int64_t n;
	if (shape_element_count(&ref->shape, &n))
		return 0;
	if (n == 0)
		return 1;
	double big = 0;
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	do {
		double v = creal(cplx_read(t, literal_element(ref, idx)));
		if (isfinite(v) && fabs(v) > big)
			big = fabs(v);
	} while (index_next(ref->shape.rank, ref->shape.dims, idx));
	do {
		double u = creal(cplx_read(t, literal_element(ref, idx)));
		double v = creal(cplx_read(t, literal_element(fast, idx)));
		int same = (isnan(u) && isnan(v)) || u == v;
		if (!same && !exact)
			same = isfinite(u) && isfinite(v) && fabs(u - v) <= ulp(t, u) + ldexp(big, -36);
		if (!same) {
			fprintf(stderr, "%s: at linear %lld: reference %.17g, fast %.17g\n", what,
				(long long)index_to_linear(&ref->shape, idx), u, v);
			return 0;
		}
	} while (index_next(ref->shape.rank, ref->shape.dims, idx));
	return 1;
}

static int same_bits(const hloi_literal *a, const hloi_literal *b)
{
	if (shape_is_tuple(&a->shape)) {
		for (size_t i = 0; i < a->nelems; i++)
			if (!same_bits(a->elems[i], b->elems[i]))
				return 0;
		return 1;
	}
	return a->nbytes == b->nbytes && (!a->nbytes || !memcmp(a->data, b->data, a->nbytes));
}

/* One case; 1 when it passed. */
static int run_case(uint64_t seed, int large)
{
	rng r = { seed };
	bcase c;
	make_case(&c, &r, large);
	strbuf text = STRBUF_INIT;
	make_text(&text, &c);
	const char *s = sb_str(&text);
	if (getenv("HLOI_BN_SHOW"))
		fputs(s, stderr);
	module *m = NULL;
	hloi_context *ctx = NULL;
	hloi_literal *in[5] = { NULL }, *ref = NULL, *f[3] = { NULL };
	int ok = 0;
	if (hloi_context_new(&ctx) != HLOI_OK)
		goto done;
	if (text_parse_module(&m, ctx, "bn.hlo", s, strlen(s)) != HLOI_OK || check_module(m, ctx, NULL) != HLOI_OK) {
		fprintf(stderr, "case %llu: rejected:\n%s", (unsigned long long)seed, s);
		hloi_context_print_diagnostics(ctx, stderr, 0);
		goto done;
	}
	size_t nin = (size_t)m->entry->nparams;
	for (size_t i = 0; i < nin; i++) {
		if (literal_create(&in[i], m->entry->params[i]->result) != HLOI_OK)
			goto done;
		fill(in[i], (int)i, &c, &r);
	}
	if (run(m, ctx, in, nin, HLOI_ENGINE_REFERENCE, 1, 0, &ref) != HLOI_OK)
		goto fail;
	for (int k = 0; k < 3; k++)
		if (run(m, ctx, in, nin, HLOI_ENGINE_FAST, k + 1, k == 1, &f[k]) != HLOI_OK)
			goto fail;
	if (!same_bits(f[0], f[1]) || !same_bits(f[0], f[2])) {
		fprintf(stderr, "case %llu: fast results differ between thread counts:\n%s", (unsigned long long)seed, s);
		goto done;
	}
	int exact = c.op == 1;
	if (shape_is_tuple(&ref->shape)) {
		for (size_t i = 0; i < ref->nelems; i++)
			if (!agree(ref->elems[i], f[0]->elems[i], exact, "result"))
				goto fail;
	} else if (!agree(ref, f[0], exact, "result")) {
		goto fail;
	}
	ok = 1;
	goto done;
fail:
	fprintf(stderr, "case %llu: fast != reference:\n%s", (unsigned long long)seed, s);
	hloi_context_print_diagnostics(ctx, stderr, 0);
done:
	literal_destroy(ref);
	for (int k = 0; k < 3; k++)
		literal_destroy(f[k]);
	for (int k = 0; k < 5; k++)
		literal_destroy(in[k]);
	module_destroy(m);
	hloi_context_free(ctx);
	sb_free(&text);
	return ok;
}

static long env_long(const char *name, long dflt)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	long v = strtol(s, &end, 10);
	return *end ? dflt : v;
}

static void test_random(void)
{
	long cases = env_long("HLOI_BN_CASES", 400);
	uint64_t seed = (uint64_t)env_long("HLOI_BN_SEED", 1);
	int failed = 0;
	for (long i = 0; i < cases && failed < 5; i++)
		if (!run_case(seed * 1000003u + (uint64_t)i, i % 10 == 9))
			failed++;
	CU_ASSERT_EQUAL(failed, 0);
}

static uint64_t f64_bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u;
}

static double bits_f64(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

/* Whether the inline conversions of halfconv.h give core/half.c's bits at d. */
static int conv_agrees(double d)
{
	uint16_t b = hc_f64_to_bf16(d), h = hc_f64_to_f16(d);
	uint32_t bad_b = 0, bad_h = 0;
	uint16_t nb = hc_bf16_from_rounded((float)d, &bad_b), nh = hc_f16_from_rounded((float)d, &bad_h);
	if ((!bad_b && nb != f64_to_bf16(d)) || (!bad_h && nh != f64_to_f16(d))) {
		fprintf(stderr, "%.17g (%016llx): through f32 bf16 %04x (%s), f16 %04x (%s); core %04x, %04x\n", d,
			(unsigned long long)f64_bits(d), nb, bad_b ? "bad" : "taken", nh, bad_h ? "bad" : "taken",
			f64_to_bf16(d), f64_to_f16(d));
		return 0;
	}
	if (b == f64_to_bf16(d) && h == f64_to_f16(d))
		return 1;
	fprintf(stderr, "%.17g (%016llx): bf16 %04x, core %04x; f16 %04x, core %04x\n", d,
		(unsigned long long)f64_bits(d), b, f64_to_bf16(d), h, f64_to_f16(d));
	return 0;
}

/* halfconv.h against core/half.c: to bf16 and f16 from
 * every bf16 and f16 value, the midpoints between neighbours (ties) and
 * the doubles next to them, signed zeros, infinities, NaNs with payloads,
 * and random bit patterns. */
static void test_conversions(void)
{
	int bad = 0;
	for (int fmt = 0; fmt < 2; fmt++)
		for (uint32_t h = 0; h < 0x8000u && bad < 5; h++) {
			double v = fmt ? (double)f16_to_f32((uint16_t)h) : (double)bf16_to_f32((uint16_t)h);
			double w = fmt ? (double)f16_to_f32((uint16_t)(h + 1)) : (double)bf16_to_f32((uint16_t)(h + 1));
			if (!isfinite(v))
				continue;
			if (!isfinite(w))  /* past the largest: the overflow threshold */
				w = v + (v - (fmt ? (double)f16_to_f32((uint16_t)(h - 1)) : (double)bf16_to_f32((uint16_t)(h - 1))));
			double mid = v + (w - v) / 2;
			double probe[] = { v, mid, nextafter(mid, 0), nextafter(mid, INFINITY), w };
			for (int k = 0; k < 5; k++)
				bad += !conv_agrees(probe[k]) + !conv_agrees(-probe[k]);
		}
	double special[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, bits_f64(0x7ff4000000000001ull),
			     bits_f64(0xfff0123456789abcull), 1e300, -1e300, 1e-300, 4.9e-324, 3.4028234663852886e38,
			     3.4028235677973366e38, 65504.0, 65519.999, 65520.0, 5.960464477539063e-08,
			     2.9802322387695312e-08, 2.98023223876953125e-08 * 1.0000001 };
	for (int k = 0; k < N_OF(special); k++)
		bad += !conv_agrees(special[k]);
	/* the short ways are taken for ordinary values */
	double plain[] = { 1.0, -3.25, 1000.5, 0.1, -7e-5, 0.0 };
	for (int k = 0; k < N_OF(plain); k++) {
		uint32_t bb = 0, bh = 0;
		hc_bf16_from_rounded((float)plain[k], &bb);
		hc_f16_from_rounded((float)plain[k], &bh);
		bad += bb != 0 || bh != 0;
	}
	rng r = { 7 };
	for (int k = 0; k < 1000000 && bad < 5; k++) {
		uint64_t u = next(&r);
		bad += !conv_agrees(bits_f64(u));
		/* exponents near the narrow types' ranges */
		bad += !conv_agrees(ldexp(1.0 + unif(&r), rnd(&r, 300) - 150) * (rnd(&r, 2) ? 1 : -1));
	}
	CU_ASSERT_EQUAL(bad, 0);
}

static const unit_test bn_tests[] = {
	{ "16-bit float conversions", test_conversions },
	{ "fast against reference, 1 to 3 threads", test_random },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "batchnorm", bn_tests },
	{ NULL, NULL },
};
