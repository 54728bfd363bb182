/* Infeed and outfeed for `run` (feeds.h). */
#include "feeds.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stop.h"

int feed_participant_arg(const char *arg, size_t *p, const char **file)
{
	const char *colon = strchr(arg, ':');
	if (!colon || colon == arg || !colon[1])
		return -1;
	size_t v = 0;
	for (const char *c = arg; c < colon; c++) {
		if (*c < '0' || *c > '9' || v > (SIZE_MAX - 9) / 10)
			return -1;
		v = v * 10 + (size_t)(*c - '0');
	}
	*p = v;
	*file = colon + 1;
	return 0;
}

/* The command named in a feed_args' messages. */
static const char *cmd_of(const feed_args *a)
{
	return a && a->cmd ? a->cmd : "run";
}

int feed_file_add(feed_file **v, size_t *n, const char *arg, int per_participant, const char *flag,
		  const char *cmd, cli_io *io)
{
	feed_file one = { SIZE_MAX, arg };
	if (per_participant && feed_participant_arg(arg, &one.participant, &one.file))
		return cli_usage_error(io, cmd, "invalid %s '%s' (P:FILE, P a participant number)", flag, arg);
	feed_file *f = realloc(*v, (*n + 1) * sizeof *f);
	if (!f)
		return cli_usage_error(io, cmd, "out of memory");
	*v = f;
	f[(*n)++] = one;
	return 0;
}

int feed_args_infeed(feed_args *a, const char *arg, int per_participant, cli_io *io)
{
	return feed_file_add(&a->infeed, &a->ninfeed, arg, per_participant,
			     per_participant ? "--participant-infeed" : "--infeed", cmd_of(a), io);
}

int feed_args_host(feed_args *a, const char *arg, int send, cli_io *io)
{
	const char *flag = send ? "--host-send" : "--host-recv";
	feed_file one;
	if (feed_participant_arg(arg, &one.participant, &one.file) || one.participant > INT64_MAX)
		return cli_usage_error(io, cmd_of(a), "invalid %s '%s' (CH:FILE, CH a channel_id)", flag, arg);
	return send ? feed_file_add(&a->host_send, &a->nhost_send, arg, 1, flag, cmd_of(a), io)
		    : feed_file_add(&a->host_recv, &a->nhost_recv, arg, 1, flag, cmd_of(a), io);
}

int feed_args_infeed_opt(cli_parser *p, const cli_opt *o, const char *arg)
{
	return feed_args_infeed(cli_opt_field(p, o), arg, o->code, p->io);
}

int feed_args_host_opt(cli_parser *p, const cli_opt *o, const char *arg)
{
	return feed_args_host(cli_opt_field(p, o), arg, o->code, p->io);
}

void feed_args_release(feed_args *a)
{
	free(a->infeed);
	free(a->host_recv);
	free(a->host_send);
	a->infeed = a->host_recv = a->host_send = NULL;
	a->ninfeed = a->nhost_recv = a->nhost_send = 0;
}

/* Appends v (owned from now on) named `name`, of host send channel
 * `channel` (-1: an outfeed's or an input's); -1 when out of memory (v is
 * then freed). */
static int list_push(feed_list *l, hloi_literal *v, const char *name, int64_t channel)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		hloi_literal **nv = realloc(l->v, cap * sizeof *nv);
		if (nv)
			l->v = nv;
		const char **nn = nv ? realloc(l->name, cap * sizeof *nn) : NULL;
		if (nn)
			l->name = nn;
		int64_t *nc = nn ? realloc(l->channel, cap * sizeof *nc) : NULL;
		if (nc)
			l->channel = nc;
		if (!nv || !nn || !nc) {
			hloi_literal_free(v);
			return -1;
		}
		l->cap = cap;
	}
	l->v[l->n] = v;
	l->channel[l->n] = channel;
	l->name[l->n++] = name;
	return 0;
}

static void list_free(feed_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		hloi_literal_free(l->v[i]);
	free(l->v);
	free(l->name);
	free(l->channel);
	memset(l, 0, sizeof *l);
}

void feed_lists_free(feed_list *l, size_t np)
{
	for (size_t p = 0; l && p < np; p++)
		list_free(&l[p]);
	free(l);
}

/* Appends the values of `file` (literal text or .npy) to l. Returns an
 * exit code. */
static int load_into(feed_list *l, const char *file, const char *cmd, hloi_context *ctx, cli_io *io)
{
	hloi_literal **got = NULL;
	size_t n = 0;
	hloi_status st = hloi_literal_load(&got, &n, ctx, file, NULL);
	cli_print_diagnostics(io, ctx);
	if (st != HLOI_OK)
		return cli_exit_code(st);
	for (size_t k = 0; k < n; k++) {
		if (list_push(l, got[k], NULL, -1)) {
			for (size_t j = k + 1; j < n; j++)
				hloi_literal_free(got[j]);
			free(got);
			fprintf(io->err, "hloi %s: out of memory reading %s\n", cmd, file);
			return EXIT_RUNTIME;
		}
	}
	free(got);
	return EXIT_OK;
}

int feeds_load(feeds *f, const feed_args *a, size_t np, int random, uint64_t seed, hloi_context *ctx,
	       cli_io *io)
{
	memset(f, 0, sizeof *f);
	f->np = np;
	f->random = random;
	f->seed = seed;
	f->own = calloc(np, sizeof *f->own);
	f->has_own = calloc(np, 1);
	f->out = calloc(np, sizeof *f->out);
	f->made = calloc(np, sizeof *f->made);
	if (!f->own || !f->has_own || !f->out || !f->made) {
		fprintf(io->err, "hloi %s: out of memory\n", cmd_of(a));
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < a->ninfeed; i++) {
		const feed_file *ff = &a->infeed[i];
		if (ff->participant != SIZE_MAX && ff->participant >= np)
			return cli_usage_error(io, cmd_of(a),
					       "--participant-infeed %zu:%s: the module runs as %zu participant%s (0 to %zu)",
					       ff->participant, ff->file, np, np == 1 ? "" : "s", np - 1);
		feed_list *l = ff->participant == SIZE_MAX ? &f->shared : &f->own[ff->participant];
		if (ff->participant != SIZE_MAX)
			f->has_own[ff->participant] = 1;
		int rc = load_into(l, ff->file, cmd_of(a), ctx, io);
		if (rc)
			return rc;
	}
	/* only when no file gives infeed values at all */
	f->random = random && a->ninfeed == 0;
	f->host_random = random;
	for (size_t i = 0; i < a->nhost_recv; i++) {
		const feed_file *ff = &a->host_recv[i];
		int64_t ch = (int64_t)ff->participant;
		size_t k = 0;
		while (k < f->nhost && f->host_channel[k] != ch)
			k++;
		if (k == f->nhost) {
			feed_list *nl = realloc(f->host, (k + 1) * sizeof *nl);
			if (nl)
				f->host = nl;
			int64_t *nc = nl ? realloc(f->host_channel, (k + 1) * sizeof *nc) : NULL;
			if (!nc) {
				fprintf(io->err, "hloi %s: out of memory\n", cmd_of(a));
				return EXIT_RUNTIME;
			}
			f->host_channel = nc;
			memset(&f->host[k], 0, sizeof f->host[k]);
			f->host_channel[k] = ch;
			f->nhost++;
		}
		int rc = load_into(&f->host[k], ff->file, cmd_of(a), ctx, io);
		if (rc)
			return rc;
	}
	return EXIT_OK;
}

/* A random value of `shape` for participant p, kept in its slot until the
 * next (the library copies it before it asks again). */
static hloi_status random_value(feeds *f, hloi_context *ctx, size_t p, const hloi_shape *shape, uint64_t seed,
				const hloi_literal **value)
{
	hloi_literal *r = NULL;
	hloi_status st = hloi_literal_random(&r, ctx, shape, seed);
	if (st != HLOI_OK)
		return st;
	/* only this participant's thread touches its slot */
	hloi_literal_free(f->made[p]);
	f->made[p] = r;
	*value = r;
	return HLOI_OK;
}

/* The infeed callback: participant p's own queue, else the shared one,
 * else (--random-inputs) a random value drawn from the seed, the
 * participant and the position in its queue. */
static hloi_status infeed_value(void *data, hloi_context *ctx, const hloi_feed *feed, const hloi_literal **value)
{
	feeds *f = data;
	size_t p = feed->participant < f->np ? feed->participant : 0;
	const feed_list *q = f->has_own[p] ? &f->own[p] : &f->shared;
	*value = NULL;
	if (feed->index < q->n) {
		*value = q->v[feed->index];
		return HLOI_OK;
	}
	if (!f->random || f->has_own[p] || f->shared.n)
		return HLOI_OK;
	uint64_t seed = f->seed ^ (0x9E3779B97F4A7C15ull * (feed->index + 1)) ^ ((uint64_t)p << 48);
	return random_value(f, ctx, p, feed->shape, seed, value);
}

/* Keeps a copy of a value an outfeed or host send gives, by participant. */
static hloi_status keep(feeds *f, hloi_context *ctx, size_t participant, const char *name, int64_t channel,
			const hloi_literal *value)
{
	size_t p = participant < f->np ? participant : 0;
	hloi_literal *c = NULL;
	/* each participant appends to its own list only */
	if (hloi_literal_clone(&c, value) != HLOI_OK || list_push(&f->out[p], c, name, channel)) {
		hloi_context_error(ctx, name, "out of memory keeping the value this instruction gives");
		return HLOI_ENOMEM;
	}
	return HLOI_OK;
}

/* The outfeed sink. */
static hloi_status outfeed_value(void *data, hloi_context *ctx, const hloi_feed *feed, const hloi_literal *value)
{
	return keep(data, ctx, feed->participant, feed->instruction, -1, value);
}

/* The host recv callback: the --host-recv values of the channel (every
 * participant from the first), else (--random-inputs) a random value
 * drawn from the seed, the participant, the channel and the position. */
static hloi_status host_recv_value(void *data, hloi_context *ctx, const hloi_host_transfer *t,
				   const hloi_literal **value)
{
	feeds *f = data;
	size_t p = t->participant < f->np ? t->participant : 0;
	*value = NULL;
	for (size_t k = 0; k < f->nhost; k++) {
		if (f->host_channel[k] != t->channel_id)
			continue;
		if (t->index < f->host[k].n)
			*value = f->host[k].v[t->index];
		return HLOI_OK;
	}
	if (!f->host_random)
		return HLOI_OK;
	uint64_t seed = f->seed ^ (0xC2B2AE3D27D4EB4Full * (t->index + 1)) ^ ((uint64_t)p << 48) ^
			(0x165667B19E3779F9ull * (uint64_t)(t->channel_id + 1));
	return random_value(f, ctx, p, t->shape, seed, value);
}

/* The host send sink. */
static hloi_status host_send_value(void *data, hloi_context *ctx, const hloi_host_transfer *t,
				   const hloi_literal *value)
{
	return keep(data, ctx, t->participant, t->instruction, t->channel_id < 0 ? 0 : t->channel_id, value);
}

void feeds_attach(feeds *f, hloi_run_options *run)
{
	run->infeed = NULL;
	run->ninfeed = 0;
	run->infeed_fn = infeed_value;
	run->outfeed = outfeed_value;
	run->feed_data = f;
	run->host_recv = host_recv_value;
	run->host_send = host_send_value;
	run->host_data = f;
}

feed_list *feeds_take_outfeed(feeds *f)
{
	feed_list *fresh = calloc(f->np, sizeof *fresh);
	if (!fresh)
		return NULL;
	feed_list *got = f->out;
	f->out = fresh;
	return got;
}

static void participant_label(char *buf, size_t size, size_t np, size_t partitions, size_t p)
{
	if (np > 1)
		snprintf(buf, size, "Replica %zu, partition %zu: ", p / partitions, p % partitions);
	else
		buf[0] = 0;
}

/* The --host-send file of `channel` (the last given), or NULL. */
static const char *host_send_file(const feed_args *a, int64_t channel)
{
	const char *file = NULL;
	for (size_t i = 0; i < a->nhost_send; i++)
		if ((int64_t)a->host_send[i].participant == channel)
			file = a->host_send[i].file;
	return file;
}

/* Whether value i of l prints to standard output (no file takes it). */
static int printed(const feed_list *l, size_t i, const feed_args *a)
{
	return l->channel[i] < 0 ? !a->outfeed : !host_send_file(a, l->channel[i]);
}

int feeds_printed(const feed_list *out, size_t np, const feed_args *a)
{
	for (size_t p = 0; out && p < np; p++)
		for (size_t i = 0; i < out[p].n; i++)
			if (printed(&out[p], i, a))
				return 1;
	return 0;
}

/* Writes participant p's values of `channel` (-1: the outfeeds') to path
 * (path.pN when np > 1). Returns an exit code. */
static int save_channel(const feed_list *l, int64_t channel, const char *path, size_t np, size_t p,
			hloi_context *ctx, cli_io *io)
{
	char *file = np > 1 ? cli_participant_path(path, p) : NULL;
	hloi_literal **v = malloc((l->n ? l->n : 1) * sizeof *v);
	if ((np > 1 && !file) || !v) {
		free(file);
		free(v);
		fputs("hloi run: out of memory\n", io->err);
		return EXIT_RUNTIME;
	}
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->channel[i] == channel)
			v[n++] = l->v[i];
	cli_stop_defer();
	hloi_status st = hloi_literal_save_list(v, n, ctx, file ? file : path);
	cli_stop_undefer();
	free(file);
	free(v);
	cli_print_diagnostics(io, ctx);
	return st != HLOI_OK ? cli_exit_code(st) : EXIT_OK;
}

int feeds_write(const feed_list *out, size_t np, const feed_args *a, size_t partitions, hloi_context *ctx,
		cli_io *io)
{
	char who[96];
	if (partitions == 0)
		partitions = 1;
	for (size_t p = 0; p < np; p++) {
		const feed_list *l = &out[p];
		int rc = a->outfeed ? save_channel(l, -1, a->outfeed, np, p, ctx, io) : EXIT_OK;
		for (size_t i = 0; i < a->nhost_send && rc == EXIT_OK; i++)
			if (host_send_file(a, (int64_t)a->host_send[i].participant) == a->host_send[i].file)
				rc = save_channel(l, (int64_t)a->host_send[i].participant, a->host_send[i].file, np, p,
						  ctx, io);
		if (rc)
			return rc;
		participant_label(who, sizeof who, np, partitions, p);
		size_t outfeeds = 0, sends = 0;
		for (size_t i = 0; i < l->n; i++) {
			int host = l->channel[i] >= 0;
			size_t k = host ? sends++ : outfeeds++;
			if (!printed(l, i, a))
				continue;
			if (host)
				fprintf(io->out, "** %s%s %zu (%s, channel %lld) **\n", who, np > 1 ? "host send" : "Host send",
					k, l->name[i] ? l->name[i] : "?", (long long)l->channel[i]);
			else
				fprintf(io->out, "** %s%s %zu (%s) **\n", who, np > 1 ? "outfeed" : "Outfeed", k,
					l->name[i] ? l->name[i] : "?");
			hloi_status st = hloi_literal_print(l->v[i], io->out);
			if (st != HLOI_OK) {
				fprintf(io->err,
					st == HLOI_ENOMEM ? "hloi run: cannot print a%s value as text; write it with %s\n"
							  : "hloi run: error writing a%s value\n",
					host ? " host send's" : "n outfeed", host ? "--host-send CH:FILE" : "--outfeed FILE");
				return EXIT_RUNTIME;
			}
		}
	}
	return EXIT_OK;
}

int feeds_compare(const feed_list *expected, const feed_list *actual, size_t np, size_t partitions,
		  hloi_context *ctx, cli_io *io)
{
	char who[96];
	int mismatch = 0;
	if (partitions == 0)
		partitions = 1;
	for (size_t p = 0; p < np; p++) {
		participant_label(who, sizeof who, np, partitions, p);
		if (expected[p].n != actual[p].n) {
			fprintf(io->err,
				"hloi run: --compare: %soutfeed and host send values: %zu from the reference engine (expected), %zu from the fast engine\n",
				who, expected[p].n, actual[p].n);
			mismatch = 1;
			continue;
		}
		for (size_t i = 0; i < expected[p].n; i++) {
			size_t bad = 0;
			hloi_status st = hloi_literal_compare(expected[p].v[i], actual[p].v[i], ctx, 1e-3, 1e-3, io->err,
							      10, &bad);
			cli_print_diagnostics(io, ctx);
			if (st != HLOI_OK)
				return cli_exit_code(st);
			if (bad) {
				fprintf(io->err,
					"hloi run: --compare: %s%s %zu (%s): %zu elements differ between the reference engine (expected) and the fast engine%s\n",
					who, expected[p].channel[i] < 0 ? "outfeed" : "host send", i, expected[p].name[i] ? expected[p].name[i] : "?", bad,
					bad > 10 ? " (first 10 shown)" : "");
				mismatch = 1;
			}
		}
	}
	return mismatch ? EXIT_MISMATCH : EXIT_OK;
}

void feeds_free(feeds *f)
{
	list_free(&f->shared);
	for (size_t p = 0; f->own && p < f->np; p++)
		list_free(&f->own[p]);
	for (size_t p = 0; f->made && p < f->np; p++)
		hloi_literal_free(f->made[p]);
	free(f->made);
	for (size_t k = 0; k < f->nhost; k++)
		list_free(&f->host[k]);
	free(f->host);
	free(f->host_channel);
	feed_lists_free(f->out, f->np);
	free(f->own);
	free(f->has_own);
	memset(f, 0, sizeof *f);
}
