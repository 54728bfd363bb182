/* Measuring a machine's limits (hloi bench --calibrate): the GEMM speed
 * OpenBLAS's sgemm reaches on square f32 matrices, and the bandwidth of a
 * plain C loop adding two large f32 arrays into a third — the loop the
 * benchmark table's "limit" column uses — both on the run's threads. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "eval/fast/fast.h"
#include "eval/lib/blas.h"
#include "eval/plan/cost.h"
#include "eval/plan/machine.h"
#include "util/alloc.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct add_job {
	float *a;
	const float *b, *c;
} add_job;

static void add_range(void *ctx, int64_t lo, int64_t hi)
{
	add_job *j = ctx;
	float *restrict a = j->a;
	const float *restrict b = j->b, *restrict c = j->c;
	for (int64_t i = lo; i < hi; i++)
		a[i] = b[i] + c[i];
}

static void fill_range(void *ctx, int64_t lo, int64_t hi)
{
	add_job *j = ctx;
	for (int64_t i = lo; i < hi; i++) {
		j->a[i] = 0;
		((float *)j->b)[i] = (float)(i & 1023);
		((float *)j->c)[i] = 1.0f;
	}
}

int eval_calibrate(cost_machine *out, int threads, char *why, size_t nwhy)
{
	memset(out, 0, sizeof *out);
	/* bandwidth: 3 arrays of 64 MiB, well past any cache; each array
	 * filled by the thread that later adds it (first touch) */
	const int64_t n = (int64_t)16 << 20;
	float *a = hloi_malloc((size_t)n * sizeof *a), *b = hloi_malloc((size_t)n * sizeof *b),
	      *c = hloi_malloc((size_t)n * sizeof *c);
	if (!a || !b || !c) {
		hloi_free(a);
		hloi_free(b);
		hloi_free(c);
		snprintf(why, nwhy, "out of memory for the bandwidth arrays (192 MiB)");
		return -1;
	}
	add_job j = { a, b, c };
	eval_parallel(threads, n, 1 << 16, fill_range, &j);
	double best = 1e30;
	for (int r = 0; r < 7; r++) {
		double t0 = now_s();
		eval_parallel(threads, n, 1 << 16, add_range, &j);
		double t = now_s() - t0;
		if (t < best)
			best = t;
	}
	volatile float sink = a[n - 1];
	(void)sink;
	out->gbps = 3.0 * (double)n * sizeof(float) / best / 1e9;
	hloi_free(a);
	hloi_free(b);
	hloi_free(c);

	/* GEMM: OpenBLAS's sgemm on 2048 x 2048 matrices, best of 3 */
	const blas_fns *bl = blas_open();
	if (!bl) {
		snprintf(why, nwhy, "OpenBLAS could not be opened (%s): no GEMM speed", blas_error());
		return 1;
	}
	blas_threads(threads);
	const size_t m = 2048;
	float *x = hloi_malloc(m * m * sizeof *x), *y = hloi_malloc(m * m * sizeof *y),
	      *z = hloi_malloc(m * m * sizeof *z);
	if (!x || !y || !z) {
		hloi_free(x);
		hloi_free(y);
		hloi_free(z);
		snprintf(why, nwhy, "out of memory for the GEMM matrices (48 MiB)");
		return 1;
	}
	for (size_t i = 0; i < m * m; i++) {
		x[i] = (float)(i % 7) * 0.25f;
		y[i] = (float)(i % 5) * 0.5f;
	}
	best = 1e30;
	for (int r = 0; r < 4; r++) {
		double t0 = now_s();
		bl->cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)m, (blasint)m, 1.0f, x, (blasint)m, y, (blasint)m, 0.0f, z, (blasint)m);
		double t = now_s() - t0;
		if (r > 0 && t < best)  /* the first run starts OpenBLAS's threads */
			best = t;
	}
	out->gflops = 2.0 * (double)m * (double)m * (double)m / best / 1e9;
	hloi_free(x);
	hloi_free(y);
	hloi_free(z);
	return 0;
}
