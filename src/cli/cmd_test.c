/* hloi test: the golden-file runner (SPEC §8). Every NAME.hlo (and NAME.shape
 * for `hloi layout`) below the given paths is run in-process; what it prints
 * (diagnostics, then standard output) must equal NAME.golden. */
#define _DEFAULT_SOURCE /* DT_* for readdir */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char help[] =
	"usage: hloi test PATH... [--update]\n"
	"\n"
	"Runs every golden case below each PATH (a directory or a case file):\n"
	"  NAME.hlo    `hloi run NAME.hlo`, with `--inputs NAME.inputs` when that\n"
	"              file exists (also NAME.pb and NAME.pbtxt)\n"
	"  NAME.shape  `hloi layout SHAPE`, SHAPE being the file's text\n"
	"A first line `// hloi-flags: FLAGS` adds flags; `// hloi-command: check`\n"
	"(or fmt) runs that command instead of run (`# hloi-...` in a .pbtxt).\n"
	"The expected output, NAME.golden, is the diagnostics (file base names,\n"
	"no colour) followed by the standard output. Prints a unified diff for\n"
	"every failing case and a final line `N passed, M failed`; exit code 1 if\n"
	"any case failed.\n"
	"\n"
	"Options:\n"
	"  --update     rewrite the golden files of failing cases (and say which)\n"
	"  -h, --help   show this help\n"
	"\n"
	"Example:\n"
	"  hloi test testdata\n";

enum { OPT_UPDATE = 256 };

static const struct option options[] = {
	{ "update", no_argument, NULL, OPT_UPDATE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

typedef struct str_list {
	char **v;
	size_t n, cap;
} str_list;

static int list_push(str_list *l, char *s)
{
	if (!s)
		return -1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		char **v = realloc(l->v, cap * sizeof *v);
		if (!v) {
			free(s);
			return -1;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = s;
	return 0;
}

static void list_free(str_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int is_case(const char *name)
{
	return ends_with(name, ".hlo") || ends_with(name, ".pb") || ends_with(name, ".pbtxt") ||
	       ends_with(name, ".shape");
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", name);
	return p;
}

/* Collects case files below `path` (depth-limited against symlink loops). */
static int collect(str_list *cases, const char *path, int depth, cli_io *io)
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
		char *copy = malloc(strlen(path) + 1);
		if (copy)
			strcpy(copy, path);
		return list_push(cases, copy);
	}
	if (depth > 32)
		return 0;
	DIR *d = opendir(path);
	if (!d) {
		fprintf(io->err, "hloi test: %s: %s\n", path, strerror(errno));
		return -1;
	}
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char *full = join(path, e->d_name);
		if (!full) {
			rc = -1;
			break;
		}
		struct stat est;
		if (stat(full, &est) == 0 && S_ISDIR(est.st_mode)) {
			rc = collect(cases, full, depth + 1, io);
			free(full);
		} else if (is_case(e->d_name)) {
			rc = list_push(cases, full);
		} else {
			free(full);
		}
	}
	closedir(d);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads a whole file; NULL (errno set) on failure. */
static char *read_text(const char *path, size_t *len)
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
	*len = n;
	return buf;
}

static int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Splits `s` at white space and appends the words to argv. */
static int split_words(str_list *argv, const char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		size_t start = i;
		while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			i++;
		if (i > start) {
			char *w = malloc(i - start + 1);
			if (!w)
				return -1;
			memcpy(w, s + start, i - start);
			w[i - start] = '\0';
			if (list_push(argv, w))
				return -1;
		}
		if (i < len && s[i] == '\n')
			break;
	}
	return 0;
}

static char *dup_str(const char *s)
{
	char *d = malloc(strlen(s) + 1);
	if (d)
		strcpy(d, s);
	return d;
}

/* Replaces the extension of `path` (after the last '.') with `ext`. */
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

/* Runs one case in-process and returns what it printed (diagnostics, then
 * standard output). NULL when the case file cannot be read. */
static char *run_case(const char *path, cli_io *outer)
{
	size_t len;
	char *text = read_text(path, &len);
	if (!text) {
		fprintf(outer->err, "hloi test: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	int is_shape = ends_with(path, ".shape");
	str_list argv = { 0 };
	char *command = dup_str(is_shape ? "layout" : "run");
	str_list flags = { 0 };
	/* directives on the leading lines, in the file's comments: `# ` in a
	 * .pbtxt (protobuf text format), `// ` otherwise */
	const char *lead = ends_with(path, ".pbtxt") ? "# " : "// ";
	size_t lead_len = strlen(lead);
	const char *p = text;
	while (strncmp(p, lead, lead_len) == 0 && strncmp(p + lead_len, "hloi-", 5) == 0) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		const char *d = p + lead_len;
		size_t dn = n - lead_len;
		if (strncmp(d, "hloi-flags:", 11) == 0) {
			split_words(&flags, d + 11, dn - 11);
		} else if (strncmp(d, "hloi-command:", 13) == 0) {
			str_list w = { 0 };
			split_words(&w, d + 13, dn - 13);
			if (w.n == 1) {
				free(command);
				command = w.v[0];
				w.v[0] = NULL;
			}
			list_free(&w);
		}
		p += n + (eol ? 1 : 0);
	}
	list_push(&argv, command);
	if (is_shape) {
		/* the shape is the rest of the file, trimmed */
		while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
			p++;
		size_t n = strlen(p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\n' || p[n - 1] == '\t' || p[n - 1] == '\r'))
			n--;
		char *shape_text = malloc(n + 1);
		if (shape_text) {
			memcpy(shape_text, p, n);
			shape_text[n] = '\0';
		}
		list_push(&argv, shape_text);
	} else {
		list_push(&argv, dup_str(path));
		char *inputs = with_ext(path, ".inputs");
		if (inputs && strcmp(argv.v[0], "run") == 0 && file_exists(inputs)) {
			list_push(&argv, dup_str("--inputs"));
			list_push(&argv, inputs);
		} else {
			free(inputs);
		}
	}
	for (size_t i = 0; i < flags.n; i++) {
		list_push(&argv, flags.v[i]);
		flags.v[i] = NULL;
	}
	list_free(&flags);
	free(text);

	char *out_buf = NULL, *err_buf = NULL, *result = NULL;
	size_t out_len = 0, err_len = 0;
	FILE *out = open_memstream(&out_buf, &out_len);
	FILE *err = open_memstream(&err_buf, &err_len);
	cli_command_fn fn = cli_find_command(argv.v[0]);
	if (out && err && argv.n >= 2) {
		cli_io io = { out, err, HLOI_DIAG_BASENAME, 1 };
		if (!fn || strcmp(argv.v[0], "test") == 0)
			fprintf(err, "hloi test: unknown command '%s' in %s\n", argv.v[0], path);
		else
			fn((int)argv.n, argv.v, &io);
	}
	if (out)
		fclose(out);
	if (err)
		fclose(err);
	result = malloc(err_len + out_len + 1);
	if (result) {
		if (err_len)
			memcpy(result, err_buf, err_len);
		if (out_len)
			memcpy(result + err_len, out_buf, out_len);
		result[err_len + out_len] = '\0';
	}
	free(out_buf);
	free(err_buf);
	list_free(&argv);
	return result;
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

int cmd_test(int argc, char **argv, cli_io *io)
{
	int update = 0, c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (c) {
		case OPT_UPDATE:
			update = 1;
			break;
		case 'h':
			fputs(help, io->out);
			return EXIT_OK;
		default:
			return cli_usage_error(io, "test", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error(io, "test", "missing PATH");
	str_list cases = { 0 };
	for (int i = optind; i < argc; i++) {
		if (collect(&cases, argv[i], 0, io)) {
			list_free(&cases);
			return EXIT_INVALID;
		}
	}
	if (cases.n > 1)
		qsort(cases.v, cases.n, sizeof *cases.v, cmp_str);
	size_t passed = 0, failed = 0, updated = 0;
	int io_error = 0;
	for (size_t i = 0; i < cases.n; i++) {
		const char *path = cases.v[i];
		char *actual = run_case(path, io);
		char *gold = with_ext(path, ".golden");
		size_t glen = 0;
		char *expected = gold ? read_text(gold, &glen) : NULL;
		if (!actual || !gold) {
			failed++;
		} else if (expected && strcmp(expected, actual) == 0) {
			passed++;
		} else if (update) {
			if (write_golden(gold, actual) == 0) {
				fprintf(io->out, "updated %s\n", gold);
				updated++;
				passed++;
			} else {
				fprintf(io->err, "hloi test: cannot write %s: %s\n", gold, strerror(errno));
				io_error = 1;
				failed++;
			}
		} else {
			failed++;
			fprintf(io->out, "FAIL %s\n", path);
			if (!expected)
				fprintf(io->out, "(no golden file %s; run with --update to create it)\n", gold);
			else
				print_diff(io->out, expected, actual, gold, path);
		}
		free(actual);
		free(gold);
		free(expected);
	}
	list_free(&cases);
	if (update)
		fprintf(io->out, "updated %zu golden files\n", updated);
	fprintf(io->out, "%zu passed, %zu failed\n", passed, failed);
	if (io_error)
		return EXIT_RUNTIME;
	return failed ? EXIT_MISMATCH : EXIT_OK;
}
