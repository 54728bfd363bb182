/* One golden case of `hloi test`: its directives (checked against the
 * runner's vocabulary and a whitelist of flags), the command line they
 * make, and its in-process run. */
#ifndef HLOI_CLI_TEST_CASE_H
#define HLOI_CLI_TEST_CASE_H

#include "cli.h"

/* The directives a case file may start with, and the commands and flags
 * they may name (for --help and the man page). */
#define TEST_DIRECTIVES "hloi-command, hloi-flags"
#define TEST_COMMANDS "run, check, fmt, lower, dot"

/* When set (hloi test --outputs DIR), the scratch directory of case
 * NAME.ext is DIR/NAME, made when needed and kept; else a temporary one,
 * removed after the case. */
extern const char *test_case_outputs_dir;

/* Runs the case at `path` in this process and returns what it printed
 * (diagnostics, then standard output; malloc'd). When the case cannot be
 * run as written (an unknown directive, command or flag, a file outside
 * its directory, an unreadable file) returns NULL and sets *problem to a
 * malloc'd reason. */
char *test_case_run(const char *path, char **problem);

#endif
