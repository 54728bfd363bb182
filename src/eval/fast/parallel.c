/* The thread helper of the fast reductions and the per-element kernels:
 * a range of work split into contiguous pieces, one thread each. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
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
	par_job jobs[APPLY_MAX_THREADS];
	for (int64_t k = 0; k < nt; k++) {
		jobs[k].fn = fn;
		jobs[k].ctx = ctx;
		jobs[k].lo = n * k / nt;
		jobs[k].hi = n * (k + 1) / nt;
	}
	fx_fork((int)nt, jobs, sizeof *jobs, par_worker);
}

/* --- the fork and join ----------------------------------------------------------------- */

#define FORK_MAX 64

static _Thread_local const fx_tracer *tracer;

void fx_tracer_set(const fx_tracer *t)
{
	tracer = t;
}

const fx_tracer *fx_tracer_get(void)
{
	return tracer;
}

/* A job with its span, when traced. */
typedef struct timed_job {
	void *(*worker)(void *);
	void *job;
	uint64_t t0, t1;
} timed_job;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *timed_worker(void *arg)
{
	timed_job *t = arg;
	t->t0 = now_ns();
	t->worker(t->job);
	t->t1 = now_ns();
	return NULL;
}

void fx_fork(int n, void *jobs, size_t size, void *(*worker)(void *))
{
	pthread_t tid[FORK_MAX];
	int started[FORK_MAX];
	timed_job timed[FORK_MAX];
	const fx_tracer *tr = tracer;
	char *base = jobs;
	void *(*run)(void *) = tr ? timed_worker : worker;
	if (n > FORK_MAX)
		n = FORK_MAX;
	for (int k = 0; k < n; k++) {
		timed[k] = (timed_job){ worker, base + (size_t)k * size, 0, 0 };
		started[k] = 0;
	}
#define FORK_ARG(k) (tr ? (void *)&timed[k] : (void *)(base + (size_t)(k) * size))
	for (int k = 1; k < n; k++)
		started[k] = pthread_create(&tid[k], NULL, run, FORK_ARG(k)) == 0;
	run(FORK_ARG(0));
	for (int k = 1; k < n; k++) {
		if (started[k])
			pthread_join(tid[k], NULL);
		else
			run(FORK_ARG(k));
	}
#undef FORK_ARG
	for (int k = 0; tr && k < n; k++)
		tr->span(tr->data, k, timed[k].t0, timed[k].t1);
}
