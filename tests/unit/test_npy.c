/* Unit tests for .npy reading and writing (bytes produced by NumPy 1.24 are
 * embedded below; python is not needed at test time) and for whole-file
 * reading and writing. */
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
	expect_rejected(HDR("'<c8'", "(2,)"), 16, HLOI_EUNSUPPORTED, "unsupported dtype '<c8' (complex)");
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
			e[i] = lit->shape.type == ET_PRED ? (unsigned char)(k & 1) : (unsigned char)(k * 37 + i);
		k++;
	} while (index_next(lit->shape.rank, lit->shape.dims, idx));
	(void)p;
}

static void test_roundtrip_all_types(void)
{
	static const etype types[] = { ET_PRED, ET_S8,  ET_S16, ET_S32, ET_S64, ET_U8,  ET_U16,
				       ET_U32,  ET_U64, ET_F16, ET_BF16, ET_F32, ET_F64 };
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
	shape_make_array(&s, ET_C64, 1, d);
	CU_ASSERT_FATAL(literal_create(&lit, &s) == HLOI_OK);
	CU_ASSERT_EQUAL(npy_serialize(&out, &len, ctx, lit), HLOI_EUNSUPPORTED);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "cannot write element type c64 as .npy");
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

static const unit_test npy_tests[] = {
	{ "read_numpy", test_read_numpy },
	{ "header_variants", test_header_variants },
	{ "rejections", test_rejections },
	{ "write_matches_numpy", test_write_matches_numpy },
	{ "roundtrip_all_types", test_roundtrip_all_types },
	{ "write_layouts", test_write_layouts },
	{ "out_of_memory", test_npy_out_of_memory },
	{ NULL, NULL },
};

static const unit_test file_tests[] = {
	{ "read_errors", test_file_read_errors },
	{ "write", test_file_write },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "npy", npy_tests },
	{ "file", file_tests },
	{ NULL, NULL },
};
