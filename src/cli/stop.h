/* Interrupts and time limits for commands that run programs: SIGINT and
 * SIGTERM, and --timeout (a SIGALRM timer), set one flag that the library
 * reads between instructions (hloi_run_options.stop) and the command reads
 * between its phases; a run still going STOP_GRACE_S seconds later ends
 * the process. */
#ifndef HLOI_CLI_STOP_H
#define HLOI_CLI_STOP_H

#include <signal.h>

#include "cli.h"

/* 0, or the signal that asked to stop (SIGALRM: the --timeout expired). */
extern volatile sig_atomic_t cli_stop_flag;

/* The flag as hloi_run_options.stop takes it. */
const volatile int *cli_stop_pointer(void);

/* Seconds a run has to stop once asked (the flag set): an engine inside one
 * long instruction reads the flag only after it, so when the grace is over
 * the process says why (naming `cmd`) and exits at once with the exit code
 * cli_stop_check gives, nothing freed. */
#define STOP_GRACE_S 2

/* Installs the handlers (a second SIGINT or SIGTERM then ends the process
 * at once) and, when timeout_s > 0, arms the timer; `cmd` is the command
 * the grace's message names. */
void cli_stop_install(const char *cmd, double timeout_s);
/* Disarms the timer and restores the handlers. */
void cli_stop_remove(void);

/* When the flag is set, prints why (`hloi CMD: timed out after 2 s
 * (--timeout)`, `hloi CMD: interrupted (SIGINT)`) and returns the exit code:
 * 4 for the timeout, 128 + the signal's number otherwise. Else returns 0. */
int cli_stop_check(cli_io *io, const char *cmd);

/* Defers SIGINT, SIGTERM and SIGALRM while a result is written (so that a
 * file is never left half-written), and lets them in again. */
void cli_stop_defer(void);
void cli_stop_undefer(void);

/* Parses a --timeout value: a positive number of seconds (fractions
 * allowed, at most 10^7). Returns -1 when invalid. */
int cli_parse_seconds(const char *s, double *out);

#endif
