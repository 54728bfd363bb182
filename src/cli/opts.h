/* The one option parser of the commands. Each command declares its options
 * as a table of cli_opt (long name, short name if any, whether it takes a
 * value, what a use does: set a flag, keep the value, parse a number into
 * a field of the command's own struct, apply a shared option, or call a
 * handler) and calls cli_parse_options; -h and --help are added to every
 * table. getopt_long does the reading, so every command accepts the same
 * spellings: --opt=VALUE and --opt VALUE, any unambiguous prefix of a long
 * name, options after operands, and -- to end them. */
#ifndef HLOI_CLI_OPTS_H
#define HLOI_CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* The options several commands share (entries of kind CLI_SHARED, the
 * code one of these): the same value checks and messages everywhere. */
enum {
	CLI_OPT_STRICT = 200,  /* --strict */
	CLI_OPT_MODE,          /* --broadcast-mode xla|numpy */
	CLI_OPT_ENGINE,        /* --engine fast|reference */
	CLI_OPT_THREADS,       /* --threads N */
	CLI_OPT_MAX_MEMORY,    /* --max-memory SIZE */
	CLI_OPT_FORMAT,        /* --format hlo|pb|pbtxt */
	CLI_OPT_COLOR,         /* --color auto|always|never */
	CLI_OPT_REPLICAS,      /* --replicas N */
	CLI_OPT_PARTITIONS,    /* --partitions M */
	CLI_OPT_MIXED          /* --allow-mixed-precision */
};

/* Whether an option takes a value (getopt_long's has_arg). */
typedef enum cli_opt_arg {
	CLI_NO_ARG,
	CLI_REQUIRED_ARG,  /* --opt VALUE or --opt=VALUE */
	CLI_OPTIONAL_ARG   /* --opt or --opt=VALUE */
} cli_opt_arg;

/* What a use of an option does. */
typedef enum cli_opt_kind {
	CLI_FLAG,    /* sets the int at `offset` to 1 */
	CLI_STRING,  /* keeps the value in the const char * at `offset` */
	CLI_INT,     /* parses a decimal integer in [min, max] into the int64_t
		        at `offset`; else "invalid --NAME 'VALUE' (RANGE)" */
	CLI_SECONDS, /* parses seconds (more than 0) into the double at
		        `offset`; else "invalid --NAME 'VALUE' (seconds, ...)" */
	CLI_SHARED,  /* an option several commands share: `code` is its
		        CLI_OPT_* (cli_common_option applies it) */
	CLI_CALL     /* calls `fn` */
} cli_opt_kind;

struct cli_parser;
struct cli_opt;

/* A handler: applies option `o` with value `arg` (NULL when none was
 * given); returns 0 or the exit code of a usage error. */
typedef int (*cli_opt_fn)(struct cli_parser *p, const struct cli_opt *o, const char *arg);

typedef struct cli_opt {
	const char *name;      /* the long name, without "--"; NULL ends a table */
	char short_name;       /* the one-letter spelling (-j N), or 0 */
	cli_opt_arg arg;
	cli_opt_kind kind;
	size_t offset;         /* CLI_FLAG, _STRING, _INT, _SECONDS: the field in
				  the command's struct (cli_parser.args) */
	int code;              /* CLI_SHARED: the CLI_OPT_*; CLI_CALL: for fn */
	int64_t min, max;      /* CLI_INT: the values accepted */
	const char *range;     /* CLI_INT: them, as the error says ("1 to 1000000") */
	cli_opt_fn fn;         /* CLI_CALL */
} cli_opt;

/* Table entries. Options that do the same (--print-inputs and
 * --print_literals) are written the same but for the name; getopt_long
 * then takes a prefix of both as either rather than as ambiguous. */
#define CLI_FLAG_OPTION(n, type, field) { .name = (n), .kind = CLI_FLAG, .offset = offsetof(type, field) }
#define CLI_STRING_OPTION(n, type, field) \
	{ .name = (n), .arg = CLI_REQUIRED_ARG, .kind = CLI_STRING, .offset = offsetof(type, field) }
#define CLI_INT_OPTION(n, type, field, lo, hi, text)                                                     \
	{ .name = (n), .arg = CLI_REQUIRED_ARG, .kind = CLI_INT, .offset = offsetof(type, field), .min = (lo), \
	  .max = (hi), .range = (text) }
#define CLI_SECONDS_OPTION(n, type, field) \
	{ .name = (n), .arg = CLI_REQUIRED_ARG, .kind = CLI_SECONDS, .offset = offsetof(type, field) }
#define CLI_SHARED_OPTION(n, c)                                                                             \
	{ .name = (n), .arg = (c) == CLI_OPT_STRICT || (c) == CLI_OPT_MIXED ? CLI_NO_ARG : CLI_REQUIRED_ARG, \
	  .kind = CLI_SHARED, .code = (c) }
#define CLI_CALL_OPTION(n, a, f, c) { .name = (n), .arg = (a), .kind = CLI_CALL, .code = (c), .fn = (f) }
#define CLI_CALL_FIELD_OPTION(n, a, f, c, type, field) \
	{ .name = (n), .arg = (a), .kind = CLI_CALL, .offset = offsetof(type, field), .code = (c), .fn = (f) }
#define CLI_OPTIONS_END { .name = NULL }

/* The most options one table holds (-h/--help not counted). */
#define CLI_MAX_OPTIONS 63

/* One parse of a command's arguments. */
typedef struct cli_parser {
	const char *cmd;            /* "run": messages say `hloi run: ...` */
	const char *help;           /* what -h and --help print to io->out */
	const cli_opt *opts;        /* the command's table */
	cli_io *io;
	void *args;                 /* the command's own struct (offsets, handlers) */
	hloi_check_options *check;  /* for CLI_SHARED options; NULL when the */
	hloi_format *format;        /* command has none of that kind */
	hloi_run_options *run;
} cli_parser;

/* Reads the options of argv (argv[0] is the command's name) in order.
 * Returns 0 with getopt's optind at the first operand (cli_one_operand
 * takes it), -1 after printing the help, or the exit code of the first
 * usage error: an unknown option, one without its value, a bad value. */
int cli_parse_options(cli_parser *p, int argc, char **argv);

/* Takes the one operand after the options (`what` names it in the error:
 * "PROGRAM", "SHAPE"); returns 0 with *out set, or a usage error's exit code. */
int cli_one_operand(int argc, char **argv, cli_io *io, const char *cmd, const char *what, const char **out);

/* The field of the command's struct at option o's offset. */
void *cli_opt_field(const cli_parser *p, const cli_opt *o);

#endif
