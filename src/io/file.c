/* File reading and writing. Reads are size-limited; writes (whole or in
 * pieces) go through a temporary file in the target's directory and a
 * rename, so a failed write never leaves a partial file behind ("-" is
 * standard input / output). */
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

hloi_status file_in_open(file_in *in, hloi_context *ctx, const char *path)
{
	in->fd = -1;
	in->owned = 0;
	in->where = path;
	in->size = -1;
	if (!strcmp(path, "-")) {
		in->fd = STDIN_FILENO;
		in->where = "<stdin>";
		return HLOI_OK;
	}
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
	if (S_ISREG(st.st_mode)) {
		if ((unsigned long long)st.st_size > FILE_MAX_BYTES) {
			diag_error_where(ctx, path, "file is too large (%lld bytes; the limit is 1 GiB)",
					 (long long)st.st_size);
			close(fd);
			return HLOI_EINVAL;
		}
		in->size = (long long)st.st_size;
	}
	in->fd = fd;
	in->owned = 1;
	return HLOI_OK;
}

size_t file_in_read(file_in *in, hloi_context *ctx, void *buf, size_t n)
{
	char *p = buf;
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(in->fd, p + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			diag_error_where(ctx, in->where, "cannot read: %s", strerror(errno));
			return (size_t)-1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return got;
}

void file_in_close(file_in *in)
{
	if (in->owned && in->fd >= 0)
		close(in->fd);
	in->fd = -1;
	in->owned = 0;
}

hloi_status file_read_all(char **out, size_t *len, hloi_context *ctx, const char *path)
{
	*out = NULL;
	*len = 0;
	file_in in;
	hloi_status s = file_in_open(&in, ctx, path);
	if (s != HLOI_OK)
		return s;
	s = read_fd(out, len, ctx, in.where, in.fd, in.size > 0 ? (size_t)in.size : 0);
	file_in_close(&in);
	return s;
}

/* Opens an existing non-regular file (a device, a FIFO) for direct writing. */
static hloi_status open_direct(file_out *o, hloi_context *ctx, const char *path)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		diag_error_where(ctx, path, "cannot open for writing: %s", strerror(errno));
		return HLOI_EIO;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		diag_error_where(ctx, path, "cannot open for writing: %s", strerror(errno));
		close(fd);
		return HLOI_EIO;
	}
	return HLOI_OK;
}

/* Creates a temporary file next to the target: same directory, same file
 * system, so that the final rename is atomic. */
static hloi_status open_temporary(file_out *o, hloi_context *ctx, const char *path)
{
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
	o->f = fdopen(fd, "w");
	if (!o->f) {
		diag_error_where(ctx, path, "cannot create: %s", strerror(errno));
		close(fd);
		unlink(sb_str(&tmp));
		sb_free(&tmp);
		return HLOI_EIO;
	}
	o->tmp = sb_take(&tmp);
	if (!o->tmp) {
		/* sb_take cannot fail here (no oom, non-empty), but be safe */
		fclose(o->f);
		o->f = NULL;
		return HLOI_ENOMEM;
	}
	return HLOI_OK;
}

hloi_status file_out_open(file_out *o, hloi_context *ctx, const char *path)
{
	memset(o, 0, sizeof *o);
	o->path = path;
	o->where = path;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		o->where = "<stdout>";
		return HLOI_OK;
	}
	struct stat st;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			diag_error_where(ctx, path, "cannot write: %s", strerror(EISDIR));
			return HLOI_EIO;
		}
		if (!S_ISREG(st.st_mode))
			return open_direct(o, ctx, path);
	}
	return open_temporary(o, ctx, path);
}

int file_out_write(file_out *o, const void *data, size_t n)
{
	if (o->err)
		return -1;
	if (n == 0)
		return 0;
	errno = 0;
	if (fwrite(data, 1, n, o->f) != n) {
		o->err = errno ? errno : EIO;
		return -1;
	}
	return 0;
}

hloi_status file_out_close(file_out *o, hloi_context *ctx, int abandon)
{
	if (!o->f)
		return HLOI_OK;
	if (o->f == stdout) {
		errno = 0;
		if (fflush(stdout) != 0 && !o->err)
			o->err = errno ? errno : EIO;
	} else {
		errno = 0;
		if (fclose(o->f) != 0 && !o->err)
			o->err = errno ? errno : EIO;
	}
	o->f = NULL;
	hloi_status st = HLOI_OK;
	if (!abandon) {
		if (o->err) {
			diag_error_where(ctx, o->where, "cannot write: %s", strerror(o->err));
			st = HLOI_EIO;
		} else if (o->tmp && rename(o->tmp, o->path) != 0) {
			diag_error_where(ctx, o->path, "cannot write: %s", strerror(errno));
			st = HLOI_EIO;
		} else {
			hloi_free(o->tmp); /* renamed into place */
			o->tmp = NULL;
		}
	}
	if (o->tmp)
		unlink(o->tmp);
	hloi_free(o->tmp);
	o->tmp = NULL;
	return st;
}

hloi_status file_write_all(hloi_context *ctx, const char *path, const void *data, size_t len)
{
	file_out o;
	hloi_status st = file_out_open(&o, ctx, path);
	if (st != HLOI_OK)
		return st;
	file_out_write(&o, data, len);
	return file_out_close(&o, ctx, 0);
}
