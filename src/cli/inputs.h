/* Inputs for a program, as `run` and `bench` take them: --input FILE per
 * parameter, --inputs FILE, --random-inputs[=SEED], or a snapshot's
 * arguments. */
#ifndef HLOI_CLI_INPUTS_H
#define HLOI_CLI_INPUTS_H

#include "cli.h"
#include "opts.h"

typedef struct input_args {
	const char **files;      /* --input, in parameter order (array owned) */
	size_t nfiles;
	const char *inputs_file; /* --inputs */
	const char *literals_file; /* --input_literals_file (RunHloModuleLiterals) */
	int random;              /* --random-inputs */
	uint64_t seed;
} input_args;

/* Handles --input/--inputs/--random-inputs for command `cmd`: `which` is 'i'
 * (--input), 'I' (--inputs), 'L' (--input_literals_file) or 'r'
 * (--random-inputs, arg may be NULL).
 * Returns 0, or a usage error's exit code. */
int input_args_option(input_args *a, int which, const char *arg, cli_io *io, const char *cmd);
/* input_args_option as a cli_opt handler (CLI_CALL): the option's code is
 * `which` and its offset that of the command's input_args. */
int input_args_opt(cli_parser *p, const cli_opt *o, const char *arg);
/* A usage error's exit code when more than one source was given, else 0. */
int input_args_validate(const input_args *a, cli_io *io, const char *cmd);
void input_args_release(input_args *a);

/* Loads the inputs for checked module m. An input whose type or dimensions
 * differ from its parameter's is an error naming the file it came from
 * (`a.npy: error: input 1 for parameter 'y' has shape s32[4], but the
 * parameter is s32[3]`). With no source given, a
 * snapshot's arguments are used; failing those, `default_random` makes
 * random inputs, else it is a usage error. Random inputs are refused before
 * they are made when they exceed `max_memory` (0: no explicit budget).
 * Prints diagnostics and returns an exit code; on success *out is an array
 * of *n literals owned by the caller (inputs_free). */
int inputs_load(hloi_literal ***out, size_t *n, const input_args *a, hloi_module *m, hloi_context *ctx,
		uint64_t max_memory, int default_random, const char *program, cli_io *io, const char *cmd);
void inputs_free(hloi_literal **lits, size_t n);

/* With random inputs: gives the checked module's elided constants (`{...}`)
 * random values from `seed` (hloi_module_fill_elided_constants) and notes
 * how many on standard error. Prints diagnostics and returns an exit code. */
int fill_elided(hloi_module *m, hloi_context *ctx, uint64_t seed, cli_io *io, const char *cmd);

#endif
