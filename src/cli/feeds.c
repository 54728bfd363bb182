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

int feed_file_add(feed_file **v, size_t *n, const char *arg, int per_participant, const char *flag, cli_io *io)
{
	feed_file one = { SIZE_MAX, arg };
	if (per_participant && feed_participant_arg(arg, &one.participant, &one.file))
		return cli_usage_error(io, "run", "invalid %s '%s' (P:FILE, P a participant number)", flag, arg);
	feed_file *f = realloc(*v, (*n + 1) * sizeof *f);
	if (!f)
		return cli_usage_error(io, "run", "out of memory");
	*v = f;
	f[(*n)++] = one;
	return 0;
}

int feed_args_infeed(feed_args *a, const char *arg, int per_participant, cli_io *io)
{
	return feed_file_add(&a->infeed, &a->ninfeed, arg, per_participant,
			     per_participant ? "--participant-infeed" : "--infeed", io);
}

void feed_args_release(feed_args *a)
{
	free(a->infeed);
	a->infeed = NULL;
	a->ninfeed = 0;
}

/* Appends v (owned from now on) named `name`; -1 when out of memory (v is
 * then freed). */
static int list_push(feed_list *l, hloi_literal *v, const char *name)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		hloi_literal **nv = realloc(l->v, cap * sizeof *nv);
		if (nv)
			l->v = nv;
		const char **nn = nv ? realloc(l->name, cap * sizeof *nn) : NULL;
		if (nn)
			l->name = nn;
		if (!nv || !nn) {
			hloi_literal_free(v);
			return -1;
		}
		l->cap = cap;
	}
	l->v[l->n] = v;
	l->name[l->n++] = name;
	return 0;
}

static void list_free(feed_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		hloi_literal_free(l->v[i]);
	free(l->v);
	free(l->name);
	memset(l, 0, sizeof *l);
}

void feed_lists_free(feed_list *l, size_t np)
{
	for (size_t p = 0; l && p < np; p++)
		list_free(&l[p]);
	free(l);
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
		fputs("hloi run: out of memory\n", io->err);
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < a->ninfeed; i++) {
		const feed_file *ff = &a->infeed[i];
		if (ff->participant != SIZE_MAX && ff->participant >= np)
			return cli_usage_error(io, "run",
					       "--participant-infeed %zu:%s: the module runs as %zu participant%s (0 to %zu)",
					       ff->participant, ff->file, np, np == 1 ? "" : "s", np - 1);
		hloi_literal **got = NULL;
		size_t n = 0;
		hloi_status st = hloi_literal_load(&got, &n, ctx, ff->file, NULL);
		cli_print_diagnostics(io, ctx);
		if (st != HLOI_OK)
			return cli_exit_code(st);
		feed_list *l = ff->participant == SIZE_MAX ? &f->shared : &f->own[ff->participant];
		if (ff->participant != SIZE_MAX)
			f->has_own[ff->participant] = 1;
		for (size_t k = 0; k < n; k++) {
			if (list_push(l, got[k], NULL)) {
				for (size_t j = k + 1; j < n; j++)
					hloi_literal_free(got[j]);
				free(got);
				fputs("hloi run: out of memory reading the infeed values\n", io->err);
				return EXIT_RUNTIME;
			}
		}
		free(got);
	}
	/* only when no file gives infeed values at all */
	f->random = random && a->ninfeed == 0;
	return EXIT_OK;
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
	hloi_literal *r = NULL;
	uint64_t seed = f->seed ^ (0x9E3779B97F4A7C15ull * (feed->index + 1)) ^ ((uint64_t)p << 48);
	hloi_status st = hloi_literal_random(&r, ctx, feed->shape, seed);
	if (st != HLOI_OK)
		return st;
	/* only this participant's thread touches its slot */
	hloi_literal_free(f->made[p]);
	f->made[p] = r;
	*value = r;
	return HLOI_OK;
}

/* The outfeed sink: a copy of each value, by participant. */
static hloi_status outfeed_value(void *data, hloi_context *ctx, const hloi_feed *feed, const hloi_literal *value)
{
	feeds *f = data;
	size_t p = feed->participant < f->np ? feed->participant : 0;
	hloi_literal *c = NULL;
	/* each participant appends to its own list only */
	if (hloi_literal_clone(&c, value) != HLOI_OK || list_push(&f->out[p], c, feed->instruction)) {
		hloi_context_error(ctx, NULL, "out of memory keeping an outfeed value");
		return HLOI_ENOMEM;
	}
	return HLOI_OK;
}

void feeds_attach(feeds *f, hloi_run_options *run)
{
	run->infeed = NULL;
	run->ninfeed = 0;
	run->infeed_fn = infeed_value;
	run->outfeed = outfeed_value;
	run->feed_data = f;
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

int feeds_write(const feed_list *out, size_t np, const char *path, size_t partitions, hloi_context *ctx,
		cli_io *io)
{
	char who[96];
	if (partitions == 0)
		partitions = 1;
	for (size_t p = 0; p < np; p++) {
		const feed_list *l = &out[p];
		if (path) {
			char *file = np > 1 ? cli_participant_path(path, p) : NULL;
			if (np > 1 && !file) {
				fputs("hloi run: out of memory\n", io->err);
				return EXIT_RUNTIME;
			}
			cli_stop_defer();
			hloi_status st = hloi_literal_save_list(l->v, l->n, ctx, file ? file : path);
			cli_stop_undefer();
			free(file);
			cli_print_diagnostics(io, ctx);
			if (st != HLOI_OK)
				return cli_exit_code(st);
			continue;
		}
		participant_label(who, sizeof who, np, partitions, p);
		for (size_t i = 0; i < l->n; i++) {
			fprintf(io->out, "** %s%s %zu (%s) **\n", who, np > 1 ? "outfeed" : "Outfeed", i,
				l->name[i] ? l->name[i] : "?");
			hloi_status st = hloi_literal_print(l->v[i], io->out);
			if (st != HLOI_OK) {
				fputs(st == HLOI_ENOMEM ? "hloi run: cannot print an outfeed value as text; write it with --outfeed FILE\n"
							: "hloi run: error writing an outfeed value\n",
				      io->err);
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
				"hloi run: --compare: %soutfeed values: %zu from the reference engine (expected), %zu from the fast engine\n",
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
					"hloi run: --compare: %soutfeed %zu (%s): %zu elements differ between the reference engine (expected) and the fast engine%s\n",
					who, i, expected[p].name[i] ? expected[p].name[i] : "?", bad,
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
	feed_lists_free(f->out, f->np);
	free(f->own);
	free(f->has_own);
	memset(f, 0, sizeof *f);
}
