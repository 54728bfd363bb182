/* Several participants in one process: the threads, the rendezvous of the
 * collectives, the messages of send and recv, and the diagnostics of each participant gathered into the
 * caller's context (spmd.h). */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "eval/lib/blas.h"
#include "eval/runtime/mpi.h"
#include "eval/runtime/spmd.h"
#include "util/alloc.h"
#include "util/diag.h"

/* One meeting of a group at a collective. */
struct spmd_meet {
	struct spmd_meet *next;
	const instr *in;            /* the key: instruction, */
	uint64_t occurrence;        /* the time it is reached (from 0), */
	int64_t first;              /* and the group's first member */
	int64_t size, arrived, departed, left;
	int complete;
	hloi_literal *const **vals; /* by rank; NULL until the member arrives */
	int64_t *members;
	hloi_literal **remote;      /* distributed: the others' operands (mpi_exchange) */
	int nremote;
};

struct spmd {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int64_t n;                 /* participants */
	uint8_t *ended;            /* by flattened id: the run returned ... */
	uint8_t *failed;           /* ... with an error */
	int64_t alive;             /* participants still running */
	int64_t blocked;           /* of them, waiting at an incomplete meeting */
	int deadlock;
	int abort;                 /* a participant failed: meetings end */
	spmd_meet *meets;
	const volatile int *stop;
	p2p_msg *msgs;             /* sent and not yet received */
	p2p_key *waits;            /* by flattened id: the message a participant waits for, */
	uint8_t *waiting;          /* while set (it counts in `blocked`) */
};

/* Under the lock: when every running participant waits at an incomplete
 * meeting, none can arrive (unless one has failed: the waiters are then
 * released by the failure, not by a deadlock). */
static void detect_deadlock(spmd *s)
{
	if (s->alive > 0 && s->blocked == s->alive && !s->deadlock && !s->abort) {
		s->deadlock = 1;
		pthread_cond_broadcast(&s->cv);
	}
}

/* This member's occurrence count of `in`, counted up. */
static int next_occurrence(spmd_member *m, const instr *in, uint64_t *out)
{
	for (int i = 0; i < m->nseen; i++)
		if (m->seen[i] == in) {
			*out = m->count[i]++;
			return 0;
		}
	if (m->nseen == m->cap) {
		int cap = m->cap ? 2 * m->cap : 16;
		const instr **seen = hloi_realloc(m->seen, (size_t)cap * sizeof *seen);
		if (!seen)
			return -1;
		m->seen = seen;
		uint64_t *count = hloi_realloc(m->count, (size_t)cap * sizeof *count);
		if (!count)
			return -1;
		m->count = count;
		m->cap = cap;
	}
	m->seen[m->nseen] = in;
	m->count[m->nseen++] = 1;
	*out = 0;
	return 0;
}

static void meet_free(spmd_meet *t)
{
	if (!t)
		return;
	hloi_free(t->vals);
	hloi_free(t->members);
	hloi_free(t);
}

/* Under the lock: the meeting of this key, made when first reached. */
static spmd_meet *find_meet(spmd *s, const instr *in, uint64_t occ, const int64_t *members, int64_t n)
{
	for (spmd_meet *t = s->meets; t; t = t->next)
		if (t->in == in && t->occurrence == occ && t->first == members[0])
			return t;
	spmd_meet *t = hloi_calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->vals = hloi_calloc((size_t)n, sizeof *t->vals);
	t->members = hloi_malloc((size_t)n * sizeof *t->members);
	if (!t->vals || !t->members) {
		meet_free(t);
		return NULL;
	}
	memcpy(t->members, members, (size_t)n * sizeof *members);
	t->in = in;
	t->occurrence = occ;
	t->first = members[0];
	t->size = n;
	t->next = s->meets;
	s->meets = t;
	return t;
}

/* "replica 1, partition 0" */
static void name_of(char *buf, size_t size, const spmd *s, int64_t id, int64_t partitions)
{
	(void)s;
	snprintf(buf, size, "replica %lld, partition %lld", (long long)(id / partitions), (long long)(id % partitions));
}

static void deadline_in(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += ms * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec += ts->tv_nsec / 1000000000L;
		ts->tv_nsec %= 1000000000L;
	}
}

int spmd_next_occurrence(engine *e, const instr *in, uint64_t *occ)
{
	return next_occurrence(e->spmd, in, occ);
}

const volatile int *spmd_stop(engine *e)
{
	return e->spmd->s->stop;
}

/* One participant per rank: the group's operands come over MPI; the
 * meeting is this member's alone. */
static hloi_status arrive_distributed(engine *e, const instr *in, uint64_t occ, const int64_t *members, int64_t n,
				      int64_t rank, hloi_literal *const *vals, hloi_literal *const *const **all,
				      spmd_meet **meet)
{
	spmd_meet *t = hloi_calloc(1, sizeof *t);
	if (t) {
		t->vals = hloi_calloc((size_t)n, sizeof *t->vals);
		t->remote = hloi_calloc((size_t)(n * in->nops) + 1, sizeof *t->remote);
	}
	if (!t || !t->vals || !t->remote) {
		if (t)
			hloi_free(t->remote);
		meet_free(t);
		return value_oom(e, (int64_t)sizeof *t);
	}
	t->nremote = (int)(n * in->nops);
	hloi_status st = mpi_exchange(e, in, occ, members, n, rank, vals, in->nops, t->remote, e->spmd->s->stop);
	if (st != HLOI_OK) {
		hloi_free(t->remote);
		meet_free(t);
		return st;
	}
	for (int64_t j = 0; j < n; j++)
		t->vals[j] = j == rank ? vals : (hloi_literal *const *)t->remote + j * in->nops;
	t->size = n;
	*all = (hloi_literal *const *const *)t->vals;
	*meet = t;
	return HLOI_OK;
}

hloi_status spmd_arrive(engine *e, const instr *in, const int64_t *members, int64_t n, int64_t rank,
			hloi_literal *const *vals, hloi_literal *const *const **all, spmd_meet **meet)
{
	spmd_member *me = e->spmd;
	spmd *s = me->s;
	int64_t parts = e->m->partitions;
	char who[96];
	uint64_t occ;
	*meet = NULL;
	if (next_occurrence(me, in, &occ))
		return value_oom(e, (int64_t)sizeof(uint64_t));
	if (me->distributed)
		return arrive_distributed(e, in, occ, members, n, rank, vals, all, meet);
	pthread_mutex_lock(&s->mu);
	if (s->abort) {
		pthread_mutex_unlock(&s->mu);
		me->released = 1;
		diag_error_where(e->ctx, NULL, "'%s' (%s): the run ended because another participant failed", in->name,
				 opcode_name(in->op));
		return HLOI_EINVAL;
	}
	spmd_meet *t = find_meet(s, in, occ, members, n);
	if (!t) {
		pthread_mutex_unlock(&s->mu);
		return value_oom(e, (int64_t)sizeof *t);
	}
	t->vals[rank] = vals;
	if (++t->arrived == t->size) {
		t->complete = 1;
		s->blocked -= t->size - 1;
		pthread_cond_broadcast(&s->cv);
	} else {
		s->blocked++;
		detect_deadlock(s);
	}
	hloi_status st = HLOI_OK;
	while (!t->complete) {
		int64_t missing = -1, failed = -1;
		for (int64_t j = 0; j < t->size; j++)
			if (!t->vals[j] && s->ended[t->members[j]]) {
				if (s->failed[t->members[j]] && failed < 0)
					failed = t->members[j];
				else if (!s->failed[t->members[j]] && missing < 0)
					missing = t->members[j];
			}
		if (missing >= 0) {
			name_of(who, sizeof who, s, missing, parts);
			diag_error_where(e->ctx, NULL, "'%s' (%s): %s ended without reaching it", in->name,
					 opcode_name(in->op), who);
			st = HLOI_EINVAL;
		} else if (s->deadlock) {
			diag_error_where(e->ctx, NULL,
					 "'%s' (%s), occurrence %llu: every participant still running waits at a collective that others do not reach (deadlock)",
					 in->name, opcode_name(in->op), (unsigned long long)occ + 1);
			st = HLOI_EINVAL;
		} else if (failed >= 0) {
			name_of(who, sizeof who, s, failed, parts);
			me->released = 1;
			diag_error_where(e->ctx, NULL, "'%s' (%s): %s failed before reaching it", in->name,
					 opcode_name(in->op), who);
			st = HLOI_EINVAL;
		} else if (s->abort) {
			me->released = 1;
			diag_error_where(e->ctx, NULL, "'%s' (%s): the run ended because another participant failed",
					 in->name, opcode_name(in->op));
			st = HLOI_EINVAL;
		} else if (s->stop && __atomic_load_n(s->stop, __ATOMIC_RELAXED)) {
			diag_error_where(e->ctx, NULL, "the run was stopped at '%s' (%s), waiting for the other participants",
					 in->name, opcode_name(in->op));
			st = HLOI_ESTOPPED;
		}
		if (st != HLOI_OK) {
			/* this member leaves the meeting unfinished: it never completes */
			t->vals[rank] = NULL;
			t->arrived--;
			s->blocked--;
			s->abort = 1;
			pthread_cond_broadcast(&s->cv);
			pthread_mutex_unlock(&s->mu);
			return st;
		}
		struct timespec ts;
		deadline_in(&ts, 50);
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	*all = (hloi_literal *const *const *)t->vals;
	*meet = t;
	return HLOI_OK;
}

void spmd_depart(engine *e, spmd_meet *t)
{
	spmd *s = e->spmd->s;
	if (!t)
		return;
	if (t->remote) {
		for (int k = 0; k < t->nremote; k++)
			if (t->remote[k])
				value_drop(e, t->remote[k]);
		hloi_free(t->remote);
		meet_free(t);
		return;
	}
	pthread_mutex_lock(&s->mu);
	if (++t->departed == t->size)
		pthread_cond_broadcast(&s->cv);
	while (t->departed < t->size)
		pthread_cond_wait(&s->cv, &s->mu);
	if (++t->left == t->size) {
		for (spmd_meet **p = &s->meets; *p; p = &(*p)->next)
			if (*p == t) {
				*p = t->next;
				break;
			}
		meet_free(t);
	}
	pthread_mutex_unlock(&s->mu);
}

int p2p_msg_push(p2p_msg **list, const p2p_key *k, const instr *send, hloi_literal *val)
{
	p2p_msg *m = hloi_calloc(1, sizeof *m);
	if (!m) {
		hloi_literal_free(val);
		return -1;
	}
	m->key = *k;
	m->send = send;
	m->val = val;
	m->next = *list;
	*list = m;
	return 0;
}

static int key_eq(const p2p_key *a, const p2p_key *b)
{
	return a->channel == b->channel && a->from == b->from && a->to == b->to && a->seq == b->seq;
}

p2p_msg *p2p_msg_take(p2p_msg **list, const p2p_key *k)
{
	for (p2p_msg **p = list; *p; p = &(*p)->next)
		if (key_eq(&(*p)->key, k)) {
			p2p_msg *m = *p;
			*p = m->next;
			m->next = NULL;
			return m;
		}
	return NULL;
}

void p2p_msg_free(p2p_msg *m)
{
	if (!m)
		return;
	hloi_literal_free(m->val);
	hloi_free(m);
}

void p2p_msg_free_all(p2p_msg **list)
{
	while (*list) {
		p2p_msg *m = *list;
		*list = m->next;
		p2p_msg_free(m);
	}
}

hloi_status spmd_post(engine *e, const p2p_key *k, const instr *send, hloi_literal *val)
{
	spmd *s = e->spmd->s;
	int64_t np = e->m->replicas * e->m->partitions;
	if (e->spmd->distributed && mpi_owner(k->to, np) != mpi_rank())
		return mpi_post(e, k, send, val);
	pthread_mutex_lock(&s->mu);
	int rc = p2p_msg_push(&s->msgs, k, send, val);
	if (rc == 0 && s->waiting[k->to] && key_eq(&s->waits[k->to], k)) {
		/* the receiver runs again: it no longer counts as blocked */
		s->waiting[k->to] = 0;
		s->blocked--;
	}
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return rc ? value_oom(e, (int64_t)sizeof(p2p_msg)) : HLOI_OK;
}

/* Under the lock: this member no longer waits for a message. */
static void stop_waiting(spmd *s, int64_t id)
{
	if (s->waiting[id]) {
		s->waiting[id] = 0;
		s->blocked--;
	}
}

hloi_status spmd_take(engine *e, const instr *in, const instr *recv, const p2p_key *k, p2p_msg **msg)
{
	spmd_member *me = e->spmd;
	spmd *s = me->s;
	int64_t parts = e->m->partitions;
	char from[96], to[96];
	name_of(from, sizeof from, s, k->from, parts);
	name_of(to, sizeof to, s, k->to, parts);
	hloi_status st = HLOI_OK;
	*msg = NULL;
	if (me->distributed && mpi_owner(k->from, s->n) != mpi_rank())
		return mpi_take(e, in, recv, k, msg, s->stop);
	pthread_mutex_lock(&s->mu);
	for (;;) {
		*msg = p2p_msg_take(&s->msgs, k);
		if (*msg) {
			stop_waiting(s, me->id);
			break;
		}
		if (k->from == me->id) {
			diag_error_where(e->ctx, NULL,
					 "'%s' (recv-done) waits for what %s sends itself on channel %lld for '%s' (recv), and no send before it did (deadlock)",
					 in->name, to, (long long)k->channel, recv->name);
			st = HLOI_EINVAL;
		} else if (s->ended[k->from] && !s->failed[k->from]) {
			diag_error_where(e->ctx, NULL,
					 "'%s' (recv-done): %s ended without sending to %s on channel %lld what '%s' (recv) waits for",
					 in->name, from, to, (long long)k->channel, recv->name);
			st = HLOI_EINVAL;
		} else if (s->deadlock) {
			diag_error_where(e->ctx, NULL,
					 "'%s' (recv-done) of %s waits for %s to send on channel %lld, and every participant still running waits (deadlock)",
					 in->name, to, from, (long long)k->channel);
			st = HLOI_EINVAL;
		} else if (s->ended[k->from]) {
			me->released = 1;
			diag_error_where(e->ctx, NULL, "'%s' (recv-done): %s failed before sending to %s on channel %lld for '%s' (recv)",
					 in->name, from, to, (long long)k->channel, recv->name);
			st = HLOI_EINVAL;
		} else if (s->abort) {
			me->released = 1;
			diag_error_where(e->ctx, NULL, "'%s' (recv-done): the run ended because another participant failed",
					 in->name);
			st = HLOI_EINVAL;
		} else if (s->stop && __atomic_load_n(s->stop, __ATOMIC_RELAXED)) {
			diag_error_where(e->ctx, NULL, "the run was stopped at '%s' (recv-done), waiting for %s", in->name,
					 from);
			st = HLOI_ESTOPPED;
		}
		if (st != HLOI_OK) {
			stop_waiting(s, me->id);
			s->abort = 1;
			pthread_cond_broadcast(&s->cv);
			break;
		}
		if (!s->waiting[me->id]) {
			s->waits[me->id] = *k;
			s->waiting[me->id] = 1;
			s->blocked++;
			detect_deadlock(s);
			continue;
		}
		struct timespec ts;
		deadline_in(&ts, 50);
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	return st;
}

/* What a participant's thread runs. */
typedef struct job {
	spmd_member member;
	module *m;
	hloi_context *ctx;
	hloi_literal *const *inputs;
	size_t ninputs;
	hloi_run_options opts;
	spmd_member_fn run;         /* the driver's run of one participant */
	hloi_literal *out;
	hloi_status st;
	int started;
} job;

static void *participant_main(void *arg)
{
	job *j = arg;
	spmd *s = j->member.s;
	j->st = j->run(j->m, j->ctx, j->inputs, j->ninputs, &j->opts, &j->member, &j->out);
	/* the others learn it is done (a failure ends the job) */
	if (j->member.distributed && j->st == HLOI_OK)
		mpi_participant_end(j->member.id);
	pthread_mutex_lock(&s->mu);
	s->ended[j->member.id] = 1;
	s->failed[j->member.id] = j->st != HLOI_OK;
	if (j->st != HLOI_OK)
		s->abort = 1;
	s->alive--;
	detect_deadlock(s);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Copies participant p's diagnostics into ctx, each prefixed with the
 * participant; a message an earlier participant gave is not repeated. */
static void gather_diags(hloi_context *ctx, job *jobs, int64_t p, int64_t partitions)
{
	char who[96];
	snprintf(who, sizeof who, "hloi: replica %lld, partition %lld", (long long)(p / partitions),
		 (long long)(p % partitions));
	const hloi_context *c = jobs[p].ctx;
	for (size_t i = 0; i < c->ndiags; i++) {
		const diag *d = &c->diags[i];
		int repeated = 0;
		for (int64_t q = 0; q < p && !repeated; q++) {
			const hloi_context *o = jobs[q].ctx;
			for (size_t k = 0; o && k < o->ndiags && !repeated; k++)
				repeated = o->diags[k].message && d->message && !strcmp(o->diags[k].message, d->message);
		}
		if (!repeated)
			diag_emit_where(ctx, d->severity, who, "%s", d->message ? d->message : "");
	}
}

static int online_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

hloi_status spmd_run(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
		     const hloi_run_options *opts, spmd_member_fn run, hloi_literal **out)
{
	int64_t n = m->replicas * m->partitions;
	if (!m->checked || n < 1 || n > HLOI_MAX_PARTICIPANTS) {
		diag_error_where(ctx, NULL, "the module must be checked before it runs");
		return HLOI_EINVAL;
	}
	for (int64_t p = 0; p < n; p++)
		out[p] = NULL;
	hloi_status st = HLOI_OK;
	spmd s;
	memset(&s, 0, sizeof s);
	job *jobs = hloi_calloc((size_t)n, sizeof *jobs);
	pthread_t *threads = hloi_calloc((size_t)n, sizeof *threads);
	s.ended = hloi_calloc((size_t)n, 1);
	s.failed = hloi_calloc((size_t)n, 1);
	s.waits = hloi_calloc((size_t)n, sizeof *s.waits);
	s.waiting = hloi_calloc((size_t)n, 1);
	if (!jobs || !threads || !s.ended || !s.failed || !s.waits || !s.waiting) {
		diag_error_where(ctx, NULL, "out of memory starting %lld participants", (long long)n);
		st = HLOI_ENOMEM;
		goto cleanup;
	}
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	s.n = n;
	s.alive = n;
	s.stop = opts && opts->version >= 2 ? opts->stop : NULL;
	/* under MPI each rank runs its own participants, n / ranks of them */
	int distributed = mpi_active(), local = (int)n;
	if (distributed) {
		if (n % mpi_size()) {
			diag_error_where(ctx, NULL,
					 "under MPI, the ranks share the participants evenly: the module runs as %lld participants (%lld replicas x %lld partitions) and the job has %d ranks",
					 (long long)n, (long long)m->replicas, (long long)m->partitions, mpi_size());
			st = HLOI_EUNSUPPORTED;
			goto destroy;
		}
		if ((st = mpi_run_begin(ctx, n, s.stop)) != HLOI_OK)
			goto destroy;
		local = (int)(n / mpi_size());
		s.alive = local;
	}
	/* the memory budget and the worker threads are shared out */
	hloi_run_options each;
	eval_options_copy(&each, opts);
	uint64_t budget = each.max_memory ? each.max_memory : eval_default_budget();
	each.max_memory = budget / (uint64_t)local ? budget / (uint64_t)local : 1;
	int threads_all = each.threads > 0 ? each.threads : online_cores();
	each.threads = threads_all / local > 0 ? threads_all / local : 1;
	blas_threads(each.threads);
	for (int64_t p = 0; p < n; p++) {
		job *j = &jobs[p];
		j->member.s = &s;
		j->member.id = p;
		j->member.replica = p / m->partitions;
		j->member.partition = p % m->partitions;
		j->member.distributed = distributed;
		j->m = m;
		j->run = run;
		j->inputs = inputs + (size_t)p * ninputs;
		j->ninputs = ninputs;
		j->opts = each;
		if (p != 0)
			j->opts.progress = NULL;
		if (hloi_context_new(&j->ctx) != HLOI_OK) {
			diag_error_where(ctx, NULL, "out of memory starting %lld participants", (long long)n);
			st = HLOI_ENOMEM;
			goto cleanup;
		}
	}
	for (int64_t p = 0; p < n; p++) {
		if (distributed && mpi_owner(p, n) != mpi_rank())
			continue;
		if (pthread_create(&threads[p], NULL, participant_main, &jobs[p]) != 0) {
			/* those started are released: this one ends failed */
			diag_error_where(ctx, NULL, "cannot start a thread for participant %lld of %lld", (long long)p,
					 (long long)n);
			st = HLOI_ENOMEM;
			pthread_mutex_lock(&s.mu);
			for (int64_t q = p; q < n; q++) {
				s.ended[q] = s.failed[q] = 1;
				s.alive--;
			}
			s.abort = 1;
			pthread_cond_broadcast(&s.cv);
			pthread_mutex_unlock(&s.mu);
			break;
		}
		jobs[p].started = 1;
	}
	for (int64_t p = 0; p < n; p++)
		if (jobs[p].started)
			pthread_join(threads[p], NULL);
	/* the participants that failed on their own first; those released
	 * because of them only when none did */
	int own = 0;
	for (int64_t p = 0; p < n; p++)
		if (jobs[p].started && jobs[p].st != HLOI_OK && !jobs[p].member.released)
			own = 1;
	for (int64_t p = 0; p < n; p++) {
		if (!jobs[p].started || jobs[p].st == HLOI_OK)
			continue;
		if (own && jobs[p].member.released)
			continue;
		gather_diags(ctx, jobs, p, m->partitions);
		if (st == HLOI_OK)
			st = jobs[p].st;
	}
	for (int64_t p = 0; p < n && st == HLOI_OK; p++)
		if (jobs[p].ctx && jobs[p].ctx->ndiags)
			gather_diags(ctx, jobs, p, m->partitions);

	for (int64_t p = 0; p < n; p++) {
		out[p] = jobs[p].out;
		jobs[p].out = NULL;
	}
	if (st != HLOI_OK)
		for (int64_t p = 0; p < n; p++) {
			hloi_literal_free(out[p]);
			out[p] = NULL;
		}
	while (s.meets) {
		spmd_meet *t = s.meets;
		s.meets = t->next;
		meet_free(t);
	}
	p2p_msg_free_all(&s.msgs);
destroy:
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
cleanup:
	for (int64_t p = 0; jobs && p < n; p++) {
		hloi_context_free(jobs[p].ctx);
		hloi_free(jobs[p].member.seen);
		hloi_free(jobs[p].member.count);
	}
	hloi_free(jobs);
	hloi_free(threads);
	hloi_free(s.ended);
	hloi_free(s.failed);
	hloi_free(s.waits);
	hloi_free(s.waiting);
	return st;
}
