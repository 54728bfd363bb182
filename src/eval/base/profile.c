/* Recording a profile (see profile.h). */
#include "eval/base/profile.h"

#include <string.h>
#include <time.h>

#include "util/alloc.h"

uint64_t prof_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

hloi_status hloi_profile_new(hloi_profile **out, unsigned flags)
{
	hloi_profile *p = hloi_calloc(1, sizeof *p);
	*out = NULL;
	if (!p)
		return HLOI_ENOMEM;
	if (pthread_mutex_init(&p->lock, NULL) != 0) {
		hloi_free(p);
		return HLOI_ENOMEM;
	}
	p->flags = flags;
	p->origin_ns = prof_now();
	*out = p;
	return HLOI_OK;
}

void hloi_profile_free(hloi_profile *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nshards; i++) {
		hloi_free(p->shards[i]->recs);
		hloi_free(p->shards[i]->events);
		hloi_free(p->shards[i]);
	}
	hloi_free(p->shards);
	pthread_mutex_destroy(&p->lock);
	hloi_free(p);
}

prof_shard *prof_shard_of(hloi_profile *p, int64_t participant)
{
	prof_shard *s = NULL;
	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->nshards && !s; i++)
		if (p->shards[i]->participant == participant)
			s = p->shards[i];
	if (!s) {
		if (p->nshards == p->cap_shards) {
			int cap = p->cap_shards ? 2 * p->cap_shards : 4;
			prof_shard **v = hloi_calloc((size_t)cap, sizeof *v);
			if (v) {
				if (p->nshards)
					memcpy(v, p->shards, (size_t)p->nshards * sizeof *v);
				hloi_free(p->shards);
				p->shards = v;
				p->cap_shards = cap;
			}
		}
		if (p->nshards < p->cap_shards)
			s = hloi_calloc(1, sizeof *s);
		if (s) {
			s->participant = participant;
			/* shards in participant order, for the report and the trace */
			int at = p->nshards;
			while (at > 0 && p->shards[at - 1]->participant > participant) {
				p->shards[at] = p->shards[at - 1];
				at--;
			}
			p->shards[at] = s;
			p->nshards++;
		} else {
			p->failed = 1;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return s;
}

static size_t slot_of(const void *key, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15u;
	return (size_t)(h >> 20) & (cap - 1);
}

static prof_rec *rec_of(hloi_profile *p, prof_shard *s, const void *key)
{
	if (s->cap && s->recs[slot_of(key, s->cap)].key == key)
		return &s->recs[slot_of(key, s->cap)];
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		prof_rec *v = hloi_calloc(cap, sizeof *v);
		if (!v) {
			p->failed = 1;
			return NULL;
		}
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->recs[i].key)
				continue;
			size_t k = slot_of(s->recs[i].key, cap);
			while (v[k].key)
				k = (k + 1) & (cap - 1);
			v[k] = s->recs[i];
		}
		hloi_free(s->recs);
		s->recs = v;
		s->cap = cap;
	}
	size_t k = slot_of(key, s->cap);
	while (s->recs[k].key && s->recs[k].key != key)
		k = (k + 1) & (s->cap - 1);
	if (!s->recs[k].key) {
		s->recs[k].key = key;
		s->n++;
	}
	return &s->recs[k];
}

const prof_rec *prof_find(const prof_shard *s, const void *key)
{
	if (!s->cap)
		return NULL;
	size_t k = slot_of(key, s->cap);
	while (s->recs[k].key && s->recs[k].key != key)
		k = (k + 1) & (s->cap - 1);
	return s->recs[k].key ? &s->recs[k] : NULL;
}

prof_rec *prof_add(hloi_profile *p, prof_shard *s, const instr *in, const computation *comp, int region,
		   uint64_t total_ns, uint64_t self_ns)
{
	prof_rec *r = rec_of(p, s, in);
	if (!r)
		return NULL;
	r->comp = comp;
	r->region = region;
	r->calls++;
	r->total_ns += total_ns;
	r->self_ns += self_ns;
	return r;
}

void prof_event_add(hloi_profile *p, prof_shard *s, const instr *in, int region, int depth, int tid, uint64_t t0,
		    uint64_t t1)
{
	if (s->nevents == s->cap_events) {
		if (s->nevents >= PROF_MAX_EVENTS) {
			s->dropped++;
			return;
		}
		size_t cap = s->cap_events ? 2 * s->cap_events : 1024;
		prof_event *v = hloi_calloc(cap, sizeof *v);
		if (!v) {
			p->failed = 1;
			s->dropped++;
			return;
		}
		if (s->nevents)
			memcpy(v, s->events, s->nevents * sizeof *v);
		hloi_free(s->events);
		s->events = v;
		s->cap_events = cap;
	}
	prof_event *ev = &s->events[s->nevents++];
	ev->in = in;
	ev->region = region;
	ev->depth = depth;
	ev->tid = tid;
	if (tid > s->max_tid)
		s->max_tid = tid;
	ev->t0 = t0 > p->origin_ns ? t0 - p->origin_ns : 0;
	ev->dur = t1 > t0 ? t1 - t0 : 0;
}

void prof_run_done(hloi_profile *p, uint64_t ns, int threads)
{
	pthread_mutex_lock(&p->lock);
	p->runs++;
	p->run_ns += ns;
	p->threads = threads;
	pthread_mutex_unlock(&p->lock);
}
