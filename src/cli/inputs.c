/* Inputs for a program, shared by `run` and `bench`. */
#include "inputs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int input_args_option(input_args *a, int which, const char *arg, cli_io *io, const char *cmd)
{
	int64_t n;
	switch (which) {
	case 'i': {
		const char **f = realloc(a->files, (a->nfiles + 1) * sizeof *f);
		if (!f)
			return cli_usage_error(io, cmd, "out of memory");
		a->files = f;
		f[a->nfiles++] = arg;
		return 0;
	}
	case 'I':
		a->inputs_file = arg;
		return 0;
	case 'L':
		a->literals_file = arg;
		return 0;
	default:
		a->random = 1;
		if (arg) {
			if (cli_parse_int(arg, &n))
				return cli_usage_error(io, cmd, "invalid seed '%s'", arg);
			a->seed = (uint64_t)n;
		}
		return 0;
	}
}

int input_args_opt(cli_parser *p, const cli_opt *o, const char *arg)
{
	return input_args_option(cli_opt_field(p, o), o->code, arg, p->io, p->cmd);
}

int input_args_validate(const input_args *a, cli_io *io, const char *cmd)
{
	if ((a->nfiles > 0) + (a->inputs_file != NULL) + (a->literals_file != NULL) + a->random > 1)
		return cli_usage_error(io, cmd,
				       "give only one of --input, --inputs, --input_literals_file and --random-inputs");
	return 0;
}

void input_args_release(input_args *a)
{
	free(a->files);
	a->files = NULL;
	a->nfiles = 0;
}

/* "1 value", "2 values". */
static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The shape as text without its layout; malloc'd (NULL when out of memory). */
static char *shape_text(const hloi_shape *s)
{
	size_t len = hloi_shape_to_string(s, 0, NULL, 0);
	char *t = len ? malloc(len + 1) : NULL;
	if (t && hloi_shape_to_string(s, 0, t, len + 1) != len) {
		free(t);
		t = NULL;
	}
	return t;
}

/* Input i against parameter i: the same type and dimensions (layouts may
 * differ; the engine converts), or within the bounds of a `<=N` parameter. The error names `where`, the file the input
 * came from. */
static hloi_status check_input(const hloi_module *m, hloi_context *ctx, size_t i, const hloi_literal *lit,
			       const char *where)
{
	char *have = shape_text(hloi_literal_shape(lit)), *want = shape_text(hloi_module_parameter_shape(m, i));
	hloi_status st = HLOI_OK;
	if (!have || !want) {
		st = HLOI_ENOMEM;
	} else if (strcmp(have, want) != 0 && !hloi_module_parameter_accepts(m, i, lit)) {
		size_t n = strlen(have) + strlen(want) + strlen(hloi_module_parameter_name(m, i)) + 96;
		char *msg = malloc(n);
		if (msg) {
			snprintf(msg, n, "input %zu for parameter '%s' has shape %s, but the parameter is %s", i,
				 hloi_module_parameter_name(m, i), have, want);
			hloi_context_error(ctx, where, msg);
		}
		free(msg);
		st = HLOI_EINVAL;
	}
	free(have);
	free(want);
	return st;
}

/* Whether parameter i is a token: its input carries nothing, so --input
 * files and --inputs values may leave it out (it then gets a token, as
 * run_hlo_module makes one). */
static int token_param(const hloi_module *m, size_t i)
{
	char *t = shape_text(hloi_module_parameter_shape(m, i));
	int tok = t && strcmp(t, "token[]") == 0;
	free(t);
	return tok;
}

static size_t token_params(const hloi_module *m)
{
	size_t n = 0;
	for (size_t i = 0; i < hloi_module_parameter_count(m); i++)
		n += (size_t)token_param(m, i);
	return n;
}

/* got[0..count) (the library's array) given for the parameters that are
 * not tokens, in order, spread over all of them in a plain array (*all,
 * freed with inputs_free) with a new token for each token parameter; got
 * is taken and freed. */
static hloi_status with_tokens(hloi_literal ***all, const hloi_module *m, hloi_context *ctx, hloi_literal **got,
			       size_t count)
{
	size_t nparams = hloi_module_parameter_count(m), k = 0;
	hloi_literal **v = calloc(nparams ? nparams : 1, sizeof *v);
	hloi_status st = v ? HLOI_OK : HLOI_ENOMEM;
	for (size_t i = 0; i < nparams && st == HLOI_OK; i++) {
		if (token_param(m, i))
			st = hloi_literal_new(&v[i], ctx, hloi_module_parameter_shape(m, i));
		else if (k < count) {
			v[i] = got[k];
			got[k++] = NULL;
		}
	}
	hloi_literal_array_free(got, count);
	if (st != HLOI_OK) {
		inputs_free(v, nparams);
		return st;
	}
	*all = v;
	return HLOI_OK;
}

void inputs_free(hloi_literal **lits, size_t n)
{
	if (!lits)
		return;
	for (size_t i = 0; i < n; i++)
		hloi_literal_free(lits[i]);
	free(lits);
}

/* doc/spec.md §10: an explicit budget is checked before anything is made or read
 * (the parameters' shapes say what the inputs will hold); the library's run
 * then counts the inputs, constants and every value in the same budget.
 * Tuple parameters are left to that check. `what`: "the random inputs" or
 * "the inputs". */
static int inputs_fit(const hloi_module *m, hloi_context *ctx, uint64_t max_memory, const char *what)
{
	size_t nparams = hloi_module_parameter_count(m);
	uint64_t need = 0;
	int over = 0;
	for (size_t i = 0; max_memory && i < nparams && !over; i++) {
		const hloi_shape *s = hloi_module_parameter_shape(m, i);
		int64_t elems = hloi_shape_buffer_elements(s), w = hloi_shape_element_bytes(s);
		if (hloi_shape_rank(s) < 0)
			continue;
		if (elems < 0 || (w > 0 && (uint64_t)elems > (UINT64_MAX - need) / (uint64_t)w))
			over = 1;
		else
			need += (uint64_t)elems * (uint64_t)w;
	}
	if (!over && (!max_memory || need <= max_memory))
		return 1;
	char msg[160];
	snprintf(msg, sizeof msg, "memory budget exceeded: %s need %s%llu bytes, budget %llu bytes", what,
		 over ? "more than " : "", over ? (unsigned long long)UINT64_MAX : (unsigned long long)need,
		 (unsigned long long)max_memory);
	hloi_context_error(ctx, NULL, msg);
	return 0;
}

/* Moves a library-owned array into a plain one the caller frees with
 * inputs_free. */
static hloi_status adopt(hloi_literal ***out, size_t *n, hloi_literal **got, size_t count)
{
	hloi_literal **lits = calloc(count ? count : 1, sizeof *lits);
	if (!lits) {
		hloi_literal_array_free(got, count);
		return HLOI_ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		lits[i] = got[i];
		got[i] = NULL;
	}
	hloi_literal_array_free(got, count);
	*out = lits;
	*n = count;
	return HLOI_OK;
}

/* One value per --input file, each read for its parameter's shape. */
static hloi_status load_files(hloi_literal ***out, size_t *n, const input_args *a, hloi_module *m,
			      hloi_context *ctx, const char *program)
{
	size_t nparams = hloi_module_parameter_count(m), ntok = token_params(m);
	/* a file per parameter, or per parameter but the tokens */
	int skip = ntok && a->nfiles == nparams - ntok;
	if (a->nfiles != nparams && !skip) {
		char msg[200], toks[64] = "";
		if (ntok)
			snprintf(toks, sizeof toks, " (%zu without its token%s)", nparams - ntok, ntok == 1 ? "" : "s");
		snprintf(msg, sizeof msg, "%zu --input %s given, but the program has %zu %s%s", a->nfiles,
			 plural(a->nfiles, "file", "files"), nparams, plural(nparams, "parameter", "parameters"), toks);
		hloi_context_error(ctx, program, msg);
		return HLOI_EINVAL;
	}
	hloi_literal **lits = calloc(nparams ? nparams : 1, sizeof *lits);
	if (!lits)
		return HLOI_ENOMEM;
	hloi_status st = HLOI_OK;
	for (size_t i = 0, f = 0; i < nparams && st == HLOI_OK; i++) {
		if (skip && token_param(m, i)) {
			st = hloi_literal_new(&lits[i], ctx, hloi_module_parameter_shape(m, i));
			continue;
		}
		hloi_literal **one = NULL;
		size_t k = 0;
		const char *file = a->files[f++];
		st = hloi_literal_load(&one, &k, ctx, file, hloi_module_parameter_shape(m, i));
		if (st == HLOI_OK && k != 1) {
			hloi_context_error(ctx, file, "must hold exactly one value (use --inputs for several)");
			st = HLOI_EINVAL;
		}
		if (st == HLOI_OK)
			st = check_input(m, ctx, i, one[0], strcmp(file, "-") ? file : "<stdin>");
		if (st == HLOI_OK) {
			lits[i] = one[0];
			one[0] = NULL;
		}
		hloi_literal_array_free(one, k);
	}
	if (st != HLOI_OK) {
		inputs_free(lits, nparams);
		return st;
	}
	*out = lits;
	*n = nparams;
	return HLOI_OK;
}

/* Copies of a snapshot's arguments (an in-place run may consume them). */
static hloi_status snapshot_inputs(hloi_literal ***out, size_t *n, const hloi_module *m)
{
	size_t k = hloi_module_snapshot_input_count(m);
	hloi_literal **lits = calloc(k ? k : 1, sizeof *lits);
	if (!lits)
		return HLOI_ENOMEM;
	for (size_t i = 0; i < k; i++) {
		if (hloi_literal_clone(&lits[i], hloi_module_snapshot_input(m, i)) != HLOI_OK) {
			inputs_free(lits, k);
			return HLOI_ENOMEM;
		}
	}
	*out = lits;
	*n = k;
	return HLOI_OK;
}

int inputs_load(hloi_literal ***out, size_t *n, const input_args *a, hloi_module *m, hloi_context *ctx,
		uint64_t max_memory, int default_random, const char *program, cli_io *io, const char *cmd)
{
	size_t nparams = hloi_module_parameter_count(m);
	hloi_literal **got = NULL;
	size_t count = 0;
	hloi_status st = HLOI_OK;
	*out = NULL;
	*n = 0;
	size_t ntok = token_params(m);
	int given = a->nfiles ? a->nfiles == nparams || (ntok && a->nfiles == nparams - ntok)
			      : a->inputs_file || a->literals_file;
	if (given && !inputs_fit(m, ctx, max_memory, "the inputs")) {
		cli_print_diagnostics(io, ctx);
		return EXIT_RUNTIME;
	}
	if (a->nfiles) {
		st = load_files(out, n, a, m, ctx, program);
	} else if (a->inputs_file || a->literals_file) {
		const char *file = a->inputs_file ? a->inputs_file : a->literals_file;
		if (a->inputs_file)
			st = hloi_literal_load(&got, &count, ctx, file, NULL);
		else
			st = hloi_run_literals_load(&got, &count, ctx, file);
		if (st == HLOI_OK && ntok && count == nparams - ntok) {
			/* the values of the parameters but the tokens */
			st = with_tokens(out, m, ctx, got, count);
			for (size_t i = 0; st == HLOI_OK && i < nparams; i++)
				st = check_input(m, ctx, i, (*out)[i], strcmp(file, "-") ? file : "<stdin>");
			if (st == HLOI_OK) {
				*n = nparams;
			} else {
				inputs_free(*out, nparams);
				*out = NULL;
			}
		} else {
			if (st == HLOI_OK && count != nparams) {
				char msg[200];
				snprintf(msg, sizeof msg, "holds %zu %s, but the program has %zu %s", count,
					 plural(count, "value", "values"), nparams, plural(nparams, "parameter", "parameters"));
				hloi_context_error(ctx, file, msg);
				st = HLOI_EINVAL;
			}
			for (size_t i = 0; st == HLOI_OK && i < count; i++)
				st = check_input(m, ctx, i, got[i], strcmp(file, "-") ? file : "<stdin>");
			if (st == HLOI_OK)
				st = adopt(out, n, got, count);
			else
				hloi_literal_array_free(got, count);
		}
	} else if (!a->random && hloi_module_snapshot_input_count(m) > 0) {
		st = snapshot_inputs(out, n, m);
		for (size_t i = 0; st == HLOI_OK && i < *n && i < nparams; i++)
			st = check_input(m, ctx, i, (*out)[i], program);
		if (st != HLOI_OK) {
			inputs_free(*out, *n);
			*out = NULL;
			*n = 0;
		}
	} else if (a->random || default_random || nparams == 0) {
		if (!inputs_fit(m, ctx, max_memory, "the random inputs")) {
			cli_print_diagnostics(io, ctx);
			return EXIT_RUNTIME;
		}
		st = hloi_module_random_inputs(&got, &count, m, ctx, a->seed);
		if (st == HLOI_OK)
			st = adopt(out, n, got, count);
		else
			hloi_literal_array_free(got, count);
	} else {
		cli_print_diagnostics(io, ctx);
		return cli_usage_error(io, cmd, "the program has %zu %s; give --input, --inputs or --random-inputs",
				       nparams, plural(nparams, "parameter", "parameters"));
	}
	cli_print_diagnostics(io, ctx);
	return st == HLOI_OK ? EXIT_OK : cli_exit_code(st);
}

int fill_elided(hloi_module *m, hloi_context *ctx, uint64_t seed, cli_io *io, const char *cmd)
{
	size_t filled = 0;
	hloi_status st = hloi_module_fill_elided_constants(m, ctx, seed, &filled);
	cli_print_diagnostics(io, ctx);
	if (st != HLOI_OK)
		return cli_exit_code(st);
	if (filled)
		fprintf(io->err, "hloi %s: note: %zu elided constant%s ({...}) filled with random values (seed %" PRIu64 ")\n",
			cmd, filled, filled == 1 ? "" : "s", seed);
	return EXIT_OK;
}
