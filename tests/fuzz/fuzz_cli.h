/* Shared helpers of the targets that go through the command line's code
 * (src/cli/, linked in as the fuzz_cli objects): a scratch directory for
 * the files they write, the input saved as a file there, and a cli_io
 * that prints to the sink. */
#ifndef HLOI_FUZZ_CLI_H
#define HLOI_FUZZ_CLI_H

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fuzz_common.h"

static char fuzz_dir[512];

/* At exit: removes the scratch directory and the files in it. */
static inline void fuzz_scratch_remove(void)
{
	DIR *d = opendir(fuzz_dir);
	struct dirent *e;
	char path[1024];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", fuzz_dir, e->d_name);
		remove(path);
	}
	closedir(d);
	rmdir(fuzz_dir);
}

/* This process's scratch directory (made on first use, under $TMPDIR or
 * /tmp, removed at exit), or NULL when it cannot be made. */
static inline const char *fuzz_scratch_dir(void)
{
	if (!fuzz_dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(fuzz_dir, sizeof fuzz_dir, "%s/hloi-fuzz-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(fuzz_dir)) {
			fuzz_dir[0] = '\0';
			return NULL;
		}
		atexit(fuzz_scratch_remove);
	}
	return fuzz_dir;
}

/* The path of `name` in the scratch directory (static storage, one per
 * slot 0..3), or NULL. */
static inline const char *fuzz_scratch_path(int slot, const char *name)
{
	static char paths[4][600];
	const char *dir = fuzz_scratch_dir();

	if (!dir || slot < 0 || slot > 3)
		return NULL;
	snprintf(paths[slot], sizeof paths[slot], "%s/%s", dir, name);
	return paths[slot];
}

/* Saves `size` bytes as `path`; 0 on success. */
static inline int fuzz_save(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	int bad = size && fwrite(data, 1, size, f) != size;
	return fclose(f) != 0 || bad ? -1 : 0;
}

/* Reads `path` whole (malloc'd, *len bytes), or NULL. */
static inline unsigned char *fuzz_load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len == cap) {
			cap = cap ? cap * 2 : 4096;
			unsigned char *nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
		}
		size_t got = fread(buf + *len, 1, cap - *len, f);
		*len += got;
		if (got == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad || !buf) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Streams for a command: output and diagnostics to the sink. */
static inline cli_io fuzz_cli_io(void)
{
	cli_io io = { fuzz_sink(), fuzz_sink(), HLOI_DIAG_BASENAME, 0, 0 };
	return io;
}

#endif
