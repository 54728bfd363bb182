/* hloi run: evaluate a program on inputs and print or save the result. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hloi/tool.h"
#include "feeds.h"
#include "inputs.h"
#include "opts.h"
#include "output.h"
#include "profile.h"
#include "probe.h"
#include "program.h"
#include "progress.h"
#include "stop.h"

static const char help[] =
	"usage: hloi run PROGRAM [options]\n"
	"\n"
	"Evaluates PROGRAM and prints the result as XLA's Literal::ToString() does.\n"
	"PROGRAM is HLO text (.hlo), or one of XLA's protos, binary (.pb) or text\n"
	"(.pbtxt): an HloModuleProto, an HloProto, or an HloSnapshot, whose recorded\n"
	"arguments are the inputs unless others are given; - reads standard input.\n"
	"\n"
	"Inputs, one per parameter in order:\n"
	"  --input FILE            a .npy file or a file holding one literal, e.g.\n"
	"                          `f32[2,3] {{1,2,3},{4,5,6}}` (repeat per parameter;\n"
	"                          - reads standard input, .npy or text)\n"
	"  --inputs FILE           a file holding one literal per parameter\n"
	"  --random-inputs[=SEED]  deterministic pseudo-random inputs (seed 42);\n"
	"                          elided constants ({...}) get random values too\n"
	"  --input_literals_file FILE\n"
	"                          the arguments of XLA's RunHloModuleLiterals proto\n"
	"                          (binary or text; its first iteration)\n"
	"Infeed and outfeed:\n"
	"  --infeed FILE           values for the infeed instructions, in order: the\n"
	"                          literals of a literal text file, a tuple written as\n"
	"                          one (`(f32[2], s32[]) ({1, 2}, 3)`), or one .npy\n"
	"                          array (repeat: the files' values one after another).\n"
	"                          An infeed that finds the queue empty is an error;\n"
	"                          with --random-inputs and no --infeed, infeeds get\n"
	"                          random values\n"
	"  --outfeed FILE          write the outfeed values to FILE as literal text, one\n"
	"                          after another (--infeed reads them back); without\n"
	"                          it they print before the result under\n"
	"                          `** Outfeed N (name) **`\n"
	"Transfers with the host (send and recv with is_host_transfer=true):\n"
	"  --host-recv CH:FILE     values the host recvs of channel_id CH receive, in\n"
	"                          order, as --infeed reads them (repeat: one file\n"
	"                          after another). A host recv without a value is an\n"
	"                          error; with --random-inputs, a channel without a\n"
	"                          file gets random values\n"
	"  --host-send CH:FILE     write what the host sends of channel_id CH give to\n"
	"                          FILE as literal text; without it they print before\n"
	"                          the result under `** Host send N (name, channel CH) **`\n"
	"Output:\n"
	"  --output FILE           write the result to FILE (.npy, else literal text)\n"
	"                          instead of printing it; a tuple as .npy becomes one\n"
	"                          file per element: r.0.npy, r.1.npy, r.1.0.npy, ...\n"
	"  --print                 print the result even with --output\n"
	"  --print-inputs          print every input before the result\n"
	"  --print_literals        the same (run_hlo_module's spelling)\n"
	"  --output_literals_file FILE\n"
	"                          write the arguments and the result (with --compare\n"
	"                          also the reference engine's) as XLA's\n"
	"                          RunHloModuleLiterals proto (.pbtxt: text, else binary)\n"
	"  --dump-plan             print the evaluation plan first (as `hloi plan`)\n"
	"Probes (looking inside a run; doc/cli.md, \"Probes\"):\n"
	"  --probe NAME[,NAME...]  write the value of each named instruction (NAME or\n"
	"                          COMPUTATION/NAME) as DIR/NAME.npy each time it is\n"
	"                          computed; outside the entry computation (a loop\n"
	"                          body, ...) DIR/COMPUTATION/NAME.N.npy, N from 0 in\n"
	"                          evaluation order\n"
	"  --probe-all             the same for every instruction\n"
	"  --probe-dir DIR         where the probe files go (default ./probes, made\n"
	"                          when missing; existing files are replaced)\n"
	"  --max-probe-bytes SIZE  stop the run (exit 4) before the probe files pass\n"
	"                          SIZE bytes, with optional K, M or G (default 1G)\n"
	"  --compare-with DIR      compare each probed value (every instruction unless\n"
	"                          --probe says) with DIR's file of the same name, as\n"
	"                          --compare does, and name the first that differs\n"
	"                          (exit 1); values without a file are not compared\n"
	"Profile (printed on standard error after the result):\n"
	PROFILE_HELP
"Participants (collectives across replicas and partitions):\n"
	"  --replicas N            run as N replicas (default: the module's\n"
	"                          replica_count, else 1)\n"
	"  --partitions M          run as M partitions (default: the module's\n"
	"                          num_partitions, else 1)\n"
	"                          A module with collectives then runs as N x M\n"
	"                          participants, one thread each: every one prints\n"
	"                          its result under `** Replica R, partition P **`;\n"
	"                          --output r.npy writes r.p0.npy, r.p1.npy, ... (by\n"
	"                          flattened id R * M + P), --outfeed r.txt r.p0.txt,\n"
	"                          ... Inputs and the infeed queue are shared, but\n"
	"                          --random-inputs=SEED gives participant i SEED + i.\n"
	"  --participant-input P:FILE\n"
	"                          an input of participant P (flattened id) alone, as\n"
	"                          --input (repeat per parameter in order); the others\n"
	"                          take the shared inputs\n"
	"  --participant-infeed P:FILE\n"
	"                          participant P's own infeed queue, as --infeed\n"
	"  --distributed MODE      mpi: run as a rank of an MPI job, the participants\n"
	"                          shared out evenly in order (the default under\n"
	"                          mpirun), or none: as one process (doc/mpi.md)\n"
	"  --gather-output         under MPI, rank 0 writes every participant's\n"
	"                          --output file (default: each rank its own)\n"
	"Checking and evaluation:\n"
	"  --strict                accept exactly what XLA's verifier accepts\n"
	"  --allow-mixed-precision accept floating-point types mixed in one\n"
	"                          instruction, as XLA's verifier with\n"
	"                          allow_mixed_precision (converts made explicit)\n"
	"  --broadcast-mode MODE   xla or numpy, for modules that do not say\n"
	"  --engine ENGINE         fast (the default) or reference\n"
	"  --compare               also run the reference engine and compare: floats\n"
	"                          within abs 1e-3 or rel 1e-3 (bf16: rel 2^-7, one\n"
	"                          ulp), integers exactly; exit 1 on a mismatch\n"
	"  --threads N             worker threads (0: the machine's cores)\n"
	"  --max-memory SIZE       memory budget in bytes, with optional K, M or G\n"
	"                          (default: half of physical memory)\n"
	"  --max-steps N           evaluate at most N instructions, calls included\n"
	"                          (default 10000000); exit 4 beyond\n"
	"  --timeout SECONDS       stop a run that takes longer; exit 4\n"
	"  --quiet                 no progress line (one shows on a terminal when\n"
	"                          random inputs or the run take over 2 s)\n"
	"  --format FORMAT         hlo, pb, pbtxt or mlir (default: by extension, else by\n"
	"                          content)\n"
	"  --input_format FORMAT   the same (run_hlo_module's spelling)\n"
	"  --color WHEN            auto, always or never, for diagnostics\n"
	"  -h, --help              show this help\n"
	"\n"
	"SIGINT and SIGTERM stop a run between instructions (exit 130 and 143); no\n"
	"partial output file is left behind. A run still going 2 s after the\n"
	"signal or the timeout (inside one long instruction) ends at once.\n"
	"\n"
	"Example:\n"
	"  hloi run testdata/sources/matrix_plus_vector.hlo \\\n"
	"      --inputs testdata/sources/matrix_plus_vector.inputs\n";

typedef struct run_args {
	const char *program;
	input_args in;
	const char *output;
	int print;
	int print_inputs;
	int compare;
	double timeout;
	int quiet;
	const char *literals_out;
	int dump_plan;
	profile_args prof;
	program_opts prog;
	hloi_run_options run;
	feed_args feed;
	feed_file *pinputs; /* --participant-input, in the order given (owned) */
	size_t npinputs;
	feeds fd;           /* the infeed queues and the outfeed values */
	feed_list *out1, *out2; /* the outfeed values of the run and of --compare's */
	probe_args probe;   /* --probe, --probe-all, --probe-dir, --compare-with */
	probe_run probes;
	int probing;        /* probe_start attached them to the run */
	const char *distributed; /* --distributed: mpi, none; NULL: by the environment */
	int mpi;            /* this process is a rank of an MPI job */
	int gather_output;  /* --gather-output: rank 0 writes every result file */
} run_args;

/* --max-steps N */
static int max_steps_option(cli_parser *p, const cli_opt *o, const char *arg)
{
	int64_t n;
	(void)o;
	if (cli_parse_int(arg, &n) || n < 1)
		return cli_usage_error(p->io, "run", "invalid --max-steps '%s' (1 or more)", arg);
	p->run->max_steps = (uint64_t)n;
	return 0;
}

/* --participant-input P:FILE */
static int participant_input_option(cli_parser *p, const cli_opt *o, const char *arg)
{
	run_args *a = p->args;
	(void)o;
	return feed_file_add(&a->pinputs, &a->npinputs, arg, 1, "--participant-input", "run", p->io);
}

static const cli_opt options[] = {
	CLI_CALL_FIELD_OPTION("input", CLI_REQUIRED_ARG, input_args_opt, 'i', run_args, in),
	CLI_CALL_FIELD_OPTION("inputs", CLI_REQUIRED_ARG, input_args_opt, 'I', run_args, in),
	CLI_CALL_FIELD_OPTION("random-inputs", CLI_OPTIONAL_ARG, input_args_opt, 'r', run_args, in),
	CLI_STRING_OPTION("output", run_args, output),
	CLI_FLAG_OPTION("print", run_args, print),
	CLI_FLAG_OPTION("print-inputs", run_args, print_inputs),
	CLI_FLAG_OPTION("print_literals", run_args, print_inputs),
	CLI_CALL_FIELD_OPTION("input_literals_file", CLI_REQUIRED_ARG, input_args_opt, 'L', run_args, in),
	CLI_STRING_OPTION("output_literals_file", run_args, literals_out),
	CLI_SECONDS_OPTION("timeout", run_args, timeout),
	CLI_FLAG_OPTION("quiet", run_args, quiet),
	CLI_CALL_OPTION("max-steps", CLI_REQUIRED_ARG, max_steps_option, 0),
	CLI_SHARED_OPTION("input_format", CLI_OPT_FORMAT),
	CLI_SHARED_OPTION("strict", CLI_OPT_STRICT),
	CLI_SHARED_OPTION("allow-mixed-precision", CLI_OPT_MIXED),
	CLI_SHARED_OPTION("broadcast-mode", CLI_OPT_MODE),
	CLI_SHARED_OPTION("engine", CLI_OPT_ENGINE),
	CLI_SHARED_OPTION("threads", CLI_OPT_THREADS),
	CLI_SHARED_OPTION("max-memory", CLI_OPT_MAX_MEMORY),
	CLI_SHARED_OPTION("format", CLI_OPT_FORMAT),
	CLI_SHARED_OPTION("color", CLI_OPT_COLOR),
	CLI_FLAG_OPTION("compare", run_args, compare),
	CLI_FLAG_OPTION("dump-plan", run_args, dump_plan),
	CLI_SHARED_OPTION("replicas", CLI_OPT_REPLICAS),
	CLI_SHARED_OPTION("partitions", CLI_OPT_PARTITIONS),
	CLI_CALL_FIELD_OPTION("infeed", CLI_REQUIRED_ARG, feed_args_infeed_opt, 0, run_args, feed),
	CLI_STRING_OPTION("outfeed", run_args, feed.outfeed),
	CLI_CALL_OPTION("participant-input", CLI_REQUIRED_ARG, participant_input_option, 0),
	CLI_STRING_OPTION("distributed", run_args, distributed),
	CLI_FLAG_OPTION("gather-output", run_args, gather_output),
	CLI_CALL_FIELD_OPTION("participant-infeed", CLI_REQUIRED_ARG, feed_args_infeed_opt, 1, run_args, feed),
	CLI_CALL_FIELD_OPTION("host-recv", CLI_REQUIRED_ARG, feed_args_host_opt, 0, run_args, feed),
	CLI_CALL_FIELD_OPTION("host-send", CLI_REQUIRED_ARG, feed_args_host_opt, 1, run_args, feed),
	PROFILE_OPTIONS(run_args, prof),
	CLI_CALL_FIELD_OPTION("probe", CLI_REQUIRED_ARG, probe_args_opt, 0, run_args, probe),
	CLI_FLAG_OPTION("probe-all", run_args, probe.all),
	CLI_STRING_OPTION("probe-dir", run_args, probe.dir),
	CLI_CALL_FIELD_OPTION("max-probe-bytes", CLI_REQUIRED_ARG, probe_args_opt, 1, run_args, probe),
	CLI_STRING_OPTION("compare-with", run_args, probe.compare),
	CLI_OPTIONS_END,
};

static int parse_args(run_args *a, int argc, char **argv, cli_io *io)
{
	cli_parser p = { "run", help, options, io, a, &a->prog.check, &a->prog.format, &a->run };
	{
		int e = cli_parse_options(&p, argc, argv);
		if (e)
			return e;
	}
	{
		int e = cli_one_operand(argc, argv, io, "run", "PROGRAM", &a->program);
		if (e)
			return e;
	}
	if (a->distributed && strcmp(a->distributed, "mpi") && strcmp(a->distributed, "none"))
		return cli_usage_error(io, "run", "invalid --distributed '%s' (mpi or none)", a->distributed);
	return input_args_validate(&a->in, io, "run");
}

/* The elements of a value's arrays (a tuple's, at any depth, together). */
static int64_t leaf_elements(const hloi_literal *lit)
{
	size_t n = hloi_literal_tuple_size(lit);
	if (hloi_shape_rank(hloi_literal_shape(lit)) >= 0)
		return hloi_shape_element_count(hloi_literal_shape(lit));
	int64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += leaf_elements(hloi_literal_tuple_element((hloi_literal *)lit, i));
	return total;
}

/* --compare: runs the reference engine too (when `result` came from the
 * fast one) and reports the elements that differ (doc/spec.md §7). Returns
 * EXIT_OK, EXIT_MISMATCH or the exit code of a failure. */
static int compare_engines(hloi_module *m, hloi_context *ctx, hloi_literal **inputs, size_t ninputs,
			   const hloi_run_options *run, hloi_literal *result, cli_io *io, hloi_literal **keep_ref)
{
	hloi_run_options other = *run;
	hloi_literal *ref = NULL;
	int fast_first = run->engine != HLOI_ENGINE_REFERENCE;
	other.engine = fast_first ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_FAST;
	other.profile = NULL;  /* the profile and the probes are of the run asked for */
	other.probe = NULL;
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
		/* both counts of array elements: a tuple's arrays together */
		int64_t n = leaf_elements(result);
		fprintf(io->err,
			"hloi run: --compare: %zu of %lld elements differ between the reference engine (expected) "
			"and the fast engine%s\n",
			bad, (long long)n, bad > 10 ? " (first 10 shown)" : "");
		rc = EXIT_MISMATCH;
	}
	if (keep_ref) {
		*keep_ref = fast_first ? ref : NULL;
		if (fast_first)
			ref = NULL;
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

/* Copies of the inputs, for --output_literals_file (an in-place run
 * consumes its aliased input). */
static int copy_inputs(hloi_literal ***out, hloi_literal **inputs, size_t n)
{
	hloi_literal **c = calloc(n ? n : 1, sizeof *c);
	if (!c)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (hloi_literal_clone(&c[i], inputs[i]) != HLOI_OK) {
			inputs_free(c, n);
			return -1;
		}
	}
	*out = c;
	return 0;
}

/* The exit code when a signal or the timeout has asked to stop (it is
 * printed), else `rc`. */
static int stopped(cli_io *io, int rc)
{
	int s = cli_stop_check(io, "run");
	return s ? s : rc;
}

/* Runs the module (each participant when several, out[p] each) with the
 * progress line; prints the diagnostics. Returns an exit code. */
static int evaluate(run_args *a, hloi_module *m, hloi_context *ctx, hloi_literal **inputs, size_t n,
		    hloi_literal **out, cli_io *io)
{
	cli_progress progress;
	cli_progress_start(&progress, "run", "evaluating", "instructions", a->quiet);
	a->run.progress = &progress.count;
	hloi_status st = hloi_module_run_participants(m, ctx, inputs, n, &a->run, out);
	cli_progress_stop(&progress);
	a->run.progress = NULL;
	if (st == HLOI_ESTOPPED && cli_stop_flag) {
		/* the library says where it stopped; the command says why */
		hloi_context_clear(ctx);
		return stopped(io, EXIT_RUNTIME);
	}
	cli_print_diagnostics(io, ctx);
	return st == HLOI_OK ? EXIT_OK : cli_exit_code(st);
}

/* Participant p's --participant-input files, in order, into *own (files
 * malloc'd): 1 when it has some, 0 when none, -1 when out of memory. */
static int participant_files(const run_args *a, size_t p, input_args *own)
{
	memset(own, 0, sizeof *own);
	for (size_t k = 0; k < a->npinputs; k++) {
		if (a->pinputs[k].participant != p)
			continue;
		const char **f = realloc(own->files, (own->nfiles + 1) * sizeof *f);
		if (!f) {
			free(own->files);
			own->files = NULL;
			return -1;
		}
		own->files = f;
		f[own->nfiles++] = a->pinputs[k].file;
	}
	return own->nfiles > 0;
}

/* One set of inputs per participant, participant-major: the loaded set
 * shared (each participant its own copy of an input the module writes its
 * result into), or with --random-inputs=SEED, participant p's own made
 * from SEED + p. *owned says which of flat's literals are to be freed. */
static int participant_inputs(hloi_literal ***flat_out, uint8_t **owned_out, size_t np, run_args *a, hloi_module *m,
			      hloi_context *ctx, hloi_literal **inputs, size_t n, cli_io *io)
{
	hloi_literal **flat = calloc(np * n + 1, sizeof *flat);
	uint8_t *owned = calloc(np * n + 1, 1);
	int aliased = hloi_module_aliased_input(m), rc = EXIT_OK;
	if (!flat || !owned)
		goto oom;
	for (size_t p = 0; p < np; p++) {
		input_args own;
		if (!hloi_mpi_owns(p, np))
			continue; /* another rank's participant */
		int has_own = participant_files(a, p, &own);
		if (has_own < 0)
			goto oom;
		if (has_own || (a->in.random && p > 0)) {
			input_args one = a->in;
			hloi_literal **set = NULL;
			size_t got = 0;
			one.seed = a->in.seed + p;
			if (has_own)
				one = own;
			rc = inputs_load(&set, &got, &one, m, ctx, a->run.max_memory, 0, a->program, io, "run");
			free(own.files);
			if (rc)
				goto fail;
			for (size_t i = 0; i < n && i < got; i++) {
				flat[p * n + i] = set[i];
				owned[p * n + i] = 1;
			}
			free(set);
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			flat[p * n + i] = inputs[i];
			if (!inputs[i]) {
				fprintf(io->err,
					"hloi run: participant %zu has no inputs: give --participant-input %zu:FILE per "
					"parameter, or --input, --inputs or --random-inputs for all\n",
					p, p);
				rc = EXIT_USAGE;
				goto fail;
			}
			if ((int)i != aliased)
				continue;
			if (hloi_literal_clone(&flat[p * n + i], inputs[i]) != HLOI_OK)
				goto oom;
			owned[p * n + i] = 1;
		}
	}
	*flat_out = flat;
	*owned_out = owned;
	return EXIT_OK;
oom:
	fputs("hloi run: out of memory making each participant's inputs\n", io->err);
	rc = EXIT_RUNTIME;
fail:
	for (size_t k = 0; flat && owned && k < np * n; k++)
		if (owned[k])
			hloi_literal_free(flat[k]);
	free(flat);
	free(owned);
	return rc;
}

static void free_participant_inputs(hloi_literal **flat, uint8_t *owned, size_t count)
{
	for (size_t k = 0; flat && owned && k < count; k++)
		if (owned[k])
			hloi_literal_free(flat[k]);
	free(flat);
	free(owned);
}

static void free_results(hloi_literal **r, size_t np)
{
	for (size_t p = 0; r && p < np; p++)
		hloi_literal_free(r[p]);
	free(r);
}

/* "Replica 1, partition 0" of participant p. */
static void participant_name(char *buf, size_t size, hloi_module *m, size_t p, size_t np)
{
	(void)np;
	long long parts = (long long)hloi_module_partition_count(m);
	snprintf(buf, size, "Replica %lld, partition %lld", (long long)p / parts, (long long)p % parts);
}

/* After a run: its outfeed values kept (the first run's in out1, --compare's
 * in out2). Returns an exit code. */
static int keep_outfeed(run_args *a, cli_io *io)
{
	feed_list *got = feeds_take_outfeed(&a->fd);
	if (!got) {
		fputs("hloi run: out of memory\n", io->err);
		return EXIT_RUNTIME;
	}
	if (!a->out1)
		a->out1 = got;
	else
		a->out2 = got;
	return EXIT_OK;
}

/* --compare's check of the outfeed values, then their writing (before the
 * result). Returns an exit code; *mismatch set on a difference. */
static int finish_outfeed(run_args *a, hloi_module *m, hloi_context *ctx, size_t np, int *mismatch, cli_io *io)
{
	size_t parts = hloi_module_partition_count(m);
	if (a->out2) {
		int fast_first = a->run.engine != HLOI_ENGINE_REFERENCE;
		int rc = feeds_compare(fast_first ? a->out2 : a->out1, fast_first ? a->out1 : a->out2, np, parts, ctx, io);
		if (rc == EXIT_MISMATCH)
			*mismatch = 1;
		else if (rc)
			return rc;
	}
	return a->out1 ? feeds_write(a->out1, np, &a->feed, parts, ctx, io) : EXIT_OK;
}

/* A run of several participants (the module has collectives and runs as
 * replicas x partitions of them). */
static int run_participants(run_args *a, hloi_module *m, hloi_context *ctx, hloi_literal **inputs, size_t n,
			    size_t np, cli_io *io)
{
	hloi_literal **flat = NULL, **flat2 = NULL, **res = NULL, **ref = NULL;
	uint8_t *owned = NULL, *owned2 = NULL;
	int rc = EXIT_OK, mismatch = 0;
	char name[96];
	if (a->literals_out)
		return cli_usage_error(io, "run", "--output_literals_file holds one result; the module runs as %zu participants",
				       np);
	rc = participant_inputs(&flat, &owned, np, a, m, ctx, inputs, n, io);
	if (rc)
		return rc;
	if (a->compare && (rc = participant_inputs(&flat2, &owned2, np, a, m, ctx, inputs, n, io)) != 0)
		goto cleanup;
	if (a->print_inputs)
		for (size_t p = 0; p < np; p++)
			for (size_t i = 0; i < n && hloi_mpi_owns(p, np); i++) {
				participant_name(name, sizeof name, m, p, np);
				if (!printable(flat[p * n + i], "an argument", "run without --print-inputs", io)) {
					rc = EXIT_RUNTIME;
					goto cleanup;
				}
				fprintf(io->out, "** %s: argument %zu (%s) **\n", name, i, hloi_module_parameter_name(m, i));
				hloi_literal_print(flat[p * n + i], io->out);
				fputc('\n', io->out);
			}
	res = calloc(np, sizeof *res);
	ref = calloc(np, sizeof *ref);
	if (!res || !ref) {
		fputs("hloi run: out of memory\n", io->err);
		rc = EXIT_RUNTIME;
		goto cleanup;
	}
	if ((rc = evaluate(a, m, ctx, flat, n, res, io)) != 0 || (rc = keep_outfeed(a, io)) != 0)
		goto cleanup;
	hloi_status st;
	if (a->compare) {
		hloi_run_options other = a->run;
		int fast_first = a->run.engine != HLOI_ENGINE_REFERENCE;
		other.engine = fast_first ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_FAST;
		other.profile = NULL;
	other.profile = NULL;  /* the profile is of the run asked for */
		st = hloi_module_run_participants(m, ctx, flat2, n, &other, ref);
		cli_print_diagnostics(io, ctx);
		if (st != HLOI_OK) {
			rc = cli_exit_code(st);
			goto cleanup;
		}
		if ((rc = keep_outfeed(a, io)) != 0)
			goto cleanup;
		for (size_t p = 0; p < np; p++) {
			size_t bad = 0;
			if (!hloi_mpi_owns(p, np))
				continue;
			const hloi_literal *expected = fast_first ? ref[p] : res[p], *actual = fast_first ? res[p] : ref[p];
			st = hloi_literal_compare(expected, actual, ctx, 1e-3, 1e-3, io->err, 10, &bad);
			cli_print_diagnostics(io, ctx);
			if (st != HLOI_OK) {
				rc = cli_exit_code(st);
				goto cleanup;
			}
			if (bad) {
				participant_name(name, sizeof name, m, p, np);
				fprintf(io->err,
					"hloi run: --compare: %s: %zu elements differ between the reference engine (expected) and the fast engine%s\n",
					name, bad, bad > 10 ? " (first 10 shown)" : "");
				mismatch = 1;
			}
		}
	}
	if ((rc = stopped(io, EXIT_OK)) != 0 || (rc = finish_outfeed(a, m, ctx, np, &mismatch, io)) != 0)
		goto cleanup;
	int gathered = a->mpi && (!a->output || a->print || a->gather_output);
	if (gathered) {
		/* rank 0 prints (or writes) every participant's result, as one
		 * process would */
		hloi_status gs = hloi_mpi_gather(ctx, res, np, cli_stop_pointer());
		cli_print_diagnostics(io, ctx);
		if (gs != HLOI_OK) {
			rc = cli_exit_code(gs);
			goto cleanup;
		}
	}
	for (size_t p = 0; a->output && p < np; p++) {
		if (a->mpi && (a->gather_output ? hloi_mpi_rank() != 0 : !hloi_mpi_owns(p, np)))
			continue; /* rank 0 or the owning rank writes it */
		char *path = cli_participant_path(a->output, p);
		if (!path) {
			fputs("hloi run: out of memory\n", io->err);
			rc = EXIT_RUNTIME;
			goto cleanup;
		}
		rc = output_write(res[p], path, ctx, io, "run");
		free(path);
		if (rc)
			goto cleanup;
	}
	for (size_t p = 0; (!a->output || a->print) && (!a->mpi || hloi_mpi_rank() == 0) && p < np; p++) {
		participant_name(name, sizeof name, m, p, np);
		if (!printable(res[p], "the result", "write it with --output FILE.npy", io)) {
			rc = EXIT_RUNTIME;
			goto cleanup;
		}
		fprintf(io->out, "%s** %s **\n", p ? "\n" : "", name);
		if (hloi_literal_print(res[p], io->out) != HLOI_OK) {
			fputs("hloi run: error writing the result\n", io->err);
			rc = EXIT_RUNTIME;
			goto cleanup;
		}
	}
	if (rc == EXIT_OK && mismatch)
		rc = EXIT_MISMATCH;
cleanup:
	free_results(res, np);
	free_results(ref, np);
	free_participant_inputs(flat, owned, np * n);
	free_participant_inputs(flat2, owned2, np * n);
	return rc;
}

int cmd_run(int argc, char **argv, cli_io *io)
{
	run_args a;
	memset(&a, 0, sizeof a);
	a.in.seed = 42;
	a.prog.check = (hloi_check_options)HLOI_CHECK_OPTIONS_INIT;
	a.run = (hloi_run_options)HLOI_RUN_OPTIONS_INIT;
	a.prof = (profile_args)PROFILE_ARGS_INIT;
	int rc = parse_args(&a, argc, argv, io);
	if (rc) {
		input_args_release(&a.in);
		feed_args_release(&a.feed);
		probe_args_release(&a.probe);
		free(a.pinputs);
		return rc < 0 ? EXIT_OK : rc;
	}
	hloi_context *ctx = NULL;
	hloi_module *m = NULL;
	hloi_literal **inputs = NULL, *result = NULL, *ref = NULL, **saved_inputs = NULL;
	size_t ninputs = 0;
	int mismatch = 0;
	hloi_literal *spare = NULL, *saved = NULL;
	hloi_profile *prof = NULL;
	if ((a.prof.profile || a.prof.trace) &&
	    hloi_profile_new(&prof, a.prof.trace ? HLOI_PROFILE_TRACE : 0) != HLOI_OK) {
		fputs("hloi: out of memory\n", io->err);
		input_args_release(&a.in);
		feed_args_release(&a.feed);
		probe_args_release(&a.probe);
		free(a.pinputs);
		return EXIT_RUNTIME;
	}
	a.run.profile = prof;
	cli_stop_install("run", a.timeout);
	a.run.stop = cli_stop_pointer();
	if (hloi_context_new(&ctx) != HLOI_OK) {
		fputs("hloi: out of memory\n", io->err);
		rc = EXIT_RUNTIME;
		goto cleanup;
	}
	rc = program_load(&m, ctx, io, a.program, &a.prog, 1);
	if ((rc = stopped(io, rc)) != 0)
		goto cleanup;
	size_t np = hloi_module_participant_count(m);
	if (a.distributed ? !strcmp(a.distributed, "mpi") : hloi_mpi_launched()) {
		hloi_status ms = hloi_mpi_start(ctx);
		cli_print_diagnostics(io, ctx);
		if (ms != HLOI_OK) {
			rc = cli_exit_code(ms);
			goto cleanup;
		}
		a.mpi = 1;
		if (np % (size_t)hloi_mpi_size()) {
			rc = cli_usage_error(io, "run",
					     "under MPI the ranks share the participants evenly: the module runs as %zu participant%s and the job has %d ranks",
					     np, np == 1 ? "" : "s", hloi_mpi_size());
			goto cleanup;
		}
	}
	if ((rc = probe_start(&a.probes, &a.probe, m, np, &a.run, io)) != 0)
		goto cleanup;
	a.probing = a.run.probe != NULL;
	for (size_t k = 0; k < a.npinputs; k++)
		if (a.pinputs[k].participant >= np) {
			rc = cli_usage_error(io, "run", "--participant-input %zu:%s: the module runs as %zu participant%s (0 to %zu)",
					     a.pinputs[k].participant, a.pinputs[k].file, np, np == 1 ? "" : "s", np - 1);
			goto cleanup;
		}
	cli_progress progress;
	cli_progress_start(&progress, "run", "reading the inputs", NULL, a.quiet);
	if (a.npinputs && !a.in.nfiles && !a.in.inputs_file && !a.in.literals_file && !a.in.random) {
		/* every participant is to have inputs of its own */
		ninputs = hloi_module_parameter_count(m);
		inputs = calloc(ninputs + 1, sizeof *inputs);
		rc = inputs ? EXIT_OK : EXIT_RUNTIME;
		if (!inputs)
			fputs("hloi run: out of memory\n", io->err);
	} else {
		rc = inputs_load(&inputs, &ninputs, &a.in, m, ctx, a.run.max_memory, 0, a.program, io, "run");
	}
	if (rc == EXIT_OK && np == 1 && a.npinputs) {
		/* one participant: its own inputs are the run's */
		input_args own;
		if (participant_files(&a, 0, &own) < 0) {
			fputs("hloi run: out of memory\n", io->err);
			rc = EXIT_RUNTIME;
		} else {
			inputs_free(inputs, ninputs);
			inputs = NULL;
			rc = inputs_load(&inputs, &ninputs, &own, m, ctx, a.run.max_memory, 0, a.program, io, "run");
			free(own.files);
		}
	}
	if (rc == EXIT_OK && a.in.random)
		rc = fill_elided(m, ctx, a.in.seed, io, "run");
	if (rc == EXIT_OK)
		rc = feeds_load(&a.fd, &a.feed, np, a.in.random, a.in.seed, ctx, io);
	feeds_attach(&a.fd, &a.run);
	cli_progress_stop(&progress);
	if ((rc = stopped(io, rc)) != 0)
		goto cleanup;
	if (a.dump_plan) {
		hloi_status ps = hloi_module_plan_print(m, ctx, &a.run, io->out);
		cli_print_diagnostics(io, ctx);
		if (ps != HLOI_OK) {
			rc = cli_exit_code(ps);
			goto cleanup;
		}
	}
	if (np > 1) {
		rc = run_participants(&a, m, ctx, inputs, ninputs, np, io);
		goto cleanup;
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
	if (a.literals_out && copy_inputs(&saved_inputs, inputs, ninputs)) {
		fputs("hloi run: out of memory copying the inputs for --output_literals_file\n", io->err);
		rc = EXIT_RUNTIME;
		goto cleanup;
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
	if ((rc = evaluate(&a, m, ctx, inputs, ninputs, &result, io)) != 0 || (rc = keep_outfeed(&a, io)) != 0)
		goto cleanup;
	hloi_status st;
	if (a.compare) {
		if (spare) {
			saved = inputs[aliased];
			inputs[aliased] = spare;
		}
		rc = compare_engines(m, ctx, inputs, ninputs, &a.run, result, io, a.literals_out ? &ref : NULL);
		if (spare) {
			inputs[aliased] = saved;
			hloi_literal_free(spare);
			spare = NULL;
		}
		if (rc == EXIT_MISMATCH)
			mismatch = 1;
		else if (rc)
			goto cleanup;
		if ((rc = keep_outfeed(&a, io)) != 0)
			goto cleanup;
	}
	if ((rc = stopped(io, EXIT_OK)) != 0 || (rc = finish_outfeed(&a, m, ctx, 1, &mismatch, io)) != 0)
		goto cleanup;
	if (a.output) {
		rc = output_write(result, a.output, ctx, io, "run");
		if (rc)
			goto cleanup;
	}
	if (a.literals_out) {
		cli_stop_defer();
		st = hloi_run_literals_save(ctx, a.literals_out, saved_inputs, ninputs, result, ref);
		cli_stop_undefer();
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
		if (a.print_inputs || feeds_printed(a.out1, 1, &a.feed))
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
	/* a signal that came while the result was written: the files are
	 * complete, but the run still reports it */
	if (rc == EXIT_OK && cli_stop_flag && cli_stop_flag != SIGALRM)
		rc = stopped(io, rc);
cleanup:
	if (a.probing)
		rc = probe_finish(&a.probes, rc);
	if (prof && (rc == EXIT_OK || rc == EXIT_MISMATCH) && hloi_profile_runs(prof)) {
		int threads = a.run.threads > 0 ? a.run.threads : 0;
		int prc = profile_finish(&a.prof, prof, m, threads, io->err, io, "run");
		if (prc)
			rc = prc;
	}
	hloi_profile_free(prof);
	cli_stop_remove();
	hloi_literal_free(spare);
	hloi_literal_free(result);
	hloi_literal_free(ref);
	inputs_free(inputs, ninputs);
	inputs_free(saved_inputs, ninputs);
	hloi_module_free(m);
	hloi_context_free(ctx);
	input_args_release(&a.in);
	feed_args_release(&a.feed);
	probe_args_release(&a.probe);
	feed_lists_free(a.out1, a.fd.np);
	feed_lists_free(a.out2, a.fd.np);
	feeds_free(&a.fd);
	free(a.pinputs);
	if (a.mpi) {
		/* a rank that fails ends the job: the others may wait for it */
		if (rc != EXIT_OK) {
			fprintf(io->err, "hloi run: rank %d of %d failed (exit %d): ending every rank\n", hloi_mpi_rank(),
				hloi_mpi_size(), rc);
			hloi_mpi_abort(rc);
		}
		hloi_context *fin = NULL;
		if (hloi_context_new(&fin) == HLOI_OK && hloi_mpi_finish(fin, NULL) != HLOI_OK) {
			cli_print_diagnostics(io, fin);
			rc = EXIT_RUNTIME;
		}
		hloi_context_free(fin);
	}
	return rc;
}
