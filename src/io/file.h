/* Whole-file reading and writing ("-" is standard input / output). */
#ifndef HLOI_IO_FILE_H
#define HLOI_IO_FILE_H

#include <stddef.h>

#include "hloi.h"

/* Reads the whole file into a hloi_malloc'd buffer (NUL-terminated, the NUL
 * not counted in *len). Errors are recorded in ctx as `path: error: <reason>`:
 * a file that cannot be opened, a directory, or a file over 1 GiB is bad input
 * (HLOI_EINVAL, exit 3); a failing read is HLOI_EIO. */
hloi_status file_read_all(char **out, size_t *len, hloi_context *ctx, const char *path);
/* Writes `len` bytes to `path` (via a temporary file and rename, so a failed
 * write leaves no partial file). */
hloi_status file_write_all(hloi_context *ctx, const char *path, const void *data, size_t len);

#endif
