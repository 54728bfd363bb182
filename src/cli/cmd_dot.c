/* hloi dot: print a program's computation graph as Graphviz DOT. The graph
 * is printed even when the type check fails (from what was written), with
 * the diagnostics and exit code 3. */
#include <string.h>

#include "cli.h"
#include "opts.h"

static const char help[] =
	"usage: hloi dot PROGRAM [options]\n"
	"\n"
	"Prints the computation graph of PROGRAM as Graphviz DOT: one node per\n"
	"instruction with its opcode, shape and layout; edges from operands to\n"
	"their users, labelled where the operand is broadcast (its\n"
	"broadcast_dimensions, or \"degenerate\" / \"scalar\" when it is stretched\n"
	"implicitly; dimensions={...} into a broadcast); called and fused\n"
	"computations as clusters with a dashed edge to their root. The ROOT\n"
	"node has a bold border, parameters are ellipses, constants filled boxes.\n"
	"The program is type-checked first; if that fails the graph shows the\n"
	"written shapes and the diagnostics are printed too (exit code 3).\n"
	"\n"
	"Options:\n"
	"  --plan                  draw the fused regions of the evaluation plan as\n"
	"                          clusters (see `hloi plan`; the program must check)\n"
	"  --engine ENGINE         with --plan: fast (the default) or reference\n"
	"  --threads N             with --plan: worker threads (0: the machine's cores)\n"
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
	"  hloi dot testdata/sources/matrix_plus_vector.hlo | dot -Tpng -o graph.png\n";


typedef struct dot_args {
	int plan; /* --plan */
} dot_args;

static const cli_opt options[] = {
	CLI_FLAG_OPTION("plan", dot_args, plan),
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

/* Returns 0 with *program set, -1 after --help, or an exit code. */
static int parse(int argc, char **argv, cli_io *io, hloi_format *format, hloi_check_options *check,
		 hloi_run_options *run, int *plan, const char **program)
{
	dot_args a = { 0 };
	cli_parser p = { "dot", help, options, io, &a, check, format, run };
	int rc = cli_parse_options(&p, argc, argv);
	*plan = a.plan;
	if (rc)
		return rc;
	return cli_one_operand(argc, argv, io, "dot", "PROGRAM", program);
}

int cmd_dot(int argc, char **argv, cli_io *io)
{
	hloi_format format = HLOI_FORMAT_AUTO;
	hloi_check_options opts = HLOI_CHECK_OPTIONS_INIT;
	hloi_run_options run = HLOI_RUN_OPTIONS_INIT;
	const char *program = NULL;
	int plan = 0;
	int rc = parse(argc, argv, io, &format, &opts, &run, &plan, &program);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	hloi_context *ctx = NULL;
	if (hloi_context_new(&ctx) != HLOI_OK) {
		fputs("hloi: out of memory\n", io->err);
		return EXIT_RUNTIME;
	}
	hloi_module *m = NULL;
	hloi_status st = hloi_module_load(&m, ctx, program, format);
	if (st != HLOI_OK) {
		cli_print_diagnostics(io, ctx);
		rc = cli_exit_code(st);
		goto cleanup;
	}
	hloi_status check = hloi_module_check(m, ctx, &opts);
	cli_print_diagnostics(io, ctx);
	if (check == HLOI_ENOMEM) {
		rc = cli_exit_code(check);
		goto cleanup;
	}
	if (plan && check != HLOI_OK) {
		rc = cli_exit_code(check);  /* a plan needs the checked program */
		goto cleanup;
	}
	st = plan ? hloi_module_print_dot_plan(m, &run, io->out) : hloi_module_print_dot(m, io->out);
	if (st != HLOI_OK) {
		fputs(st == HLOI_ENOMEM ? "hloi dot: out of memory\n" : "hloi dot: error writing output\n",
		      io->err);
		rc = EXIT_RUNTIME;
		goto cleanup;
	}
	rc = cli_exit_code(check);
cleanup:
	hloi_module_free(m);
	hloi_context_free(ctx);
	return rc;
}
