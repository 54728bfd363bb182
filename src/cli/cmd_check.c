/* hloi check: parse and type-check a program; print "ok" or diagnostics. */
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "program.h"

static const char help[] =
	"usage: hloi check PROGRAM [options]\n"
	"\n"
	"Parses and type-checks PROGRAM and prints \"ok\", or the diagnostics and\n"
	"exit code 3.\n"
	"\n"
	"Options:\n"
	"  --strict                accept exactly what XLA's verifier accepts\n"
	"  --allow-mixed-precision accept floating-point types mixed in one\n"
	"                          instruction, as XLA's verifier with\n"
	"                          allow_mixed_precision (converts made explicit)\n"
	"  --broadcast-mode MODE   xla or numpy, for modules that do not say\n"
	"  --format FORMAT         hlo, pb, pbtxt or mlir (default: by extension)\n"
	"  --max-memory SIZE       memory ceiling in bytes, with optional K, M or G\n"
	"  --replicas N            check collectives for N replicas (default: the\n"
	"                          module's replica_count, else 1)\n"
	"  --partitions M          ... and M partitions (default: num_partitions)\n"
	"  --color WHEN            auto, always or never, for diagnostics\n"
	"  -h, --help              show this help\n"
	"\n"
	"Example:\n"
	"  hloi check testdata/broadcast/rank_mismatch_hint.hlo\n";


static const cli_opt options[] = {
	CLI_SHARED_OPTION("strict", CLI_OPT_STRICT),
	CLI_SHARED_OPTION("allow-mixed-precision", CLI_OPT_MIXED),
	CLI_SHARED_OPTION("broadcast-mode", CLI_OPT_MODE),
	CLI_SHARED_OPTION("format", CLI_OPT_FORMAT),
	CLI_SHARED_OPTION("max-memory", CLI_OPT_MAX_MEMORY),
	CLI_SHARED_OPTION("color", CLI_OPT_COLOR),
	CLI_SHARED_OPTION("replicas", CLI_OPT_REPLICAS),
	CLI_SHARED_OPTION("partitions", CLI_OPT_PARTITIONS),
	CLI_OPTIONS_END,
};

/* Shared by check and fmt: the same options, a different action. */
static int parse(int argc, char **argv, cli_io *io, const char *cmd, const char *text,
		 program_opts *po, const char **program)
{
	cli_parser p = { cmd, text, options, io, NULL, &po->check, &po->format, NULL };
	int rc = cli_parse_options(&p, argc, argv);
	if (rc)
		return rc;
	return cli_one_operand(argc, argv, io, cmd, "PROGRAM", program);
}

static const char fmt_help[] =
	"usage: hloi fmt PROGRAM [options]\n"
	"\n"
	"Prints PROGRAM as canonical HLO text: one instruction per line, names\n"
	"without %, operands without their shapes, comments dropped. Parsing the\n"
	"output and printing it again gives the same text.\n"
	"\n"
	"Options:\n"
	"  --format FORMAT         hlo, pb, pbtxt or mlir (default: by extension)\n"
	"  --max-memory SIZE       memory ceiling in bytes, with optional K, M or G\n"
	"  --color WHEN            auto, always or never, for diagnostics\n"
	"  -h, --help              show this help\n"
	"\n"
	"Example:\n"
	"  hloi fmt dump.hlo > canonical.hlo\n";

static int run(int argc, char **argv, cli_io *io, int is_fmt)
{
	program_opts po;
	memset(&po, 0, sizeof po);
	po.check = (hloi_check_options)HLOI_CHECK_OPTIONS_INIT;
	const char *program = NULL;
	const char *cmd = is_fmt ? "fmt" : "check";
	int rc = parse(argc, argv, io, cmd, is_fmt ? fmt_help : help, &po, &program);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	hloi_context *ctx = NULL;
	if (hloi_context_new(&ctx) != HLOI_OK) {
		fputs("hloi: out of memory\n", io->err);
		return EXIT_RUNTIME;
	}
	hloi_module *m = NULL;
	rc = program_load(&m, ctx, io, program, &po, !is_fmt);
	if (rc == EXIT_OK) {
		if (is_fmt) {
			if (!cli_module_printable(m, io, cmd)) {
				rc = EXIT_RUNTIME;
			} else {
				hloi_status ps = hloi_module_print(m, io->out);
				if (ps != HLOI_OK) {
					fputs(ps == HLOI_ENOMEM ? "hloi fmt: out of memory printing the module\n"
								: "hloi fmt: error writing output\n",
					      io->err);
					rc = EXIT_RUNTIME;
				}
			}
		} else {
			fputs("ok\n", io->out);
		}
	}
	hloi_module_free(m);
	hloi_context_free(ctx);
	return rc;
}

int cmd_check(int argc, char **argv, cli_io *io)
{
	return run(argc, argv, io, 0);
}

int cmd_fmt(int argc, char **argv, cli_io *io)
{
	return run(argc, argv, io, 1);
}
