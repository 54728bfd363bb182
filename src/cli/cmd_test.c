/* hloi test: the golden-file runner (doc/spec.md §8). Every NAME.hlo (and NAME.shape
 * for `hloi layout`) below the given paths is run in a process of its own,
 * up to -j at a time, each under a time limit; what it prints (diagnostics,
 * then standard output) must equal NAME.golden. Results are reported in the
 * cases' sorted order whatever order they finish in. */
#define _DEFAULT_SOURCE /* DT_* for readdir, gethostname */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
#include "stop.h"
#include "test_case.h"

static const char help[] =
	"usage: hloi test PATH... [options]\n"
	"\n"
	"Runs every golden case below each PATH (a directory or a case file):\n"
	"  NAME.hlo    `hloi run NAME.hlo`, with `--inputs NAME.inputs` when that\n"
	"              file exists (also NAME.pb and NAME.pbtxt)\n"
	"  NAME.shape  `hloi layout SHAPE`, SHAPE being the file's text\n"
	"The expected output, NAME.golden, is the diagnostics (file base names,\n"
	"no colour) followed by the standard output. Prints a unified diff for\n"
	"every failing case and a final line `N passed, M failed`; exit code 1 if\n"
	"any case failed.\n"
	"\n"
	"Directives, on the first lines of a case (`# ` instead of `// ` in a\n"
	".pbtxt); no others are accepted:\n"
	"  // hloi-command: COMMAND   run COMMAND instead of run: check, fmt,\n"
	"                             lower or dot\n"
	"  // hloi-flags: FLAGS       add FLAGS, from: --strict --compare --print\n"
	"                             --allow-mixed-precision\n"
	"                             --print-inputs --print_literals\n"
	"                             --broadcast-mode --engine --threads\n"
	"                             --max-memory --max-steps --format\n"
	"                             --input_format --index --linear\n"
	"                             --replicas --partitions\n"
	"                             --random-inputs[=SEED], input files relative\n"
	"                             to the case's directory (--input --inputs\n"
	"                             --input_literals_file --infeed, and P:FILE of\n"
	"                             --participant-input --participant-infeed, and\n"
	"                             CH:FILE of --host-recv) and\n"
	"                             outputs as plain names in a scratch directory\n"
	"                             of the case's own (--output\n"
	"                             --output_literals_file --outfeed)\n"
	"A case that cannot be run as written (another directive, command or\n"
	"flag), that times out, or that sits where the runner cannot reach it (a\n"
	"directory more than 32 deep, a symbolic link loop) is a failure. A case\n"
	"reached twice (links, overlapping PATHs) runs once.\n"
	"\n"
	"Options:\n"
	"  -j, --jobs N       run N cases at a time (default: the machine's cores);\n"
	"                     the output is the same for every N\n"
	"  --shard K/N        run only the K-th of N shards (1 <= K <= N): case i of\n"
	"                     the sorted list belongs to shard (i mod N) + 1, so\n"
	"                     the N shards split the suite exactly\n"
	"  --junit FILE       also write a JUnit XML report (one testcase per case;\n"
	"                     a failure's text is its diff)\n"
	"  --timeout SECONDS  a case running longer fails (default 300)\n"
	"  --list             print the cases that would run, one a line, and exit\n"
	"  --quiet            no progress line (it is shown only on a terminal)\n"
	"  --outputs DIR      keep what cases write with --output in DIR/NAME (NAME:\n"
	"                     the case's file name without its extension) instead\n"
	"                     of a temporary directory removed after the case\n"
	"  --update           rewrite the golden files of failing cases (and say which)\n"
	"  -h, --help         show this help\n"
	"\n"
	"Example:\n"
	"  hloi test testdata\n"
	"  hloi test -j 8 --shard 2/4 --junit report.xml testdata\n";

/* The directory depth below a PATH beyond which cases are not reached. */
#define TEST_MAX_DEPTH 32

/* One case and, once it ran, its outcome. */
typedef struct tcase {
	char *path;
	dev_t dev;       /* the case's directory */
	ino_t ino;
	const char *base; /* its file name (in path) */
	char *problem;   /* not runnable: why (a failure) */
	char *output;    /* what it printed */
	int done;
	int passed;
	int timed_out;
	double seconds;
	char *report;    /* what the runner prints for it (FAIL line and diff) */
} tcase;

typedef struct case_list {
	tcase *v;
	size_t n, cap;
} case_list;

static char *dup_str(const char *s)
{
	char *d = malloc(strlen(s) + 1);
	if (d)
		strcpy(d, s);
	return d;
}

/* Adds a case; `st` is its directory's (what tells two paths to one case
 * apart from two cases), NULL for an unreachable entry. */
static int add_case(case_list *l, const char *path, const struct stat *st, const char *problem)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		tcase *v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	tcase *c = &l->v[l->n];
	memset(c, 0, sizeof *c);
	c->path = dup_str(path);
	if (st) {
		c->dev = st->st_dev;
		c->ino = st->st_ino;
	}
	if (c->path) {
		const char *slash = strrchr(c->path, '/');
		c->base = slash ? slash + 1 : c->path;
	}
	if (problem)
		c->problem = dup_str(problem);
	if (!c->path || (problem && !c->problem)) {
		free(c->path);
		free(c->problem);
		return -1;
	}
	l->n++;
	return 0;
}

static void cases_free(case_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].problem);
		free(l->v[i].output);
		free(l->v[i].report);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

static int is_case(const char *name)
{
	return cli_has_suffix(name, ".hlo") || cli_has_suffix(name, ".pb") || cli_has_suffix(name, ".pbtxt") ||
	       cli_has_suffix(name, ".shape");
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s%s%s", dir, cli_has_suffix(dir, "/") ? "" : "/", name);
	return p;
}

/* The directories being walked, outermost first (to tell loops), and
 * every directory walked so far (each is walked once). */
typedef struct walk {
	dev_t dev[TEST_MAX_DEPTH + 2];
	ino_t ino[TEST_MAX_DEPTH + 2];
	const char *path[TEST_MAX_DEPTH + 2];
	int depth;
	struct {
		dev_t dev;
		ino_t ino;
	} *seen;
	size_t nseen, capseen;
} walk;

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of a directory but . and hidden ones, sorted (so that what
 * is reached first, and so reported, does not depend on readdir's order). */
static char **sorted_entries(DIR *d, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nv = realloc(v, cap * sizeof *nv);
			if (!nv)
				goto oom;
			v = nv;
		}
		if (!(v[*n] = dup_str(e->d_name)))
			goto oom;
		(*n)++;
	}
	if (*n > 1)
		qsort(v, *n, sizeof *v, cmp_name);
	if (!v)
		v = calloc(1, sizeof *v);
	return v;
oom:
	for (size_t i = 0; i < *n; i++)
		free(v[i]);
	free(v);
	return NULL;
}

/* Collects the case files below directory `path`; an unreachable directory
 * (too deep, a loop) becomes a failing entry; a directory already walked
 * (through a link or another PATH) is not walked again. Returns -1 when
 * out of memory or a directory cannot be read. */
static int collect_dir(case_list *cases, const char *path, const struct stat *st, walk *w, cli_io *io)
{
	for (int k = 0; k < w->depth; k++) {
		if (w->dev[k] == st->st_dev && w->ino[k] == st->st_ino) {
			char msg[600];
			snprintf(msg, sizeof msg, "not reached: a symbolic link loop (back to %.500s)", w->path[k]);
			return add_case(cases, path, NULL, msg);
		}
	}
	for (size_t k = 0; k < w->nseen; k++)
		if (w->seen[k].dev == st->st_dev && w->seen[k].ino == st->st_ino)
			return 0;
	if (w->depth > TEST_MAX_DEPTH) {
		char msg[120];
		snprintf(msg, sizeof msg, "not reached: more than %d directories deep", TEST_MAX_DEPTH);
		return add_case(cases, path, NULL, msg);
	}
	if (w->nseen == w->capseen) {
		size_t cap = w->capseen ? w->capseen * 2 : 64;
		void *ns = realloc(w->seen, cap * sizeof *w->seen);
		if (!ns)
			return -1;
		w->seen = ns;
		w->capseen = cap;
	}
	w->seen[w->nseen].dev = st->st_dev;
	w->seen[w->nseen].ino = st->st_ino;
	w->nseen++;
	DIR *d = opendir(path);
	if (!d) {
		fprintf(io->err, "hloi test: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t n = 0;
	char **names = sorted_entries(d, &n);
	closedir(d);
	if (!names)
		return -1;
	w->dev[w->depth] = st->st_dev;
	w->ino[w->depth] = st->st_ino;
	w->path[w->depth] = path;
	w->depth++;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char *full = join(path, names[i]);
		if (!full) {
			rc = -1;
			break;
		}
		struct stat est;
		if (stat(full, &est) != 0) {
			/* a dangling link, or a loop of links to files */
			if (is_case(names[i])) {
				char msg[300];
				snprintf(msg, sizeof msg, "not reached: %s", strerror(errno));
				rc = add_case(cases, full, NULL, msg);
			}
		} else if (S_ISDIR(est.st_mode)) {
			rc = collect_dir(cases, full, &est, w, io);
		} else if (is_case(names[i])) {
			rc = add_case(cases, full, st, NULL);
		}
		free(full);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	w->depth--;
	return rc;
}

static int collect(case_list *cases, const char *path, walk *w, cli_io *io)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(io->err, "hloi test: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (!is_case(path)) {
			fprintf(io->err, "hloi test: %s: not a .hlo, .pb, .pbtxt or .shape case\n", path);
			return -1;
		}
		const char *slash = strrchr(path, '/');
		char *dir = slash ? malloc((size_t)(slash - path) + 2) : NULL;
		if (dir) {
			memcpy(dir, path, (size_t)(slash - path) + 1);
			dir[slash - path + (slash == path)] = '\0';
		}
		struct stat dst;
		int bad = stat(dir ? dir : ".", &dst) != 0;
		free(dir);
		if (bad) {
			fprintf(io->err, "hloi test: %s: %s\n", path, strerror(errno));
			return -1;
		}
		return add_case(cases, path, &dst, NULL);
	}
	w->depth = 0;
	return collect_dir(cases, path, &st, w, io);
}

static int cmp_case(const void *a, const void *b)
{
	return strcmp(((const tcase *)a)->path, ((const tcase *)b)->path);
}

/* Sorts by path and keeps the first path of each case: a directory
 * reached by two paths (links, overlapping PATHs) holds the same cases. */
static void sort_and_dedupe(case_list *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof *l->v, cmp_case);
	size_t out = 0;
	for (size_t i = 0; i < l->n; i++) {
		int seen = 0;
		/* a linear scan of the kept cases: thousands of cases take
		 * milliseconds */
		for (size_t k = 0; !l->v[i].problem && k < out && !seen; k++)
			seen = !l->v[k].problem && l->v[k].dev == l->v[i].dev && l->v[k].ino == l->v[i].ino &&
			       !strcmp(l->v[k].base, l->v[i].base);
		if (seen) {
			free(l->v[i].path);
			free(l->v[i].problem);
			continue;
		}
		l->v[out++] = l->v[i];
	}
	l->n = out;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *with_ext(const char *path, const char *ext)
{
	const char *dot = strrchr(path, '.');
	size_t base = dot ? (size_t)(dot - path) : strlen(path);
	char *p = malloc(base + strlen(ext) + 1);
	if (p) {
		memcpy(p, path, base);
		strcpy(p + base, ext);
	}
	return p;
}

/* Reads a whole file; NULL (errno set) on failure. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			char *b = realloc(buf, cap + 1);
			if (!b) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = b;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* --- unified diff ------------------------------------------------------------ */

typedef struct lines {
	const char **s;
	size_t *len;
	size_t n;
} lines;

static int split_lines(lines *l, const char *text)
{
	size_t n = 0;
	for (const char *p = text; *p; p++)
		if (*p == '\n')
			n++;
	if (*text && text[strlen(text) - 1] != '\n')
		n++;
	l->s = malloc((n ? n : 1) * sizeof *l->s);
	l->len = malloc((n ? n : 1) * sizeof *l->len);
	l->n = 0;
	if (!l->s || !l->len)
		return -1;
	const char *p = text;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t k = eol ? (size_t)(eol - p) : strlen(p);
		l->s[l->n] = p;
		l->len[l->n++] = k;
		p += k + (eol ? 1 : 0);
	}
	return 0;
}

static int line_eq(const lines *a, size_t i, const lines *b, size_t j)
{
	return a->len[i] == b->len[j] && memcmp(a->s[i], b->s[j], a->len[i]) == 0;
}

/* Edit script: ops[k] is ' ' (both), '-' (expected only) or '+' (actual only). */
static void print_diff(FILE *f, const char *expected, const char *actual, const char *gold, const char *name)
{
	lines a = { 0 }, b = { 0 };
	if (split_lines(&a, expected) || split_lines(&b, actual) || a.n * b.n > 4000000) {
		fprintf(f, "--- %s\n+++ %s (actual)\n(output too large to diff)\n", gold, name);
		goto out;
	}
	size_t w = b.n + 1;
	unsigned *lcs = calloc((a.n + 1) * w, sizeof *lcs);
	char *ops = malloc(a.n + b.n + 1);
	size_t *ai = malloc((a.n + b.n + 1) * sizeof *ai), *bi = malloc((a.n + b.n + 1) * sizeof *bi);
	if (!lcs || !ops || !ai || !bi) {
		fprintf(f, "(out of memory computing the diff)\n");
		free(lcs);
		free(ops);
		free(ai);
		free(bi);
		goto out;
	}
	for (size_t i = a.n; i-- > 0;)
		for (size_t j = b.n; j-- > 0;)
			lcs[i * w + j] = line_eq(&a, i, &b, j) ? lcs[(i + 1) * w + j + 1] + 1
				: (lcs[(i + 1) * w + j] > lcs[i * w + j + 1] ? lcs[(i + 1) * w + j] : lcs[i * w + j + 1]);
	size_t n = 0, i = 0, j = 0;
	while (i < a.n || j < b.n) {
		if (i < a.n && j < b.n && line_eq(&a, i, &b, j)) {
			ops[n] = ' ', ai[n] = i++, bi[n++] = j++;
		} else if (i < a.n && (j == b.n || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])) {
			ops[n] = '-', ai[n] = i++, bi[n++] = j;
		} else {
			ops[n] = '+', ai[n] = i, bi[n++] = j++;
		}
	}
	fprintf(f, "--- %s\n+++ %s (actual)\n", gold, name);
	const size_t ctx = 3;
	size_t k = 0;
	while (k < n) {
		while (k < n && ops[k] == ' ')
			k++;
		if (k == n)
			break;
		size_t start = k > ctx ? k - ctx : 0;
		size_t end = k;
		/* extend the hunk while changes are within 2*ctx of each other */
		for (;;) {
			while (end < n && ops[end] != ' ')
				end++;
			size_t next = end;
			while (next < n && ops[next] == ' ')
				next++;
			if (next < n && next - end <= 2 * ctx)
				end = next;
			else {
				end = end + ctx < n ? end + ctx : n;
				break;
			}
		}
		size_t na = 0, nb = 0;
		for (size_t q = start; q < end; q++) {
			na += ops[q] != '+';
			nb += ops[q] != '-';
		}
		fprintf(f, "@@ -%zu,%zu +%zu,%zu @@\n", ai[start] + (na ? 1 : 0), na, bi[start] + (nb ? 1 : 0), nb);
		for (size_t q = start; q < end; q++) {
			const lines *src = ops[q] == '+' ? &b : &a;
			size_t idx = ops[q] == '+' ? bi[q] : ai[q];
			fputc(ops[q], f);
			fwrite(src->s[idx], 1, src->len[idx], f);
			fputc('\n', f);
		}
		k = end;
	}
	free(lcs);
	free(ops);
	free(ai);
	free(bi);
out:
	free(a.s);
	free(a.len);
	free(b.s);
	free(b.len);
}

/* Writes the golden through a temporary file and a rename: no partial files. */
static int write_golden(const char *path, const char *text)
{
	size_t n = strlen(path) + 8;
	char *tmp = malloc(n);
	if (!tmp)
		return -1;
	snprintf(tmp, n, "%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	int ok = f && fwrite(text, 1, strlen(text), f) == strlen(text);
	if (f && fclose(f) != 0)
		ok = 0;
	if (ok && rename(tmp, path) != 0)
		ok = 0;
	if (!ok)
		remove(tmp);
	free(tmp);
	return ok ? 0 : -1;
}

/* --- running the cases: `jobs` worker processes --------------------------------- */

/* Each worker is a child process that runs the cases it is sent, one at a
 * time, in-process: it reads a case's index from its command pipe and
 * answers on its result pipe with a frame: 'O' (output) or 'P' (problem),
 * 8 bytes of length, the text. A case that runs past the timeout, or that
 * kills its worker, fails, and a new worker takes the next case. At the
 * end the workers see their command pipes close and exit, so the
 * sanitizers' leak check covers every case a worker ran. */
typedef struct slot {
	pid_t pid;       /* 0: no worker */
	int cmd, res;    /* the command pipe's write end, the result pipe's read end */
	long idx;        /* the case it runs, -1 when idle */
	double start;
	char *buf;
	size_t len, cap;
} slot;

static int write_all(int fd, const void *data, size_t n)
{
	const char *p = data;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *data, size_t n)
{
	char *p = data;
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* The worker's loop (in the child). */
static void worker_loop(const case_list *cases, int cmd, int res)
{
	uint64_t idx;
	while (read_all(cmd, &idx, sizeof idx) == 0 && idx < cases->n) {
		char *problem = NULL;
		char *out = test_case_run(cases->v[idx].path, &problem);
		const char *msg = out ? out : problem ? problem : "out of memory";
		char head[9];
		uint64_t n = strlen(msg);
		head[0] = out ? 'O' : 'P';
		memcpy(head + 1, &n, 8);
		int bad = write_all(res, head, 9) || write_all(res, msg, (size_t)n);
		free(out);
		free(problem);
		if (bad)
			break;
	}
}

static int start_worker(slot *s, const case_list *cases, slot *slots, int nslots)
{
	int c[2], r[2];
	if (pipe(c) != 0)
		return -1;
	if (pipe(r) != 0) {
		close(c[0]);
		close(c[1]);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		close(c[0]);
		close(c[1]);
		close(r[0]);
		close(r[1]);
		return -1;
	}
	if (pid == 0) {
		close(c[1]);
		close(r[0]);
		for (int k = 0; k < nslots; k++) {
			if (slots[k].pid) {
				close(slots[k].cmd);
				close(slots[k].res);
			}
		}
		signal(SIGPIPE, SIG_IGN);
		worker_loop(cases, c[0], r[1]);
		close(c[0]);
		close(r[1]);
		/* exit, not _exit: the sanitizers' leak check runs at exit */
		exit(0);
	}
	close(c[0]);
	close(r[1]);
	s->pid = pid;
	s->cmd = c[1];
	s->res = r[0];
	s->idx = -1;
	s->len = 0;
	return 0;
}

/* Ends a worker (killing it first when `kill_it`); returns its wait status. */
static int stop_worker(slot *s, int kill_it)
{
	int status = 0;
	if (kill_it)
		kill(s->pid, SIGKILL);
	close(s->cmd);
	close(s->res);
	while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
		;
	s->pid = 0;
	s->idx = -1;
	return status;
}

typedef struct runner {
	case_list *cases;
	int update;
	double timeout;
	size_t updated;
	int io_error;
	int worker_failed; /* a worker exited badly at the end (a leak report) */
	cli_io *io;
} runner;

/* Builds a case's report (FAIL line and diff) into c->report. */
static void judge(runner *r, tcase *c)
{
	char *report = NULL;
	size_t rlen = 0;
	FILE *f = open_memstream(&report, &rlen);
	if (!f)
		return;
	if (c->timed_out) {
		fprintf(f, "FAIL %s (timed out after %g s)\n", c->path, r->timeout);
	} else if (c->problem) {
		fprintf(f, "FAIL %s: %s\n", c->path, c->problem);
	} else {
		char *gold = with_ext(c->path, ".golden");
		char *expected = gold ? read_text(gold) : NULL;
		if (expected && c->output && strcmp(expected, c->output) == 0) {
			c->passed = 1;
		} else if (r->update && gold && c->output) {
			if (write_golden(gold, c->output) == 0) {
				fprintf(f, "updated %s\n", gold);
				r->updated++;
				c->passed = 1;
			} else {
				fprintf(r->io->err, "hloi test: cannot write %s: %s\n", gold, strerror(errno));
				r->io_error = 1;
				fprintf(f, "FAIL %s (cannot write %s)\n", c->path, gold);
			}
		} else {
			fprintf(f, "FAIL %s\n", c->path);
			if (!expected)
				fprintf(f, "(no golden file %s; run with --update to create it)\n", gold ? gold : "");
			else
				print_diff(f, expected, c->output ? c->output : "", gold, c->path);
		}
		free(gold);
		free(expected);
	}
	fclose(f);
	c->report = report;
}

/* A case's frame has arrived: its outcome. */
static void finish(runner *r, slot *s)
{
	tcase *c = &r->cases->v[s->idx];
	uint64_t n;
	memcpy(&n, s->buf + 1, 8);
	s->buf[9 + n] = '\0';
	c->seconds = now_seconds() - s->start;
	c->done = 1;
	if (s->buf[0] == 'P')
		c->problem = dup_str(s->buf + 9);
	else
		c->output = dup_str(s->buf + 9);
	if (!c->problem && !c->output)
		c->problem = dup_str("out of memory");
	judge(r, c);
	s->idx = -1;
	s->len = 0;
}

/* A case whose worker died or was killed: the reason, then its outcome. */
static void fail_case(runner *r, slot *s, int status, int timed_out)
{
	tcase *c = &r->cases->v[s->idx];
	c->seconds = now_seconds() - s->start;
	c->done = 1;
	if (timed_out) {
		c->timed_out = 1;
	} else {
		char msg[160];
		if (WIFSIGNALED(status))
			snprintf(msg, sizeof msg, "the case's process was killed by signal %d", WTERMSIG(status));
		else
			snprintf(msg, sizeof msg, "the case's process exited with status %d",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		c->problem = dup_str(msg);
	}
	judge(r, c);
}

/* Reads what worker s sent; returns 1 when its case's frame is complete,
 * 0 for more, -1 when the worker is gone (EOF), -2 when out of memory. */
static int drain(slot *s)
{
	if (s->cap - s->len < 65536) {
		size_t cap = s->cap ? s->cap * 2 : 131072;
		char *b = realloc(s->buf, cap + 1);
		if (!b)
			return -2;
		s->buf = b;
		s->cap = cap;
	}
	ssize_t got = read(s->res, s->buf + s->len, s->cap - s->len);
	if (got < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (got == 0)
		return -1;
	s->len += (size_t)got;
	if (s->len < 9)
		return 0;
	uint64_t n;
	memcpy(&n, s->buf + 1, 8);
	if (n > SIZE_MAX - 10)
		return -1;
	if (s->len < 9 + n) {
		if (s->cap < 9 + n) {
			char *b = realloc(s->buf, (size_t)n + 10);
			if (!b)
				return -2;
			s->buf = b;
			s->cap = (size_t)n + 9;
		}
		return 0;
	}
	return 1;
}

static void progress(runner *r, size_t shown, int on)
{
	if (!on)
		return;
	size_t n = r->cases->n;
	if (shown < n)
		fprintf(r->io->err, "\r\033[K[%zu/%zu] %s", shown, n, r->cases->v[shown].path);
	else
		fputs("\r\033[K", r->io->err);
	fflush(r->io->err);
}

/* Prints the reports of the finished cases that come next in order. */
static size_t flush_in_order(runner *r, size_t printed, int show)
{
	case_list *l = r->cases;
	int cleared = 0;
	while (printed < l->n && l->v[printed].done) {
		if (l->v[printed].report && *l->v[printed].report) {
			if (show && !cleared) {
				fputs("\r\033[K", r->io->err);
				cleared = 1;
			}
			fputs(l->v[printed].report, r->io->out);
		}
		printed++;
	}
	if (cleared)
		fflush(r->io->out);
	return printed;
}

static int run_all(runner *r, int jobs, int show)
{
	case_list *l = r->cases;
	slot *slots = calloc((size_t)jobs, sizeof *slots);
	struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
	int *map = calloc((size_t)jobs, sizeof *map);
	if (!slots || !pf || !map) {
		free(slots);
		free(pf);
		free(map);
		return -1;
	}
	size_t next = 0, printed = 0;
	int rc = 0;
	while (printed < l->n && rc == 0) {
		/* give every idle worker (starting one where needed) a case */
		for (int k = 0; k < jobs && next < l->n; k++) {
			if (slots[k].pid && slots[k].idx >= 0)
				continue;
			while (next < l->n && l->v[next].problem) {
				l->v[next].done = 1;
				judge(r, &l->v[next]);
				next++;
			}
			if (next >= l->n)
				break;
			if (!slots[k].pid && start_worker(&slots[k], l, slots, jobs) != 0) {
				rc = -1;
				break;
			}
			uint64_t idx = next;
			if (write_all(slots[k].cmd, &idx, sizeof idx) != 0) {
				stop_worker(&slots[k], 1);
				k--; /* a new worker for this slot */
				continue;
			}
			slots[k].idx = (long)next;
			slots[k].start = now_seconds();
			slots[k].len = 0;
			next++;
		}
		/* the progress line names the case the report waits for */
		progress(r, printed, show);
		int np = 0;
		double t = now_seconds(), wait_s = 1.0;
		for (int k = 0; k < jobs; k++) {
			if (!slots[k].pid || slots[k].idx < 0)
				continue;
			double left = slots[k].start + r->timeout - t;
			if (left < wait_s)
				wait_s = left;
			pf[np].fd = slots[k].res;
			pf[np].events = POLLIN;
			pf[np].revents = 0;
			map[np++] = k;
		}
		if (np > 0) {
			int ms = wait_s <= 0 ? 0 : (int)(wait_s * 1000) + 1;
			int got = poll(pf, (nfds_t)np, ms);
			if (got < 0 && errno != EINTR) {
				rc = -1;
				break;
			}
			for (int q = 0; got > 0 && q < np; q++) {
				if (!pf[q].revents)
					continue;
				slot *s = &slots[map[q]];
				int d = drain(s);
				if (d == -2) {
					rc = -1;
					break;
				}
				if (d == 1) {
					finish(r, s);
				} else if (d == -1) {
					/* the worker died running the case */
					slot dead = *s;
					int status = stop_worker(s, 0);
					fail_case(r, &dead, status, 0);
				}
			}
			t = now_seconds();
			for (int k = 0; k < jobs; k++) {
				if (slots[k].pid && slots[k].idx >= 0 && t - slots[k].start > r->timeout) {
					slot late = slots[k];
					stop_worker(&slots[k], 1);
					fail_case(r, &late, 0, 1);
				}
			}
		}
		printed = flush_in_order(r, printed, show);
		progress(r, printed, show);
	}
	/* the end: idle workers exit when their command pipes close */
	for (int k = 0; k < jobs; k++) {
		if (slots[k].pid) {
			int busy = slots[k].idx >= 0;
			int status = stop_worker(&slots[k], busy);
			if (!busy && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
				fprintf(r->io->err, "hloi test: a worker process ended with %s %d after its cases "
					"(see its messages above)\n",
					WIFSIGNALED(status) ? "signal" : "status",
					WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
				r->worker_failed = 1;
			}
		}
		free(slots[k].buf);
	}
	free(slots);
	free(pf);
	free(map);
	return rc;
}

/* --- JUnit XML ------------------------------------------------------------------ */

/* Length of the well-formed UTF-8 sequence at p (at most n bytes), 0 if
 * none. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	size_t k;
	unsigned min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		k = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4, min = 0x10000;
	else
		return 0;
	if (n < k)
		return 0;
	unsigned v = c & (0xffu >> (k + 1));
	for (size_t i = 1; i < k; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3fu);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) || v == 0xfffe || v == 0xffff)
		return 0;
	return k;
}

/* Writes text as XML character data or an attribute value: markup
 * escaped, bytes XML 1.0 cannot hold (control characters, malformed
 * UTF-8) as U+FFFD, newlines as &#10; in attributes. */
static void xml_text(FILE *f, const char *s, size_t n, int attr)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned char c = p[i];
		switch (c) {
		case '&': fputs("&amp;", f); i++; continue;
		case '<': fputs("&lt;", f); i++; continue;
		case '>': fputs("&gt;", f); i++; continue;
		case '"': fputs(attr ? "&quot;" : "\"", f); i++; continue;
		case '\n': fputs(attr ? "&#10;" : "\n", f); i++; continue;
		case '\t': fputs(attr ? "&#9;" : "\t", f); i++; continue;
		case '\r': fputs("&#13;", f); i++; continue;
		default: break;
		}
		size_t k = c < 0x20 ? 0 : utf8_len(p + i, n - i);
		if (k == 0) {
			fputs("\xef\xbf\xbd", f);
			i++;
		} else {
			fwrite(p + i, 1, k, f);
			i += k;
		}
	}
}

static int write_junit(const char *file, const case_list *l, double total, size_t failed, cli_io *io)
{
	FILE *f = fopen(file, "w");
	if (!f) {
		fprintf(io->err, "hloi test: cannot write %s: %s\n", file, strerror(errno));
		return -1;
	}
	char host[256] = "localhost";
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	char stamp[32] = "";
	time_t t = time(NULL);
	struct tm tm;
	if (gmtime_r(&t, &tm))
		strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f, "<testsuites name=\"hloi test\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n", l->n,
		failed, total);
	fprintf(f, "  <testsuite name=\"hloi test\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" "
		   "time=\"%.3f\" timestamp=\"%s\" hostname=\"", l->n, failed, total, stamp);
	xml_text(f, host, strlen(host), 1);
	fputs("\">\n", f);
	for (size_t i = 0; i < l->n; i++) {
		const tcase *c = &l->v[i];
		const char *slash = strrchr(c->path, '/');
		const char *base = slash ? slash + 1 : c->path;
		size_t dlen = slash ? (size_t)(slash - c->path) : 0;
		fputs("    <testcase classname=\"", f);
		for (size_t k = 0; k < dlen; k++) {
			char ch = c->path[k] == '/' ? '.' : c->path[k];
			xml_text(f, &ch, 1, 1);
		}
		fputs("\" name=\"", f);
		xml_text(f, base, strlen(base), 1);
		fprintf(f, "\" time=\"%.3f\"", c->seconds);
		if (c->passed) {
			fputs("/>\n", f);
			continue;
		}
		/* the message: the report's first 20 lines; the text: all of it */
		const char *rep = c->report ? c->report : "";
		size_t mlen = 0;
		for (int nl = 0; rep[mlen] && nl < 20 && mlen < 4096; mlen++)
			if (rep[mlen] == '\n')
				nl++;
		fprintf(f, ">\n      <failure type=\"%s\" message=\"",
			c->timed_out ? "timeout" : c->problem ? "not run" : "mismatch");
		xml_text(f, rep, mlen, 1);
		fputs("\">", f);
		xml_text(f, rep, strlen(rep), 0);
		fputs("</failure>\n    </testcase>\n", f);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		fprintf(io->err, "hloi test: cannot write %s\n", file);
		return -1;
	}
	return 0;
}

/* --- the command ------------------------------------------------------------------ */

static int parse_shard(const char *s, long *k, long *n)
{
	char *end;
	errno = 0;
	*k = strtol(s, &end, 10);
	if (errno || end == s || *end != '/' || *s == '-' || *s == '+')
		return -1;
	const char *t = end + 1;
	*n = strtol(t, &end, 10);
	if (errno || end == t || *end || *t == '-' || *t == '+')
		return -1;
	return *n >= 1 && *k >= 1 && *k <= *n && *n <= 1000000 ? 0 : -1;
}

typedef struct test_args {
	int update, list, quiet;
	long jobs, shard_k, shard_n;
	double timeout;
	const char *junit;
} test_args;

/* -j N, --jobs N */
static int jobs_option(cli_parser *p, const cli_opt *o, const char *arg)
{
	int64_t v;
	(void)o;
	if (cli_parse_int(arg, &v) || v < 1 || v > 256)
		return cli_usage_error(p->io, "test", "invalid -j '%s' (1 to 256)", arg);
	((test_args *)p->args)->jobs = (long)v;
	return 0;
}

/* --shard K/N */
static int shard_option(cli_parser *p, const cli_opt *o, const char *arg)
{
	test_args *a = p->args;
	(void)o;
	if (parse_shard(arg, &a->shard_k, &a->shard_n))
		return cli_usage_error(p->io, "test", "invalid --shard '%s' (K/N with 1 <= K <= N)", arg);
	return 0;
}

/* --outputs DIR */
static int outputs_option(cli_parser *p, const cli_opt *o, const char *arg)
{
	(void)p;
	(void)o;
	test_case_outputs_dir = arg;
	return 0;
}

static const cli_opt options[] = {
	CLI_FLAG_OPTION("update", test_args, update),
	{ .name = "jobs", .short_name = 'j', .arg = CLI_REQUIRED_ARG, .kind = CLI_CALL, .fn = jobs_option },
	CLI_CALL_OPTION("shard", CLI_REQUIRED_ARG, shard_option, 0),
	CLI_STRING_OPTION("junit", test_args, junit),
	CLI_SECONDS_OPTION("timeout", test_args, timeout),
	CLI_FLAG_OPTION("list", test_args, list),
	CLI_FLAG_OPTION("quiet", test_args, quiet),
	CLI_CALL_OPTION("outputs", CLI_REQUIRED_ARG, outputs_option, 0),
	CLI_OPTIONS_END,
};

/* Goldens pin results bit for bit, and LAPACK's results round as
 * OpenBLAS's kernels do, which OpenBLAS picks by CPU (and hloi, unless told,
 * from the CPU's features: doc/performance.md). So that a golden written
 * on one machine passes on another, hloi test runs OpenBLAS's Haswell
 * (AVX2) kernels wherever the CPU has AVX2 and FMA, unless
 * OPENBLAS_CORETYPE says otherwise. */
static void pin_blas_kernels(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (!getenv("OPENBLAS_CORETYPE") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		(void)setenv("OPENBLAS_CORETYPE", "Haswell", 0);
#endif
}

int cmd_test(int argc, char **argv, cli_io *io)
{
	test_args a = { 0, 0, 0, 0, 1, 1, 300, NULL };
	cli_parser p = { "test", help, options, io, &a, NULL, NULL, NULL };
	int e = cli_parse_options(&p, argc, argv);
	if (e)
		return e < 0 ? EXIT_OK : e;
	int update = a.update, list = a.list, quiet = a.quiet;
	long jobs = a.jobs, shard_k = a.shard_k, shard_n = a.shard_n;
	double timeout = a.timeout;
	const char *junit = a.junit;
	if (optind >= argc)
		return cli_usage_error(io, "test", "missing PATH");
	pin_blas_kernels();
	if (test_case_outputs_dir && mkdir(test_case_outputs_dir, 0777) != 0 && errno != EEXIST) {
		fprintf(io->err, "hloi test: cannot make %s: %s\n", test_case_outputs_dir, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (jobs == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = n < 1 ? 1 : n > 256 ? 256 : n;
	}
	case_list cases = { 0 };
	walk *w = calloc(1, sizeof *w);
	for (int i = optind; i < argc; i++) {
		if (!w || collect(&cases, argv[i], w, io)) {
			if (w)
				free(w->seen);
			free(w);
			cases_free(&cases);
			return EXIT_INVALID;
		}
	}
	free(w->seen);
	free(w);
	sort_and_dedupe(&cases);
	size_t all = cases.n;
	if (shard_n > 1) {
		size_t out = 0;
		for (size_t i = 0; i < cases.n; i++) {
			if ((long)(i % (size_t)shard_n) + 1 == shard_k) {
				cases.v[out++] = cases.v[i];
			} else {
				free(cases.v[i].path);
				free(cases.v[i].problem);
			}
		}
		cases.n = out;
	}
	if (list) {
		for (size_t i = 0; i < cases.n; i++)
			fprintf(io->out, "%s\n", cases.v[i].path);
		cases_free(&cases);
		return EXIT_OK;
	}
	runner r = { &cases, update, timeout, 0, 0, 0, io };
	int show = !quiet && !io->in_test && io->err_tty;
	double t0 = now_seconds();
	if (run_all(&r, (int)jobs, show)) {
		fprintf(io->err, "hloi test: %s\n", strerror(errno ? errno : ENOMEM));
		cases_free(&cases);
		return EXIT_RUNTIME;
	}
	double total = now_seconds() - t0;
	size_t passed = 0, failed = 0;
	for (size_t i = 0; i < cases.n; i++) {
		if (cases.v[i].passed)
			passed++;
		else
			failed++;
	}
	int rc = failed ? EXIT_MISMATCH : EXIT_OK;
	if (junit && write_junit(junit, &cases, total, failed, io))
		rc = EXIT_RUNTIME;
	if (update)
		fprintf(io->out, "updated %zu golden file%s\n", r.updated, r.updated == 1 ? "" : "s");
	if (shard_n > 1)
		fprintf(io->out, "shard %ld/%ld: %zu of %zu cases\n", shard_k, shard_n, cases.n, all);
	fprintf(io->out, "%zu passed, %zu failed\n", passed, failed);
	cases_free(&cases);
	if (r.io_error)
		return EXIT_RUNTIME;
	if (r.worker_failed && rc == EXIT_OK)
		rc = EXIT_MISMATCH;
	return rc;
}
