/* Progress lines (progress.h). The line is written with write(2) to file
 * descriptor 2, past the counting stream main keeps for diagnostics (a
 * progress line is not a message). */
#define _GNU_SOURCE
#include "progress.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void put(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void *show(void *arg)
{
	cli_progress *p = arg;
	double t0 = now_s(), next = 2.0;
	/* HLOI_PROGRESS_AFTER=SECONDS: when the first line shows (tests) */
	const char *after = getenv("HLOI_PROGRESS_AFTER");
	if (after && *after) {
		char *end;
		double v = strtod(after, &end);
		if (!*end && v >= 0 && v < 1e6)
			next = v;
	}
	pthread_mutex_lock(&p->mu);
	while (!p->done) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 250 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&p->cv, &p->mu, &until);
		double t = now_s() - t0;
		/* first after two seconds, then once a second */
		if (p->done || t < next)
			continue;
		next = (double)(long)t + 1.0;
		char line[256];
		int n;
		uint64_t c = __atomic_load_n(&p->count, __ATOMIC_RELAXED);
		if (p->unit)
			n = snprintf(line, sizeof line, "\r\033[Khloi %s: %s: %llu %s, %.0f s", p->cmd, p->what,
				     (unsigned long long)c, p->unit, t);
		else
			n = snprintf(line, sizeof line, "\r\033[Khloi %s: %s, %.0f s", p->cmd, p->what, t);
		if (n > 0)
			put(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
		p->shown = 1;
	}
	if (p->shown)
		put("\r\033[K", 4);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

void cli_progress_start(cli_progress *p, const char *cmd, const char *what, const char *unit, int quiet)
{
	memset(p, 0, sizeof *p);
	p->cmd = cmd;
	p->what = what;
	p->unit = unit;
	if (quiet || !isatty(STDERR_FILENO))
		return;
	if (pthread_mutex_init(&p->mu, NULL) != 0)
		return;
	if (pthread_cond_init(&p->cv, NULL) != 0) {
		pthread_mutex_destroy(&p->mu);
		return;
	}
	/* signals (SIGINT, the --timeout alarm) stay with the main thread */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	p->active = pthread_create(&p->thread, NULL, show, p) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!p->active) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
	}
}

void cli_progress_stop(cli_progress *p)
{
	if (!p->active)
		return;
	pthread_mutex_lock(&p->mu);
	p->done = 1;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	p->active = 0;
}
