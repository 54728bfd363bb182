/* hloi plan: the evaluation plan of a program — which instructions the fast
 * engine fuses into one pass, which buffers it reuses, how it walks each
 * region and the peak memory (hloi_module_plan_print). */
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "profile.h"
#include "program.h"

static const char help[] =
	"usage: hloi plan PROGRAM [options]\n"
	"\n"
	"Prints how PROGRAM will be evaluated: for the entry computation and each\n"
	"computation it calls, the steps in order. A fused region is a group of\n"
	"elementwise instructions computed together, a row or tile at a time in\n"
	"cache: its intermediates never reach memory. For each region: the\n"
	"instructions it computes, the values it reads (broadcast dims, other\n"
	"layouts), the values it writes (a new buffer, or in place over an input\n"
	"read for the last time), and the walk (rows or tiles, threads, scratch\n"
	"per thread). Then the planned peak memory: parameters + values +\n"
	"scratch.\n"
	"\n"
	"With --cost, prints instead what each step computes and moves: FLOPs,\n"
	"transcendentals and bytes (operands read and result written once; a\n"
	"fused region's inputs and outputs), its floor on this machine (FLOPs at\n"
	"the GEMM speed or bytes at the bandwidth, whichever is longer), and the\n"
	"module's: dot and convolution FLOPs at the GEMM speed, or its parameters\n"
	"and result at the bandwidth. A while loop's body counts once.\n"
	"\n"
	"Options:\n"
	"  --cost                  print the cost of each step and the floor\n"
	"  --json                  with --cost: one JSON object\n"
	MACHINE_HELP
	"  --engine ENGINE         fast (the default) or reference (no fusion)\n"
	"  --threads N             worker threads (0: the machine's cores)\n"
	"  --strict                accept exactly what XLA's verifier accepts\n"
	"  --allow-mixed-precision accept floating-point types mixed in one\n"
	"                          instruction, as XLA's verifier with\n"
	"                          allow_mixed_precision (converts made explicit)\n"
	"  --broadcast-mode MODE   xla or numpy, for modules that do not say\n"
	"  --format FORMAT         hlo, pb, pbtxt or mlir (default: by extension)\n"
	"  --max-memory SIZE       memory ceiling in bytes, with optional K, M or G\n"
	"  --color WHEN            auto, always or never, for diagnostics\n"
	"  -h, --help              show this help\n"
	"\n"
	"Example:\n"
	"  hloi plan tests/bench/layernorm.hlo\n";

typedef struct plan_args {
	int cost, json;
	profile_args prof;
} plan_args;

static const cli_opt options[] = {
	CLI_FLAG_OPTION("cost", plan_args, cost),
	CLI_FLAG_OPTION("json", plan_args, json),
	MACHINE_OPTIONS(plan_args, prof),
	CLI_SHARED_OPTION("engine", CLI_OPT_ENGINE),
	CLI_SHARED_OPTION("threads", CLI_OPT_THREADS),
	CLI_SHARED_OPTION("strict", CLI_OPT_STRICT),
	CLI_SHARED_OPTION("allow-mixed-precision", CLI_OPT_MIXED),
	CLI_SHARED_OPTION("broadcast-mode", CLI_OPT_MODE),
	CLI_SHARED_OPTION("format", CLI_OPT_FORMAT),
	CLI_SHARED_OPTION("max-memory", CLI_OPT_MAX_MEMORY),
	CLI_SHARED_OPTION("color", CLI_OPT_COLOR),
	CLI_OPTIONS_END,
};

int cmd_plan(int argc, char **argv, cli_io *io)
{
	program_opts prog;
	hloi_run_options run = HLOI_RUN_OPTIONS_INIT;
	const char *program = NULL;
	int rc;
	memset(&prog, 0, sizeof prog);
	prog.check = (hloi_check_options)HLOI_CHECK_OPTIONS_INIT;
	plan_args pa = { 0, 0, PROFILE_ARGS_INIT };
	cli_parser p = { "plan", help, options, io, &pa, &prog.check, &prog.format, &run };
	rc = cli_parse_options(&p, argc, argv);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	rc = cli_one_operand(argc, argv, io, "plan", "PROGRAM", &program);
	if (rc)
		return rc;
	hloi_context *ctx = NULL;
	hloi_module *m = NULL;
	if (hloi_context_new(&ctx) != HLOI_OK) {
		fputs("hloi: out of memory\n", io->err);
		return EXIT_RUNTIME;
	}
	rc = program_load(&m, ctx, io, program, &prog, 1);
	if (!rc) {
		hloi_status st;
		if (pa.cost) {
			hloi_machine mach;
			const char *from = NULL;
			profile_machine(&pa.prof, run.threads, &mach, &from);
			hloi_report_options r = { pa.json, 0, &mach, from };
			st = hloi_module_cost_print(m, ctx, &run, &r, io->out);
		} else {
			st = hloi_module_plan_print(m, ctx, &run, io->out);
		}
		cli_print_diagnostics(io, ctx);
		if (st != HLOI_OK) {
			if (st == HLOI_ENOMEM || st == HLOI_EIO)
				fputs(st == HLOI_ENOMEM ? "hloi plan: out of memory\n" : "hloi plan: error writing output\n",
				      io->err);
			rc = cli_exit_code(st);
		}
	}
	hloi_module_free(m);
	hloi_context_free(ctx);
	return rc;
}
