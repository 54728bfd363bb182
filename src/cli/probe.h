/* hloi run's probes: the values of chosen instructions written as .npy
 * files as the run computes them (--probe, --probe-all, --probe-dir), or
 * compared with the files of an earlier run (--compare-with), through
 * hloi_run_options' probe callback (doc/cli.md, "Probes"). */
#ifndef HLOI_CLI_PROBE_H
#define HLOI_CLI_PROBE_H

#include "cli.h"
#include "opts.h"

/* The probe files a run may write at most by default (--max-probe-bytes). */
#define PROBE_MAX_BYTES_DEFAULT ((uint64_t)1 << 30)

typedef struct probe_args {
	const char **names;     /* --probe NAME[,NAME...], split (malloc'd, with the strings) */
	size_t nnames;
	int all;                /* --probe-all */
	const char *dir;        /* --probe-dir, or NULL */
	uint64_t max_bytes;     /* --max-probe-bytes (0: PROBE_MAX_BYTES_DEFAULT) */
	const char *compare;    /* --compare-with DIR, or NULL */
} probe_args;

/* The option handler of --probe (code 0) and --max-probe-bytes (1). */
int probe_args_opt(cli_parser *p, const cli_opt *o, const char *arg);
void probe_args_release(probe_args *a);

/* What a run's probes did so far (probe_start .. probe_finish). */
typedef struct probe_run {
	const probe_args *a;
	cli_io *io;
	const char *dir;        /* where files go, or NULL (--compare-with alone) */
	uint64_t max_bytes;
	uint64_t bytes, files;  /* written */
	uint64_t skipped;       /* tuple and token values (no file) */
	uint64_t compared, missing, differ;
	char *first;            /* the first value that differs (malloc'd), or NULL */
	char *path;             /* scratch */
	size_t cap;
} probe_run;

/* Checks the probe options against the module (each name selects an
 * instruction; one participant), makes the directory, and attaches the
 * callback to `run`. Returns 0 (nothing asked: `run` untouched too) or an
 * exit code, the error printed. */
int probe_start(probe_run *r, const probe_args *a, hloi_module *m, size_t participants, hloi_run_options *run,
		cli_io *io);

/* After the run (rc its exit code so far): the notes and --compare-with's
 * verdict. Returns rc, or EXIT_MISMATCH when a value differed. Frees r. */
int probe_finish(probe_run *r, int rc);

#endif
