/* The thread helper of the fast reductions and the per-element kernels:
 * a range of work split into contiguous pieces, one thread each. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "eval/fast/fast.h"

#define APPLY_MAX_THREADS 64

typedef struct par_job {
	void (*fn)(void *ctx, int64_t lo, int64_t hi);
	void *ctx;
	int64_t lo, hi;
} par_job;

static void *par_worker(void *arg)
{
	const par_job *j = arg;
	if (j->lo < j->hi)
		j->fn(j->ctx, j->lo, j->hi);
	return NULL;
}

void eval_parallel(int threads, int64_t n, int64_t min_per_thread, void (*fn)(void *ctx, int64_t lo, int64_t hi),
		   void *ctx)
{
	static _Atomic long cores;  /* sysconf reads a file: asked once */
	int64_t nt = threads;
	if (nt <= 0) {
		long c = atomic_load_explicit(&cores, memory_order_relaxed);
		if (c == 0) {
			c = sysconf(_SC_NPROCESSORS_ONLN);
			c = c < 1 ? 1 : c;
			atomic_store_explicit(&cores, c, memory_order_relaxed);
		}
		nt = c;
	}
	if (nt > APPLY_MAX_THREADS)
		nt = APPLY_MAX_THREADS;
	if (min_per_thread < 1)
		min_per_thread = 1;
	if (nt > n / min_per_thread)
		nt = n / min_per_thread;
	if (nt < 1)
		nt = 1;
	if (nt == 1) {
		if (n > 0)
			fn(ctx, 0, n);
		return;
	}
	pthread_t tid[APPLY_MAX_THREADS];
	par_job jobs[APPLY_MAX_THREADS];
	int started[APPLY_MAX_THREADS];
	for (int64_t k = 0; k < nt; k++) {
		jobs[k].fn = fn;
		jobs[k].ctx = ctx;
		jobs[k].lo = n * k / nt;
		jobs[k].hi = n * (k + 1) / nt;
		started[k] = 0;
	}
	for (int64_t k = 1; k < nt; k++)
		started[k] = pthread_create(&tid[k], NULL, par_worker, &jobs[k]) == 0;
	par_worker(&jobs[0]);
	for (int64_t k = 1; k < nt; k++) {
		if (started[k])
			pthread_join(tid[k], NULL);
		else
			par_worker(&jobs[k]);
	}
}
