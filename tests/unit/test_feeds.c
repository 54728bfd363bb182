/* Unit tests for infeed and outfeed through the public API
 * (hloi_run_options version 4): the queue in order, then the infeed
 * callback; a value in another layout converted; what the callbacks learn
 * (instruction, computation, config, index, participant); the errors of an
 * empty queue, a value of another shape and a failing callback; options of
 * version 3 (no feeds); and the participants of a run of several, each
 * with values of its own. Both engines. Host transfers (version 5): what
 * the host callbacks learn (channel, rendezvous, index by channel), the
 * value a host recv receives, a host recv without a value, a failing
 * callback, and options of version 4 (no host callbacks). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hloi.h"
#include "unit.h"

/* Two infeeds, an outfeed between them and one nothing reads. */
static const char feeds[] =
	"HloModule feeds\n"
	"ENTRY main {\n"
	"  tok = token[] after-all()\n"
	"  a = (f32[2,2]{0,1}, token[]) infeed(tok), infeed_config=\"first\"\n"
	"  x = f32[2,2]{0,1} get-tuple-element(a), index=0\n"
	"  t = token[] get-tuple-element(a), index=1\n"
	"  y = f32[2,2] add(x, x)\n"
	"  o = token[] outfeed(y, t), outfeed_config=\"twice\"\n"
	"  b = (s32[], token[]) infeed(o)\n"
	"  ROOT k = s32[] get-tuple-element(b), index=0\n"
	"  o2 = token[] outfeed(k, tok)\n"
	"}\n";

static hloi_module *load(hloi_context *ctx, const char *text)
{
	hloi_module *m = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_module_parse(&m, ctx, "t.hlo", text, strlen(text)), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_module_check(m, ctx, NULL), HLOI_OK);
	return m;
}

static hloi_literal *lit(hloi_context *ctx, const char *text)
{
	hloi_literal **l = NULL;
	size_t n = 0;
	CU_ASSERT_EQUAL_FATAL(hloi_literal_parse_list(&l, &n, ctx, "v", text, strlen(text)), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	hloi_literal *v = l[0];
	l[0] = NULL;
	hloi_literal_array_free(l, n);
	return v;
}

/* What the callbacks saw. */
typedef struct seen {
	pthread_mutex_t mu;
	int outfeeds, infeeds;
	char names[8][32], configs[8][32];
	uint64_t index[8];
	size_t participant[8];
	float first[8];     /* the first element of each outfeed value (f32 or s32) */
	hloi_literal *give; /* what the infeed callback gives (NULL: none) */
	hloi_status fail;   /* what it returns */
	int fail_message;   /* whether it records an error first */
} seen;

static hloi_status on_infeed(void *data, hloi_context *ctx, const hloi_feed *feed, const hloi_literal **value)
{
	seen *s = data;
	pthread_mutex_lock(&s->mu);
	s->infeeds++;
	pthread_mutex_unlock(&s->mu);
	CU_ASSERT_EQUAL(hloi_shape_rank(feed->shape), 0);
	if (s->fail != HLOI_OK) {
		if (s->fail_message)
			hloi_context_error(ctx, NULL, "the host has no data");
		return s->fail;
	}
	*value = s->give;
	return HLOI_OK;
}

static hloi_status on_outfeed(void *data, hloi_context *ctx, const hloi_feed *feed, const hloi_literal *value)
{
	(void)ctx;
	seen *s = data;
	pthread_mutex_lock(&s->mu);
	int i = s->outfeeds++;
	if (i < 8) {
		snprintf(s->names[i], sizeof s->names[i], "%s", feed->instruction);
		snprintf(s->configs[i], sizeof s->configs[i], "%s", feed->config);
		s->index[i] = feed->index;
		s->participant[i] = feed->participant;
		const hloi_shape *sh = hloi_literal_shape(value);
		void *d = hloi_literal_data((hloi_literal *)(uintptr_t)value);
		if (hloi_shape_element_bytes(sh) == 4 && d) {
			if (hloi_shape_rank(sh) > 0) {
				float f;
				memcpy(&f, d, sizeof f);
				s->first[i] = f;
			} else {
				int32_t k;
				memcpy(&k, d, sizeof k);
				s->first[i] = (float)k;
			}
		}
		CU_ASSERT_STRING_EQUAL(feed->computation, "main");
	}
	pthread_mutex_unlock(&s->mu);
	return HLOI_OK;
}

static void test_queue_then_callback(void)
{
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx, feeds);
	/* row-major text for a column-major infeed: converted */
	hloi_literal *q[2] = { lit(ctx, "f32[2,2] {{1, 2}, {3, 4}}"), lit(ctx, "s32[] 7") };
	hloi_literal *from_callback = lit(ctx, "s32[] 9");
	for (int engine = HLOI_ENGINE_REFERENCE; engine <= HLOI_ENGINE_FAST; engine++) {
		seen s;
		memset(&s, 0, sizeof s);
		pthread_mutex_init(&s.mu, NULL);
		hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
		o.engine = (hloi_engine)engine;
		o.infeed = q;
		o.ninfeed = 2;
		o.outfeed = on_outfeed;
		o.feed_data = &s;
		hloi_literal *r = NULL;
		CU_ASSERT_EQUAL_FATAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_OK);
		CU_ASSERT_EQUAL(*(const int32_t *)hloi_literal_data(r), 7);
		hloi_literal_free(r);
		CU_ASSERT_EQUAL_FATAL(s.outfeeds, 2);
		CU_ASSERT_STRING_EQUAL(s.names[0], "o");
		CU_ASSERT_STRING_EQUAL(s.configs[0], "twice");
		CU_ASSERT_EQUAL(s.index[0], 0);
		CU_ASSERT_EQUAL(s.participant[0], 0);
		CU_ASSERT(s.first[0] == 2.0f);
		/* the outfeed nothing reads runs too */
		CU_ASSERT_STRING_EQUAL(s.names[1], "o2");
		CU_ASSERT_STRING_EQUAL(s.configs[1], "");
		CU_ASSERT_EQUAL(s.index[1], 1);
		CU_ASSERT(s.first[1] == 7.0f);

		/* one value in the queue, the second from the callback */
		o.ninfeed = 1;
		o.infeed_fn = on_infeed;
		s.give = from_callback;
		s.outfeeds = 0;
		CU_ASSERT_EQUAL_FATAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_OK);
		CU_ASSERT_EQUAL(*(const int32_t *)hloi_literal_data(r), 9);
		CU_ASSERT_EQUAL(s.infeeds, 1);
		CU_ASSERT(s.first[1] == 9.0f);
		hloi_literal_free(r);

		/* the callback has none: the empty queue's error */
		s.give = NULL;
		CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_EINVAL);
		CU_ASSERT_PTR_NULL(r);
		const char *msg = hloi_context_last_error(ctx);
		CU_ASSERT(msg && strstr(msg, "infeed 'b' in computation 'main' finds the infeed queue empty (after 1 value)"));
		hloi_context_clear(ctx);

		/* a failing callback: its own message, else one naming the infeed */
		s.fail = HLOI_EIO;
		s.fail_message = 1;
		CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_EIO);
		msg = hloi_context_last_error(ctx);
		CU_ASSERT(msg && strstr(msg, "the host has no data"));
		hloi_context_clear(ctx);
		s.fail_message = 0;
		CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_EIO);
		msg = hloi_context_last_error(ctx);
		CU_ASSERT(msg && strstr(msg, "infeed 'b': the infeed callback failed"));
		hloi_context_clear(ctx);

		/* a value of another shape */
		s.fail = HLOI_OK;
		hloi_literal *wrong = lit(ctx, "f32[2] {1, 2}");
		s.give = wrong;
		CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_EINVAL);
		msg = hloi_context_last_error(ctx);
		CU_ASSERT(msg && strstr(msg, "infeed 'b' reads s32[], but value 1 of the infeed queue is f32[2]"));
		hloi_context_clear(ctx);
		hloi_literal_free(wrong);
		pthread_mutex_destroy(&s.mu);
	}
	hloi_literal_free(q[0]);
	hloi_literal_free(q[1]);
	hloi_literal_free(from_callback);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

/* Options built against the header of version 3: no feeds. An outfeed's
 * value is dropped, an infeed finds the queue empty. */
static void test_version_3_options(void)
{
	static const char out_only[] =
		"HloModule o\n"
		"ENTRY main {\n"
		"  tok = token[] after-all()\n"
		"  x = f32[] constant(1)\n"
		"  o = token[] outfeed(x, tok)\n"
		"  ROOT y = f32[] add(x, x)\n"
		"}\n";
	struct {
		unsigned version;
		hloi_engine engine;
		int threads;
		uint64_t max_memory;
		const volatile int *stop;
		uint64_t max_steps;
		volatile uint64_t *progress;
	} v3 = { 3, HLOI_ENGINE_DEFAULT, 1, 0, NULL, 0, NULL };
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx, out_only);
	hloi_literal *r = NULL;
	CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, (const hloi_run_options *)(const void *)&v3, &r), HLOI_OK);
	CU_ASSERT_PTR_NOT_NULL(r);
	hloi_literal_free(r);
	hloi_module_free(m);
	m = load(ctx, feeds);
	CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, (const hloi_run_options *)(const void *)&v3, &r), HLOI_EINVAL);
	const char *msg = hloi_context_last_error(ctx);
	CU_ASSERT(msg && strstr(msg, "infeed 'a' in computation 'main' finds the infeed queue empty"));
	hloi_module_free(m);
	hloi_context_free(ctx);
}

/* Two replicas, each given a value of its own by the callback (its
 * participant id times ten): the all-reduce sums them. */
static hloi_status by_participant(void *data, hloi_context *ctx, const hloi_feed *feed, const hloi_literal **value)
{
	(void)ctx;
	hloi_literal *const *per = data;
	*value = feed->index == 0 && feed->participant < 2 ? per[feed->participant] : NULL;
	return HLOI_OK;
}

static void test_participants(void)
{
	static const char two[] =
		"HloModule two, replica_count=2\n"
		"add {\n"
		"  a = f32[] parameter(0)\n"
		"  b = f32[] parameter(1)\n"
		"  ROOT s = f32[] add(a, b)\n"
		"}\n"
		"ENTRY main {\n"
		"  tok = token[] after-all()\n"
		"  in = (f32[], token[]) infeed(tok)\n"
		"  v = f32[] get-tuple-element(in), index=0\n"
		"  ROOT s = f32[] all-reduce(v), replica_groups={}, to_apply=add\n"
		"}\n";
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx, two);
	CU_ASSERT_EQUAL_FATAL(hloi_module_participant_count(m), 2);
	hloi_literal *per[2] = { lit(ctx, "f32[] 10"), lit(ctx, "f32[] 32") };
	for (int engine = HLOI_ENGINE_REFERENCE; engine <= HLOI_ENGINE_FAST; engine++) {
		hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
		o.engine = (hloi_engine)engine;
		o.infeed_fn = by_participant;
		o.feed_data = per;
		hloi_literal *r[2] = { NULL, NULL };
		CU_ASSERT_EQUAL_FATAL(hloi_module_run_participants(m, ctx, NULL, 0, &o, r), HLOI_OK);
		for (int p = 0; p < 2; p++) {
			CU_ASSERT(*(const float *)hloi_literal_data(r[p]) == 42.0f);
			hloi_literal_free(r[p]);
		}
		/* a shared queue: each participant takes from its start */
		o.infeed_fn = NULL;
		o.infeed = per;
		o.ninfeed = 1;
		CU_ASSERT_EQUAL_FATAL(hloi_module_run_participants(m, ctx, NULL, 0, &o, r), HLOI_OK);
		for (int p = 0; p < 2; p++) {
			CU_ASSERT(*(const float *)hloi_literal_data(r[p]) == 20.0f);
			hloi_literal_free(r[p]);
		}
	}
	hloi_literal_free(per[0]);
	hloi_literal_free(per[1]);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static void test_save_list(void)
{
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_literal *v[2] = { lit(ctx, "(f32[2], s32[]) ({1, 2}, 3)"), lit(ctx, "pred[] true") };
	char path[] = "/tmp/hloi-feeds-XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL(hloi_literal_save_list(v, 2, ctx, path), HLOI_OK);
	hloi_literal **back = NULL;
	size_t n = 0;
	CU_ASSERT_EQUAL_FATAL(hloi_literal_load(&back, &n, ctx, path, NULL), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(hloi_literal_tuple_size(back[0]), 2);
	CU_ASSERT_EQUAL(*(const uint8_t *)hloi_literal_data(back[1]), 1);
	hloi_literal_array_free(back, n);
	remove(path);
	/* .npy holds one array */
	CU_ASSERT_EQUAL(hloi_literal_save_list(v, 2, ctx, "/tmp/hloi-feeds-never.npy"), HLOI_EINVAL);
	hloi_literal_free(v[0]);
	hloi_literal_free(v[1]);
	hloi_context_free(ctx);
}

/* A host recv (channel 3, in a rendezvous) whose value goes out doubled
 * on channel 4, twice. */
static const char host[] =
	"HloModule host\n"
	"ENTRY main {\n"
	"  tok = token[] after-all()\n"
	"  r = (s32[2], u32[], token[]) recv(tok), channel_id=3, is_host_transfer=true,\n"
	"    frontend_attributes={_xla_host_transfer_rendezvous=\"rv\"}\n"
	"  rd = (s32[2], token[]) recv-done(r), channel_id=3, is_host_transfer=true\n"
	"  x = s32[2] get-tuple-element(rd), index=0\n"
	"  t = token[] get-tuple-element(rd), index=1\n"
	"  y = s32[2] add(x, x)\n"
	"  s = (s32[2], u32[], token[]) send(y, t), channel_id=4, is_host_transfer=true\n"
	"  sd = token[] send-done(s), channel_id=4, is_host_transfer=true\n"
	"  again = (s32[2], u32[], token[]) send(x, sd), channel_id=4, is_host_transfer=true\n"
	"  sd2 = token[] send-done(again), channel_id=4, is_host_transfer=true\n"
	"  ROOT z = s32[2] negate(x)\n"
	"}\n";

typedef struct host_seen {
	int recvs, sends;
	int64_t channel[4];
	uint64_t index[4];
	char rendezvous[4][8];
	int32_t sent[4];      /* the first element of each value sent */
	hloi_literal *give;   /* what the recv callback gives (NULL: none) */
	hloi_status fail;
} host_seen;

static hloi_status on_host_recv(void *data, hloi_context *ctx, const hloi_host_transfer *t,
				const hloi_literal **value)
{
	host_seen *s = data;
	(void)ctx;
	CU_ASSERT_EQUAL(t->channel_id, 3);
	CU_ASSERT_STRING_EQUAL(t->rendezvous, "rv");
	CU_ASSERT_STRING_EQUAL(t->instruction, "r");
	CU_ASSERT_STRING_EQUAL(t->computation, "main");
	CU_ASSERT_EQUAL(hloi_shape_rank(t->shape), 1);
	CU_ASSERT_EQUAL(t->index, 0);
	s->recvs++;
	*value = s->give;
	return s->fail;
}

static hloi_status on_host_send(void *data, hloi_context *ctx, const hloi_host_transfer *t,
				const hloi_literal *value)
{
	host_seen *s = data;
	(void)ctx;
	if (s->sends < 4) {
		s->channel[s->sends] = t->channel_id;
		s->index[s->sends] = t->index;
		snprintf(s->rendezvous[s->sends], sizeof s->rendezvous[0], "%s", t->rendezvous);
		memcpy(&s->sent[s->sends], hloi_literal_data((hloi_literal *)value), sizeof(int32_t));
	}
	s->sends++;
	return HLOI_OK;
}

static void test_host_transfers(void)
{
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx, host);
	hloi_literal *give = lit(ctx, "s32[2] {5, 7}");
	for (int engine = HLOI_ENGINE_REFERENCE; engine <= HLOI_ENGINE_FAST; engine++) {
		host_seen s;
		memset(&s, 0, sizeof s);
		s.give = give;
		hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
		o.engine = (hloi_engine)engine;
		o.host_recv = on_host_recv;
		o.host_send = on_host_send;
		o.host_data = &s;
		hloi_literal *r = NULL;
		CU_ASSERT_EQUAL_FATAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_OK);
		const int32_t *z = hloi_literal_data(r);
		CU_ASSERT(z[0] == -5 && z[1] == -7);
		CU_ASSERT_EQUAL(s.recvs, 1);
		CU_ASSERT_EQUAL(s.sends, 2);
		CU_ASSERT(s.channel[0] == 4 && s.channel[1] == 4);
		CU_ASSERT(s.index[0] == 0 && s.index[1] == 1);
		CU_ASSERT_STRING_EQUAL(s.rendezvous[0], "");
		CU_ASSERT(s.sent[0] == 10 && s.sent[1] == 5);
		hloi_literal_free(r);

		/* no value: an error at the recv */
		s.give = NULL;
		CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_EINVAL);
		const char *msg = hloi_context_last_error(ctx);
		CU_ASSERT(msg && strstr(msg, "receives from the host on channel 3, which gives no value"));
		/* a failing callback without a message gets one */
		s.fail = HLOI_EIO;
		CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_EIO);
		msg = hloi_context_last_error(ctx);
		CU_ASSERT(msg && strstr(msg, "the host recv callback failed"));
		/* no send callback: the values are dropped */
		s.fail = HLOI_OK;
		s.give = give;
		s.sends = 0;
		o.host_send = NULL;
		CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_OK);
		CU_ASSERT_EQUAL(s.sends, 0);
		hloi_literal_free(r);
	}

	/* options of version 4 have no host callbacks: no value to receive */
	struct {
		unsigned version;
		hloi_engine engine;
		int threads;
		uint64_t max_memory;
		const volatile int *stop;
		uint64_t max_steps;
		volatile uint64_t *progress;
		hloi_literal *const *infeed;
		size_t ninfeed;
		hloi_infeed_fn infeed_fn;
		hloi_outfeed_fn outfeed;
		void *feed_data;
	} v4 = { 4, HLOI_ENGINE_DEFAULT, 1, 0, NULL, 0, NULL, NULL, 0, NULL, NULL, NULL };
	hloi_literal *r = NULL;
	CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, (const hloi_run_options *)(const void *)&v4, &r), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(r);
	hloi_literal_free(give);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static const unit_test feeds_tests[] = {
	{ "queue, then callback, and their errors", test_queue_then_callback },
	{ "version 3 options", test_version_3_options },
	{ "participants", test_participants },
	{ "several literals to one file", test_save_list },
	{ "host transfers", test_host_transfers },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "feeds", feeds_tests },
	{ NULL, NULL },
};
