/* jaxlib's LAPACK custom-call targets (the FFI forms of jax-ml/jax
 * jaxlib/cpu/lapack_kernels.cc, which jax.lax.linalg lowers to on CPU),
 * computed by the LAPACK that OpenBLAS ships, in the target's own type:
 *
 *   lapack_?getrf_ffi(a [..., m, n]) -> (lu, s32 ipiv [..., min(m, n)],
 *       s32 info [...]): a = p l u with partial pivoting, l unit lower and u
 *       upper triangular packed into lu; ipiv LAPACK's row interchanges,
 *       counted from 1; info > 0 names the first zero pivot u(i, i) (from 1).
 *   lapack_?potrf_ffi(a [..., n, n]), backend_config={uplo = 76 : ui8}
 *       (L; 85 for U) -> (l or u, s32 info [...]): a = l l^H reading and
 *       writing the lower triangle (a = u^H u, the upper), the other
 *       triangle the operand's; info > 0: the leading minor of that order is
 *       not positive definite, and the factor is left unfinished (JAX puts
 *       NaN in its place).
 *
 * The leading dimensions are a batch, each matrix factored on its own. A
 * matrix is copied in column-major order into a scratch, factored in place
 * and copied into the result, so any layout works. Both engines run these
 * kernels. */
#include <limits.h>
#include <openblas_config.h>
#include <string.h>

#include "core/index.h"
#include "core/literal.h"
#include "eval/custom_call.h"
#include "util/checked.h"

/* LAPACK's Fortran entry points, exported by OpenBLAS (Debian's
 * libopenblas-dev has no C header for them). A character argument is
 * followed by its hidden length, as gfortran passes it. */
void sgetrf_(const blasint *m, const blasint *n, void *a, const blasint *lda, blasint *ipiv, blasint *info);
void dgetrf_(const blasint *m, const blasint *n, void *a, const blasint *lda, blasint *ipiv, blasint *info);
void cgetrf_(const blasint *m, const blasint *n, void *a, const blasint *lda, blasint *ipiv, blasint *info);
void zgetrf_(const blasint *m, const blasint *n, void *a, const blasint *lda, blasint *ipiv, blasint *info);
void spotrf_(const char *uplo, const blasint *n, void *a, const blasint *lda, blasint *info, size_t uplo_len);
void dpotrf_(const char *uplo, const blasint *n, void *a, const blasint *lda, blasint *info, size_t uplo_len);
void cpotrf_(const char *uplo, const blasint *n, void *a, const blasint *lda, blasint *info, size_t uplo_len);
void zpotrf_(const char *uplo, const blasint *n, void *a, const blasint *lda, blasint *info, size_t uplo_len);

/* Matrix `b` of v (b: the batch index, its last two entries ignored) in
 * column-major order to or from buf, `w` bytes an element. */
static void gather(const hloi_literal *v, const int64_t *b, int64_t m, int64_t n, unsigned char *buf, int w)
{
	int r = v->shape.rank;
	int64_t idx[HLOI_MAX_RANK];
	memcpy(idx, b, sizeof(int64_t) * (size_t)r);
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < m; i++) {
			idx[r - 2] = i;
			idx[r - 1] = j;
			memcpy(buf + (j * m + i) * w, literal_element(v, idx), (size_t)w);
		}
}

static void scatter(hloi_literal *v, const int64_t *b, int64_t m, int64_t n, const unsigned char *buf, int w)
{
	int r = v->shape.rank;
	int64_t idx[HLOI_MAX_RANK];
	memcpy(idx, b, sizeof(int64_t) * (size_t)r);
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < m; i++) {
			idx[r - 2] = i;
			idx[r - 1] = j;
			memcpy(literal_element(v, idx), buf + (j * m + i) * w, (size_t)w);
		}
}

/* Element b (a batch index of nb entries), or b followed by i, of an s32
 * result. */
static void put_s32(hloi_literal *v, const int64_t *b, int nb, int64_t i, blasint x)
{
	int64_t idx[HLOI_MAX_RANK];
	memcpy(idx, b, sizeof(int64_t) * (size_t)nb);
	if (i >= 0)
		idx[nb] = i;
	int32_t y = (int32_t)x;
	memcpy(literal_element(v, idx), &y, sizeof y);
}

/* The scratch of an m x n matrix of `w`-byte elements and `extra` bytes
 * more; -1 when LAPACK's 32-bit integers cannot count it (reported). */
static int64_t scratch_bytes(engine *e, const instr *in, int64_t m, int64_t n, int w, int64_t extra)
{
	int64_t mn, bytes;
	if (m > INT_MAX || n > INT_MAX || ck_mul_i64(m, n, &mn) || mn > INT_MAX || ck_mul_i64(mn, w, &bytes) ||
	    ck_add_i64(bytes, extra, &bytes)) {
		diag_error_where(e->ctx, NULL, "custom-call '%s': a %lld x %lld matrix is too large for LAPACK's 32-bit sizes",
				 in->name, (long long)m, (long long)n);
		return -1;
	}
	return bytes;
}

/* The number of matrices: the product of the batch dimensions. */
static int64_t batch_count(const shape *s)
{
	int64_t c = 1;
	for (int d = 0; d < s->rank - 2; d++)
		c *= s->dims[d];
	return c;
}

hloi_status cc_kernel_getrf(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t);
	int64_t m = x->shape.dims[r - 2], n = x->shape.dims[r - 1], k = m < n ? m : n;
	int64_t bytes = scratch_bytes(e, in, m, n, w, k * (int64_t)sizeof(blasint));
	if (bytes < 0)
		return HLOI_EUNSUPPORTED;
	hloi_literal *res;
	void *buf;
	hloi_status st = eval_scratch_begin(e, in, NULL, bytes, &res, &buf);
	if (st != HLOI_OK)
		return st;
	unsigned char *a = buf;
	blasint *ipiv = (blasint *)(void *)(a + m * n * w);
	if (batch_count(&x->shape) > 0 && k > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			gather(x, idx, m, n, a, w);
			blasint bm = (blasint)m, bn = (blasint)n, lda = (blasint)m, info = 0;
			switch (t) {
			case ET_F32: sgetrf_(&bm, &bn, a, &lda, ipiv, &info); break;
			case ET_F64: dgetrf_(&bm, &bn, a, &lda, ipiv, &info); break;
			case ET_C64: cgetrf_(&bm, &bn, a, &lda, ipiv, &info); break;
			default: zgetrf_(&bm, &bn, a, &lda, ipiv, &info); break;
			}
			scatter(res->elems[0], idx, m, n, a, w);
			for (int64_t i = 0; i < k; i++)
				put_s32(res->elems[1], idx, nb, i, ipiv[i]);
			put_s32(res->elems[2], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	} else if (batch_count(&x->shape) > 0) {
		/* an empty matrix: nothing to factor, info 0 */
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do
			put_s32(res->elems[2], idx, nb, -1, 0);
		while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, buf, bytes);
}

hloi_status cc_kernel_potrf(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t);
	int64_t n = x->shape.dims[r - 1], uplo = 'L';
	custom_call_config_int(instr_text(in, ATTR_BACKEND_CONFIG), "uplo", &uplo);
	char u = uplo == 'U' ? 'U' : 'L';
	int64_t bytes = scratch_bytes(e, in, n, n, w, 0);
	if (bytes < 0)
		return HLOI_EUNSUPPORTED;
	hloi_literal *res;
	void *buf;
	hloi_status st = eval_scratch_begin(e, in, NULL, bytes, &res, &buf);
	if (st != HLOI_OK)
		return st;
	unsigned char *a = buf;
	if (batch_count(&x->shape) > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			blasint bn = (blasint)n, lda = (blasint)(n > 1 ? n : 1), info = 0;
			gather(x, idx, n, n, a, w);
			if (n > 0) {
				switch (t) {
				case ET_F32: spotrf_(&u, &bn, a, &lda, &info, 1); break;
				case ET_F64: dpotrf_(&u, &bn, a, &lda, &info, 1); break;
				case ET_C64: cpotrf_(&u, &bn, a, &lda, &info, 1); break;
				default: zpotrf_(&u, &bn, a, &lda, &info, 1); break;
				}
			}
			scatter(res->elems[0], idx, n, n, a, w);
			put_s32(res->elems[1], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, buf, bytes);
}
