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
 *   lapack_?geqrf_ffi(a [..., m, n]) -> (qr, tau [..., min(m, n)]): a = q r,
 *       r on and above the diagonal of qr, q as householder vectors below
 *       it and their factors tau.
 *   lapack_?orgqr_ffi / lapack_?ungqr_ffi(qr [..., m, n], tau [..., k]) -> q
 *       [..., m, n]: the first n columns of q from geqrf's k reflectors.
 *   lapack_?gesdd_ffi(a [..., m, n]), backend_config={mode = 65 : ui8} ->
 *       (a's scratch, s [..., k] of the real type, u, vt, s32 info), k =
 *       min(m, n): a = u diag(s) vt, s descending; mode 65 (A) gives u
 *       [..., m, m] and vt [..., n, n], 83 (S) u [..., m, k] and vt
 *       [..., k, n], 78 (N) the values only (u and vt zero). The first
 *       result is what LAPACK leaves of a (JAX does not read it).
 *   lapack_?trsm_ffi(a [..., k, k], b [..., m, n][, alpha]) with
 *       backend_config={diag, side, trans_x, uplo} -> x [..., m, n]: op(a) x =
 *       alpha b (side 76 L, k = m) or x op(a) = alpha b (side 82 R, k = n);
 *       op(a) = a, a^T or a^H (trans_x 78 N, 84 T, 67 C), reading the uplo
 *       triangle, its diagonal taken as ones with diag 85 (U). alpha is 1
 *       when there is no third operand (JAX's newer form).
 *   lapack_?syevd_ffi / lapack_?heevd_ffi(a [..., n, n]),
 *       backend_config={mode = 86 : ui8, uplo = 76 : ui8} -> (vectors,
 *       eigenvalues [..., n] ascending, of the real type, s32 info): a =
 *       v diag(w) v^H reading the uplo triangle; mode 86 (V) computes the
 *       eigenvectors into the first result, 78 (N) leaves it as LAPACK's
 *       scratch. info > 0: the algorithm did not converge.
 *
 * The leading dimensions are a batch, each matrix factored on its own. A
 * matrix is copied in column-major order into a scratch, factored in place
 * and copied into the result, so any layout works. Both engines run these
 * kernels. */
#include <limits.h>
#include <string.h>

#include "core/index.h"
#include "core/literal.h"
#include "eval/blas.h"
#include "eval/custom_call.h"
#include "util/checked.h"

/* OpenBLAS's LAPACK, opened by the first target that calls it (eval/blas.h);
 * NULL, reported, when it cannot be. */
static const blas_fns *lapack_open(engine *e, const instr *in)
{
	const blas_fns *L = blas_open();
	if (!L)
		diag_error_where(e->ctx, NULL, "custom-call '%s': LAPACK is not available: %s", in->name, blas_error());
	return L;
}

/* Matrix `b` of v (b: the batch index, its last two entries ignored) in
 * column-major order into buf (out = 0) or from it (out = 1), `w` bytes an
 * element. */
static void matrix_io(const hloi_literal *v, const int64_t *b, int64_t m, int64_t n, unsigned char *buf, int w,
		      int out)
{
	int r = v->shape.rank;
	int64_t idx[HLOI_MAX_RANK];
	memcpy(idx, b, sizeof(int64_t) * (size_t)r);
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < m; i++) {
			idx[r - 2] = i;
			idx[r - 1] = j;
			if (out)
				memcpy(literal_element(v, idx), buf + (j * m + i) * w, (size_t)w);
			else
				memcpy(buf + (j * m + i) * w, literal_element(v, idx), (size_t)w);
		}
}

static void gather(const hloi_literal *v, const int64_t *b, int64_t m, int64_t n, unsigned char *buf, int w)
{
	matrix_io(v, b, m, n, buf, w, 0);
}

static void scatter(hloi_literal *v, const int64_t *b, int64_t m, int64_t n, unsigned char *buf, int w)
{
	matrix_io(v, b, m, n, buf, w, 1);
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

static int64_t too_large(engine *e, const instr *in, int64_t m, int64_t n)
{
	diag_error_where(e->ctx, NULL, "custom-call '%s': a %lld x %lld matrix is too large for LAPACK's 32-bit sizes",
			 in->name, (long long)m, (long long)n);
	return -1;
}

/* The scratch of an m x n matrix of `w`-byte elements and `extra` bytes
 * more; -1 when LAPACK's 32-bit integers cannot count it (reported). */
static int64_t scratch_bytes(engine *e, const instr *in, int64_t m, int64_t n, int w, int64_t extra)
{
	int64_t mn, bytes;
	if (m > INT_MAX || n > INT_MAX || ck_mul_i64(m, n, &mn) || mn > INT_MAX || ck_mul_i64(mn, w, &bytes) ||
	    ck_add_i64(bytes, extra, &bytes))
		return too_large(e, in, m, n);
	return bytes;
}

/* The result value and a scratch of an m x n matrix and `extra` bytes
 * (*bytes of them), within the budget. */
static hloi_status begin(engine *e, const instr *in, int64_t m, int64_t n, int w, int64_t extra, hloi_literal **res,
			 unsigned char **scratch, int64_t *bytes)
{
	*bytes = scratch_bytes(e, in, m, n, w, extra);
	if (*bytes < 0)
		return HLOI_EUNSUPPORTED;
	void *buf;
	hloi_status st = eval_scratch_begin(e, in, NULL, *bytes, res, &buf);
	*scratch = buf;
	return st;
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
	const blas_fns *L = lapack_open(e, in);
	if (!L)
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t);
	int64_t m = x->shape.dims[r - 2], n = x->shape.dims[r - 1], k = m < n ? m : n;
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, m, n, w, k * (int64_t)sizeof(blasint), &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	blasint *ipiv = (blasint *)(void *)(a + m * n * w);
	if (batch_count(&x->shape) > 0 && k > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			gather(x, idx, m, n, a, w);
			blasint bm = (blasint)m, bn = (blasint)n, lda = (blasint)m, info = 0;
			switch (t) {
			case ET_F32: L->sgetrf_(&bm, &bn, a, &lda, ipiv, &info); break;
			case ET_F64: L->dgetrf_(&bm, &bn, a, &lda, ipiv, &info); break;
			case ET_C64: L->cgetrf_(&bm, &bn, a, &lda, ipiv, &info); break;
			default: L->zgetrf_(&bm, &bn, a, &lda, ipiv, &info); break;
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
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

hloi_status cc_kernel_potrf(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	const blas_fns *L = lapack_open(e, in);
	if (!L)
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t);
	int64_t n = x->shape.dims[r - 1], uplo = 'L';
	custom_call_config_int(instr_text(in, ATTR_BACKEND_CONFIG), "uplo", &uplo);
	char u = uplo == 'U' ? 'U' : 'L';
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, n, n, w, 0, &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	if (batch_count(&x->shape) > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			blasint bn = (blasint)n, lda = (blasint)(n > 1 ? n : 1), info = 0;
			gather(x, idx, n, n, a, w);
			if (n > 0) {
				switch (t) {
				case ET_F32: L->spotrf_(&u, &bn, a, &lda, &info, 1); break;
				case ET_F64: L->dpotrf_(&u, &bn, a, &lda, &info, 1); break;
				case ET_C64: L->cpotrf_(&u, &bn, a, &lda, &info, 1); break;
				default: L->zpotrf_(&u, &bn, a, &lda, &info, 1); break;
				}
			}
			scatter(res->elems[0], idx, n, n, a, w);
			put_s32(res->elems[1], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

/* One of a LAPACK type at p (a complex one's imaginary part untouched). */
static void put_one(unsigned char *p, etype t)
{
	if (t == ET_F32 || t == ET_C64) {
		float one = 1;
		memcpy(p, &one, sizeof one);
	} else {
		double one = 1;
		memcpy(p, &one, sizeof one);
	}
}

/* The size a workspace query (lwork = -1) returned in its first element. */
static blasint queried(etype t, const void *w)
{
	double v;
	if (t == ET_F32 || t == ET_C64) {
		float f;
		memcpy(&f, w, sizeof f);
		v = f;
	} else {
		memcpy(&v, w, sizeof v);
	}
	return v >= 1 && v < INT_MAX ? (blasint)v : 1;
}

static void geqrf(const blas_fns *L, etype t, const blasint *m, const blasint *n, void *a, void *tau, void *work,
		  const blasint *lwork, blasint *info)
{
	switch (t) {
	case ET_F32: L->sgeqrf_(m, n, a, m, tau, work, lwork, info); break;
	case ET_F64: L->dgeqrf_(m, n, a, m, tau, work, lwork, info); break;
	case ET_C64: L->cgeqrf_(m, n, a, m, tau, work, lwork, info); break;
	default: L->zgeqrf_(m, n, a, m, tau, work, lwork, info); break;
	}
}

static void orgqr(const blas_fns *L, etype t, const blasint *m, const blasint *n, const blasint *k, void *a,
		  const void *tau, void *work, const blasint *lwork, blasint *info)
{
	switch (t) {
	case ET_F32: L->sorgqr_(m, n, k, a, m, tau, work, lwork, info); break;
	case ET_F64: L->dorgqr_(m, n, k, a, m, tau, work, lwork, info); break;
	case ET_C64: L->cungqr_(m, n, k, a, m, tau, work, lwork, info); break;
	default: L->zungqr_(m, n, k, a, m, tau, work, lwork, info); break;
	}
}

/* Row b of a [..., len] array to or from buf (b: the batch index). */
static void row_io(hloi_literal *v, const int64_t *b, int nb, int64_t len, unsigned char *buf, int w, int out)
{
	int64_t idx[HLOI_MAX_RANK];
	memcpy(idx, b, sizeof(int64_t) * (size_t)nb);
	for (int64_t i = 0; i < len; i++) {
		idx[nb] = i;
		if (out)
			memcpy(literal_element(v, idx), buf + i * w, (size_t)w);
		else
			memcpy(buf + i * w, literal_element(v, idx), (size_t)w);
	}
}

#define ALIGN16(x) (((x) + 15) & ~(int64_t)15)

/* geqrf (q = 0: a -> (qr, tau)) and orgqr (q = 1: (qr, tau) -> q), which
 * share their scratch: the matrix, tau and the workspace LAPACK asks for. */
static hloi_status qr_kernel(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t, int q)
{
	const blas_fns *L = lapack_open(e, in);
	if (!L)
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t);
	int64_t m = x->shape.dims[r - 2], n = x->shape.dims[r - 1], k = m < n ? m : n;
	if (q)
		k = ops[1]->shape.dims[ops[1]->shape.rank - 1];
	blasint bm = (blasint)m, bn = (blasint)n, bk = (blasint)k, lwork = -1, info = 0;
	unsigned char query[16] = { 0 };
	if (m > 0 && n > 0 && m <= INT_MAX && n <= INT_MAX) {
		if (q)
			orgqr(L, t, &bm, &bn, &bk, NULL, NULL, query, &lwork, &info);
		else
			geqrf(L, t, &bm, &bn, NULL, NULL, query, &lwork, &info);
		lwork = queried(t, query);
	} else {
		lwork = 1;
	}
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, m, n, w, ALIGN16(k * w) + 16 + (int64_t)lwork * w, &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *tau = a + ALIGN16(m * n * w), *work = tau + ALIGN16(k * w);
	if (batch_count(&x->shape) > 0 && m > 0 && n > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			gather(x, idx, m, n, a, w);
			if (q) {
				row_io(ops[1], idx, nb, k, tau, w, 0);
				orgqr(L, t, &bm, &bn, &bk, a, tau, work, &lwork, &info);
				scatter(res, idx, m, n, a, w);
			} else {
				geqrf(L, t, &bm, &bn, a, tau, work, &lwork, &info);
				scatter(res->elems[0], idx, m, n, a, w);
				row_io(res->elems[1], idx, nb, k, tau, w, 1);
			}
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

hloi_status cc_kernel_geqrf(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	return qr_kernel(e, f, in, ops, t, 0);
}

hloi_status cc_kernel_orgqr(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	return qr_kernel(e, f, in, ops, t, 1);
}

hloi_status cc_kernel_syevd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	const blas_fns *L = lapack_open(e, in);
	if (!L)
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t), cplx = t == ET_C64 || t == ET_C128;
	int rw = cplx ? w / 2 : w;
	int64_t n = x->shape.dims[r - 1], uplo = 'L', mode = 'V';
	const char *config = instr_text(in, ATTR_BACKEND_CONFIG);
	custom_call_config_int(config, "uplo", &uplo);
	custom_call_config_int(config, "mode", &mode);
	char u = uplo == 'U' ? 'U' : 'L', jobz = mode == 'N' ? 'N' : 'V';
	/* LAPACK's documented minimum workspaces */
	int64_t lwork, lrwork = 0, liwork = jobz == 'V' ? 3 + 5 * n : 1;
	if (cplx) {
		lwork = jobz == 'V' ? 2 * n + n * n : n + 1;
		lrwork = jobz == 'V' ? 1 + 5 * n + 2 * n * n : (n > 1 ? n : 1);
	} else {
		lwork = jobz == 'V' ? 1 + 6 * n + 2 * n * n : 2 * n + 1;
	}
	int64_t extra = 16 + ALIGN16(n * rw) + ALIGN16(lwork * w) + ALIGN16(lrwork * rw) + liwork * (int64_t)sizeof(blasint);
	/* the eigenvector workspace, 2 n^2, is counted in LAPACK's integers */
	if (n >= 32768) {
		too_large(e, in, n, n);
		return HLOI_EUNSUPPORTED;
	}
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, n, n, w, extra, &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *ev = a + ALIGN16(n * n * w), *work = ev + ALIGN16(n * rw);
	unsigned char *rwork = work + ALIGN16(lwork * w);
	blasint *iwork = (blasint *)(void *)(rwork + ALIGN16(lrwork * rw));
	blasint bn = (blasint)n, lda = (blasint)(n > 1 ? n : 1), bl = (blasint)lwork, brl = (blasint)lrwork;
	blasint bli = (blasint)liwork;
	if (batch_count(&x->shape) > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			blasint info = 0;
			gather(x, idx, n, n, a, w);
			if (n > 0) {
				switch (t) {
				case ET_F32: L->ssyevd_(&jobz, &u, &bn, a, &lda, ev, work, &bl, iwork, &bli, &info, 1, 1); break;
				case ET_F64: L->dsyevd_(&jobz, &u, &bn, a, &lda, ev, work, &bl, iwork, &bli, &info, 1, 1); break;
				case ET_C64:
					L->cheevd_(&jobz, &u, &bn, a, &lda, ev, work, &bl, rwork, &brl, iwork, &bli, &info, 1, 1);
					break;
				default:
					L->zheevd_(&jobz, &u, &bn, a, &lda, ev, work, &bl, rwork, &brl, iwork, &bli, &info, 1, 1);
					break;
				}
			}
			scatter(res->elems[0], idx, n, n, a, w);
			row_io(res->elems[1], idx, nb, n, ev, rw, 1);
			put_s32(res->elems[2], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

hloi_status cc_kernel_trsm(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	const blas_fns *L = lapack_open(e, in);
	if (!L)
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0], *y = ops[1];
	int r = y->shape.rank, nb = r - 2, w = etype_byte_width(t);
	int64_t m = y->shape.dims[r - 2], n = y->shape.dims[r - 1], k = x->shape.dims[r - 1];
	int64_t side = 'L', uplo = 'L', trans = 'N', unit = 'N';
	const char *config = instr_text(in, ATTR_BACKEND_CONFIG);
	custom_call_config_int(config, "side", &side);
	custom_call_config_int(config, "uplo", &uplo);
	custom_call_config_int(config, "trans_x", &trans);
	custom_call_config_int(config, "diag", &unit);
	char cs = (char)side, cu = (char)uplo, ct = (char)trans, cd = (char)unit;
	/* alpha: the third operand, else one */
	unsigned char alpha[16] = { 0 };
	if (in->nops == 3)
		memcpy(alpha, ops[2]->data, (size_t)w);
	else
		put_one(alpha, t);
	int64_t ak = scratch_bytes(e, in, k, k, w, 16), bytes;
	if (ak < 0)
		return HLOI_EUNSUPPORTED;
	hloi_literal *res;
	unsigned char *b;
	hloi_status st = begin(e, in, m, n, w, ak, &res, &b, &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *a = b + ALIGN16(m * n * w);
	blasint bm = (blasint)m, bn = (blasint)n, lda = (blasint)(k > 1 ? k : 1), ldb = (blasint)(m > 1 ? m : 1);
	if (batch_count(&y->shape) > 0 && m > 0 && n > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			gather(x, idx, k, k, a, w);
			gather(y, idx, m, n, b, w);
			switch (t) {
			case ET_F32: L->strsm_(&cs, &cu, &ct, &cd, &bm, &bn, alpha, a, &lda, b, &ldb, 1, 1, 1, 1); break;
			case ET_F64: L->dtrsm_(&cs, &cu, &ct, &cd, &bm, &bn, alpha, a, &lda, b, &ldb, 1, 1, 1, 1); break;
			case ET_C64: L->ctrsm_(&cs, &cu, &ct, &cd, &bm, &bn, alpha, a, &lda, b, &ldb, 1, 1, 1, 1); break;
			default: L->ztrsm_(&cs, &cu, &ct, &cd, &bm, &bn, alpha, a, &lda, b, &ldb, 1, 1, 1, 1); break;
			}
			scatter(res, idx, m, n, b, w);
		} while (index_next(nb, y->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, b, bytes);
}

/* A column-major identity of `t` in buf. */
static void identity(unsigned char *buf, int64_t rows, int64_t cols, etype t)
{
	int w = etype_byte_width(t);
	memset(buf, 0, (size_t)(rows * cols * w));
	for (int64_t i = 0; i < rows && i < cols; i++)
		put_one(buf + (i * rows + i) * w, t);
}

static void gesdd(const blas_fns *L, etype t, const char *jobz, const blasint *m, const blasint *n, void *a, void *s,
		  void *u, const blasint *ldu, void *vt, const blasint *ldvt, void *work, const blasint *lwork,
		  void *rwork, blasint *iwork, blasint *info)
{
	const blasint *lda = m;
	switch (t) {
	case ET_F32: L->sgesdd_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, 1); break;
	case ET_F64: L->dgesdd_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, 1); break;
	case ET_C64: L->cgesdd_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, info, 1); break;
	default: L->zgesdd_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, info, 1); break;
	}
}

hloi_status cc_kernel_gesdd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	const blas_fns *L = lapack_open(e, in);
	if (!L)
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t), cplx = t == ET_C64 || t == ET_C128;
	int rw = cplx ? w / 2 : w;
	int64_t m = x->shape.dims[r - 2], n = x->shape.dims[r - 1], k = m < n ? m : n, mx = m < n ? n : m, mode = 'A';
	custom_call_config_int(instr_text(in, ATTR_BACKEND_CONFIG), "mode", &mode);
	char jobz = (char)mode;
	const shape *us = &in->result->tuple[2], *vs = &in->result->tuple[3];
	int64_t ucols = us->dims[us->rank - 1], vrows = vs->dims[vs->rank - 2];
	/* the workspaces, about 4 min(m, n)^2, are counted in LAPACK's integers */
	if (m > 32767 || n > 32767) {
		too_large(e, in, m, n);
		return HLOI_EUNSUPPORTED;
	}
	blasint bm = (blasint)m, bn = (blasint)n, ldu = (blasint)(m > 1 ? m : 1);
	blasint ldvt = (blasint)(jobz == 'N' ? 1 : vrows > 1 ? vrows : 1), lwork = -1, info = 0;
	/* the complex routines' real workspace, as LAPACK documents it */
	int64_t lr1 = 5 * k * k + 5 * k, lr2 = 2 * mx * k + 2 * k * k + k;
	int64_t lrwork = !cplx ? 0 : jobz == 'N' ? 7 * k : lr1 > lr2 ? lr1 : lr2;
	unsigned char query[16] = { 0 };
	blasint iquery[1] = { 0 };
	double rquery[1] = { 0 };
	if (k > 0) {
		gesdd(L, t, &jobz, &bm, &bn, NULL, NULL, NULL, &ldu, NULL, &ldvt, query, &lwork, rquery, iquery, &info);
		lwork = queried(t, query);
	} else {
		lwork = 1;
	}
	int64_t ubytes = jobz == 'N' ? 0 : m * ucols * w, vbytes = jobz == 'N' ? 0 : vrows * n * w;
	int64_t extra = ALIGN16(k * rw) + ALIGN16(ubytes) + ALIGN16(vbytes) + ALIGN16((int64_t)lwork * w) +
			ALIGN16((lrwork > 0 ? lrwork : 1) * rw) + 8 * k * (int64_t)sizeof(blasint) + 16;
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, m, n, w, extra, &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *sv = a + ALIGN16(m * n * w), *u = sv + ALIGN16(k * rw), *vt = u + ALIGN16(ubytes);
	unsigned char *work = vt + ALIGN16(vbytes), *rwork = work + ALIGN16((int64_t)lwork * w);
	blasint *iwork = (blasint *)(void *)(rwork + ALIGN16((lrwork > 0 ? lrwork : 1) * rw));
	if (jobz == 'N') {
		/* u and vt are not computed: zeros */
		for (int i = 2; i < 4; i++)
			if (res->elems[i]->data)
				memset(res->elems[i]->data, 0, res->elems[i]->nbytes);
	}
	if (batch_count(&x->shape) > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			info = 0;
			gather(x, idx, m, n, a, w);
			if (k > 0)
				gesdd(L, t, &jobz, &bm, &bn, a, sv, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, &info);
			scatter(res->elems[0], idx, m, n, a, w);
			row_io(res->elems[1], idx, nb, k, sv, rw, 1);
			if (jobz != 'N' && k > 0) {
				scatter(res->elems[2], idx, m, ucols, u, w);
				scatter(res->elems[3], idx, vrows, n, vt, w);
			} else if (jobz != 'N') {
				/* an empty matrix: u and vt are identities (one of them empty) */
				identity(u, m, ucols, t);
				identity(vt, vrows, n, t);
				scatter(res->elems[2], idx, m, ucols, u, w);
				scatter(res->elems[3], idx, vrows, n, vt, w);
			}
			put_s32(res->elems[4], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}
