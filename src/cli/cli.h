/* The hloi command-line tool: one file per command, all built on the public
 * headers only (hloi.h and hloi/tool.h). Commands write to the streams in
 * cli_io so that `hloi test` can run them in-process and capture what they
 * print. */
#ifndef HLOI_CLI_CLI_H
#define HLOI_CLI_CLI_H

#include <stdio.h>

#include "hloi.h"
#include "hloi/tool.h"

/* Exit codes (doc/spec.md §7). */
enum {
	EXIT_OK = 0,
	EXIT_MISMATCH = 1,
	EXIT_USAGE = 2,
	EXIT_INVALID = 3,
	EXIT_RUNTIME = 4
};

typedef struct cli_io {
	FILE *out;
	FILE *err;
	unsigned diag_flags;  /* HLOI_DIAG_* for diagnostics */
	int in_test;          /* running under `hloi test` */
	int err_tty;          /* err is a terminal (main: before err is wrapped) */
} cli_io;

typedef int (*cli_command_fn)(int argc, char **argv, cli_io *io);

int cmd_run(int argc, char **argv, cli_io *io);
int cmd_check(int argc, char **argv, cli_io *io);
int cmd_fmt(int argc, char **argv, cli_io *io);
int cmd_layout(int argc, char **argv, cli_io *io);
int cmd_test(int argc, char **argv, cli_io *io);
int cmd_lower(int argc, char **argv, cli_io *io);
int cmd_dot(int argc, char **argv, cli_io *io);
int cmd_plan(int argc, char **argv, cli_io *io);
int cmd_bench(int argc, char **argv, cli_io *io);
int cmd_convert(int argc, char **argv, cli_io *io);

/* The memory budget of this process: hloi's allocations (text, IR,
 * inputs, values, scratch) fail past `budget` + HLOI_MEMORY_SLACK
 * (hloi_set_memory_ceiling). main sets the default budget; --max-memory
 * another. */
void cli_set_budget(uint64_t budget);

/* Finds a command by name; NULL if unknown. */
cli_command_fn cli_find_command(const char *name);

/* The exit code for a library status. */
int cli_exit_code(hloi_status st);

/* Handles --color=WHEN (auto|always|never); returns 0 or -1 on a bad value. */
int cli_set_color(cli_io *io, const char *when);

/* Prints `hloi CMD: MESSAGE` and a hint to stderr; returns EXIT_USAGE. */
int cli_usage_error(cli_io *io, const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* Prints the context's diagnostics with io's flags. */
void cli_print_diagnostics(cli_io *io, hloi_context *ctx);

/* Whether hloi_module_print will print `m`: it refuses a module whose
 * constants hold more than HLOI_PRINT_MAX_EMPTY_SUBARRAYS empty sub-arrays
 * (a proto constant f32[1099511627776,0]). If not, prints `hloi CMD: ...`
 * naming the constant with the most and returns 0. */
int cli_module_printable(const hloi_module *m, cli_io *io, const char *cmd);

/* Parses a --format value; returns -1 when unknown. */
int cli_parse_format(const char *s, hloi_format *out);

/* Parses a size with an optional K, M or G suffix; returns -1 when invalid. */
int cli_parse_size(const char *s, uint64_t *out);

/* Parses a non-negative decimal integer that fits in int64; -1 if invalid. */
int cli_parse_int(const char *s, int64_t *out);
/* Whether `s` ends in `suffix`. */
int cli_has_suffix(const char *s, const char *suffix);

/* `path` for participant p of a run of several: r.npy -> r.p1.npy (r ->
 * r.p1). malloc'd; NULL when out of memory. */
char *cli_participant_path(const char *path, size_t p);

#endif
