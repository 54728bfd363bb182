/* hloi lower: rewrite a program's implicit broadcasts into plain HLO
 * (reshape + broadcast + same-shape op, as XlaBuilder emits) that passes
 * --strict, and print it as HLO text. */
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "program.h"

static const char help[] =
	"usage: hloi lower PROGRAM [options]\n"
	"\n"
	"Type-checks PROGRAM and prints it as plain HLO that XLA accepts: every\n"
	"implicit broadcast of a binary op or compare (scalar, size-1 or\n"
	"broadcast_dimensions) becomes an explicit `reshape` that drops the\n"
	"stretched size-1 dimensions, a `broadcast`, and the op on same-shape\n"
	"operands, the way XlaBuilder lowers it. A `broadcast` that stretches\n"
	"size-1 dimensions becomes `reshape` + `broadcast`. Every shape is\n"
	"written with its layout and the broadcast_mode header attribute is\n"
	"dropped. The output passes `hloi check --strict` and gives the same\n"
	"values as PROGRAM.\n"
	"\n"
	"Options:\n"
	"  --broadcast-mode MODE   xla or numpy, for modules that do not say\n"
	"  --format FORMAT         hlo, pb, pbtxt or mlir (default: by extension)\n"
	"  --max-memory SIZE       memory ceiling in bytes, with optional K, M or G\n"
	"  --color WHEN            auto, always or never, for diagnostics\n"
	"  -h, --help              show this help\n"
	"\n"
	"Example:\n"
	"  hloi lower testdata/sources/matrix_plus_vector.hlo > plain.hlo\n";

static const cli_opt options[] = {
	CLI_SHARED_OPTION("broadcast-mode", CLI_OPT_MODE),
	CLI_SHARED_OPTION("format", CLI_OPT_FORMAT),
	CLI_SHARED_OPTION("max-memory", CLI_OPT_MAX_MEMORY),
	CLI_SHARED_OPTION("color", CLI_OPT_COLOR),
	CLI_OPTIONS_END,
};

/* Returns 0 with *program set, -1 after --help, or an exit code. */
static int parse(int argc, char **argv, cli_io *io, program_opts *po, const char **program)
{
	cli_parser p = { "lower", help, options, io, NULL, &po->check, &po->format, NULL };
	int rc = cli_parse_options(&p, argc, argv);
	if (rc)
		return rc;
	return cli_one_operand(argc, argv, io, "lower", "PROGRAM", program);
}

int cmd_lower(int argc, char **argv, cli_io *io)
{
	program_opts po;
	memset(&po, 0, sizeof po);
	po.check = (hloi_check_options)HLOI_CHECK_OPTIONS_INIT;
	const char *program = NULL;
	int rc = parse(argc, argv, io, &po, &program);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	hloi_context *ctx = NULL;
	if (hloi_context_new(&ctx) != HLOI_OK) {
		fputs("hloi: out of memory\n", io->err);
		return EXIT_RUNTIME;
	}
	hloi_module *m = NULL;
	rc = program_load(&m, ctx, io, program, &po, 1);
	if (rc != EXIT_OK)
		goto cleanup;
	hloi_status st = hloi_module_lower(m, ctx);
	cli_print_diagnostics(io, ctx);
	if (st != HLOI_OK) {
		rc = cli_exit_code(st);
		goto cleanup;
	}
	if (!cli_module_printable(m, io, "lower")) {
		rc = EXIT_RUNTIME;
		goto cleanup;
	}
	st = hloi_module_print(m, io->out);
	if (st != HLOI_OK) {
		fputs(st == HLOI_ENOMEM ? "hloi lower: out of memory\n" : "hloi lower: error writing output\n",
		      io->err);
		rc = EXIT_RUNTIME;
	}
cleanup:
	hloi_module_free(m);
	hloi_context_free(ctx);
	return rc;
}
