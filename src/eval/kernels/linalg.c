/* cholesky and triangular-solve over the two minor dimensions, batched over
 * the others, computed in double-precision complex whatever the element
 * type and rounded once. Both engines use these kernels.
 *
 * cholesky(a), lower=L: a = l l^H with l lower-triangular (or a = u^H u
 * with u upper-triangular), reading only that triangle of a; the other
 * triangle of the result is zero (XLA leaves it implementation-defined). A
 * matrix that is not positive definite gives NaN from the first failing
 * pivot on (the square root of a negative number), as XLA's expander.
 *
 * triangular-solve(a, b): x with op(a) x = b (left_side) or x op(a) = b,
 * op = a, a^T or a^H (transpose_a), reading only the lower or upper
 * triangle of a, its diagonal taken as ones with unit_diagonal; forward or
 * back substitution. A zero pivot divides by zero (inf or NaN). */
#include <math.h>
#include <string.h>

#include "core/index.h"
#include "core/literal.h"
#include "eval/scalar/cplx.h"
#include "eval/kernels/kernel.h"
#include "util/alloc.h"

/* The batch loop: idx over dims[0 .. rank-2) with the two minor ones 0. */
static int next_batch(const shape *s, int64_t *idx)
{
	return s->rank > 2 && index_next(s->rank - 2, s->dims, idx);
}

static cplx at(const hloi_literal *v, int64_t *idx, int64_t i, int64_t j)
{
	int r = v->shape.rank;
	idx[r - 2] = i;
	idx[r - 1] = j;
	return cplx_read(v->shape.type, literal_element(v, idx));
}

static void put(hloi_literal *v, int64_t *idx, int64_t i, int64_t j, cplx z)
{
	int r = v->shape.rank;
	idx[r - 2] = i;
	idx[r - 1] = j;
	cplx_write(v->shape.type, literal_element(v, idx), z);
}

static int64_t square_bytes(int64_t n)
{
	return n > 0 && n <= INT64_MAX / n / (int64_t)sizeof(cplx) / 2 ? 2 * n * n * (int64_t)sizeof(cplx) : -1;
}

hloi_status kernel_cholesky(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	const hloi_literal *a = ops[0];
	const shape *s = &a->shape;
	if (s->rank < 2 || shape_is_tuple(in->result))
		return kernel_none(kc);
	int64_t n = s->dims[s->rank - 1], count;
	int lower = instr_bool(in, ATTR_LOWER, 0);
	int64_t bytes = n ? square_bytes(n) : 0;
	if (bytes < 0)
		return value_oom(e, INT64_MAX);
	hloi_literal *res;
	cplx *l;
	void *buf;
	hloi_status st = eval_scratch_begin(e, in, dest, bytes, &res, &buf);
	if (st != HLOI_OK)
		return st;
	l = buf;
	if (shape_element_count(s, &count) == 0 && count > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			/* work on the lower factor: for upper, a = u^H u with u = l^H */
			for (int64_t i = 0; i < n; i++)
				for (int64_t j = 0; j <= i; j++)
					l[i * n + j] = lower ? at(a, idx, i, j) : conj(at(a, idx, j, i));
			for (int64_t j = 0; j < n; j++) {
				cplx d = l[j * n + j];
				for (int64_t k = 0; k < j; k++)
					d -= l[j * n + k] * conj(l[j * n + k]);
				double piv = sqrt(creal(d));  /* NaN when not positive */
				l[j * n + j] = piv;
				for (int64_t i = j + 1; i < n; i++) {
					cplx v = l[i * n + j];
					for (int64_t k = 0; k < j; k++)
						v -= l[i * n + k] * conj(l[j * n + k]);
					l[i * n + j] = v / piv;
				}
			}
			for (int64_t i = 0; i < n; i++)
				for (int64_t j = 0; j < n; j++) {
					cplx v = j <= i ? l[i * n + j] : 0;
					if (lower)
						put(res, idx, i, j, v);
					else
						put(res, idx, j, i, conj(v));
				}
		} while (next_batch(s, idx));
	}
	return eval_scratch_finish(e, f, in, dest, res, l, bytes);
}

hloi_status kernel_triangular_solve(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	const hloi_literal *a = ops[0], *b = ops[1];
	const shape *as = &a->shape, *bs = &b->shape;
	if (as->rank < 2 || bs->rank != as->rank || shape_is_tuple(in->result))
		return kernel_none(kc);
	int r = as->rank;
	int64_t m = as->dims[r - 1], count;
	int left = instr_bool(in, ATTR_LEFT_SIDE, 0), lower = instr_bool(in, ATTR_LOWER, 0);
	int unit = instr_bool(in, ATTR_UNIT_DIAGONAL, 0);
	const char *tr = instr_text(in, ATTR_TRANSPOSE_A);
	int transpose = tr && strcmp(tr, "NO_TRANSPOSE") != 0, adjoint = tr && strcmp(tr, "ADJOINT") == 0;
	/* the other dimension of b and x */
	int64_t k = bs->dims[left ? r - 1 : r - 2];
	int64_t abytes = m ? square_bytes(m) / 2 : 0;
	int64_t xbytes = m && k ? (k <= INT64_MAX / m / (int64_t)sizeof(cplx) ? m * k * (int64_t)sizeof(cplx) : -1) : 0;
	if (abytes < 0 || xbytes < 0 || abytes > INT64_MAX - xbytes)
		return value_oom(e, INT64_MAX);
	int64_t bytes = abytes + xbytes;
	hloi_literal *res;
	cplx *t;
	void *buf;
	hloi_status st = eval_scratch_begin(e, in, dest, bytes, &res, &buf);
	if (st != HLOI_OK)
		return st;
	t = buf;
	cplx *x = t + m * m;
	if (shape_element_count(bs, &count) == 0 && count > 0 && m > 0) {
		int64_t ia[HLOI_MAX_RANK] = { 0 }, ib[HLOI_MAX_RANK] = { 0 };
		do {
			/* t = op(a) from the triangle read: t lower iff lower != transposed */
			for (int64_t i = 0; i < m; i++)
				for (int64_t j = 0; j < m; j++) {
					int in_tri = lower ? j <= i : j >= i;
					cplx v = i == j && unit ? 1 : in_tri ? at(a, ia, i, j) : 0;
					if (transpose)
						t[j * m + i] = adjoint ? conj(v) : v;
					else
						t[i * m + j] = v;
				}
			int tlow = lower != transpose;
			memcpy(ib, ia, sizeof ib);
			/* x as m columns of k: left x[i][c] = b[i][c]; right x[i][c] = b[c][i] */
			for (int64_t i = 0; i < m; i++)
				for (int64_t c = 0; c < k; c++)
					x[i * k + c] = left ? at(b, ib, i, c) : at(b, ib, c, i);
			for (int64_t c = 0; c < k; c++) {
				if (left) {
					/* t x = b: down a lower t, up an upper one */
					for (int64_t s = 0; s < m; s++) {
						int64_t i = tlow ? s : m - 1 - s;
						cplx v = x[i * k + c];
						for (int64_t q = 0; q < m; q++)
							if (tlow ? q < i : q > i)
								v -= t[i * m + q] * x[q * k + c];
						x[i * k + c] = v / t[i * m + i];
					}
				} else {
					/* x t = b: x_j = (b_j - sum_q x_q t[q][j]) / t[j][j], up a
					 * lower t, down an upper one */
					for (int64_t s = 0; s < m; s++) {
						int64_t j = tlow ? m - 1 - s : s;
						cplx v = x[j * k + c];
						for (int64_t q = 0; q < m; q++)
							if (tlow ? q > j : q < j)
								v -= x[q * k + c] * t[q * m + j];
						x[j * k + c] = v / t[j * m + j];
					}
				}
			}
			memcpy(ib, ia, sizeof ib);
			for (int64_t i = 0; i < m; i++)
				for (int64_t c = 0; c < k; c++) {
					if (left)
						put(res, ib, i, c, x[i * k + c]);
					else
						put(res, ib, c, i, x[i * k + c]);
				}
		} while (next_batch(as, ia));
	}
	return eval_scratch_finish(e, f, in, dest, res, t, bytes);
}
