/* Whole-file reading and writing, and writing a file in pieces ("-" is
 * standard input / output). */
#ifndef HLOI_IO_FILE_H
#define HLOI_IO_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "hloi.h"

/* The largest file hloi reads whole when no memory ceiling is set
 * (hloi_set_memory_ceiling); with one, the ceiling is the limit. */
#define FILE_MAX_BYTES ((size_t)1 << 30)

/* Reads the whole file into a hloi_malloc'd buffer (NUL-terminated, the NUL
 * not counted in *len). Errors are recorded in ctx as `path: error: <reason>`:
 * a file that cannot be opened, a directory, or a file over 1 GiB is bad input
 * (HLOI_EINVAL, exit 3); a failing read is HLOI_EIO. */
hloi_status file_read_all(char **out, size_t *len, hloi_context *ctx, const char *path);

/* A file opened for reading with the checks of file_read_all: "-" is standard
 * input (named "<stdin>" in read errors). `size` is the file's size when it is
 * a regular file, else -1. */
typedef struct file_in {
	int fd;
	int owned;          /* fd is closed by file_in_close */
	const char *where;  /* the name for read errors */
	long long size;
} file_in;

/* Opens `path`: the errors of file_read_all for a missing or unreadable
 * file, a directory, or a regular file over 1 GiB. */
hloi_status file_in_open(file_in *in, hloi_context *ctx, const char *path);
/* Reads up to n bytes, fewer only at the end of the file. Returns the count,
 * or (size_t)-1 after recording `cannot read: REASON` (HLOI_EIO). */
size_t file_in_read(file_in *in, hloi_context *ctx, void *buf, size_t n);
void file_in_close(file_in *in);

/* Writes `len` bytes to `path` (via a temporary file and rename, so a failed
 * write leaves no partial file). */
hloi_status file_write_all(hloi_context *ctx, const char *path, const void *data, size_t len);

/* A file being written in pieces, with the behaviour of file_write_all.
 * The rules:
 * - "-" is standard output;
 * - a symbolic link is followed (through up to 40 links) and the file it
 *   points to is replaced; the link stays;
 * - a new file, or an existing regular file, is written to a temporary file
 *   in the same directory that file_out_close renames over it (atomic: a
 *   failed or interrupted write leaves the old file or none); an existing
 *   file's permission bits (and, for root, owner) are kept;
 * - an existing file that is read-only (not writable for this process; for
 *   root: no write bit at all) is not replaced: an error, as cp refuses;
 * - written in place instead (not atomic): an existing device or FIFO, a
 *   file with several hard links (all its names then see the result), and
 *   a writable file in a directory where no file can be created. */
typedef struct file_out {
	FILE *f;           /* write here (file_out_write, or a strbuf sink) */
	const char *path;  /* the target as given */
	const char *where; /* the name in errors: path, or "<stdout>" */
	char *target;      /* the file written: path with links followed */
	char *tmp;         /* the temporary file, or NULL */
	int err;           /* errno of the first failed write (0: none) */
} file_out;

/* Opens the target. Errors, recorded as `path: error: <reason>`: a directory,
 * a read-only file, a file that cannot be created or opened (HLOI_EIO);
 * HLOI_ENOMEM. */
hloi_status file_out_open(file_out *o, hloi_context *ctx, const char *path);
/* Writes n bytes. A failure records errno in o->err; later writes are then
 * ignored. Returns 0, or -1 once a write has failed. */
int file_out_write(file_out *o, const void *data, size_t n);
/* Flushes and closes the file and renames the temporary file over the
 * target. A failed write (o->err; set it for writes made directly to o->f)
 * or close is reported as `cannot write: <reason>` (HLOI_EIO) and removes the
 * temporary file. With `abandon` (the caller failed and has said why), the
 * temporary file is removed and HLOI_OK returned. */
hloi_status file_out_close(file_out *o, hloi_context *ctx, int abandon);

#endif
