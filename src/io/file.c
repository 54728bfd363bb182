/* File reading and writing. Reads are size-limited; writes (whole or in
 * pieces) go through a temporary file in the target's directory and a
 * rename, so a failed write never leaves a partial file behind ("-" is
 * standard input / output). The rules for an existing target are in
 * file.h. */
#include "io/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "hloi/tool.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/strbuf.h"

/* The most a file read whole may hold: the memory ceiling when one is set
 * (the command line always sets one: budget plus slack), else 1 GiB. */
static size_t file_limit(void)
{
	size_t c = alloc_ceiling();
	return c ? c : FILE_MAX_BYTES;
}

static void too_large(hloi_context *ctx, const char *path, long long size)
{
	size_t c = alloc_ceiling();
	char what[64] = "";
	if (size >= 0)
		snprintf(what, sizeof what, "%lld bytes; ", size);
	if (c)
		diag_error_where(ctx, path, "file is too large (%sthe memory ceiling is %zu bytes: --max-memory plus %llu)",
				 what, c, (unsigned long long)HLOI_MEMORY_SLACK);
	else
		diag_error_where(ctx, path, "file is too large (%sthe limit is 1 GiB)", what);
}

/* Reads fd to EOF into a growing buffer (size hint `hint`). */
static hloi_status read_fd(char **out, size_t *len, hloi_context *ctx, const char *path, int fd,
			   size_t hint)
{
	/* room for the file, its NUL and the read that sees the end */
	size_t cap = hint + 2 > 4096 ? hint + 2 : 4096, n = 0;
	char *buf = hloi_malloc(cap);
	if (!buf)
		return HLOI_ENOMEM;
	alloc_advise_huge(buf, cap); /* a large program: fewer page faults */
	for (;;) {
		if (n + 1 >= cap) {
			if (cap > file_limit()) {
				too_large(ctx, path, -1);
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
			alloc_advise_huge(buf, cap);
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
		if (n > file_limit()) {
			too_large(ctx, path, -1);
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
		if ((unsigned long long)st.st_size > file_limit()) {
			too_large(ctx, path, (long long)st.st_size);
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

/* Opens an existing file for writing in place: a device, a FIFO, a file
 * with several hard links, or a file in a directory where no temporary
 * file can be created. */
static hloi_status open_direct(file_out *o, hloi_context *ctx, const char *path)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		diag_error_where(ctx, o->where, "cannot open for writing: %s", strerror(errno));
		return HLOI_EIO;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		diag_error_where(ctx, o->where, "cannot open for writing: %s", strerror(errno));
		close(fd);
		return HLOI_EIO;
	}
	return HLOI_OK;
}

/* The directory part of `path` ("." when it has none), hloi_malloc'd. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return hloi_strdup(".");
	if (slash == path)
		return hloi_strdup("/");
	return hloi_strndup(path, (size_t)(slash - path));
}

/* Follows `path` through symbolic links to the file a write must replace
 * (which need not exist: a dangling link's target is created). NULL when
 * out of memory; the path itself after 40 links (open then reports the
 * loop). */
static char *follow_links(const char *path)
{
	char *p = hloi_strdup(path);
	for (int hops = 0; p && hops < 40; hops++) {
		struct stat st;
		if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
			return p;
		size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
		char *link = hloi_malloc(cap);
		if (!link)
			break;
		ssize_t n = readlink(p, link, cap);
		if (n < 0 || (size_t)n >= cap) {
			hloi_free(link);
			return p;
		}
		link[n] = '\0';
		char *next;
		if (link[0] == '/') {
			next = link;
		} else {
			char *dir = dir_of(p);
			strbuf b = STRBUF_INIT;
			if (dir)
				sb_printf(&b, "%s/%s", dir, link);
			next = dir && !b.oom ? sb_take(&b) : NULL;
			sb_free(&b);
			hloi_free(dir);
			hloi_free(link);
		}
		hloi_free(p);
		p = next;
	}
	return p;
}

/* Creates a temporary file in `target`'s directory (the same file system,
 * so that the final rename is atomic), with `mode` when `keep_mode` (an
 * existing file's permissions and, for root, owner). Returns the fd or -1
 * with errno set. */
static int create_temporary(file_out *o, const char *target, const struct stat *keep)
{
	char *dir = dir_of(target);
	if (!dir) {
		errno = ENOMEM;
		return -1;
	}
	strbuf tmp = STRBUF_INIT;
	int fd = -1, err = 0;
	for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
		sb_reset(&tmp);
		sb_printf(&tmp, "%s/.hloi-%ld-%d.tmp", dir, (long)getpid(), attempt);
		if (tmp.oom) {
			err = ENOMEM;
			break;
		}
		fd = open(sb_str(&tmp), O_WRONLY | O_CREAT | O_EXCL, keep ? 0600 : 0666);
		err = errno;
		if (fd < 0 && err != EEXIST)
			break;
	}
	hloi_free(dir);
	if (fd < 0) {
		sb_free(&tmp);
		errno = err;
		return -1;
	}
	if (keep) {
		/* the replaced file's permissions, and (root only) its owner */
		if (geteuid() == 0)
			(void)!fchown(fd, keep->st_uid, keep->st_gid);
		(void)fchmod(fd, keep->st_mode & 07777);
	}
	o->tmp = sb_take(&tmp);
	if (!o->tmp) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	return fd;
}

/* Whether an existing file must not be replaced: not writable for this
 * process (as cp refuses it), or, for root (whom access() lets write
 * anything), without any write permission bit. */
static int read_only(const char *target, const struct stat *st)
{
	if (access(target, W_OK) != 0 && errno != EROFS)
		return 1;
	return geteuid() == 0 && (st->st_mode & 0222) == 0;
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
	o->target = follow_links(path);
	if (!o->target) {
		diag_error_where(ctx, path, "out of memory");
		return HLOI_ENOMEM;
	}
	struct stat st;
	int exists = stat(o->target, &st) == 0;
	if (exists) {
		if (S_ISDIR(st.st_mode)) {
			diag_error_where(ctx, path, "cannot write: %s", strerror(EISDIR));
			goto fail;
		}
		if (!S_ISREG(st.st_mode)) {
			if (open_direct(o, ctx, o->target) != HLOI_OK)
				goto fail;
			return HLOI_OK;
		}
		if (read_only(o->target, &st)) {
			diag_error_where(ctx, path, "cannot write: the file is read-only (hloi does not replace it)");
			goto fail;
		}
		/* every name of a hard-linked file must see the result */
		if (st.st_nlink > 1) {
			if (open_direct(o, ctx, o->target) != HLOI_OK)
				goto fail;
			return HLOI_OK;
		}
	}
	int fd = create_temporary(o, o->target, exists ? &st : NULL);
	if (fd < 0) {
		int err = errno;
		if (err == ENOMEM) {
			diag_error_where(ctx, path, "out of memory");
			hloi_free(o->target);
			o->target = NULL;
			return HLOI_ENOMEM;
		}
		/* a writable file in a directory that takes no new files */
		if (exists && (err == EACCES || err == EPERM)) {
			if (open_direct(o, ctx, o->target) != HLOI_OK)
				goto fail;
			return HLOI_OK;
		}
		diag_error_where(ctx, path, "cannot create: %s", strerror(err));
		goto fail;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		diag_error_where(ctx, path, "cannot create: %s", strerror(errno));
		close(fd);
		unlink(o->tmp);
		hloi_free(o->tmp);
		o->tmp = NULL;
		goto fail;
	}
	return HLOI_OK;
fail:
	hloi_free(o->target);
	o->target = NULL;
	return HLOI_EIO;
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
		} else if (o->tmp && rename(o->tmp, o->target) != 0) {
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
	hloi_free(o->target);
	o->target = NULL;
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
