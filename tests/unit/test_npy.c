/* Unit tests for .npy reading and writing (bytes produced by NumPy 1.24 are
 * embedded below; python is not needed at test time), streamed and in
 * memory, for whole-file reading and writing, and for streamed literal text
 * output with its limit on zero-element arrays. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/index.h"
#include "core/literal.h"
#include "io/file.h"
#include "io/npy.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/strbuf.h"
#include "unit.h"

/* Generated with /usr/bin/python3 (NumPy 1.24.2). */
/* np.save: float32 [[1,2,3],[4,5,6]] */
static const unsigned char np_f32_2x3[] = {
	0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
	0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
	0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
	0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20,
	0x33, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
	0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x40,
	0x00, 0x00, 0xa0, 0x40, 0x00, 0x00, 0xc0, 0x40,
};
/* np.save: asfortranarray(arange(6, int32).reshape(2,3)) */
static const unsigned char np_s32_fortran[] = {
	0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
	0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x69, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
	0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x54, 0x72, 0x75, 0x65,
	0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20, 0x33,
	0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
	0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
};
/* np.save: [True, False, True] */
static const unsigned char np_bool[] = {
	0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
	0x72, 0x27, 0x3a, 0x20, 0x27, 0x7c, 0x62, 0x31, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
	0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
	0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x33, 0x2c, 0x29,
	0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
	0x01, 0x00, 0x01,
};
/* np.save: float64(2.5), shape () */
static const unsigned char np_f64_scalar[] = {
	0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
	0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x38, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
	0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
	0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x29, 0x2c, 0x20,
	0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x40,
};
/* write_array(version=(2,0)): float16 [1.5, -2, 65504] */
static const unsigned char np_f16_v2[] = {
	0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x02, 0x00, 0x74, 0x00, 0x00, 0x00, 0x7b, 0x27, 0x64, 0x65,
	0x73, 0x63, 0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x32, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f,
	0x72, 0x74, 0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61,
	0x6c, 0x73, 0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x33,
	0x2c, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
	0x00, 0x3e, 0x00, 0xc0, 0xff, 0x7b,
};
/* np.save: uint16 [1, 65535] */
static const unsigned char np_u16[] = {
	0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
	0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x75, 0x32, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
	0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
	0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x29,
	0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
	0x01, 0x00, 0xff, 0xff,
};
/* np.save: zeros((0,5), int64) */
static const unsigned char np_i64_empty[] = {
	0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
	0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x69, 0x38, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
	0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
	0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x30, 0x2c, 0x20,
	0x35, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
};
/* np.save: arange(-4, 4, int8).reshape(2,2,2) */
static const unsigned char np_i8_3d[] = {
	0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
	0x72, 0x27, 0x3a, 0x20, 0x27, 0x7c, 0x69, 0x31, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
	0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
	0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20,
	0x32, 0x2c, 0x20, 0x32, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
	0xfc, 0xfd, 0xfe, 0xff, 0x00, 0x01, 0x02, 0x03,
};
/* write_array(version=(3,0)): float32 [0.5] */
static const unsigned char np_f32_v3[] = {
	0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x03, 0x00, 0x74, 0x00, 0x00, 0x00, 0x7b, 0x27, 0x64, 0x65,
	0x73, 0x63, 0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f,
	0x72, 0x74, 0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61,
	0x6c, 0x73, 0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x31,
	0x2c, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
	0x00, 0x00, 0x00, 0x3f,
};

/* --- helpers -------------------------------------------------------------- */

typedef struct fixture {
	hloi_context *ctx;
	hloi_literal *lit;
	hloi_status st;
} fixture;

static hloi_status parse(fixture *f, const unsigned char *data, size_t len, const shape *expect)
{
	if (!f->ctx)
		CU_ASSERT_FATAL(hloi_context_new(&f->ctx) == HLOI_OK);
	hloi_context_clear(f->ctx);
	literal_destroy(f->lit);
	f->lit = NULL;
	f->st = npy_parse(&f->lit, f->ctx, "x.npy", data, len, expect);
	if (f->st != HLOI_OK)
		CU_ASSERT_PTR_NULL(f->lit);
	return f->st;
}

static void fixture_done(fixture *f)
{
	literal_destroy(f->lit);
	hloi_context_free(f->ctx);
	f->lit = NULL;
	f->ctx = NULL;
}

static const char *last_msg(const fixture *f)
{
	const char *m = hloi_context_last_error(f->ctx);
	return m ? m : "(none)";
}

static const char *last_where(const fixture *f)
{
	if (!f->ctx->ndiags || !f->ctx->diags[f->ctx->ndiags - 1].where)
		return "(none)";
	return f->ctx->diags[f->ctx->ndiags - 1].where;
}

#define EXPECT_MSG(f, msg)                                                   \
	do {                                                                 \
		CU_ASSERT_STRING_EQUAL(last_msg(f), msg);                    \
		if (strcmp(last_msg(f), msg))                                \
			fprintf(stderr, "\n  got:  %s\n  want: %s\n", last_msg(f), msg); \
	} while (0)

/* Assembles a .npy file from a header text (used as is) and data. */
static unsigned char *make_npy(int major, const char *header, const void *data, size_t dlen, size_t *len)
{
	size_t hl = strlen(header), pre = major == 1 ? 10 : 12;
	unsigned char *b = malloc(pre + hl + dlen + 1);
	memcpy(b, "\x93NUMPY", 6);
	b[6] = (unsigned char)major;
	b[7] = 0;
	b[8] = (unsigned char)(hl & 0xff);
	b[9] = (unsigned char)((hl >> 8) & 0xff);
	if (major != 1) {
		b[10] = (unsigned char)((hl >> 16) & 0xff);
		b[11] = (unsigned char)(hl >> 24);
	}
	memcpy(b + pre, header, hl);
	if (dlen)
		memcpy(b + pre + hl, data, dlen);
	*len = pre + hl + dlen;
	return b;
}

static hloi_status parse_header(fixture *f, const char *header, size_t dlen)
{
	static const unsigned char zeros[256];
	size_t len;
	unsigned char *b = make_npy(1, header, zeros, dlen, &len);
	hloi_status st = parse(f, b, len, NULL);
	free(b);
	return st;
}

static void expect_rejected(const char *header, size_t dlen, hloi_status want_st, const char *want)
{
	fixture f = { 0 };
	CU_ASSERT_EQUAL(parse_header(&f, header, dlen), want_st);
	EXPECT_MSG(&f, want);
	CU_ASSERT_STRING_EQUAL(last_where(&f), "x.npy");
	fixture_done(&f);
}

static void expect_bytes(const unsigned char *got, size_t glen, const unsigned char *want, size_t wlen)
{
	CU_ASSERT_EQUAL(glen, wlen);
	CU_ASSERT(glen == wlen && memcmp(got, want, wlen) == 0);
	if (glen != wlen || memcmp(got, want, wlen) != 0)
		fprintf(stderr, "\n  got %zu bytes: %.*s\n  want %zu bytes: %.*s\n", glen, (int)glen, got,
			wlen, (int)wlen, want);
}

/* Whether the header of serialised .npy bytes contains `needle`. */
static int header_has(const unsigned char *npy, const char *needle)
{
	char h[256];
	size_t hl = (size_t)npy[8] + (size_t)npy[9] * 256;
	if (hl >= sizeof h)
		return 0;
	memcpy(h, npy + 10, hl);
	h[hl] = '\0';
	return strstr(h, needle) != NULL;
}

/* --- reading NumPy's files ------------------------------------------------------ */

static void test_read_numpy(void)
{
	fixture f = { 0 };
	CU_ASSERT_FATAL(parse(&f, np_f32_2x3, sizeof np_f32_2x3, NULL) == HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->shape.type, ET_F32);
	CU_ASSERT(f.lit->shape.rank == 2 && f.lit->shape.dims[0] == 2 && f.lit->shape.dims[1] == 3);
	CU_ASSERT(layout_is_default(&f.lit->shape));
	const float wf[6] = { 1, 2, 3, 4, 5, 6 };
	CU_ASSERT_EQUAL(memcmp(f.lit->data, wf, sizeof wf), 0);

	CU_ASSERT_FATAL(parse(&f, np_s32_fortran, sizeof np_s32_fortran, NULL) == HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->shape.type, ET_S32);
	CU_ASSERT(f.lit->shape.layout.minor_to_major[0] == 0 && f.lit->shape.layout.minor_to_major[1] == 1);
	const int32_t ws[6] = { 0, 3, 1, 4, 2, 5 }; /* the bytes as they are */
	CU_ASSERT_EQUAL(memcmp(f.lit->data, ws, sizeof ws), 0);
	int64_t idx[2] = { 0, 1 };
	CU_ASSERT_EQUAL(*(int32_t *)literal_element(f.lit, idx), 1);
	idx[0] = 1;
	idx[1] = 0;
	CU_ASSERT_EQUAL(*(int32_t *)literal_element(f.lit, idx), 3);

	CU_ASSERT_FATAL(parse(&f, np_bool, sizeof np_bool, NULL) == HLOI_OK);
	CU_ASSERT(f.lit->shape.type == ET_PRED && f.lit->shape.rank == 1 && f.lit->shape.dims[0] == 3);
	CU_ASSERT_EQUAL(memcmp(f.lit->data, "\1\0\1", 3), 0);

	CU_ASSERT_FATAL(parse(&f, np_f64_scalar, sizeof np_f64_scalar, NULL) == HLOI_OK);
	CU_ASSERT(f.lit->shape.type == ET_F64 && f.lit->shape.rank == 0);
	CU_ASSERT_EQUAL(*(double *)f.lit->data, 2.5);

	CU_ASSERT_FATAL(parse(&f, np_f16_v2, sizeof np_f16_v2, NULL) == HLOI_OK);
	CU_ASSERT(f.lit->shape.type == ET_F16 && f.lit->shape.dims[0] == 3);
	const uint16_t wh[3] = { 0x3e00, 0xc000, 0x7bff };
	CU_ASSERT_EQUAL(memcmp(f.lit->data, wh, 6), 0);

	CU_ASSERT_FATAL(parse(&f, np_u16, sizeof np_u16, NULL) == HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->shape.type, ET_U16);
	shape bf;
	int64_t two = 2;
	shape_make_array(&bf, ET_BF16, 1, &two);
	CU_ASSERT_FATAL(parse(&f, np_u16, sizeof np_u16, &bf) == HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->shape.type, ET_BF16);
	CU_ASSERT_EQUAL(((uint16_t *)f.lit->data)[1], 0xffff);
	shape_make_array(&bf, ET_F32, 1, &two);
	CU_ASSERT_FATAL(parse(&f, np_u16, sizeof np_u16, &bf) == HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->shape.type, ET_U16); /* only bf16 changes the reading */

	CU_ASSERT_FATAL(parse(&f, np_i64_empty, sizeof np_i64_empty, NULL) == HLOI_OK);
	CU_ASSERT(f.lit->shape.type == ET_S64 && f.lit->shape.dims[0] == 0 && f.lit->shape.dims[1] == 5);
	CU_ASSERT_EQUAL(f.lit->nbytes, 0);

	CU_ASSERT_FATAL(parse(&f, np_i8_3d, sizeof np_i8_3d, NULL) == HLOI_OK);
	CU_ASSERT(f.lit->shape.type == ET_S8 && f.lit->shape.rank == 3);
	CU_ASSERT_EQUAL(((int8_t *)f.lit->data)[0], -4);
	CU_ASSERT_EQUAL(((int8_t *)f.lit->data)[7], 3);

	CU_ASSERT_FATAL(parse(&f, np_f32_v3, sizeof np_f32_v3, NULL) == HLOI_OK);
	CU_ASSERT_EQUAL(*(float *)f.lit->data, 0.5f);
	fixture_done(&f);
}

static void test_header_variants(void)
{
	fixture f = { 0 };
	/* key order, quotes, spacing, trailing commas are all free */
	CU_ASSERT_EQUAL(parse_header(&f, "{\"shape\":(2,3,),'fortran_order':True,'descr':'<i2'}\n", 12), HLOI_OK);
	CU_ASSERT(f.lit && f.lit->shape.type == ET_S16 && f.lit->shape.layout.minor_to_major[0] == 0);
	CU_ASSERT_EQUAL(parse_header(&f, "  { 'descr' : '|u1' , 'fortran_order' : False , 'shape' : ( 7 , ) }", 7),
			HLOI_OK);
	CU_ASSERT(f.lit && f.lit->shape.type == ET_U8 && f.lit->shape.dims[0] == 7);
	CU_ASSERT_EQUAL(parse_header(&f, "{'descr': '<u1', 'fortran_order': True, 'shape': (4,), }", 4), HLOI_OK);
	CU_ASSERT(f.lit && f.lit->shape.layout.minor_to_major[0] == 0);
	CU_ASSERT_EQUAL(parse_header(&f, "{'descr': '|i1', 'fortran_order': True, 'shape': (), }", 1), HLOI_OK);
	CU_ASSERT(f.lit && f.lit->shape.rank == 0);
	CU_ASSERT_EQUAL(parse_header(&f, "{'descr': '<f8', 'fortran_order': False, 'shape': (0,)}", 0), HLOI_OK);
	/* version 2.0 header built by hand */
	size_t len;
	const float one = 1.0f;
	unsigned char *b = make_npy(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", &one, 4, &len);
	CU_ASSERT_EQUAL(parse(&f, b, len, NULL), HLOI_OK);
	free(b);
	/* pred bytes other than 0/1 read as true */
	static const unsigned char pb[] = { 0, 2, 255 };
	b = make_npy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", pb, 3, &len);
	CU_ASSERT_FATAL(parse(&f, b, len, NULL) == HLOI_OK);
	CU_ASSERT_EQUAL(memcmp(f.lit->data, "\0\1\1", 3), 0);
	free(b);
	fixture_done(&f);
}

static void test_rejections(void)
{
	fixture f = { 0 };
	unsigned char bad[sizeof np_f32_2x3];
	memcpy(bad, np_f32_2x3, sizeof bad);
	bad[1] = 'M';
	CU_ASSERT_EQUAL(parse(&f, bad, sizeof bad, NULL), HLOI_EPARSE);
	EXPECT_MSG(&f, "not a .npy file (bad magic)");
	CU_ASSERT_STRING_EQUAL(last_where(&f), "x.npy");
	CU_ASSERT_EQUAL(parse(&f, (const unsigned char *)"", 0, NULL), HLOI_EPARSE);
	EXPECT_MSG(&f, "not a .npy file (bad magic)");
	CU_ASSERT_EQUAL(parse(&f, np_f32_2x3, 8, NULL), HLOI_EPARSE);
	EXPECT_MSG(&f, "truncated .npy header");
	memcpy(bad, np_f32_2x3, sizeof bad);
	bad[6] = 4;
	CU_ASSERT_EQUAL(parse(&f, bad, sizeof bad, NULL), HLOI_EUNSUPPORTED);
	EXPECT_MSG(&f, "unsupported .npy format version 4.0");
	bad[6] = 1;
	bad[7] = 1;
	CU_ASSERT_EQUAL(parse(&f, bad, sizeof bad, NULL), HLOI_EUNSUPPORTED);
	EXPECT_MSG(&f, "unsupported .npy format version 1.1");
	CU_ASSERT_EQUAL(parse(&f, np_f32_2x3, 50, NULL), HLOI_EPARSE);
	EXPECT_MSG(&f, "truncated .npy header: header length 118 runs past the end of the file (50 bytes)");
	CU_ASSERT_EQUAL(parse(&f, np_f16_v2, 11, NULL), HLOI_EPARSE);
	EXPECT_MSG(&f, "truncated .npy header");
	/* a v2 header length of 200000 */
	memcpy(bad, np_f16_v2, 12);
	bad[8] = 0x40;
	bad[9] = 0x0d;
	bad[10] = 0x03;
	CU_ASSERT_EQUAL(parse(&f, bad, 12, NULL), HLOI_EPARSE);
	EXPECT_MSG(&f, ".npy header too large (200000 bytes; the limit is 100000)");
	/* data size */
	CU_ASSERT_EQUAL(parse(&f, np_f32_2x3, sizeof np_f32_2x3 - 4, NULL), HLOI_EPARSE);
	EXPECT_MSG(&f, "truncated .npy data: shape (2, 3) of '<f4' needs 24 bytes, the file has 20");
	unsigned char longer[sizeof np_f32_2x3 + 1];
	memcpy(longer, np_f32_2x3, sizeof np_f32_2x3);
	longer[sizeof np_f32_2x3] = 0;
	CU_ASSERT_EQUAL(parse(&f, longer, sizeof longer, NULL), HLOI_EPARSE);
	EXPECT_MSG(&f, ".npy data has 1 trailing bytes after the 24 bytes of shape (2, 3) of '<f4'");
	fixture_done(&f);

	const char *fo = "'fortran_order': False";
	char h[512];
#define HDR(descr, shp) (snprintf(h, sizeof h, "{'descr': %s, %s, 'shape': %s, }", descr, fo, shp), h)
	expect_rejected(HDR("'>f4'", "(2,)"), 8, HLOI_EUNSUPPORTED, "unsupported dtype '>f4' (big-endian)");
	expect_rejected(HDR("'>i8'", "(2,)"), 16, HLOI_EUNSUPPORTED, "unsupported dtype '>i8' (big-endian)");
	expect_rejected(HDR("'|O'", "(2,)"), 16, HLOI_EUNSUPPORTED,
			"unsupported dtype '|O' (object arrays are not supported)");
	expect_rejected(HDR("[('a', '<f4'), ('b', '<i4')]", "(2,)"), 16, HLOI_EUNSUPPORTED,
			"unsupported dtype: structured arrays are not supported");
	expect_rejected(HDR("'|V2'", "(2,)"), 4, HLOI_EUNSUPPORTED, "unsupported dtype '|V2' (raw void data)");
	expect_rejected(HDR("'<c32'", "(2,)"), 64, HLOI_EUNSUPPORTED, "unsupported dtype '<c32'");
	expect_rejected(HDR("'|V1'", "(2,)"), 2, HLOI_EUNSUPPORTED, "unsupported dtype '|V1' (raw void data)");
	expect_rejected(HDR("'<U5'", "(2,)"), 40, HLOI_EUNSUPPORTED, "unsupported dtype '<U5'");
	expect_rejected(HDR("'=f4'", "(2,)"), 8, HLOI_EUNSUPPORTED,
			"unsupported dtype '=f4' (expected an explicit byte order: '<f4')");
	expect_rejected(HDR("'|f4'", "(2,)"), 8, HLOI_EUNSUPPORTED,
			"unsupported dtype '|f4' (expected an explicit byte order: '<f4')");
	expect_rejected(HDR("'f4'", "(2,)"), 8, HLOI_EUNSUPPORTED,
			"unsupported dtype 'f4' (expected an explicit byte order: '<f4')");
	expect_rejected(HDR("'<f4'", "(2, x)"), 8, HLOI_EPARSE,
			"malformed .npy header: 'shape' must be a tuple of integers");
	expect_rejected(HDR("'<f4'", "(7)"), 28, HLOI_EPARSE,
			"malformed .npy header: 'shape' must be a tuple, e.g. (7,)");
	expect_rejected(HDR("'<f4'", "[2, 3]"), 24, HLOI_EPARSE,
			"malformed .npy header: 'shape' must be a tuple of integers");
	expect_rejected(HDR("'<f4'", "(-1,)"), 0, HLOI_EPARSE, "invalid .npy shape: negative dimension -1");
	expect_rejected(HDR("'<f4'", "(99999999999999999999,)"), 0, HLOI_EPARSE,
			"invalid .npy shape: dimension too large");
	expect_rejected(HDR("'<f4'", "(4294967296, 4294967296, 4294967296)"), 0, HLOI_EINVAL,
			"invalid .npy shape: the array is too large");
	expect_rejected(HDR("'<f4'", "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)"), 4, HLOI_EPARSE,
			"unsupported .npy shape: more than 16 dimensions");
	expect_rejected(HDR("'<f4'", "(2,"), 8, HLOI_EPARSE,
			"malformed .npy header: 'shape' must be a tuple of integers");
	expect_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", 8, HLOI_EPARSE,
			"malformed .npy header: unterminated 'shape' tuple");
	expect_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", 8, HLOI_EPARSE,
			"malformed .npy header: expected '}'");
	expect_rejected(HDR("'<f4'", "(07,)"), 28, HLOI_EPARSE,
			"malformed .npy header: 'shape' entry with a leading zero");
	expect_rejected("{'descr': '<f4', 'fortran_order': False, }", 4, HLOI_EPARSE,
			"malformed .npy header: missing key 'shape'");
	expect_rejected("{'fortran_order': False, 'shape': (1,), }", 4, HLOI_EPARSE,
			"malformed .npy header: missing key 'descr'");
	expect_rejected("{'descr': '<f4', 'shape': (1,), }", 4, HLOI_EPARSE,
			"malformed .npy header: missing key 'fortran_order'");
	expect_rejected("{'descr': '<f4', 'fortran_order': 1, 'shape': (1,), }", 4, HLOI_EPARSE,
			"malformed .npy header: 'fortran_order' must be True or False");
	expect_rejected("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (1,), }", 4, HLOI_EPARSE,
			"malformed .npy header: 'fortran_order' must be True or False");
	expect_rejected("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4,
			HLOI_EPARSE, "malformed .npy header: duplicate key 'descr'");
	expect_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4, HLOI_EPARSE,
			"malformed .npy header: unexpected key 'x'");
	expect_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } x", 4, HLOI_EPARSE,
			"malformed .npy header: unexpected text after the dictionary");
	expect_rejected("{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", 4, HLOI_EPARSE,
			"malformed .npy header: expected ',' or '}'");
	expect_rejected("['descr', '<f4']", 4, HLOI_EPARSE, "malformed .npy header: expected '{'");
	expect_rejected("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,)}", 4, HLOI_EPARSE,
			"malformed .npy header: unsupported character in a string");
	expect_rejected("{'descr': '<f4", 4, HLOI_EPARSE, "malformed .npy header: unterminated string");
	expect_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} \xc3\xa9", 4, HLOI_EPARSE,
			"malformed .npy header: non-ASCII byte at offset 66");
#undef HDR
}

/* --- writing ----------------------------------------------------------------- */

static void test_write_matches_numpy(void)
{
	static const struct {
		const unsigned char *bytes;
		size_t len;
	} files[] = {
		{ np_f32_2x3, sizeof np_f32_2x3 },   { np_s32_fortran, sizeof np_s32_fortran },
		{ np_bool, sizeof np_bool },         { np_f64_scalar, sizeof np_f64_scalar },
		{ np_u16, sizeof np_u16 },           { np_i64_empty, sizeof np_i64_empty },
		{ np_i8_3d, sizeof np_i8_3d },
	};
	fixture f = { 0 };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		CU_ASSERT_FATAL(parse(&f, files[i].bytes, files[i].len, NULL) == HLOI_OK);
		unsigned char *out = NULL;
		size_t len = 0;
		CU_ASSERT_FATAL(npy_serialize(&out, &len, f.ctx, f.lit) == HLOI_OK);
		expect_bytes(out, len, files[i].bytes, files[i].len);
		hloi_free(out);
	}
	/* a literal made here, not read from NumPy */
	shape s;
	int64_t d[2] = { 2, 3 };
	shape_make_array(&s, ET_F32, 2, d);
	hloi_literal *lit = NULL;
	CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
	for (int i = 0; i < 6; i++)
		((float *)lit->data)[i] = (float)(i + 1);
	unsigned char *out = NULL;
	size_t len = 0;
	CU_ASSERT_FATAL(npy_serialize(&out, &len, f.ctx, lit) == HLOI_OK);
	expect_bytes(out, len, np_f32_2x3, sizeof np_f32_2x3);
	CU_ASSERT_EQUAL(len % 64, 24 % 64); /* header is a multiple of 64 */
	hloi_free(out);
	literal_destroy(lit);
	fixture_done(&f);
}

/* Serialises then parses back; checks type, dims and every logical element. */
static void roundtrip(const hloi_literal *lit, int want_fortran)
{
	fixture f = { 0 };
	CU_ASSERT_FATAL(hloi_context_new(&f.ctx) == HLOI_OK);
	unsigned char *out = NULL;
	size_t len = 0;
	CU_ASSERT_FATAL(npy_serialize(&out, &len, f.ctx, lit) == HLOI_OK);
	CU_ASSERT_EQUAL((10 + out[8] + out[9] * 256) % 64, 0);
	CU_ASSERT_EQUAL(out[9 + out[8] + out[9] * 256], '\n');
	int has_true = header_has(out, "'fortran_order': True");
	CU_ASSERT_EQUAL(has_true, want_fortran);
	CU_ASSERT_FATAL(parse(&f, out, len, &lit->shape) == HLOI_OK);
	hloi_free(out);
	const shape *a = &lit->shape, *b = &f.lit->shape;
	CU_ASSERT_EQUAL(a->type, b->type);
	CU_ASSERT_FATAL(shape_same_dims(a, b));
	CU_ASSERT_EQUAL(b->layout.n_padded, 0);
	int64_t n;
	CU_ASSERT_FATAL(shape_element_count(a, &n) == 0);
	size_t w = (size_t)etype_byte_width(a->type);
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	int bad = 0;
	if (n > 0) {
		do {
			bad += memcmp(literal_element(lit, idx), literal_element(f.lit, idx), w) != 0;
		} while (index_next(a->rank, a->dims, idx));
	}
	CU_ASSERT_EQUAL(bad, 0);
	fixture_done(&f);
}

static void fill_pattern(hloi_literal *lit)
{
	unsigned char *p = lit->data;
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	size_t w = (size_t)etype_byte_width(lit->shape.type);
	unsigned k = 1;
	do {
		unsigned char *e = literal_element(lit, idx);
		for (size_t i = 0; i < w; i++)
			e[i] = lit->shape.type == ET_PRED ? (unsigned char)(k & 1)
							   : etype_from_low_bits(lit->shape.type, (unsigned char)(k * 37 + i));
		k++;
	} while (index_next(lit->shape.rank, lit->shape.dims, idx));
	(void)p;
}

static void test_roundtrip_all_types(void)
{
	static const etype types[] = { ET_PRED, ET_S8,  ET_S16, ET_S32, ET_S64, ET_U8,  ET_U16,
				       ET_U32,  ET_U64, ET_F16, ET_BF16, ET_F32, ET_F64,
				       ET_S1, ET_S2, ET_S4, ET_U1, ET_U2, ET_U4, ET_F8E5M2, ET_F8E4M3,
				       ET_F8E4M3FN, ET_F8E4M3B11FNUZ, ET_F8E3M4, ET_F8E5M2FNUZ, ET_F8E4M3FNUZ,
				       ET_F4E2M1FN, ET_F8E8M0FNU, ET_C64, ET_C128 };
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		int64_t d[3] = { 2, 3, 4 };
		for (int rank = 0; rank <= 3; rank++) {
			shape s;
			shape_make_array(&s, types[i], rank, d);
			hloi_literal *lit = NULL;
			CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
			fill_pattern(lit);
			roundtrip(lit, 0);
			literal_destroy(lit);
			if (rank < 2)
				continue;
			/* column-major, unpadded and padded: Fortran order */
			for (int i2 = 0; i2 < rank; i2++)
				s.layout.minor_to_major[i2] = i2;
			CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
			fill_pattern(lit);
			roundtrip(lit, 1);
			literal_destroy(lit);
			s.layout.n_padded = rank;
			for (int i2 = 0; i2 < rank; i2++)
				s.layout.padded_dimensions[i2] = d[i2] + 1;
			s.layout.padding_value = PAD_HIGHEST;
			CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
			fill_pattern(lit);
			roundtrip(lit, 1);
			literal_destroy(lit);
			/* another layout: C order */
			s.layout.minor_to_major[0] = 1;
			s.layout.minor_to_major[1] = 0;
			CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
			fill_pattern(lit);
			roundtrip(lit, 0);
			literal_destroy(lit);
		}
	}
}

/* The new types' dtypes (doc/semantics.md): complex as <c8/<c16; sub-byte integers
 * as values in |i1/|u1 (range-checked); small floats as raw bits in |u1;
 * ml_dtypes' own |V1 (storage: low bits) and <f1 (f8e5m2). */
static void test_new_type_dtypes(void)
{
	const char *fo = "'fortran_order': False";
	char h[512];
	fixture f = { 0 };
	size_t len;
	unsigned char *b;
	shape s4, u2, fn, f4, e5, c64, bf;
	int64_t three = 3;
	shape_make_array(&s4, ET_S4, 1, &three);
	shape_make_array(&u2, ET_U2, 1, &three);
	shape_make_array(&fn, ET_F8E4M3FN, 1, &three);
	shape_make_array(&f4, ET_F4E2M1FN, 1, &three);
	shape_make_array(&e5, ET_F8E5M2, 1, &three);
	shape_make_array(&c64, ET_C64, 1, &three);
	shape_make_array(&bf, ET_BF16, 1, &three);

	/* complex64: real, imaginary */
	float cdata[6] = { 1.5f, -2.0f, 0.0f, 1.0f, -0.0f, 3.25f };
	snprintf(h, sizeof h, "{'descr': '<c8', %s, 'shape': (3,), }", fo);
	b = make_npy(1, h, cdata, sizeof cdata, &len);
	CU_ASSERT_EQUAL(parse(&f, b, len, NULL), HLOI_OK);
	free(b);
	CU_ASSERT_EQUAL(f.lit->shape.type, ET_C64);
	CU_ASSERT(memcmp(f.lit->data, cdata, sizeof cdata) == 0);

	/* |i1 as s4 values; out of range is an error */
	signed char s4v[3] = { -8, 7, -1 };
	snprintf(h, sizeof h, "{'descr': '|i1', %s, 'shape': (3,), }", fo);
	b = make_npy(1, h, s4v, 3, &len);
	CU_ASSERT_EQUAL(parse(&f, b, len, &s4), HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->shape.type, ET_S4);
	CU_ASSERT(memcmp(f.lit->data, s4v, 3) == 0);
	CU_ASSERT_EQUAL(parse(&f, b, len, NULL), HLOI_OK); /* no parameter: s8 */
	CU_ASSERT_EQUAL(f.lit->shape.type, ET_S8);
	free(b);
	signed char bad[3] = { 0, 8, 1 };
	b = make_npy(1, h, bad, 3, &len);
	CU_ASSERT_EQUAL(parse(&f, b, len, &s4), HLOI_EINVAL);
	EXPECT_MSG(&f, "element 1: value 8 is out of range for s4 [-8, 7]");
	free(b);
	unsigned char u2v[3] = { 0, 3, 4 };
	snprintf(h, sizeof h, "{'descr': '|u1', %s, 'shape': (3,), }", fo);
	b = make_npy(1, h, u2v, 3, &len);
	CU_ASSERT_EQUAL(parse(&f, b, len, &u2), HLOI_EINVAL);
	EXPECT_MSG(&f, "element 2: value 4 is out of range for u2 [0, 3]");
	free(b);

	/* |u1 as raw f8 bits (all 256 valid), f4 bits below 16 */
	unsigned char fnv[3] = { 0x7f, 0x38, 0xff };
	b = make_npy(1, h, fnv, 3, &len);
	CU_ASSERT_EQUAL(parse(&f, b, len, &fn), HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->shape.type, ET_F8E4M3FN);
	CU_ASSERT(memcmp(f.lit->data, fnv, 3) == 0);
	CU_ASSERT_EQUAL(parse(&f, b, len, &f4), HLOI_EINVAL);
	EXPECT_MSG(&f, "element 0: 0x7f is not a f4e2m1fn encoding (4 bits)");
	free(b);

	/* |V1 (ml_dtypes): storage, the low bits kept */
	unsigned char v1[3] = { 0x0f, 0xf7, 0x08 };
	snprintf(h, sizeof h, "{'descr': '|V1', %s, 'shape': (3,), }", fo);
	b = make_npy(1, h, v1, 3, &len);
	CU_ASSERT_EQUAL(parse(&f, b, len, &s4), HLOI_OK);
	const signed char want_s4[3] = { -1, 7, -8 };
	CU_ASSERT(memcmp(f.lit->data, want_s4, 3) == 0);
	CU_ASSERT_EQUAL(parse(&f, b, len, &f4), HLOI_OK);
	const unsigned char want_f4[3] = { 0x0f, 0x07, 0x08 };
	CU_ASSERT(memcmp(f.lit->data, want_f4, 3) == 0);
	CU_ASSERT_EQUAL(parse(&f, b, len, &c64), HLOI_EUNSUPPORTED);
	EXPECT_MSG(&f, "unsupported dtype '|V1' (raw void data)");
	free(b);

	/* <f1: ml_dtypes' float8_e5m2, only for an f8e5m2 parameter */
	snprintf(h, sizeof h, "{'descr': '<f1', %s, 'shape': (3,), }", fo);
	b = make_npy(1, h, fnv, 3, &len);
	CU_ASSERT_EQUAL(parse(&f, b, len, &e5), HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->shape.type, ET_F8E5M2);
	CU_ASSERT_EQUAL(parse(&f, b, len, &fn), HLOI_EUNSUPPORTED);
	EXPECT_MSG(&f, "unsupported dtype '<f1'");
	free(b);

	/* <V2: ml_dtypes' bfloat16 */
	uint16_t bfv[3] = { 0x3f80, 0xc000, 0x7fc0 };
	snprintf(h, sizeof h, "{'descr': '<V2', %s, 'shape': (3,), }", fo);
	b = make_npy(1, h, bfv, sizeof bfv, &len);
	CU_ASSERT_EQUAL(parse(&f, b, len, &bf), HLOI_OK);
	CU_ASSERT_EQUAL(f.lit->shape.type, ET_BF16);
	free(b);
	fixture_done(&f);

	/* written: the descr of the table */
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	static const struct {
		etype t;
		const char *descr;
	} w[] = { { ET_S4, "'descr': '|i1'" },   { ET_U1, "'descr': '|u1'" },
		  { ET_F8E5M2, "'descr': '|u1'" }, { ET_F4E2M1FN, "'descr': '|u1'" },
		  { ET_C64, "'descr': '<c8'" },   { ET_C128, "'descr': '<c16'" } };
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		shape s;
		shape_make_array(&s, w[i].t, 1, &three);
		hloi_literal *lit = NULL;
		unsigned char *out = NULL;
		CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
		CU_ASSERT_EQUAL(npy_serialize(&out, &len, ctx, lit), HLOI_OK);
		CU_ASSERT(out && header_has(out, w[i].descr));
		hloi_free(out);
		literal_destroy(lit);
	}
	hloi_context_free(ctx);
}

static void test_write_layouts(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	/* f32[2,3]{0,1:pad(3,5)}: Fortran order, padding dropped */
	shape s;
	int64_t d[2] = { 2, 3 };
	shape_make_array(&s, ET_F32, 2, d);
	s.layout.minor_to_major[0] = 0;
	s.layout.minor_to_major[1] = 1;
	s.layout.n_padded = 2;
	s.layout.padded_dimensions[0] = 3;
	s.layout.padded_dimensions[1] = 5;
	hloi_literal *lit = NULL;
	CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
	float *p = lit->data;
	int64_t idx[2];
	for (idx[0] = 0; idx[0] < 2; idx[0]++)
		for (idx[1] = 0; idx[1] < 3; idx[1]++)
			*(float *)literal_element(lit, idx) = (float)(idx[0] * 3 + idx[1] + 1);
	p[2] = 99; /* padding must not be written */
	unsigned char *out = NULL;
	size_t len = 0;
	CU_ASSERT_FATAL(npy_serialize(&out, &len, ctx, lit) == HLOI_OK);
	CU_ASSERT_EQUAL(len, 128 + 24);
	const char *hdr = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }";
	CU_ASSERT_EQUAL(memcmp(out + 10, hdr, strlen(hdr)), 0);
	const float want[6] = { 1, 4, 2, 5, 3, 6 };
	CU_ASSERT_EQUAL(memcmp(out + 128, want, 24), 0);
	hloi_free(out);
	literal_destroy(lit);

	/* bf16 is written as <u2, pred as |b1 with bytes 0/1 */
	shape_make_array(&s, ET_BF16, 1, d);
	CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
	CU_ASSERT_FATAL(npy_serialize(&out, &len, ctx, lit) == HLOI_OK);
	CU_ASSERT(header_has(out, "'descr': '<u2'"));
	hloi_free(out);
	literal_destroy(lit);
	shape_make_array(&s, ET_PRED, 1, d);
	CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
	((uint8_t *)lit->data)[1] = 7;
	CU_ASSERT_FATAL(npy_serialize(&out, &len, ctx, lit) == HLOI_OK);
	CU_ASSERT_EQUAL(memcmp(out + len - 2, "\0\1", 2), 0);
	hloi_free(out);
	literal_destroy(lit);

	/* tuples and unevaluated types are refused */
	shape el[1];
	shape_make_array(&el[0], ET_F32, 0, d);
	memset(&s, 0, sizeof s);
	s.type = ET_TUPLE;
	s.ntuple = 1;
	s.tuple = el;
	CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
	CU_ASSERT_EQUAL(npy_serialize(&out, &len, ctx, lit), HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot write a tuple as .npy");
	CU_ASSERT_PTR_NULL(out);
	literal_destroy(lit);
	shape_make_array(&s, ET_TOKEN, 0, d);
	CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
	CU_ASSERT_EQUAL(npy_serialize(&out, &len, ctx, lit), HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx),
			       "cannot write a token as .npy (a token holds no values; write literal text instead)");
	literal_destroy(lit);
	hloi_context_free(ctx);
}

/* --- files ------------------------------------------------------------------ */

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/hloi_test_npy_XXXXXX");
	CU_ASSERT_FATAL(mkdtemp(tmpdir) != NULL);
}

static int count_entries(const char *dir)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", dir);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static void remove_tmpdir(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_file_read_errors(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	char *buf = NULL;
	size_t len = 0;
	make_tmpdir();
	char path[128];
	snprintf(path, sizeof path, "%s/missing.npy", tmpdir);
	CU_ASSERT_EQUAL(file_read_all(&buf, &len, ctx, path), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(buf);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot open: No such file or directory");
	CU_ASSERT_STRING_EQUAL(ctx->diags[ctx->ndiags - 1].where, path);
	CU_ASSERT_EQUAL(file_read_all(&buf, &len, ctx, tmpdir), HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot read: Is a directory");
	/* an empty file reads as "" */
	snprintf(path, sizeof path, "%s/empty", tmpdir);
	FILE *fp = fopen(path, "w");
	CU_ASSERT_FATAL(fp != NULL);
	fclose(fp);
	CU_ASSERT_EQUAL(file_read_all(&buf, &len, ctx, path), HLOI_OK);
	CU_ASSERT(buf && len == 0 && buf[0] == '\0');
	hloi_free(buf);
	buf = NULL;
	if (geteuid() != 0) {
		CU_ASSERT_EQUAL(chmod(path, 0), 0);
		CU_ASSERT_EQUAL(file_read_all(&buf, &len, ctx, path), HLOI_EINVAL);
		CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot open: Permission denied");
	}
	/* npy_read names the file */
	hloi_literal *lit = NULL;
	snprintf(path, sizeof path, "%s/missing.npy", tmpdir);
	CU_ASSERT_EQUAL(npy_read(&lit, ctx, path, NULL), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(lit);
	remove_tmpdir();
	hloi_context_free(ctx);
}

static void test_file_write(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	make_tmpdir();
	char path[128];
	snprintf(path, sizeof path, "%s/out.npy", tmpdir);
	/* npy round trip through a file */
	hloi_literal *lit = NULL, *back = NULL;
	CU_ASSERT_FATAL(npy_parse(&lit, ctx, "mem", np_i8_3d, sizeof np_i8_3d, NULL) == HLOI_OK);
	CU_ASSERT_EQUAL(npy_write(lit, ctx, path), HLOI_OK);
	CU_ASSERT_EQUAL(count_entries(tmpdir), 1); /* no temporary file left */
	CU_ASSERT_FATAL(npy_read(&back, ctx, path, NULL) == HLOI_OK);
	CU_ASSERT_EQUAL(memcmp(back->data, lit->data, 8), 0);
	literal_destroy(back);
	/* overwrite with other content */
	CU_ASSERT_EQUAL(file_write_all(ctx, path, "abc", 3), HLOI_OK);
	char *buf = NULL;
	size_t len = 0;
	CU_ASSERT_FATAL(file_read_all(&buf, &len, ctx, path) == HLOI_OK);
	CU_ASSERT(len == 3 && !strcmp(buf, "abc"));
	hloi_free(buf);
	CU_ASSERT_EQUAL(count_entries(tmpdir), 1);
	/* a missing directory */
	snprintf(path, sizeof path, "%s/nodir/out.npy", tmpdir);
	CU_ASSERT_EQUAL(npy_write(lit, ctx, path), HLOI_EIO);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot create: No such file or directory");
	CU_ASSERT_STRING_EQUAL(ctx->diags[ctx->ndiags - 1].where, path);
	/* writing onto a directory */
	CU_ASSERT_EQUAL(file_write_all(ctx, tmpdir, "x", 1), HLOI_EIO);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot write: Is a directory");
	/* a full disk: /dev/full is written directly and the error reported */
	CU_ASSERT_EQUAL(npy_write(lit, ctx, "/dev/full"), HLOI_EIO);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot write: No space left on device");
	CU_ASSERT_EQUAL(file_write_all(ctx, "/dev/null", "x", 1), HLOI_OK);
	if (geteuid() != 0) {
		/* a read-only directory: nothing is created */
		CU_ASSERT_EQUAL(chmod(tmpdir, 0500), 0);
		snprintf(path, sizeof path, "%s/ro.npy", tmpdir);
		CU_ASSERT_EQUAL(npy_write(lit, ctx, path), HLOI_EIO);
		CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot create: Permission denied");
		CU_ASSERT_EQUAL(chmod(tmpdir, 0700), 0);
		CU_ASSERT_EQUAL(count_entries(tmpdir), 1);
	}
	literal_destroy(lit);
	remove_tmpdir();
	hloi_context_free(ctx);
}

/* Every allocation failing in turn: ENOMEM and no leaks (ASan checks). */
static void test_npy_out_of_memory(void)
{
	int done = 0;
	for (long n = 0; n < 100 && !done; n++) {
		hloi_context *ctx = NULL;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		hloi_literal *lit = NULL;
		unsigned char *out = NULL;
		size_t len = 0;
		alloc_fail_after(n);
		hloi_status st = npy_parse(&lit, ctx, "x.npy", np_s32_fortran, sizeof np_s32_fortran, NULL);
		if (st == HLOI_OK)
			st = npy_serialize(&out, &len, ctx, lit);
		alloc_fail_after(-1);
		CU_ASSERT(st == HLOI_OK || st == HLOI_ENOMEM);
		if (st == HLOI_OK) {
			done = 1;
			expect_bytes(out, len, np_s32_fortran, sizeof np_s32_fortran);
		}
		hloi_free(out);
		literal_destroy(lit);
		hloi_context_free(ctx);
	}
	CU_ASSERT(done);
}

/* --- streaming ------------------------------------------------------------- */

static void put_file(const char *path, const void *data, size_t len)
{
	FILE *fp = fopen(path, "wb");
	CU_ASSERT_FATAL(fp != NULL);
	if (len)
		CU_ASSERT(fwrite(data, 1, len, fp) == len);
	CU_ASSERT(fclose(fp) == 0);
}

/* Equal bytes; on a difference, reports the sizes and first differing offset. */
static void expect_same(const unsigned char *got, size_t glen, const unsigned char *want, size_t wlen,
			const char *what)
{
	size_t i = 0;
	while (i < glen && i < wlen && got[i] == want[i])
		i++;
	CU_ASSERT(glen == wlen && i == wlen);
	if (glen != wlen || i != wlen)
		fprintf(stderr, "\n  %s: %zu bytes, want %zu; first difference at %zu\n", what, glen, wlen, i);
}

/* npy_read streams a file (and a pipe, when the bytes fit in one) to the
 * same outcome as npy_parse on its bytes: status, message, values. */
static void read_like_parse(const char *path, const unsigned char *data, size_t len)
{
	hloi_context *a = NULL, *b = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&a) == HLOI_OK);
	CU_ASSERT_FATAL(hloi_context_new(&b) == HLOI_OK);
	hloi_literal *want = NULL;
	hloi_status sa = npy_parse(&want, a, path, data, len, NULL);
	put_file(path, data, len);
	for (int use_pipe = 0; use_pipe < 2; use_pipe++) {
		char name[64];
		const char *p = path;
		int fds[2] = { -1, -1 };
		if (use_pipe) {
			if (len > 4096)
				break;
			CU_ASSERT_FATAL(pipe(fds) == 0);
			CU_ASSERT_FATAL(write(fds[1], data, len) == (ssize_t)len);
			close(fds[1]);
			snprintf(name, sizeof name, "/dev/fd/%d", fds[0]);
			p = name;
		}
		hloi_context_clear(b);
		hloi_literal *got = NULL;
		hloi_status sb = npy_read(&got, b, p, NULL);
		CU_ASSERT_EQUAL(sb, sa);
		if (sa != HLOI_OK) {
			const char *ma = hloi_context_last_error(a), *mb = hloi_context_last_error(b);
			CU_ASSERT(ma && mb && !strcmp(ma, mb));
			if (!ma || !mb || strcmp(ma, mb))
				fprintf(stderr, "\n  %zu bytes%s:\n  parse: %s\n  read:  %s\n", len,
					use_pipe ? " (pipe)" : "", ma ? ma : "-", mb ? mb : "-");
			CU_ASSERT_PTR_NULL(got);
		} else if (got) {
			strbuf x = STRBUF_INIT, y = STRBUF_INIT;
			shape_print(&x, &got->shape, 1);
			shape_print(&y, &want->shape, 1);
			CU_ASSERT_STRING_EQUAL(sb_str(&x), sb_str(&y));
			sb_free(&x);
			sb_free(&y);
			CU_ASSERT_EQUAL(got->nbytes, want->nbytes);
			if (got->nbytes == want->nbytes && want->nbytes)
				CU_ASSERT(memcmp(got->data, want->data, want->nbytes) == 0);
		}
		literal_destroy(got);
		if (fds[0] >= 0)
			close(fds[0]);
	}
	literal_destroy(want);
	hloi_context_free(a);
	hloi_context_free(b);
}

static void test_read_streamed(void)
{
	static const struct {
		const unsigned char *bytes;
		size_t len;
	} files[] = {
		{ np_f32_2x3, sizeof np_f32_2x3 }, { np_s32_fortran, sizeof np_s32_fortran },
		{ np_f32_v3, sizeof np_f32_v3 },   { np_bool, sizeof np_bool },
		{ np_i64_empty, sizeof np_i64_empty },
	};
	make_tmpdir();
	char path[128];
	snprintf(path, sizeof path, "%s/in.npy", tmpdir);
	unsigned char buf[512];
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		size_t n = files[i].len;
		CU_ASSERT_FATAL(n + 100 <= sizeof buf);
		memcpy(buf, files[i].bytes, n);
		/* every truncation, the file itself, and trailing bytes */
		for (size_t k = 0; k <= n; k++)
			read_like_parse(path, buf, k);
		memset(buf + n, 'x', 100);
		read_like_parse(path, buf, n + 1);
		read_like_parse(path, buf, n + 100);
	}
	/* pred bytes other than 0/1 read as 1; a v2 header */
	size_t len = 0;
	const unsigned char pred[5] = { 0, 1, 2, 255, 0 };
	unsigned char *f = make_npy(2, "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }", pred, 5, &len);
	read_like_parse(path, f, len);
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	hloi_literal *lit = NULL;
	CU_ASSERT_FATAL(npy_read(&lit, ctx, path, NULL) == HLOI_OK);
	CU_ASSERT_EQUAL(memcmp(lit->data, "\0\1\1\1\0", 5), 0);
	literal_destroy(lit);
	free(f);
	/* "-" is standard input */
	int saved = dup(STDIN_FILENO), fds[2];
	CU_ASSERT_FATAL(saved >= 0 && pipe(fds) == 0);
	CU_ASSERT_FATAL(write(fds[1], np_f32_2x3, sizeof np_f32_2x3) == (ssize_t)sizeof np_f32_2x3);
	close(fds[1]);
	CU_ASSERT_FATAL(dup2(fds[0], STDIN_FILENO) == STDIN_FILENO);
	close(fds[0]);
	CU_ASSERT_EQUAL(npy_read(&lit, ctx, "-", NULL), HLOI_OK);
	CU_ASSERT(lit && lit->nbytes == 24 && ((float *)lit->data)[5] == 6.0f);
	literal_destroy(lit);
	lit = NULL;
	CU_ASSERT_EQUAL(npy_read(&lit, ctx, "-", NULL), HLOI_EPARSE); /* now empty */
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "not a .npy file (bad magic)");
	CU_ASSERT_STRING_EQUAL(ctx->diags[ctx->ndiags - 1].where, "-");
	CU_ASSERT_FATAL(dup2(saved, STDIN_FILENO) == STDIN_FILENO);
	close(saved);
	/* more data than a stream may hold (1.2 GB): the same message */
	f = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (300000000,), }", "abc", 3, &len);
	read_like_parse(path, f, len);
	CU_ASSERT_EQUAL(npy_read(&lit, ctx, path, NULL), HLOI_EPARSE);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx),
			       "truncated .npy data: shape (300000000,) of '<f4' needs 1200000000 bytes, the file has 3");
	free(f);
	hloi_context_free(ctx);
	remove_tmpdir();
}

/* A literal of `type`, dims `d`, layout `m2m` (NULL: default) and padded
 * dims `pad` (NULL: none), with every buffer byte set to a pattern (pred
 * bytes other than 0 and 1 included). */
static hloi_literal *pattern_literal(etype type, int rank, const int64_t *d, const int *m2m, const int64_t *pad)
{
	shape s;
	shape_make_array(&s, type, rank, d);
	if (m2m)
		for (int i = 0; i < rank; i++)
			s.layout.minor_to_major[i] = m2m[i];
	if (pad) {
		s.layout.n_padded = rank;
		for (int i = 0; i < rank; i++)
			s.layout.padded_dimensions[i] = pad[i];
	}
	hloi_literal *lit = NULL;
	CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
	unsigned char *p = lit->data;
	for (size_t i = 0; i < lit->nbytes; i++)
		p[i] = (unsigned char)(i * 131 + i / 7 + 5);
	return lit;
}

static void test_write_streamed(void)
{
	static const int64_t d345[3] = { 3, 4, 5 }, d35[2] = { 3, 5 }, p35[2] = { 4, 7 }, d73[2] = { 7, 3 },
			     d52[2] = { 5, 2 }, big3[3] = { 300, 200, 10 }, big2[2] = { 2000, 1000 },
			     d03[2] = { 0, 3 }, d6[1] = { 6 }, p6[1] = { 9 };
	static const int cm3[3] = { 0, 1, 2 }, odd3[3] = { 1, 2, 0 }, cm2[2] = { 0, 1 }, rm2[2] = { 1, 0 };
	static const struct {
		etype type;
		int rank;
		const int64_t *d;
		const int *m2m;
		const int64_t *pad;
	} cases[] = {
		{ ET_F32, 3, d345, NULL, NULL },  /* C order */
		{ ET_S32, 3, d345, cm3, NULL },   /* Fortran */
		{ ET_F64, 3, d345, odd3, NULL },  /* another layout */
		{ ET_F32, 2, d35, rm2, p35 },     /* padded */
		{ ET_F16, 1, d6, NULL, p6 },      /* padded vector */
		{ ET_PRED, 2, d73, NULL, NULL },  /* pred: bytes become 0/1 */
		{ ET_PRED, 2, d73, cm2, NULL },
		{ ET_BF16, 2, d52, NULL, NULL },
		{ ET_BF16, 2, d52, cm2, NULL },
		{ ET_S8, 0, d6, NULL, NULL },
		{ ET_F32, 2, d03, NULL, NULL },
		{ ET_F32, 3, big3, odd3, NULL },  /* 2.4 MB through the staging buffer */
		{ ET_PRED, 2, big2, NULL, NULL }, /* 2 MB of pred, in chunks */
		{ ET_U16, 2, big2, cm2, NULL },   /* 4 MB straight from the buffer */
	};
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	make_tmpdir();
	char path[128];
	snprintf(path, sizeof path, "%s/out.npy", tmpdir);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		hloi_literal *lit = pattern_literal(cases[i].type, cases[i].rank, cases[i].d, cases[i].m2m,
						    cases[i].pad);
		unsigned char *want = NULL;
		size_t wlen = 0;
		CU_ASSERT_FATAL(npy_serialize(&want, &wlen, ctx, lit) == HLOI_OK);
		CU_ASSERT_EQUAL(npy_write(lit, ctx, path), HLOI_OK);
		char *got = NULL;
		size_t glen = 0;
		CU_ASSERT_FATAL(file_read_all(&got, &glen, ctx, path) == HLOI_OK);
		char what[32];
		snprintf(what, sizeof what, "case %zu", i);
		expect_same((const unsigned char *)got, glen, want, wlen, what);
		CU_ASSERT_EQUAL(count_entries(tmpdir), 1);
		/* and it reads back to the same logical values */
		hloi_literal *back = NULL;
		CU_ASSERT_FATAL(npy_read(&back, ctx, path, &lit->shape) == HLOI_OK);
		int64_t n = 0, idx[HLOI_MAX_RANK] = { 0 };
		size_t w = (size_t)etype_byte_width(lit->shape.type);
		int bad = 0;
		CU_ASSERT_FATAL(shape_element_count(&lit->shape, &n) == 0);
		if (n > 0) {
			do {
				const unsigned char *x = literal_element(lit, idx), *y = literal_element(back, idx);
				if (lit->shape.type == ET_PRED)
					bad += (*x != 0) != *y;
				else
					bad += memcmp(x, y, w) != 0;
			} while (index_next(lit->shape.rank, lit->shape.dims, idx));
		}
		CU_ASSERT_EQUAL(bad, 0);
		literal_destroy(back);
		hloi_free(got);
		hloi_free(want);
		/* a full disk, whichever way the data goes out */
		if (n > 0 && access("/dev/full", W_OK) == 0) {
			CU_ASSERT_EQUAL(npy_write(lit, ctx, "/dev/full"), HLOI_EIO);
			CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot write: No space left on device");
		}
		literal_destroy(lit);
	}
	/* a failed write leaves nothing behind */
	snprintf(path, sizeof path, "%s/nodir/out.npy", tmpdir);
	hloi_literal *lit = pattern_literal(ET_F32, 3, big3, NULL, NULL);
	CU_ASSERT_EQUAL(npy_write(lit, ctx, path), HLOI_EIO);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot create: No such file or directory");
	literal_destroy(lit);
	remove_tmpdir();
	hloi_context_free(ctx);
}

/* Allocation failures while streaming: ENOMEM or OK, no leak, no file. */
static void test_write_streamed_out_of_memory(void)
{
	static const int64_t d[3] = { 30, 20, 10 };
	static const int odd[3] = { 1, 2, 0 };
	make_tmpdir();
	char path[128];
	snprintf(path, sizeof path, "%s/out.npy", tmpdir);
	hloi_literal *lit = pattern_literal(ET_F32, 3, d, odd, NULL);
	int done = 0;
	for (long n = 0; n < 50 && !done; n++) {
		hloi_context *ctx = NULL;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		alloc_fail_after(n);
		hloi_status st = npy_write(lit, ctx, path);
		alloc_fail_after(-1);
		CU_ASSERT(st == HLOI_OK || st == HLOI_ENOMEM);
		CU_ASSERT_EQUAL(count_entries(tmpdir), st == HLOI_OK ? 1 : 0);
		done = st == HLOI_OK;
		hloi_context_free(ctx);
	}
	CU_ASSERT(done);
	literal_destroy(lit);
	remove_tmpdir();
}

/* --- text output ------------------------------------------------------------ */

/* The whole content of an open file. */
static char *slurp(FILE *fp, size_t *len)
{
	CU_ASSERT_FATAL(fflush(fp) == 0);
	long n = ftell(fp);
	CU_ASSERT_FATAL(n >= 0);
	char *buf = malloc((size_t)n + 1);
	rewind(fp);
	CU_ASSERT_FATAL(fread(buf, 1, (size_t)n, fp) == (size_t)n);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

static void test_strbuf_sink(void)
{
	strbuf all = STRBUF_INIT, b = STRBUF_INIT;
	FILE *fp = tmpfile();
	CU_ASSERT_FATAL(fp != NULL);
	b.sink = fp;
	size_t most = 0;
	for (int i = 0; i < 60000; i++) {
		sb_printf(&all, "%d, ", i);
		sb_printf(&b, "%d, ", i);
		most = b.len > most ? b.len : most;
	}
	CU_ASSERT(most < SB_SINK_CHUNK + 16); /* written out as it grows */
	CU_ASSERT(b.cap <= 2 * SB_SINK_CHUNK);
	CU_ASSERT_EQUAL(sb_flush(&b), 0);
	CU_ASSERT_EQUAL(b.len, 0);
	size_t n = 0;
	char *text = slurp(fp, &n);
	CU_ASSERT(n == all.len && !memcmp(text, all.s, n));
	free(text);
	fclose(fp);
	sb_free(&b);
	sb_free(&all);
	/* a failed write is recorded, and later text dropped */
	fp = fopen("/dev/full", "w");
	if (fp) {
		b.sink = fp;
		for (int i = 0; i < 30000; i++)
			sb_puts(&b, "0123456789");
		CU_ASSERT_EQUAL(b.werr, ENOSPC);
		CU_ASSERT_EQUAL(b.len, 0);
		CU_ASSERT_EQUAL(sb_flush(&b), -1);
		fclose(fp);
		sb_free(&b);
	}
}

static void test_print_streamed(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	make_tmpdir();
	char path[128];
	snprintf(path, sizeof path, "%s/out.txt", tmpdir);
	/* about 2 MB of text: print and save give the same bytes as literal_print */
	static const int64_t d[2] = { 300, 400 };
	hloi_literal *lit = pattern_literal(ET_S32, 2, d, NULL, NULL);
	strbuf want = STRBUF_INIT;
	literal_print(&want, lit, 1, 0);
	sb_putc(&want, '\n');
	CU_ASSERT_FATAL(!want.oom && want.len > 1000000);
	FILE *fp = tmpfile();
	CU_ASSERT_FATAL(fp != NULL);
	CU_ASSERT_EQUAL(hloi_literal_print(lit, fp), HLOI_OK);
	size_t n = 0;
	char *text = slurp(fp, &n);
	CU_ASSERT(n == want.len && !memcmp(text, want.s, n));
	free(text);
	fclose(fp);
	CU_ASSERT_EQUAL(hloi_literal_save(lit, ctx, path), HLOI_OK);
	char *got = NULL;
	CU_ASSERT_FATAL(file_read_all(&got, &n, ctx, path) == HLOI_OK);
	CU_ASSERT(n == want.len && !memcmp(got, want.s, n));
	hloi_free(got);
	CU_ASSERT_EQUAL(count_entries(tmpdir), 1);
	/* write errors */
	fp = fopen(path, "r"); /* not open for writing */
	CU_ASSERT_FATAL(fp != NULL);
	CU_ASSERT_EQUAL(hloi_literal_print(lit, fp), HLOI_EIO);
	fclose(fp);
	if (access("/dev/full", W_OK) == 0) {
		CU_ASSERT_EQUAL(hloi_literal_save(lit, ctx, "/dev/full"), HLOI_EIO);
		CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot write: No space left on device");
	}
	snprintf(path, sizeof path, "%s/nodir/out.txt", tmpdir);
	CU_ASSERT_EQUAL(hloi_literal_save(lit, ctx, path), HLOI_EIO);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot create: No such file or directory");
	sb_free(&want);
	literal_destroy(lit);
	remove_tmpdir();
	hloi_context_free(ctx);
}

/* Zero-element arrays print each of their sub-arrays up to
 * HLOI_PRINT_MAX_EMPTY_SUBARRAYS of them; beyond, printing is refused. */
static void test_print_zero_size_limit(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	make_tmpdir();
	char path[128];
	snprintf(path, sizeof path, "%s/out.txt", tmpdir);
	static const struct {
		int rank;
		int64_t d[4];
		uint64_t want;
	} cases[] = {
		{ 1, { 0 }, 0 },
		{ 3, { 2, 0, 3 }, 2 },
		{ 2, { 3, 4 }, 0 },
		{ 0, { 0 }, 0 },
		{ 4, { 3, 5, 0, 1000000000 }, 3 + 15 },
		{ 4, { 4096, 4096, 1, 0 }, 4096 + 2 * 16777216 },
		{ 2, { 16777216, 0 }, 16777216 },
		{ 2, { 16777217, 0 }, 16777217 },
		{ 2, { 100000000, 0 }, 100000000 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		shape s;
		shape_make_array(&s, ET_F32, cases[i].rank, cases[i].d);
		hloi_literal *lit = NULL;
		if (literal_create(&lit, &s) != HLOI_OK) {
			CU_FAIL("literal_create");
			continue;
		}
		CU_ASSERT_EQUAL(hloi_literal_empty_subarrays(lit), cases[i].want);
		literal_destroy(lit);
	}
	/* saturation (a shape no literal can be created for) */
	hloi_literal big;
	memset(&big, 0, sizeof big);
	static const int64_t huge[4] = { INT64_MAX, INT64_MAX, INT64_MAX, 0 };
	shape_make_array(&big.shape, ET_F32, 4, huge);
	CU_ASSERT_EQUAL(literal_print_empty_count(&big), UINT64_MAX);
	/* f32[2,0,3] prints as XLA prints it */
	static const int64_t d203[3] = { 2, 0, 3 };
	hloi_literal *lit = pattern_literal(ET_F32, 3, d203, NULL, NULL);
	FILE *fp = tmpfile();
	CU_ASSERT_FATAL(fp != NULL);
	CU_ASSERT_EQUAL(hloi_literal_print(lit, fp), HLOI_OK);
	size_t n = 0;
	char *text = slurp(fp, &n);
	CU_ASSERT_STRING_EQUAL(text, "f32[2,0,3] {\n{\n\n},\n{\n\n}\n}\n");
	free(text);
	fclose(fp);
	literal_destroy(lit);
	/* at the limit it prints; one more is refused before anything is written */
	static const int64_t at[2] = { 16777216, 0 }, over[2] = { 16777217, 0 };
	lit = pattern_literal(ET_F32, 2, at, NULL, NULL);
	fp = fopen("/dev/null", "w");
	CU_ASSERT_FATAL(fp != NULL);
	CU_ASSERT_EQUAL(hloi_literal_print(lit, fp), HLOI_OK);
	fclose(fp);
	literal_destroy(lit);
	lit = pattern_literal(ET_F32, 2, over, NULL, NULL);
	fp = tmpfile();
	CU_ASSERT_FATAL(fp != NULL);
	CU_ASSERT_EQUAL(hloi_literal_print(lit, fp), HLOI_ENOMEM);
	CU_ASSERT_EQUAL(ftell(fp), 0);
	fclose(fp);
	CU_ASSERT_EQUAL(hloi_literal_save(lit, ctx, path), HLOI_ENOMEM);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx),
			       "cannot write f32[16777217,0] as text: 16777217 empty sub-arrays (the limit is "
			       "16777216); write it as .npy");
	CU_ASSERT_STRING_EQUAL(ctx->diags[ctx->ndiags - 1].where, path);
	CU_ASSERT_EQUAL(count_entries(tmpdir), 0);
	/* .npy writes it */
	snprintf(path, sizeof path, "%s/out.npy", tmpdir);
	CU_ASSERT_EQUAL(hloi_literal_save(lit, ctx, path), HLOI_OK);
	literal_destroy(lit);
	/* a tuple counts all its elements */
	shape el[2];
	static const int64_t half[2] = { 10000000, 0 };
	shape_make_array(&el[0], ET_F32, 2, half);
	shape_make_array(&el[1], ET_S8, 2, half);
	shape t;
	memset(&t, 0, sizeof t);
	t.type = ET_TUPLE;
	t.ntuple = 2;
	t.tuple = el;
	CU_ASSERT_FATAL(literal_create(&lit, &t) == HLOI_OK);
	CU_ASSERT_EQUAL(hloi_literal_empty_subarrays(lit), 20000000);
	fp = tmpfile();
	CU_ASSERT_FATAL(fp != NULL);
	CU_ASSERT_EQUAL(hloi_literal_print(lit, fp), HLOI_ENOMEM);
	fclose(fp);
	literal_destroy(lit);
	remove_tmpdir();
	hloi_context_free(ctx);
}

static const unit_test npy_tests[] = {
	{ "read_numpy", test_read_numpy },
	{ "header_variants", test_header_variants },
	{ "rejections", test_rejections },
	{ "write_matches_numpy", test_write_matches_numpy },
	{ "roundtrip_all_types", test_roundtrip_all_types },
	{ "new_type_dtypes", test_new_type_dtypes },
	{ "write_layouts", test_write_layouts },
	{ "out_of_memory", test_npy_out_of_memory },
	{ "read_streamed", test_read_streamed },
	{ "write_streamed", test_write_streamed },
	{ "write_streamed_out_of_memory", test_write_streamed_out_of_memory },
	{ NULL, NULL },
};

static const unit_test file_tests[] = {
	{ "read_errors", test_file_read_errors },
	{ "write", test_file_write },
	{ NULL, NULL },
};

static const unit_test text_tests[] = {
	{ "strbuf_sink", test_strbuf_sink },
	{ "print_streamed", test_print_streamed },
	{ "print_zero_size_limit", test_print_zero_size_limit },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "npy", npy_tests },
	{ "file", file_tests },
	{ "text", text_tests },
	{ NULL, NULL },
};
