/* hloi: the command-line entry point; dispatches to one file per command. */
#define _GNU_SOURCE /* fopencookie */
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

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

/* Edit distance (insertions, deletions, substitutions, and swaps of two
 * neighbours) between short words; larger than 9 counts as 9. */
static size_t distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 32 || m > 32)
		return 9;
	size_t d[33][33];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[n][m] > 9 ? 9 : d[n][m];
}

/* The command nearest to `name` (at most two edits, and fewer than half
 * its letters), or NULL. */
static const char *nearest_command(const char *name)
{
	const char *best = NULL;
	size_t best_d = 3;
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		size_t d = distance(name, commands[i].name);
		if (d < best_d && d * 2 < strlen(commands[i].name)) {
			best = commands[i].name;
			best_d = d;
		}
	}
	return best;
}

/* Standard error, counted: a command that fails with exit 4 (a runtime
 * failure) without having said anything gets a message from main. */
static unsigned long long err_bytes;

static ssize_t counted_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	size_t w = fwrite(buf, 1, n, stderr);
	err_bytes += w;
	return w == n ? (ssize_t)w : -1;
}

int main(int argc, char **argv)
{
	cli_io io = { stdout, stderr, 0, 0, isatty(STDERR_FILENO) };
	cookie_io_functions_t fns = { NULL, counted_write, NULL, NULL };
	FILE *err = fopencookie(NULL, "w", fns);
	if (err && setvbuf(err, NULL, _IONBF, 0) == 0)
		io.err = err;
	cli_set_color(&io, "auto");
	cli_set_budget(hloi_default_memory_budget());
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
			else if (nearest_command(argv[1]))
				rc = cli_usage_error(&io, NULL, "unknown command '%s'; did you mean '%s'?", argv[1],
						     nearest_command(argv[1]));
			else
				rc = cli_usage_error(&io, NULL, "unknown command '%s' (commands: run check fmt lower layout test dot plan bench convert)",
						     argv[1]);
		} else {
			rc = fn(argc - 1, argv + 1, &io);
		}
	}
	/* Every exit 4 says why: an allocation failure that came back without
	 * a diagnostic is reported here, with its size. */
	if (rc == EXIT_RUNTIME && err_bytes == 0 && io.err != stderr) {
		size_t n = hloi_alloc_last_failure();
		const char *cmd = argc > 1 && cli_find_command(argv[1]) ? argv[1] : NULL;
		if (n && hloi_alloc_failure_was_ceiling())
			fprintf(stderr,
				"hloi%s%s: error: out of memory: holding %llu bytes, %zu more would pass the "
				"memory ceiling of %llu bytes (the budget, --max-memory, plus %llu for hloi's "
				"own bookkeeping)\n",
				cmd ? " " : "", cmd ? cmd : "", (unsigned long long)hloi_alloc_failure_held(), n,
				(unsigned long long)hloi_memory_ceiling(), (unsigned long long)HLOI_MEMORY_SLACK);
		else if (n)
			fprintf(stderr, "hloi%s%s: error: out of memory (an allocation of %zu bytes failed)\n",
				cmd ? " " : "", cmd ? cmd : "", n);
		else
			fprintf(stderr, "hloi%s%s: error: out of memory\n", cmd ? " " : "", cmd ? cmd : "");
	}
	if (io.err != stderr)
		fclose(io.err);
	/* A write error on stdout (closed pipe, full disk) must not pass silently. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (rc == EXIT_OK || rc == EXIT_MISMATCH) {
			perror("hloi: error writing output");
			rc = EXIT_RUNTIME;
		}
	}
	return rc;
}
