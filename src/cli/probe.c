/* hloi run's probes: --probe, --probe-all, --probe-dir, --max-probe-bytes
 * and --compare-with, over hloi_run_options' probe callback. */
#include "probe.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hloi/tool.h"
#include "stop.h"

/* Adds the names of one --probe value (comma-separated). */
static int add_names(probe_args *a, const char *arg, cli_io *io)
{
	size_t n = 1;
	for (const char *c = arg; *c; c++)
		n += *c == ',';
	const char **v = realloc(a->names, (a->nnames + n) * sizeof *v);
	if (!v)
		return cli_usage_error(io, "run", "out of memory");
	a->names = v;
	for (const char *c = arg;;) {
		const char *end = strchr(c, ',');
		size_t len = end ? (size_t)(end - c) : strlen(c);
		if (len == 0)
			return cli_usage_error(io, "run", "--probe '%s': an empty instruction name", arg);
		char *s = malloc(len + 1);
		if (!s)
			return cli_usage_error(io, "run", "out of memory");
		memcpy(s, c, len);
		s[len] = '\0';
		a->names[a->nnames++] = s;
		if (!end)
			return 0;
		c = end + 1;
	}
}

int probe_args_opt(cli_parser *p, const cli_opt *o, const char *arg)
{
	probe_args *a = cli_opt_field(p, o);
	if (o->code == 0)
		return add_names(a, arg, p->io);
	if (cli_parse_size(arg, &a->max_bytes) || a->max_bytes == 0)
		return cli_usage_error(p->io, "run", "invalid --max-probe-bytes '%s' (bytes, with optional K, M or G)",
				       arg);
	return 0;
}

void probe_args_release(probe_args *a)
{
	for (size_t i = 0; i < a->nnames; i++)
		free((char *)a->names[i]);
	free(a->names);
	a->names = NULL;
	a->nnames = 0;
}

/* `s` as part of a file name: characters other than letters, digits,
 * '_', '-' and '.' become '_', and so does a leading '.'. */
static void put_safe(char *out, const char *s)
{
	for (size_t i = 0; s[i]; i++) {
		char c = s[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
			 c == '-' || (c == '.' && i > 0);
		*out++ = ok ? c : '_';
	}
	*out = '\0';
}

/* r->path = DIR/NAME.npy for the value `pb` gives: NAME the instruction's
 * name; outside the entry computation DIR/COMPUTATION/NAME.N.npy, N its
 * evaluation number. Every file of a computation's directory ends in a
 * number and the entry's files in none, so no two values share a file. */
static int value_path(probe_run *r, const char *dir, const hloi_probe *pb)
{
	size_t need = strlen(dir) + strlen(pb->computation) + strlen(pb->instruction) + 48;
	if (need > r->cap) {
		char *p = realloc(r->path, need);
		if (!p)
			return -1;
		r->path = p;
		r->cap = need;
	}
	char *at = r->path + sprintf(r->path, "%s/", dir);
	if (!pb->entry) {
		put_safe(at, pb->computation);
		at += strlen(at);
		*at++ = '/';
	}
	put_safe(at, pb->instruction);
	at += strlen(at);
	if (!pb->entry)
		at += sprintf(at, ".%" PRIu64, pb->index);
	strcpy(at, ".npy");
	return 0;
}

/* Makes the directory of r->path (DIR/COMPUTATION) when missing. */
static hloi_status make_parent(probe_run *r, hloi_context *ctx)
{
	char *slash = strrchr(r->path, '/');
	*slash = '\0';
	int err = mkdir(r->path, 0777) != 0 && errno != EEXIST ? errno : 0;
	if (err) {
		char msg[256];
		snprintf(msg, sizeof msg, "cannot make the directory: %s", strerror(err));
		hloi_context_error(ctx, r->path, msg);
	}
	*slash = '/';
	return err ? HLOI_EIO : HLOI_OK;
}

/* "'name' (computation 'c', evaluation 3)" */
static void value_name(char *buf, size_t size, const hloi_probe *pb)
{
	if (pb->entry)
		snprintf(buf, size, "'%s' (computation '%s')", pb->instruction, pb->computation);
	else
		snprintf(buf, size, "'%s' (computation '%s', evaluation %" PRIu64 ")", pb->instruction, pb->computation,
			 pb->index);
}

static hloi_status oom(hloi_context *ctx)
{
	hloi_context_error(ctx, "hloi run", "out of memory");
	return HLOI_ENOMEM;
}

/* --compare-with: the value against DIR's file of it, if any. */
static hloi_status compare_value(probe_run *r, hloi_context *ctx, const hloi_probe *pb, const hloi_literal *v)
{
	struct stat sb;
	if (value_path(r, r->a->compare, pb))
		return oom(ctx);
	if (stat(r->path, &sb) != 0) {
		r->missing++;
		return HLOI_OK;
	}
	hloi_literal *want = NULL;
	/* the value's type reads the file's dtype (bf16 travels as <u2, the
	 * f8 and sub-byte types as one-byte ones) */
	hloi_status st = hloi_literal_read_npy(&want, ctx, r->path, hloi_literal_shape(v));
	if (st != HLOI_OK)
		return st;
	r->compared++;
	char a[256], b[256], what[512], worst[512] = "";
	size_t bad = 0;
	hloi_shape_to_string(hloi_literal_shape(want), 0, a, sizeof a);
	hloi_shape_to_string(hloi_literal_shape(v), 0, b, sizeof b);
	if (strcmp(a, b) == 0)
		st = hloi_literal_compare_worst(want, v, ctx, 1e-3, 1e-3, &bad, worst, sizeof worst);
	hloi_literal_free(want);
	if (st != HLOI_OK)
		return st;
	if (strcmp(a, b) == 0 && bad == 0)
		return HLOI_OK;
	r->differ++;
	if (r->first)
		return HLOI_OK;
	value_name(what, sizeof what, pb);
	size_t n = strlen(what) + strlen(r->path) + strlen(worst) + strlen(a) + strlen(b) + 256;
	r->first = malloc(n);
	if (!r->first)
		return oom(ctx);
	if (strcmp(a, b) != 0)
		snprintf(r->first, n, "%s: the value is %s, %s holds %s", what, b, r->path, a);
	else
		snprintf(r->first, n, "%s: %zu of %" PRId64 " elements differ from %s beyond abs 1e-3 and rel 1e-3; the largest difference: %s",
			 what, bad, hloi_shape_element_count(hloi_literal_shape(v)), r->path, worst);
	return HLOI_OK;
}

/* The probe callback: compares the value (--compare-with), then writes it
 * (--probe-dir). */
static hloi_status on_value(void *data, hloi_context *ctx, const hloi_probe *pb, const hloi_literal *v)
{
	probe_run *r = data;
	const hloi_shape *s = hloi_literal_shape(v);
	char text[16];
	hloi_shape_to_string(s, 0, text, sizeof text);
	if (hloi_shape_rank(s) < 0 || !strcmp(text, "token[]")) {
		r->skipped++;  /* a tuple's arrays are the values of the instructions that make them */
		return HLOI_OK;
	}
	if (r->a->compare) {
		hloi_status st = compare_value(r, ctx, pb, v);
		if (st != HLOI_OK)
			return st;
	}
	if (!r->dir)
		return HLOI_OK;
	uint64_t bytes = (uint64_t)hloi_literal_size_bytes(v);
	if (value_path(r, r->dir, pb))
		return oom(ctx);
	if (bytes > r->max_bytes - r->bytes) {
		char what[512], msg[1024];
		value_name(what, sizeof what, pb);
		snprintf(msg, sizeof msg,
			 "the value of %s (%" PRIu64 " bytes) would take the probe files past --max-probe-bytes %" PRIu64
			 " (%" PRIu64 " bytes in %" PRIu64 " files written); raise it or probe fewer instructions",
			 what, bytes, r->max_bytes, r->bytes, r->files);
		hloi_context_error(ctx, r->path, msg);
		return HLOI_EIO;
	}
	if (!pb->entry && make_parent(r, ctx) != HLOI_OK)
		return HLOI_EIO;
	cli_stop_defer();
	hloi_status st = hloi_literal_save(v, ctx, r->path);
	cli_stop_undefer();
	if (st != HLOI_OK)
		return st;
	r->bytes += bytes;
	r->files++;
	return HLOI_OK;
}

/* DIR for --probe-dir: made when missing (one level), else a directory. */
static int make_dir(const char *dir, cli_io *io)
{
	struct stat sb;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(io->err, "hloi run: --probe-dir %s: cannot make the directory: %s\n", dir, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		fprintf(io->err, "hloi run: --probe-dir %s: not a directory\n", dir);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

int probe_start(probe_run *r, const probe_args *a, hloi_module *m, size_t participants, hloi_run_options *run,
		cli_io *io)
{
	memset(r, 0, sizeof *r);
	r->a = a;
	r->io = io;
	int probing = a->nnames > 0 || a->all;
	if (!probing && !a->compare) {
		if (a->dir)
			return cli_usage_error(io, "run", "--probe-dir needs --probe NAME or --probe-all");
		return EXIT_OK;
	}
	if (a->nnames && a->all)
		return cli_usage_error(io, "run", "--probe and --probe-all together: give one");
	if (participants > 1)
		return cli_usage_error(io, "run", "probes look inside a run of one participant; the module runs as %zu",
				       participants);
	for (size_t i = 0; i < a->nnames; i++) {
		if (hloi_module_probe_matches(m, a->names[i]) > 0)
			continue;
		const char *slash = strchr(a->names[i], '/');
		if (slash)
			return cli_usage_error(io, "run",
					       "--probe %s: the module has no instruction '%s' in a computation '%.*s'",
					       a->names[i], slash + 1, (int)(slash - a->names[i]), a->names[i]);
		return cli_usage_error(io, "run", "--probe %s: the module has no instruction of that name", a->names[i]);
	}
	if (a->compare) {
		struct stat sb;
		if (stat(a->compare, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			fprintf(io->err, "hloi run: --compare-with %s: %s\n", a->compare,
				stat(a->compare, &sb) != 0 ? strerror(errno) : "not a directory");
			return EXIT_INVALID;
		}
	}
	r->dir = a->dir ? a->dir : probing ? "probes" : NULL;
	r->max_bytes = a->max_bytes ? a->max_bytes : PROBE_MAX_BYTES_DEFAULT;
	if (r->dir) {
		int rc = make_dir(r->dir, io);
		if (rc)
			return rc;
	}
	run->probe = on_value;
	run->probe_data = r;
	run->probe_names = a->nnames ? a->names : NULL;
	run->nprobe_names = a->nnames;
	return EXIT_OK;
}

int probe_finish(probe_run *r, int rc)
{
	cli_io *io = r->io;
	const probe_args *a = r->a;
	if (r->dir)
		fprintf(io->err, "hloi run: probes: %" PRIu64 " file%s written to %s (%" PRIu64 " bytes)\n", r->files,
			r->files == 1 ? "" : "s", r->dir, r->bytes);
	if (r->skipped && (r->dir || a->compare))
		fprintf(io->err, "hloi run: note: %" PRIu64 " tuple or token value%s not probed (a tuple's arrays are the values of the instructions that make them)\n",
			r->skipped, r->skipped == 1 ? "" : "s");
	if (a->compare && (rc == EXIT_OK || r->first)) {
		char missing[128] = "";
		if (r->missing)
			snprintf(missing, sizeof missing, "; %" PRIu64 " value%s without a file there, not compared",
				 r->missing, r->missing == 1 ? "" : "s");
		if (r->first) {
			fprintf(io->err, "hloi run: --compare-with %s: first difference at %s\n", a->compare, r->first);
			fprintf(io->err, "hloi run: --compare-with %s: %" PRIu64 " of %" PRIu64 " compared value%s differ%s%s\n",
				a->compare, r->differ, r->compared, r->compared == 1 ? "" : "s", r->differ == 1 ? "s" : "",
				missing);
			if (rc == EXIT_OK)
				rc = EXIT_MISMATCH;
		} else if (r->compared == 0) {
			fprintf(io->err, "hloi run: --compare-with %s: no probed value has a file there: nothing compared%s\n",
				a->compare, missing);
			rc = EXIT_INVALID;
		} else {
			fprintf(io->err, "hloi run: --compare-with %s: %s%" PRIu64 " compared value%s match%s%s\n", a->compare,
				r->compared == 1 ? "the " : "all ", r->compared, r->compared == 1 ? "" : "s",
				r->compared == 1 ? "es" : "", missing);
		}
	}
	free(r->first);
	free(r->path);
	memset(r, 0, sizeof *r);
	return rc;
}
