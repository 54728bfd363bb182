/* A progress line on standard error while a command works for long:
 * shown only on a terminal and without --quiet, first after two seconds,
 * then once a second, and erased when the work ends (doc/cli.md "hloi run"). */
#ifndef HLOI_CLI_PROGRESS_H
#define HLOI_CLI_PROGRESS_H

#include <pthread.h>
#include <stdint.h>

typedef struct cli_progress {
	const char *cmd;
	const char *what;          /* "evaluating", "generating random inputs" */
	volatile uint64_t count;   /* what the line counts, stored by the work */
	const char *unit;          /* "instructions evaluated", ... */
	int active;                /* the thread runs */
	int done;
	int shown;                 /* a line is on the terminal */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
} cli_progress;

/* Starts the display for `cmd` (nothing when quiet or standard error is
 * not a terminal). `unit` names what p->count counts; NULL shows the time
 * only. */
void cli_progress_start(cli_progress *p, const char *cmd, const char *what, const char *unit, int quiet);
/* Ends it and erases the line (joins the thread). */
void cli_progress_stop(cli_progress *p);

#endif
