/* Profiles, costs and the machine file (profile.h). */
#include "profile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int parse_positive(const char *s, double *out)
{
	char *end = NULL;
	errno = 0;
	double v = s ? strtod(s, &end) : 0;
	if (!s || !*s || *end || errno || !(v > 0) || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int profile_args_opt(cli_parser *p, const cli_opt *o, const char *arg)
{
	profile_args *a = cli_opt_field(p, o);
	int64_t n;
	switch (o->code) {
	case PROFILE_OPT_PROFILE:
		if (arg && strcmp(arg, "json") != 0 && strcmp(arg, "text") != 0)
			return cli_usage_error(p->io, p->cmd, "invalid --profile '%s' (text or json)", arg);
		a->profile = 1;
		a->json = arg && strcmp(arg, "json") == 0;
		return 0;
	case PROFILE_OPT_TRACE:
		if (!*arg)
			return cli_usage_error(p->io, p->cmd, "invalid --trace '' (a file name)");
		a->trace = arg;
		return 0;
	case PROFILE_OPT_TOP:
		if (cli_parse_int(arg, &n) || n < 0 || n > 1000000000)
			return cli_usage_error(p->io, p->cmd, "invalid --top '%s' (0 to 1000000000; 0: all)", arg);
		a->top = n;
		return 0;
	case PROFILE_OPT_GFLOPS:
		if (parse_positive(arg, &a->gflops))
			return cli_usage_error(p->io, p->cmd, "invalid --peak-gflops '%s' (GFLOP/s, more than 0)", arg);
		return 0;
	default:
		if (parse_positive(arg, &a->gbps))
			return cli_usage_error(p->io, p->cmd, "invalid --bandwidth '%s' (GB/s, more than 0)", arg);
		return 0;
	}
}

/* $HLOI_MACHINE_FILE, else $XDG_CACHE_HOME/hloi/machine, else
 * $HOME/.cache/hloi/machine; "" when none can be named. */
static void machine_path(char *out, size_t n, char *dir, size_t ndir)
{
	const char *env = getenv("HLOI_MACHINE_FILE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	out[0] = dir[0] = 0;
	if (env && *env) {
		snprintf(out, n, "%s", env);
		return;
	}
	if (xdg && *xdg)
		snprintf(dir, ndir, "%s/hloi", xdg);
	else if (home && *home)
		snprintf(dir, ndir, "%s/.cache/hloi", home);
	else
		return;
	snprintf(out, n, "%s/machine", dir);
}

static int cores(void)
{
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	return c > 0 ? (int)c : 1;
}

/* One line of the machine file: `threads=T gflops=G gbps=B ...`. */
static int parse_line(const char *line, int *threads, double *gflops, double *gbps)
{
	int t = 0;
	double g = 0, b = 0;
	if (sscanf(line, "threads=%d gflops=%lf gbps=%lf", &t, &g, &b) != 3 || t < 1 || !(g >= 0) || !(b >= 0))
		return -1;
	*threads = t;
	*gflops = g;
	*gbps = b;
	return 0;
}

void profile_machine(const profile_args *a, int threads, hloi_machine *m, const char **from)
{
	static char path[4096];
	char dir[4096];
	m->gflops = m->gbps = 0;
	*from = NULL;
	if (threads <= 0)
		threads = cores();
	machine_path(path, sizeof path, dir, sizeof dir);
	FILE *f = path[0] ? fopen(path, "r") : NULL;
	if (f) {
		char line[512];
		int best = -1;
		while (fgets(line, sizeof line, f)) {
			int t;
			double g, b;
			if (parse_line(line, &t, &g, &b))
				continue;
			int d = abs(t - threads);
			if (best < 0 || d < best) {
				best = d;
				m->gflops = g;
				m->gbps = b;
			}
		}
		fclose(f);
		if (best >= 0)
			*from = path;
	}
	if (a && (a->gflops > 0 || a->gbps > 0)) {
		if (a->gflops > 0)
			m->gflops = a->gflops;
		if (a->gbps > 0)
			m->gbps = a->gbps;
		*from = *from ? "flags and the calibration file" : "flags";
	}
}

int profile_finish(const profile_args *a, hloi_profile *p, hloi_module *m, int threads, FILE *f, cli_io *io,
		   const char *cmd)
{
	hloi_machine mach;
	const char *from = NULL;
	profile_machine(a, threads, &mach, &from);
	if (a->profile) {
		hloi_report_options r = { a->json, a->top < 0 ? 20 : (int)a->top, &mach, from };
		hloi_status st = hloi_profile_print(p, m, &r, f);
		if (st != HLOI_OK) {
			fprintf(io->err, "hloi %s: %s writing the profile\n", cmd,
				st == HLOI_ENOMEM ? "out of memory" : st == HLOI_EINVAL ? "no run recorded" : "error");
			return st == HLOI_EIO ? EXIT_RUNTIME : EXIT_RUNTIME;
		}
	}
	if (a->trace) {
		FILE *t = strcmp(a->trace, "-") == 0 ? io->out : fopen(a->trace, "w");
		if (!t) {
			fprintf(io->err, "hloi %s: cannot write --trace %s: %s\n", cmd, a->trace, strerror(errno));
			return EXIT_RUNTIME;
		}
		hloi_status st = hloi_profile_write_trace(p, t);
		int bad = t != io->out && fclose(t) != 0;
		if (st != HLOI_OK || bad) {
			fprintf(io->err, "hloi %s: error writing --trace %s\n", cmd, a->trace);
			if (t != io->out)
				remove(a->trace);
			return EXIT_RUNTIME;
		}
	}
	return EXIT_OK;
}

/* Makes dir and its parents (mkdir -p). */
static int make_dirs(const char *dir)
{
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s", dir);
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int profile_calibrate(int threads, int json, cli_io *io)
{
	char path[4096], dir[4096], why[256] = "";
	if (threads <= 0)
		threads = cores();
	hloi_machine m;
	int rc = hloi_machine_calibrate(&m, threads, why, sizeof why);
	if (rc < 0) {
		fprintf(io->err, "hloi bench: calibration failed: %s\n", why);
		return EXIT_RUNTIME;
	}
	if (rc > 0)
		fprintf(io->err, "hloi bench: %s\n", why);
	machine_path(path, sizeof path, dir, sizeof dir);
	if (!path[0]) {
		fputs("hloi bench: no place for the machine file (set HLOI_MACHINE_FILE, XDG_CACHE_HOME or HOME)\n",
		      io->err);
		return EXIT_RUNTIME;
	}
	if (dir[0] && make_dirs(dir) != 0) {
		fprintf(io->err, "hloi bench: cannot make %s: %s\n", dir, strerror(errno));
		return EXIT_RUNTIME;
	}
	/* the other thread counts' lines kept, this one's replaced; written
	 * beside the file and renamed over it */
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	FILE *in = fopen(path, "r"), *out = fopen(tmp, "w");
	if (!out) {
		if (in)
			fclose(in);
		fprintf(io->err, "hloi bench: cannot write %s: %s\n", tmp, strerror(errno));
		return EXIT_RUNTIME;
	}
	fputs("# the machine's limits, measured by `hloi bench --calibrate` (one line per thread count)\n", out);
	char line[512];
	while (in && fgets(line, sizeof line, in)) {
		int t;
		double g, b;
		if (!parse_line(line, &t, &g, &b) && t != threads)
			fputs(line, out);
	}
	if (in)
		fclose(in);
	char when[64] = "";
	time_t now = time(NULL);
	struct tm tm;
	if (gmtime_r(&now, &tm))
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(out, "threads=%d gflops=%.2f gbps=%.2f date=%s\n", threads, m.gflops, m.gbps, when);
	if (fclose(out) != 0 || rename(tmp, path) != 0) {
		fprintf(io->err, "hloi bench: cannot write %s: %s\n", path, strerror(errno));
		remove(tmp);
		return EXIT_RUNTIME;
	}
	if (json)
		fprintf(io->out, "{\"threads\":%d,\"gflops\":%.3f,\"gbps\":%.3f,\"file\":\"%s\"}\n", threads, m.gflops,
			m.gbps, path);
	else
		fprintf(io->out, "%d thread%s: GEMM %.1f GFLOP/s (OpenBLAS sgemm, 2048x2048), memory %.1f GB/s (a + b -> c, 3 x 64 MiB)\nwritten to %s\n",
			threads, threads == 1 ? "" : "s", m.gflops, m.gbps, path);
	return EXIT_OK;
}
