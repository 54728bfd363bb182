/* Replays files through a fuzz target without libFuzzer (SQLite's
 * fuzzcheck model): `replay [--ext .hlo] PATH...` runs every regular file
 * below each PATH (recursively, dot files skipped; with --ext, only files
 * whose names end in one of its comma-separated suffixes, `.pb,.pbtxt`) through LLVMFuzzerTestOneInput. Exits 1 when a PATH
 * cannot be read, or holds no file while no --ext filter is set. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "util/alloc.h"

/* libFuzzer's default -rss_limit_mb (and so -malloc_limit_mb): an input
 * that makes hloi hold more is a finding there, and so here. */
#define REPLAY_MEMORY_LIMIT ((size_t)2048 << 20)

typedef struct replay {
	const char *ext;  /* suffix filter (comma-separated), or NULL */
	long files;       /* files run so far */
	int failed;       /* a path could not be read */
} replay;

/* Whether `s` ends in one of the comma-separated `suffixes`. */
static int has_suffix(const char *s, const char *suffixes)
{
	size_t n = strlen(s);
	for (const char *p = suffixes;;) {
		size_t m = strcspn(p, ",");
		if (m && n >= m && strncmp(s + n - m, p, m) == 0)
			return 1;
		if (!p[m])
			return 0;
		p += m + 1;
	}
}

static void run_file(replay *r, const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		r->failed = 1;
		return;
	}
	for (;;) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			unsigned char *nb = realloc(buf, ncap);
			if (!nb) {
				fprintf(stderr, "replay: %s: out of memory\n", path);
				r->failed = 1;
				goto cleanup;
			}
			buf = nb;
			cap = ncap;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		r->failed = 1;
		goto cleanup;
	}
	printf("replay: %s (%zu bytes)\n", path, len);
	fflush(stdout);
	/* An exact-size copy, so that ASan sees reads past the end. */
	unsigned char *exact = malloc(len ? len : 1);
	if (!exact) {
		r->failed = 1;
		goto cleanup;
	}
	if (len)
		memcpy(exact, buf, len);
	alloc_reset_peak();
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	if (alloc_peak() > REPLAY_MEMORY_LIMIT) {
		/* what libFuzzer reports as out-of-memory (-rss_limit_mb) */
		fprintf(stderr, "replay: %s: held %zu bytes at once, over the fuzz runs' limit of %zu\n", path,
			alloc_peak(), (size_t)REPLAY_MEMORY_LIMIT);
		abort();
	}
	r->files++;
cleanup:
	free(buf);
	fclose(f);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_path(replay *r, const char *path, int top)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		r->failed = 1;
		return;
	}
	if (S_ISREG(st.st_mode)) {
		if (top || !r->ext || has_suffix(path, r->ext))
			run_file(r, path);
		return;
	}
	if (!S_ISDIR(st.st_mode))
		return;
	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		r->failed = 1;
		return;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof *names);
			if (!nn)
				break;
			names = nn;
		}
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		names[n] = malloc(len);
		if (!names[n])
			break;
		snprintf(names[n], len, "%s/%s", path, e->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_names);
	for (size_t i = 0; i < n; i++) {
		run_path(r, names[i], 0);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	replay r = { NULL, 0, 0 };

	if (argc < 2) {
		fprintf(stderr, "usage: %s [--ext SUFFIX] PATH...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--ext") == 0 && i + 1 < argc) {
			r.ext = argv[++i];
			continue;
		}
		long before = r.files;
		run_path(&r, argv[i], 1);
		if (r.files == before && !r.ext) {
			fprintf(stderr, "replay: %s: no input files\n", argv[i]);
			r.failed = 1;
		}
	}
	printf("replay: %ld files, no crash\n", r.files);
	return r.failed ? 1 : 0;
}
