/* Differential tests of reduce, reduce-window and map: the fast engine
 * against the reference engine on random programs (every evaluated type,
 * every monoid reducer and reducers that are not monoids, variadic
 * reductions, random dimensions to reduce, size-0 and size-1 dimensions,
 * layout permutations and padding, windows with strides, padding and both
 * dilations), 1 to 3 threads, and the fast reductions called directly with
 * tiny strips, blocks and thread shares so that small arrays take every
 * path.
 *
 * What must agree: integer and pred results, max and min, reduce-window and
 * map bit for bit (a NaN may come out as another NaN), float multiply
 * too (the fast engine keeps the reference order for products); float add,
 * which the fast engine combines in another order, within the tolerance
 * doc/semantics.md documents:
 *   |fast - ref| <= ulp(ref) + 2^-50 * n * S, where S is the sum of the
 *   magnitudes of the init value and the n reduced elements (both sum in
 *   double; one rounding each to the type).
 * HLOI_REDUCE_CASES=N runs N cases (default 1500), HLOI_REDUCE_SEED=S
 * another seed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "core/half.h"
#include "core/index.h"
#include "core/literal.h"
#include "eval/base/engine.h"
#include "eval/eval.h"
#include "eval/kernels/reduce.h"
#include "eval/scalar/scalar.h"
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

#define N_OF(a) ((int)(sizeof a / sizeof a[0]))

static const etype all_types[] = { ET_PRED, ET_S8,  ET_S16, ET_S32, ET_S64, ET_U8,  ET_U16,
				   ET_U32,  ET_U64, ET_F16, ET_BF16, ET_F32, ET_F64 };

/* The kind of reducer a case uses. */
typedef enum rkind { RK_MONOID, RK_AFFINE, RK_ARGMAX } rkind;

typedef struct rcase {
	strbuf text;
	etype t;
	const char *op;     /* RK_MONOID: add multiply maximum minimum and or */
	rkind kind;
	int window;         /* reduce-window instead of reduce */
	int map;            /* map instead */
	int rank;
	int64_t dims[HLOI_MAX_RANK];
	int reduced[HLOI_MAX_RANK];
} rcase;

static void put_shape(strbuf *b, rng *r, etype t, int rank, const int64_t *dims, int allow_pad)
{
	sb_printf(b, "%s[", etype_name(t));
	for (int d = 0; d < rank; d++)
		sb_printf(b, "%s%lld", d ? "," : "", (long long)dims[d]);
	sb_puts(b, "]");
	if (rank == 0)
		return;
	int perm[HLOI_MAX_RANK];
	for (int d = 0; d < rank; d++)
		perm[d] = rank - 1 - d;
	if (rnd(r, 3) != 0)
		for (int d = rank - 1; d > 0; d--) {
			int k = rnd(r, d + 1), tmp = perm[d];
			perm[d] = perm[k];
			perm[k] = tmp;
		}
	sb_puts(b, "{");
	for (int d = 0; d < rank; d++)
		sb_printf(b, "%s%d", d ? "," : "", perm[d]);
	if (allow_pad && rnd(r, 5) == 0) {
		sb_puts(b, ":pad(");
		for (int d = 0; d < rank; d++)
			sb_printf(b, "%s%lld", d ? "," : "", (long long)(dims[d] + rnd(r, 3)));
		sb_puts(b, ")");
	}
	sb_puts(b, "}");
}

static int is_float(etype t)
{
	return t == ET_F16 || t == ET_BF16 || t == ET_F32 || t == ET_F64;
}

/* A random reduce, reduce-window or map program. */
static void make_case(rcase *c, rng *r, int large)
{
	strbuf *b = &c->text;
	c->t = all_types[rnd(r, N_OF(all_types))];
	etype t = c->t;
	const char *tn = etype_name(t);
	int pick = rnd(r, 10);
	c->window = pick >= 6 && pick < 9;
	c->map = pick == 9;
	c->kind = c->map ? RK_AFFINE : rnd(r, 5) == 0 ? RK_ARGMAX : rnd(r, 6) == 0 ? RK_AFFINE : RK_MONOID;
	if (c->window && c->kind == RK_ARGMAX && rnd(r, 2))
		c->kind = RK_MONOID;
	static const char *const fops[] = { "add", "multiply", "maximum", "minimum" };
	static const char *const iops[] = { "add", "multiply", "maximum", "minimum", "and", "or" };
	c->op = is_float(t) ? fops[rnd(r, N_OF(fops))] : iops[rnd(r, N_OF(iops))];
	if (c->kind == RK_AFFINE && t == ET_PRED)
		c->kind = RK_MONOID;
	c->rank = large ? 2 + rnd(r, 2) : rnd(r, 5);
	int64_t total = 1;
	for (int d = 0; d < c->rank; d++) {
		int64_t n = large ? 1 + rnd(r, d == c->rank - 1 ? 300 : 40) : rnd(r, 12) == 0 ? 0 : 1 + rnd(r, 6);
		if (large && rnd(r, 3) == 0)
			n = 1 + rnd(r, 3);
		if (total * n > 200000)
			n = 1;
		c->dims[d] = n;
		total *= n;
		c->reduced[d] = rnd(r, 2);
	}
	sb_printf(b, "HloModule t\n\n");
	if (c->kind == RK_MONOID) {
		int swap = rnd(r, 2);
		sb_printf(b, "f {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] %s(%s)\n}\n\n", tn,
			  tn, tn, c->op, swap ? "b, a" : "a, b");
	} else if (c->kind == RK_AFFINE) {
		/* not a monoid: 2a + b (wrapping), or for map 2a + b */
		sb_printf(b, "f {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  two = %s[] constant(2)\n"
			     "  t = %s[] multiply(a, two)\n  ROOT r = %s[] add(t, b)\n}\n\n", tn, tn, tn, tn, tn);
	} else {
		sb_printf(b, "f {\n  v = %s[] parameter(0)\n  i = s32[] parameter(1)\n  w = %s[] parameter(2)\n"
			     "  j = s32[] parameter(3)\n  gt = pred[] compare(w, v), direction=GT\n"
			     "  v.1 = %s[] select(gt, w, v)\n  i.1 = s32[] select(gt, j, i)\n"
			     "  ROOT r = (%s[], s32[]) tuple(v.1, i.1)\n}\n\n", tn, tn, tn, tn);
	}
	sb_puts(b, "ENTRY e {\n  x = ");
	put_shape(b, r, t, c->rank, c->dims, 1);
	sb_puts(b, " parameter(0)\n");
	if (c->map) {
		sb_puts(b, "  y = ");
		put_shape(b, r, t, c->rank, c->dims, 1);
		sb_puts(b, " parameter(1)\n  ROOT m = ");
		put_shape(b, r, t, c->rank, c->dims, 1);
		sb_printf(b, " map(x, y), dimensions={");
		for (int d = 0; d < c->rank; d++)
			sb_printf(b, "%s%d", d ? "," : "", d);
		sb_puts(b, "}, to_apply=f\n}\n");
		return;
	}
	sb_printf(b, "  i = %s[] parameter(1)\n", tn);
	if (c->kind == RK_ARGMAX) {
		sb_puts(b, "  k = ");
		put_shape(b, r, ET_S32, c->rank, c->dims, 1);
		sb_printf(b, " iota(), iota_dimension=%d\n  none = s32[] constant(-1)\n",
			  c->rank ? rnd(r, c->rank) : 0);
	}
	int64_t out[HLOI_MAX_RANK];
	int orank = 0;
	strbuf attrs = STRBUF_INIT;
	if (c->window && c->rank == 0) {
		orank = 0;  /* no window: one position */
	} else if (c->window) {
		sb_puts(&attrs, ", window={size=");
		int64_t size[HLOI_MAX_RANK], stride[HLOI_MAX_RANK], lo[HLOI_MAX_RANK], hi[HLOI_MAX_RANK],
			ld[HLOI_MAX_RANK], wd[HLOI_MAX_RANK];
		for (int d = 0; d < c->rank; d++) {
			size[d] = 1 + rnd(r, 3);
			stride[d] = 1 + rnd(r, 3);
			lo[d] = rnd(r, 4) - 1;
			hi[d] = rnd(r, 4) - 1;
			ld[d] = rnd(r, 3) ? 1 : 2;
			wd[d] = rnd(r, 3) ? 1 : 2;
			int64_t base = c->dims[d] ? (c->dims[d] - 1) * ld[d] + 1 : 0;
			int64_t padded = base + lo[d] + hi[d];
			if (padded < 0) {
				lo[d] = hi[d] = 0;
				padded = base;
			}
			int64_t win = (size[d] - 1) * wd[d] + 1;
			out[d] = padded == 0 || win > padded ? 0 : (padded - win) / stride[d] + 1;
			sb_printf(&attrs, "%s%lld", d ? "x" : "", (long long)size[d]);
		}
		orank = c->rank;
#define WFIELD(name, arr)                                                                      \
	do {                                                                                   \
		sb_puts(&attrs, " " name "=");                                                 \
		for (int d = 0; d < c->rank; d++)                                              \
			sb_printf(&attrs, "%s%lld", d ? "x" : "", (long long)arr[d]);          \
	} while (0)
		if (c->rank) {
			WFIELD("stride", stride);
			sb_puts(&attrs, " pad=");
			for (int d = 0; d < c->rank; d++)
				sb_printf(&attrs, "%s%lld_%lld", d ? "x" : "", (long long)lo[d], (long long)hi[d]);
			WFIELD("lhs_dilate", ld);
			WFIELD("rhs_dilate", wd);
		}
#undef WFIELD
		sb_puts(&attrs, "}");
	} else {
		sb_puts(&attrs, ", dimensions={");
		int first = 1;
		for (int d = 0; d < c->rank; d++) {
			if (c->reduced[d]) {
				sb_printf(&attrs, "%s%d", first ? "" : ",", d);
				first = 0;
			} else {
				out[orank++] = c->dims[d];
			}
		}
		sb_puts(&attrs, "}");
	}
	sb_puts(b, "  ROOT r = ");
	if (c->kind == RK_ARGMAX) {
		sb_puts(b, "(");
		put_shape(b, r, t, orank, out, 0);
		sb_puts(b, ", ");
		put_shape(b, r, ET_S32, orank, out, 0);
		sb_printf(b, ") %s(x, k, i, none)", c->window ? "reduce-window" : "reduce");
	} else {
		put_shape(b, r, t, orank, out, 1);
		sb_printf(b, " %s(x, i)", c->window ? "reduce-window" : "reduce");
	}
	sb_printf(b, "%s, to_apply=f\n}\n", sb_str(&attrs));
	sb_free(&attrs);
}

/* Random contents: bounded floats for add (so that sums stay finite in any
 * order), else raw bits, small integers and float specials (products that
 * overflow and underflow too: the engines take them in one order). */
static void fill(hloi_literal *lit, rng *r, const rcase *c)
{
	etype t = lit->shape.type;
	size_t w = (size_t)etype_byte_width(t);
	unsigned char *p = lit->data;
	int bounded = is_float(t) && c->kind == RK_MONOID && strcmp(c->op, "add") == 0;
	for (size_t i = 0; p && i + w <= lit->nbytes; i += w) {
		uint64_t v = next(r);
		if (t == ET_PRED) {
			p[i] = (unsigned char)(rnd(r, 8) == 0 ? (v & 0xff) : (v & 1));
			continue;
		}
		if (bounded) {
			double d = (unif(r) - 0.5) * 2000.0;
			sc_num n = { 1, 0, d, 0, 0 };
			sc_write(t, p + i, n);
			continue;
		}
		int how = rnd(r, 4);
		if (how == 1) {
			sc_num n = sc_num_int(rnd(r, 12) - 3);
			if (is_float(t)) {
				n.is_float = 1;
				n.f = (double)n.i / (rnd(r, 2) ? 1.0 : 4.0);
			}
			sc_write(t, p + i, n);
			continue;
		}
		if (how == 2 && is_float(t)) {
			static const double specials[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN };
			sc_num n = { 1, 0, specials[rnd(r, N_OF(specials))], 0, 0 };
			sc_write(t, p + i, n);
			continue;
		}
		memcpy(p + i, &v, w);
	}
}

static double as_double(etype t, const void *p)
{
	return sc_read(t, p).f;
}

static int is_nan_el(etype t, const void *p)
{
	return is_float(t) && isnan(as_double(t, p));
}

/* ulp of a float type at |x| (the spacing of the type's values there). */
static double ulp_of(etype t, double x)
{
	int p = t == ET_F64 ? 53 : t == ET_F32 ? 24 : t == ET_F16 ? 11 : 8;
	int emin = t == ET_F64 ? -1022 : t == ET_F32 ? -126 : t == ET_F16 ? -14 : -126;
	int e;
	frexp(fabs(x), &e);
	if (e - 1 < emin)
		e = emin + 1;
	return ldexp(1.0, e - p);
}

/* Elements of the array results a (reference) and b (fast) agree: bitwise,
 * NaN for NaN, or (float add of a reduce) within the
 * tolerance, given per element the count n and magnitude sum S (mag). */
static int agree(const rcase *c, const hloi_literal *a, const hloi_literal *b, const double *n, const double *mag)
{
	if (a->nbytes != b->nbytes || a->shape.type != b->shape.type)
		return 0;
	etype t = a->shape.type;
	int64_t count;
	if (shape_element_count(&a->shape, &count))
		return 0;
	if (count == 0)
		return 1;
	int tol = !c->window && !c->map && c->kind == RK_MONOID && is_float(t) && strcmp(c->op, "add") == 0;
	int64_t idx[HLOI_MAX_RANK] = { 0 }, k = 0;
	do {
		const void *x = literal_element(a, idx), *y = literal_element(b, idx);
		size_t w = (size_t)etype_byte_width(t);
		if (memcmp(x, y, w) != 0 && !(is_nan_el(t, x) && is_nan_el(t, y))) {
			if (!tol)
				return 0;
			double u = as_double(t, x), v = as_double(t, y);
			double bound = ulp_of(t, u) + ldexp(1.0, -50) * n[k] * mag[k];
			if (!(fabs(u - v) <= bound)) {
				fprintf(stderr, "element %lld: reference %.17g, fast %.17g, bound %.3g\n", (long long)k, u,
					v, bound);
				return 0;
			}
		}
		k++;
	} while (index_next(a->shape.rank, a->shape.dims, idx));
	return 1;
}

/* Per result element of a reduce (row-major): the count of reduced
 * elements and the sum of magnitudes of init and elements. */
static void magnitudes(const rcase *c, const hloi_literal *x, const hloi_literal *init, double *n, double *mag,
		       int64_t nout)
{
	double i0 = fabs(as_double(init->shape.type, init->data));
	for (int64_t o = 0; o < nout; o++) {
		n[o] = 0;
		mag[o] = i0;
	}
	int64_t total;
	if (shape_element_count(&x->shape, &total) || total == 0)
		return;
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	do {
		int64_t o = 0;
		for (int d = 0; d < c->rank; d++)
			if (!c->reduced[d])
				o = o * c->dims[d] + idx[d];
		n[o] += 1;
		mag[o] += fabs(as_double(x->shape.type, literal_element(x, idx)));
	} while (index_next(x->shape.rank, x->shape.dims, idx));
}

static hloi_status run(module *m, hloi_context *ctx, hloi_literal **in, size_t nin, hloi_engine eng, int threads,
		       hloi_literal **out)
{
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.engine = eng;
	o.threads = threads;
	return eval_module(m, ctx, in, nin, &o, out);
}

static int same(const rcase *c, const hloi_literal *a, const hloi_literal *b, const double *n, const double *mag)
{
	if (shape_is_tuple(&a->shape)) {
		if (!shape_is_tuple(&b->shape) || a->nelems != b->nelems)
			return 0;
		for (size_t i = 0; i < a->nelems; i++)
			if (!agree(c, a->elems[i], b->elems[i], n, mag))
				return 0;
		return 1;
	}
	return agree(c, a, b, n, mag);
}

/* One case; 1 when it passed. */
static int run_case(uint64_t seed, int large)
{
	rng r = { seed };
	rcase c;
	memset(&c, 0, sizeof c);
	c.text = (strbuf)STRBUF_INIT;
	make_case(&c, &r, large);
	const char *text = sb_str(&c.text);
	if (getenv("HLOI_REDUCE_SHOW"))
		fputs(text, stderr);
	module *m = NULL;
	hloi_context *ctx = NULL;
	hloi_literal *in[2] = { NULL, NULL }, *ref = NULL, *f1 = NULL, *f2 = NULL, *f3 = NULL, *direct = NULL;
	double *n = NULL, *mag = NULL;
	int ok = 0;
	if (hloi_context_new(&ctx) != HLOI_OK)
		goto done;
	if (text_parse_module(&m, ctx, "r.hlo", text, strlen(text)) != HLOI_OK || check_module(m, ctx, NULL) != HLOI_OK) {
		if (c.kind == RK_ARGMAX && c.rank == 0) {
			ok = 1;  /* iota has no scalar form */
			goto done;
		}
		fprintf(stderr, "case %llu: rejected:\n%s", (unsigned long long)seed, text);
		hloi_context_print_diagnostics(ctx, stderr, 0);
		goto done;
	}
	size_t nin = (size_t)m->entry->nparams;
	for (size_t i = 0; i < nin; i++) {
		if (literal_create(&in[i], m->entry->params[i]->result) != HLOI_OK)
			goto done;
		fill(in[i], &r, &c);
	}
	if (run(m, ctx, in, nin, HLOI_ENGINE_REFERENCE, 1, &ref) != HLOI_OK ||
	    run(m, ctx, in, nin, HLOI_ENGINE_FAST, 1, &f1) != HLOI_OK ||
	    run(m, ctx, in, nin, HLOI_ENGINE_FAST, 2, &f2) != HLOI_OK ||
	    run(m, ctx, in, nin, HLOI_ENGINE_FAST, 3, &f3) != HLOI_OK) {
		fprintf(stderr, "case %llu: evaluation failed:\n%s", (unsigned long long)seed, text);
		hloi_context_print_diagnostics(ctx, stderr, 0);
		goto done;
	}
	const hloi_literal *r0 = shape_is_tuple(&ref->shape) ? ref->elems[0] : ref;
	int64_t nout;
	if (shape_element_count(&r0->shape, &nout))
		goto done;
	n = calloc((size_t)nout + 1, sizeof *n);
	mag = calloc((size_t)nout + 1, sizeof *mag);
	if (!n || !mag)
		goto done;
	if (!c.window && !c.map)
		magnitudes(&c, in[0], in[1], n, mag, nout);
	if (!same(&c, ref, f1, n, mag) || !same(&c, ref, f2, n, mag) || !same(&c, ref, f3, n, mag)) {
		fprintf(stderr, "case %llu: fast != reference:\n%s", (unsigned long long)seed, text);
		goto done;
	}
	/* the fast results do not depend on the number of threads */
	if (f1->nbytes != f2->nbytes || (f1->nbytes && !shape_is_tuple(&f1->shape) &&
					 (memcmp(f1->data, f2->data, f1->nbytes) || memcmp(f1->data, f3->data, f1->nbytes)))) {
		fprintf(stderr, "case %llu: fast results differ between thread counts:\n%s", (unsigned long long)seed,
			text);
		goto done;
	}
	/* The fast reductions directly, with tiny strips, blocks and shares. */
	const instr *root = m->entry->root;
	opcode op = c.kind == RK_MONOID && !c.map ? reduce_monoid(instr_called(root, ATTR_TO_APPLY, 0)) : OP_COUNT;
	if (op != OP_COUNT) {
		engine e;
		memset(&e, 0, sizeof e);
		e.threads = 1 + rnd(&r, 3);
		reduce_tuning tu = { 1 + rnd(&r, 9), 1, 1 + rnd(&r, 5) };
		if (literal_create(&direct, root->result) != HLOI_OK)
			goto done;
		int rc = c.window ? fast_reduce_window(e.threads, root, op, in[0], in[1], direct, &tu)
				  : fast_reduce(e.threads, root, op, in[0], in[1], direct, &tu);
		if (rc == 0 && !same(&c, ref, direct, n, mag)) {
			fprintf(stderr, "case %llu: direct fast (strip %lld, block %lld, %d threads) != reference:\n%s",
				(unsigned long long)seed, (long long)tu.strip, (long long)tu.block, e.threads, text);
			goto done;
		}
	}
	ok = 1;
done:
	free(n);
	free(mag);
	literal_destroy(ref);
	literal_destroy(f1);
	literal_destroy(f2);
	literal_destroy(f3);
	literal_destroy(direct);
	literal_destroy(in[0]);
	literal_destroy(in[1]);
	module_destroy(m);
	hloi_context_free(ctx);
	sb_free(&c.text);
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
	long cases = env_long("HLOI_REDUCE_CASES", 1500);
	uint64_t seed = (uint64_t)env_long("HLOI_REDUCE_SEED", 1);
	int failed = 0;
	for (long i = 0; i < cases && failed < 5; i++)
		if (!run_case(seed * 1000003u + (uint64_t)i, i % 50 == 49))
			failed++;
	CU_ASSERT_EQUAL(failed, 0);
}

/* Runs text on both engines with the given inputs; returns the reference
 * result and sets *fast (caller frees both). */
static hloi_literal *run_both(const char *text, const char *inputs, hloi_literal **fast, hloi_status *st)
{
	hloi_context *ctx = NULL;
	module *m = NULL;
	hloi_literal **in = NULL, *ref = NULL;
	size_t nin = 0;
	*fast = NULL;
	*st = HLOI_EINVAL;
	if (hloi_context_new(&ctx) != HLOI_OK)
		return NULL;
	if (text_parse_module(&m, ctx, "t.hlo", text, strlen(text)) == HLOI_OK && check_module(m, ctx, NULL) == HLOI_OK &&
	    (!inputs || hloi_literal_parse_list(&in, &nin, ctx, "in", inputs, strlen(inputs)) == HLOI_OK)) {
		*st = run(m, ctx, in, nin, HLOI_ENGINE_REFERENCE, 1, &ref);
		if (*st == HLOI_OK)
			*st = run(m, ctx, in, nin, HLOI_ENGINE_FAST, 2, fast);
	}
	hloi_literal_array_free(in, nin);
	module_destroy(m);
	hloi_context_free(ctx);
	return ref;
}

/* XLA's double sum: chunks of 512 from 0.0. With init -0 and 1024 elements
 * of -0 the chunks are +0 (0.0 + -0 = +0): the result is +0, where adding
 * one element at a time in f32 would keep -0. 2^24 + 1 + 1 in f32 is
 * 16777218 (16777216 one add at a time). */
static void test_xla_sum(void)
{
	static const char text[] =
		"HloModule t\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
		"ENTRY e {\n  x = f32[1024] parameter(0)\n  z = f32[] constant(-0.0)\n"
		"  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n";
	strbuf in = STRBUF_INIT;
	sb_puts(&in, "f32[1024] {");
	for (int i = 0; i < 1024; i++)
		sb_puts(&in, i ? ", -0.0" : "-0.0");
	sb_puts(&in, "}");
	hloi_status st;
	hloi_literal *fast = NULL, *ref = run_both(text, sb_str(&in), &fast, &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	float v;
	memcpy(&v, ref->data, 4);
	CU_ASSERT(v == 0.0f && !signbit(v));
	literal_destroy(ref);
	literal_destroy(fast);
	sb_free(&in);
}

/* bf16 row maxima and minima (the fast engine's 16-lane kernels for rows
 * of 64 elements and more): rows of -0 with a +0, all -0, +0 with a -0,
 * mixed values with infinities, a NaN, all -inf; each result the
 * reference's bits (a NaN any NaN), with init -0 and +-inf. */
static void test_bf16_minmax(void)
{
	static const char *const ops[] = { "maximum", "minimum" };
	static const char *const inits[] = { "-0", "-inf", "inf" };
	static const char *const mixed[] = { "-1", "0.5", "-0", "0", "inf", "-inf", "3", "-3", "2.5" };
	enum { R = 6, N = 200 };
	strbuf in = STRBUF_INIT;
	sb_puts(&in, "bf16[6,200] {");
	for (int r = 0; r < R; r++) {
		sb_puts(&in, r ? ", {" : "{");
		for (int i = 0; i < N; i++) {
			const char *v = r == 0 ? (i == 150 ? "0" : "-0")
					: r == 1 ? "-0"
					: r == 2 ? (i == 77 ? "-0" : "0")
					: r == 3 ? mixed[(i * 7 + 3) % 9]
					: r == 4 ? (i == 100 ? "nan" : mixed[(i * 5 + 1) % 9])
						 : "-inf";
			sb_printf(&in, "%s%s", i ? ", " : "", v);
		}
		sb_puts(&in, "}");
	}
	sb_puts(&in, "}");
	for (int o = 0; o < 2; o++)
		for (int k = 0; k < 3; k++) {
			char text[512];
			snprintf(text, sizeof text,
				 "HloModule t\nf {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
				 "  ROOT s = bf16[] %s(a, b)\n}\nENTRY e {\n  x = bf16[6,200] parameter(0)\n"
				 "  z = bf16[] constant(%s)\n  ROOT r = bf16[6] reduce(x, z), dimensions={1}, to_apply=f\n}\n",
				 ops[o], inits[k]);
			hloi_status st;
			hloi_literal *fast = NULL, *ref = run_both(text, sb_str(&in), &fast, &st);
			CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
			for (int r = 0; r < R; r++) {
				const char *a = (const char *)ref->data + 2 * r, *b = (const char *)fast->data + 2 * r;
				CU_ASSERT(memcmp(a, b, 2) == 0 || (is_nan_el(ET_BF16, a) && is_nan_el(ET_BF16, b)));
			}
			literal_destroy(ref);
			literal_destroy(fast);
		}
	sb_free(&in);
}

/* A computation the compiled program does not cover (a call inside) goes
 * through the driver per element, with the same values. */
static void test_driver_path(void)
{
	static const char text[] =
		"HloModule t\ninc {\n  a = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT r = s32[] add(a, one)\n}\n"
		"f {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  c = s32[] call(a), to_apply=inc\n"
		"  ten = s32[] constant(10)\n  t = s32[] multiply(c, ten)\n  ROOT r = s32[] add(t, b)\n}\n"
		"ENTRY e {\n  x = s32[3,4]{0,1} iota(), iota_dimension=1\n  z = s32[] constant(0)\n"
		"  ROOT r = s32[3] reduce(x, z), dimensions={1}, to_apply=f\n}\n";
	hloi_status st;
	hloi_literal *fast = NULL, *ref = run_both(text, NULL, &fast, &st);
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	/* ((((0+1)*10+0)+1)*10+1 ...: 1123 */
	int32_t want[3] = { 11233, 11233, 11233 }, got[3];
	for (int i = 0; i < 3; i++) {
		int64_t idx[1] = { i };
		memcpy(&got[i], literal_element(ref, idx), 4);
		CU_ASSERT_EQUAL(got[i], want[i]);
		memcpy(&got[i], literal_element(fast, idx), 4);
		CU_ASSERT_EQUAL(got[i], want[i]);
	}
	literal_destroy(ref);
	literal_destroy(fast);
}

/* The step limit: the API's max_steps stops a loop with HLOI_ESTOPPED; per
 * element applications do not count; the default lets a long reduce run. */
static void test_max_steps(void)
{
	static const char loop[] =
		"HloModule t\nc {\n  x = s32[] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
		"b {\n  x = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT y = s32[] add(x, one)\n}\n"
		"ENTRY e {\n  z = s32[] constant(0)\n  ROOT w = s32[] while(z), condition=c, body=b\n}\n";
	static const char big[] =
		"HloModule t\nf {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  two = s32[] constant(2)\n"
		"  t = s32[] multiply(a, two)\n  ROOT r = s32[] add(t, b)\n}\n"
		"ENTRY e {\n  x = s32[300,300] iota(), iota_dimension=0\n  z = s32[] constant(0)\n"
		"  ROOT r = s32[300] reduce(x, z), dimensions={0}, to_apply=f\n}\n";
	for (int k = 0; k < 2; k++) {
		const char *text = k ? big : loop;
		hloi_context *ctx = NULL;
		module *m = NULL;
		hloi_literal *out = NULL;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		CU_ASSERT_FATAL(text_parse_module(&m, ctx, "t.hlo", text, strlen(text)) == HLOI_OK);
		CU_ASSERT_FATAL(check_module(m, ctx, NULL) == HLOI_OK);
		hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
		o.max_steps = 1000;
		for (int eng = 0; eng < 2; eng++) {
			o.engine = eng ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_FAST;
			hloi_status st = eval_module(m, ctx, NULL, 0, &o, &out);
			CU_ASSERT_EQUAL(st, k ? HLOI_OK : HLOI_ESTOPPED);
			if (!k)
				CU_ASSERT_PTR_NOT_NULL(strstr(hloi_context_last_error(ctx), "while loop 'w' in computation 'e'"));
			literal_destroy(out);
			out = NULL;
		}
		module_destroy(m);
		hloi_context_free(ctx);
	}
}

/* A reduce without dimensions= is refused as XLA's parser refuses it (not
 * a golden: a proto cannot tell an absent list from an empty one). */
static void test_missing_dimensions(void)
{
	static const char text[] =
		"HloModule t\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
		"ENTRY e {\n  x = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n"
		"  ROOT r = f32[2] reduce(x, z), to_apply=add\n}\n";
	hloi_context *ctx = NULL;
	module *m = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	CU_ASSERT_FATAL(text_parse_module(&m, ctx, "t.hlo", text, strlen(text)) == HLOI_OK);
	CU_ASSERT_EQUAL(check_module(m, ctx, NULL), HLOI_ETYPE);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "attribute dimensions is expected but not seen");
	module_destroy(m);
	hloi_context_free(ctx);
}

/* A conditional with an empty branch_computations={} (not a golden: in a
 * proto it is a conditional that calls nothing). */
static void test_empty_branches(void)
{
	static const char text[] = "HloModule t\nENTRY e {\n  k = s32[] parameter(0)\n"
				   "  ROOT l = f32[2] conditional(k), branch_computations={}\n}\n";
	hloi_context *ctx = NULL;
	module *m = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	CU_ASSERT_FATAL(text_parse_module(&m, ctx, "t.hlo", text, strlen(text)) == HLOI_OK);
	CU_ASSERT_EQUAL(check_module(m, ctx, NULL), HLOI_ETYPE);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "branch_computations must name at least one computation");
	module_destroy(m);
	hloi_context_free(ctx);
}

static const unit_test reduce_tests[] = {
	{ "missing_dimensions", test_missing_dimensions },
	{ "empty_branches", test_empty_branches },
	{ "xla_sum", test_xla_sum },
	{ "bf16_minmax", test_bf16_minmax },
	{ "driver_path", test_driver_path },
	{ "max_steps", test_max_steps },
	{ "random", test_random },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "reduce", reduce_tests },
	{ NULL, NULL },
};
