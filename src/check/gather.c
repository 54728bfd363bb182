/* Shape rules of gather and scatter (XLA's shape_inference.cc:
 * ValidateGatherDimensionNumbers, InferGatherShape,
 * ValidateScatterDimensionNumbers, InferScatterShape and the reducer check
 * scatter shares with reduce), with XLA's messages; plus the few StableHLO
 * constraints XLA leaves to its callers that the engines rely on (a
 * dimension both collapsed and batched, index_vector_dim among the batching
 * dims, scatter operands of different shapes), with messages that name the
 * StableHLO constraint. */
#include <stdio.h>
#include <string.h>

#include "check/check_internal.h"

/* The attribute's list, or reports it missing. */
static const int_list *required(checker *c, const instr *in, attr_id id, int *err)
{
	const int_list *l = instr_ints(in, id);
	if (!l) {
		ck_error(c, in->op_at, "attribute %s is expected but not seen", attr_name(id));
		*err = 1;
	}
	return l;
}

static int sorted(const int_list *l)
{
	for (int i = 1; i < l->n; i++)
		if (l->v[i] < l->v[i - 1])
			return 0;
	return 1;
}

static int adjacent_repeat(const int_list *l)
{
	for (int i = 1; i < l->n; i++)
		if (l->v[i] == l->v[i - 1])
			return 1;
	return 0;
}

static int any_repeat(const int_list *l)
{
	for (int i = 0; i < l->n; i++)
		for (int j = 0; j < i; j++)
			if (l->v[i] == l->v[j])
				return 1;
	return 0;
}

static int contains(const int_list *l, int64_t v)
{
	for (int i = 0; i < l->n; i++)
		if (l->v[i] == v)
			return 1;
	return 0;
}

/* An error whose message ends in a joined list: PREFIX + join(l, sep) + SUFFIX. */
static int list_error(checker *c, loc at, const char *prefix, const int_list *l, const char *sep, const char *suffix)
{
	strbuf m = STRBUF_INIT;
	sb_puts(&m, prefix);
	ck_join_ints(&m, l->v, l->n, sep);
	sb_puts(&m, suffix);
	return ck_report(c, at, &m);
}

/* The StableHLO constraint "is_unique(concatenate(a, b))". */
static int overlap(checker *c, loc at, const char *op, const char *an, const int_list *a, const char *bn,
		   const int_list *b, const char *constraint)
{
	for (int i = 0; i < a->n; i++)
		if (contains(b, a->v[i])) {
			ck_error(c, at, "%s: dimension %lld is in both %s and %s (StableHLO %s constraint %s)", op,
				 (long long)a->v[i], an, bn, op, constraint);
			return 1;
		}
	return 0;
}

/* --- gather ------------------------------------------------------------------ */

int infer_gather(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	int err = 0;
	const int_list *offset = required(c, in, ATTR_OFFSET_DIMS, &err);
	const int_list *collapsed = required(c, in, ATTR_COLLAPSED_SLICE_DIMS, &err);
	const int_list *sim = required(c, in, ATTR_START_INDEX_MAP, &err);
	int64_t ivd = 0;
	if (!instr_int(in, ATTR_INDEX_VECTOR_DIM, &ivd)) {
		ck_error(c, in->op_at, "attribute index_vector_dim is expected but not seen");
		err = 1;
	}
	const int_list *sizes = required(c, in, ATTR_SLICE_SIZES, &err);
	if (err)
		return 1;
	const int_list *obd = ck_ints(in, ATTR_OPERAND_BATCHING_DIMS);
	const int_list *sbd = ck_ints(in, ATTR_START_INDICES_BATCHING_DIMS);
	loc op_at = in->op_at;
	if (ck_expect_array(c, in, 0, "input tensor operand of gather op") ||
	    ck_expect_array(c, in, 1, "gather indices operand of gather op"))
		return 1;
	const shape *input = in->ops[0].def->result, *idx = in->ops[1].def->result;
	if (!etype_is_integer(idx->type)) {
		ck_error(c, in->ops[1].at, "Gather indices parameter must be an integral tensor; got %s.",
			 ck_shape(a, idx));
		return 1;
	}
	if (idx->rank < ivd || ivd < 0) {
		ck_error(c, ck_attr_at(c, in, ATTR_INDEX_VECTOR_DIM),
			 "Gather index leaf dimension must be within [0, rank(start_indices) + 1). rank(start_indices) is %d and gather index leaf dimension is %lld.",
			 idx->rank, (long long)ivd);
		return 1;
	}
	/* start_indices with the implicit trailing 1 */
	int64_t ex[HLOI_MAX_RANK + 1];
	int exr = idx->rank;
	memcpy(ex, idx->dims, sizeof idx->dims);
	if (exr == ivd)
		ex[exr++] = 1;

	/* ValidateGatherDimensionNumbers */
	loc at = ck_attr_at(c, in, ATTR_OFFSET_DIMS);
	if (!sorted(offset))
		return list_error(c, at, "Output window dimensions in gather op must be ascending; got: ", offset, ", ",
				  ".");
	if (adjacent_repeat(offset))
		return list_error(c, at, "Output window dimensions in gather op must not repeat; got: ", offset, ", ",
				  ".");
	int64_t out_rank = (int64_t)offset->n + exr - 1;
	for (int i = 0; i < offset->n; i++)
		if (offset->v[i] < 0 || offset->v[i] >= out_rank) {
			ck_error(c, at, "Offset dimension %d in gather op is out of bounds; got %lld, but should have been in [0,%lld).",
				 i, (long long)offset->v[i], (long long)out_rank);
			return 1;
		}
	if (sim->n != ex[ivd]) {
		ck_error(c, ck_attr_at(c, in, ATTR_START_INDEX_MAP),
			 "Gather op has %d elements in start_index_map and the bound of dimension index_vector_dim=%lld of start_indices is %lld. These two numbers must be equal.",
			 sim->n, (long long)ivd, (long long)ex[ivd]);
		return 1;
	}
	at = ck_attr_at(c, in, ATTR_START_INDEX_MAP);
	for (int i = 0; i < sim->n; i++)
		if (sim->v[i] < 0 || sim->v[i] >= input->rank) {
			ck_error(c, at, "Invalid start_index_map; domain is [0, %d), got: %d->%lld.", input->rank, i,
				 (long long)sim->v[i]);
			return 1;
		}
	if (any_repeat(sim))
		return list_error(c, at, "Repeated dimensions are not allowed in start_index_map; got: ", sim, ", ",
				  ".");
	at = ck_attr_at(c, in, ATTR_COLLAPSED_SLICE_DIMS);
	for (int i = 0; i < collapsed->n; i++)
		if (collapsed->v[i] < 0 || collapsed->v[i] >= input->rank) {
			ck_error(c, at, "Invalid collapsed_slice_dims set in gather op; valid range is [0, %d), got: %lld.",
				 input->rank, (long long)collapsed->v[i]);
			return 1;
		}
	if (!sorted(collapsed))
		return list_error(c, at, "collapsed_slice_dims in gather op must be sorted; got: ", collapsed, ", ", "");
	if (adjacent_repeat(collapsed))
		return list_error(c, at, "Repeated dimensions not allowed in collapsed_slice_dims in gather op; got: ",
				  collapsed, ", ", ".");
	if (obd->n != sbd->n) {
		ck_error(c, op_at,
			 "operand_batching_dims and start_indices_batching_dims in gather op must be of the same size; got: %d and %d.",
			 obd->n, sbd->n);
		return 1;
	}
	at = ck_attr_at(c, in, ATTR_OPERAND_BATCHING_DIMS);
	for (int i = 0; i < obd->n; i++)
		if (obd->v[i] < 0 || obd->v[i] >= input->rank) {
			ck_error(c, at, "Invalid operand_batching_dims set in gather op; valid range is [0, %d), got: %lld.",
				 input->rank, (long long)obd->v[i]);
			return 1;
		}
	if (!sorted(obd))
		return list_error(c, at, "operand_batching_dims in gather op must be sorted; got: ", obd, ", ", "");
	if (adjacent_repeat(obd))
		return list_error(c, at, "Repeated dimensions not allowed in operand_batching_dims in gather op; got: ",
				  obd, ", ", ".");
	at = ck_attr_at(c, in, ATTR_START_INDICES_BATCHING_DIMS);
	for (int i = 0; i < sbd->n; i++)
		if (sbd->v[i] < 0 || sbd->v[i] >= exr) {
			ck_error(c, at, "Invalid start_indices_batching_dims; domain is [0, %d), got: %d->%lld.", exr, i,
				 (long long)sbd->v[i]);
			return 1;
		}
	if (any_repeat(sbd))
		return list_error(c, at, "Repeated dimensions are not allowed in start_indices_batching_dims; got: ", sbd,
				  ", ", ".");

	/* InferGatherShape */
	at = ck_attr_at(c, in, ATTR_SLICE_SIZES);
	if (sizes->n != input->rank) {
		ck_error(c, at,
			 "Gather op must have one slice size for every input dimension; got: len(slice_sizes)=%d, input_shape.rank=%d.",
			 sizes->n, input->rank);
		return 1;
	}
	if (sizes->n != offset->n + collapsed->n + obd->n) {
		strbuf m = STRBUF_INIT;
		sb_printf(&m,
			  "All components of the offset index in a gather op must either be a offset dimension or explicitly collapsed or explicitly batched; got len(slice_sizes)=%d, output_slice_sizes=",
			  sizes->n);
		ck_join_ints(&m, offset->v, offset->n, ",");
		sb_puts(&m, ", collapsed_slice_dims=");
		ck_join_ints(&m, collapsed->v, collapsed->n, ",");
		sb_puts(&m, ", operand_batching_dims=");
		ck_join_ints(&m, obd->v, obd->n, ",");
		sb_puts(&m, ".");
		return ck_report(c, op_at, &m);
	}
	for (int i = 0; i < sizes->n; i++)
		if (sizes->v[i] < 0 || sizes->v[i] > input->dims[i]) {
			ck_error(c, at, "Slice size at index %d in gather op is out of range, must be within [0, %lld), got %lld.",
				 i, (long long)input->dims[i] + 1, (long long)sizes->v[i]);
			return 1;
		}
	for (int i = 0; i < collapsed->n; i++)
		if (sizes->v[collapsed->v[i]] > 1) {
			ck_error(c, at, "Gather op can only collapse slice dims with bound 1 or 0, but bound is %lld for index %lld at position %d.",
				 (long long)sizes->v[collapsed->v[i]], (long long)collapsed->v[i], i);
			return 1;
		}
	for (int i = 0; i < obd->n; i++)
		if (sizes->v[obd->v[i]] > 1) {
			ck_error(c, at, "Gather op can only have operand_batching_dims with bound 1 or 0, but bound is %lld for index %lld at position %d.",
				 (long long)sizes->v[obd->v[i]], (long long)obd->v[i], i);
			return 1;
		}
	/* what the engines rely on (StableHLO's gather C6 and C15) */
	if (overlap(c, op_at, "gather", "collapsed_slice_dims", collapsed, "operand_batching_dims", obd, "C6"))
		return 1;
	if (contains(sbd, ivd)) {
		ck_error(c, ck_attr_at(c, in, ATTR_START_INDICES_BATCHING_DIMS),
			 "gather: index_vector_dim %lld is in start_indices_batching_dims (StableHLO gather constraint C15)",
			 (long long)ivd);
		return 1;
	}
	if (out_rank > HLOI_MAX_RANK) {
		ck_unsupported(c, op_at, "unsupported gather result of rank %lld (more than %d)", (long long)out_rank,
			       HLOI_MAX_RANK);
		return 1;
	}
	int64_t dims[HLOI_MAX_RANK];
	int offset_seen = 0, gather_seen = 0;
	for (int i = 0; i < out_rank; i++) {
		if (contains(offset, i)) {
			while (contains(collapsed, offset_seen) || contains(obd, offset_seen))
				offset_seen++;
			dims[i] = sizes->v[offset_seen++];
		} else {
			if (gather_seen == ivd)
				gather_seen++;
			dims[i] = ex[gather_seen++];
		}
	}
	shape_make_array(inf, input->type, (int)out_rank, dims);
	return 0;
}

/* --- scatter ---------------------------------------------------------------- */

int infer_scatter(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	int err = 0;
	const int_list *uwd = required(c, in, ATTR_UPDATE_WINDOW_DIMS, &err);
	const int_list *iwd = required(c, in, ATTR_INSERTED_WINDOW_DIMS, &err);
	const int_list *sdod = required(c, in, ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, &err);
	int64_t ivd = 0;
	if (!instr_int(in, ATTR_INDEX_VECTOR_DIM, &ivd)) {
		ck_error(c, in->op_at, "attribute index_vector_dim is expected but not seen");
		err = 1;
	}
	const attr *ta = instr_attr(in, ATTR_TO_APPLY);
	if (!ta) {
		ck_error(c, in->op_at, "attribute to_apply is expected but not seen");
		err = 1;
	}
	if (err)
		return 1;
	if (in->nops % 2 == 0) {
		ck_error(c, in->op_at, "expects an odd number of operands, but has %d operands", in->nops);
		return 1;
	}
	const int_list *ibd = ck_ints(in, ATTR_INPUT_BATCHING_DIMS);
	const int_list *sibd = ck_ints(in, ATTR_SCATTER_INDICES_BATCHING_DIMS);
	int n = in->nops / 2;
	loc op_at = in->op_at;
	if (ck_expect_array(c, in, n, "scatter indices of scatter op"))
		return 1;
	const shape *idx = in->ops[n].def->result;
	if (!etype_is_integer(idx->type)) {
		ck_error(c, in->ops[n].at, "Scatter indices parameter must be an integral tensor; got %s.", ck_shape(a, idx));
		return 1;
	}
	if (idx->rank < ivd || ivd < 0) {
		ck_error(c, ck_attr_at(c, in, ATTR_INDEX_VECTOR_DIM),
			 "Scatter index leaf dimension must be within [0, rank(scatter_indices) + 1). rank(scatter_indices) is %d and scatter index leaf dimension is %lld.",
			 idx->rank, (long long)ivd);
		return 1;
	}
	int64_t ex[HLOI_MAX_RANK + 1];
	int exr = idx->rank;
	memcpy(ex, idx->dims, sizeof idx->dims);
	if (exr == ivd)
		ex[exr++] = 1;

	for (int i = 0; i < n; i++) {
		char what[64];
		snprintf(what, sizeof what, "operand %d of scatter op", i);
		if (ck_expect_array(c, in, i, what))
			return 1;
		snprintf(what, sizeof what, "updates %d of scatter op", i);
		if (ck_expect_array(c, in, n + 1 + i, what))
			return 1;
		const shape *op = in->ops[i].def->result, *up = in->ops[n + 1 + i].def->result;
		int64_t max_sizes[HLOI_MAX_RANK];
		int nmax = 0, ins_seen = 0, bat_seen = 0;
		for (int d = 0; d < op->rank; d++) {
			if (ins_seen < iwd->n && iwd->v[ins_seen] == d)
				ins_seen++;
			else if (bat_seen < ibd->n && ibd->v[bat_seen] == d)
				bat_seen++;
			else
				max_sizes[nmax++] = op->dims[d];
		}
		int64_t want_rank = (int64_t)exr - 1 + uwd->n;
		if (up->rank != want_rank) {
			ck_error(c, in->ops[n + 1 + i].at, "Updates tensor must be of rank %lld; got %d.", (long long)want_rank,
				 up->rank);
			return 1;
		}

		/* ValidateScatterDimensionNumbers */
		loc at = ck_attr_at(c, in, ATTR_UPDATE_WINDOW_DIMS);
		if (!sorted(uwd))
			return list_error(c, at, "update_window_dims in scatter op must be sorted; got: ", uwd, ", ", ".");
		if (adjacent_repeat(uwd))
			return list_error(c, at, "update_window_dims in scatter op must not repeat; got: ", uwd, ", ", ".");
		for (int k = 0; k < uwd->n; k++)
			if (uwd->v[k] < 0 || uwd->v[k] >= up->rank) {
				ck_error(c, at, "Invalid update_window_dims set in scatter op; valid range is [0, %d). got: %lld.",
					 up->rank, (long long)uwd->v[k]);
				return 1;
			}
		at = ck_attr_at(c, in, ATTR_INSERTED_WINDOW_DIMS);
		if (!sorted(iwd))
			return list_error(c, at, "inserted_window_dims in scatter op must be sorted; got: ", iwd, ", ", ".");
		if (adjacent_repeat(iwd))
			return list_error(c, at, "inserted_window_dims in scatter op must not repeat; got: ", iwd, ", ", ".");
		for (int k = 0; k < iwd->n; k++)
			if (iwd->v[k] < 0 || iwd->v[k] >= op->rank) {
				ck_error(c, at, "Invalid inserted_window_dims set in scatter op; valid range is [0, %d), got: %lld.",
					 op->rank, (long long)iwd->v[k]);
				return 1;
			}
		if ((int64_t)uwd->n + iwd->n + ibd->n != op->rank) {
			ck_error(c, op_at, "Scatter op has window of size %d; doesn't match operand of rank %d.",
				 uwd->n + iwd->n + ibd->n, op->rank);
			return 1;
		}
		at = ck_attr_at(c, in, ATTR_SCATTER_DIMS_TO_OPERAND_DIMS);
		if (sdod->n != ex[ivd]) {
			ck_error(c, at,
				 "Scatter op has %d elements in scatter_dims_to_operand_dims and the bound of dimension index_vector_dim=%lld of scatter_indices is %lld. These two numbers must be equal.",
				 sdod->n, (long long)ivd, (long long)ex[ivd]);
			return 1;
		}
		for (int k = 0; k < sdod->n; k++)
			if (sdod->v[k] < 0 || sdod->v[k] >= op->rank) {
				ck_error(c, at, "Invalid scatter_dims_to_operand_dims mapping; domain is [0, %d), got: %d->%lld.",
					 op->rank, k, (long long)sdod->v[k]);
				return 1;
			}
		if (any_repeat(sdod))
			return list_error(c, at, "Repeated dimensions not allowed in scatter_dims_to_operand_dims; got: ",
					  sdod, ", ", ".");
		if (ibd->n != sibd->n) {
			ck_error(c, op_at,
				 "input_batching_dims and scatter_indices_batching_dims in scatter op must be of the same size; got: %d and %d.",
				 ibd->n, sibd->n);
			return 1;
		}
		at = ck_attr_at(c, in, ATTR_INPUT_BATCHING_DIMS);
		if (!sorted(ibd))
			return list_error(c, at, "input_batching_dims in scatter op must be sorted; got: ", ibd, ", ", ".");
		if (adjacent_repeat(ibd))
			return list_error(c, at, "input_batching_dims in scatter op must not repeat; got: ", ibd, ", ", ".");
		for (int k = 0; k < ibd->n; k++)
			if (ibd->v[k] < 0 || ibd->v[k] >= op->rank) {
				ck_error(c, at, "Invalid input_batching_dims set in scatter op; valid range is [0, %d), got: %lld.",
					 op->rank, (long long)ibd->v[k]);
				return 1;
			}
		at = ck_attr_at(c, in, ATTR_SCATTER_INDICES_BATCHING_DIMS);
		for (int k = 0; k < sibd->n; k++)
			if (sibd->v[k] < 0 || sibd->v[k] >= exr) {
				ck_error(c, at, "Invalid scatter_indices_batching_dims set in scatter op; valid range is [0, %d), got: %lld.",
					 exr, (long long)sibd->v[k]);
				return 1;
			}
		if (any_repeat(sibd))
			return list_error(c, at, "scatter_indices_batching_dims in scatter op must not repeat; got: ", sibd,
					  ", ", ".");

		for (int k = 0; k < uwd->n; k++) {
			int64_t d = uwd->v[k];
			if (k < nmax && up->dims[d] > max_sizes[k]) {
				ck_error(c, in->ops[n + 1 + i].at,
					 "Bounds of the window dimensions of updates must not exceed the bounds of the corresponding dimensions of operand. For dimension %lld, updates bound is %lld, operand bound is %lld.",
					 (long long)d, (long long)up->dims[d], (long long)max_sizes[k]);
				return 1;
			}
		}
		int seen = 0;
		for (int d = 0; d < up->rank; d++) {
			if (contains(uwd, d))
				continue;
			if (seen == ivd)
				seen++;
			if (up->dims[d] != ex[seen]) {
				ck_error(c, in->ops[n + 1 + i].at,
					 "Bounds of the scatter dimensions of updates must be same as the bounds of the corresponding dimensions of scatter indices. For scatter dimension %d, updates bound is %lld, scatter_indices bound is %lld.",
					 d, (long long)up->dims[d], (long long)ex[seen]);
				return 1;
			}
			seen++;
		}
	}
	/* what the engines rely on (StableHLO's scatter C1, C3, C9, C16) */
	for (int i = 1; i < n; i++) {
		const shape *o0 = in->ops[0].def->result, *oi = in->ops[i].def->result;
		const shape *u0 = in->ops[n + 1].def->result, *ui = in->ops[n + 1 + i].def->result;
		if (!shape_same_dims(o0, oi)) {
			ck_error(c, in->ops[i].at,
				 "scatter: operand %d is %s but operand 0 is %s; the operands must have the same dimensions (StableHLO scatter constraint C1)",
				 i, ck_shape(a, oi), ck_shape(b, o0));
			return 1;
		}
		if (!shape_same_dims(u0, ui)) {
			ck_error(c, in->ops[n + 1 + i].at,
				 "scatter: updates %d is %s but updates 0 is %s; the updates must have the same dimensions (StableHLO scatter constraint C3)",
				 i, ck_shape(a, ui), ck_shape(b, u0));
			return 1;
		}
	}
	if (overlap(c, op_at, "scatter", "inserted_window_dims", iwd, "input_batching_dims", ibd, "C9"))
		return 1;
	if (contains(sibd, ivd)) {
		ck_error(c, ck_attr_at(c, in, ATTR_SCATTER_INDICES_BATCHING_DIMS),
			 "scatter: index_vector_dim %lld is in scatter_indices_batching_dims (StableHLO scatter constraint C16)",
			 (long long)ivd);
		return 1;
	}

	/* the update computation */
	computation *callee = in->callee;
	if (!callee)
		return 1; /* reported already */
	if (ck_ensure_checked(c, in, callee, ta->vat))
		return 1;
	/* XLA's InferScatterShape: the init values are the operands' elements,
	 * the inputs the updates' (floating-point precision may differ: the
	 * computation's values are converted, as doc/semantics.md says) */
	shape *init = arena_array(&c->m->arena, (size_t)n, sizeof *init);
	const shape **inits = arena_array(&c->m->arena, (size_t)n, sizeof *inits);
	etype *input = arena_array(&c->m->arena, (size_t)n, sizeof *input);
	if (!init || !inits || !input) {
		c->oom = 1;
		return 1;
	}
	for (int i = 0; i < n; i++) {
		shape_make_array(&init[i], in->ops[i].def->result->type, 0, NULL);
		inits[i] = &init[i];
		input[i] = in->ops[n + 1 + i].def->result->type;
	}
	if (ck_verify_reducer(c, in, callee, inits, input, n))
		return 1;
	if (ck_mixed_precision(c, in))
		return 1;

	/* the result: the operand's shape, or a tuple of the operands' shapes
	 * (layouts: as written, else the operands') */
	for (int k = 0; k < in->nops; k++)
		for (int j = 0; j < HLOI_MAX_RANK; j++)
			in->ops[k].out_dim[j] = (int8_t)(k == 0 ? j : -1);
	if (n == 1) {
		const shape *op = in->ops[0].def->result;
		shape_make_array(inf, op->type, op->rank, op->dims);
		return 0;
	}
	memset(inf, 0, sizeof *inf);
	inf->type = ET_TUPLE;
	inf->ntuple = n;
	shape *el = arena_array(&c->m->arena, (size_t)n, sizeof *el);
	if (!el) {
		c->oom = 1;
		return 1;
	}
	for (int i = 0; i < n; i++) {
		el[i] = *in->ops[i].def->result;
		if (in->has_shape && shape_is_tuple(in->shape) && in->shape->ntuple == n) {
			const shape *w = &in->shape->tuple[i];
			if (!shape_is_tuple(w) && w->has_layout && w->layout.n_minor_to_major == w->rank &&
			    w->rank == el[i].rank)
				el[i].layout = w->layout;
		}
	}
	inf->tuple = el;
	c->keep_layout = 1;
	return 0;
}
