/* Interrupts and --timeout (see stop.h). */
#include "stop.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* The library reads the flag through a `const volatile int *`. */
_Static_assert(_Generic((sig_atomic_t)0, int: 1, default: 0), "sig_atomic_t is int");

volatile sig_atomic_t cli_stop_flag;

static double timeout_seconds;
static struct sigaction saved_int, saved_term, saved_alrm;
static int installed;

/* What the process says when the run has not stopped STOP_GRACE_S seconds
 * after it was asked to (an engine inside one long instruction), made
 * before any signal: a handler may only write() it. By the flag's signal. */
enum { MSG_TIMEOUT, MSG_INT, MSG_TERM, MSG_COUNT };
static char grace_msg[MSG_COUNT][200];
static size_t grace_len[MSG_COUNT];

const volatile int *cli_stop_pointer(void)
{
	return &cli_stop_flag;
}

static void on_signal(int sig)
{
	if (!cli_stop_flag) {
		cli_stop_flag = sig;
		/* the run stops at its next instruction; if it is inside a long
		 * one, SIGALRM comes back after the grace */
		alarm(STOP_GRACE_S);
		return;
	}
	if (sig != SIGALRM)
		return;
	int f = cli_stop_flag;
	int k = f == SIGALRM ? MSG_TIMEOUT : f == SIGINT ? MSG_INT : MSG_TERM;
	ssize_t w = write(STDERR_FILENO, grace_msg[k], grace_len[k]);
	(void)w;
	_exit(f == SIGALRM ? EXIT_RUNTIME : 128 + f);
}

static void grace_message(int k, const char *cmd, const char *why)
{
	int n = snprintf(grace_msg[k], sizeof grace_msg[k],
			 "hloi %s: %s; the engine did not stop within %d s (inside one instruction): exiting at once\n",
			 cmd, why, STOP_GRACE_S);
	grace_len[k] = n < 0 ? 0 : (size_t)n < sizeof grace_msg[k] ? (size_t)n : sizeof grace_msg[k] - 1;
}

void cli_stop_install(const char *cmd, double timeout_s)
{
	char why[64];
	snprintf(why, sizeof why, "timed out after %g s (--timeout)", timeout_s);
	grace_message(MSG_TIMEOUT, cmd, why);
	grace_message(MSG_INT, cmd, "interrupted (SIGINT)");
	grace_message(MSG_TERM, cmd, "terminated (SIGTERM)");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* the first signal asks to stop; a second one ends the process */
	sa.sa_flags = (int)SA_RESETHAND;
	cli_stop_flag = 0;
	timeout_seconds = timeout_s;
	sigaction(SIGINT, &sa, &saved_int);
	sigaction(SIGTERM, &sa, &saved_term);
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, &saved_alrm);
	installed = 1;
	if (timeout_s > 0) {
		struct itimerval it;
		memset(&it, 0, sizeof it);
		it.it_value.tv_sec = (time_t)timeout_s;
		it.it_value.tv_usec = (suseconds_t)((timeout_s - floor(timeout_s)) * 1e6);
		if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
			it.it_value.tv_usec = 1;
		setitimer(ITIMER_REAL, &it, NULL);
	}
}

void cli_stop_remove(void)
{
	if (!installed)
		return;
	struct itimerval off;
	memset(&off, 0, sizeof off);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGINT, &saved_int, NULL);
	sigaction(SIGTERM, &saved_term, NULL);
	sigaction(SIGALRM, &saved_alrm, NULL);
	installed = 0;
}

int cli_stop_check(cli_io *io, const char *cmd)
{
	int sig = cli_stop_flag;
	if (!sig)
		return 0;
	if (sig == SIGALRM) {
		fprintf(io->err, "hloi %s: timed out after %g s (--timeout)\n", cmd, timeout_seconds);
		return EXIT_RUNTIME;
	}
	fprintf(io->err, "hloi %s: %s (%s)\n", cmd, sig == SIGINT ? "interrupted" : "terminated",
		sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal");
	return 128 + sig;
}

static void mask(int how)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGALRM);
	sigprocmask(how, &set, NULL);
}

void cli_stop_defer(void)
{
	mask(SIG_BLOCK);
}

void cli_stop_undefer(void)
{
	mask(SIG_UNBLOCK);
}

int cli_parse_seconds(const char *s, double *out)
{
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e7)
		return -1;
	*out = v;
	return 0;
}
