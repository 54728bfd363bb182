/* Writing a result with --output: one file, or, for a tuple written as
 * .npy, one file per array element (r.npy -> r.0.npy, r.1.npy; nested
 * tuples r.1.0.npy). */
#ifndef HLOI_CLI_OUTPUT_H
#define HLOI_CLI_OUTPUT_H

#include "cli.h"

/* Writes `result` to `path` (each file atomically, by the library's rules).
 * When one file of a tuple fails, the files this call already wrote are
 * removed. Interrupts are deferred until the files are complete. Prints
 * diagnostics; returns an exit code. */
int output_write(hloi_literal *result, const char *path, hloi_context *ctx, cli_io *io, const char *cmd);

/* The path of tuple element `index` (a dotted list, "1.0") for `path`:
 * PATH without its .npy extension + "." + index + ".npy". malloc'd. */
char *output_element_path(const char *path, const char *index);

#endif
