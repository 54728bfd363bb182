/* select-and-scatter(operand, source, init), window=, select=, scatter=, as
 * XLA's evaluator (HloEvaluator::HandleSelectAndScatter): the result starts
 * as init everywhere; for each source element in row-major order, the
 * window it stands for is walked in row-major order over the operand's
 * elements it covers (padding and base-dilation holes skipped); the first
 * is selected, and each next one replaces the selection when
 * select(selected, candidate) is false; then the selected result element
 * becomes scatter(source element, result element). Both engines use this
 * kernel; the computations run through eval/kernels/apply.h. */
#include <string.h>

#include "core/index.h"
#include "core/literal.h"
#include "eval/kernels/apply.h"
#include "eval/kernels/kernel.h"
#include "eval/scalar/scalar.h"
#include "util/alloc.h"

/* The operand index of window element wi of the window at source index si,
 * or 0 when it falls in padding or a dilation hole. */
static int base_index(const window *w, const shape *base, const int64_t *si, const int64_t *wi, int64_t *out)
{
	for (int d = 0; d < base->rank; d++) {
		const window_dim *wd = &w->d[d];
		int64_t wdil = wd->rhs_dilate > 0 ? wd->rhs_dilate : 1, bdil = wd->lhs_dilate > 0 ? wd->lhs_dilate : 1;
		int64_t b = si[d] * wd->stride + wi[d] * wdil - wd->pad_lo;
		if (bdil != 1) {
			if (b % bdil != 0)
				return 0;
			b /= bdil;
		}
		if (b < 0 || b >= base->dims[d])
			return 0;
		out[d] = b;
	}
	return 1;
}

hloi_status kernel_select_and_scatter(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	const hloi_literal *x = ops[0], *src = ops[1], *init = ops[2];
	const shape *xs = &x->shape, *rs = in->result;
	const computation *selc = instr_called(in, ATTR_SELECT, 0), *scc = instr_called(in, ATTR_SCATTER, 0);
	if (!selc && !scc) {
		/* DynamicSelectAndScatterSamePadding: called_computations={select, scatter} */
		selc = instr_called(in, ATTR_CALLED_COMPUTATIONS, 0);
		scc = instr_called(in, ATTR_CALLED_COMPUTATIONS, 1);
	}
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	static const window none = { 0, NULL };  /* a scalar's */
	const window *w = wa && wa->kind == AK_WINDOW ? &wa->u.win : &none;
	if (!selc || !scc || w->n != xs->rank || src->shape.rank != xs->rank || shape_is_tuple(rs))
		return kernel_none(kc);
	int r = xs->rank;
	hloi_literal *res = dest;
	hloi_status st = HLOI_OK;
	if (!res && (st = value_new(e, rs, &res)) != HLOI_OK)
		return st;
	int64_t count, idx[HLOI_MAX_RANK] = { 0 };
	if (shape_element_count(rs, &count) == 0 && count > 0)
		do
			apply_convert(rs->type, literal_element(res, idx), init->shape.type, init->data);
		while (index_next(r, rs->dims, idx));

	applier as, ac;
	memset(&as, 0, sizeof as);
	memset(&ac, 0, sizeof ac);
	uint64_t *sts = NULL, *stc = NULL;
	int64_t nsrc;
	if (shape_element_count(&src->shape, &nsrc) || nsrc == 0 || count == 0)
		goto done;
	if ((st = applier_init(&as, e, selc)) != HLOI_OK || (st = applier_init(&ac, e, scc)) != HLOI_OK)
		goto done;
	sts = hloi_calloc((size_t)as.nslots + 1, sizeof *sts);
	stc = hloi_calloc((size_t)ac.nslots + 1, sizeof *stc);
	if (!sts || !stc) {
		st = value_oom(e, (int64_t)((size_t)(as.nslots + ac.nslots + 2) * sizeof *sts));
		goto done;
	}
	applier_start(&as, sts);
	applier_start(&ac, stc);
	int64_t wdims[HLOI_MAX_RANK], si[HLOI_MAX_RANK] = { 0 };
	for (int d = 0; d < r; d++)
		wdims[d] = w->d[d].size;
	do {
		int64_t wi[HLOI_MAX_RANK] = { 0 }, at[HLOI_MAX_RANK], sel[HLOI_MAX_RANK];
		int have = 0, empty = 0;
		for (int d = 0; d < r; d++)
			empty |= wdims[d] <= 0;
		if (!empty)
			do {
				if (!base_index(w, xs, si, wi, at))
					continue;
				if (!have) {
					memcpy(sel, at, sizeof(int64_t) * (size_t)r);
					have = 1;
					continue;
				}
				applier_param(&as, sts, 0, xs->type, literal_element(x, sel));
				applier_param(&as, sts, 1, xs->type, literal_element(x, at));
				if ((st = applier_run(&as, sts)) != HLOI_OK)
					goto done;
				if (sc_read(as.rtype[0], applier_result(&as, sts, 0)).i == 0)
					memcpy(sel, at, sizeof(int64_t) * (size_t)r);
			} while (index_next(r, wdims, wi));
		if (!have)
			continue;
		void *p = literal_element(res, sel);
		applier_param(&ac, stc, 0, src->shape.type, literal_element(src, si));
		applier_param(&ac, stc, 1, rs->type, p);
		if ((st = applier_run(&ac, stc)) != HLOI_OK)
			goto done;
		applier_result_to(&ac, stc, 0, rs->type, p);
	} while (index_next(r, src->shape.dims, si));
done:
	hloi_free(sts);
	hloi_free(stc);
	if (as.e)
		applier_free(&as);
	if (ac.e)
		applier_free(&ac);
	if (st != HLOI_OK) {
		if (res != dest)
			value_drop(e, res);
		return st;
	}
	f->vals[in->position] = res;
	f->owned[in->position] = res != dest ? VAL_OWNED : VAL_BORROWED;
	return HLOI_OK;
}
