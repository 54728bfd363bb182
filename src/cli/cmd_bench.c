/* hloi bench: times evaluation alone (doc/spec.md §7) — the program is loaded and
 * checked and the inputs made once; each iteration times one run with
 * CLOCK_MONOTONIC. The first run allocates the result and later ones run
 * into it (hloi_module_run_into), the steady state of a loop; with
 * --fresh-result every run allocates its own (freeing it is not timed).
 * An in-place module (input_output_alias) writes its result into the
 * aliased input: there the steady state is a loop that donates each run's
 * result back as the next run's input (as a training step updates its
 * state), and --fresh-result gives each run a fresh copy of the input
 * instead (made outside the timed region).
 * A module of several participants (collectives, --replicas/--partitions)
 * times each run of all of them (hloi_module_run_participants), every
 * participant given the same inputs and making results of its own.
 * Inputs in another layout than their parameter's are converted once
 * before the runs (hloi_module_conform_input), so that no run times the
 * conversion. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "feeds.h"
#include "inputs.h"
#include "opts.h"
#include "profile.h"
#include "program.h"
#include "progress.h"

static const char help[] =
	"usage: hloi bench PROGRAM [options]\n"
	"       hloi bench --calibrate [--threads N] [--json]\n"
	"\n"
	"Times the evaluation of PROGRAM (not parsing, checking or making inputs)\n"
	"and prints the median, minimum and maximum time and the bandwidth\n"
	"(bytes of the inputs and the result per run). Runs after the first\n"
	"write into the first run's result, as a loop running a program again\n"
	"and again would; a program that writes its result into an input\n"
	"(input_output_alias) gets the previous run's result as that input.\n"
	"An input in another layout than its parameter's is converted once,\n"
	"before the runs. --json adds the planned peak memory (peak_bytes: the parameters, the\n"
	"values and the engine's scratch; see `hloi plan`).\n"
	"\n"
	"Options:\n"
	"  --iterations N          timed runs (default 10)\n"
	"  --warmup N              untimed runs first (default 2)\n"
	"  --fresh-result          allocate a new result in every run (the cost of\n"
	"                          a single `hloi run`, page faults included); an\n"
	"                          in-place program gets a fresh copy of its input\n"
	"  --json                  print one JSON object (with --profile=json, the\n"
	"                          profile is its `profile` member)\n"
	PROFILE_HELP
	"                          The profile and the trace cover the timed runs;\n"
	"                          the profile gives the time per run\n"
	"  --calibrate             measure the machine's limits on --threads threads\n"
	"                          (GEMM speed and memory bandwidth) and keep them\n"
	"                          in $HLOI_MACHINE_FILE, else\n"
	"                          ${XDG_CACHE_HOME:-~/.cache}/hloi/machine, for the\n"
	"                          profiles and `hloi plan --cost`\n"
	"  --random-inputs[=SEED]  pseudo-random inputs (the default; seed 42)\n"
	"  --inputs FILE           a file holding one literal per parameter\n"
	"  --input FILE            one value per parameter (.npy or literal text)\n"
	"  --infeed FILE           values for the infeed instructions, as `hloi run`\n"
	"                          reads them; every run reads the queue from its\n"
	"                          start (without it, infeeds get random values,\n"
	"                          drawn during the run and so timed)\n"
	"  --participant-infeed P:FILE\n"
	"                          participant P's own infeed queue\n"
	"  --host-recv CH:FILE     values of the host recvs of channel_id CH, as\n"
	"                          --infeed's (a channel without a file: random)\n"
	"                          What outfeeds and host sends give is kept during\n"
	"                          a run (that copy is timed) and dropped after it\n"
	"  --engine ENGINE         fast or reference\n"
	"  --threads N             worker threads (0: the machine's cores)\n"
	"  --max-memory SIZE       memory budget in bytes, with optional K, M or G\n"
	"  --replicas N            run as N replicas (default: the module's\n"
	"                          replica_count, else 1)\n"
	"  --partitions M          run as M partitions (default: num_partitions)\n"
	"                          A module with collectives runs as N x M\n"
	"                          participants, one thread each, every one on the\n"
	"                          same inputs; a run is all of them, the bytes\n"
	"                          every participant's inputs and result\n"
	"  --strict                accept exactly what XLA's verifier accepts\n"
	"  --allow-mixed-precision accept floating-point types mixed in one\n"
	"                          instruction, as XLA's verifier with\n"
	"                          allow_mixed_precision (converts made explicit)\n"
	"  --broadcast-mode MODE   xla or numpy, for modules that do not say\n"
	"  --format FORMAT         hlo, pb, pbtxt or mlir (default: by extension)\n"
	"  --color WHEN            auto, always or never, for diagnostics\n"
	"  --quiet                 no progress line (one shows on a terminal when\n"
	"                          reading the inputs or the runs take over 2 s)\n"
	"  -h, --help              show this help\n"
	"\n"
	"Example:\n"
	"  hloi bench tests/bench/add.hlo --iterations 20 --json\n";

typedef struct bench_args {
	const char *program;
	int64_t iterations, warmup;
	int json;
	int fresh;
	int quiet;
	int calibrate;
	profile_args prof;
	input_args in;
	feed_args feed;
	program_opts prog;
	hloi_run_options run;
} bench_args;

static const cli_opt options[] = {
	CLI_INT_OPTION("iterations", bench_args, iterations, 1, 1000000, "1 to 1000000"),
	CLI_INT_OPTION("warmup", bench_args, warmup, 0, 1000000, "0 to 1000000"),
	CLI_FLAG_OPTION("json", bench_args, json),
	CLI_FLAG_OPTION("fresh-result", bench_args, fresh),
	CLI_CALL_FIELD_OPTION("random-inputs", CLI_OPTIONAL_ARG, input_args_opt, 'r', bench_args, in),
	CLI_CALL_FIELD_OPTION("inputs", CLI_REQUIRED_ARG, input_args_opt, 'I', bench_args, in),
	CLI_CALL_FIELD_OPTION("input", CLI_REQUIRED_ARG, input_args_opt, 'i', bench_args, in),
	CLI_CALL_FIELD_OPTION("infeed", CLI_REQUIRED_ARG, feed_args_infeed_opt, 0, bench_args, feed),
	CLI_CALL_FIELD_OPTION("participant-infeed", CLI_REQUIRED_ARG, feed_args_infeed_opt, 1, bench_args, feed),
	CLI_CALL_FIELD_OPTION("host-recv", CLI_REQUIRED_ARG, feed_args_host_opt, 0, bench_args, feed),
	CLI_SHARED_OPTION("engine", CLI_OPT_ENGINE),
	CLI_SHARED_OPTION("threads", CLI_OPT_THREADS),
	CLI_SHARED_OPTION("max-memory", CLI_OPT_MAX_MEMORY),
	CLI_SHARED_OPTION("replicas", CLI_OPT_REPLICAS),
	CLI_SHARED_OPTION("partitions", CLI_OPT_PARTITIONS),
	CLI_SHARED_OPTION("strict", CLI_OPT_STRICT),
	CLI_SHARED_OPTION("allow-mixed-precision", CLI_OPT_MIXED),
	CLI_SHARED_OPTION("broadcast-mode", CLI_OPT_MODE),
	CLI_SHARED_OPTION("format", CLI_OPT_FORMAT),
	CLI_SHARED_OPTION("color", CLI_OPT_COLOR),
	CLI_FLAG_OPTION("quiet", bench_args, quiet),
	CLI_FLAG_OPTION("calibrate", bench_args, calibrate),
	PROFILE_OPTIONS(bench_args, prof),
	CLI_OPTIONS_END,
};

static int parse_args(bench_args *a, int argc, char **argv, cli_io *io)
{
	cli_parser p = { "bench", help, options, io, a, &a->prog.check, &a->prog.format, &a->run };
	{
		int e = cli_parse_options(&p, argc, argv);
		if (e)
			return e;
	}
	if (a->calibrate) {
		if (optind < argc)
			return cli_usage_error(io, "bench", "--calibrate takes no PROGRAM ('%s')", argv[optind]);
		return 0;
	}
	{
		int e = cli_one_operand(argc, argv, io, "bench", "PROGRAM", &a->program);
		if (e)
			return e;
	}
	return input_args_validate(&a->in, io, "bench");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The bytes of a value's buffers, a tuple's elements' included. */
static uint64_t value_bytes(hloi_literal *lit)
{
	if (!lit)
		return 0; /* another rank's participant */
	size_t n = hloi_literal_tuple_size(lit);
	uint64_t bytes = hloi_literal_size_bytes(lit);
	for (size_t i = 0; i < n; i++)
		bytes += value_bytes(hloi_literal_tuple_element(lit, i));
	return bytes;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

int cmd_bench(int argc, char **argv, cli_io *io)
{
	bench_args a;
	memset(&a, 0, sizeof a);
	a.iterations = 10;
	a.warmup = 2;
	a.in.seed = 42;
	a.feed.cmd = "bench";
	a.prog.check = (hloi_check_options)HLOI_CHECK_OPTIONS_INIT;
	a.run = (hloi_run_options)HLOI_RUN_OPTIONS_INIT;
	a.prof = (profile_args)PROFILE_ARGS_INIT;
	int rc = parse_args(&a, argc, argv, io);
	if (rc || a.calibrate) {
		input_args_release(&a.in);
		feed_args_release(&a.feed);
		if (!rc)
			return profile_calibrate(a.run.threads, a.json, io);
		return rc < 0 ? EXIT_OK : rc;
	}
	hloi_context *ctx = NULL;
	hloi_module *m = NULL;
	hloi_literal **inputs = NULL, *result = NULL, *carried = NULL, **flat = NULL, **outs = NULL;
	size_t ninputs = 0, np = 1;
	double *times = NULL;
	feeds fd;
	memset(&fd, 0, sizeof fd);
	hloi_status st;
	hloi_profile *prof = NULL;
	char *pbuf = NULL;
	size_t plen = 0;
	int mpi = 0;        /* a rank of an MPI job */
	cli_progress progress;
	memset(&progress, 0, sizeof progress);
	if (hloi_context_new(&ctx) != HLOI_OK) {
		fputs("hloi: out of memory\n", io->err);
		return EXIT_RUNTIME;
	}
	rc = program_load(&m, ctx, io, a.program, &a.prog, 1);
	if (rc)
		goto cleanup;
	/* under mpirun, each rank runs its participants; rank 0 reports */
	if (hloi_mpi_launched() && hloi_module_participant_count(m) > 1) {
		hloi_status ms = hloi_mpi_start(ctx);
		cli_print_diagnostics(io, ctx);
		if (ms != HLOI_OK) {
			rc = cli_exit_code(ms);
			goto cleanup;
		}
		mpi = 1;
		if (hloi_module_participant_count(m) % (size_t)hloi_mpi_size()) {
			rc = cli_usage_error(io, "bench",
					     "under MPI the ranks share the participants evenly: the module runs as %zu participants and the job has %d ranks",
					     hloi_module_participant_count(m), hloi_mpi_size());
			goto cleanup;
		}
	}
	cli_progress_start(&progress, "bench", "reading the inputs", NULL, a.quiet);
	rc = inputs_load(&inputs, &ninputs, &a.in, m, ctx, a.run.max_memory, 1, a.program, io, "bench");
	if (rc == EXIT_OK && (a.in.random || (!a.in.nfiles && !a.in.inputs_file && !a.in.literals_file &&
					      !hloi_module_snapshot_input_count(m))))
		rc = fill_elided(m, ctx, a.in.seed, io, "bench");
	cli_progress_stop(&progress);
	if (rc)
		goto cleanup;
	times = calloc((size_t)a.iterations, sizeof *times);
	if (times && (a.prof.profile || a.prof.trace) &&
	    hloi_profile_new(&prof, a.prof.trace ? HLOI_PROFILE_TRACE : 0) != HLOI_OK) {
		free(times);
		times = NULL;
	}
	if (!times) {
		fputs("hloi: out of memory\n", io->err);
		rc = EXIT_RUNTIME;
		goto cleanup;
	}
	/* each input in its parameter's layout once, so that no timed run
	 * converts it */
	cli_progress_start(&progress, "bench", "converting the inputs", NULL, a.quiet);
	for (size_t i = 0; i < ninputs; i++) {
		hloi_literal *c = NULL;
		if (!hloi_module_parameter_accepts(m, i, inputs[i]))
			continue;
		if (hloi_module_conform_input(m, ctx, i, inputs[i], &a.run, &c) != HLOI_OK) {
			cli_progress_stop(&progress);
			cli_print_diagnostics(io, ctx);
			rc = EXIT_RUNTIME;
			goto cleanup;
		}
		hloi_literal_free(inputs[i]);
		inputs[i] = c;
	}
	cli_progress_stop(&progress);
	uint64_t bytes = 0;
	for (size_t i = 0; i < ninputs; i++)
		bytes += value_bytes(inputs[i]);
	np = hloi_module_participant_count(m);
	/* the infeed queues and host recvs: random values unless files give them,
	 * as the inputs are */
	rc = feeds_load(&fd, &a.feed, np, a.in.random || (!a.in.nfiles && !a.in.inputs_file && !a.in.literals_file),
			a.in.seed, ctx, io);
	if (rc)
		goto cleanup;
	feeds_attach(&fd, &a.run);
	if (np > 1) {
		if (hloi_module_aliased_input(m) >= 0) {
			fprintf(io->err, "hloi bench: %s writes its result into an input (input_output_alias); "
					 "its runs as %zu participants are not timed\n", a.program, np);
			rc = EXIT_USAGE;
			goto cleanup;
		}
		flat = calloc(np * (ninputs ? ninputs : 1), sizeof *flat);
		outs = calloc(np, sizeof *outs);
		if (!flat || !outs) {
			fputs("hloi: out of memory\n", io->err);
			rc = EXIT_RUNTIME;
			goto cleanup;
		}
		for (size_t p = 0; p < np; p++)
			for (size_t i = 0; i < ninputs; i++)
				flat[p * ninputs + i] = inputs[i];
		bytes *= np;
	}
	/* An in-place module consumes its aliased input. Steady state: the
	 * first run gets a copy of it and each later run the previous run's
	 * result (the same buffer, donated back). Fresh: each run gets a new
	 * copy, made outside the timed region. */
	int aliased = hloi_module_aliased_input(m);
	hloi_literal *original = aliased >= 0 && (size_t)aliased < ninputs ? inputs[aliased] : NULL;
	int reuse = !a.fresh && !original && np == 1;
	cli_progress_start(&progress, "bench", "running", "runs", a.quiet);
	for (int64_t i = 0; i < a.warmup + a.iterations; i++) {
		hloi_literal *copy = NULL;
		if (original && !carried) {
			if (hloi_literal_clone(&copy, original) != HLOI_OK) {
				fputs("hloi bench: out of memory\n", io->err);
				rc = EXIT_RUNTIME;
				goto cleanup;
			}
			inputs[aliased] = copy;
		} else if (original) {
			inputs[aliased] = carried;
			copy = carried;
			carried = NULL;
		}
		a.run.profile = i >= a.warmup ? prof : NULL;  /* the timed runs */
		double t0 = now_s();
		if (np > 1)
			st = hloi_module_run_participants(m, ctx, flat, ninputs, &a.run, outs);
		else if (reuse && result)
			st = hloi_module_run_into(m, ctx, inputs, ninputs, &a.run, result);
		else
			st = hloi_module_run(m, ctx, inputs, ninputs, &a.run, &result);
		/* a run ends when every rank's participants have ended it */
		if (mpi && st == HLOI_OK)
			st = hloi_mpi_wait_run(ctx, a.run.stop);
		double t1 = now_s();
		if (original) {
			inputs[aliased] = original;
			hloi_literal_free(copy);
		}
		/* what outfeeds and host sends gave: dropped, outside the timed region */
		feed_lists_free(feeds_take_outfeed(&fd), np);
		if (st != HLOI_OK) {
			cli_print_diagnostics(io, ctx);
			rc = cli_exit_code(st);
			goto cleanup;
		}
		for (size_t p = 0; p < np && np > 1; p++) {
			if (i == 0)
				bytes += value_bytes(outs[p]) * (mpi ? (size_t)hloi_mpi_size() : 1);
			hloi_literal_free(outs[p]);
			outs[p] = NULL;
		}
		if (i == 0 && np == 1)
			bytes += value_bytes(result);
		if (original && !a.fresh) {
			carried = result;
			result = NULL;
		} else if (!reuse) {
			hloi_literal_free(result);
			result = NULL;
		}
		if (i >= a.warmup)
			times[i - a.warmup] = t1 - t0;
		progress.count = (uint64_t)i + 1;
	}
	cli_progress_stop(&progress);
	qsort(times, (size_t)a.iterations, sizeof *times, cmp_double);
	size_t k = (size_t)a.iterations;
	double median = k % 2 ? times[k / 2] : (times[k / 2 - 1] + times[k / 2]) / 2;
	double gbps = median > 0 ? (double)bytes / median / 1e9 : 0;
	int threads = a.run.threads;
	if (threads <= 0) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		threads = cores > 0 ? (int)cores : 1;
	}
	const char *engine = a.run.engine == HLOI_ENGINE_REFERENCE ? "reference" : "fast";
	uint64_t peak = 0;
	if (hloi_module_plan_peak_bytes(m, ctx, &a.run, &peak) != HLOI_OK)
		peak = 0;
	if (prof && a.json && a.prof.profile) {
		/* the profile as the JSON object's `profile` member */
		FILE *mem = open_memstream(&pbuf, &plen);
		profile_args only = a.prof;
		only.trace = NULL;
		only.json = 1;
		rc = mem ? profile_finish(&only, prof, m, threads, mem, io, "bench") : EXIT_RUNTIME;
		if (mem && fclose(mem) != 0 && !rc)
			rc = EXIT_RUNTIME;
		if (rc) {
			if (!mem)
				fputs("hloi bench: out of memory\n", io->err);
			goto cleanup;
		}
		while (plen && pbuf[plen - 1] == '\n')
			pbuf[--plen] = 0;
	}
	if (mpi && hloi_mpi_rank() != 0)
		; /* rank 0 reports */
	else if (a.json)
		fprintf(io->out,
			"{\"median_s\":%.9f,\"min_s\":%.9f,\"max_s\":%.9f,\"bytes\":%llu,\"gbps\":%.3f,"
			"\"engine\":\"%s\",\"threads\":%d,\"result\":\"%s\",\"peak_bytes\":%llu%s%s}\n",
			median, times[0], times[k - 1], (unsigned long long)bytes, gbps, engine, threads,
			reuse ? "reused" : carried ? "carried" : "fresh", (unsigned long long)peak,
			pbuf ? ",\"profile\":" : "", pbuf ? pbuf : "");
	else
		fprintf(io->out,
			"%s: %lld iterations, engine %s, %d thread%s, %s result\n"
			"median %.6f s, min %.6f s, max %.6f s\n"
			"%llu bytes per run, %.2f GB/s\n"
			"planned peak memory %llu bytes\n",
			a.program, (long long)a.iterations, engine, threads, threads == 1 ? "" : "s",
			reuse ? "reused" : carried ? "carried" : "fresh", median, times[0], times[k - 1], (unsigned long long)bytes, gbps,
			(unsigned long long)peak);
	if (prof && (!mpi || hloi_mpi_rank() == 0)) {
		profile_args rest = a.prof;
		if (a.json)
			rest.profile = 0;  /* printed above */
		else if (rest.profile)
			fputc('\n', io->out);
		rc = profile_finish(&rest, prof, m, threads, io->out, io, "bench");
	}
cleanup:
	hloi_profile_free(prof);
	free(pbuf);
	cli_progress_stop(&progress);
	hloi_literal_free(carried);
	hloi_literal_free(result);
	for (size_t p = 0; outs && p < np; p++)
		hloi_literal_free(outs[p]);
	free(outs);
	free(flat);
	inputs_free(inputs, ninputs);
	free(times);
	feeds_free(&fd);
	hloi_module_free(m);
	hloi_context_free(ctx);
	input_args_release(&a.in);
	feed_args_release(&a.feed);
	if (mpi) {
		/* a rank that fails ends the job: the others may wait for it */
		if (rc != EXIT_OK) {
			fprintf(io->err, "hloi bench: rank %d of %d failed (exit %d): ending every rank\n", hloi_mpi_rank(),
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
