/* Structured sparsity of a convolution operand (sparsity_config), in both
 * engines: the (values, metadata) tuple is expanded into the dense operand
 * it stands for, which the convolution kernels then read as any other.
 *
 * Along the sparse dimension d, values come in blocks of nnz; value j of
 * block b goes to dense position (b / stride) * stride * block + b % stride
 * + meta * stride, where meta in [0, block) is its metadata entry: with
 * stride 1 block b covers dense positions [b * block, (b + 1) * block), and
 * with stride s the s blocks of a group of s * block positions interleave,
 * each taking every s-th position. Every other position is zero. This is
 * XLA's evaluator's materialization, checked against the expected values of
 * xla/hlo/evaluator/hlo_evaluator_sparsity_test.cc; a metadata entry outside
 * [0, block) or one that repeats a position of its block stops the run. */
#include <stdio.h>
#include <string.h>

#include "core/index.h"
#include "eval/kernels/movement.h"
#include "eval/kernels/sparse.h"
#include "util/checked.h"

/* The metadata entry of values element idx, and whether an earlier value of
 * its block (along d) holds the same entry. */
static int repeats(const hloi_literal *meta, int64_t *idx, int d, int64_t nnz, int64_t m)
{
	int64_t p = idx[d], first = p - p % nnz;
	int rep = 0;
	for (int64_t q = first; q < p && !rep; q++) {
		idx[d] = q;
		rep = mv_read_index(meta->shape.type, literal_element(meta, idx)) == m;
	}
	idx[d] = p;
	return rep;
}

hloi_status eval_sparse_dense(engine *e, const instr *in, int k, const sparsity_side *sd, const hloi_literal *v,
			      const hloi_literal *meta, hloi_literal **out)
{
	*out = NULL;
	const char *side = k ? "rhs" : "lhs";
	int d = (int)sd->dim, rank = v->shape.rank;
	/* the checker's rules (check/dot.c), again for a caller that skipped it */
	if (shape_is_tuple(&v->shape) || shape_is_tuple(&meta->shape) || sd->nnz <= 0 || sd->block < sd->nnz || sd->stride <= 0 || d < 0 || d >= rank ||
	    !shape_same_dims(&v->shape, &meta->shape) || !etype_is_integer(meta->shape.type) ||
	    v->shape.dims[d] % sd->nnz != 0 || (v->shape.dims[d] / sd->nnz) % sd->stride != 0 || v->elided ||
	    meta->elided || literal_is_dynamic(v) || literal_is_dynamic(meta)) {
		diag_error_where(e->ctx, NULL, "'%s' (convolution): the sparse %s does not fit its sparsity_config",
				 in->name, side);
		return HLOI_EINVAL;
	}
	int64_t dims[HLOI_MAX_RANK], dn;
	memcpy(dims, v->shape.dims, sizeof dims);
	if (checked_mul_i64(v->shape.dims[d] / sd->nnz, sd->block, &dn)) {
		diag_error_where(e->ctx, NULL, "'%s' (convolution): the dense %s is too large", in->name, side);
		return HLOI_EINVAL;
	}
	dims[d] = dn;
	shape ds;
	shape_make_array(&ds, v->shape.type, rank, dims);
	hloi_literal *res;
	hloi_status st = value_new(e, &ds, &res);
	if (st != HLOI_OK)
		return st;
	if (res->data)
		memset(res->data, 0, res->nbytes);
	int64_t count;
	if (shape_element_count(&v->shape, &count) || count == 0) {
		*out = res;
		return HLOI_OK;
	}
	int w = etype_byte_width(v->shape.type);
	int64_t idx[HLOI_MAX_RANK] = { 0 }, to[HLOI_MAX_RANK];
	do {
		int64_t m = mv_read_index(meta->shape.type, literal_element(meta, idx));
		int64_t b = idx[d] / sd->nnz;
		if (m < 0 || m >= sd->block || (sd->nnz > 1 && repeats(meta, idx, d, sd->nnz, m))) {
			char at[HLOI_MAX_RANK * 24 + 2];
			size_t n = 0;
			for (int i = 0; i < rank; i++)
				n += (size_t)snprintf(at + n, sizeof at - n, i ? ",%lld" : "%lld", (long long)idx[i]);
			at[n] = '\0';
			if (m < 0 || m >= sd->block)
				diag_error_where(e->ctx, NULL,
						 "'%s' (convolution): sparsity metadata %lld at [%s] of the %s is outside the block [0, %lld)",
						 in->name, (long long)m, at, side, (long long)sd->block);
			else
				diag_error_where(e->ctx, NULL,
						 "'%s' (convolution): sparsity metadata %lld at [%s] of the %s repeats a position of its block of %lld",
						 in->name, (long long)m, at, side, (long long)sd->block);
			value_drop(e, res);
			return HLOI_EINVAL;
		}
		memcpy(to, idx, sizeof to);
		to[d] = b / sd->stride * sd->stride * sd->block + b % sd->stride + m * sd->stride;
		memcpy(literal_element(res, to), literal_element(v, idx), (size_t)w);
	} while (index_next(rank, v->shape.dims, idx));
	*out = res;
	return HLOI_OK;
}
