/* The options of profiles and costs that `hloi run`, `bench` and `plan`
 * share (--profile, --trace, --top, --peak-gflops, --bandwidth), the
 * machine file `hloi bench --calibrate` writes, and the reports. */
#ifndef HLOI_CLI_PROFILE_H
#define HLOI_CLI_PROFILE_H

#include "cli.h"
#include "hloi/tool.h"
#include "opts.h"

typedef struct profile_args {
	int profile;          /* --profile given */
	int json;             /* --profile=json */
	const char *trace;    /* --trace FILE */
	int64_t top;          /* --top N (-1: not given) */
	double gflops, gbps;  /* --peak-gflops, --bandwidth (0: not given) */
} profile_args;

#define PROFILE_ARGS_INIT { 0, 0, NULL, -1, 0, 0 }

/* The option handler of the table entries below (o->code says which). */
int profile_args_opt(cli_parser *p, const cli_opt *o, const char *arg);

enum { PROFILE_OPT_PROFILE = 1, PROFILE_OPT_TRACE, PROFILE_OPT_TOP, PROFILE_OPT_GFLOPS, PROFILE_OPT_GBPS };

#define PROFILE_OPTIONS(type, field)                                                                          \
	CLI_CALL_FIELD_OPTION("profile", CLI_OPTIONAL_ARG, profile_args_opt, PROFILE_OPT_PROFILE, type, field), \
	CLI_CALL_FIELD_OPTION("trace", CLI_REQUIRED_ARG, profile_args_opt, PROFILE_OPT_TRACE, type, field),     \
	CLI_CALL_FIELD_OPTION("top", CLI_REQUIRED_ARG, profile_args_opt, PROFILE_OPT_TOP, type, field),         \
	MACHINE_OPTIONS(type, field)
#define MACHINE_OPTIONS(type, field)                                                                           \
	CLI_CALL_FIELD_OPTION("peak-gflops", CLI_REQUIRED_ARG, profile_args_opt, PROFILE_OPT_GFLOPS, type, field), \
	CLI_CALL_FIELD_OPTION("bandwidth", CLI_REQUIRED_ARG, profile_args_opt, PROFILE_OPT_GBPS, type, field)

/* The help lines of those options. */
#define PROFILE_HELP                                                                                   \
	"  --profile[=json]        time every instruction and fused region (calls and\n"                \
	"                          loop bodies included) and print them slowest first,\n"               \
	"                          with FLOPs, bytes, rates and their fraction of the\n"                \
	"                          machine's limits, totals by opcode and the floor\n"                  \
	"  --top N                 the profile's slowest N steps (default 20; 0: all)\n"                \
	"  --trace FILE.json       write the steps as a Chrome trace (Perfetto,\n"                      \
	"                          chrome://tracing): a process per participant\n"                      \
	MACHINE_HELP
#define MACHINE_HELP                                                                                   \
	"  --peak-gflops X         the machine's GEMM speed, GFLOP/s (default: from\n"                  \
	"                          `hloi bench --calibrate`, else unknown)\n"                           \
	"  --bandwidth X           the machine's memory bandwidth, GB/s (the same)\n"

/* The machine's limits for a run on `threads` threads (0: the cores): the
 * flags, else the calibration file's line for that thread count (or the
 * nearest), else unknown (zeros). *from names where they came from. */
void profile_machine(const profile_args *a, int threads, hloi_machine *m, const char **from);

/* Prints p's report to f (json: as JSON) and writes --trace; 0 or an exit
 * code after a message. */
int profile_finish(const profile_args *a, hloi_profile *p, hloi_module *m, int threads, FILE *f, cli_io *io,
		   const char *cmd);

/* hloi bench --calibrate: measures and stores the machine's limits on
 * `threads` threads, and prints them. */
int profile_calibrate(int threads, int json, cli_io *io);

#endif
