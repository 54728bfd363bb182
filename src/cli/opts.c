/* The one option parser of the commands: a command's table of cli_opt made
 * into getopt_long's, and each option found applied as its entry says. */
#include <getopt.h>
#include <stdint.h>
#include <string.h>

#include "opts.h"
#include "stop.h"

/* getopt's code for -h and --help. */
#define HELP_CODE 'h'
/* getopt's codes of long-only options: FIRST_CODE + their index. */
#define FIRST_CODE 256

/* Applies shared option `c` (CLI_OPT_*) with value `arg` for command `cmd`;
 * `check`, `format` and `run` may be NULL when the command has no such
 * options. Returns 0, or the exit code of a usage error. */
static int cli_common_option(int c, const char *arg, cli_io *io, const char *cmd, hloi_check_options *check,
			     hloi_format *format, hloi_run_options *run)
{
	int64_t n;
	switch (c) {
	case CLI_OPT_STRICT:
		check->strict = 1;
		return 0;
	case CLI_OPT_MIXED:
		check->allow_mixed_precision = 1;
		return 0;
	case CLI_OPT_MODE:
		if (strcmp(arg, "xla") == 0)
			check->broadcast_mode = HLOI_BROADCAST_XLA;
		else if (strcmp(arg, "numpy") == 0)
			check->broadcast_mode = HLOI_BROADCAST_NUMPY;
		else
			return cli_usage_error(io, cmd, "invalid --broadcast-mode '%s' (xla or numpy)", arg);
		return 0;
	case CLI_OPT_ENGINE:
		if (strcmp(arg, "fast") == 0)
			run->engine = HLOI_ENGINE_FAST;
		else if (strcmp(arg, "reference") == 0)
			run->engine = HLOI_ENGINE_REFERENCE;
		else
			return cli_usage_error(io, cmd, "invalid --engine '%s' (fast or reference)", arg);
		return 0;
	case CLI_OPT_THREADS:
		if (cli_parse_int(arg, &n) || n > 1024)
			return cli_usage_error(io, cmd, "invalid --threads '%s' (0 to 1024)", arg);
		run->threads = (int)n;
		return 0;
	case CLI_OPT_MAX_MEMORY: {
		uint64_t budget;
		if (cli_parse_size(arg, &budget) || budget == 0)
			return cli_usage_error(io, cmd, "invalid --max-memory '%s' (bytes, with optional K, M or G)", arg);
		if (run)
			run->max_memory = budget;
		cli_set_budget(budget);
		return 0;
	}
	case CLI_OPT_FORMAT:
		if (cli_parse_format(arg, format))
			return cli_usage_error(io, cmd, "invalid --format '%s' (hlo, pb, pbtxt or mlir)", arg);
		return 0;
	case CLI_OPT_REPLICAS:
	case CLI_OPT_PARTITIONS:
		if (cli_parse_int(arg, &n) || n < 1 || n > HLOI_MAX_PARTICIPANTS)
			return cli_usage_error(io, cmd, "invalid --%s '%s' (1 to %d)",
					       c == CLI_OPT_REPLICAS ? "replicas" : "partitions", arg, HLOI_MAX_PARTICIPANTS);
		if (c == CLI_OPT_REPLICAS)
			check->replicas = n;
		else
			check->partitions = n;
		return 0;
	case CLI_OPT_COLOR:
		if (cli_set_color(io, arg))
			return cli_usage_error(io, cmd, "invalid --color '%s' (auto, always or never)", arg);
		return 0;
	default:
		return cli_usage_error(io, cmd, "unknown option");
	}
}

/* The usage error for getopt's result `c` when it is ':' (an option without
 * its value) or an unknown option. */
static int cli_bad_option(int c, char **argv, cli_io *io, const char *cmd)
{
	if (c == ':')
		return cli_usage_error(io, cmd, "option '%s' needs a value", argv[optind - 1]);
	return cli_usage_error(io, cmd, "unknown option '%s'", argv[optind - 1]);
}

int cli_one_operand(int argc, char **argv, cli_io *io, const char *cmd, const char *what, const char **out)
{
	if (optind >= argc)
		return cli_usage_error(io, cmd, "missing %s", what);
	if (optind + 1 < argc)
		return cli_usage_error(io, cmd, "unexpected argument '%s'", argv[optind + 1]);
	*out = argv[optind];
	return 0;
}

void *cli_opt_field(const cli_parser *p, const cli_opt *o)
{
	return (char *)p->args + o->offset;
}

/* Whether entries a and b do the same but for their names. */
static int same_action(const cli_opt *a, const cli_opt *b)
{
	return a->short_name == b->short_name && a->arg == b->arg && a->kind == b->kind && a->offset == b->offset &&
	       a->code == b->code && a->min == b->min && a->max == b->max && a->fn == b->fn;
}

/* getopt's code for entry i: its short name, else FIRST_CODE plus the
 * index of the first entry that does the same (so that getopt_long sees
 * aliases as one option). */
static int code_of(const cli_opt *opts, int i)
{
	if (opts[i].short_name)
		return (unsigned char)opts[i].short_name;
	int first = 0;
	while (!same_action(&opts[first], &opts[i]))
		first++;
	return FIRST_CODE + first;
}

static int apply(cli_parser *p, const cli_opt *o, const char *arg)
{
	switch (o->kind) {
	case CLI_FLAG:
		*(int *)cli_opt_field(p, o) = 1;
		return 0;
	case CLI_STRING:
		*(const char **)cli_opt_field(p, o) = arg;
		return 0;
	case CLI_INT: {
		int64_t n;
		if (cli_parse_int(arg, &n) || n < o->min || n > o->max)
			return cli_usage_error(p->io, p->cmd, "invalid --%s '%s' (%s)", o->name, arg, o->range);
		*(int64_t *)cli_opt_field(p, o) = n;
		return 0;
	}
	case CLI_SECONDS:
		if (cli_parse_seconds(arg, (double *)cli_opt_field(p, o)))
			return cli_usage_error(p->io, p->cmd, "invalid --%s '%s' (seconds, more than 0)", o->name, arg);
		return 0;
	case CLI_SHARED:
		return cli_common_option(o->code, arg, p->io, p->cmd, p->check, p->format, p->run);
	case CLI_CALL:
		return o->fn(p, o, arg);
	}
	return 0;
}

int cli_parse_options(cli_parser *p, int argc, char **argv)
{
	static const int has_arg[] = { no_argument, required_argument, optional_argument };
	struct option longs[CLI_MAX_OPTIONS + 2];
	char shorts[3 * CLI_MAX_OPTIONS + 3] = ":h";
	size_t ns = 2;
	int n = 0;
	for (; p->opts[n].name; n++) {
		if (n == CLI_MAX_OPTIONS)
			return cli_usage_error(p->io, p->cmd, "too many options to parse");
		longs[n].name = p->opts[n].name;
		longs[n].has_arg = has_arg[p->opts[n].arg];
		longs[n].flag = NULL;
		longs[n].val = code_of(p->opts, n);
		if (p->opts[n].short_name) {
			shorts[ns++] = p->opts[n].short_name;
			if (p->opts[n].arg != CLI_NO_ARG)
				shorts[ns++] = ':';
			if (p->opts[n].arg == CLI_OPTIONAL_ARG)
				shorts[ns++] = ':';
		}
	}
	shorts[ns] = '\0';
	longs[n] = (struct option){ "help", no_argument, NULL, HELP_CODE };
	longs[n + 1] = (struct option){ NULL, 0, NULL, 0 };

	int c;
	optind = 0; /* full re-initialisation: commands may run several times */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == HELP_CODE) {
			fputs(p->help, p->io->out);
			return -1;
		}
		const cli_opt *o = NULL;
		for (int i = 0; i < n && !o; i++)
			if (longs[i].val == c)
				o = &p->opts[i];
		if (!o)
			return cli_bad_option(c, argv, p->io, p->cmd);
		int rc = apply(p, o, optarg);
		if (rc)
			return rc;
	}
	return 0;
}
