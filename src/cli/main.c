/* hloi: the command-line entry point; dispatches to one file per command. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
	"usage: hloi COMMAND [ARGS]\n"
	"\n"
	"An interpreter for XLA's HLO: run, check and inspect HLO programs.\n"
	"\n"
	"Commands:\n"
	"  run PROGRAM      evaluate a program and print its result\n"
	"  check PROGRAM    parse and type-check; print \"ok\" or diagnostics\n"
	"  fmt PROGRAM      print the program as canonical HLO text\n"
	"  lower PROGRAM    rewrite implicit broadcasts as plain HLO (passes --strict)\n"
	"  layout SHAPE     show how a shape's layout places elements in memory\n"
	"  test PATH...     run golden tests (NAME.hlo against NAME.golden)\n"
	"  dot PROGRAM      print the computation graph as Graphviz DOT\n"
	"  plan PROGRAM     show how a program will be evaluated (fused regions, memory)\n"
	"  bench PROGRAM    time the evaluation of a program\n"
	"  convert IN OUT   convert between .hlo, .pb and .pbtxt\n"
	"\n"
	"Options:\n"
	"  -h, --help       show this help (every command has --help too)\n"
	"  --version        show the version\n"
	"\n"
	"Exit codes: 0 success, 1 mismatch, 2 usage error, 3 invalid input,\n"
	"4 runtime failure (memory budget, I/O).\n"
	"\n"
	"Example:\n"
	"  hloi run testdata/sources/matrix_plus_vector.hlo \\\n"
	"      --inputs testdata/sources/matrix_plus_vector.inputs\n";

static const struct {
	const char *name;
	cli_command_fn fn;
} commands[] = {
	{ "run", cmd_run },
	{ "check", cmd_check },
	{ "fmt", cmd_fmt },
	{ "lower", cmd_lower },
	{ "layout", cmd_layout },
	{ "test", cmd_test },
	{ "dot", cmd_dot },
	{ "plan", cmd_plan },
	{ "bench", cmd_bench },
	{ "convert", cmd_convert },
};

cli_command_fn cli_find_command(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, name) == 0)
			return commands[i].fn;
	return NULL;
}

int main(int argc, char **argv)
{
	cli_io io = { stdout, stderr, 0, 0 };
	cli_set_color(&io, "auto");
	int rc;
	if (argc < 2) {
		fputs(usage, stderr);
		rc = EXIT_USAGE;
	} else if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
		   strcmp(argv[1], "help") == 0) {
		fputs(usage, stdout);
		rc = EXIT_OK;
	} else if (strcmp(argv[1], "--version") == 0) {
		printf("hloi %s\n", HLOI_VERSION);
		rc = EXIT_OK;
	} else {
		cli_command_fn fn = cli_find_command(argv[1]);
		if (!fn) {
			if (argv[1][0] == '-')
				rc = cli_usage_error(&io, NULL, "unknown option '%s'", argv[1]);
			else
				rc = cli_usage_error(&io, NULL, "unknown command '%s' (commands: run check fmt lower layout test dot plan bench convert)",
						     argv[1]);
		} else {
			rc = fn(argc - 1, argv + 1, &io);
		}
	}
	/* A write error on stdout (closed pipe, full disk) must not pass silently. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (rc == EXIT_OK || rc == EXIT_MISMATCH) {
			perror("hloi: error writing output");
			rc = EXIT_RUNTIME;
		}
	}
	return rc;
}
