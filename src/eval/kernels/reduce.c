/* Kernels of reduce, reduce-window and map: a computation applied to the
 * elements (eval/kernels/apply.h), combined in the order of XLA's evaluator
 * (xla/hlo/evaluator/hlo_evaluator.cc at openxla/xla 841f8d2d):
 *
 * - reduce: for each result element, the accumulators start at the init
 *   values, then take each reduced element in turn, visiting the reduced
 *   dimensions of input 0 in its layout's minor-to-major order (the most
 *   minor dimension fastest: row-major for the default layout), i.e.
 *   acc = f(acc, x) with x the next element (ShapeUtil::ForEachIndex).
 *   Exception, as XLA: a float reduce by a plain scalar add sums in double:
 *   init + (x1 + ... + x512) + (x513 + ...) ..., each group of 512
 *   elements summed from 0.0, rounded once to the result type at the end
 *   (f16 and bf16 through f32, as C++'s cast does).
 * - reduce-window: for each result element, the init values, then the
 *   window positions in row-major order (the last window dimension
 *   fastest); positions in the padding or in the holes of base dilation are
 *   skipped.
 * - map: the computation on the operands' elements at each index.
 *
 * The fast engine reduces by a known monoid (add, multiply, max, min, and,
 * or) in fast/reduce.c; everything else, in both engines, goes through the
 * loops below: on several threads in the fast engine when the computation
 * compiles to a program (apply.h), so the values are the same. */
#include <string.h>

#include "core/half.h"
#include "core/index.h"
#include "eval/kernels/apply.h"
#include "eval/kernels/reduce.h"
#include "eval/scalar/scalar.h"
#include "util/alloc.h"

/* Calls per thread at least (a call of a compiled reducer costs a few ns). */
#define APPLY_MIN_PER_THREAD 2048
/* A state of a compiled program on a thread's stack (apply.c's limit). */
#define APPLY_STACK_SLOTS 512
/* XLA's chunk of the double sum (kChunkSize). */
#define XLA_SUM_CHUNK 512

int reduce_is_scalar_add(const computation *comp)
{
	const instr *r = comp->root;
	if (comp->nparams != 2 || !r || r->op != OP_ADD || r->nops != 2)
		return 0;
	const instr *a = r->ops[0].def, *b = r->ops[1].def;
	return a->op == OP_PARAMETER && b->op == OP_PARAMETER && a != b && !shape_is_tuple(a->result) &&
	       a->result->rank == 0 && !shape_is_tuple(b->result) && b->result->rank == 0;
}

opcode reduce_monoid(const computation *comp)
{
	return fast_reduce_monoid(comp);
}

/* Whether a one-input reducer's parameters are of the input's and the init
 * value's types: the shortcuts (XLA's double sum, the fast engine's
 * monoids) compute in the operands' type, so a reducer of another float
 * precision goes through the computation, its values converted. */
static int reducer_takes(const computation *comp, const hloi_literal *x, const hloi_literal *init)
{
	return comp->nparams == 2 && !shape_is_tuple(comp->params[0]->result) &&
	       comp->params[0]->result->type == init->shape.type && !shape_is_tuple(comp->params[1]->result) &&
	       comp->params[1]->result->type == x->shape.type;
}

/* The element at buffer position pos of array lit. */
static inline const unsigned char *at(const hloi_literal *lit, int64_t pos)
{
	return (const unsigned char *)lit->data + pos * etype_byte_width(lit->shape.type);
}

static inline unsigned char *at_mut(hloi_literal *lit, int64_t pos)
{
	return (unsigned char *)lit->data + pos * etype_byte_width(lit->shape.type);
}

/* Writes a double into an element of float type t, as C++'s static_cast
 * from double does for XLA's types (f16 and bf16 through float). */
static void store_double(etype t, void *p, double v)
{
	switch (t) {
	case ET_F64:
		memcpy(p, &v, 8);
		break;
	case ET_F32: {
		float f = (float)v;
		memcpy(p, &f, 4);
		break;
	}
	case ET_F16: {
		uint16_t h = f32_to_f16((float)v);
		memcpy(p, &h, 2);
		break;
	}
	case ET_BF16: {
		uint16_t h = f32_to_bf16((float)v);
		memcpy(p, &h, 2);
		break;
	}
	default: {
		sc_num n = { .is_float = 1, .f = v };
		sc_write(t, p, n);
		break;
	}
	}
}

/* The outputs of reduce and reduce-window: a tuple's elements or the value. */
static hloi_status new_outputs(engine *e, const instr *in, int n, hloi_literal **res, hloi_literal ***outs)
{
	hloi_status st = value_new(e, in->result, res);
	if (st != HLOI_OK)
		return st;
	*outs = hloi_calloc((size_t)n, sizeof **outs);
	if (!*outs) {
		value_drop(e, *res);
		*res = NULL;
		return value_oom(e, (int64_t)n * (int64_t)sizeof **outs);
	}
	for (int k = 0; k < n; k++)
		(*outs)[k] = shape_is_tuple(in->result) ? (*res)->elems[k] : *res;
	return HLOI_OK;
}

/* --- reduce ------------------------------------------------------------------- */

typedef struct red {
	applier *ap;
	int n;                          /* inputs */
	hloi_literal *const *x;         /* inputs, then init values */
	hloi_literal **out;
	int orank;
	int64_t odims[HLOI_MAX_RANK];
	int kdim[HLOI_MAX_RANK];        /* input dimension of result dimension j */
	int nred;                       /* reduced dimensions, in input 0's minor-to-major order */
	int rdim[HLOI_MAX_RANK];
	int64_t rn[HLOI_MAX_RANK];
	int64_t count;                  /* elements reduced per result element */
	int64_t *ist;                   /* n x HLOI_MAX_RANK: input strides */
	int64_t *ost;                   /* n x HLOI_MAX_RANK: result strides */
	int xla_add;                    /* XLA's double sum */
} red;

/* Result element o (row-major over the result's dims) with state st. */
static hloi_status reduce_one(const red *r, uint64_t *st, int64_t o, int64_t *base, int64_t *obase, int64_t *roff)
{
	int n = r->n;
	int64_t idx[HLOI_MAX_RANK];
	for (int j = r->orank - 1; j >= 0; j--) {
		idx[j] = o % r->odims[j];
		o /= r->odims[j];
	}
	for (int k = 0; k < n; k++) {
		const int64_t *is = r->ist + k * HLOI_MAX_RANK, *os = r->ost + k * HLOI_MAX_RANK;
		base[k] = obase[k] = roff[k] = 0;
		for (int j = 0; j < r->orank; j++) {
			base[k] += idx[j] * is[r->kdim[j]];
			obase[k] += idx[j] * os[j];
		}
	}
	int64_t cnt[HLOI_MAX_RANK] = { 0 };
	if (r->xla_add) {
		const hloi_literal *x = r->x[0];
		etype t = x->shape.type;
		double sum = sc_read(r->x[1]->shape.type, r->x[1]->data).f, part = 0.0;
		int in_part = 0;
		for (int64_t i = 0; i < r->count; i++) {
			part += sc_read(t, at(x, base[0] + roff[0])).f;
			if (++in_part == XLA_SUM_CHUNK) {
				sum += part;
				part = 0.0;
				in_part = 0;
			}
			for (int j = 0; j < r->nred; j++) {
				int64_t s = r->ist[r->rdim[j]];
				roff[0] += s;
				if (++cnt[j] < r->rn[j])
					break;
				roff[0] -= r->rn[j] * s;
				cnt[j] = 0;
			}
		}
		if (in_part)
			sum += part;
		store_double(r->out[0]->shape.type, at_mut(r->out[0], obase[0]), sum);
		return HLOI_OK;
	}
	const applier *ap = r->ap;
	for (int k = 0; k < n; k++)
		applier_param(ap, st, k, r->x[n + k]->shape.type, r->x[n + k]->data);
	for (int64_t i = 0; i < r->count; i++) {
		for (int k = 0; k < n; k++)
			applier_param(ap, st, n + k, r->x[k]->shape.type, at(r->x[k], base[k] + roff[k]));
		hloi_status s = applier_run(r->ap, st);
		if (s != HLOI_OK)
			return s;
		for (int k = 0; k < n; k++)
			applier_param_from_result(ap, st, k, k);
		for (int j = 0; j < r->nred; j++) {
			for (int k = 0; k < n; k++)
				roff[k] += r->ist[k * HLOI_MAX_RANK + r->rdim[j]];
			if (++cnt[j] < r->rn[j])
				break;
			for (int k = 0; k < n; k++)
				roff[k] -= r->rn[j] * r->ist[k * HLOI_MAX_RANK + r->rdim[j]];
			cnt[j] = 0;
		}
	}
	for (int k = 0; k < n; k++)
		apply_convert(r->out[k]->shape.type, at_mut(r->out[k], obase[k]), ap->ptype[k], &st[k]);
	return HLOI_OK;
}

typedef struct red_job {
	const red *r;
	hloi_status st;
} red_job;

/* A range of result elements on a thread (compiled reducer: cannot fail). */
static void reduce_range(void *ctx, int64_t lo, int64_t hi)
{
	red_job *j = ctx;
	const red *r = j->r;
	uint64_t st[APPLY_STACK_SLOTS];
	int64_t base[HLOI_MAX_RANK], obase[HLOI_MAX_RANK], roff[HLOI_MAX_RANK];  /* n <= HLOI_MAX_RANK here */
	if (r->ap)
		applier_start(r->ap, st);
	for (int64_t o = lo; o < hi; o++)
		reduce_one(r, st, o, base, obase, roff);
}

/* Every result element in XLA's order: threads when the reducer compiled
 * to a program (the fast engine), else one after the other. */
static hloi_status reduce_apply(engine *e, const instr *in, const computation *f, hloi_literal *const *ops,
				hloi_literal **outs)
{
	red r;
	applier ap;
	memset(&r, 0, sizeof r);
	int n = in->nops / 2;
	const shape *s0 = &ops[0]->shape;
	const int_list *dims = instr_ints(in, ATTR_DIMENSIONS);
	int reduced[HLOI_MAX_RANK] = { 0 };
	for (int j = 0; dims && j < dims->n; j++)
		reduced[dims->v[j]] = 1;
	r.n = n;
	r.x = ops;
	r.out = outs;
	r.count = 1;
	for (int i = 0; i < s0->rank; i++) {
		int d = (int)s0->layout.minor_to_major[i];
		if (reduced[d]) {
			r.rdim[r.nred] = d;
			r.rn[r.nred++] = s0->dims[d];
			r.count *= s0->dims[d];
		}
	}
	for (int d = 0; d < s0->rank; d++) {
		if (!reduced[d]) {
			r.kdim[r.orank] = d;
			r.odims[r.orank++] = s0->dims[d];
		}
	}
	int64_t nout = 1;
	for (int j = 0; j < r.orank; j++)
		nout *= r.odims[j];
	r.xla_add = n == 1 && reduce_is_scalar_add(f) && reducer_takes(f, ops[0], ops[1]) &&
		    etype_is_float(ops[1]->shape.type) && etype_is_float(outs[0]->shape.type);
	r.ist = hloi_calloc((size_t)n * HLOI_MAX_RANK, sizeof *r.ist);
	r.ost = hloi_calloc((size_t)n * HLOI_MAX_RANK, sizeof *r.ost);
	if (!r.ist || !r.ost) {
		hloi_free(r.ist);
		hloi_free(r.ost);
		return value_oom(e, (int64_t)n * HLOI_MAX_RANK * 16);
	}
	for (int k = 0; k < n; k++) {
		index_strides(&ops[k]->shape, r.ist + k * HLOI_MAX_RANK);
		index_strides(&outs[k]->shape, r.ost + k * HLOI_MAX_RANK);
	}
	hloi_status st = HLOI_OK;
	if (nout == 0)
		goto done;
	if (r.xla_add) {
		red_job j = { &r, HLOI_OK };
		if (e->fast)
			eval_parallel(e->threads, nout, APPLY_MIN_PER_THREAD / (r.count ? r.count : 1) + 1, reduce_range, &j);
		else
			reduce_range(&j, 0, nout);
		goto done;
	}
	st = applier_init(&ap, e, f);
	if (st != HLOI_OK)
		goto done;
	r.ap = &ap;
	if (applier_parallel(&ap) && n <= HLOI_MAX_RANK && ap.nslots <= APPLY_STACK_SLOTS) {
		red_job j = { &r, HLOI_OK };
		int64_t per = APPLY_MIN_PER_THREAD / (r.count ? r.count : 1) + 1;
		if (e->fast)
			eval_parallel(e->threads, nout, per, reduce_range, &j);
		else
			reduce_range(&j, 0, nout);
	} else {
		uint64_t *state = hloi_calloc((size_t)ap.nslots + 1, sizeof *state);
		int64_t *tmp = hloi_calloc((size_t)n * 3, sizeof *tmp);
		if (!state || !tmp) {
			st = value_oom(e, (int64_t)ap.nslots * 8);
		} else {
			applier_start(&ap, state);
			for (int64_t o = 0; o < nout && st == HLOI_OK; o++)
				st = reduce_one(&r, state, o, tmp, tmp + n, tmp + 2 * n);
		}
		hloi_free(state);
		hloi_free(tmp);
	}
	applier_free(&ap);
done:
	hloi_free(r.ist);
	hloi_free(r.ost);
	return st;
}

hloi_status kernel_reduce(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	/* (the driver copies an aliased root into kc->dest) */
	const computation *fn = instr_called(in, ATTR_TO_APPLY, 0);
	int n = in->nops / 2;
	if (!fn || n < 1)
		return kernel_none(kc);
	hloi_literal *res = NULL, **outs = NULL;
	hloi_status st = new_outputs(e, in, n, &res, &outs);
	if (st != HLOI_OK)
		return st;
	opcode op = n == 1 && e->fast && reducer_takes(fn, ops[0], ops[1]) ? reduce_monoid(fn) : OP_COUNT;
	if (op == OP_COUNT || fast_reduce(e->threads, in, op, ops[0], ops[1], outs[0], NULL) != 0)
		st = reduce_apply(e, in, fn, ops, outs);
	hloi_free(outs);
	if (st != HLOI_OK) {
		value_drop(e, res);
		return st;
	}
	f->vals[in->position] = res;
	f->owned[in->position] = 1;
	return HLOI_OK;
}

/* --- reduce-window ------------------------------------------------------------ */

typedef struct rwin {
	applier *ap;
	int n;
	hloi_literal *const *x;
	hloi_literal **out;
	int rank;
	const window_dim *w;            /* per dimension */
	int64_t odims[HLOI_MAX_RANK];
	int64_t wn;                     /* window positions */
	int64_t *ist, *ost;             /* n x HLOI_MAX_RANK */
} rwin;

/* XLA's IterateThroughWindow for window position wi of result index oi: the
 * input's buffer offsets (per input) in off, or 0 when the position is in
 * the padding or a hole of base dilation. */
static int window_source(const rwin *r, const int64_t *oi, const int64_t *wi, int64_t *off)
{
	for (int k = 0; k < r->n; k++)
		off[k] = 0;
	for (int d = 0; d < r->rank; d++) {
		const window_dim *w = &r->w[d];
		int64_t b = oi[d] * w->stride + wi[d] * w->rhs_dilate - w->pad_lo;
		if (w->lhs_dilate != 1) {
			if (b % w->lhs_dilate != 0)
				return 0;
			b /= w->lhs_dilate;
		}
		if (b < 0 || b >= r->x[0]->shape.dims[d])
			return 0;
		for (int k = 0; k < r->n; k++)
			off[k] += b * r->ist[k * HLOI_MAX_RANK + d];
	}
	return 1;
}

static hloi_status rwin_one(const rwin *r, uint64_t *st, int64_t o, int64_t *off)
{
	int n = r->n;
	int64_t oi[HLOI_MAX_RANK], wi[HLOI_MAX_RANK] = { 0 };
	for (int d = r->rank - 1; d >= 0; d--) {
		oi[d] = o % r->odims[d];
		o /= r->odims[d];
	}
	const applier *ap = r->ap;
	for (int k = 0; k < n; k++)
		applier_param(ap, st, k, r->x[n + k]->shape.type, r->x[n + k]->data);
	for (int64_t p = 0; p < r->wn; p++) {
		if (window_source(r, oi, wi, off)) {
			for (int k = 0; k < n; k++)
				applier_param(ap, st, n + k, r->x[k]->shape.type, at(r->x[k], off[k]));
			hloi_status s = applier_run(r->ap, st);
			if (s != HLOI_OK)
				return s;
			for (int k = 0; k < n; k++)
				applier_param_from_result(ap, st, k, k);
		}
		for (int d = r->rank - 1; d >= 0; d--) {
			if (++wi[d] < r->w[d].size)
				break;
			wi[d] = 0;
		}
	}
	for (int k = 0; k < n; k++) {
		int64_t pos = 0;
		for (int d = 0; d < r->rank; d++)
			pos += oi[d] * r->ost[k * HLOI_MAX_RANK + d];
		/* the accumulator, of the reducer's type, into the init value's */
		apply_convert(r->out[k]->shape.type, at_mut(r->out[k], pos), ap->ptype[k], &st[k]);
	}
	return HLOI_OK;
}

static void rwin_range(void *ctx, int64_t lo, int64_t hi)
{
	const rwin *r = ctx;
	uint64_t st[APPLY_STACK_SLOTS];
	int64_t off[HLOI_MAX_RANK];
	applier_start(r->ap, st);
	for (int64_t o = lo; o < hi; o++)
		rwin_one(r, st, o, off);
}

hloi_status kernel_reduce_window(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	const computation *fn = instr_called(in, ATTR_TO_APPLY, 0);
	int n = in->nops / 2;
	if (!fn || n < 1)
		return kernel_none(kc);
	/* a single result straight into the destination (run into): every
	 * path below writes each element */
	hloi_literal *dest = n == 1 && !shape_is_tuple(in->result) ? kc->dest : NULL;
	for (int k = 0; dest && k < in->nops; k++)
		if (ops[k] && !shape_is_tuple(&ops[k]->shape) && ops[k]->data == dest->data)
			dest = NULL;  /* an operand in dest's buffer (an aliased parameter): read while written */
	hloi_literal *res = dest, *one[1] = { dest }, **outs = one;
	hloi_status st = dest ? HLOI_OK : new_outputs(e, in, n, &res, &outs);
	if (st != HLOI_OK)
		return st;
	opcode op = n == 1 && e->fast && reducer_takes(fn, ops[0], ops[1]) ? reduce_monoid(fn) : OP_COUNT;
	if (op != OP_COUNT && fast_reduce_window(e->threads, in, op, ops[0], ops[1], outs[0], NULL) == 0)
		goto finish;
	rwin r;
	applier ap;
	memset(&r, 0, sizeof r);
	static const window none = { 0, NULL };
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	const window *w = wa && wa->kind == AK_WINDOW ? &wa->u.win : &none;
	r.n = n;
	r.x = ops;
	r.out = outs;
	r.rank = ops[0]->shape.rank;
	r.w = w->d;
	r.wn = 1;
	for (int d = 0; d < r.rank; d++) {
		r.odims[d] = outs[0]->shape.dims[d];
		r.wn *= w->d[d].size;
	}
	int64_t nout;
	if (shape_element_count(&outs[0]->shape, &nout) || nout == 0)
		goto finish;
	r.ist = hloi_calloc((size_t)n * HLOI_MAX_RANK, sizeof *r.ist);
	r.ost = hloi_calloc((size_t)n * HLOI_MAX_RANK, sizeof *r.ost);
	int64_t *off = hloi_calloc((size_t)n + 1, sizeof *off);
	if (!r.ist || !r.ost || !off) {
		st = value_oom(e, (int64_t)n * HLOI_MAX_RANK * 16);
		goto cleanup;
	}
	for (int k = 0; k < n; k++) {
		index_strides(&ops[k]->shape, r.ist + k * HLOI_MAX_RANK);
		index_strides(&outs[k]->shape, r.ost + k * HLOI_MAX_RANK);
	}
	st = applier_init(&ap, e, fn);
	if (st != HLOI_OK)
		goto cleanup;
	r.ap = &ap;
	if (applier_parallel(&ap) && n <= HLOI_MAX_RANK && ap.nslots <= APPLY_STACK_SLOTS) {
		if (e->fast)
			eval_parallel(e->threads, nout, APPLY_MIN_PER_THREAD / (r.wn ? r.wn : 1) + 1, rwin_range, &r);
		else
			rwin_range(&r, 0, nout);
	} else {
		uint64_t *state = hloi_calloc((size_t)ap.nslots + 1, sizeof *state);
		if (!state) {
			st = value_oom(e, (int64_t)ap.nslots * 8);
		} else {
			applier_start(&ap, state);
			for (int64_t o = 0; o < nout && st == HLOI_OK; o++)
				st = rwin_one(&r, state, o, off);
		}
		hloi_free(state);
	}
	applier_free(&ap);
cleanup:
	hloi_free(r.ist);
	hloi_free(r.ost);
	hloi_free(off);
finish:
	if (outs != one)
		hloi_free(outs);
	if (st != HLOI_OK) {
		if (res != dest)
			value_drop(e, res);
		return st;
	}
	f->vals[in->position] = res;
	f->owned[in->position] = res != dest ? VAL_OWNED : VAL_BORROWED;
	return HLOI_OK;
}

/* --- map ---------------------------------------------------------------------- */

typedef struct mapper {
	applier *ap;
	int n;
	hloi_literal *const *x;
	hloi_literal *out;
	int rank;
	int64_t dims[HLOI_MAX_RANK];
	int64_t *ist;                   /* n x HLOI_MAX_RANK (0 for a scalar operand) */
	int64_t ost[HLOI_MAX_RANK];
} mapper;

static hloi_status map_one(const mapper *m, uint64_t *st, int64_t o)
{
	int64_t idx[HLOI_MAX_RANK];
	for (int d = m->rank - 1; d >= 0; d--) {
		idx[d] = o % m->dims[d];
		o /= m->dims[d];
	}
	for (int k = 0; k < m->n; k++) {
		int64_t pos = 0;
		for (int d = 0; d < m->rank; d++)
			pos += idx[d] * m->ist[k * HLOI_MAX_RANK + d];
		applier_param(m->ap, st, k, m->x[k]->shape.type, at(m->x[k], pos));
	}
	hloi_status s = applier_run(m->ap, st);
	if (s != HLOI_OK)
		return s;
	int64_t pos = 0;
	for (int d = 0; d < m->rank; d++)
		pos += idx[d] * m->ost[d];
	applier_result_to(m->ap, st, 0, m->out->shape.type, at_mut(m->out, pos));
	return HLOI_OK;
}

static void map_range(void *ctx, int64_t lo, int64_t hi)
{
	const mapper *m = ctx;
	uint64_t st[APPLY_STACK_SLOTS];
	applier_start(m->ap, st);
	for (int64_t o = lo; o < hi; o++)
		map_one(m, st, o);
}

hloi_status kernel_map(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	const computation *fn = instr_called(in, ATTR_TO_APPLY, 0);
	if (!fn || in->nops < 1)
		return kernel_none(kc);
	hloi_literal *res = NULL;
	hloi_status st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	mapper m;
	applier ap;
	memset(&m, 0, sizeof m);
	m.n = in->nops;
	m.x = ops;
	m.out = res;
	m.rank = res->shape.rank;
	memcpy(m.dims, res->shape.dims, sizeof m.dims);
	index_strides(&res->shape, m.ost);
	int64_t nout;
	if (shape_element_count(&res->shape, &nout) || nout == 0)
		goto finish;
	m.ist = hloi_calloc((size_t)m.n * HLOI_MAX_RANK, sizeof *m.ist);
	if (!m.ist) {
		st = value_oom(e, (int64_t)m.n * HLOI_MAX_RANK * 8);
		goto finish;
	}
	for (int k = 0; k < m.n; k++)
		if (ops[k]->shape.rank == m.rank)
			index_strides(&ops[k]->shape, m.ist + k * HLOI_MAX_RANK);  /* else a scalar: stride 0 */
	st = applier_init(&ap, e, fn);
	if (st != HLOI_OK)
		goto finish;
	m.ap = &ap;
	if (applier_parallel(&ap) && ap.nslots <= APPLY_STACK_SLOTS) {
		if (e->fast)
			eval_parallel(e->threads, nout, APPLY_MIN_PER_THREAD, map_range, &m);
		else
			map_range(&m, 0, nout);
	} else {
		uint64_t *state = hloi_calloc((size_t)ap.nslots + 1, sizeof *state);
		if (!state) {
			st = value_oom(e, (int64_t)ap.nslots * 8);
		} else {
			applier_start(&ap, state);
			for (int64_t o = 0; o < nout && st == HLOI_OK; o++)
				st = map_one(&m, state, o);
		}
		hloi_free(state);
	}
	applier_free(&ap);
finish:
	hloi_free(m.ist);
	if (st != HLOI_OK) {
		value_drop(e, res);
		return st;
	}
	f->vals[in->position] = res;
	f->owned[in->position] = 1;
	return HLOI_OK;
}
