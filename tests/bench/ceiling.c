/* The limit for tests/bench: a plain C loop o[i] = a[i] + b[i] over
 * contiguous f32 4096x4096 arrays, split over T threads (a numeric
 * argument after the iterations, default 1: bench.py passes hloi's thread
 * count), each thread its own contiguous share of the elements; output
 * pages touched before timing. Prints the median seconds and GB/s (three
 * streams). A workload's limit is the bytes of its parameters and result
 * at this bandwidth. `ceiling N [T] copy` times the plain copy loop
 * o[i] = a[i] instead (two streams): the copy bandwidth the data-movement
 * ops are measured against. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 64

static float *A, *B, *O;
static size_t N_ELEMS = (size_t)4096 * 4096;

typedef struct part {
	size_t lo, hi;
} part;

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

static int copying;

static void *work(void *arg)
{
	const part *p = arg;
	if (copying)
		copy(O + p->lo, A + p->lo, p->hi - p->lo);
	else
		add(O + p->lo, A + p->lo, B + p->lo, p->hi - p->lo);
	return NULL;
}

static void run(int threads)
{
	pthread_t tid[MAX_THREADS];
	part parts[MAX_THREADS];
	for (int k = 0; k < threads; k++) {
		parts[k].lo = N_ELEMS * (size_t)k / (size_t)threads;
		parts[k].hi = N_ELEMS * (size_t)(k + 1) / (size_t)threads;
	}
	for (int k = 1; k < threads; k++)
		if (pthread_create(&tid[k], NULL, work, &parts[k]) != 0)
			work(&parts[k]), tid[k] = 0;
	work(&parts[0]);
	for (int k = 1; k < threads; k++)
		if (tid[k])
			pthread_join(tid[k], NULL);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 10;
	int threads = 1;
	for (int k = 2; k < argc; k++) {
		if (strcmp(argv[k], "copy") == 0)
			copying = 1;
		else if (strcmp(argv[k], "add") != 0)  /* bench.py names the default mode too */
			threads = atoi(argv[k]);
	}
	size_t streams = copying ? 2 : 3;
	if (iters < 1)
		iters = 1;
	if (threads < 1)
		threads = 1;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	A = malloc(N_ELEMS * sizeof *A);
	B = malloc(N_ELEMS * sizeof *B);
	O = malloc(N_ELEMS * sizeof *O);
	double *t = malloc((size_t)iters * sizeof *t);
	if (!A || !B || !O || !t)
		return 1;
	for (size_t i = 0; i < N_ELEMS; i++) {
		A[i] = (float)(i % 17);
		B[i] = (float)(i % 5);
		O[i] = 0;
	}
	run(threads); /* warm up (pages touched) */
	for (int k = 0; k < iters; k++) {
		double t0 = now_s();
		run(threads);
		t[k] = now_s() - t0;
	}
	qsort(t, (size_t)iters, sizeof *t, cmp_double);
	double med = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
	volatile float sink = O[N_ELEMS / 2];
	(void)sink;
	printf("{\"median_s\":%.9f,\"bytes\":%zu,\"gbps\":%.3f,\"threads\":%d}\n", med,
	       streams * N_ELEMS * sizeof(float), (double)(streams * N_ELEMS * sizeof(float)) / med / 1e9, threads);
	free(A);
	free(B);
	free(O);
	free(t);
	return 0;
}
