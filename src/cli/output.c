/* --output: one file, or one .npy file per element of a tuple result. */
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stop.h"

char *output_element_path(const char *path, const char *index)
{
	size_t stem = strlen(path) - (cli_has_suffix(path, ".npy") ? 4 : 0);
	size_t n = stem + strlen(index) + 6;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%.*s.%s.npy", (int)stem, path, index);
	return p;
}

typedef struct written {
	char **paths;
	size_t n;
} written;

/* Writes every array element below `lit` (a tuple) to its own file; token
 * elements, which hold no values, write none. */
static int write_elements(hloi_literal *lit, const char *path, char *index, size_t ilen, size_t icap,
			  written *w, hloi_context *ctx, cli_io *io, const char *cmd)
{
	size_t n = hloi_literal_tuple_size(lit);
	for (size_t i = 0; i < n; i++) {
		hloi_literal *el = hloi_literal_tuple_element(lit, i);
		int k = snprintf(index + ilen, icap - ilen, "%s%zu", ilen ? "." : "", i);
		if (k < 0 || (size_t)k >= icap - ilen) {
			fprintf(io->err, "hloi %s: tuple nested too deeply for --output\n", cmd);
			return EXIT_RUNTIME;
		}
		char text[16];
		hloi_shape_to_string(hloi_literal_shape(el), 0, text, sizeof text);
		if (!strcmp(text, "token[]"))
			continue;  /* a token holds no values: no file */
		if (hloi_shape_rank(hloi_literal_shape(el)) < 0) {
			int rc = write_elements(el, path, index, ilen + (size_t)k, icap, w, ctx, io, cmd);
			if (rc)
				return rc;
			continue;
		}
		char *p = output_element_path(path, index);
		char **grown = p ? realloc(w->paths, (w->n + 1) * sizeof *grown) : NULL;
		if (!grown) {
			free(p);
			fprintf(io->err, "hloi %s: out of memory\n", cmd);
			return EXIT_RUNTIME;
		}
		w->paths = grown;
		hloi_status st = hloi_literal_save(el, ctx, p);
		cli_print_diagnostics(io, ctx);
		if (st != HLOI_OK) {
			free(p);
			return cli_exit_code(st);
		}
		w->paths[w->n++] = p;
	}
	index[ilen] = '\0';
	return EXIT_OK;
}

int output_write(hloi_literal *result, const char *path, hloi_context *ctx, cli_io *io, const char *cmd)
{
	int rc;
	cli_stop_defer();
	if (hloi_shape_rank(hloi_literal_shape(result)) >= 0 || !cli_has_suffix(path, ".npy") || !strcmp(path, "-")) {
		hloi_status st = hloi_literal_save(result, ctx, path);
		cli_print_diagnostics(io, ctx);
		rc = cli_exit_code(st);
	} else {
		/* HLOI_MAX_RANK-independent: tuples nest at most 1000 deep, 21
		 * characters per level */
		size_t icap = 1000 * 21 + 1;
		char *index = malloc(icap);
		written w = { NULL, 0 };
		if (!index) {
			fprintf(io->err, "hloi %s: out of memory\n", cmd);
			rc = EXIT_RUNTIME;
		} else {
			index[0] = '\0';
			rc = write_elements(result, path, index, 0, icap, &w, ctx, io, cmd);
			if (rc == EXIT_OK && w.n == 0)
				fprintf(io->err, "hloi %s: note: the result is an empty tuple; no file written for %s\n",
					cmd, path);
		}
		for (size_t i = 0; i < w.n; i++) {
			if (rc != EXIT_OK)
				remove(w.paths[i]);
			free(w.paths[i]);
		}
		free(w.paths);
		free(index);
	}
	cli_stop_undefer();
	return rc;
}
