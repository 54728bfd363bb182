/* The bandwidth ceiling for tests/bench: a plain C loop o[i] = a[i] + b[i]
 * over contiguous f32 arrays (one thread, as the compiler makes it), timed
 * like hloi bench; prints the median seconds and GB/s (three streams).
 * `ceiling N copy` times the plain copy loop o[i] = a[i] instead (two
 * streams): the copy bandwidth the data-movement ops are measured against. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static void add(float *restrict o, const float *restrict a, const float *restrict b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		o[i] = a[i] + b[i];
}

static void copy(float *restrict o, const float *restrict a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		o[i] = a[i];
}

static void run(int copying, float *o, const float *a, const float *b, size_t n)
{
	if (copying)
		copy(o, a, n);
	else
		add(o, a, b, n);
}

int main(int argc, char **argv)
{
	size_t n = (size_t)4096 * 4096;
	int iters = argc > 1 ? atoi(argv[1]) : 10;
	int copying = argc > 2 && strcmp(argv[2], "copy") == 0;
	size_t streams = copying ? 2 : 3;
	if (iters < 1)
		iters = 1;
	float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *o = malloc(n * sizeof *o);
	double *t = malloc((size_t)iters * sizeof *t);
	if (!a || !b || !o || !t)
		return 1;
	for (size_t i = 0; i < n; i++) {
		a[i] = (float)(i % 17);
		b[i] = (float)(i % 5);
		o[i] = 0;
	}
	run(copying, o, a, b, n); /* warm up (pages touched) */
	for (int k = 0; k < iters; k++) {
		double t0 = now_s();
		run(copying, o, a, b, n);
		t[k] = now_s() - t0;
	}
	qsort(t, (size_t)iters, sizeof *t, cmp_double);
	double med = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
	volatile float sink = o[n / 2];
	(void)sink;
	printf("{\"median_s\":%.9f,\"bytes\":%zu,\"gbps\":%.3f}\n", med, streams * n * sizeof(float),
	       (double)(streams * n * sizeof(float)) / med / 1e9);
	free(a);
	free(b);
	free(o);
	free(t);
	return 0;
}
