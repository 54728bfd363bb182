/* The fast engine's dot and convolution against the reference engine:
 * random dimension numbers, dim_labels, windows (strides, padding with
 * negative values, dilations, reversal), feature and batch groups, every
 * evaluated element type and mixed pairs, random layouts, sizes 0 and up,
 * 1, 2 and 3 threads; and fixed programs for the paths random sizes reach
 * rarely (BLAS with packed and transposed operands, several im2col chunks,
 * a kernel holding infinities). Inputs are multiples of 1/8 in [-4, 4]
 * (integers in [-8, 8]), so every float sum is exact in any order: BLAS's
 * results must equal the reference's bit for bit here, and the exact path
 * always does; so must the bf16 and f16 dots' oneDNN and f32 GEMM tiles,
 * whose exact f32 sum is rounded once to the result type as the
 * reference's is (on values with full mantissas they differ by that
 * rounding: numpy_half_dot checks them within its bound). Also the shape rules' result types (HigherPrecisionType
 * when no shape is written). HLOI_CONTRACT_CASES=N runs N random cases
 * (default 600). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "core/index.h"
#include "core/literal.h"
#include "eval/eval.h"
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

#define N_OF(a) ((int)(sizeof a / sizeof a[0]))

/* (lhs, rhs, result) types: every kind, the BLAS ones more often. */
static const etype type_sets[][3] = {
	{ ET_F32, ET_F32, ET_F32 },   { ET_F32, ET_F32, ET_F32 },	{ ET_F64, ET_F64, ET_F64 },
	{ ET_C64, ET_C64, ET_C64 },   { ET_C128, ET_C128, ET_C128 },	{ ET_F16, ET_F16, ET_F16 },
	{ ET_BF16, ET_BF16, ET_BF16 }, { ET_BF16, ET_BF16, ET_F32 },	{ ET_F16, ET_F32, ET_F32 },
	{ ET_S8, ET_S8, ET_S8 },      { ET_S8, ET_S8, ET_S32 },		{ ET_S32, ET_S32, ET_S32 },
	{ ET_S64, ET_S64, ET_S64 },   { ET_U8, ET_U8, ET_U8 },		{ ET_U32, ET_U32, ET_U32 },
	{ ET_S4, ET_S4, ET_S4 },      { ET_U4, ET_U4, ET_S16 },		{ ET_PRED, ET_PRED, ET_PRED },
	{ ET_F8E4M3FN, ET_F8E4M3FN, ET_F8E4M3FN }, { ET_F8E5M2, ET_F8E5M2, ET_F32 },
	{ ET_S8, ET_F32, ET_F32 },    { ET_F32, ET_F32, ET_F16 },	{ ET_F32, ET_F32, ET_S32 },
};

static void put_shape(strbuf *b, rng *r, etype t, int rank, const int64_t *dims)
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
	if (rnd(r, 2))
		for (int d = rank - 1; d > 0; d--) {
			int k = rnd(r, d + 1), tmp = perm[d];
			perm[d] = perm[k];
			perm[k] = tmp;
		}
	sb_puts(b, "{");
	for (int d = 0; d < rank; d++)
		sb_printf(b, "%s%d", d ? "," : "", perm[d]);
	sb_puts(b, "}");
}

static void put_ints(strbuf *b, const char *name, const int *v, int n)
{
	sb_printf(b, ", %s={", name);
	for (int i = 0; i < n; i++)
		sb_printf(b, "%s%d", i ? "," : "", v[i]);
	sb_puts(b, "}");
}

static void shuffle(rng *r, int *v, int n)
{
	for (int i = n - 1; i > 0; i--) {
		int k = rnd(r, i + 1), t = v[i];
		v[i] = v[k];
		v[k] = t;
	}
}

static int64_t dim_size(rng *r, int large)
{
	if (rnd(r, 12) == 0)
		return rnd(r, 2);  /* 0 or 1 */
	return 1 + rnd(r, large ? 40 : 5);
}

/* A random dot: roles b (batch), k (contracting), m / n (free). */
static void gen_dot(strbuf *b, rng *r, int large)
{
	const etype *ts = type_sets[rnd(r, N_OF(type_sets))];
	int nb = rnd(r, 3), nk = rnd(r, 3), nm = rnd(r, 3), nn = rnd(r, 3);
	int64_t bs[2], ks[2], ms[2], ns[2];
	for (int i = 0; i < 2; i++) {
		bs[i] = dim_size(r, 0);
		ks[i] = dim_size(r, large);
		ms[i] = dim_size(r, large);
		ns[i] = dim_size(r, large);
	}
	/* role codes: 0x00+i batch, 0x10+i contracting, 0x20+i free */
	int lr[6], rr[6], ln = 0, rn = 0;
	for (int i = 0; i < nb; i++)
		lr[ln++] = rr[rn++] = i;
	for (int i = 0; i < nk; i++)
		lr[ln++] = rr[rn++] = 0x10 + i;
	for (int i = 0; i < nm; i++)
		lr[ln++] = 0x20 + i;
	for (int i = 0; i < nn; i++)
		rr[rn++] = 0x20 + i;
	shuffle(r, lr, ln);
	shuffle(r, rr, rn);
	int64_t ld[6], rd[6], od[8];
	int on = 0;
	for (int i = 0; i < ln; i++)
		ld[i] = lr[i] < 0x10 ? bs[lr[i]] : lr[i] < 0x20 ? ks[lr[i] - 0x10] : ms[lr[i] - 0x20];
	for (int i = 0; i < rn; i++)
		rd[i] = rr[i] < 0x10 ? bs[rr[i]] : rr[i] < 0x20 ? ks[rr[i] - 0x10] : ns[rr[i] - 0x20];
	int border[2] = { 0, 1 }, korder[2] = { 0, 1 };
	if (rnd(r, 2)) {
		border[0] = 1;
		border[1] = 0;
	}
	if (rnd(r, 2)) {
		korder[0] = 1;
		korder[1] = 0;
	}
	int lb[2], rb[2], lc[2], rc[2], nbo = 0, nko = 0;
	for (int j = 0; j < 2; j++) {
		if (border[j] < nb) {
			for (int i = 0; i < ln; i++)
				if (lr[i] == border[j])
					lb[nbo] = i;
			for (int i = 0; i < rn; i++)
				if (rr[i] == border[j])
					rb[nbo] = i;
			od[on++] = bs[border[j]];
			nbo++;
		}
		if (korder[j] < nk) {
			for (int i = 0; i < ln; i++)
				if (lr[i] == 0x10 + korder[j])
					lc[nko] = i;
			for (int i = 0; i < rn; i++)
				if (rr[i] == 0x10 + korder[j])
					rc[nko] = i;
			nko++;
		}
	}
	for (int i = 0; i < ln; i++)
		if (lr[i] >= 0x20)
			od[on++] = ld[i];
	for (int i = 0; i < rn; i++)
		if (rr[i] >= 0x20)
			od[on++] = rd[i];
	sb_puts(b, "HloModule t\nENTRY e {\n  a = ");
	put_shape(b, r, ts[0], ln, ld);
	sb_puts(b, " parameter(0)\n  b = ");
	put_shape(b, r, ts[1], rn, rd);
	sb_puts(b, " parameter(1)\n  ROOT r = ");
	put_shape(b, r, ts[2], on, od);
	sb_puts(b, " dot(a, b)");
	if (nbo) {
		put_ints(b, "lhs_batch_dims", lb, nbo);
		put_ints(b, "rhs_batch_dims", rb, nbo);
	}
	if (nko) {
		put_ints(b, "lhs_contracting_dims", lc, nko);
		put_ints(b, "rhs_contracting_dims", rc, nko);
	}
	sb_puts(b, "\n}\n");
}

/* A random convolution; 0 when the window does not fit (no program). */
static int gen_conv(strbuf *b, rng *r, int large)
{
	const etype *ts = type_sets[rnd(r, N_OF(type_sets))];
	int ns = rnd(r, 3) + (rnd(r, 4) == 0 ? 0 : 0);
	int64_t groups = 1 + rnd(r, 3), fgc = 1, bgc = 1;
	if (rnd(r, 3) == 0)
		groups = 1;
	if (rnd(r, 2))
		fgc = groups;
	else
		bgc = groups;
	int64_t cin_g = 1 + rnd(r, large ? 12 : 3), cout_g = 1 + rnd(r, large ? 12 : 3), nout = 1 + rnd(r, 3);
	int64_t cin = cin_g * fgc, cout = cout_g * groups, batch = nout * bgc;
	int64_t isz[3], ksz[3], osz[3], st[3], lo[3], hi[3], lhd[3], rhd[3];
	int rev[3];
	for (int i = 0; i < ns; i++) {
		isz[i] = 1 + rnd(r, large ? 20 : 7);
		ksz[i] = 1 + rnd(r, 3);
		st[i] = 1 + rnd(r, 3);
		lo[i] = rnd(r, 4) - 1;
		hi[i] = rnd(r, 4) - 1;
		lhd[i] = 1 + (rnd(r, 3) == 0);
		rhd[i] = 1 + (rnd(r, 3) == 0);
		rev[i] = rnd(r, 3) == 0;
		int64_t padded = (isz[i] - 1) * lhd[i] + 1 + lo[i] + hi[i], wd = (ksz[i] - 1) * rhd[i] + 1;
		if (padded < 0)
			return 0;
		osz[i] = padded >= wd ? (padded - wd) / st[i] + 1 : 0;
	}
	char il[5], kl[5], ol[5];
	int n = ns + 2, perm[5];
	/* input labels */
	for (int i = 0; i < n; i++)
		perm[i] = i;
	shuffle(r, perm, n);
	int64_t idims[5], kdims[5], odims[5];
	for (int i = 0; i < n; i++) {
		int p = perm[i];
		il[i] = p == 0 ? 'b' : p == 1 ? 'f' : (char)('0' + p - 2);
		idims[i] = p == 0 ? batch : p == 1 ? cin : isz[p - 2];
	}
	shuffle(r, perm, n);
	for (int i = 0; i < n; i++) {
		int p = perm[i];
		kl[i] = p == 0 ? 'i' : p == 1 ? 'o' : (char)('0' + p - 2);
		kdims[i] = p == 0 ? cin_g : p == 1 ? cout : ksz[p - 2];
	}
	shuffle(r, perm, n);
	for (int i = 0; i < n; i++) {
		int p = perm[i];
		ol[i] = p == 0 ? 'b' : p == 1 ? 'f' : (char)('0' + p - 2);
		odims[i] = p == 0 ? nout : p == 1 ? cout : osz[p - 2];
	}
	sb_puts(b, "HloModule t\nENTRY e {\n  a = ");
	put_shape(b, r, ts[0], n, idims);
	sb_puts(b, " parameter(0)\n  b = ");
	put_shape(b, r, ts[1], n, kdims);
	sb_puts(b, " parameter(1)\n  ROOT r = ");
	put_shape(b, r, ts[2], n, odims);
	sb_puts(b, " convolution(a, b)");
	if (ns) {
		sb_puts(b, ", window={size=");
		for (int i = 0; i < ns; i++)
			sb_printf(b, "%s%lld", i ? "x" : "", (long long)ksz[i]);
		sb_puts(b, " stride=");
		for (int i = 0; i < ns; i++)
			sb_printf(b, "%s%lld", i ? "x" : "", (long long)st[i]);
		sb_puts(b, " pad=");
		for (int i = 0; i < ns; i++)
			sb_printf(b, "%s%lld_%lld", i ? "x" : "", (long long)lo[i], (long long)hi[i]);
		sb_puts(b, " lhs_dilate=");
		for (int i = 0; i < ns; i++)
			sb_printf(b, "%s%lld", i ? "x" : "", (long long)lhd[i]);
		sb_puts(b, " rhs_dilate=");
		for (int i = 0; i < ns; i++)
			sb_printf(b, "%s%lld", i ? "x" : "", (long long)rhd[i]);
		sb_puts(b, " rhs_reversal=");
		for (int i = 0; i < ns; i++)
			sb_printf(b, "%s%d", i ? "x" : "", rev[i]);
		sb_puts(b, "}");
	}
	sb_printf(b, ", dim_labels=%.*s_%.*s->%.*s", n, il, n, kl, n, ol);
	if (fgc > 1)
		sb_printf(b, ", feature_group_count=%lld", (long long)fgc);
	if (bgc > 1)
		sb_printf(b, ", batch_group_count=%lld", (long long)bgc);
	sb_puts(b, "\n}\n");
	return 1;
}

/* fill's floats with all their bits instead (set by a test) */
static int fine_floats;

/* Multiples of 1/8 in [-4, 4], integers in [-8, 8] (unsigned [0, 16]);
 * with fine_floats, floats of 20 random bits in [-4, 4] (rounded to the
 * type, so that sums round and their order shows) and one in eight a
 * zero of either sign. */
static void fill(hloi_literal *lit, rng *r)
{
	int64_t n;
	if (shape_element_count(&lit->shape, &n) || n == 0)
		return;
	etype t = lit->shape.type;
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	do {
		sc_num v;
		memset(&v, 0, sizeof v);
		switch (etype_get_kind(t)) {
		case KIND_PRED:
			v = sc_num_int(rnd(r, 3) == 0);
			break;
		case KIND_SINT:
			v = sc_num_int(rnd(r, 17) - 8);
			break;
		case KIND_UINT:
			v = sc_num_int(rnd(r, 17));
			v.is_unsigned = 1;
			break;
		default:
			v.is_float = 1;
			v.f = (rnd(r, 65) - 32) / 8.0;
			if (fine_floats)
				v.f = rnd(r, 8) == 0 ? (rnd(r, 2) ? -0.0 : 0.0) : (rnd(r, 1 << 20) - (1 << 19)) / 131072.0;
			if (etype_get_kind(t) == KIND_COMPLEX) {
				v.is_complex = 1;
				v.im = (rnd(r, 65) - 32) / 8.0;
			}
			break;
		}
		sc_write(t, literal_element(lit, idx), v);
	} while (index_next(lit->shape.rank, lit->shape.dims, idx));
}

static int run_engine(module *m, hloi_context *ctx, hloi_literal **in, hloi_engine e, int threads,
		      hloi_literal **out)
{
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.engine = e;
	o.threads = threads;
	return eval_module(m, ctx, in, 2, &o, out);
}

/* Equal bytes, a NaN matching any NaN of the same float type. */
static int same_values(const hloi_literal *a, const hloi_literal *b)
{
	if (!a || !b || a->nbytes != b->nbytes)
		return 0;
	if (a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0)
		return 1;
	etype t = a->shape.type;
	size_t w = (size_t)etype_byte_width(t);
	for (size_t i = 0; i + w <= a->nbytes; i += w) {
		const unsigned char *p = (const unsigned char *)a->data + i, *q = (const unsigned char *)b->data + i;
		if (memcmp(p, q, w) == 0)
			continue;
		sc_num x = sc_read(t, p), y = sc_read(t, q);
		if (!(x.is_float && isnan(x.f) && isnan(y.f)) &&
		    !(x.is_complex && (x.f == y.f || (isnan(x.f) && isnan(y.f))) &&
		      (x.im == y.im || (isnan(x.im) && isnan(y.im)))))
			return 0;
	}
	return 1;
}

/* Runs `text` with both engines (fast on 1, 2 and 3 threads); 1 when they
 * agree, -1 when the program does not check (not counted). `poison` puts
 * an infinity into the first element of parameter 1. */
static int run_text(const char *text, uint64_t seed, int poison)
{
	module *m = NULL;
	hloi_context *ctx = NULL;
	hloi_literal *in[2] = { NULL, NULL }, *ref = NULL, *fast = NULL;
	int ok = 0;
	rng r = { seed };
	if (hloi_context_new(&ctx) != HLOI_OK ||
	    text_parse_module(&m, ctx, "t.hlo", text, strlen(text)) != HLOI_OK ||
	    check_module(m, ctx, NULL) != HLOI_OK) {
		ok = -1;
		goto cleanup;
	}
	for (int i = 0; i < 2; i++) {
		if (literal_create(&in[i], m->entry->params[i]->result) != HLOI_OK)
			goto cleanup;
		fill(in[i], &r);
	}
	if (poison && in[1]->nbytes) {
		sc_num v;
		memset(&v, 0, sizeof v);
		v.is_float = 1;
		v.f = INFINITY;
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		sc_write(in[1]->shape.type, literal_element(in[1], idx), v);
	}
	if (run_engine(m, ctx, in, HLOI_ENGINE_REFERENCE, 1, &ref) != HLOI_OK)
		goto cleanup;
	ok = 1;
	for (int threads = 1; threads <= 3 && ok; threads++) {
		if (run_engine(m, ctx, in, HLOI_ENGINE_FAST, threads, &fast) != HLOI_OK || !same_values(ref, fast))
			ok = 0;
		literal_destroy(fast);
		fast = NULL;
	}
	if (!ok)
		fprintf(stderr, "fast and reference engines differ on:\n%s", text);
cleanup:
	hloi_context_print_diagnostics(ctx, stderr, 0);
	literal_destroy(ref);
	literal_destroy(in[0]);
	literal_destroy(in[1]);
	module_destroy(m);
	hloi_context_free(ctx);
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
	long n = env_long("HLOI_CONTRACT_CASES", 600);
	int failed = 0, ran = 0;
	for (long i = 0; i < n && failed < 5; i++) {
		rng r = { (uint64_t)i * 7919 + 17 };
		strbuf b = STRBUF_INIT;
		int large = i % 20 == 19;
		if (i % 2 == 0)
			gen_dot(&b, &r, large);
		else if (!gen_conv(&b, &r, large)) {
			sb_free(&b);
			continue;
		}
		int ok = run_text(sb_str(&b), (uint64_t)i, 0);
		if (ok == 0)
			failed++;
		if (ok >= 0)
			ran++;
		sb_free(&b);
	}
	CU_ASSERT_EQUAL(failed, 0);
	CU_ASSERT(ran > n / 3);
}

/* Paths random sizes reach rarely. */
static void test_fixed(void)
{
	static const char *const progs[] = {
		/* BLAS: a column-major result (computed transposed), a transposed lhs */
		"HloModule t\nENTRY e {\n  a = f32[70,90]{0,1} parameter(0)\n  b = f32[90,50]{1,0} parameter(1)\n"
		"  ROOT r = f32[70,50]{0,1} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
		/* packed operands: free dims split around a contracting dim, padding */
		"HloModule t\nENTRY e {\n  a = f64[6,20,7]{2,1,0:pad(8,21,9)} parameter(0)\n  b = c64[20,5,3]{0,2,1} parameter(1)\n"
		"  ROOT r = c128[6,7,5,3]{1,3,0,2} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
		/* batched with the batch dims inside, BLAS per batch element */
		"HloModule t\nENTRY e {\n  a = f32[30,4,40,3]{3,2,1,0} parameter(0)\n  b = f32[3,40,4,20]{3,2,1,0} parameter(1)\n"
		"  ROOT r = f32[4,3,30,20] dot(a, b), lhs_batch_dims={1,3}, rhs_batch_dims={2,0}, lhs_contracting_dims={2}, "
		"rhs_contracting_dims={1}\n}\n",
		/* the exact path, threads over rows, tiles of columns wider than one */
		"HloModule t\nENTRY e {\n  a = s8[300,70] parameter(0)\n  b = s8[70,600]{0,1} parameter(1)\n"
		"  ROOT r = s32[300,600] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
		"HloModule t\nENTRY e {\n  a = bf16[2,64,33] parameter(0)\n  b = bf16[2,33,300] parameter(1)\n"
		"  ROOT r = bf16[2,64,300] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
		"rhs_contracting_dims={1}\n}\n",
		/* a convolution whose patch matrix takes several chunks */
		"HloModule t\nENTRY e {\n  a = f32[2,2100,64] parameter(0)\n  b = f32[33,64,3] parameter(1)\n"
		"  ROOT r = f32[2,2100,3] convolution(a, b), window={size=33 pad=16_16}, dim_labels=b0f_0io->b0f\n}\n",
		/* NCHW with strides, padding and both dilations, BLAS and exact */
		"HloModule t\nENTRY e {\n  a = f32[3,8,17,13] parameter(0)\n  b = f32[16,4,3,3] parameter(1)\n"
		"  ROOT r = f32[3,16,9,25] convolution(a, b), window={size=3x3 stride=2x1 pad=1_1x2_2 lhs_dilate=1x2 "
		"rhs_dilate=1x2}, dim_labels=bf01_oi01->bf01, feature_group_count=2\n}\n",
		"HloModule t\nENTRY e {\n  a = s8[3,8,17,13] parameter(0)\n  b = s8[16,4,3,3] parameter(1)\n"
		"  ROOT r = s8[3,16,9,25] convolution(a, b), window={size=3x3 stride=2x1 pad=1_1x2_2 lhs_dilate=1x2 "
		"rhs_dilate=1x2}, dim_labels=bf01_oi01->bf01, feature_group_count=2\n}\n",
	};
	for (int i = 0; i < N_OF(progs); i++)
		CU_ASSERT_EQUAL(run_text(progs[i], (uint64_t)i + 1, 0), 1);
	/* an infinity in the kernel: padded positions never multiply it */
	CU_ASSERT_EQUAL(run_text("HloModule t\nENTRY e {\n  a = f32[2,9,3] parameter(0)\n  b = f32[3,3,4] parameter(1)\n"
				 "  ROOT r = f32[2,11,4] convolution(a, b), window={size=3 pad=2_2}, "
				 "dim_labels=b0f_0io->b0f\n}\n",
				 5, 1),
			1);
}

/* Depthwise convolutions (one input feature per group) on one or two
 * spatial dims, f32, bf16 and f16, in random layouts: the direct kernels
 * (eval/kernels/conv.c, by lines and by planes), with rows wider than a
 * block of lanes, padding of either sign, strides, dilation, reversal,
 * a channel multiplier, and now and then an infinite weight that only
 * padding would meet. Values of many bits: the sums must be the
 * reference's bits, not just close. */
static void test_depthwise(void)
{
	static const etype types[] = { ET_F32, ET_BF16, ET_F16 };
	long n = env_long("HLOI_CONTRACT_CASES", 600) / 4;
	int failed = 0, ran = 0;
	fine_floats = 1;
	for (long i = 0; i < n && failed < 5; i++) {
		rng r = { (uint64_t)i * 104729 + 7 };
		strbuf b = STRBUF_INIT;
		etype t = types[rnd(&r, N_OF(types))];
		int ns = 1 + rnd(&r, 2), n2 = ns + 2;
		int64_t ch = 1 + rnd(&r, 3), mult = 1 + (rnd(&r, 4) == 0), batch = 1 + rnd(&r, 2);
		int64_t isz[2], ksz[2], osz[2], st[2], lo[2], hi[2], rhd[2];
		int rev[2], ok = 1;
		for (int d = 0; d < ns; d++) {
			/* the last dim is the row: often wider than 64 lanes */
			isz[d] = d == ns - 1 ? 1 + rnd(&r, 80) : 1 + rnd(&r, 9);
			ksz[d] = 1 + rnd(&r, 5);
			st[d] = d == ns - 1 && rnd(&r, 2) ? 1 : 1 + rnd(&r, 3);
			lo[d] = rnd(&r, 5) - 1;
			hi[d] = rnd(&r, 5) - 1;
			rhd[d] = 1 + (rnd(&r, 3) == 0);
			rev[d] = rnd(&r, 3) == 0;
			int64_t padded = isz[d] + lo[d] + hi[d], wd = (ksz[d] - 1) * rhd[d] + 1;
			ok = ok && padded >= wd;
			osz[d] = ok ? (padded - wd) / st[d] + 1 : 0;
		}
		if (!ok)
			continue;
		/* logical order b, f, spatial...; the layouts random */
		int64_t id[4] = { batch, ch }, kd[4] = { 1, ch * mult }, od[4] = { batch, ch * mult };
		for (int d = 0; d < ns; d++) {
			id[2 + d] = isz[d];
			kd[2 + d] = ksz[d];
			od[2 + d] = osz[d];
		}
		const char *sp = ns == 1 ? "0" : "01";
		sb_puts(&b, "HloModule t\nENTRY e {\n  a = ");
		put_shape(&b, &r, t, n2, id);
		sb_puts(&b, " parameter(0)\n  b = ");
		put_shape(&b, &r, t, n2, kd);
		sb_puts(&b, " parameter(1)\n  ROOT r = ");
		put_shape(&b, &r, t, n2, od);
		sb_puts(&b, " convolution(a, b), window={size=");
		for (int d = 0; d < ns; d++)
			sb_printf(&b, "%s%lld", d ? "x" : "", (long long)ksz[d]);
		sb_puts(&b, " stride=");
		for (int d = 0; d < ns; d++)
			sb_printf(&b, "%s%lld", d ? "x" : "", (long long)st[d]);
		sb_puts(&b, " pad=");
		for (int d = 0; d < ns; d++)
			sb_printf(&b, "%s%lld_%lld", d ? "x" : "", (long long)lo[d], (long long)hi[d]);
		sb_puts(&b, " rhs_dilate=");
		for (int d = 0; d < ns; d++)
			sb_printf(&b, "%s%lld", d ? "x" : "", (long long)rhd[d]);
		sb_puts(&b, " rhs_reversal=");
		for (int d = 0; d < ns; d++)
			sb_printf(&b, "%s%d", d ? "x" : "", rev[d]);
		sb_printf(&b, "}, dim_labels=bf%s_io%s->bf%s, feature_group_count=%lld\n}\n", sp, sp, sp, (long long)ch);
		int res = run_text(sb_str(&b), (uint64_t)i, rnd(&r, 4) == 0);
		failed += res == 0;
		ran += res == 1;
		sb_free(&b);
	}
	fine_floats = 0;
	CU_ASSERT_EQUAL(failed, 0);
	CU_ASSERT(ran > n / 2);
}

/* The shape rule's result type without a written shape. */
static etype inferred_type(const char *lt, const char *rt)
{
	char text[512];
	snprintf(text, sizeof text,
		 "HloModule t\nENTRY e {\n  a = %s[2,3] parameter(0)\n  b = %s[3] parameter(1)\n"
		 "  ROOT r = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
		 lt, rt);
	module *m = NULL;
	hloi_context *ctx = NULL;
	etype t = ET_INVALID;
	if (hloi_context_new(&ctx) == HLOI_OK && text_parse_module(&m, ctx, "t.hlo", text, strlen(text)) == HLOI_OK &&
	    check_module(m, ctx, NULL) == HLOI_OK)
		t = m->entry->root->result->type;
	hloi_context_print_diagnostics(ctx, stderr, 0);
	module_destroy(m);
	hloi_context_free(ctx);
	return t;
}

static void test_result_type(void)
{
	CU_ASSERT_EQUAL(inferred_type("f32", "f32"), ET_F32);
	CU_ASSERT_EQUAL(inferred_type("s8", "f16"), ET_F16);     /* a float wins */
	CU_ASSERT_EQUAL(inferred_type("bf16", "f16"), ET_BF16);  /* more range */
	CU_ASSERT_EQUAL(inferred_type("f16", "f8e5m2"), ET_F16); /* same range, more precision */
	CU_ASSERT_EQUAL(inferred_type("s8", "u32"), ET_U32);     /* wider */
	CU_ASSERT_EQUAL(inferred_type("u16", "s16"), ET_S16);    /* signed */
	CU_ASSERT_EQUAL(inferred_type("f64", "c64"), ET_C64);    /* complex */
	CU_ASSERT_EQUAL(inferred_type("pred", "s4"), ET_S4);
}

static const unit_test contract_tests[] = {
	{ "result_type", test_result_type },
	{ "fixed", test_fixed },
	{ "random", test_random },
	{ "depthwise", test_depthwise },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "contract", contract_tests },
	{ NULL, NULL },
};
