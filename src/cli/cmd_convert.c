/* hloi convert: rewrite a program between HLO text, binary proto and proto
 * text format (doc/spec.md §6). */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "opts.h"

static const char help[] =
	"usage: hloi convert IN OUT [options]\n"
	"\n"
	"Reads the program IN and writes it to OUT as HLO text (.hlo), an\n"
	"XLA-compatible HloModuleProto (.pb) or the same in protobuf text format\n"
	"(.pbtxt). IN may also be an HloProto or HloSnapshot. Formats come from\n"
	"the file extensions; - is standard input or output. Like fmt, convert\n"
	"does not type-check: a program hloi cannot run converts all the same.\n"
	"\n"
	"Options:\n"
	"  --format FORMAT         hlo, pb, pbtxt or mlir: the format of IN\n"
	"                          (default: by extension, else by content)\n"
	"  --to FORMAT             hlo, pb or pbtxt: the format of OUT\n"
	"                          (default: by extension; hlo for -)\n"
	"  --color WHEN            auto, always or never, for diagnostics\n"
	"  --max-memory SIZE       memory ceiling in bytes, with optional K, M or G\n"
	"  -h, --help              show this help\n"
	"\n"
	"Example:\n"
	"  hloi convert dump.pb dump.hlo\n"
	"  hloi convert program.hlo program.pb\n"
	"  hloi convert program.pbtxt - --to hlo\n";

/* --to FORMAT: the format written (AUTO: by OUT's extension). */
static int to_option(cli_parser *p, const cli_opt *o, const char *arg)
{
	hloi_format *to = cli_opt_field(p, o);
	if (cli_parse_format(arg, to) || *to == HLOI_FORMAT_AUTO)
		return cli_usage_error(p->io, "convert", "invalid --to '%s' (hlo, pb or pbtxt)", arg);
	return 0;
}

static const cli_opt options[] = {
	CLI_SHARED_OPTION("format", CLI_OPT_FORMAT),
	CLI_CALL_OPTION("to", CLI_REQUIRED_ARG, to_option, 0),
	CLI_SHARED_OPTION("color", CLI_OPT_COLOR),
	CLI_SHARED_OPTION("max-memory", CLI_OPT_MAX_MEMORY),
	CLI_OPTIONS_END,
};

int cmd_convert(int argc, char **argv, cli_io *io)
{
	hloi_format from = HLOI_FORMAT_AUTO, to = HLOI_FORMAT_AUTO;
	cli_parser p = { "convert", help, options, io, &to, NULL, &from, NULL };
	int e = cli_parse_options(&p, argc, argv);
	if (e)
		return e < 0 ? EXIT_OK : e;
	if (argc - optind < 2)
		return cli_usage_error(io, "convert", "missing %s", argc - optind == 0 ? "IN and OUT" : "OUT");
	if (argc - optind > 2)
		return cli_usage_error(io, "convert", "unexpected argument '%s'", argv[optind + 2]);
	const char *in = argv[optind], *out = argv[optind + 1];
	if (to == HLOI_FORMAT_AUTO) {
		if (cli_has_suffix(out, ".pb"))
			to = HLOI_FORMAT_PB;
		else if (cli_has_suffix(out, ".pbtxt"))
			to = HLOI_FORMAT_PBTXT;
		else if (cli_has_suffix(out, ".hlo") || cli_has_suffix(out, ".txt") || strcmp(out, "-") == 0)
			to = HLOI_FORMAT_HLO;
		else
			return cli_usage_error(io, "convert",
					       "cannot tell the format of '%s'; name it .hlo, .pb or .pbtxt, or pass --to",
					       out);
	}

	hloi_context *ctx = NULL;
	if (hloi_context_new(&ctx) != HLOI_OK) {
		fputs("hloi: out of memory\n", io->err);
		return EXIT_RUNTIME;
	}
	hloi_module *m = NULL;
	hloi_context *infer = NULL;
	hloi_status st = hloi_module_load(&m, ctx, in, from);
	if (st == HLOI_OK && to != HLOI_FORMAT_HLO && !hloi_module_shapes_written(m)) {
		/* A proto has every instruction's shape: the ones the text left
		 * out are inferred (what the checker says stays aside unless the
		 * writer then lacks a shape). */
		hloi_check_options opts = HLOI_CHECK_OPTIONS_INIT;
		opts.shapes_only = 1;
		if (hloi_context_new(&infer) != HLOI_OK)
			st = HLOI_ENOMEM;
		else
			(void)hloi_module_check(m, infer, &opts);
	}
	if (st == HLOI_OK)
		st = hloi_module_save(m, ctx, out, to);
	if (st != HLOI_OK && infer)
		cli_print_diagnostics(io, infer);
	hloi_context_free(infer);
	cli_print_diagnostics(io, ctx);
	int rc = cli_exit_code(st);
	hloi_module_free(m);
	hloi_context_free(ctx);
	return rc;
}
