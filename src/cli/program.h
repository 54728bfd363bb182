/* Loading and checking a program, shared by run, check and fmt. */
#ifndef HLOI_CLI_PROGRAM_H
#define HLOI_CLI_PROGRAM_H

#include "cli.h"

typedef struct program_opts {
	hloi_format format;
	hloi_check_options check;
} program_opts;

/* Loads (and, when `check` is set, type-checks) PROGRAM. On failure prints the
 * diagnostics and returns the exit code; *out is then NULL. */
int program_load(hloi_module **out, hloi_context *ctx, cli_io *io, const char *path,
		 const program_opts *opts, int check);

#endif
