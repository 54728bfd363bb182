/* What a profiled run measures (hloi_run_options.profile, doc/performance.md
 * "Where the time goes"): per instruction — or per fused region, under its
 * seed — the times it ran and the wall time it took, in all and without
 * the computations it called (self), a while loop's body runs, and its
 * cost; and, when asked, one event per step for a Chrome trace. The driver
 * (eval/run.c) records; eval/plan/report.c turns a profile into the
 * report.
 *
 * Each participant of a run records into a shard of its own (no locks
 * while recording); a profile collects every run it is given, so a
 * benchmark's runs add up and the report divides by their count. */
#ifndef HLOI_EVAL_PROFILE_H
#define HLOI_EVAL_PROFILE_H

#include <pthread.h>
#include <stdint.h>

#include "hloi.h"
#include "ir/ir.h"

/* One instruction's (or region's) measurements. */
typedef struct prof_rec {
	const void *key;        /* the instruction */
	const computation *comp;/* its computation */
	int region;             /* the step was a fused region seeded by the instruction */
	uint64_t calls;
	uint64_t total_ns, self_ns;
	uint64_t iterations;    /* a while loop's body runs, all its calls together */
	/* one run's cost (eval/plan/cost.h), set by the driver at the first */
	double flops, transcendentals, bytes, gemm_flops;
	int nmem;               /* a region's instructions */
} prof_rec;

/* One step of a trace: [t0, t0 + dur) in ns from the profile's start. */
typedef struct prof_event {
	const instr *in;
	int region;
	int depth;              /* computations nested below the entry's */
	int tid;                /* 0: the participant's steps; k + 1: worker k's part */
	uint64_t t0, dur;
} prof_event;

typedef struct prof_shard {
	int64_t participant;
	prof_rec *recs;         /* open addressing by key */
	size_t cap, n;
	prof_event *events;
	size_t nevents, cap_events;
	uint64_t dropped;       /* events beyond PROF_MAX_EVENTS */
	int max_tid;            /* the highest tid of its events */
} prof_shard;

/* Events kept per participant; later ones are counted, not kept. */
#define PROF_MAX_EVENTS 4000000

struct hloi_profile {
	unsigned flags;         /* HLOI_PROFILE_* */
	uint64_t origin_ns;     /* CLOCK_MONOTONIC when made: the trace's zero */
	pthread_mutex_t lock;   /* guards the shard list */
	prof_shard **shards;
	int nshards, cap_shards;
	uint64_t runs;          /* runs recorded (a run of N participants is one) */
	uint64_t run_ns;        /* their wall time, all participants together */
	int threads;            /* the worker threads of the last run */
	int failed;             /* out of memory while recording: results partial */
};

/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t prof_now(void);

/* The shard of `participant` (made on first use); NULL when out of memory
 * (the profile is marked failed). */
prof_shard *prof_shard_of(hloi_profile *p, int64_t participant);

/* Adds one run of a step: `key` an instruction (region: the step was the
 * fused region it seeds) of computation comp. Its record (calls == 1: the
 * first, for the caller to set the cost), or NULL when out of memory. */
prof_rec *prof_add(hloi_profile *p, prof_shard *s, const instr *in, const computation *comp, int region,
	      uint64_t total_ns, uint64_t self_ns);
/* Keeps a trace event (HLOI_PROFILE_TRACE) on track tid. */
void prof_event_add(hloi_profile *p, prof_shard *s, const instr *in, int region, int depth, int tid, uint64_t t0,
		    uint64_t t1);
/* Counts a run of the module that took `ns` (all its participants). */
void prof_run_done(hloi_profile *p, uint64_t ns, int threads);
/* The record of `key` in s, or NULL. */
const prof_rec *prof_find(const prof_shard *s, const void *key);

#endif
