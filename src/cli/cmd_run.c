/* hloi run: evaluate a program on inputs and print or save the result. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inputs.h"
#include "program.h"

static const char help[] =
	"usage: hloi run PROGRAM [options]\n"
	"\n"
	"Evaluates PROGRAM (.hlo text; - reads standard input) and prints the\n"
	"result as XLA's Literal::ToString() does.\n"
	"\n"
	"Inputs, one per parameter in order:\n"
	"  --input FILE            a .npy file or a file holding one literal, e.g.\n"
	"                          `f32[2,3] {{1,2,3},{4,5,6}}` (repeat per parameter)\n"
	"  --inputs FILE           a file holding one literal per parameter\n"
	"  --random-inputs[=SEED]  deterministic pseudo-random inputs (seed 42)\n"
	"Output:\n"
	"  --output FILE           write the result to FILE (.npy, else literal text)\n"
	"                          instead of printing it\n"
	"  --print                 print the result even with --output\n"
	"  --print-inputs          print every input before the result\n"
	"  --dump-plan             print the evaluation plan first (as `hloi plan`)\n"
	"Checking and evaluation:\n"
	"  --strict                accept exactly what XLA's verifier accepts\n"
	"  --broadcast-mode MODE   xla or numpy, for modules that do not say\n"
	"  --engine ENGINE         fast (the default) or reference\n"
	"  --compare               also run the reference engine and compare: floats\n"
	"                          within abs 1e-3 or rel 1e-3, integers exactly;\n"
	"                          exit 1 on a mismatch\n"
	"  --threads N             worker threads (0: the machine's cores)\n"
	"  --max-memory SIZE       memory budget in bytes, with optional K, M or G\n"
	"                          (default: half of physical memory)\n"
	"  --format FORMAT         hlo, pb or pbtxt (default: by extension)\n"
	"  --color WHEN            auto, always or never, for diagnostics\n"
	"  -h, --help              show this help\n"
	"\n"
	"Example:\n"
	"  hloi run testdata/sources/matrix_plus_vector.hlo \\\n"
	"      --inputs testdata/sources/matrix_plus_vector.inputs\n";

enum {
	OPT_INPUT = 256,
	OPT_INPUTS,
	OPT_RANDOM,
	OPT_OUTPUT,
	OPT_PRINT,
	OPT_PRINT_INPUTS,
	OPT_COMPARE,
	OPT_DUMP_PLAN
};

static const struct option options[] = {
	{ "input", required_argument, NULL, OPT_INPUT },
	{ "inputs", required_argument, NULL, OPT_INPUTS },
	{ "random-inputs", optional_argument, NULL, OPT_RANDOM },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "print", no_argument, NULL, OPT_PRINT },
	{ "print-inputs", no_argument, NULL, OPT_PRINT_INPUTS },
	{ "strict", no_argument, NULL, CLI_OPT_STRICT },
	{ "broadcast-mode", required_argument, NULL, CLI_OPT_MODE },
	{ "engine", required_argument, NULL, CLI_OPT_ENGINE },
	{ "threads", required_argument, NULL, CLI_OPT_THREADS },
	{ "max-memory", required_argument, NULL, CLI_OPT_MAX_MEMORY },
	{ "format", required_argument, NULL, CLI_OPT_FORMAT },
	{ "color", required_argument, NULL, CLI_OPT_COLOR },
	{ "compare", no_argument, NULL, OPT_COMPARE },
	{ "dump-plan", no_argument, NULL, OPT_DUMP_PLAN },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

typedef struct run_args {
	const char *program;
	input_args in;
	const char *output;
	int print;
	int print_inputs;
	int compare;
	int dump_plan;
	program_opts prog;
	hloi_run_options run;
} run_args;

static int parse_args(run_args *a, int argc, char **argv, cli_io *io)
{
	int c;
	optind = 0; /* full re-initialisation: commands may run several times */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (c) {
		case OPT_INPUT:
		case OPT_INPUTS:
		case OPT_RANDOM: {
			int rc = input_args_option(&a->in, c == OPT_INPUT ? 'i' : c == OPT_INPUTS ? 'I' : 'r', optarg, io,
						   "run");
			if (rc)
				return rc;
			break;
		}
		case OPT_OUTPUT:
			a->output = optarg;
			break;
		case OPT_PRINT:
			a->print = 1;
			break;
		case OPT_PRINT_INPUTS:
			a->print_inputs = 1;
			break;
		case OPT_COMPARE:
			a->compare = 1;
			break;
		case OPT_DUMP_PLAN:
			a->dump_plan = 1;
			break;
		case CLI_OPT_STRICT:
		case CLI_OPT_MODE:
		case CLI_OPT_ENGINE:
		case CLI_OPT_THREADS:
		case CLI_OPT_MAX_MEMORY:
		case CLI_OPT_FORMAT:
		case CLI_OPT_COLOR:
		{
			int e = cli_common_option(c, optarg, io, "run", &a->prog.check, &a->prog.format, &a->run);
			if (e)
				return e;
			break;
		}
		case 'h':
			fputs(help, io->out);
			return -1;
		default:
			return cli_bad_option(c, argv, io, "run");
		}
	}
	{
		int e = cli_one_operand(argc, argv, io, "run", "PROGRAM", &a->program);
		if (e)
			return e;
	}
	return input_args_validate(&a->in, io, "run");
}

/* --compare: runs the reference engine too (when `result` came from the
 * fast one) and reports the elements that differ (SPEC §7). Returns
 * EXIT_OK, EXIT_MISMATCH or the exit code of a failure. */
static int compare_engines(hloi_module *m, hloi_context *ctx, hloi_literal **inputs, size_t ninputs,
			   const hloi_run_options *run, hloi_literal *result, cli_io *io)
{
	hloi_run_options other = *run;
	hloi_literal *ref = NULL;
	int fast_first = run->engine != HLOI_ENGINE_REFERENCE;
	other.engine = fast_first ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_FAST;
	hloi_status st = hloi_module_run(m, ctx, inputs, ninputs, &other, &ref);
	cli_print_diagnostics(io, ctx);
	if (st != HLOI_OK)
		return cli_exit_code(st);
	const hloi_literal *expected = fast_first ? ref : result, *actual = fast_first ? result : ref;
	size_t bad = 0;
	int rc = EXIT_OK;
	st = hloi_literal_compare(expected, actual, ctx, 1e-3, 1e-3, io->err, 10, &bad);
	cli_print_diagnostics(io, ctx);
	if (st != HLOI_OK) {
		rc = cli_exit_code(st);
	} else if (bad) {
		int64_t n = hloi_shape_element_count(hloi_literal_shape(result));
		fprintf(io->err,
			"hloi run: --compare: %zu of %lld elements differ between the reference engine (expected) "
			"and the fast engine%s\n",
			bad, (long long)n, bad > 10 ? " (first 10 shown)" : "");
		rc = EXIT_MISMATCH;
	}
	hloi_literal_free(ref);
	return rc;
}

/* Whether `lit` can be printed as text: hloi_literal_print refuses a
 * zero-element value with more than HLOI_PRINT_MAX_EMPTY_SUBARRAYS empty
 * sub-arrays (f32[100000000,0]). If not, says so, naming the value (`what`)
 * and what to do instead (`hint`). */
static int printable(const hloi_literal *lit, const char *what, const char *hint, cli_io *io)
{
	uint64_t n = hloi_literal_empty_subarrays(lit);
	if (n <= HLOI_PRINT_MAX_EMPTY_SUBARRAYS)
		return 1;
	const hloi_shape *s = hloi_literal_shape(lit);
	size_t len = hloi_shape_to_string(s, 0, NULL, 0);
	char *text = malloc(len + 1);
	if (text)
		hloi_shape_to_string(s, 0, text, len + 1);
	fprintf(io->err, "hloi run: cannot print %s %s as text: %" PRIu64 " empty sub-arrays (the limit is %u)%s%s\n",
		what, text ? text : "", n, HLOI_PRINT_MAX_EMPTY_SUBARRAYS, hint ? "; " : "", hint ? hint : "");
	free(text);
	return 0;
}

int cmd_run(int argc, char **argv, cli_io *io)
{
	run_args a;
	memset(&a, 0, sizeof a);
	a.in.seed = 42;
	a.prog.check = (hloi_check_options)HLOI_CHECK_OPTIONS_INIT;
	a.run = (hloi_run_options)HLOI_RUN_OPTIONS_INIT;
	int rc = parse_args(&a, argc, argv, io);
	if (rc) {
		input_args_release(&a.in);
		return rc < 0 ? EXIT_OK : rc;
	}
	hloi_context *ctx = NULL;
	hloi_module *m = NULL;
	hloi_literal **inputs = NULL, *result = NULL;
	size_t ninputs = 0;
	int mismatch = 0;
	hloi_literal *spare = NULL, *saved = NULL;
	if (hloi_context_new(&ctx) != HLOI_OK) {
		fputs("hloi: out of memory\n", io->err);
		rc = EXIT_RUNTIME;
		goto cleanup;
	}
	rc = program_load(&m, ctx, io, a.program, &a.prog, 1);
	if (rc)
		goto cleanup;
	rc = inputs_load(&inputs, &ninputs, &a.in, m, ctx, a.run.max_memory, 0, a.program, io, "run");
	if (rc)
		goto cleanup;
	if (a.dump_plan) {
		hloi_status ps = hloi_module_plan_print(m, ctx, &a.run, io->out);
		cli_print_diagnostics(io, ctx);
		if (ps != HLOI_OK) {
			rc = cli_exit_code(ps);
			goto cleanup;
		}
	}
	/* before the run: an in-place run consumes its aliased input */
	if (a.print_inputs) {
		for (size_t i = 0; i < ninputs; i++) {
			char what[256];
			snprintf(what, sizeof what, "argument %zu (%s)", i, hloi_module_parameter_name(m, i));
			if (!printable(inputs[i], what, "run without --print-inputs", io)) {
				rc = EXIT_RUNTIME;
				goto cleanup;
			}
		}
		for (size_t i = 0; i < ninputs; i++) {
			fprintf(io->out, "** Argument %zu (%s) **\n", i, hloi_module_parameter_name(m, i));
			hloi_literal_print(inputs[i], io->out);
			fputc('\n', io->out);
		}
	}
	/* An in-place module consumes its aliased input; --compare's second
	 * run gets a copy taken before the first. */
	int aliased = hloi_module_aliased_input(m);
	if (a.compare && aliased >= 0 && (size_t)aliased < ninputs &&
	    hloi_literal_clone(&spare, inputs[aliased]) != HLOI_OK) {
		fputs("hloi run: out of memory\n", io->err);
		rc = EXIT_RUNTIME;
		goto cleanup;
	}
	hloi_status st = hloi_module_run(m, ctx, inputs, ninputs, &a.run, &result);
	cli_print_diagnostics(io, ctx);
	if (st != HLOI_OK) {
		rc = cli_exit_code(st);
		goto cleanup;
	}
	if (a.compare) {
		if (spare) {
			saved = inputs[aliased];
			inputs[aliased] = spare;
		}
		rc = compare_engines(m, ctx, inputs, ninputs, &a.run, result, io);
		if (spare) {
			inputs[aliased] = saved;
			hloi_literal_free(spare);
			spare = NULL;
		}
		if (rc == EXIT_MISMATCH)
			mismatch = 1;
		else if (rc)
			goto cleanup;
		rc = EXIT_OK;
	}
	if (a.output) {
		st = hloi_literal_save(result, ctx, a.output);
		cli_print_diagnostics(io, ctx);
		if (st != HLOI_OK) {
			rc = cli_exit_code(st);
			goto cleanup;
		}
	}
	if (!a.output || a.print) {
		int tuple = hloi_shape_rank(hloi_literal_shape(result)) < 0;
		if (!printable(result, "the result",
			       a.output ? "drop --print (it is written to --output)"
			       : tuple ? NULL : "write it with --output FILE.npy",
			       io)) {
			rc = EXIT_RUNTIME;
			goto cleanup;
		}
		if (a.print_inputs)
			fputs("** Result **\n", io->out);
		st = hloi_literal_print(result, io->out);
		if (st != HLOI_OK) {
			fputs(st == HLOI_ENOMEM ? "hloi run: out of memory printing the result\n"
						: "hloi run: error writing the result\n",
			      io->err);
			rc = EXIT_RUNTIME;
		}
	}
	if (rc == EXIT_OK && mismatch)
		rc = EXIT_MISMATCH;
cleanup:
	hloi_literal_free(spare);
	hloi_literal_free(result);
	inputs_free(inputs, ninputs);
	hloi_module_free(m);
	hloi_context_free(ctx);
	input_args_release(&a.in);
	return rc;
}
