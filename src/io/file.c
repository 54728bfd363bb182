/* Whole-file reading and writing. Reads are size-limited; writes go through a
 * temporary file in the target's directory and a rename, so a failed write
 * never leaves a partial file behind ("-" is standard input / output). */
#include "io/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "util/strbuf.h"

#define FILE_MAX_BYTES ((size_t)1 << 30)

/* Reads fd to EOF into a growing buffer (size hint `hint`). */
static hloi_status read_fd(char **out, size_t *len, hloi_context *ctx, const char *path, int fd,
			   size_t hint)
{
	size_t cap = hint + 1 > 4096 ? hint + 1 : 4096, n = 0;
	char *buf = hloi_malloc(cap);
	if (!buf)
		return HLOI_ENOMEM;
	for (;;) {
		if (n + 1 >= cap) {
			if (cap > FILE_MAX_BYTES) {
				diag_error_where(ctx, path, "file is too large (the limit is 1 GiB)");
				hloi_free(buf);
				return HLOI_EINVAL;
			}
			size_t ncap = cap * 2;
			char *nb = hloi_realloc(buf, ncap);
			if (!nb) {
				hloi_free(buf);
				return HLOI_ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			diag_error_where(ctx, path, "cannot read: %s", strerror(errno));
			hloi_free(buf);
			return HLOI_EIO;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > FILE_MAX_BYTES) {
			diag_error_where(ctx, path, "file is too large (the limit is 1 GiB)");
			hloi_free(buf);
			return HLOI_EINVAL;
		}
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return HLOI_OK;
}

hloi_status file_read_all(char **out, size_t *len, hloi_context *ctx, const char *path)
{
	*out = NULL;
	*len = 0;
	if (!strcmp(path, "-"))
		return read_fd(out, len, ctx, "<stdin>", STDIN_FILENO, 0);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		/* a missing or unreadable input is bad input (exit 3), not an I/O failure */
		diag_error_where(ctx, path, "cannot open: %s", strerror(errno));
		return HLOI_EINVAL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		diag_error_where(ctx, path, "cannot open: %s", strerror(errno));
		close(fd);
		return HLOI_EIO;
	}
	if (S_ISDIR(st.st_mode)) {
		diag_error_where(ctx, path, "cannot read: %s", strerror(EISDIR));
		close(fd);
		return HLOI_EINVAL;
	}
	size_t hint = 0;
	if (S_ISREG(st.st_mode)) {
		if ((unsigned long long)st.st_size > FILE_MAX_BYTES) {
			diag_error_where(ctx, path, "file is too large (%lld bytes; the limit is 1 GiB)",
					 (long long)st.st_size);
			close(fd);
			return HLOI_EINVAL;
		}
		hint = (size_t)st.st_size;
	}
	hloi_status s = read_fd(out, len, ctx, path, fd, hint);
	close(fd);
	return s;
}

/* Writes all bytes to fd; returns 0 or an errno value. */
static int write_fd(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (w == 0)
			return EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Writes straight into an existing non-regular file (a device, a FIFO). */
static hloi_status write_direct(hloi_context *ctx, const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		diag_error_where(ctx, path, "cannot open for writing: %s", strerror(errno));
		return HLOI_EIO;
	}
	int e = write_fd(fd, data, len);
	if (close(fd) != 0 && !e)
		e = errno;
	if (e) {
		diag_error_where(ctx, path, "cannot write: %s", strerror(e));
		return HLOI_EIO;
	}
	return HLOI_OK;
}

hloi_status file_write_all(hloi_context *ctx, const char *path, const void *data, size_t len)
{
	if (!strcmp(path, "-")) {
		if ((len && fwrite(data, 1, len, stdout) != len) || fflush(stdout) != 0) {
			diag_error_where(ctx, "<stdout>", "cannot write: %s", strerror(errno));
			return HLOI_EIO;
		}
		return HLOI_OK;
	}
	struct stat st;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			diag_error_where(ctx, path, "cannot write: %s", strerror(EISDIR));
			return HLOI_EIO;
		}
		if (!S_ISREG(st.st_mode))
			return write_direct(ctx, path, data, len);
	}
	/* a temporary file next to the target: same directory, same file system */
	strbuf tmp = STRBUF_INIT;
	int fd = -1;
	for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
		sb_reset(&tmp);
		sb_printf(&tmp, "%s.tmp.%ld.%d", path, (long)getpid(), attempt);
		if (tmp.oom) {
			sb_free(&tmp);
			return HLOI_ENOMEM;
		}
		fd = open(sb_str(&tmp), O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		diag_error_where(ctx, path, "cannot create: %s", strerror(errno));
		sb_free(&tmp);
		return HLOI_EIO;
	}
	int e = write_fd(fd, data, len);
	if (close(fd) != 0 && !e)
		e = errno;
	if (e) {
		diag_error_where(ctx, path, "cannot write: %s", strerror(e));
		unlink(sb_str(&tmp));
		sb_free(&tmp);
		return HLOI_EIO;
	}
	if (rename(sb_str(&tmp), path) != 0) {
		diag_error_where(ctx, path, "cannot write: %s", strerror(errno));
		unlink(sb_str(&tmp));
		sb_free(&tmp);
		return HLOI_EIO;
	}
	sb_free(&tmp);
	return HLOI_OK;
}
