/* OpenBLAS, opened when a dot, convolution or LAPACK target first needs it
 * (eval/lib/blas.c). Linked at build time, OpenBLAS starts its thread pool as
 * the program loads, so every command paid for threads that only a few
 * evaluations use; opened on demand, `hloi check`, `fmt`, `convert` and a
 * run without a matrix product never load it. */
#ifndef HLOI_EVAL_BLAS_H
#define HLOI_EVAL_BLAS_H

#include <stddef.h>

#include <cblas.h>

/* The entry points hloi calls: CBLAS's products, OpenBLAS's thread count,
 * and LAPACK's Fortran routines (OpenBLAS exports them; Debian's
 * libopenblas-dev has no C header for them: a character argument is
 * followed by its hidden length, as gfortran passes it). */
#define BLAS_GEMM_ARGS(T) \
	enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint, T, const void *, \
		blasint, const void *, blasint, T, void *, blasint
#define BLAS_GETRF_ARGS const blasint *, const blasint *, void *, const blasint *, blasint *, blasint *
#define BLAS_POTRF_ARGS const char *, const blasint *, void *, const blasint *, blasint *, size_t
#define BLAS_GEQRF_ARGS \
	const blasint *, const blasint *, void *, const blasint *, void *, void *, const blasint *, blasint *
#define BLAS_GEQP3_ARGS \
	const blasint *, const blasint *, void *, const blasint *, blasint *, void *, void *, const blasint *
#define BLAS_ORGQR_ARGS                                                                                      \
	const blasint *, const blasint *, const blasint *, void *, const blasint *, const void *, void *, \
		const blasint *, blasint *
#define BLAS_ORMQR_ARGS                                                                                       \
	const char *, const char *, const blasint *, const blasint *, const blasint *, const void *, const blasint *, \
		const void *, void *, const blasint *, void *, const blasint *, blasint *, size_t, size_t
#define BLAS_TRSM_ARGS                                                                                          \
	const char *, const char *, const char *, const char *, const blasint *, const blasint *, const void *, \
		const void *, const blasint *, void *, const blasint *, size_t, size_t, size_t, size_t
#define BLAS_GESDD_ARGS                                                                                     \
	const char *, const blasint *, const blasint *, void *, const blasint *, void *, void *, const blasint *, \
		void *, const blasint *, void *, const blasint *
#define BLAS_SYEVD_ARGS                                                                                     \
	const char *, const char *, const blasint *, void *, const blasint *, void *, void *, const blasint *, \
		blasint *, const blasint *, blasint *, size_t, size_t
#define BLAS_HEEVD_ARGS                                                                                     \
	const char *, const char *, const blasint *, void *, const blasint *, void *, void *, const blasint *, \
		void *, const blasint *, blasint *, const blasint *, blasint *, size_t, size_t

#define BLAS_GESVD_ARGS                                                                                     \
	const char *, const char *, const blasint *, const blasint *, void *, const blasint *, void *, void *, \
		const blasint *, void *, const blasint *, void *, const blasint *
#define BLAS_GEEV_HEAD const char *, const char *, const blasint *, void *, const blasint *
#define BLAS_GEEV_VECS void *, const blasint *, void *, const blasint *, void *, const blasint *
#define BLAS_GEES_HEAD const char *, const char *, void *, const blasint *, void *, const blasint *, blasint *
#define BLAS_GEHRD_ARGS                                                                                    \
	const blasint *, const blasint *, const blasint *, void *, const blasint *, void *, void *, \
		const blasint *, blasint *
#define BLAS_SYTRD_ARGS                                                                                 \
	const char *, const blasint *, void *, const blasint *, void *, void *, void *, void *, \
		const blasint *, blasint *, size_t
#define BLAS_GTSV_ARGS \
	const blasint *, const blasint *, void *, void *, void *, void *, const blasint *, blasint *

/* X(name, return type, parameter list): every symbol looked up. */
#define BLAS_FUNCTIONS(X)                                                                  \
	X(cblas_sgemm, void, (BLAS_GEMM_ARGS(float)))                                      \
	X(cblas_dgemm, void, (BLAS_GEMM_ARGS(double)))                                     \
	X(cblas_cgemm, void, (BLAS_GEMM_ARGS(const void *)))                               \
	X(cblas_zgemm, void, (BLAS_GEMM_ARGS(const void *)))                               \
	X(openblas_get_num_threads, int, (void))                                           \
	X(openblas_set_num_threads, void, (int))                                           \
	X(sgetrf_, void, (BLAS_GETRF_ARGS))                                                \
	X(dgetrf_, void, (BLAS_GETRF_ARGS))                                                \
	X(cgetrf_, void, (BLAS_GETRF_ARGS))                                                \
	X(zgetrf_, void, (BLAS_GETRF_ARGS))                                                \
	X(spotrf_, void, (BLAS_POTRF_ARGS))                                                \
	X(dpotrf_, void, (BLAS_POTRF_ARGS))                                                \
	X(cpotrf_, void, (BLAS_POTRF_ARGS))                                                \
	X(zpotrf_, void, (BLAS_POTRF_ARGS))                                                \
	X(sgeqrf_, void, (BLAS_GEQRF_ARGS))                                                \
	X(dgeqrf_, void, (BLAS_GEQRF_ARGS))                                                \
	X(cgeqrf_, void, (BLAS_GEQRF_ARGS))                                                \
	X(zgeqrf_, void, (BLAS_GEQRF_ARGS))                                                \
	X(sgeqp3_, void, (BLAS_GEQP3_ARGS, blasint *))                                     \
	X(dgeqp3_, void, (BLAS_GEQP3_ARGS, blasint *))                                     \
	X(cgeqp3_, void, (BLAS_GEQP3_ARGS, void *, blasint *))                             \
	X(zgeqp3_, void, (BLAS_GEQP3_ARGS, void *, blasint *))                             \
	X(sorgqr_, void, (BLAS_ORGQR_ARGS))                                                \
	X(dorgqr_, void, (BLAS_ORGQR_ARGS))                                                \
	X(cungqr_, void, (BLAS_ORGQR_ARGS))                                                \
	X(zungqr_, void, (BLAS_ORGQR_ARGS))                                                \
	X(sormqr_, void, (BLAS_ORMQR_ARGS))                                                \
	X(dormqr_, void, (BLAS_ORMQR_ARGS))                                                \
	X(cunmqr_, void, (BLAS_ORMQR_ARGS))                                                \
	X(zunmqr_, void, (BLAS_ORMQR_ARGS))                                                \
	X(strsm_, void, (BLAS_TRSM_ARGS))                                                  \
	X(dtrsm_, void, (BLAS_TRSM_ARGS))                                                  \
	X(ctrsm_, void, (BLAS_TRSM_ARGS))                                                  \
	X(ztrsm_, void, (BLAS_TRSM_ARGS))                                                  \
	X(sgesdd_, void, (BLAS_GESDD_ARGS, blasint *, blasint *, size_t))                  \
	X(dgesdd_, void, (BLAS_GESDD_ARGS, blasint *, blasint *, size_t))                  \
	X(cgesdd_, void, (BLAS_GESDD_ARGS, void *, blasint *, blasint *, size_t))          \
	X(zgesdd_, void, (BLAS_GESDD_ARGS, void *, blasint *, blasint *, size_t))          \
	X(ssyevd_, void, (BLAS_SYEVD_ARGS))                                                \
	X(dsyevd_, void, (BLAS_SYEVD_ARGS))                                                \
	X(cheevd_, void, (BLAS_HEEVD_ARGS))                                                \
	X(zheevd_, void, (BLAS_HEEVD_ARGS))                                                \
	X(sgesvd_, void, (BLAS_GESVD_ARGS, blasint *, size_t, size_t))                     \
	X(dgesvd_, void, (BLAS_GESVD_ARGS, blasint *, size_t, size_t))                     \
	X(cgesvd_, void, (BLAS_GESVD_ARGS, void *, blasint *, size_t, size_t))             \
	X(zgesvd_, void, (BLAS_GESVD_ARGS, void *, blasint *, size_t, size_t))             \
	X(sgeev_, void, (BLAS_GEEV_HEAD, void *, void *, BLAS_GEEV_VECS, blasint *, size_t, size_t)) \
	X(dgeev_, void, (BLAS_GEEV_HEAD, void *, void *, BLAS_GEEV_VECS, blasint *, size_t, size_t)) \
	X(cgeev_, void, (BLAS_GEEV_HEAD, void *, BLAS_GEEV_VECS, void *, blasint *, size_t, size_t)) \
	X(zgeev_, void, (BLAS_GEEV_HEAD, void *, BLAS_GEEV_VECS, void *, blasint *, size_t, size_t)) \
	X(sgees_, void, (BLAS_GEES_HEAD, void *, void *, void *, const blasint *, void *, const blasint *, \
			 blasint *, blasint *, size_t, size_t))                              \
	X(dgees_, void, (BLAS_GEES_HEAD, void *, void *, void *, const blasint *, void *, const blasint *, \
			 blasint *, blasint *, size_t, size_t))                              \
	X(cgees_, void, (BLAS_GEES_HEAD, void *, void *, const blasint *, void *, const blasint *, void *, \
			 blasint *, blasint *, size_t, size_t))                              \
	X(zgees_, void, (BLAS_GEES_HEAD, void *, void *, const blasint *, void *, const blasint *, void *, \
			 blasint *, blasint *, size_t, size_t))                              \
	X(sgehrd_, void, (BLAS_GEHRD_ARGS))                                                \
	X(dgehrd_, void, (BLAS_GEHRD_ARGS))                                                \
	X(cgehrd_, void, (BLAS_GEHRD_ARGS))                                                \
	X(zgehrd_, void, (BLAS_GEHRD_ARGS))                                                \
	X(ssytrd_, void, (BLAS_SYTRD_ARGS))                                                \
	X(dsytrd_, void, (BLAS_SYTRD_ARGS))                                                \
	X(chetrd_, void, (BLAS_SYTRD_ARGS))                                                \
	X(zhetrd_, void, (BLAS_SYTRD_ARGS))                                                \
	X(sgtsv_, void, (BLAS_GTSV_ARGS))                                                  \
	X(dgtsv_, void, (BLAS_GTSV_ARGS))                                                  \
	X(cgtsv_, void, (BLAS_GTSV_ARGS))                                                  \
	X(zgtsv_, void, (BLAS_GTSV_ARGS))

#define BLAS_MEMBER(name, ret, params) ret(*name) params;
typedef struct blas_fns {
	BLAS_FUNCTIONS(BLAS_MEMBER)
} blas_fns;
#undef BLAS_MEMBER

/* Opens OpenBLAS once (the first caller; the others wait) and gives its
 * entry points, or NULL when it cannot be opened or lacks one of them
 * (blas_error says why). Thread-safe. */
const blas_fns *blas_open(void);
const char *blas_error(void);
/* Whether OpenBLAS has been opened (without opening it). */
int blas_opened(void);

/* OpenBLAS's thread count for `threads` (0: its own default, i.e.
 * OPENBLAS_NUM_THREADS or the cores). Before OpenBLAS is opened the count
 * is kept and set as it opens. The participants of a run set it once
 * before they start, all with the same count, so that their calls find it
 * set and never change it at once. */
void blas_threads(int threads);

#endif
