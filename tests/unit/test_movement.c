/* Differential tests of the data-movement kernels: random programs of
 * slice, concatenate, pad, reverse, dynamic-slice, dynamic-update-slice,
 * gather, scatter (recognised and general combiners, variadic) and bitcast
 * over every evaluated element type, ranks 0-4, size-0 and size-1
 * dimensions, random layouts with padding, out-of-bounds indices of every
 * integral type, and operands whose buffers the result takes over; run by
 * the reference engine and by the fast engine on 1, 2 and 3 threads, which
 * must agree bit for bit (padding included). Also fast_copy against the
 * plain box copy with small tiles, chunks and streamed stores, negative and
 * zero source strides. HLOI_MOVE_CASES=N runs N programs (default 3000),
 * HLOI_MOVE_SEED=S another seed, HLOI_MOVE_SHOW=1 prints each program. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "core/literal.h"
#include "eval/eval.h"
#include "eval/fast/fast.h"
#include "eval/kernels/movement.h"
#include "text/parse.h"
#include "unit.h"
#include "util/alloc.h"
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
	return n <= 0 ? 0 : (int)(next(r) % (uint64_t)n);
}

/* lo..hi inclusive */
static int64_t rr(rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(next(r) % (uint64_t)(hi - lo + 1));
}

#define N_OF(a) ((int)(sizeof a / sizeof a[0]))

static const etype all_types[] = { ET_PRED, ET_S8,  ET_S16, ET_S32, ET_S64, ET_U8,  ET_U16,
				   ET_U32,  ET_U64, ET_F16, ET_BF16, ET_F32, ET_F64 };
static const etype index_types[] = { ET_S8, ET_S16, ET_S32, ET_S64, ET_U8, ET_U16, ET_U32, ET_U64 };
static const char *const padvals[] = { "zero", "one", "lowest", "highest" };

/* A shape's text with a random layout (permutation, sometimes padding);
 * the buffer's dims (padded) into `padded` when not NULL. */
static void put_shape_ex(strbuf *b, rng *r, etype t, int rank, const int64_t *dims, int allow_pad, int64_t *padded)
{
	if (padded)
		memcpy(padded, dims, (size_t)rank * sizeof *dims);
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
	if (allow_pad && rnd(r, 4) == 0) {
		sb_puts(b, ":pad(");
		for (int d = 0; d < rank; d++) {
			int64_t pd = dims[d] + rnd(r, 3);
			if (padded)
				padded[d] = pd;
			sb_printf(b, "%s%lld", d ? "," : "", (long long)pd);
		}
		sb_puts(b, ")");
		if (rnd(r, 2))
			sb_printf(b, "padval(%s)", padvals[rnd(r, N_OF(padvals))]);
	}
	sb_puts(b, "}");
}

static void put_shape(strbuf *b, rng *r, etype t, int rank, const int64_t *dims, int allow_pad)
{
	put_shape_ex(b, r, t, rank, dims, allow_pad, NULL);
}

/* The result shape written (random layout) or, sometimes, left out. */
static void put_result(strbuf *b, rng *r, etype t, int rank, const int64_t *dims)
{
	if (rnd(r, 5) == 0)
		return;
	put_shape(b, r, t, rank, dims, 1);
	sb_putc(b, ' ');
}

static void random_dims(rng *r, int rank, int64_t *dims, int large)
{
	for (int d = 0; d < rank; d++) {
		int k = rnd(r, 12);
		dims[d] = k == 0 ? 0 : k < 3 ? 1 : rr(r, 2, 6);
		if (large)
			dims[d] = rank <= 2 ? rr(r, 150, 420) : rr(r, 20, 40);
	}
}

/* Literal text of an integer array (row-major values); u64 values are
 * printed unsigned. */
static void put_ints(strbuf *b, const int64_t *dims, int rank, const int64_t *v, int64_t *pos, int u64)
{
	if (rank == 0) {
		int64_t x = v[(*pos)++];
		if (u64)
			sb_printf(b, "%llu", (unsigned long long)x);
		else
			sb_printf(b, "%lld", (long long)x);
		return;
	}
	sb_putc(b, '{');
	for (int64_t i = 0; i < dims[0]; i++) {
		if (i)
			sb_puts(b, ", ");
		put_ints(b, dims + 1, rank - 1, v, pos, u64);
	}
	sb_putc(b, '}');
}

/* An index value for a dimension of `size` elements of type t: mostly
 * near the range, sometimes the type's extremes. */
static int64_t index_value(rng *r, etype t, int64_t size)
{
	int uns = !etype_is_signed(t);
	int bits = etype_bit_width(t);
	int k = rnd(r, 20);
	if (k == 0)
		return uns ? (bits == 64 ? -1 : (int64_t)((UINT64_C(1) << bits) - 1)) : (bits == 64 ? INT64_MAX : ((INT64_C(1) << (bits - 1)) - 1));
	if (k == 1 && !uns)
		return bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
	int64_t v = rr(r, uns ? 0 : -3, size + 3);
	int64_t max = bits >= 63 ? INT64_MAX : (INT64_C(1) << (bits - (uns ? 0 : 1))) - 1;
	return v > max ? max : v;
}

static const char *binop_for(etype t, int k)
{
	static const char *const numeric[] = { "add", "multiply", "maximum", "minimum", "subtract" };
	static const char *const preds[] = { "add", "or", "and", "xor", "maximum" };
	return t == ET_PRED ? preds[k % N_OF(preds)] : numeric[k % N_OF(numeric)];
}

/* The to_apply computation `comb` for element types t0 (and t1 when two
 * operands): a recognised binary op, its parameters swapped, an
 * overwrite, a keep, or two ops (called per update). */
static void put_combiner(strbuf *b, rng *r, int n, etype t0, etype t1)
{
	const char *tn0 = etype_name(t0), *tn1 = etype_name(t1);
	if (n == 2) {
		const char *op = binop_for(t0, rnd(r, 5));
		sb_printf(b, "comb {\n  x0 = %s[] parameter(0)\n  x1 = %s[] parameter(1)\n  y0 = %s[] parameter(2)\n"
			  "  y1 = %s[] parameter(3)\n  s = %s[] %s(x0, y0)\n  ROOT r = (%s[], %s[]) tuple(s, y1)\n}\n\n",
			  tn0, tn1, tn0, tn1, tn0, op, tn0, tn1);
		return;
	}
	int k = rnd(r, 6);
	const char *op = binop_for(t0, rnd(r, 5));
	if (k == 3) {
		sb_printf(b, "comb {\n  x = %s[] parameter(0)\n  ROOT y = %s[] parameter(1)\n}\n\n", tn0, tn0);
		return;
	}
	if (k == 4) {
		sb_printf(b, "comb {\n  ROOT x = %s[] parameter(0)\n  y = %s[] parameter(1)\n}\n\n", tn0, tn0);
		return;
	}
	sb_printf(b, "comb {\n  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n", tn0, tn0);
	if (k <= 1)
		sb_printf(b, "  ROOT r = %s[] %s(x, y)\n", tn0, op);
	else if (k == 2)
		sb_printf(b, "  ROOT r = %s[] %s(y, x)\n", tn0, op);
	else
		sb_printf(b, "  t = %s[] %s(x, y)\n  ROOT r = %s[] %s(t, y)\n", tn0, op, tn0, op);
	sb_puts(b, "}\n\n");
}

/* Random dimension numbers shared by gather and scatter: per operand
 * dimension a role (0 window, 1 collapsed / inserted, 2 batching), an index
 * vector map, and the indices' shape. */
typedef struct dimnums {
	int op_rank;
	int64_t op_dims[HLOI_MAX_RANK];
	int role[HLOI_MAX_RANK];
	int nmap;
	int64_t map[HLOI_MAX_RANK];
	int idx_rank;                       /* written rank */
	int64_t idx_dims[HLOI_MAX_RANK + 1];
	int ivd;
	int nbatch;                         /* indices dims but ivd */
	int batch_link[HLOI_MAX_RANK];      /* indices batch dim k -> operand batching dim, or -1 */
	int nobat;
	int64_t obat[HLOI_MAX_RANK], ibat[HLOI_MAX_RANK];
} dimnums;

static void random_dimnums(rng *r, dimnums *g, int large)
{
	memset(g, 0, sizeof *g);
	g->op_rank = large ? 2 : rnd(r, 4) + 1;
	random_dims(r, g->op_rank, g->op_dims, large);
	for (int d = 0; d < g->op_rank; d++) {
		int k = rnd(r, 6);
		g->role[d] = large ? (d == 0 ? 1 : 0) : k < 3 ? 0 : k < 5 ? 1 : 2;
	}
	for (int d = 0; d < g->op_rank; d++)
		if (g->role[d] != 2 && (large ? d == 0 : rnd(r, 3) != 0))
			g->map[g->nmap++] = d;
	/* shuffle the map */
	for (int i = g->nmap - 1; i > 0; i--) {
		int k = rnd(r, i + 1);
		int64_t t = g->map[i];
		g->map[i] = g->map[k];
		g->map[k] = t;
	}
	/* indices: free batch dims and one linked dim per operand batching dim */
	int nfree = large ? 1 : rnd(r, 3), nlink = 0;
	int64_t bd[HLOI_MAX_RANK];
	int link[HLOI_MAX_RANK];
	for (int d = 0; d < g->op_rank; d++)
		if (g->role[d] == 2)
			nlink++;
	g->nbatch = nfree + nlink;
	for (int k = 0; k < g->nbatch; k++)
		link[k] = -1;
	int placed = 0;
	for (int d = 0; d < g->op_rank; d++) {
		if (g->role[d] != 2)
			continue;
		int k;
		do
			k = rnd(r, g->nbatch);
		while (link[k] >= 0);
		link[k] = d;
		placed++;
	}
	for (int k = 0; k < g->nbatch; k++) {
		g->batch_link[k] = link[k];
		if (link[k] >= 0)
			bd[k] = g->op_dims[link[k]];
		else
			bd[k] = large ? rr(r, 100, 400) : (rnd(r, 10) == 0 ? 0 : rr(r, 1, 4));
	}
	/* index_vector_dim: anywhere, or implicit (rank) when the map has one entry */
	int implicit = g->nmap == 1 && rnd(r, 2);
	g->ivd = implicit ? g->nbatch : rnd(r, g->nbatch + 1);
	g->idx_rank = implicit ? g->nbatch : g->nbatch + 1;
	for (int i = 0, k = 0; i < g->idx_rank; i++)
		g->idx_dims[i] = !implicit && i == g->ivd ? g->nmap : bd[k++];
	/* batching dims, operand side sorted */
	for (int d = 0; d < g->op_rank; d++) {
		if (g->role[d] != 2)
			continue;
		for (int k = 0; k < g->nbatch; k++)
			if (g->batch_link[k] == d) {
				g->obat[g->nobat] = d;
				g->ibat[g->nobat] = k < g->ivd ? k : k + 1;
				g->nobat++;
			}
	}
	(void)placed;
}

static void put_list(strbuf *b, const char *name, const int64_t *v, int n)
{
	sb_printf(b, ", %s={", name);
	for (int i = 0; i < n; i++)
		sb_printf(b, "%s%lld", i ? "," : "", (long long)v[i]);
	sb_puts(b, "}");
}

/* The indices constant `idx` of type t for dimension numbers g. */
static void put_indices(strbuf *b, rng *r, const dimnums *g, etype t)
{
	int64_t n = 1;
	for (int i = 0; i < g->idx_rank; i++)
		n *= g->idx_dims[i];
	int64_t *v = hloi_calloc(n > 0 ? (size_t)n : 1, sizeof *v);
	if (!v)
		return;
	int64_t ii[HLOI_MAX_RANK + 1] = { 0 };
	for (int64_t p = 0; p < n; p++) {
		int m = g->ivd < g->idx_rank ? (int)ii[g->ivd] : 0;
		int64_t size = g->nmap ? g->op_dims[g->map[m]] : 1;
		v[p] = index_value(r, t, size);
		for (int d = g->idx_rank - 1; d >= 0; d--) {
			if (++ii[d] < g->idx_dims[d])
				break;
			ii[d] = 0;
		}
	}
	sb_printf(b, "  idx = ");
	put_shape(b, r, t, g->idx_rank, g->idx_dims, 0);
	sb_puts(b, " constant(");
	int64_t pos = 0;
	if (n == 0 && g->idx_rank > 0 && g->idx_dims[0] != 0) {
		/* a zero-size inner dimension: print the nesting explicitly */
		put_ints(b, g->idx_dims, g->idx_rank, v, &pos, t == ET_U64);
	} else if (n == 0) {
		sb_puts(b, "{}");
	} else {
		put_ints(b, g->idx_dims, g->idx_rank, v, &pos, t == ET_U64);
	}
	sb_puts(b, ")\n");
	hloi_free(v);
}

typedef struct gen {
	strbuf text;
	const char *what;
} gen;

/* One random program. */
static void make_program(gen *g, rng *r, int large)
{
	strbuf *b = &g->text;
	sb_reset(b);
	etype t = all_types[rnd(r, N_OF(all_types))];
	const char *tn = etype_name(t);
	int64_t dims[HLOI_MAX_RANK], od[HLOI_MAX_RANK];
	int rank = large ? rr(r, 1, 3) : rnd(r, 5);
	random_dims(r, rank, dims, large);
	int kind = rnd(r, 10);
	if (large && kind == 8)
		kind = 0;
	int param = 0;
	sb_puts(b, "HloModule movement\n\n");
	switch (kind) {
	case 0: { /* slice */
		g->what = "slice";
		sb_puts(b, "ENTRY main {\n  p0 = ");
		put_shape(b, r, t, rank, dims, 1);
		sb_puts(b, " parameter(0)\n  ROOT r = ");
		int64_t st[HLOI_MAX_RANK], li[HLOI_MAX_RANK], sr[HLOI_MAX_RANK];
		for (int d = 0; d < rank; d++) {
			st[d] = rr(r, 0, dims[d]);
			li[d] = rr(r, st[d], dims[d]);
			sr[d] = rr(r, 1, 3);
			od[d] = (li[d] - st[d] + sr[d] - 1) / sr[d];
		}
		put_result(b, r, t, rank, od);
		sb_puts(b, "slice(p0), slice={");
		for (int d = 0; d < rank; d++)
			sb_printf(b, "%s[%lld:%lld:%lld]", d ? ", " : "", (long long)st[d], (long long)li[d], (long long)sr[d]);
		sb_puts(b, "}\n}\n");
		break;
	}
	case 1: { /* concatenate */
		g->what = "concatenate";
		if (rank == 0) {
			rank = 1;
			dims[0] = 3;
		}
		int dim = rnd(r, rank), n = rr(r, 1, 3);
		memcpy(od, dims, sizeof od);
		od[dim] = 0;
		sb_puts(b, "ENTRY main {\n");
		for (int k = 0; k < n; k++) {
			int64_t d2[HLOI_MAX_RANK];
			memcpy(d2, dims, sizeof d2);
			d2[dim] = large ? rr(r, 0, 300) : rnd(r, 6) == 0 ? 0 : rr(r, 1, 4);
			od[dim] += d2[dim];
			sb_printf(b, "  p%d = ", k);
			put_shape(b, r, t, rank, d2, 1);
			sb_printf(b, " parameter(%d)\n", k);
		}
		sb_puts(b, "  ROOT r = ");
		put_result(b, r, t, rank, od);
		sb_puts(b, "concatenate(");
		for (int k = 0; k < n; k++)
			sb_printf(b, "%sp%d", k ? ", " : "", k);
		sb_printf(b, "), dimensions={%d}\n}\n", dim);
		break;
	}
	case 2: { /* pad */
		g->what = "pad";
		if (rank == 0) {
			rank = 1;
			dims[0] = 2;
		}
		int64_t lo[HLOI_MAX_RANK], hi[HLOI_MAX_RANK], in[HLOI_MAX_RANK];
		for (int d = 0; d < rank; d++) {
			lo[d] = rr(r, -3, 3);
			hi[d] = rr(r, -3, 3);
			in[d] = rnd(r, 3) == 0 ? rr(r, 1, 2) : 0;
			od[d] = dims[d] + lo[d] + hi[d] + (dims[d] > 0 ? dims[d] - 1 : 0) * in[d];
			if (od[d] < 0) {
				hi[d] -= od[d];
				od[d] = 0;
			}
		}
		sb_puts(b, "ENTRY main {\n  p0 = ");
		put_shape(b, r, t, rank, dims, 1);
		sb_printf(b, " parameter(0)\n  p1 = %s[] parameter(1)\n  ROOT r = ", tn);
		put_result(b, r, t, rank, od);
		sb_puts(b, "pad(p0, p1), padding=");
		for (int d = 0; d < rank; d++) {
			sb_printf(b, "%s%lld_%lld", d ? "x" : "", (long long)lo[d], (long long)hi[d]);
			if (in[d])
				sb_printf(b, "_%lld", (long long)in[d]);
		}
		sb_puts(b, "\n}\n");
		break;
	}
	case 3: { /* reverse */
		g->what = "reverse";
		sb_puts(b, "ENTRY main {\n  p0 = ");
		put_shape(b, r, t, rank, dims, 1);
		sb_puts(b, " parameter(0)\n  ROOT r = ");
		put_result(b, r, t, rank, dims);
		sb_puts(b, "reverse(p0), dimensions={");
		int first = 1;
		for (int d = 0; d < rank; d++)
			if (rnd(r, 2)) {
				sb_printf(b, "%s%d", first ? "" : ",", d);
				first = 0;
			}
		sb_puts(b, "}\n}\n");
		break;
	}
	case 4:
	case 5: { /* dynamic-slice, dynamic-update-slice */
		int dus = kind == 5;
		g->what = dus ? "dynamic-update-slice" : "dynamic-slice";
		etype it = index_types[rnd(r, N_OF(index_types))];
		for (int d = 0; d < rank; d++)
			od[d] = rr(r, 0, dims[d]);
		sb_puts(b, "ENTRY main {\n  p0 = ");
		put_shape(b, r, t, rank, dims, 1);
		sb_puts(b, " parameter(0)\n");
		const char *opnd = "p0";
		if (dus && rnd(r, 2)) {
			/* an intermediate at its last use: updated in place */
			sb_puts(b, "  c = ");
			put_shape(b, r, t, rank, dims, 1);
			sb_puts(b, " copy(p0)\n");
			opnd = "c";
		}
		if (dus) {
			sb_puts(b, "  u = ");
			put_shape(b, r, t, rank, od, 1);
			sb_puts(b, " parameter(1)\n");
		}
		int vector = rank > 0 && rnd(r, 4) == 0;
		if (vector) {
			int64_t v[HLOI_MAX_RANK], n = rank, pos = 0;
			for (int d = 0; d < rank; d++)
				v[d] = index_value(r, it, dims[d]);
			sb_printf(b, "  iv = %s[%d] constant(", etype_name(it), rank);
			put_ints(b, &n, 1, v, &pos, it == ET_U64);
			sb_puts(b, ")\n");
		} else {
			for (int d = 0; d < rank; d++) {
				int64_t v = index_value(r, it, dims[d]), zero = 0;
				sb_printf(b, "  i%d = %s[] constant(", d, etype_name(it));
				put_ints(b, NULL, 0, &v, &zero, it == ET_U64);
				sb_puts(b, ")\n");
			}
		}
		sb_puts(b, "  ROOT r = ");
		put_result(b, r, t, rank, dus ? dims : od);
		sb_printf(b, "%s(%s%s", g->what, opnd, dus ? ", u" : "");
		if (vector)
			sb_puts(b, ", iv");
		for (int d = 0; !vector && d < rank; d++)
			sb_printf(b, ", i%d", d);
		sb_puts(b, ")");
		if (!dus) {
			sb_puts(b, ", dynamic_slice_sizes={");
			for (int d = 0; d < rank; d++)
				sb_printf(b, "%s%lld", d ? "," : "", (long long)od[d]);
			sb_puts(b, "}");
		}
		sb_puts(b, "\n}\n");
		break;
	}
	case 6: { /* gather */
		g->what = "gather";
		dimnums gn;
		random_dimnums(r, &gn, large);
		etype it = index_types[rnd(r, N_OF(index_types))];
		int64_t ss[HLOI_MAX_RANK], offs[HLOI_MAX_RANK], coll[HLOI_MAX_RANK];
		int noff = 0, ncoll = 0;
		for (int d = 0; d < gn.op_rank; d++) {
			if (gn.role[d] == 0) {
				ss[d] = large ? gn.op_dims[d] : rr(r, 0, gn.op_dims[d]);
				noff++;
			} else {
				ss[d] = gn.op_dims[d] > 0 ? 1 : 0;
				if (gn.role[d] == 1)
					coll[ncoll++] = d;
			}
		}
		int out_rank = noff + gn.nbatch;
		/* offset dims: a random sorted subset of the output dims */
		int is_off[2 * HLOI_MAX_RANK] = { 0 };
		for (int k = 0; k < noff; k++) {
			int p;
			do
				p = rnd(r, out_rank);
			while (is_off[p]);
			is_off[p] = 1;
		}
		int nof = 0, bk = 0, wk = 0;
		for (int p = 0; p < out_rank; p++) {
			if (is_off[p]) {
				offs[nof++] = p;
				while (gn.role[wk] != 0)
					wk++;
				od[p] = ss[wk++];
			} else {
				od[p] = gn.idx_dims[bk < gn.ivd || gn.ivd >= gn.idx_rank ? bk : bk + 1];
				bk++;
			}
		}
		sb_puts(b, "ENTRY main {\n  p0 = ");
		put_shape(b, r, t, gn.op_rank, gn.op_dims, 1);
		sb_puts(b, " parameter(0)\n");
		put_indices(b, r, &gn, it);
		sb_puts(b, "  ROOT r = ");
		put_result(b, r, t, out_rank, od);
		sb_puts(b, "gather(p0, idx)");
		put_list(b, "offset_dims", offs, nof);
		put_list(b, "collapsed_slice_dims", coll, ncoll);
		put_list(b, "start_index_map", gn.map, gn.nmap);
		sb_printf(b, ", index_vector_dim=%d", gn.ivd);
		put_list(b, "slice_sizes", ss, gn.op_rank);
		if (gn.nobat) {
			put_list(b, "operand_batching_dims", gn.obat, gn.nobat);
			put_list(b, "start_indices_batching_dims", gn.ibat, gn.nobat);
		}
		if (rnd(r, 3) == 0)
			sb_puts(b, ", indices_are_sorted=true");
		sb_puts(b, "\n}\n");
		break;
	}
	case 7: { /* scatter */
		g->what = "scatter";
		dimnums gn;
		random_dimnums(r, &gn, 0);
		etype it = index_types[rnd(r, N_OF(index_types))];
		int n = rnd(r, 4) == 0 ? 2 : 1;
		etype t1 = n == 2 ? all_types[rnd(r, N_OF(all_types))] : t;
		if (n == 2 && etype_is_float(t) && etype_is_float(t1) && t != t1)
			t1 = t; /* mixed precision is refused */
		int64_t uwd[HLOI_MAX_RANK], ins[HLOI_MAX_RANK], wsz[HLOI_MAX_RANK];
		int nw = 0, nins = 0;
		for (int d = 0; d < gn.op_rank; d++) {
			if (gn.role[d] == 0)
				wsz[nw++] = rr(r, 0, gn.op_dims[d]);
			else if (gn.role[d] == 1)
				ins[nins++] = d;
		}
		int ur = nw + gn.nbatch;
		int is_w[2 * HLOI_MAX_RANK] = { 0 };
		for (int k = 0; k < nw; k++) {
			int p;
			do
				p = rnd(r, ur);
			while (is_w[p]);
			is_w[p] = 1;
		}
		int nu = 0, bk = 0, wk = 0;
		for (int p = 0; p < ur; p++) {
			if (is_w[p]) {
				uwd[nu++] = p;
				od[p] = wsz[wk++];
			} else {
				od[p] = gn.idx_dims[bk < gn.ivd || gn.ivd >= gn.idx_rank ? bk : bk + 1];
				bk++;
			}
		}
		put_combiner(b, r, n, t, t1);
		sb_puts(b, "ENTRY main {\n  p0 = ");
		put_shape(b, r, t, gn.op_rank, gn.op_dims, 1);
		sb_puts(b, " parameter(0)\n");
		const char *opnd = "p0";
		if (n == 1 && rnd(r, 2)) {
			sb_puts(b, "  c = ");
			put_shape(b, r, t, gn.op_rank, gn.op_dims, 1);
			sb_puts(b, " copy(p0)\n");
			opnd = "c";
		}
		sb_puts(b, "  up0 = ");
		put_shape(b, r, t, ur, od, 1);
		sb_puts(b, " parameter(1)\n");
		if (n == 2) {
			sb_puts(b, "  q0 = ");
			put_shape(b, r, t1, gn.op_rank, gn.op_dims, 1);
			sb_puts(b, " parameter(2)\n  up1 = ");
			put_shape(b, r, t1, ur, od, 1);
			sb_puts(b, " parameter(3)\n");
		}
		put_indices(b, r, &gn, it);
		if (n == 2)
			sb_printf(b, "  ROOT r = (%s, %s) scatter(%s, q0, idx, up0, up1)", "A", "B", opnd);
		else
			sb_printf(b, "  ROOT r = scatter(%s, idx, up0)", opnd);
		put_list(b, "update_window_dims", uwd, nu);
		put_list(b, "inserted_window_dims", ins, nins);
		put_list(b, "scatter_dims_to_operand_dims", gn.map, gn.nmap);
		sb_printf(b, ", index_vector_dim=%d", gn.ivd);
		if (gn.nobat) {
			put_list(b, "input_batching_dims", gn.obat, gn.nobat);
			put_list(b, "scatter_indices_batching_dims", gn.ibat, gn.nobat);
		}
		if (rnd(r, 3) == 0)
			sb_puts(b, ", unique_indices=true");
		sb_puts(b, ", to_apply=comb\n}\n");
		if (n == 2) {
			/* the tuple shape, written without layouts */
			strbuf s = STRBUF_INIT;
			sb_printf(&s, "(%s[", etype_name(t));
			for (int d = 0; d < gn.op_rank; d++)
				sb_printf(&s, "%s%lld", d ? "," : "", (long long)gn.op_dims[d]);
			sb_printf(&s, "], %s[", etype_name(t1));
			for (int d = 0; d < gn.op_rank; d++)
				sb_printf(&s, "%s%lld", d ? "," : "", (long long)gn.op_dims[d]);
			sb_puts(&s, "])");
			const char *all = sb_str(b);
			const char *at = strstr(all, "(A, B)");
			if (at) {
				strbuf o = STRBUF_INIT;
				sb_putn(&o, all, (size_t)(at - all));
				sb_puts(&o, sb_str(&s));
				sb_puts(&o, at + 6);
				sb_reset(b);
				sb_puts(b, sb_str(&o));
				sb_free(&o);
			}
			sb_free(&s);
		}
		break;
	}
	default: { /* bitcast */
		g->what = "bitcast";
		int64_t buf = 1, pd[HLOI_MAX_RANK];
		sb_puts(b, "ENTRY main {\n  p0 = ");
		put_shape_ex(b, r, t, rank, dims, 1, pd);
		sb_puts(b, " parameter(0)\n");
		for (int d = 0; d < rank; d++)
			buf *= pd[d];
		const char *opnd = "p0";
		if (rnd(r, 2)) {
			sb_puts(b, "  c = ");
			put_shape(b, r, t, rank, dims, 0);
			sb_puts(b, " copy(p0)\n");
			opnd = "c";
			buf = 1;
			for (int d = 0; d < rank; d++)
				buf *= dims[d];
		}
		/* another type of the same width */
		etype rt = t;
		for (int k = 0; k < 8; k++) {
			etype c = all_types[rnd(r, N_OF(all_types))];
			if (etype_byte_width(c) == etype_byte_width(t) && c != ET_PRED) {
				rt = c;
				break;
			}
		}
		int64_t rd[3];
		int rrank = rnd(r, 3) + 1;
		if (buf == 0)
			rrank = 1;
		int64_t rest = buf;
		for (int d = 0; d < rrank - 1; d++) {
			int64_t f = 1;
			for (int64_t k = 2; k <= 6; k++)
				if (rest % k == 0 && rnd(r, 2))
					f = k;
			rd[d] = f;
			rest /= f;
		}
		rd[rrank - 1] = rest;
		sb_puts(b, "  ROOT r = ");
		put_shape(b, r, rt, rrank, rd, 0);
		sb_printf(b, " bitcast(%s)\n}\n", opnd);
		break;
	}
	}
	(void)param;
}

/* Random contents: raw bits, small integers, and float specials. */
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
		if (t == ET_PRED) {
			p[i] = (unsigned char)(v & 1);
			continue;
		}
		if (rnd(r, 3) == 0)
			v = (uint64_t)(int64_t)(rnd(r, 12) - 3);
		memcpy(p + i, &v, w);
	}
}

static int both_nan(etype t, const unsigned char *p, const unsigned char *q)
{
	switch (t) {
	case ET_F16:
	case ET_BF16: {
		uint16_t x, y, e = t == ET_F16 ? 0x7c00 : 0x7f80, m = t == ET_F16 ? 0x3ff : 0x7f;
		memcpy(&x, p, 2);
		memcpy(&y, q, 2);
		return (x & e) == e && (x & m) && (y & e) == e && (y & m);
	}
	case ET_F32: {
		float x, y;
		memcpy(&x, p, 4);
		memcpy(&y, q, 4);
		return isnan(x) && isnan(y);
	}
	case ET_F64: {
		double x, y;
		memcpy(&x, p, 8);
		memcpy(&y, q, 8);
		return isnan(x) && isnan(y);
	}
	default:
		return 0;
	}
}

/* Byte-identical buffers (padding included), tuples element by element;
 * NaNs may differ in payload only where a combiner did arithmetic on two
 * NaNs (which operand's payload wins is the machine's choice). */
static int same_bits(const hloi_literal *a, const hloi_literal *b)
{
	if (!a || !b)
		return 0;
	if (shape_is_tuple(&a->shape) || shape_is_tuple(&b->shape)) {
		if (a->nelems != b->nelems)
			return 0;
		for (size_t i = 0; i < a->nelems; i++)
			if (!same_bits(a->elems[i], b->elems[i]))
				return 0;
		return 1;
	}
	if (a->nbytes != b->nbytes || a->shape.type != b->shape.type)
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

static hloi_status run_engine(module *m, hloi_context *ctx, hloi_literal **in, size_t n, hloi_engine e, int threads,
			      hloi_literal **out)
{
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.engine = e;
	o.threads = threads;
	return eval_module(m, ctx, in, n, &o, out);
}

/* One case; returns 1 when it passed. */
static int run_case(uint64_t seed, int large)
{
	rng r = { seed };
	gen g = { STRBUF_INIT, "" };
	module *m = NULL;
	hloi_context *ctx = NULL;
	hloi_literal *in[4] = { NULL, NULL, NULL, NULL }, *out[4] = { NULL, NULL, NULL, NULL };
	size_t nin = 0;
	int ok = 0;
	make_program(&g, &r, large);
	const char *text = sb_str(&g.text);
	if (getenv("HLOI_MOVE_SHOW"))
		fputs(text, stderr);
	if (hloi_context_new(&ctx) != HLOI_OK)
		goto cleanup;
	if (text_parse_module(&m, ctx, "movement.hlo", text, strlen(text)) != HLOI_OK ||
	    check_module(m, ctx, NULL) != HLOI_OK) {
		fprintf(stderr, "case %llu (%s): program rejected:\n%s", (unsigned long long)seed, g.what, text);
		hloi_context_print_diagnostics(ctx, stderr, 0);
		goto cleanup;
	}
	nin = (size_t)m->entry->nparams;
	for (size_t i = 0; i < nin && i < 4; i++) {
		if (literal_create(&in[i], m->entry->params[i]->result) != HLOI_OK)
			goto cleanup;
		fill_random(in[i], &r);
	}
	static const hloi_engine engines[4] = { HLOI_ENGINE_REFERENCE, HLOI_ENGINE_FAST, HLOI_ENGINE_FAST,
						HLOI_ENGINE_FAST };
	for (int k = 0; k < 4; k++) {
		/* fresh inputs: a program may run in place over them */
		hloi_literal *cp[4] = { NULL, NULL, NULL, NULL };
		for (size_t i = 0; i < nin; i++)
			if (literal_clone(&cp[i], in[i]) != HLOI_OK)
				goto cleanup;
		hloi_status st = run_engine(m, ctx, cp, nin, engines[k], k == 0 ? 1 : k, &out[k]);
		for (size_t i = 0; i < nin; i++)
			literal_destroy(cp[i]);
		if (st != HLOI_OK) {
			fprintf(stderr, "case %llu (%s): evaluation failed (engine %d):\n%s", (unsigned long long)seed,
				g.what, k, text);
			hloi_context_print_diagnostics(ctx, stderr, 0);
			goto cleanup;
		}
	}
	for (int k = 1; k < 4; k++) {
		if (!same_bits(out[0], out[k])) {
			fprintf(stderr, "case %llu (%s): fast (%d threads) != reference:\n%s", (unsigned long long)seed,
				g.what, k, text);
			goto cleanup;
		}
	}
	ok = 1;
cleanup:
	for (int k = 0; k < 4; k++) {
		literal_destroy(in[k]);
		literal_destroy(out[k]);
	}
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

static void test_random_programs(void)
{
	long n = env_long("HLOI_MOVE_CASES", 3000);
	uint64_t seed = (uint64_t)env_long("HLOI_MOVE_SEED", 1);
	int failed = 0;
	for (long i = 0; i < n; i++) {
		int large = i % 100 == 99;
		if (!run_case(seed * 1000003u + (uint64_t)i, large) && ++failed >= 5)
			break;
	}
	CU_ASSERT_EQUAL(failed, 0);
}

/* fast_copy against mv_copy_box: random boxes in random buffers, source
 * strides of any sign (0 repeats an element), small tiles, chunks and
 * streamed stores, 1-3 threads. */
static void test_fast_copy(void)
{
	rng r = { 77 };
	int bad = 0;
	for (int c = 0; c < 3000 && bad < 5; c++) {
		int rank = rnd(&r, 5), w = 1 << rnd(&r, 4);
		int64_t n[HLOI_MAX_RANK], ds[HLOI_MAX_RANK], ss[HLOI_MAX_RANK], total = 1;
		for (int d = 0; d < rank; d++) {
			n[d] = rnd(&r, 8) == 0 ? 1 : rr(&r, 0, c % 50 == 49 && rank <= 2 ? 300 : 7);
			total *= n[d];
		}
		/* dst: a permutation of the dims, maybe with gaps */
		int perm[HLOI_MAX_RANK];
		for (int d = 0; d < rank; d++)
			perm[d] = d;
		for (int d = rank - 1; d > 0; d--) {
			int k = rnd(&r, d + 1), t = perm[d];
			perm[d] = perm[k];
			perm[k] = t;
		}
		int64_t scale = 1;
		for (int i = 0; i < rank; i++) {
			int d = perm[i];
			ds[d] = rnd(&r, 5) == 0 ? -scale : scale;
			scale *= n[d] + rnd(&r, 2);
		}
		int64_t dbytes = scale * w;
		/* src: another permutation, strides possibly negative or 0 */
		for (int d = rank - 1; d > 0; d--) {
			int k = rnd(&r, d + 1), t = perm[d];
			perm[d] = perm[k];
			perm[k] = t;
		}
		int64_t sscale = 1;
		for (int i = 0; i < rank; i++) {
			int d = perm[i];
			int k = rnd(&r, 6);
			ss[d] = k == 0 ? 0 : k == 1 ? -sscale : sscale;
			sscale *= n[d] + rnd(&r, 2);
		}
		int64_t sbytes = sscale * w;
		if (total == 0) {
			dbytes = sbytes = w;
		}
		unsigned char *src = hloi_malloc((size_t)sbytes), *d1 = hloi_calloc((size_t)dbytes, 1),
			      *d2 = hloi_calloc((size_t)dbytes, 1);
		CU_ASSERT_FATAL(src && d1 && d2);
		for (int64_t i = 0; i < sbytes; i++)
			src[i] = (unsigned char)next(&r);
		/* bases at the element of index 0 (negative strides count back) */
		int64_t doff = 0, soff = 0;
		for (int d = 0; d < rank && total > 0; d++) {
			if (ds[d] < 0)
				doff += -ds[d] * (n[d] - 1);
			if (ss[d] < 0)
				soff += -ss[d] * (n[d] - 1);
		}
		fast_tuning tiny;
		fast_default_tuning(&tiny);
		if (rnd(&r, 2)) {
			tiny.stream_bytes = rnd(&r, 2) ? 0 : 1 << 20;
			tiny.tile = 1 + rnd(&r, 7);
			tiny.tile_bytes = 8 * (1 + rnd(&r, 64));
			tiny.chunk_bytes = 8 * (1 + rnd(&r, 8));
			tiny.min_per_thread = 1;
		}
		mv_copy_box((char *)d1 + doff * w, ds, (const char *)src + soff * w, ss, n, rank, w);
		int rc = fast_copy(d2 + doff * w, ds, src + soff * w, ss, n, rank, w, 1 + rnd(&r, 3), &tiny);
		CU_ASSERT_EQUAL(rc, 0);
		if (rc == 0 && memcmp(d1, d2, (size_t)dbytes) != 0) {
			fprintf(stderr, "fast_copy case %d differs (rank %d, w %d)\n", c, rank, w);
			bad++;
		}
		hloi_free(src);
		hloi_free(d1);
		hloi_free(d2);
	}
	CU_ASSERT_EQUAL(bad, 0);
}


/* The streamed paths, above the size where the fast engine streams
 * (8 MiB): a gather of rows in a random order (rows of an odd number of
 * elements, so they start at every alignment; some indices out of range and
 * clamped) and a pad around an operand whose rows are unaligned in the
 * result, against the reference engine on 1 to 3 threads; and
 * fast_copy_run's streamed runs of every alignment and length against
 * memcpy. */
static void test_streamed(void)
{
	static const char *const programs[] = {
		"HloModule g\nENTRY e {\n  a = f32[700,4099] parameter(0)\n  i = s32[640] parameter(1)\n"
		"  ROOT r = f32[640,4099] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, "
		"start_index_map={0}, index_vector_dim=1, slice_sizes={1,4099}\n}\n",
		"HloModule p\nENTRY e {\n  a = f32[1000,2400] parameter(0)\n  z = f32[] parameter(1)\n"
		"  ROOT r = f32[1003,2405] pad(a, z), padding=1_2x3_2\n}\n",
	};
	rng r = { 5 };
	for (size_t c = 0; c < sizeof programs / sizeof *programs; c++) {
		hloi_context *ctx = NULL;
		module *m = NULL;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		CU_ASSERT_FATAL(text_parse_module(&m, ctx, "s.hlo", programs[c], strlen(programs[c])) == HLOI_OK);
		CU_ASSERT_FATAL(check_module(m, ctx, NULL) == HLOI_OK);
		size_t nin = (size_t)m->entry->nparams;
		hloi_literal *in[2] = { NULL, NULL }, *out[4] = { NULL, NULL, NULL, NULL };
		for (size_t i = 0; i < nin; i++) {
			CU_ASSERT_FATAL(literal_create(&in[i], m->entry->params[i]->result) == HLOI_OK);
			fill_random(in[i], &r);
		}
		if (c == 0) {
			int32_t *idx = in[1]->data;
			for (int k = 0; k < 640; k++)
				idx[k] = (int32_t)rr(&r, -20, 720);
		}
		for (int k = 0; k < 4; k++)
			CU_ASSERT_EQUAL(run_engine(m, ctx, in, nin, k ? HLOI_ENGINE_FAST : HLOI_ENGINE_REFERENCE,
						   k ? k : 1, &out[k]), HLOI_OK);
		for (int k = 1; k < 4; k++)
			CU_ASSERT(same_bits(out[0], out[k]));
		for (int k = 0; k < 4; k++)
			literal_destroy(out[k]);
		for (size_t i = 0; i < nin; i++)
			literal_destroy(in[i]);
		module_destroy(m);
		hloi_context_free(ctx);
	}
	unsigned char *src = hloi_malloc(4096), *d1 = hloi_malloc(4096), *d2 = hloi_malloc(4096);
	CU_ASSERT_FATAL(src && d1 && d2);
	for (int i = 0; i < 4096; i++)
		src[i] = (unsigned char)next(&r);
	int bad = 0;
	for (int c = 0; c < 2000; c++) {
		size_t so = (size_t)rnd(&r, 128), doff = (size_t)rnd(&r, 128), n = (size_t)rnd(&r, 3800);
		memset(d1, 0xa5, 4096);
		memset(d2, 0xa5, 4096);
		memcpy(d1 + doff, src + so, n);
		fast_copy_run(d2 + doff, src + so, n, 1);
		fast_stream_fence();
		bad += memcmp(d1, d2, 4096) != 0;
	}
	CU_ASSERT_EQUAL(bad, 0);
	hloi_free(src);
	hloi_free(d1);
	hloi_free(d2);
}

static const unit_test movement_tests[] = {
	{ "fast_copy", test_fast_copy },
	{ "streamed", test_streamed },
	{ "random_programs", test_random_programs },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "movement", movement_tests },
	{ NULL, NULL },
};
