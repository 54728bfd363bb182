/* One golden case: directives, the whitelist, and the in-process run. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "test_case.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct str_list {
	char **v;
	size_t n, cap;
} str_list;

static int push(str_list *l, char *s)
{
	if (!s)
		return -1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
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
	memset(l, 0, sizeof *l);
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static char *dup_str(const char *s)
{
	return dup_n(s, strlen(s));
}

static char *fmt(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(NULL, 0, f, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *s = malloc((size_t)n + 1);
	if (s) {
		va_start(ap, f);
		vsnprintf(s, (size_t)n + 1, f, ap);
		va_end(ap);
	}
	return s;
}

/* Splits `s` (len bytes, up to a newline) at white space into `out`. */
static int split_words(str_list *out, const char *s, size_t len)
{
	size_t i = 0;
	while (i < len && s[i] != '\n') {
		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		size_t start = i;
		while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			i++;
		if (i > start && push(out, dup_n(s + start, i - start)))
			return -1;
	}
	return 0;
}

/* The flags a case may pass. `value`: 0 none, 1 required, 2 only as
 * --name=VALUE; `file`: 1 an input file in the case's directory, 2 an
 * output file in the case's scratch directory, 3 `P:FILE`, an input file
 * in the case's directory for participant P. */
static const struct {
	const char *name;
	int value, file;
} allowed[] = {
	{ "strict", 0, 0 },          { "allow-mixed-precision", 0, 0 }, { "compare", 0, 0 },        { "print", 0, 0 },
	{ "print-inputs", 0, 0 },    { "print_literals", 0, 0 }, { "broadcast-mode", 1, 0 },
	{ "engine", 1, 0 },          { "threads", 1, 0 },        { "max-memory", 1, 0 },
	{ "max-steps", 1, 0 },       { "format", 1, 0 },         { "input_format", 1, 0 },
	{ "index", 1, 0 },           { "linear", 1, 0 },         { "random-inputs", 2, 0 },
	{ "input", 1, 1 },           { "inputs", 1, 1 },         { "input_literals_file", 1, 1 },
	{ "output", 1, 2 },          { "output_literals_file", 1, 2 },
	{ "replicas", 1, 0 },        { "partitions", 1, 0 },
	{ "infeed", 1, 1 },          { "outfeed", 1, 2 },
	{ "participant-input", 1, 3 }, { "participant-infeed", 1, 3 }, { "host-recv", 1, 3 },
};

static const char *const commands[] = { "run", "check", "fmt", "lower", "dot" };

/* A file named by a case: relative, without `..`. */
static int plain_relative(const char *v, int no_dirs)
{
	if (!*v || v[0] == '/' || (no_dirs && strchr(v, '/')))
		return 0;
	for (const char *p = v; *p;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if ((n == 2 && p[0] == '.' && p[1] == '.') || n == 0)
			return 0;
		p += n + (e ? 1 : 0);
	}
	return 1;
}

const char *test_case_outputs_dir;

typedef struct case_ctx {
	const char *path;  /* the case */
	const char *dir;   /* the case's directory */
	char *scratch;     /* its scratch directory, made on first use */
	int keep;          /* scratch is under test_case_outputs_dir: kept */
	char *problem;
} case_ctx;

/* Checks the case's flags and appends them to argv, rewriting file names:
 * inputs relative to the case's directory, outputs into its scratch
 * directory. */
static int add_flags(str_list *argv, const str_list *flags, case_ctx *c)
{
	for (size_t i = 0; i < flags->n; i++) {
		const char *w = flags->v[i];
		if (strncmp(w, "--", 2) != 0) {
			c->problem = fmt("hloi-flags: '%s' is not a flag", w);
			return -1;
		}
		const char *eq = strchr(w, '=');
		size_t nlen = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
		size_t k = 0, nallowed = sizeof allowed / sizeof allowed[0];
		while (k < nallowed && !(strlen(allowed[k].name) == nlen && !strncmp(allowed[k].name, w + 2, nlen)))
			k++;
		if (k == nallowed) {
			c->problem = fmt("hloi-flags: '%.*s' is not allowed in a test case", (int)(nlen + 2), w);
			return -1;
		}
		const char *value = eq ? eq + 1 : NULL;
		if (allowed[k].value == 0 && value) {
			c->problem = fmt("hloi-flags: '--%s' takes no value", allowed[k].name);
			return -1;
		}
		if (allowed[k].value == 1 && !value) {
			if (i + 1 >= flags->n) {
				c->problem = fmt("hloi-flags: '--%s' needs a value", allowed[k].name);
				return -1;
			}
			value = flags->v[++i];
		}
		if (push(argv, fmt("--%s", allowed[k].name)))
			return -1;
		if (!value)
			continue;
		char *v;
		if (allowed[k].file == 3) {
			const char *colon = strchr(value, ':');
			if (!colon || colon == value || strspn(value, "0123456789") != (size_t)(colon - value) ||
			    !plain_relative(colon + 1, 0)) {
				c->problem = fmt("hloi-flags: '--%s %s': P:FILE, the file relative to the case's "
						 "directory, without '..'", allowed[k].name, value);
				return -1;
			}
			v = fmt("%.*s:%s/%s", (int)(colon - value), value, c->dir, colon + 1);
		} else if (allowed[k].file == 1) {
			if (!plain_relative(value, 0)) {
				c->problem = fmt("hloi-flags: '--%s %s': input files must be relative to the case's "
						 "directory, without '..'", allowed[k].name, value);
				return -1;
			}
			v = fmt("%s/%s", c->dir, value);
		} else if (allowed[k].file == 2) {
			if (!plain_relative(value, 1)) {
				c->problem = fmt("hloi-flags: '--%s %s': an output is a plain file name (it is "
						 "written in the case's scratch directory)", allowed[k].name, value);
				return -1;
			}
			if (!c->scratch && test_case_outputs_dir) {
				const char *slash = strrchr(c->path, '/');
				const char *base = slash ? slash + 1 : c->path;
				const char *dot = strrchr(base, '.');
				c->scratch = fmt("%s/%.*s", test_case_outputs_dir,
						 (int)(dot ? (size_t)(dot - base) : strlen(base)), base);
				c->keep = 1;
				if (!c->scratch || (mkdir(c->scratch, 0777) != 0 && errno != EEXIST)) {
					c->problem = fmt("cannot make %s: %s", c->scratch ? c->scratch : "a directory",
							 strerror(errno));
					return -1;
				}
			}
			if (!c->scratch) {
				const char *t = getenv("TMPDIR");
				c->scratch = fmt("%s/hloi-test-XXXXXX", t && *t ? t : "/tmp");
				if (!c->scratch || !mkdtemp(c->scratch)) {
					free(c->scratch);
					c->scratch = NULL;
					c->problem = fmt("cannot make a scratch directory: %s", strerror(errno));
					return -1;
				}
			}
			v = fmt("%s/%s", c->scratch, value);
		} else {
			v = dup_str(value);
		}
		/* --name=VALUE stays one word (optional values need it) */
		if (eq) {
			char *name = argv->v[--argv->n];
			char *joined = v ? fmt("%s=%s", name, v) : NULL;
			free(name);
			free(v);
			v = joined;
		}
		if (push(argv, v))
			return -1;
	}
	return 0;
}

/* Removes the scratch directory and what the case wrote in it. */
static void remove_scratch(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char *p = fmt("%s/%s", dir, e->d_name);
			if (p)
				unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(dir);
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

static int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Builds the case's command line into argv (argv[0] is the command). */
static int build_argv(str_list *argv, const char *path, const char *text, case_ctx *c)
{
	int is_shape = cli_has_suffix(path, ".shape");
	char *command = NULL;
	str_list flags = { 0 };
	int rc = -1;
	/* directives on the leading lines, in the file's comments: `# ` in a
	 * .pbtxt (protobuf text format), `// ` otherwise */
	const char *lead = cli_has_suffix(path, ".pbtxt") ? "# " : "// ";
	size_t lead_len = strlen(lead);
	const char *p = text;
	while (strncmp(p, lead, lead_len) == 0 && strncmp(p + lead_len, "hloi-", 5) == 0) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		const char *d = p + lead_len;
		size_t dn = n - lead_len;
		if (dn >= 11 && strncmp(d, "hloi-flags:", 11) == 0) {
			if (split_words(&flags, d + 11, dn - 11))
				goto out;
		} else if (dn >= 13 && strncmp(d, "hloi-command:", 13) == 0) {
			str_list w = { 0 };
			if (split_words(&w, d + 13, dn - 13)) {
				list_free(&w);
				goto out;
			}
			int known = 0;
			for (size_t k = 0; w.n == 1 && k < sizeof commands / sizeof commands[0]; k++)
				known |= !strcmp(w.v[0], commands[k]);
			if (!known || is_shape || command) {
				const char *v = d + 13;
				size_t vn = dn - 13;
				while (vn && (*v == ' ' || *v == '\t')) {
					v++;
					vn--;
				}
				while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t' || v[vn - 1] == '\r'))
					vn--;
				c->problem = command ? fmt("hloi-command: given twice")
					     : is_shape ? fmt("hloi-command: a .shape case always runs `hloi layout`")
					     : fmt("hloi-command: '%.*s' is not one of %s", (int)vn, v, TEST_COMMANDS);
				list_free(&w);
				goto out;
			}
			command = w.v[0];
			w.v[0] = NULL;
			list_free(&w);
		} else {
			const char *colon = memchr(d, ':', dn);
			c->problem = fmt("unknown directive '%.*s' (the directives are %s)",
					 (int)(colon ? (size_t)(colon - d) : dn), d, TEST_DIRECTIVES);
			goto out;
		}
		p += n + (eol ? 1 : 0);
	}
	if (!command)
		command = dup_str(is_shape ? "layout" : "run");
	if (push(argv, command))
		goto out;
	command = NULL;
	if (is_shape) {
		/* the shape is the rest of the file, trimmed */
		while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
			p++;
		size_t n = strlen(p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\n' || p[n - 1] == '\t' || p[n - 1] == '\r'))
			n--;
		if (push(argv, dup_n(p, n)))
			goto out;
	} else {
		if (push(argv, dup_str(path)))
			goto out;
		const char *dot = strrchr(path, '.');
		char *inputs = fmt("%.*s.inputs", (int)(dot ? (size_t)(dot - path) : strlen(path)), path);
		if (inputs && strcmp(argv->v[0], "run") == 0 && file_exists(inputs)) {
			if (push(argv, dup_str("--inputs")) || push(argv, inputs))
				goto out;
		} else {
			free(inputs);
		}
	}
	rc = add_flags(argv, &flags, c);
out:
	free(command);
	list_free(&flags);
	return rc;
}

char *test_case_run(const char *path, char **problem)
{
	*problem = NULL;
	char *text = read_text(path);
	if (!text) {
		*problem = fmt("cannot read: %s", strerror(errno));
		return NULL;
	}
	const char *slash = strrchr(path, '/');
	char *dir = slash ? dup_n(path, (size_t)(slash - path)) : dup_str(".");
	case_ctx c = { path, dir, NULL, 0, NULL };
	str_list argv = { 0 };
	char *result = NULL;
	if (!dir || build_argv(&argv, path, text, &c) || argv.n < 2) {
		*problem = c.problem ? c.problem : fmt("out of memory");
		goto out;
	}
	char *out_buf = NULL, *err_buf = NULL;
	size_t out_len = 0, err_len = 0;
	FILE *out = open_memstream(&out_buf, &out_len);
	FILE *err = open_memstream(&err_buf, &err_len);
	if (out && err) {
		cli_io io = { out, err, HLOI_DIAG_BASENAME, 1, 0 };
		cli_find_command(argv.v[0])((int)argv.n, argv.v, &io);
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
	} else {
		*problem = fmt("out of memory");
	}
	free(out_buf);
	free(err_buf);
out:
	if (c.scratch) {
		if (!c.keep)
			remove_scratch(c.scratch);
		free(c.scratch);
	}
	list_free(&argv);
	free(dir);
	free(text);
	return result;
}
