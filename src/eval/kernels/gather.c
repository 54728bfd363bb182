/* Kernels of gather and scatter (XLA's operation semantics, evaluated the
 * way XLA's HloEvaluator does):
 *
 * - gather: every start index is clamped so that the whole slice lies in
 *   the operand: start[d] = min(dim[d] - size[d], max(0, start[d])), size
 *   1 for collapsed and batching dimensions. A zero-element operand gives
 *   an all-zero result.
 * - scatter: the result starts as the operands; then, for every index of
 *   the update scatter dimensions (in the order of updates[0]'s layout,
 *   minor_to_major, minor fastest) and within it every index of the update
 *   window dimensions (same order), to_apply(current..., update...) is
 *   written at the operand index. An update whose window would reach out
 *   of the operand anywhere is skipped whole.
 *
 * The reference engine computes every element from the formal description
 * and calls the to_apply computation for every update. The fast engine
 * copies each gathered slice as a strided box (threads over the batch
 * indices) and applies a to_apply that is one binary op of its two
 * parameters (or returns one of them) with eval/scalar/scalar.h's function, in the
 * same order, so both give the same bits. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "core/index.h"
#include "eval/kernels/apply.h"
#include "eval/fast/fast.h"
#include "eval/kernels/movement.h"
#include "eval/scalar/scalar.h"
#include "util/alloc.h"

#define GATHER_MAX_THREADS 64
/* batch elements worth another thread (bytes of window copied) */
#define GATHER_MIN_BYTES_PER_THREAD ((int64_t)1 << 18)

/* The dimension numbers of a gather (out = result) or scatter (out =
 * updates) resolved per dimension. */
typedef struct gplan {
	int op_rank, idx_rank, out_rank;
	int64_t op_dims[HLOI_MAX_RANK];
	int vector;                      /* index_vector_dim < rank(indices) */
	int ivd;
	int64_t nvec;                    /* index vector length */
	int nbatch;                      /* batch (gather) / scatter (scatter) dims of out */
	int batch_out[HLOI_MAX_RANK];    /* k-th of them, ascending */
	int batch_idx[HLOI_MAX_RANK];    /* the indices dimension it walks */
	int vec_to_op[HLOI_MAX_RANK + 1];/* start_index_map / scatter_dims_to_operand_dims */
	int win[HLOI_MAX_RANK];          /* operand dim -> window dim of out, or -1 */
	int bat[HLOI_MAX_RANK];          /* operand batching dim -> k of batch_out, or -1 */
	int64_t win_size[HLOI_MAX_RANK]; /* out's window size, 1 for collapsed/batching */
} gplan;

/* Fills the plan from the dimension numbers: `wins` the window dims of
 * out (offset_dims / update_window_dims), `elided` the operand dims without
 * a window dim (collapsed_slice_dims / inserted_window_dims), `vec` the
 * index vector map, `obat` / `ibat` the operand / indices batching dims. */
static void make_plan(gplan *g, const shape *op, const shape *idx, const shape *out, const int_list *wins,
		      const int_list *elided, const int_list *vec, int64_t ivd, const int_list *obat,
		      const int_list *ibat)
{
	memset(g, 0, sizeof *g);
	g->op_rank = op->rank;
	g->idx_rank = idx->rank;
	g->out_rank = out->rank;
	memcpy(g->op_dims, op->dims, sizeof g->op_dims);
	g->ivd = (int)ivd;
	g->vector = ivd < idx->rank;
	g->nvec = g->vector ? idx->dims[ivd] : 1;
	for (int i = 0; i < out->rank; i++) {
		if (int_list_has(wins, i))
			continue;
		int k = g->nbatch++;
		g->batch_out[k] = i;
		g->batch_idx[k] = k < ivd ? k : k + 1;
	}
	for (int m = 0; m < vec->n; m++)
		g->vec_to_op[m] = (int)vec->v[m];
	int nw = 0;
	for (int d = 0; d < op->rank; d++) {
		g->win[d] = -1;
		g->bat[d] = -1;
		g->win_size[d] = 1;
		if (int_list_has(elided, d) || int_list_has(obat, d))
			continue;
		g->win[d] = (int)wins->v[nw++];
		g->win_size[d] = out->dims[g->win[d]];
	}
	for (int i = 0; obat && i < obat->n; i++)
		for (int k = 0; k < g->nbatch; k++)
			if (g->batch_idx[k] == ibat->v[i])
				g->bat[obat->v[i]] = k;
}

/* The start index into the operand for batch position b[0..nbatch): the
 * index vector read from the indices through the vector map, 0 elsewhere,
 * batching dims from b. */
static void start_index(const gplan *g, const hloi_literal *idx, const int64_t *b, int64_t *start)
{
	int64_t ii[HLOI_MAX_RANK + 1];
	for (int k = 0; k < g->nbatch; k++)
		ii[g->batch_idx[k]] = b[k];
	for (int d = 0; d < g->op_rank; d++)
		start[d] = 0;
	for (int64_t m = 0; m < g->nvec && g->op_rank > 0; m++) {
		if (g->vector)
			ii[g->ivd] = m;
		start[g->vec_to_op[m]] = mv_read_index(idx->shape.type, literal_element(idx, ii));
	}
	for (int d = 0; d < g->op_rank; d++)
		if (g->bat[d] >= 0)
			start[d] = b[g->bat[d]];
}

/* start_index for indices of a strided layout (element strides is, w bytes
 * an element): read through the strides, not a multi-index each. */
static void start_index_strided(const gplan *g, const hloi_literal *idx, const int64_t *is, int64_t w,
				const int64_t *b, int64_t *start)
{
	int64_t io = 0;
	for (int k = 0; k < g->nbatch; k++)
		io += b[k] * is[g->batch_idx[k]];
	for (int d = 0; d < g->op_rank; d++)
		start[d] = 0;
	const char *base = (const char *)idx->data;
	int64_t step = g->vector ? is[g->ivd] : 0;
	for (int64_t m = 0; m < g->nvec && g->op_rank > 0; m++)
		start[g->vec_to_op[m]] = mv_read_index(idx->shape.type, base + (io + m * step) * w);
	for (int d = 0; d < g->op_rank; d++)
		if (g->bat[d] >= 0)
			start[d] = b[g->bat[d]];
}

/* --- gather ------------------------------------------------------------------ */

static void gather_plan(const instr *in, const hloi_literal *op, const hloi_literal *idx, const hloi_literal *out,
			gplan *g)
{
	int64_t ivd = 0;
	instr_int(in, ATTR_INDEX_VECTOR_DIM, &ivd);
	make_plan(g, &op->shape, &idx->shape, &out->shape, instr_ints(in, ATTR_OFFSET_DIMS),
		  instr_ints(in, ATTR_COLLAPSED_SLICE_DIMS), instr_ints(in, ATTR_START_INDEX_MAP), ivd,
		  instr_ints(in, ATTR_OPERAND_BATCHING_DIMS), instr_ints(in, ATTR_START_INDICES_BATCHING_DIMS));
}

static void clamp_start(const gplan *g, int64_t *start)
{
	for (int d = 0; d < g->op_rank; d++) {
		int64_t hi = g->op_dims[d] - g->win_size[d];
		start[d] = start[d] < 0 ? 0 : start[d];
		start[d] = start[d] > hi ? hi : start[d];
	}
}

typedef struct gather_job {
	const gplan *g;
	const hloi_literal *op, *idx;
	hloi_literal *out;
	int64_t lo, hi;  /* batch positions (row-major over the batch dims) */
} gather_job;

/* The elements of a box of n[0..rank) when its strides in dst (ds) and src
 * (ss) are the same dense row-major-in-some-order strides (the box is one
 * run in both), else 0. */
static int64_t dense_run(const int64_t *ds, const int64_t *ss, const int64_t *n, int rank)
{
	int64_t total = 1, used = 0;
	for (int d = 0; d < rank; d++)
		total *= n[d];
	/* each dimension's stride must be the product of the sizes of those
	 * with smaller strides */
	for (int64_t expect = 1; expect < total;) {
		int found = -1;
		for (int d = 0; d < rank; d++)
			if (n[d] > 1 && !(used >> d & 1) && ds[d] == expect && ss[d] == expect)
				found = d;
		if (found < 0)
			return 0;
		used |= (int64_t)1 << found;
		expect *= n[found];
	}
	for (int d = 0; d < rank; d++)
		if (n[d] > 1 && !(used >> d & 1))
			return 0;
	return total;
}

/* Rows picked in the index's order start where the hardware prefetcher
 * has no stream yet: while one row is copied, the first lines of the next
 * (batch position b + 1) are asked for. */
#define GATHER_PREFETCH_BYTES 2048
static void prefetch_next(const gplan *g, const hloi_literal *idx, const hloi_literal *out, const int64_t *b,
			  const int64_t *os, const char *base, int64_t run_bytes, int64_t w)
{
	int64_t nb[HLOI_MAX_RANK], start[HLOI_MAX_RANK], so = 0;
	memcpy(nb, b, sizeof nb);
	int k = g->nbatch - 1;
	if (k < 0)
		return;
	if (++nb[k] >= out->shape.dims[g->batch_out[k]])
		return;  /* the next position carries into an outer dimension */
	start_index(g, idx, nb, start);
	clamp_start(g, start);
	for (int d = 0; d < g->op_rank; d++)
		so += start[d] * os[d];
	const char *p = base + so * w;
	int64_t n = run_bytes < GATHER_PREFETCH_BYTES ? run_bytes : GATHER_PREFETCH_BYTES;
	for (int64_t i = 0; i < n; i += 64)
		__builtin_prefetch(p + i, 0, 0);
}

/* The fast engine's gather of batch positions [lo, hi): each slice copied
 * as a strided box. */
static void *gather_rows(void *arg)
{
	const gather_job *j = arg;
	const gplan *g = j->g;
	const hloi_literal *op = j->op;
	hloi_literal *out = j->out;
	int64_t w = etype_byte_width(out->shape.type);
	int64_t os[HLOI_MAX_RANK], rs[HLOI_MAX_RANK], wds[HLOI_MAX_RANK], wss[HLOI_MAX_RANK], wn[HLOI_MAX_RANK];
	int nw = 0;
	mv_strides(&op->shape, os);
	mv_strides(&out->shape, rs);
	for (int d = 0; d < g->op_rank; d++) {
		if (g->win[d] < 0)
			continue;
		wds[nw] = rs[g->win[d]];
		wss[nw] = os[d];
		wn[nw] = out->shape.dims[g->win[d]];
		nw++;
	}
	/* a window that is one run in both (rows of a row-major operand) is
	 * copied as bytes, streamed into a large result */
	int64_t run = dense_run(wds, wss, wn, nw);
	int stream = run > 0 && fast_streams((int64_t)out->nbytes);
	/* element gathers (take_along_axis) cost what finding each start
	 * costs: indices of a strided layout are read through their strides */
	int64_t is[HLOI_MAX_RANK], iw = etype_byte_width(j->idx->shape.type);
	int idx_strided = index_is_strided(&j->idx->shape);
	if (idx_strided)
		mv_strides(&j->idx->shape, is);
	int64_t b[HLOI_MAX_RANK], start[HLOI_MAX_RANK];
	/* b = the multi-index of position lo */
	int64_t rest = j->lo;
	for (int k = g->nbatch - 1; k >= 0; k--) {
		int64_t n = out->shape.dims[g->batch_out[k]];
		b[k] = rest % n;
		rest /= n;
	}
	for (int64_t p = j->lo; p < j->hi; p++) {
		if (idx_strided)
			start_index_strided(g, j->idx, is, iw, b, start);
		else
			start_index(g, j->idx, b, start);
		clamp_start(g, start);
		int64_t so = 0, oo = 0;
		for (int d = 0; d < g->op_rank; d++)
			so += start[d] * os[d];
		for (int k = 0; k < g->nbatch; k++)
			oo += b[k] * rs[g->batch_out[k]];
		if (run == 1 && !stream) {
			char *d = (char *)out->data + oo * w;
			const char *sp = (const char *)op->data + so * w;
			switch (w) {
			case 1: *d = *sp; break;
			case 2: memcpy(d, sp, 2); break;
			case 4: memcpy(d, sp, 4); break;
			case 8: memcpy(d, sp, 8); break;
			default: memcpy(d, sp, (size_t)w); break;
			}
		} else if (run > 0) {
			if (stream && p + 1 < j->hi)
				prefetch_next(g, j->idx, out, b, os, (const char *)op->data, run * w, w);
			fast_copy_run((char *)out->data + oo * w, (const char *)op->data + so * w, (size_t)(run * w),
				      stream);
		} else
			mv_copy_box((char *)out->data + oo * w, wds, (const char *)op->data + so * w, wss, wn, nw, w);
		for (int k = g->nbatch - 1; k >= 0; k--) {
			if (++b[k] < out->shape.dims[g->batch_out[k]])
				break;
			b[k] = 0;
		}
	}
	if (stream)
		fast_stream_fence();
	return NULL;
}

static void gather_fast(const engine *e, const gplan *g, const hloi_literal *op, const hloi_literal *idx,
			hloi_literal *out)
{
	int64_t nb = 1, per = etype_byte_width(out->shape.type);
	for (int k = 0; k < g->nbatch; k++)
		nb *= out->shape.dims[g->batch_out[k]];
	for (int d = 0; d < g->op_rank; d++)
		if (g->win[d] >= 0)
			per *= out->shape.dims[g->win[d]];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t nt = e->threads > 0 ? e->threads : cores > 0 ? cores : 1;
	if (nt > GATHER_MAX_THREADS)
		nt = GATHER_MAX_THREADS;
	if (per > 0 && nt > nb * per / GATHER_MIN_BYTES_PER_THREAD)
		nt = nb * per / GATHER_MIN_BYTES_PER_THREAD;
	if (nt > nb)
		nt = nb;
	if (nt < 1)
		nt = 1;
	gather_job jobs[GATHER_MAX_THREADS];
	for (int64_t k = 0; k < nt; k++) {
		jobs[k].g = g;
		jobs[k].op = op;
		jobs[k].idx = idx;
		jobs[k].out = out;
		jobs[k].lo = nb * k / nt;
		jobs[k].hi = nb * (k + 1) / nt;
	}
	fx_fork((int)nt, jobs, sizeof *jobs, gather_rows);
}

static void fill_gather(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	const hloi_literal *op = ops[0], *idx = ops[1];
	int64_t n, w = etype_byte_width(out->shape.type);
	if (shape_element_count(&out->shape, &n) || n == 0 || !out->data)
		return;
	int64_t oi[HLOI_MAX_RANK] = { 0 };
	int r = out->shape.rank;
	if (shape_element_count(&op->shape, &n) || n == 0) {
		/* XLA's evaluator: a zero-element operand gives zeros */
		do
			memset(literal_element(out, oi), 0, (size_t)w);
		while (index_next(r, out->shape.dims, oi));
		return;
	}
	gplan g;
	gather_plan(in, op, idx, out, &g);
	if (e->fast) {
		gather_fast(e, &g, op, idx, out);
		return;
	}
	int64_t b[HLOI_MAX_RANK], start[HLOI_MAX_RANK], si[HLOI_MAX_RANK];
	do {
		for (int k = 0; k < g.nbatch; k++)
			b[k] = oi[g.batch_out[k]];
		start_index(&g, idx, b, start);
		clamp_start(&g, start);
		for (int d = 0; d < g.op_rank; d++)
			si[d] = start[d] + (g.win[d] >= 0 ? oi[g.win[d]] : 0);
		memcpy(literal_element(out, oi), literal_element(op, si), (size_t)w);
	} while (index_next(r, out->shape.dims, oi));
}

hloi_status kernel_gather(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_array(e, f, in, ops, dest, 0, fill_gather);
}

/* --- scatter --------------------------------------------------------------------- */

typedef void (*scalar_fn)(void *o, const void *a, const void *b);

#define SC_SCALAR_FN(OPC, fn, E, T)                                             \
	static void sf_##fn##_##E(void *o, const void *a, const void *b)        \
	{                                                                       \
		T x, y, r;                                                      \
		memcpy(&x, a, sizeof x);                                        \
		memcpy(&y, b, sizeof y);                                        \
		r = sc_##fn##_##E(x, y);                                        \
		memcpy(o, &r, sizeof r);                                        \
	}
#define SF_ROW_EVAL(E, T, kind) SC_OPS_##kind(SC_SCALAR_FN, E, T)
#define SF_ROW_NOEVAL(E, T, kind)
#define X(E, name, num, width, kind, ctype, ev, npy) SF_ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X

static scalar_fn scalar_lookup(opcode op, etype t)
{
#define CASE(OPC, fn, E, T) \
	case OP_##OPC:      \
		return sf_##fn##_##E;
	SC_LOOKUP_BY_OP_TYPE(op, t, SC_OPS, CASE)
#undef CASE
}

/* How an update is combined with the current value. */
typedef enum combine_kind { CB_CALL, CB_KEEP, CB_REPLACE, CB_BINARY } combine_kind;

typedef struct combiner {
	combine_kind kind;
	scalar_fn fn;
	int swapped;  /* CB_BINARY: fn(update, current) */
} combiner;

/* The fast engine's reading of a one-operand scatter's to_apply: its root
 * is a parameter, or a binary op of the two parameters on their type. */
static combiner recognise(const computation *comp, etype t, etype ut)
{
	combiner cb = { CB_CALL, NULL, 0 };
	const instr *root = comp->root;
	/* a computation of another float precision: its values are converted */
	if (comp->nparams != 2 || ut != t || comp->params[0]->result->type != t ||
	    comp->params[1]->result->type != t || root->result->type != t)
		return cb;
	if (root->op == OP_PARAMETER) {
		cb.kind = root->parameter_number == 0 ? CB_KEEP : CB_REPLACE;
		return cb;
	}
	if (opcode_category(root->op) != OPC_BINARY || root->nops != 2 || root->result->type != t)
		return cb;
	const instr *a = root->ops[0].def, *b = root->ops[1].def;
	if (a->op != OP_PARAMETER || b->op != OP_PARAMETER || a->parameter_number == b->parameter_number ||
	    a->result->type != t || b->result->type != t)
		return cb;
	cb.fn = scalar_lookup(root->op, t);
	if (cb.fn) {
		cb.kind = CB_BINARY;
		cb.swapped = a->parameter_number == 1;
	}
	return cb;
}

/* A copy of operand `src` into dst (same type and dims). */
static void copy_value(const engine *e, hloi_literal *dst, const hloi_literal *src)
{
	int64_t n;
	if (shape_element_count(&dst->shape, &n) || n == 0 || dst->data == src->data)
		return;
	if (layout_equal(&dst->shape.layout, &src->shape.layout) && dst->nbytes == src->nbytes) {
		memcpy(dst->data, src->data, dst->nbytes);
		return;
	}
	int64_t ds[HLOI_MAX_RANK], ss[HLOI_MAX_RANK];
	mv_strides(&dst->shape, ds);
	mv_strides(&src->shape, ss);
	if (e->fast)
		mv_copy_box(dst->data, ds, src->data, ss, dst->shape.dims, dst->shape.rank,
			    etype_byte_width(dst->shape.type));
	else
		value_copy(dst, src);
}

/* The updates applied to arrays[0..n) (already holding the operands). */
static hloi_status scatter_apply(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal **arrays)
{
	int n = in->nops / 2;
	const hloi_literal *idx = ops[n];
	const hloi_literal *const *upd = (const hloi_literal *const *)&ops[n + 1];
	const shape *us = &upd[0]->shape;
	int64_t count;
	if (shape_element_count(us, &count) || count == 0)
		return HLOI_OK;
	int64_t ivd = 0;
	instr_int(in, ATTR_INDEX_VECTOR_DIM, &ivd);
	const int_list *uwd = instr_ints(in, ATTR_UPDATE_WINDOW_DIMS);
	gplan g;
	make_plan(&g, &arrays[0]->shape, &idx->shape, us, uwd, instr_ints(in, ATTR_INSERTED_WINDOW_DIMS),
		  instr_ints(in, ATTR_SCATTER_DIMS_TO_OPERAND_DIMS), ivd, instr_ints(in, ATTR_INPUT_BATCHING_DIMS),
		  instr_ints(in, ATTR_SCATTER_INDICES_BATCHING_DIMS));
	combiner cb = { CB_CALL, NULL, 0 };
	if (e->fast && n == 1)
		cb = recognise(in->callee, arrays[0]->shape.type, upd[0]->shape.type);
	if (cb.kind == CB_KEEP)
		return HLOI_OK;

	/* XLA's order: updates[0]'s dimensions minor to major, scatter
	 * dimensions outside, window dimensions inside */
	int sd[HLOI_MAX_RANK], wd[HLOI_MAX_RANK], nsd = 0, nwd = 0;
	for (int i = 0; i < us->rank; i++) {
		int d = (int)us->layout.minor_to_major[i];
		if (int_list_has(uwd, d))
			wd[nwd++] = d;
		else
			sd[nsd++] = d;
	}
	/* CB_CALL: the computation through eval/kernels/apply.h, the current values
	 * and the updates converted to its parameters' types, its results to
	 * the operands' */
	applier ap;
	uint64_t *state = NULL;
	hloi_status st = HLOI_OK;
	memset(&ap, 0, sizeof ap);
	if (cb.kind == CB_CALL) {
		if ((st = applier_init(&ap, e, in->callee)) != HLOI_OK)
			return st;
		state = hloi_calloc((size_t)ap.nslots + 1, sizeof *state);
		if (!state) {
			st = value_oom(e, (int64_t)ap.nslots * 8);
			goto cleanup;
		}
		applier_start(&ap, state);
	}
	int64_t u[HLOI_MAX_RANK] = { 0 }, b[HLOI_MAX_RANK], start[HLOI_MAX_RANK], oi[HLOI_MAX_RANK];
	int64_t w[64];
	for (int i = 0; i < n && i < 64; i++)
		w[i] = etype_byte_width(arrays[i]->shape.type);
	for (;;) {
		/* one index of the scatter dimensions (window dims at 0) */
		for (int k = 0; k < g.nbatch; k++)
			b[k] = u[g.batch_out[k]];
		start_index(&g, idx, b, start);
		int inside = 1;
		for (int d = 0; d < g.op_rank; d++)
			if (start[d] < 0 || start[d] > g.op_dims[d] - g.win_size[d])
				inside = 0;
		for (int j = 0; inside && j < nwd; j++)
			u[wd[j]] = 0;
		while (inside) {
			for (int d = 0; d < g.op_rank; d++)
				oi[d] = start[d] + (g.win[d] >= 0 ? u[g.win[d]] : 0);
			if (cb.kind == CB_REPLACE) {
				memcpy(literal_element(arrays[0], oi), literal_element(upd[0], u), (size_t)w[0]);
			} else if (cb.kind == CB_BINARY) {
				void *cur = literal_element(arrays[0], oi);
				const void *up = literal_element(upd[0], u);
				if (cb.swapped)
					cb.fn(cur, up, cur);
				else
					cb.fn(cur, cur, up);
			} else {
				for (int i = 0; i < n; i++) {
					applier_param(&ap, state, i, arrays[i]->shape.type, literal_element(arrays[i], oi));
					applier_param(&ap, state, n + i, upd[i]->shape.type, literal_element(upd[i], u));
				}
				if ((st = applier_run(&ap, state)) != HLOI_OK)
					goto cleanup;
				for (int i = 0; i < n; i++)
					applier_result_to(&ap, state, i, arrays[i]->shape.type,
							  literal_element(arrays[i], oi));
			}
			/* next window index */
			int j = 0;
			for (; j < nwd; j++) {
				if (++u[wd[j]] < us->dims[wd[j]])
					break;
				u[wd[j]] = 0;
			}
			if (j == nwd)
				break;
		}
		for (int j = 0; j < nwd; j++)
			u[wd[j]] = 0;
		/* next scatter index */
		int k = 0;
		for (; k < nsd; k++) {
			if (++u[sd[k]] < us->dims[sd[k]])
				break;
			u[sd[k]] = 0;
		}
		if (k == nsd)
			break;
	}
cleanup:
	hloi_free(state);
	if (ap.e)
		applier_free(&ap);
	return st;
}

hloi_status kernel_scatter(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	int pos = in->position, n = in->nops / 2;
	hloi_literal *res = NULL, *arrays[64];
	hloi_status st;
	if (n > 64) {
		diag_error_where(e->ctx, NULL, "scatter of more than 64 operands (instruction '%s')", in->name);
		return HLOI_EUNSUPPORTED;
	}
	int shared = 0;
	for (int k = 1; k < in->nops; k++)
		shared |= ops[k]->data && ops[k]->data == ops[0]->data;
	if (n == 1 && !shared && mv_last_use(f, in, 0) && ops[0]->data && !ops[0]->elided &&
	    layout_equal(&ops[0]->shape.layout, &in->result->layout)) {
		/* the operand's buffer becomes the result */
		res = ops[0];
		f->owned[in->ops[0].def->position] = 0;
	} else {
		st = value_new(e, in->result, &res);
		if (st != HLOI_OK)
			return st;
		for (int i = 0; i < n; i++)
			copy_value(e, n == 1 ? res : res->elems[i], ops[i]);
	}
	for (int i = 0; i < n; i++)
		arrays[i] = n == 1 ? res : res->elems[i];
	st = scatter_apply(e, in, ops, arrays);
	if (st != HLOI_OK) {
		value_drop(e, res);
		return st;
	}
	f->vals[pos] = res;
	f->owned[pos] = 1;
	return HLOI_OK;
}
