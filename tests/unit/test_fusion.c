/* Differential tests of the program engine (fused regions, buffer planning)
 * against the reference engine: random *graphs* of 1 to 12 instructions —
 * binary ops, compare, select, convert, bitcast-convert, copy into another
 * layout, broadcast of smaller parameters and of scalar constants,
 * transpose, iota, reshape round trips, tuples and their elements — over
 * every evaluated type (sub-byte integers, the f8/f4 formats and complex
 * included), with shared subexpressions, several outputs (a
 * tuple root), every layout permutation up to rank 4, padding, size-0 and
 * size-1 dimensions, in-place results (input_output_alias), on random bits.
 * The fast engine runs with 1 and 2 threads, with every size it walks by
 * shrunk (rows of a few elements, small odd tiles, a thread per element)
 * and with the reference element loop in every member; all results must be
 * bit-identical to the reference engine's, padding included (a NaN may
 * differ from another NaN: see same_bits). Fully fused programs must hold
 * no more than their result and the executor's scratch (the planned peak).
 *
 * HLOI_FUSION_CASES=N runs N graphs (default 3000), HLOI_FUSION_SEED=S
 * another seed, HLOI_FUSION_SHOW=1 prints each program. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "core/float8.h"
#include "core/half.h"
#include "core/literal.h"
#include "eval/base/engine.h"
#include "eval/eval.h"
#include "eval/fast/fast.h"
#include "eval/plan/plan.h"
#include "eval/fast/vmath.h"
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

static const etype all_types[] = { ET_PRED, ET_S8,  ET_S16, ET_S32, ET_S64, ET_U8,  ET_U16,
				   ET_U32,  ET_U64, ET_F16, ET_BF16, ET_F32, ET_F64,
				   /* sub-byte integers, the f8/f4 formats, complex */
				   ET_S1, ET_S2, ET_S4, ET_U1, ET_U2, ET_U4, ET_F8E5M2, ET_F8E4M3, ET_F8E4M3FN,
				   ET_F8E4M3B11FNUZ, ET_F8E3M4, ET_F8E5M2FNUZ, ET_F8E4M3FNUZ, ET_F4E2M1FN,
				   ET_F8E8M0FNU, ET_C64, ET_C128 };
static const char *const float_ops[] = { "add", "subtract", "multiply", "divide", "remainder",
					 "maximum", "minimum", "power", "atan2" };
static const char *const int_ops[] = { "add", "subtract", "multiply", "divide", "remainder", "maximum",
				       "minimum", "power", "and", "or", "xor", "shift-left",
				       "shift-right-arithmetic", "shift-right-logical" };
static const char *const complex_ops[] = { "add", "subtract", "multiply", "divide" };
static const char *const pred_ops[] = { "add", "multiply", "maximum", "minimum", "and", "or", "xor" };
/* The unary family by operand kind (eval/scalar/scalar.h's SC_UNARY_OPS_*). */
static const char *const pred_unary[] = { "not" };
static const char *const sint_unary[] = { "abs", "negate", "sign", "not", "popcnt", "count-leading-zeros" };
static const char *const uint_unary[] = { "negate", "not", "popcnt", "count-leading-zeros" };
static const char *const float_unary[] = { "abs", "negate", "sign", "ceil", "floor", "round-nearest-afz",
					   "round-nearest-even", "exponential", "exponential-minus-one", "log",
					   "log-plus-one", "logistic", "sqrt", "rsqrt", "cbrt", "tanh", "sine",
					   "cosine", "tan", "atan", "erf", "is-finite", "clamp" };
static const char *const complex_unary[] = { "negate", "sign", "exponential", "sqrt", "tanh", "abs", "real", "imag" };
static const char *const directions[] = { "EQ", "NE", "LT", "LE", "GT", "GE" };
static const char *const padvals[] = { "zero", "one", "lowest", "highest" };

/* --- the generator ---------------------------------------------------------------- */

#define MAX_VALS 64

/* A value of the graph with the domain's dims. */
typedef struct gval {
	char name[16];
	etype t;
	int float_result; /* a float computed by arithmetic: its NaN payload may differ */
} gval;

typedef struct graph {
	strbuf text;
	int rank;
	int64_t dims[HLOI_MAX_RANK];
	gval v[MAX_VALS];
	int nv;
	int nparams;
	int ninstr;        /* instructions generated (not parameters) */
	int all_fusible;   /* every instruction is one the fast engine fuses */
	int has_alias;
} graph;

/* A layout: a random permutation of `rank` dims, sometimes padded; into
 * `lay` (text), the permutation into perm. */
static void put_layout(strbuf *b, rng *r, int rank, const int64_t *dims, int allow_pad, int *perm)
{
	int p[HLOI_MAX_RANK];
	if (rank == 0)
		return;  /* scalars print no layout */
	for (int d = 0; d < rank; d++)
		p[d] = rank - 1 - d;
	if (rnd(r, 3) != 0)
		for (int d = rank - 1; d > 0; d--) {
			int k = rnd(r, d + 1), tmp = p[d];
			p[d] = p[k];
			p[k] = tmp;
		}
	sb_puts(b, "{");
	for (int d = 0; d < rank; d++)
		sb_printf(b, "%s%d", d ? "," : "", p[d]);
	if (allow_pad && rank > 0 && rnd(r, 5) == 0) {
		sb_puts(b, ":pad(");
		for (int d = 0; d < rank; d++)
			sb_printf(b, "%s%lld", d ? "," : "", (long long)(dims[d] + rnd(r, 3)));
		sb_puts(b, ")");
		if (rnd(r, 2))
			sb_printf(b, "padval(%s)", padvals[rnd(r, N_OF(padvals))]);
	}
	sb_puts(b, "}");
	if (perm)
		memcpy(perm, p, sizeof p);
}

static void put_dims(strbuf *b, etype t, int rank, const int64_t *dims)
{
	sb_printf(b, "%s[", etype_name(t));
	for (int d = 0; d < rank; d++)
		sb_printf(b, "%s%lld", d ? "," : "", (long long)dims[d]);
	sb_puts(b, "]");
}

/* `name = T[dims]{layout} ` for a new domain value of type t. */
static gval *new_value(graph *g, rng *r, etype t, const char *prefix)
{
	gval *v = &g->v[g->nv];
	snprintf(v->name, sizeof v->name, "%s%d", prefix, g->nv);
	v->t = t;
	v->float_result = 0;
	g->nv++;
	sb_printf(&g->text, "  %s = ", v->name);
	put_dims(&g->text, t, g->rank, g->dims);
	put_layout(&g->text, r, g->rank, g->dims, 1, NULL);
	sb_putc(&g->text, ' ');
	return v;
}

static const gval *pick(graph *g, rng *r)
{
	/* the newest values more often: chains as well as DAGs */
	int k = rnd(r, 3) == 0 ? rnd(r, g->nv) : g->nv - 1 - rnd(r, g->nv < 3 ? g->nv : 3);
	return &g->v[k];
}

static const gval *pick_type(graph *g, rng *r, etype t)
{
	int c[MAX_VALS], n = 0;
	for (int i = 0; i < g->nv; i++)
		if (g->v[i].t == t)
			c[n++] = i;
	return n ? &g->v[c[rnd(r, n)]] : NULL;
}

static int is_float(etype t)
{
	return etype_is_float(t);
}

static int is_complex(etype t)
{
	return etype_get_kind(t) == KIND_COMPLEX;
}

/* The f8/f4 formats (core/float8.h), whose constants stay finite and
 * representable (f8e8m0fnu: powers of two only). */
static int is_small_float(etype t)
{
	return is_float(t) && etype_byte_width(t) == 1;
}

/* A byte that holds fewer bits than it has (sub-byte integers, f4). */
static int is_sub_byte(etype t)
{
	return etype_bit_width(t) < 8 * etype_byte_width(t);
}

static const char *binary_op(rng *r, etype t)
{
	if (t == ET_PRED)
		return pred_ops[rnd(r, N_OF(pred_ops))];
	if (is_complex(t))
		return complex_ops[rnd(r, N_OF(complex_ops))];
	if (is_float(t))
		return float_ops[rnd(r, N_OF(float_ops))];
	return int_ops[rnd(r, N_OF(int_ops))];
}

/* A scalar constant of type t, broadcast explicitly or left to the
 * operand's implicit broadcast (`add(a, c)`). Returns its name. */
static const char *scalar_constant(graph *g, rng *r, etype t, char *name, size_t size, int explicit_broadcast)
{
	static int counter;
	char c[16];
	snprintf(c, sizeof c, "k%d", counter++);
	sb_printf(&g->text, "  %s = %s[] constant(", c, etype_name(t));
	if (t == ET_PRED)
		sb_puts(&g->text, rnd(r, 2) ? "true" : "false");
	else if (is_complex(t))
		sb_printf(&g->text, "(%s, %s)", (const char *[]){ "0", "1.5", "-2", "nan", "-inf" }[rnd(r, 5)],
			  (const char *[]){ "0", "0.25", "-1" }[rnd(r, 3)]);
	else if (t == ET_F8E8M0FNU)
		sb_printf(&g->text, "%s", (const char *[]){ "1", "2", "0.25", "8" }[rnd(r, 4)]);
	else if (is_small_float(t))
		sb_printf(&g->text, "%s", (const char *[]){ "0", "1.5", "-2", "6", "0.5", "-1" }[rnd(r, 6)]);
	else if (is_float(t))
		sb_printf(&g->text, "%s", (const char *[]){ "0", "1.5", "-2", "6", "nan", "-inf", "0.25", "-0" }[rnd(r, 8)]);
	else if (is_sub_byte(t) && etype_get_kind(t) == KIND_UINT)
		sb_printf(&g->text, "%d", rnd(r, 1 << etype_bit_width(t)));
	else if (is_sub_byte(t))
		sb_printf(&g->text, "%d", rnd(r, 1 << etype_bit_width(t)) - (1 << (etype_bit_width(t) - 1)));
	else if (etype_get_kind(t) == KIND_UINT)
		sb_printf(&g->text, "%d", rnd(r, 9));
	else
		sb_printf(&g->text, "%d", rnd(r, 9) - 4);
	sb_puts(&g->text, ")\n");
	if (!explicit_broadcast) {
		snprintf(name, size, "%s", c);
		return name;
	}
	gval *v = new_value(g, r, t, "b");
	sb_printf(&g->text, "broadcast(%s), dimensions={}\n", c);
	snprintf(name, size, "%s", v->name);
	return name;
}

static etype bitcast_partner(rng *r, etype t)
{
	static const etype w1[] = { ET_S8, ET_U8 }, w2[] = { ET_S16, ET_U16, ET_F16, ET_BF16 },
			   w4[] = { ET_S32, ET_U32, ET_F32 }, w8[] = { ET_S64, ET_U64, ET_F64 };
	switch (etype_byte_width(t)) {
	case 1: return w1[rnd(r, 2)];
	case 2: return w2[rnd(r, 4)];
	case 4: return w4[rnd(r, 3)];
	default: return w8[rnd(r, 3)];
	}
}

/* One random program. */
static void make_graph(graph *g, rng *r, int large)
{
	strbuf *b = &g->text;
	sb_reset(b);
	g->nv = 0;
	g->ninstr = 0;
	g->all_fusible = 1;
	g->has_alias = 0;
	etype t0 = all_types[rnd(r, N_OF(all_types))];
	g->rank = large ? 2 + rnd(r, 2) : rnd(r, 5);
	for (int d = 0; d < g->rank; d++) {
		int k = rnd(r, 24);
		g->dims[d] = k == 0 ? 0 : k < 5 ? 1 : 2 + rnd(r, 6);
	}
	if (large) {
		g->dims[0] = 100 + rnd(r, 40);
		g->dims[1] = 180 + rnd(r, 40);
		if (g->rank == 3)
			g->dims[2] = 3 + rnd(r, 3);
	}
	int alias = !large && rnd(r, 6) == 0;
	strbuf body = STRBUF_INIT;
	strbuf head = *b;
	*b = body;

	/* parameters: two of the domain, one of permuted dims (transposed),
	 * one of lower rank (broadcast), one pred */
	int np = 0;
	strbuf shape0 = STRBUF_INIT;  /* p0's shape with its layout */
	for (int k = 0; k < 2; k++) {
		gval *v = &g->v[g->nv];
		snprintf(v->name, sizeof v->name, "p%d", np);
		v->t = k == 0 || rnd(r, 2) ? t0 : all_types[rnd(r, N_OF(all_types))];
		v->float_result = 0;
		g->nv++;
		strbuf sh = STRBUF_INIT;
		put_dims(&sh, v->t, g->rank, g->dims);
		put_layout(&sh, r, g->rank, g->dims, 1, NULL);
		sb_printf(b, "  %s = %s parameter(%d)\n", v->name, sb_str(&sh), np++);
		if (k == 0)
			sb_puts(&shape0, sb_str(&sh));
		sb_free(&sh);
	}
	int perm[HLOI_MAX_RANK], tp = -1, bp = -1, bmap[HLOI_MAX_RANK], brank = 0;
	int64_t pd[HLOI_MAX_RANK], bd[HLOI_MAX_RANK];
	if (g->rank >= 2 && rnd(r, 2)) {
		for (int d = 0; d < g->rank; d++)
			perm[d] = d;
		for (int d = g->rank - 1; d > 0; d--) {
			int k = rnd(r, d + 1), tmp = perm[d];
			perm[d] = perm[k];
			perm[k] = tmp;
		}
		/* transpose(q), dimensions=perm: result dim i is q's dim perm[i] */
		for (int i = 0; i < g->rank; i++)
			pd[perm[i]] = g->dims[i];
		tp = np;
		sb_printf(b, "  q = ");
		put_dims(b, t0, g->rank, pd);
		put_layout(b, r, g->rank, pd, 1, NULL);
		sb_printf(b, " parameter(%d)\n", np++);
	}
	if (g->rank >= 1 && rnd(r, 2)) {
		for (int d = 0; d < g->rank; d++)
			if (rnd(r, 2)) {
				bmap[brank] = d;
				bd[brank++] = g->dims[d] > 1 && rnd(r, 4) == 0 ? 1 : g->dims[d];
			}
		bp = np;
		sb_printf(b, "  s = ");
		put_dims(b, t0, brank, bd);
		put_layout(b, r, brank, bd, 1, NULL);
		sb_printf(b, " parameter(%d)\n", np++);
	}
	g->nparams = np;

	int n = 1 + rnd(r, 12);
	char nm[3][32];
	for (int k = 0; k < n && g->nv < MAX_VALS - 4; k++) {
		int kind = rnd(r, 25);
		const gval *a = pick(g, r);
		if (kind < 7) { /* binary op, the other operand of a's type */
			const gval *c = pick_type(g, r, a->t);
			const char *rhs = c->name;
			if (rnd(r, 5) == 0)
				rhs = scalar_constant(g, r, a->t, nm[0], sizeof nm[0], rnd(r, 2));
			int swap = rnd(r, 2);
			gval *v = new_value(g, r, a->t, "v");
			sb_printf(b, "%s(%s, %s)\n", binary_op(r, a->t), swap ? rhs : a->name, swap ? a->name : rhs);
			v->float_result = is_float(a->t) || is_complex(a->t);
		} else if (kind < 9) { /* compare */
			const gval *c = pick_type(g, r, a->t);
			gval *v = new_value(g, r, ET_PRED, "v");
			sb_printf(b, "compare(%s, %s), direction=%s", a->name, c->name,
				  directions[rnd(r, is_complex(a->t) ? 2 : N_OF(directions))]);
			if (is_float(a->t) && rnd(r, 3) == 0)
				sb_puts(b, ", type=TOTALORDER");
			sb_putc(b, '\n');
		} else if (kind < 11) { /* select */
			const gval *p = pick_type(g, r, ET_PRED);
			const gval *c = pick_type(g, r, a->t);
			char pn[32];
			if (!p || rnd(r, 6) == 0)
				snprintf(pn, sizeof pn, "%s", scalar_constant(g, r, ET_PRED, nm[1], sizeof nm[1], p == NULL && rnd(r, 2)));
			else
				snprintf(pn, sizeof pn, "%s", p->name);
			int fr = a->float_result || c->float_result;
			gval *v = new_value(g, r, a->t, "v");
			sb_printf(b, "select(%s, %s, %s)\n", pn, a->name, c->name);
			v->float_result = fr;
		} else if (kind < 13) { /* convert */
			etype to = all_types[rnd(r, N_OF(all_types))];
			if (is_complex(a->t) && !is_complex(to))
				to = rnd(r, 2) ? ET_C64 : ET_C128;  /* complex -> real is real(), not convert */
			gval *v = new_value(g, r, to, "v");
			sb_printf(b, "convert(%s)\n", a->name);
			v->float_result = is_float(to) && a->float_result;
		} else if (kind == 13) { /* bitcast-convert of a value whose bits are the same in both engines */
			if (a->float_result || a->t == ET_PRED || is_complex(a->t) || is_sub_byte(a->t)) {
				k--;
				continue;
			}
			gval *v = new_value(g, r, bitcast_partner(r, a->t), "v");
			sb_printf(b, "bitcast-convert(%s)\n", a->name);
		} else if (kind == 14) { /* copy into another layout */
			gval *v = new_value(g, r, a->t, "v");
			sb_printf(b, "copy(%s)\n", a->name);
			v->float_result = a->float_result;
		} else if (kind == 15 && tp >= 0) { /* transpose of q */
			gval *v = new_value(g, r, t0, "v");
			sb_printf(b, "transpose(q), dimensions={");
			for (int i = 0; i < g->rank; i++)
				sb_printf(b, "%s%d", i ? "," : "", perm[i]);
			sb_puts(b, "}\n");
		} else if (kind == 16 && bp >= 0) { /* broadcast of s */
			gval *v = new_value(g, r, t0, "v");
			sb_printf(b, "broadcast(s), dimensions={");
			for (int i = 0; i < brank; i++)
				sb_printf(b, "%s%d", i ? "," : "", bmap[i]);
			sb_puts(b, "}\n");
		} else if (kind == 17 && g->rank > 0) { /* iota */
			etype t = all_types[1 + rnd(r, N_OF(all_types) - 1)];
			if (is_complex(t))
				t = ET_F32;
			gval *v = new_value(g, r, t, "v");
			sb_printf(b, "iota(), iota_dimension=%d\n", rnd(r, g->rank));
		} else if (kind == 18) { /* a reshape round trip (not fused) */
			int64_t total = 1;
			for (int d = 0; d < g->rank; d++)
				total *= g->dims[d];
			char flat[16];
			snprintf(flat, sizeof flat, "r%d", g->nv);
			sb_printf(b, "  %s = ", flat);
			put_dims(b, a->t, 1, &total);
			sb_printf(b, "{0} reshape(%s)\n", a->name);
			gval *v = new_value(g, r, a->t, "v");
			sb_printf(b, "reshape(%s)\n", flat);
			v->float_result = a->float_result;
			g->all_fusible = 0;
		} else if (kind >= 22) { /* the unary family (fast_unary.c's kernels in the region) */
			const char *op;
			etype to = a->t;
			if (a->t == ET_PRED)
				op = pred_unary[0];
			else if (is_complex(a->t))
				op = complex_unary[rnd(r, N_OF(complex_unary))];
			else if (is_float(a->t))
				op = float_unary[rnd(r, N_OF(float_unary))];
			else if (etype_get_kind(a->t) == KIND_UINT)
				op = uint_unary[rnd(r, N_OF(uint_unary))];
			else
				op = sint_unary[rnd(r, N_OF(sint_unary))];
			if (is_complex(a->t) && (!strcmp(op, "abs") || !strcmp(op, "real") || !strcmp(op, "imag")))
				to = a->t == ET_C64 ? ET_F32 : ET_F64;
			else if (!strcmp(op, "is-finite"))
				to = ET_PRED;
			if (!strcmp(op, "clamp")) {
				const char *lo = scalar_constant(g, r, a->t, nm[0], sizeof nm[0], rnd(r, 2));
				const char *hi = rnd(r, 2) ? pick_type(g, r, a->t)->name
							   : scalar_constant(g, r, a->t, nm[1], sizeof nm[1], rnd(r, 2));
				gval *v = new_value(g, r, to, "v");
				sb_printf(b, "clamp(%s, %s, %s)\n", lo, a->name, hi);
				v->float_result = 1;
			} else {
				gval *v = new_value(g, r, to, "v");
				sb_printf(b, "%s(%s)\n", op, a->name);
				v->float_result = is_float(to) || is_complex(to);
			}
		} else if (kind >= 20) { /* a reshape to the same dims: a value of its own (not fused) */
			gval *v = new_value(g, r, a->t, "v");
			sb_printf(b, "reshape(%s)\n", a->name);
			v->float_result = a->float_result;
			g->all_fusible = 0;
		} else { /* a tuple and one of its elements */
			const gval *c = pick(g, r);
			char tn[16];
			snprintf(tn, sizeof tn, "t%d", g->nv);
			sb_printf(b, "  %s = (", tn);
			put_dims(b, a->t, g->rank, g->dims);
			sb_puts(b, ", ");
			put_dims(b, c->t, g->rank, g->dims);
			sb_printf(b, ") tuple(%s, %s)\n", a->name, c->name);
			int which = rnd(r, 2);
			const gval *src = which ? c : a;
			gval *v = &g->v[g->nv];
			snprintf(v->name, sizeof v->name, "v%d", g->nv);
			v->t = src->t;
			v->float_result = src->float_result;
			g->nv++;
			/* the element keeps its layout: no written shape */
			sb_printf(b, "  %s = get-tuple-element(%s), index=%d\n", v->name, tn, which);
			g->all_fusible = 0;
		}
		g->ninstr++;
	}
	/* the root: the last value, or a tuple of it and others (several
	 * outputs, intermediates among them) */
	const gval *last = &g->v[g->nv - 1];
	if (rnd(r, 3) == 0 && g->nv > 2) {
		int k = 1 + rnd(r, 2);
		const gval *o[3] = { last, pick(g, r), &g->v[rnd(r, g->nv)] };
		sb_puts(b, "  ROOT out = (");
		for (int i = 0; i <= k; i++) {
			if (i)
				sb_puts(b, ", ");
			put_dims(b, o[i]->t, g->rank, g->dims);
		}
		sb_puts(b, ") tuple(");
		for (int i = 0; i <= k; i++)
			sb_printf(b, "%s%s", i ? ", " : "", o[i]->name);
		sb_puts(b, ")\n");
		g->all_fusible = 0;
	} else if (alias && last->t == g->v[0].t) {
		/* in place: the result into p0's buffer (same type, dims and
		 * layout; the copy picks p0's layout) */
		g->has_alias = 1;
		sb_printf(b, "  ROOT out = %s copy(%s)\n", sb_str(&shape0), last->name);
	} else {
		sb_printf(b, "  ROOT out = copy(%s)\n", last->name);
	}
	sb_free(&shape0);
	body = *b;
	*b = head;
	sb_puts(b, "HloModule fusion_diff");
	if (g->has_alias)
		sb_puts(b, ", input_output_alias={ {}: (0, {}, may-alias) }");
	sb_puts(b, "\n\nENTRY main {\n");
	sb_puts(b, sb_str(&body));
	sb_puts(b, "}\n");
	sb_free(&body);
}

/* --- running ------------------------------------------------------------------------ */

static void fill_random(hloi_literal *lit, rng *r)
{
	if (shape_is_tuple(&lit->shape)) {
		for (size_t i = 0; i < lit->nelems; i++)
			fill_random(lit->elems[i], r);
		return;
	}
	etype t = lit->shape.type;
	size_t w = (size_t)etype_byte_width(t);
	unsigned char *p = lit->data;
	if (!p)
		return;
	for (size_t i = 0; i + w <= lit->nbytes; i += w) {
		uint64_t v = next(r);
		int how = rnd(r, 4);
		if (t == ET_PRED) {
			p[i] = (unsigned char)(how == 0 ? (v & 0xff) : (v & 1));
			continue;
		}
		if (is_sub_byte(t)) {
			/* the value in its byte: sign-extended or zero above its bits */
			int bits = etype_bit_width(t);
			uint8_t u = (uint8_t)(v & ((1u << bits) - 1));
			if (etype_get_kind(t) == KIND_SINT && (u >> (bits - 1)))
				u = (uint8_t)(u | (0xffu << bits));
			p[i] = u;
			continue;
		}
		if (how == 1 && (is_complex(t) || is_small_float(t))) {
			how = 0;  /* random bits: every encoding, NaNs included */
		}
		if (how == 1) {
			int64_t s = rnd(r, 12) - 3;
			if (etype_is_float(t)) {
				double dv = (double)s / (rnd(r, 2) ? 1.0 : 4.0);
				float fv = (float)dv;
				uint32_t u;
				memcpy(&u, &fv, 4);
				if (t == ET_F64) {
					memcpy(p + i, &dv, 8);
				} else if (t == ET_F32) {
					memcpy(p + i, &fv, 4);
				} else if (t == ET_BF16) {
					uint16_t h = (uint16_t)(u >> 16);
					memcpy(p + i, &h, 2);
				} else {
					uint16_t h = (uint16_t)(s < 0 ? 0xBC00 : s == 0 ? 0 : 0x3C00);
					memcpy(p + i, &h, 2);
				}
				continue;
			}
			v = (uint64_t)s;
		}
		memcpy(p + i, &v, w < 8 ? w : 8);
		if (w > 8) {  /* c128: the second part */
			v = next(r);
			memcpy(p + i + 8, &v, w - 8);
		}
	}
}

static int both_nan(etype t, const unsigned char *p, const unsigned char *q)
{
	uint16_t x, y;
	if (is_small_float(t)) {
		const f8_format *f = f8_format_of(t);
		return f && f8_is_nan(f, p[0]) && f8_is_nan(f, q[0]);
	}
	if (t == ET_C64 || t == ET_C128) {
		/* a NaN part in each (complex arithmetic spreads a NaN operand's
		 * payload into either part) */
		etype part = t == ET_C64 ? ET_F32 : ET_F64;
		int h = etype_byte_width(t) / 2;
		return (both_nan(part, p, p) || both_nan(part, p + h, p + h)) &&
		       (both_nan(part, q, q) || both_nan(part, q + h, q + h));
	}
	switch (t) {
	case ET_F16:
		memcpy(&x, p, 2);
		memcpy(&y, q, 2);
		return (x & 0x7c00) == 0x7c00 && (x & 0x3ff) && (y & 0x7c00) == 0x7c00 && (y & 0x3ff);
	case ET_BF16:
		memcpy(&x, p, 2);
		memcpy(&y, q, 2);
		return (x & 0x7f80) == 0x7f80 && (x & 0x7f) && (y & 0x7f80) == 0x7f80 && (y & 0x7f);
	case ET_F32: {
		float a, c;
		memcpy(&a, p, 4);
		memcpy(&c, q, 4);
		return isnan(a) && isnan(c);
	}
	case ET_F64: {
		double a, c;
		memcpy(&a, p, 8);
		memcpy(&c, q, 8);
		return isnan(a) && isnan(c);
	}
	default:
		return 0;
	}
}

/* Byte-identical (padding included, tuples element by element), except
 * that a NaN may differ from another NaN in sign and payload: when both
 * operands of a commutative op are NaNs, which one the machine instruction
 * propagates depends on the operand order the compiler chose (IEEE 754
 * leaves it open); the generator keeps such values away from
 * bitcast-convert, which would show their bits. */
static int same_bits(const hloi_literal *a, const hloi_literal *b)
{
	if (!a || !b)
		return 0;
	if (shape_is_tuple(&a->shape) || shape_is_tuple(&b->shape)) {
		if (!shape_is_tuple(&a->shape) || !shape_is_tuple(&b->shape) || a->nelems != b->nelems)
			return 0;
		for (size_t i = 0; i < a->nelems; i++)
			if (!same_bits(a->elems[i], b->elems[i]))
				return 0;
		return 1;
	}
	if (a->nbytes != b->nbytes || a->shape.type != b->shape.type ||
	    !layout_equal(&a->shape.layout, &b->shape.layout))
		return 0;
	if (a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0)
		return 1;
	size_t w = (size_t)etype_byte_width(a->shape.type);
	const unsigned char *p = a->data, *q = b->data;
	for (size_t i = 0; i + w <= a->nbytes; i += w)
		if (memcmp(p + i, q + i, w) != 0 && !both_nan(a->shape.type, p + i, q + i))
			return 0;
	return 1;
}

typedef struct run_cfg {
	hloi_engine engine;
	int threads;
	const fast_tuning *tuning;
	const char *what;
} run_cfg;

/* Runs m on fresh copies of `in` (an aliased run consumes its input). */
static hloi_status run_cfg_once(module *m, hloi_context *ctx, hloi_literal **in, size_t n, const run_cfg *c,
				hloi_literal **out, eval_stats *stats)
{
	hloi_literal *copies[8] = { NULL };
	hloi_status st = HLOI_OK;
	for (size_t i = 0; i < n && st == HLOI_OK; i++)
		st = literal_clone(&copies[i], in[i]);
	if (st == HLOI_OK) {
		hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
		o.engine = c->engine;
		o.threads = c->threads;
		st = eval_module_tuned(m, ctx, copies, n, &o, c->tuning, NULL, out, stats);
	}
	for (size_t i = 0; i < n; i++)
		literal_destroy(copies[i]);
	return st;
}

/* One case; returns 1 when it passed. */
static int run_case(uint64_t seed, int large)
{
	rng r = { seed };
	graph g;
	memset(&g, 0, sizeof g);
	g.text = (strbuf)STRBUF_INIT;
	module *m = NULL;
	hloi_context *ctx = NULL;
	hloi_literal *in[8] = { NULL };
	hloi_literal *ref = NULL, *res = NULL;
	eval_plan *plan = NULL;
	size_t nin = 0;
	int ok = 0;
	make_graph(&g, &r, large);
	const char *text = sb_str(&g.text);
	if (getenv("HLOI_FUSION_SHOW"))
		fputs(text, stderr);
	if (hloi_context_new(&ctx) != HLOI_OK)
		goto cleanup;
	if (text_parse_module(&m, ctx, "fusion_diff.hlo", text, strlen(text)) != HLOI_OK ||
	    check_module(m, ctx, NULL) != HLOI_OK) {
		fprintf(stderr, "case %llu: program rejected:\n%s", (unsigned long long)seed, text);
		hloi_context_print_diagnostics(ctx, stderr, 0);
		goto cleanup;
	}
	nin = (size_t)m->entry->nparams;
	for (size_t i = 0; i < nin; i++) {
		if (literal_create(&in[i], m->entry->params[i]->result) != HLOI_OK)
			goto cleanup;
		fill_random(in[i], &r);
		literal_fill_padding(in[i]);
	}
	run_cfg refc = { HLOI_ENGINE_REFERENCE, 1, NULL, "reference" };
	if (run_cfg_once(m, ctx, in, nin, &refc, &ref, NULL) != HLOI_OK) {
		fprintf(stderr, "case %llu: the reference engine failed:\n%s", (unsigned long long)seed, text);
		hloi_context_print_diagnostics(ctx, stderr, 0);
		goto cleanup;
	}
	fast_tuning tiny, generic;
	memset(&tiny, 0, sizeof tiny);
	tiny.stream_bytes = rnd(&r, 2) ? 0 : 1 << 20;
	tiny.tile = 1 + rnd(&r, 7);
	tiny.tile_bytes = 8 * (1 + rnd(&r, 64));
	tiny.chunk_bytes = 8 * (1 + rnd(&r, 8));
	tiny.min_per_thread = 1;
	fast_default_tuning(&generic);
	generic.generic = 1;
	run_cfg cfgs[] = {
		{ HLOI_ENGINE_FAST, 1, NULL, "fast, 1 thread" },
		{ HLOI_ENGINE_FAST, 2, NULL, "fast, 2 threads" },
		{ HLOI_ENGINE_FAST, 1 + rnd(&r, 3), &tiny, "fast, small rows and tiles" },
		{ HLOI_ENGINE_FAST, 2, &generic, "fast, element loops" },
	};
	for (int c = 0; c < N_OF(cfgs); c++) {
		eval_stats stats;
		if (run_cfg_once(m, ctx, in, nin, &cfgs[c], &res, &stats) != HLOI_OK) {
			fprintf(stderr, "case %llu: %s failed:\n%s", (unsigned long long)seed, cfgs[c].what, text);
			hloi_context_print_diagnostics(ctx, stderr, 0);
			goto cleanup;
		}
		if (!same_bits(ref, res)) {
			fprintf(stderr, "case %llu: %s differs from the reference engine:\n%s", (unsigned long long)seed,
				cfgs[c].what, text);
			goto cleanup;
		}
		/* a program fused whole holds its result and the scratch only,
		 * as planned */
		if (c < 2 && g.all_fusible && !g.has_alias && !shape_is_tuple(m->entry->root->result)) {
			if (plan_build(&plan, m->entry, 1, 0, NULL) != HLOI_OK)
				goto cleanup;
			int64_t params = 0;
			for (int i = 0; i < m->entry->nparams; i++)
				params += value_bytes(m->entry->params[i]->result);
			int64_t planned = plan_peak_bytes(plan, cfgs[c].threads, NULL) - params;
			int regions = plan->nregions;
			plan_free(plan);
			plan = NULL;
			if (regions != 1 || (int64_t)stats.peak_bytes != planned ||
			    planned < value_bytes(m->entry->root->result)) {
				fprintf(stderr, "case %llu: %d regions, peak %llu bytes, planned %lld:\n%s",
					(unsigned long long)seed, regions, (unsigned long long)stats.peak_bytes,
					(long long)planned, text);
				goto cleanup;
			}
		}
		literal_destroy(res);
		res = NULL;
	}
	ok = 1;
cleanup:
	plan_free(plan);
	literal_destroy(ref);
	literal_destroy(res);
	for (size_t i = 0; i < 8; i++)
		literal_destroy(in[i]);
	module_destroy(m);
	hloi_context_free(ctx);
	sb_free(&g.text);
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

static void test_random_graphs(void)
{
	vmath_enable(0); /* bit for bit: the C library's functions in both engines */
	long n = env_long("HLOI_FUSION_CASES", 3000);
	uint64_t seed = (uint64_t)env_long("HLOI_FUSION_SEED", 1);
	int failed = 0;
	for (long i = 0; i < n; i++) {
		int large = i % 100 == 99;
		if (!run_case(seed * 1000003u + (uint64_t)i, large) && ++failed >= 5)
			break;
	}
	CU_ASSERT_EQUAL(failed, 0);
}

/* Runs text on random inputs with the reference engine and the fast one
 * (1 and 2 threads, small rows and tiles); 1 when they agree bit for bit.
 * `check` (may be NULL) then looks at the fast engine's plan of the entry. */
static int run_text(const char *text, void (*check)(const eval_plan *))
{
	eval_plan *plan = NULL;
	module *m = NULL;
	hloi_context *ctx = NULL;
	hloi_literal *in[8] = { NULL }, *ref = NULL, *res = NULL;
	int ok = 0;
	rng r = { 77 };
	size_t n = 0;
	if (hloi_context_new(&ctx) != HLOI_OK ||
	    text_parse_module(&m, ctx, "t.hlo", text, strlen(text)) != HLOI_OK || check_module(m, ctx, NULL) != HLOI_OK)
		goto cleanup;
	n = (size_t)m->entry->nparams;
	for (size_t i = 0; i < n; i++) {
		if (literal_create(&in[i], m->entry->params[i]->result) != HLOI_OK)
			goto cleanup;
		fill_random(in[i], &r);
	}
	fast_tuning tiny;
	memset(&tiny, 0, sizeof tiny);
	tiny.tile = 3;
	tiny.tile_bytes = 40;
	tiny.chunk_bytes = 12;
	tiny.min_per_thread = 1;
	run_cfg refc = { HLOI_ENGINE_REFERENCE, 1, NULL, "reference" };
	run_cfg cfgs[] = { { HLOI_ENGINE_FAST, 1, NULL, "fast 1" }, { HLOI_ENGINE_FAST, 2, NULL, "fast 2" },
			   { HLOI_ENGINE_FAST, 3, &tiny, "fast tiny" } };
	if (run_cfg_once(m, ctx, in, n, &refc, &ref, NULL) != HLOI_OK)
		goto cleanup;
	ok = 1;
	for (int c = 0; c < N_OF(cfgs) && ok; c++) {
		ok = run_cfg_once(m, ctx, in, n, &cfgs[c], &res, NULL) == HLOI_OK && same_bits(ref, res);
		if (!ok)
			fprintf(stderr, "%s differs:\n%s", cfgs[c].what, text);
		literal_destroy(res);
		res = NULL;
	}
	if (check) {
		if (plan_build(&plan, m->entry, 1, 0, NULL) != HLOI_OK)
			ok = 0;
		else
			check(plan);
	}
cleanup:
	hloi_context_print_diagnostics(ctx, stderr, 0);
	plan_free(plan);
	literal_destroy(ref);
	for (size_t i = 0; i < 8; i++)
		literal_destroy(in[i]);
	module_destroy(m);
	hloi_context_free(ctx);
	return ok;
}

static void test_fixed_programs(void)
{
	vmath_enable(0); /* bit for bit: the C library's functions in both engines */
	static const char *const progs[] = {
		/* the result into p's buffer, which the root reads transposed:
		 * computed aside, then copied */
		"HloModule m, input_output_alias={ {}: (0, {}, must-alias) }\nENTRY e {\n"
		"  p = f32[67,67] parameter(0)\n  t = f32[67,67] transpose(p), dimensions={1,0}\n"
		"  ROOT r = f32[67,67] add(p, t)\n}\n",
		/* ... read where it is written: in place */
		"HloModule m, input_output_alias={ {}: (0, {}, must-alias) }\nENTRY e {\n"
		"  p = f64[300,7]{0,1} parameter(0)\n  q = f64[7] parameter(1)\n"
		"  b = f64[300,7]{0,1} broadcast(q), dimensions={1}\n  m = f64[300,7]{0,1} multiply(p, b)\n"
		"  ROOT r = f64[300,7]{0,1} subtract(m, p)\n}\n",
		/* a dead input taken over in place while a view of it is read
		 * transposed: the output gets a buffer of its own after all */
		"ENTRY e {\n  x = f32[40,60] parameter(0)\n  a = f32[40,60] add(x, x)\n  v = f32[60,40] reshape(a)\n"
		"  t = f32[40,60] transpose(v), dimensions={1,0}\n  ROOT r = f32[40,60] subtract(a, t)\n}\n",
		/* a root reaching one value twice, through views of views */
		"ENTRY e {\n  x = f32[4,6] parameter(0)\n  a = f32[4,6] add(x, x)\n  v = f32[24] reshape(a)\n"
		"  w = f32[2,12] reshape(v)\n  ROOT t = (f32[4,6], f32[24], f32[2,12], f32[4,6]) tuple(a, v, w, a)\n}\n",
		/* one value reached by a view and by a tuple element (graph
		 * 11034762 of seed 11): copied for one of them, never moved twice */
		"ENTRY e {\n  q = u16[1,4] parameter(0)\n  v = pred[1,4]{1,0} compare(q, q), direction=EQ\n"
		"  t = (u16[1,4], pred[1,4]) tuple(q, v)\n  g = get-tuple-element(t), index=1\n"
		"  w = pred[1,4]{0,1} reshape(v)\n  ROOT out = (pred[1,4], pred[1,4]) tuple(w, g)\n}\n",
		/* nested tuples, elements of parameters */
		"ENTRY e {\n  x = s32[3] parameter(0)\n  y = s32[3] parameter(1)\n  a = s32[3] multiply(x, y)\n"
		"  t = (s32[3], s32[3]) tuple(x, a)\n  g = s32[3] get-tuple-element(t), index=1\n"
		"  ROOT u = ((s32[3], s32[3]), s32[3], s32[3]) tuple(t, g, y)\n}\n",
		"ENTRY e {\n  x = s32[3] parameter(0)\n  y = s32[3] parameter(1)\n  t = (s32[3], s32[3]) tuple(x, y)\n"
		"  ROOT g = s32[3] get-tuple-element(t), index=1\n}\n",
		/* a called computation fused on its own; its root a parameter */
		"HloModule m\nbody {\n  a = f32[5,9] parameter(0)\n  b = f32[5,9] parameter(1)\n"
		"  c = f32[5,9] multiply(a, b)\n  ROOT d = f32[5,9] add(c, a)\n}\n"
		"pass {\n  a = f32[5,9] parameter(0)\n  ROOT b = f32[5,9] parameter(1)\n}\n"
		"ENTRY e {\n  x = f32[5,9] parameter(0)\n  y = f32[5,9] parameter(1)\n"
		"  f = f32[5,9] fusion(x, y), kind=kLoop, calls=body\n  g = f32[5,9] call(f, x), to_apply=pass\n"
		"  ROOT h = f32[5,9] subtract(g, f)\n}\n",
		/* reshapes: refined into factors, and not (two tiled copies) */
		"ENTRY e {\n  x = u16[6,4]{0,1} parameter(0)\n  ROOT r = u16[2,3,4]{1,2,0} reshape(x)\n}\n",
		"ENTRY e {\n  x = u16[6,4]{0,1} parameter(0)\n  ROOT r = u16[4,6]{0,1:pad(5,7)} reshape(x)\n}\n",
		"ENTRY e {\n  x = f64[6,1,4]{0,2,1} parameter(0)\n  ROOT r = f64[1,24,1]{1,2,0} reshape(x)\n}\n",
		/* a large region with two outputs in two layouts, threads and tiles */
		"ENTRY e {\n  x = bf16[333,257]{0,1} parameter(0)\n  y = bf16[333,257] parameter(1)\n"
		"  a = bf16[333,257] add(x, y)\n  b = bf16[333,257]{0,1} multiply(a, y)\n"
		"  ROOT t = (bf16[333,257], bf16[333,257]{0,1}) tuple(a, b)\n}\n",
		/* float iotas (their 32-bit loop), along either dimension */
		"ENTRY e {\n  a = f32[70,3000] iota(), iota_dimension=1\n  b = f64[70,3000]{0,1} iota(), iota_dimension=0\n"
		"  c = f64[70,3000] convert(a)\n  ROOT r = f64[70,3000] add(b, c)\n}\n",
		/* select with a scalar predicate, convert chains, iota */
		"ENTRY e {\n  p = pred[] parameter(0)\n  x = s64[9,130] parameter(1)\n"
		"  i = s64[9,130]{0,1} iota(), iota_dimension=1\n  s = s64[9,130] select(p, x, i)\n"
		"  f = f16[9,130] convert(s)\n  ROOT g = u8[9,130]{0,1} convert(f)\n}\n",
	};
	for (int i = 0; i < N_OF(progs); i++)
		CU_ASSERT(run_text(progs[i], NULL));
}

/* The plan: a dead input is taken over in place, a live one is not; a
 * fully fused program has one region and no intermediate buffer. */
static void check_dead(const eval_plan *p)
{
	CU_ASSERT_EQUAL_FATAL(p->nregions, 1);
	CU_ASSERT_EQUAL(p->regions[0].reuse[0], 1); /* a, at position 1 */
}

static void check_live(const eval_plan *p)
{
	CU_ASSERT_EQUAL_FATAL(p->nregions, 1);
	CU_ASSERT_EQUAL(p->regions[0].reuse[0], -1);
}

static void check_chain(const eval_plan *p)
{
	CU_ASSERT_EQUAL_FATAL(p->nregions, 1);
	CU_ASSERT_EQUAL(p->regions[0].nmem, 4);
	CU_ASSERT_EQUAL(p->regions[0].nout, 1);
	CU_ASSERT_EQUAL(p->regions[0].nin, 2);
	CU_ASSERT_EQUAL(p->nsteps, 3); /* x, y, the region */
	/* parameters + result + one thread's tile (x is read in another
	 * layout: a 64 x 64 tile at most) and rows, nothing else */
	int64_t scratch = plan_peak_bytes(p, 1, NULL) - (64 * 64 * 4 + 64 * 4) - 64 * 64 * 4;
	CU_ASSERT(scratch > 0 && scratch <= 64 * 64 * 4 + p->regions[0].nslots * 64 * 4 + 1024);
}

static void check_two_outputs(const eval_plan *p)
{
	CU_ASSERT_EQUAL_FATAL(p->nregions, 1);
	CU_ASSERT_EQUAL(p->regions[0].nout, 2);
}

static void test_plan_reuse(void)
{
	vmath_enable(0); /* bit for bit: the C library's functions in both engines */
	CU_ASSERT(run_text("ENTRY e {\n  x = f32[8,8] parameter(0)\n  a = f32[8,8]{0,1} reshape(x)\n"
			   "  ROOT b = f32[8,8]{0,1} add(a, a)\n}\n",
			   check_dead));
	CU_ASSERT(run_text("ENTRY e {\n  x = f32[8,8] parameter(0)\n  a = f32[8,8]{0,1} reshape(x)\n"
			   "  b = f32[8,8]{0,1} add(a, a)\n  ROOT t = (f32[8,8]{0,1}, f32[8,8]{0,1}) tuple(b, a)\n}\n",
			   check_live));
	CU_ASSERT(run_text("ENTRY e {\n  x = f32[64,64] parameter(0)\n  y = f32[64] parameter(1)\n"
			   "  b = f32[64,64] broadcast(y), dimensions={0}\n  c = f32[64,64] subtract(x, b)\n"
			   "  d = f32[64,64] multiply(c, c)\n  ROOT e = f32[64,64]{0,1} add(d, x)\n}\n",
			   check_chain));
	CU_ASSERT(run_text("ENTRY e {\n  x = f32[64,64] parameter(0)\n  c = f32[64,64] multiply(x, x)\n"
			   "  d = f32[64,64] add(c, x)\n  ROOT t = (f32[64,64], f32[64,64]) tuple(d, c)\n}\n",
			   check_two_outputs));
}

/* --- reductions reading fused regions ------------------------------------------------ */

/* Random programs where a chain of elementwise instructions (convert,
 * add, multiply, negate, maximum, iota, a broadcast parameter) feeds a
 * reduce by add, maximum, minimum or multiply, whose result is read back
 * through a broadcast; members also read after the reduce (extra
 * outputs) or before it (not fused). Types bf16, f16, f32, f64, s32;
 * layouts, reduced dimensions and run lengths at random. Values are
 * small integers (with NaN, inf and -0 for maximum and minimum), so any
 * order of combination gives the same bits and the engines must agree
 * exactly; the fast engine runs on 1, 2 and 3 threads with runs cut into
 * pieces of a few elements. HLOI_FUSION_REDUCE_CASES=N runs N. */
static const char *const red_types[] = { "bf16", "f16", "f32", "f64", "s32" };
static const etype red_etypes[] = { ET_BF16, ET_F16, ET_F32, ET_F64, ET_S32 };

static void red_layout(strbuf *b, rng *r, int rank)
{
	int perm[HLOI_MAX_RANK];
	if (rank == 0)
		return;
	for (int i = 0; i < rank; i++)
		perm[i] = rank - 1 - i;
	if (rnd(r, 2))
		for (int i = rank - 1; i > 0; i--) {
			int j = rnd(r, i + 1), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
	sb_putc(b, '{');
	for (int i = 0; i < rank; i++)
		sb_printf(b, "%s%d", i ? "," : "", perm[i]);
	sb_putc(b, '}');
}

static void red_shape(strbuf *b, const char *t, int rank, const int64_t *dims)
{
	sb_printf(b, "%s[", t);
	for (int i = 0; i < rank; i++)
		sb_printf(b, "%s%lld", i ? "," : "", (long long)dims[i]);
	sb_putc(b, ']');
}

/* Small integers, exact in every type here (NaN, inf, -0 when `special`). */
static void red_fill(hloi_literal *lit, rng *r, int special, int mul)
{
	etype t = lit->shape.type;
	int64_t w = etype_byte_width(t), n = (int64_t)lit->nbytes / w;
	for (int64_t i = 0; i < n; i++) {
		double v = mul ? (rnd(r, 8) ? 1.0 : -1.0) : (double)(rnd(r, 9) - 4);
		if (special && etype_is_float(t) && rnd(r, 16) == 0)
			v = (double[]){ NAN, INFINITY, -INFINITY, -0.0 }[rnd(r, 4)];
		char *p = (char *)lit->data + i * w;
		if (t == ET_F32) {
			float f = (float)v;
			memcpy(p, &f, 4);
		} else if (t == ET_F64) {
			memcpy(p, &v, 8);
		} else if (t == ET_BF16 || t == ET_F16) {
			uint16_t h = t == ET_BF16 ? f32_to_bf16((float)v) : f32_to_f16((float)v);
			memcpy(p, &h, 2);
		} else {
			int32_t k = (int32_t)v;
			memcpy(p, &k, 4);
		}
	}
}

static int red_case(uint64_t seed, int *fused)
{
	rng r = { seed };
	strbuf b = STRBUF_INIT;
	int rank = 1 + rnd(&r, 4);
	int64_t dims[HLOI_MAX_RANK];
	int big = rnd(&r, 3) ? rnd(&r, rank) : -1;  /* one long dimension: runs in pieces */
	for (int d = 0; d < rank; d++)
		dims[d] = d == big ? 1 + rnd(&r, 300) : 1 + rnd(&r, 5);
	int st = rnd(&r, N_OF(red_types)), tt = rnd(&r, N_OF(red_types));
	const char *S = red_types[st], *T = red_types[tt];
	int isf = red_etypes[tt] != ET_S32;
	static const char *const ops[] = { "add", "maximum", "minimum", "multiply" };
	int op = rnd(&r, 4);
	/* a multiply of more than a few elements could overflow in one order */
	int64_t total = 1;
	for (int d = 0; d < rank; d++)
		total *= dims[d];
	if (op == 3 && total > 64)
		op = 0;
	int reduced[HLOI_MAX_RANK], nred = 0;
	for (int d = 0; d < rank; d++) {
		reduced[d] = rnd(&r, 2);
		nred += reduced[d];
	}
	const char *init = op == 0 ? (rnd(&r, 2) ? "0" : "3")
			   : op == 3 ? "1"
			   : op == 1 ? (isf ? "-inf" : "-2147483648")
				     : (isf ? "inf" : "2147483647");
	sb_printf(&b, "HloModule fused_reduce\n\nred {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
		  "  ROOT r = %s[] %s(a, b)\n}\n\nENTRY main {\n", T, T, T, ops[op]);
	sb_puts(&b, "  p0 = ");
	red_shape(&b, S, rank, dims);
	red_layout(&b, &r, rank);
	sb_puts(&b, " parameter(0)\n  p1 = ");
	/* a parameter over the first dimension, broadcast into the chain */
	red_shape(&b, T, 1, dims);
	sb_puts(&b, " parameter(1)\n");
	int nchain = 1 + rnd(&r, 4);
	/* c0 = convert(p0); then each c_k from c_{k-1} */
	for (int k = 0; k < nchain; k++) {
		sb_printf(&b, "  c%d = ", k);
		red_shape(&b, T, rank, dims);
		red_layout(&b, &r, rank);
		if (k == 0) {
			sb_puts(&b, " convert(p0)\n");
			continue;
		}
		switch (rnd(&r, op == 3 ? 2 : 5)) {
		case 0:
			sb_printf(&b, " negate(c%d)\n", k - 1);
			break;
		case 1:
			sb_printf(&b, " maximum(c%d, c%d)\n", k - 1, k - 1);
			break;
		case 2:
			sb_printf(&b, " multiply(c%d, c%d)\n", k - 1, k - 1 > 0 ? 0 : k - 1);
			break;
		case 3:
			sb_printf(&b, " add(c%d, bp)\n", k - 1);
			break;
		default:
			sb_printf(&b, " subtract(c%d, io)\n", k - 1);
			break;
		}
	}
	/* bp, io: defined first in the text order below */
	strbuf head = STRBUF_INIT;
	sb_puts(&head, "  bp = ");
	red_shape(&head, T, rank, dims);
	sb_puts(&head, " broadcast(p1), dimensions={0}\n  io = ");
	red_shape(&head, T, rank, dims);
	sb_printf(&head, " iota(), iota_dimension=%d\n", rnd(&r, rank));
	int last = nchain - 1;
	/* a member read between the seed and the reduce, or after it */
	int mid = nchain > 1 && rnd(&r, 4) == 0 ? rnd(&r, nchain - 1) : -1;
	int after = nchain > 1 && rnd(&r, 2) ? rnd(&r, nchain) : -1;
	if (mid >= 0) {
		sb_puts(&b, "  mid = ");
		red_shape(&b, T, rank, dims);
		sb_printf(&b, " negate(c%d)\n", mid);
	}
	int64_t odims[HLOI_MAX_RANK];
	int orank = 0;
	sb_printf(&b, "  init = %s[] constant(%s)\n  red = ", T, init);
	for (int d = 0; d < rank; d++)
		if (!reduced[d])
			odims[orank++] = dims[d];
	red_shape(&b, T, orank, odims);
	red_layout(&b, &r, orank);
	sb_printf(&b, " reduce(c%d, init), dimensions={", last);
	for (int d = 0, k = 0; d < rank; d++)
		if (reduced[d])
			sb_printf(&b, "%s%d", k++ ? "," : "", d);
	sb_puts(&b, "}, to_apply=red\n  back = ");
	red_shape(&b, T, rank, dims);
	sb_puts(&b, " broadcast(red), dimensions={");
	for (int d = 0, k = 0; d < rank; d++)
		if (!reduced[d])
			sb_printf(&b, "%s%d", k++ ? "," : "", d);
	sb_printf(&b, "}\n  use = ");
	red_shape(&b, T, rank, dims);
	sb_printf(&b, " %s(back, %s)\n", isf ? "subtract" : "add", after >= 0 ? "c0" : "io");
	sb_puts(&b, "  ROOT t = (");
	red_shape(&b, T, orank, odims);
	sb_puts(&b, ", ");
	red_shape(&b, T, rank, dims);
	if (after >= 0) {
		sb_puts(&b, ", ");
		red_shape(&b, T, rank, dims);
	}
	if (mid >= 0) {
		sb_puts(&b, ", ");
		red_shape(&b, T, rank, dims);
	}
	sb_printf(&b, ") tuple(red, use");
	if (after >= 0)
		sb_printf(&b, ", c%d", after);
	if (mid >= 0)
		sb_puts(&b, ", mid");
	sb_puts(&b, ")\n}\n");
	/* bp and io first in the entry */
	strbuf text = STRBUF_INIT;
	const char *all = sb_str(&b);
	const char *at = strstr(all, "  c0 = ");
	sb_printf(&text, "%.*s%s%s", (int)(at - all), all, sb_str(&head), at);
	sb_free(&b);
	sb_free(&head);

	module *m = NULL;
	hloi_context *ctx = NULL;
	hloi_literal *in[2] = { NULL }, *ref = NULL, *res = NULL;
	eval_plan *plan = NULL;
	int ok = 0;
	const char *src = sb_str(&text);
	if (getenv("HLOI_FUSION_SHOW"))
		fputs(src, stderr);
	if (hloi_context_new(&ctx) != HLOI_OK)
		goto cleanup;
	if (text_parse_module(&m, ctx, "fused_reduce.hlo", src, strlen(src)) != HLOI_OK ||
	    check_module(m, ctx, NULL) != HLOI_OK) {
		fprintf(stderr, "case %llu: program rejected:\n%s", (unsigned long long)seed, src);
		hloi_context_print_diagnostics(ctx, stderr, 0);
		goto cleanup;
	}
	for (int i = 0; i < 2; i++) {
		if (literal_create(&in[i], m->entry->params[i]->result) != HLOI_OK)
			goto cleanup;
		red_fill(in[i], &r, op == 1 || op == 2, op == 3);
	}
	if (plan_build(&plan, m->entry, 1, 0, NULL) != HLOI_OK)
		goto cleanup;
	for (int s = 0; s < plan->nsteps; s++)
		*fused += plan->steps[s].kind == STEP_REDUCE;
	fast_tuning tiny;
	memset(&tiny, 0, sizeof tiny);
	tiny.tile = 1 + rnd(&r, 5);
	tiny.tile_bytes = 8 * (1 + rnd(&r, 16));
	tiny.chunk_bytes = 8 * (1 + rnd(&r, 8));
	tiny.min_per_thread = 1;
	run_cfg refc = { HLOI_ENGINE_REFERENCE, 1, NULL, "reference" };
	run_cfg cfgs[] = { { HLOI_ENGINE_FAST, 1, NULL, "fast, 1 thread" },
			   { HLOI_ENGINE_FAST, 2, NULL, "fast, 2 threads" },
			   { HLOI_ENGINE_FAST, 3, &tiny, "fast, short runs" } };
	if (run_cfg_once(m, ctx, in, 2, &refc, &ref, NULL) != HLOI_OK) {
		fprintf(stderr, "case %llu: the reference engine failed:\n%s", (unsigned long long)seed, src);
		hloi_context_print_diagnostics(ctx, stderr, 0);
		goto cleanup;
	}
	ok = 1;
	for (int c = 0; c < N_OF(cfgs) && ok; c++) {
		if (run_cfg_once(m, ctx, in, 2, &cfgs[c], &res, NULL) != HLOI_OK || !same_bits(ref, res)) {
			fprintf(stderr, "case %llu: %s differs from the reference engine:\n%s", (unsigned long long)seed,
				cfgs[c].what, src);
			hloi_context_print_diagnostics(ctx, stderr, 0);
			ok = 0;
		}
		literal_destroy(res);
		res = NULL;
	}
cleanup:
	plan_free(plan);
	literal_destroy(ref);
	for (int i = 0; i < 2; i++)
		literal_destroy(in[i]);
	module_destroy(m);
	hloi_context_free(ctx);
	sb_free(&text);
	return ok;
}

static void test_fused_reductions(void)
{
	long n = env_long("HLOI_FUSION_REDUCE_CASES", 400);
	uint64_t seed = (uint64_t)env_long("HLOI_FUSION_SEED", 1);
	int failed = 0, fused = 0;
	for (long i = 0; i < n; i++)
		if (!red_case(seed * 7919u + (uint64_t)i, &fused) && ++failed >= 5)
			break;
	CU_ASSERT_EQUAL(failed, 0);
	/* most programs have their reduce read a fused region */
	CU_ASSERT(fused >= n / 2);
	if (getenv("HLOI_FUSION_SHOW"))
		fprintf(stderr, "%d of %ld reductions read a fused region\n", fused, n);
}

static const unit_test fusion_tests[] = {
	{ "fixed_programs", test_fixed_programs },
	{ "plan_reuse", test_plan_reuse },
	{ "random_graphs", test_random_graphs },
	{ "fused_reductions", test_fused_reductions },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "fusion", fusion_tests },
	{ NULL, NULL },
};
