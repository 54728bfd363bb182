/* NumPy .npy reading and writing (format versions 1.0, 2.0 and 3.0): a strict
 * parser for the header dictionary, a whitelist of little-endian dtypes, and
 * exact size checks. Fortran-order data is read as a column-major layout. */
#include "io/npy.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/index.h"
#include "io/file.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/diag.h"
#include "util/strbuf.h"

#define NPY_MAX_HEADER 100000u
#define NPY_GROWTH_DIGITS 21 /* NumPy's GROWTH_AXIS_MAX_DIGITS */

static const unsigned char npy_magic[6] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };

/* --- header dictionary --------------------------------------------------- */

typedef struct hdr_parser {
	const char *p, *end;
	hloi_context *ctx;
	const char *name;
} hdr_parser;

typedef struct npy_header {
	int have_descr, have_fortran, have_shape;
	int descr_structured;  /* descr was a list */
	char descr[32];
	int fortran;
	int rank;
	int64_t dims[HLOI_MAX_RANK];
} npy_header;

static void skip_ws(hdr_parser *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
		h->p++;
}

static int hdr_error(hdr_parser *h, const char *what)
{
	diag_error_where(h->ctx, h->name, "malformed .npy header: %s", what);
	return 0;
}

/* A Python string literal without escapes, quoted with ' or ". */
static int parse_string(hdr_parser *h, char *out, size_t size)
{
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return hdr_error(h, "expected a string");
	char q = *h->p++;
	size_t n = 0;
	while (h->p < h->end && *h->p != q) {
		unsigned char ch = (unsigned char)*h->p;
		if (ch == '\\' || ch == '\n' || ch < 0x20 || ch >= 0x7f)
			return hdr_error(h, "unsupported character in a string");
		if (n + 1 >= size)
			return hdr_error(h, "string too long");
		out[n++] = (char)ch;
		h->p++;
	}
	if (h->p >= h->end)
		return hdr_error(h, "unterminated string");
	h->p++;
	out[n] = '\0';
	return 1;
}

static int match_word(hdr_parser *h, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(h->end - h->p) < n || memcmp(h->p, w, n) != 0)
		return 0;
	const char *after = h->p + n;
	if (after < h->end && ((*after >= 'a' && *after <= 'z') || (*after >= 'A' && *after <= 'Z') ||
			       (*after >= '0' && *after <= '9') || *after == '_'))
		return 0;
	h->p = after;
	return 1;
}

/* A shape tuple: `()`, `(7,)`, `(2, 3)`, `(2, 3,)`. */
static int parse_shape(hdr_parser *h, npy_header *hd)
{
	if (h->p >= h->end || *h->p != '(')
		return hdr_error(h, "'shape' must be a tuple of integers");
	h->p++;
	hd->rank = 0;
	int saw_comma = 0;
	skip_ws(h);
	while (h->p < h->end && *h->p != ')') {
		int neg = 0;
		if (*h->p == '-' || *h->p == '+') {
			neg = *h->p == '-';
			h->p++;
			skip_ws(h);
		}
		if (h->p >= h->end || *h->p < '0' || *h->p > '9')
			return hdr_error(h, "'shape' must be a tuple of integers");
		if (*h->p == '0' && h->p + 1 < h->end && h->p[1] >= '0' && h->p[1] <= '9')
			return hdr_error(h, "'shape' entry with a leading zero");
		int64_t v = 0;
		int big = 0;
		while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
			if (checked_mul_i64(v, 10, &v) || checked_add_i64(v, *h->p - '0', &v))
				big = 1;
			h->p++;
		}
		if (neg && v != 0) {
			diag_error_where(h->ctx, h->name, "invalid .npy shape: negative dimension -%" PRId64,
					 v);
			return 0;
		}
		if (big) {
			diag_error_where(h->ctx, h->name, "invalid .npy shape: dimension too large");
			return 0;
		}
		if (hd->rank >= HLOI_MAX_RANK) {
			diag_error_where(h->ctx, h->name,
					 "unsupported .npy shape: more than %d dimensions", HLOI_MAX_RANK);
			return 0;
		}
		hd->dims[hd->rank++] = v;
		skip_ws(h);
		saw_comma = 0;
		if (h->p < h->end && *h->p == ',') {
			saw_comma = 1;
			h->p++;
			skip_ws(h);
		} else if (h->p < h->end && *h->p != ')') {
			return hdr_error(h, "expected ',' or ')' in 'shape'");
		}
	}
	if (h->p >= h->end)
		return hdr_error(h, "unterminated 'shape' tuple");
	if (hd->rank == 1 && !saw_comma)
		return hdr_error(h, "'shape' must be a tuple, e.g. (7,)");
	h->p++;
	return 1;
}

/* Skips a bracketed Python value (the list of a structured descr). */
static int skip_brackets(hdr_parser *h)
{
	int depth = 0;
	while (h->p < h->end) {
		char ch = *h->p++;
		if (ch == '[' || ch == '(')
			depth++;
		else if (ch == ']' || ch == ')') {
			if (--depth == 0)
				return 1;
		}
	}
	return hdr_error(h, "unterminated list");
}

static int parse_header_dict(hdr_parser *h, npy_header *hd)
{
	skip_ws(h);
	if (h->p >= h->end || *h->p != '{')
		return hdr_error(h, "expected '{'");
	h->p++;
	skip_ws(h);
	while (h->p < h->end && *h->p != '}') {
		char key[32];
		if (!parse_string(h, key, sizeof key))
			return 0;
		skip_ws(h);
		if (h->p >= h->end || *h->p != ':')
			return hdr_error(h, "expected ':' after a key");
		h->p++;
		skip_ws(h);
		if (!strcmp(key, "descr")) {
			if (hd->have_descr)
				return hdr_error(h, "duplicate key 'descr'");
			hd->have_descr = 1;
			if (h->p < h->end && *h->p == '[') {
				hd->descr_structured = 1;
				if (!skip_brackets(h))
					return 0;
			} else if (!parse_string(h, hd->descr, sizeof hd->descr)) {
				return 0;
			}
		} else if (!strcmp(key, "fortran_order")) {
			if (hd->have_fortran)
				return hdr_error(h, "duplicate key 'fortran_order'");
			hd->have_fortran = 1;
			if (match_word(h, "True"))
				hd->fortran = 1;
			else if (match_word(h, "False"))
				hd->fortran = 0;
			else
				return hdr_error(h, "'fortran_order' must be True or False");
		} else if (!strcmp(key, "shape")) {
			if (hd->have_shape)
				return hdr_error(h, "duplicate key 'shape'");
			hd->have_shape = 1;
			if (!parse_shape(h, hd))
				return 0;
		} else {
			diag_error_where(h->ctx, h->name, "malformed .npy header: unexpected key '%s'", key);
			return 0;
		}
		skip_ws(h);
		if (h->p < h->end && *h->p == ',') {
			h->p++;
			skip_ws(h);
		} else if (h->p < h->end && *h->p != '}') {
			return hdr_error(h, "expected ',' or '}'");
		}
	}
	if (h->p >= h->end)
		return hdr_error(h, "expected '}'");
	h->p++;
	skip_ws(h);
	if (h->p != h->end)
		return hdr_error(h, "unexpected text after the dictionary");
	if (!hd->have_descr)
		return hdr_error(h, "missing key 'descr'");
	if (!hd->have_fortran)
		return hdr_error(h, "missing key 'fortran_order'");
	if (!hd->have_shape)
		return hdr_error(h, "missing key 'shape'");
	return 1;
}

/* --- dtypes ------------------------------------------------------------- */

typedef struct npy_dtype {
	const char *code;  /* without the byte-order character */
	etype type;
} npy_dtype;

static const npy_dtype npy_dtypes[] = {
	{ "b1", ET_PRED }, { "i1", ET_S8 },   { "i2", ET_S16 }, { "i4", ET_S32 },
	{ "i8", ET_S64 },  { "u1", ET_U8 },   { "u2", ET_U16 }, { "u4", ET_U32 },
	{ "u8", ET_U64 },  { "f2", ET_F16 },  { "f4", ET_F32 }, { "f8", ET_F64 },
	{ "c8", ET_C64 },  { "c16", ET_C128 },
};

/* The types that travel in a one-byte dtype of another name (doc/semantics.md,
 * "Element types"): sub-byte integers as their values in |i1 / |u1, the small
 * floats as their raw bits in |u1 (f8e5m2 also as |f1, which ml_dtypes
 * writes), and any of them as |V1, the void dtype ml_dtypes' arrays save
 * as, holding XLA's storage (the value in the low bits). */
static int one_byte_alias(etype t)
{
	return etype_byte_width(t) == 1 && t != ET_PRED && t != ET_S8 && t != ET_U8;
}

/* Maps a descr to an element type, or reports why not (status returned).
 * *raw is set when the bytes are storage to take the low bits of (|V1),
 * cleared when they are values to range-check. */
static hloi_status descr_type(hloi_context *ctx, const char *name, const npy_header *hd,
			      const shape *expect, etype *out, int *raw)
{
	*raw = 0;
	if (hd->descr_structured) {
		diag_error_where(ctx, name, "unsupported dtype: structured arrays are not supported");
		return HLOI_EUNSUPPORTED;
	}
	const char *d = hd->descr;
	char order = d[0];
	const char *code = (order == '<' || order == '>' || order == '|' || order == '=') ? d + 1 : d;
	etype want = expect ? expect->type : ET_INVALID;
	if (code[0] == 'O') {
		diag_error_where(ctx, name, "unsupported dtype '%s' (object arrays are not supported)", d);
		return HLOI_EUNSUPPORTED;
	}
	if (code[0] == 'V') {
		if (!strcmp(code, "V1") && order == '|' && one_byte_alias(want)) {
			*out = want;
			*raw = 1;
			return HLOI_OK;
		}
		if (!strcmp(code, "V2") && order != '>' && want == ET_BF16) {
			*out = want;
			return HLOI_OK;
		}
		diag_error_where(ctx, name, "unsupported dtype '%s' (raw void data)", d);
		return HLOI_EUNSUPPORTED;
	}
	if (!strcmp(code, "f1") && order != '>' && want == ET_F8E5M2) {
		*out = want;
		return HLOI_OK;
	}
	for (size_t i = 0; i < sizeof npy_dtypes / sizeof npy_dtypes[0]; i++) {
		if (strcmp(code, npy_dtypes[i].code))
			continue;
		etype t = npy_dtypes[i].type;
		int one_byte = etype_byte_width(t) == 1;
		if (order == '>' && !one_byte) {
			diag_error_where(ctx, name, "unsupported dtype '%s' (big-endian)", d);
			return HLOI_EUNSUPPORTED;
		}
		if (!(order == '<' || (order == '|' && one_byte))) {
			diag_error_where(ctx, name,
					 "unsupported dtype '%s' (expected an explicit byte order: '%s%s')", d,
					 one_byte ? "|" : "<", code);
			return HLOI_EUNSUPPORTED;
		}
		if (t == ET_U16 && want == ET_BF16)
			t = ET_BF16;
		/* |i1 holds s1/s2/s4 values; |u1 u1/u2/u4 values or small-float bits */
		if (one_byte_alias(want) && ((t == ET_S8 && etype_is_signed(want)) ||
					     (t == ET_U8 && !etype_is_signed(want))))
			t = want;
		*out = t;
		return HLOI_OK;
	}
	diag_error_where(ctx, name, "unsupported dtype '%s'", d);
	return HLOI_EUNSUPPORTED;
}

static void shape_tuple_text(strbuf *b, int rank, const int64_t *dims)
{
	sb_putc(b, '(');
	for (int i = 0; i < rank; i++)
		sb_printf(b, i ? ", %" PRId64 : "%" PRId64, dims[i]);
	if (rank == 1)
		sb_putc(b, ',');
	sb_putc(b, ')');
}

/* --- reading --------------------------------------------------------------- */

/* Checks the fixed start of a file: magic, version and header length. `data`
 * holds the file's first `len` bytes: 10, or 12 for versions 2 and 3, unless
 * the file is shorter. Sets *prefix (10 or 12) and *hlen. */
static hloi_status check_prefix(hloi_context *ctx, const char *name, const unsigned char *data, size_t len,
				size_t *prefix, uint32_t *hlen)
{
	if (len < 6 || memcmp(data, npy_magic, 6) != 0) {
		diag_error_where(ctx, name, "not a .npy file (bad magic)");
		return HLOI_EPARSE;
	}
	if (len < 10) {
		diag_error_where(ctx, name, "truncated .npy header");
		return HLOI_EPARSE;
	}
	unsigned major = data[6], minor = data[7];
	if (!((major == 1 || major == 2 || major == 3) && minor == 0)) {
		diag_error_where(ctx, name, "unsupported .npy format version %u.%u", major, minor);
		return HLOI_EUNSUPPORTED;
	}
	if (major == 1) {
		*prefix = 10;
		*hlen = (uint32_t)data[8] | (uint32_t)data[9] << 8;
	} else {
		if (len < 12) {
			diag_error_where(ctx, name, "truncated .npy header");
			return HLOI_EPARSE;
		}
		*prefix = 12;
		*hlen = (uint32_t)data[8] | (uint32_t)data[9] << 8 | (uint32_t)data[10] << 16 |
			(uint32_t)data[11] << 24;
	}
	if (*hlen > NPY_MAX_HEADER) {
		diag_error_where(ctx, name, ".npy header too large (%" PRIu32 " bytes; the limit is %u)",
				 *hlen, NPY_MAX_HEADER);
		return HLOI_EPARSE;
	}
	return HLOI_OK;
}

/* The header runs past the end of a file of `file_len` bytes. */
static hloi_status header_truncated(hloi_context *ctx, const char *name, uint32_t hlen, size_t file_len)
{
	diag_error_where(ctx, name,
			 "truncated .npy header: header length %" PRIu32
			 " runs past the end of the file (%zu bytes)",
			 hlen, file_len);
	return HLOI_EPARSE;
}

/* Parses the header dictionary (`hlen` bytes found at file offset `prefix`)
 * into the array's shape and data size in bytes. */
static hloi_status parse_header(hloi_context *ctx, const char *name, const unsigned char *text, uint32_t hlen,
				size_t prefix, const shape *expect, npy_header *hd, shape *s, int64_t *bytes, int *raw)
{
	for (size_t i = 0; i < hlen; i++) {
		if (text[i] >= 0x80 || text[i] == 0) {
			diag_error_where(ctx, name, "malformed .npy header: non-ASCII byte at offset %zu",
					 prefix + i);
			return HLOI_EPARSE;
		}
	}
	memset(hd, 0, sizeof *hd);
	hdr_parser h = { (const char *)text, (const char *)text + hlen, ctx, name };
	if (!parse_header_dict(&h, hd))
		return HLOI_EPARSE;
	etype t = ET_INVALID;
	hloi_status st = descr_type(ctx, name, hd, expect, &t, raw);
	if (st != HLOI_OK)
		return st;
	shape_make_array(s, t, hd->rank, hd->dims);
	if (hd->fortran && hd->rank >= 2)
		for (int i = 0; i < hd->rank; i++)
			s->layout.minor_to_major[i] = i;
	int64_t count;
	if (shape_element_count(s, &count) || shape_byte_size(s, bytes) ||
	    (uint64_t)*bytes > (uint64_t)(SIZE_MAX / 2)) {
		diag_error_where(ctx, name, "invalid .npy shape: the array is too large");
		return HLOI_EINVAL;
	}
	return HLOI_OK;
}

/* The file holds `avail` bytes of data where the header asks for `bytes`. */
static hloi_status data_size_mismatch(hloi_context *ctx, const char *name, const npy_header *hd, int64_t bytes,
				      size_t avail)
{
	strbuf b = STRBUF_INIT;
	shape_tuple_text(&b, hd->rank, hd->dims);
	if (avail < (size_t)bytes)
		diag_error_where(ctx, name,
				 "truncated .npy data: shape %s of '%s' needs %" PRId64 " bytes, the file has %zu",
				 sb_str(&b), hd->descr, bytes, avail);
	else
		diag_error_where(ctx, name,
				 ".npy data has %zu trailing bytes after the %" PRId64 " bytes of shape %s of '%s'",
				 avail - (size_t)bytes, bytes, sb_str(&b), hd->descr);
	sb_free(&b);
	return HLOI_EPARSE;
}

/* The literal the data is read into (no padding: its buffer is the data). */
/* The literal the file's data goes into: not zeroed first, as the data
 * fills every byte of it (the file's shape has the default layout, which
 * has no padding), so the array's pages are written once, by the read. */
static hloi_status new_literal(hloi_literal **out, hloi_context *ctx, const char *name, const shape *s)
{
	hloi_status st = literal_create_uninit(out, s);
	if (st == HLOI_EINVAL)
		diag_error_where(ctx, name, "invalid .npy shape: the array is too large");
	return st;
}

/* NumPy's bool is one byte; any non-zero byte is true. */
static void normalize_pred(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = p[i] != 0;
}

/* The data of a type that travels in another one-byte dtype: |V1 storage
 * keeps its low bits; values (|i1, |u1) must be in the type's range, and
 * f4e2m1fn bits below 16. */
static hloi_status normalize_bytes(hloi_context *ctx, const char *name, etype t, int raw, unsigned char *p, size_t n)
{
	if (t == ET_PRED) {
		normalize_pred(p, n);
		return HLOI_OK;
	}
	int bits = etype_bit_width(t);
	if (etype_byte_width(t) != 1 || bits >= 8)
		return HLOI_OK;
	for (size_t i = 0; i < n; i++) {
		if (raw) {
			p[i] = etype_from_low_bits(t, p[i]);
			continue;
		}
		if (etype_from_low_bits(t, p[i]) == p[i])
			continue;
		int v = etype_is_signed(t) ? (int)(int8_t)p[i] : (int)p[i];
		if (etype_is_float(t))
			diag_error_where(ctx, name, "element %zu: 0x%02x is not a %s encoding (4 bits)", i, p[i],
					 etype_name(t));
		else
			diag_error_where(ctx, name, "element %zu: value %d is out of range for %s [%d, %d]", i, v,
					 etype_name(t), etype_is_signed(t) ? -(1 << (bits - 1)) : 0,
					 etype_is_signed(t) ? (1 << (bits - 1)) - 1 : (1 << bits) - 1);
		return HLOI_EINVAL;
	}
	return HLOI_OK;
}

hloi_status npy_parse(hloi_literal **out, hloi_context *ctx, const char *name, const unsigned char *data,
		      size_t len, const shape *expect)
{
	*out = NULL;
	size_t prefix = 0;
	uint32_t hlen = 0;
	hloi_status st = check_prefix(ctx, name, data, len, &prefix, &hlen);
	if (st != HLOI_OK)
		return st;
	if (hlen > len - prefix)
		return header_truncated(ctx, name, hlen, len);
	npy_header hd;
	shape s;
	int64_t bytes = 0;
	int raw = 0;
	st = parse_header(ctx, name, data + prefix, hlen, prefix, expect, &hd, &s, &bytes, &raw);
	if (st != HLOI_OK)
		return st;
	size_t avail = len - prefix - hlen;
	if (avail != (size_t)bytes)
		return data_size_mismatch(ctx, name, &hd, bytes, avail);
	hloi_literal *lit = NULL;
	st = new_literal(&lit, ctx, name, &s);
	if (st != HLOI_OK)
		return st;
	if (bytes > 0) {
		memcpy(lit->data, data + prefix + hlen, (size_t)bytes);
		st = normalize_bytes(ctx, name, s.type, raw, lit->data, (size_t)bytes);
		if (st != HLOI_OK) {
			literal_destroy(lit);
			return st;
		}
	}
	*out = lit;
	return HLOI_OK;
}

/* Reads and discards the rest of the file, counting its bytes; stops once
 * the count exceeds `limit`. (size_t)-1 on a read error. */
static size_t drain(file_in *in, hloi_context *ctx, size_t limit)
{
	unsigned char buf[16384];
	size_t total = 0;
	while (total <= limit) {
		size_t n = file_in_read(in, ctx, buf, sizeof buf);
		if (n == (size_t)-1)
			return n;
		total += n;
		if (n < sizeof buf)
			break;
	}
	return total;
}

/* The file is over the size limit (as file_read_all says for a stream). */
static hloi_status too_large(hloi_context *ctx, const file_in *in)
{
	diag_error_where(ctx, in->where, "file is too large (the limit is 1 GiB)");
	return HLOI_EINVAL;
}

/* Checks the amount of data in a stream, of which `have` bytes are already
 * consumed, by reading the rest: the error of a file with too little or too
 * much data, as npy_parse reports it for the whole file. */
static hloi_status stream_data_error(hloi_context *ctx, const char *name, file_in *in, const npy_header *hd,
				     int64_t bytes, size_t used, size_t have)
{
	size_t room = used + have < FILE_MAX_BYTES ? FILE_MAX_BYTES - used - have : 0;
	size_t rest = drain(in, ctx, room);
	if (rest == (size_t)-1)
		return HLOI_EIO;
	if (used + have + rest > FILE_MAX_BYTES)
		return too_large(ctx, in);
	return data_size_mismatch(ctx, name, hd, bytes, have + rest);
}

/* Streams the file: the header first, then the data straight into the
 * literal's buffer, so the array is in memory once. The checks and messages
 * are npy_parse's for the same bytes. */
hloi_status npy_read(hloi_literal **out, hloi_context *ctx, const char *path, const shape *expect)
{
	*out = NULL;
	file_in in;
	hloi_status st = file_in_open(&in, ctx, path);
	if (st != HLOI_OK)
		return st;
	unsigned char *text = NULL;
	hloi_literal *lit = NULL;
	unsigned char start[12];
	size_t got = file_in_read(&in, ctx, start, 10);
	if (got == (size_t)-1) {
		st = HLOI_EIO;
		goto cleanup;
	}
	if (got == 10 && (start[6] == 2 || start[6] == 3) && start[7] == 0) {
		/* versions 2 and 3 have a 4-byte header length */
		size_t more = file_in_read(&in, ctx, start + 10, 2);
		if (more == (size_t)-1) {
			st = HLOI_EIO;
			goto cleanup;
		}
		got += more;
	}
	size_t prefix = 0;
	uint32_t hlen = 0;
	st = check_prefix(ctx, path, start, got, &prefix, &hlen);
	if (st != HLOI_OK)
		goto cleanup;
	text = hloi_malloc(hlen ? hlen : 1);
	if (!text) {
		st = HLOI_ENOMEM;
		goto cleanup;
	}
	got = file_in_read(&in, ctx, text, hlen);
	if (got == (size_t)-1) {
		st = HLOI_EIO;
		goto cleanup;
	}
	if (got < hlen) {
		st = header_truncated(ctx, path, hlen, prefix + got);
		goto cleanup;
	}
	npy_header hd;
	shape s;
	int64_t bytes = 0;
	int raw = 0;
	st = parse_header(ctx, path, text, hlen, prefix, expect, &hd, &s, &bytes, &raw);
	if (st != HLOI_OK)
		goto cleanup;
	size_t used = prefix + hlen; /* bytes read so far, <= FILE_MAX_BYTES */
	if (in.size >= 0) {
		/* a regular file: its size says whether the data fits */
		size_t avail = (size_t)in.size >= used ? (size_t)in.size - used : 0;
		if (avail != (size_t)bytes) {
			st = data_size_mismatch(ctx, path, &hd, bytes, avail);
			goto cleanup;
		}
	} else if ((uint64_t)bytes > FILE_MAX_BYTES - used) {
		/* a stream cannot hold this much: say what it does hold */
		st = stream_data_error(ctx, path, &in, &hd, bytes, used, 0);
		goto cleanup;
	}
	st = new_literal(&lit, ctx, path, &s);
	if (st != HLOI_OK)
		goto cleanup;
	if (bytes > 0) {
		got = file_in_read(&in, ctx, lit->data, (size_t)bytes);
		if (got == (size_t)-1) {
			st = HLOI_EIO;
			goto cleanup;
		}
		if (got < (size_t)bytes) {
			st = data_size_mismatch(ctx, path, &hd, bytes, got);
			goto cleanup;
		}
	}
	/* nothing may follow the data (a stream, or a file that grew) */
	unsigned char extra;
	got = file_in_read(&in, ctx, &extra, 1);
	if (got == (size_t)-1) {
		st = HLOI_EIO;
		goto cleanup;
	}
	if (got == 1) {
		st = stream_data_error(ctx, path, &in, &hd, bytes, used, (size_t)bytes + 1);
		goto cleanup;
	}
	if (bytes > 0) {
		st = normalize_bytes(ctx, path, s.type, raw, lit->data, (size_t)bytes);
		if (st != HLOI_OK)
			goto cleanup;
	}
	*out = lit;
	lit = NULL;
cleanup:
	literal_destroy(lit);
	hloi_free(text);
	file_in_close(&in);
	return st;
}

/* --- writing --------------------------------------------------------------- */

static int is_column_major(const shape *s)
{
	/* a tiled buffer is in neither order: written in C order */
	if (s->rank < 2 || !index_is_strided(s))
		return 0;
	for (int i = 0; i < s->rank; i++)
		if (s->layout.minor_to_major[i] != i)
			return 0;
	return 1;
}

/* Advances idx with the first dimension fastest; 0 after the last index. */
static int index_next_colmajor(int rank, const int64_t *dims, int64_t *idx)
{
	for (int d = 0; d < rank; d++) {
		if (++idx[d] < dims[d])
			return 1;
		idx[d] = 0;
	}
	return 0;
}

/* What writing a literal as .npy takes: the header and how to produce the
 * data in file order. */
typedef struct npy_plan {
	strbuf header;     /* magic, version, header length and dictionary */
	const hloi_literal *lit;
	int fortran;       /* the file is in Fortran order */
	int plain;         /* the buffer is the data, in file order */
	size_t w;          /* element bytes */
	int64_t count, bytes;
	/* position of the next element to produce */
	int64_t next;
	int64_t idx[HLOI_MAX_RANK];
} npy_plan;

/* Checks that the literal can be written and builds the header, as NumPy
 * 1.24 writes it (keys sorted, growth padding, 64-byte alignment). */
static hloi_status plan_write(npy_plan *p, hloi_context *ctx, const hloi_literal *lit, const char *name)
{
	memset(p, 0, sizeof *p);
	p->header = (strbuf)STRBUF_INIT;
	p->lit = lit;
	const shape *s = &lit->shape;
	if (shape_is_tuple(s)) {
		diag_error_where(ctx, name, "cannot write a tuple as .npy");
		return HLOI_EINVAL;
	}
	if (s->type == ET_TOKEN) {
		diag_error_where(ctx, name, "cannot write a token as .npy (a token holds no values; write literal text instead)");
		return HLOI_EINVAL;
	}
	const char *descr = NULL;
	if (etype_is_evaluated(s->type))
		descr = etype_npy_descr(s->type);
	if (!descr) {
		diag_error_where(ctx, name, "cannot write element type %s as .npy",
				 etype_name(s->type) ? etype_name(s->type) : "?");
		return HLOI_EUNSUPPORTED;
	}
	if (lit->elided) {
		diag_error_where(ctx, name, "cannot write an elided literal ({...}) as .npy");
		return HLOI_EINVAL;
	}
	p->fortran = is_column_major(s);
	p->w = (size_t)etype_byte_width(s->type);
	if (shape_element_count(s, &p->count) || checked_mul_i64(p->count, (int64_t)p->w, &p->bytes) ||
	    (uint64_t)p->bytes > (uint64_t)(SIZE_MAX / 2)) {
		diag_error_where(ctx, name, "array too large for .npy");
		return HLOI_EINVAL;
	}
	p->plain = s->layout.n_padded == 0 && index_is_strided(s) && (p->fortran || layout_is_default(s) || s->rank <= 1);

	strbuf d = STRBUF_INIT;
	sb_printf(&d, "{'descr': '%s', 'fortran_order': %s, 'shape': ", descr, p->fortran ? "True" : "False");
	shape_tuple_text(&d, s->rank, s->dims);
	sb_puts(&d, ", }");
	if (s->rank > 0) {
		char digits[32];
		int nd = snprintf(digits, sizeof digits, "%" PRId64, s->dims[p->fortran ? s->rank - 1 : 0]);
		for (int i = nd; i < NPY_GROWTH_DIGITS; i++)
			sb_putc(&d, ' ');
	}
	size_t hl = d.len + 1; /* with the final newline */
	size_t pad = 64 - ((10 + hl) % 64);
	for (size_t i = 0; i < pad; i++)
		sb_putc(&d, ' ');
	sb_putc(&d, '\n');
	if (d.oom) {
		sb_free(&d);
		return HLOI_ENOMEM;
	}
	unsigned char pre[10];
	memcpy(pre, npy_magic, 6);
	pre[6] = 1;
	pre[7] = 0;
	pre[8] = (unsigned char)(d.len & 0xff);
	pre[9] = (unsigned char)(d.len >> 8);
	sb_putn(&p->header, (const char *)pre, sizeof pre);
	sb_putn(&p->header, d.s, d.len);
	sb_free(&d);
	if (p->header.oom) {
		sb_free(&p->header);
		return HLOI_ENOMEM;
	}
	return HLOI_OK;
}

/* Produces the next elements of the data, at most `max` of them, into dst;
 * returns how many. */
static size_t plan_data(npy_plan *p, unsigned char *dst, size_t max)
{
	const shape *s = &p->lit->shape;
	size_t left = (size_t)(p->count - p->next), n = max < left ? max : left;
	if (n == 0)
		return 0;
	if (p->plain) {
		memcpy(dst, (const unsigned char *)p->lit->data + (size_t)p->next * p->w, n * p->w);
	} else {
		unsigned char *q = dst;
		for (size_t i = 0; i < n; i++) {
			memcpy(q, literal_element(p->lit, p->idx), p->w);
			q += p->w;
			if (p->fortran)
				index_next_colmajor(s->rank, s->dims, p->idx);
			else
				index_next(s->rank, s->dims, p->idx);
		}
	}
	if (s->type == ET_PRED)
		normalize_pred(dst, n * p->w);
	p->next += (int64_t)n;
	return n;
}

static hloi_status serialize(unsigned char **out, size_t *len, hloi_context *ctx, const hloi_literal *lit,
			     const char *name)
{
	*out = NULL;
	*len = 0;
	npy_plan p;
	hloi_status st = plan_write(&p, ctx, lit, name);
	if (st != HLOI_OK)
		return st;
	size_t total = p.header.len + (size_t)p.bytes;
	unsigned char *buf = hloi_malloc(total);
	if (!buf) {
		sb_free(&p.header);
		return HLOI_ENOMEM;
	}
	memcpy(buf, p.header.s, p.header.len);
	plan_data(&p, buf + p.header.len, (size_t)p.count);
	sb_free(&p.header);
	*out = buf;
	*len = total;
	return HLOI_OK;
}

hloi_status npy_serialize(unsigned char **out, size_t *len, hloi_context *ctx, const hloi_literal *lit)
{
	return serialize(out, len, ctx, lit, NULL);
}

#define NPY_STAGING_BYTES ((size_t)1 << 20)

/* Streams the file: the header, then the data straight from the buffer when
 * it is already in file order, else converted through a 1 MiB staging
 * buffer. The bytes are npy_serialize's. */
hloi_status npy_write(const hloi_literal *lit, hloi_context *ctx, const char *path)
{
	npy_plan p;
	hloi_status st = plan_write(&p, ctx, lit, path);
	if (st != HLOI_OK)
		return st;
	file_out o;
	st = file_out_open(&o, ctx, path);
	if (st != HLOI_OK) {
		sb_free(&p.header);
		return st;
	}
	unsigned char *staging = NULL;
	int abandon = 0;
	file_out_write(&o, p.header.s, p.header.len);
	if (p.count > 0 && p.plain && lit->shape.type != ET_PRED) {
		file_out_write(&o, lit->data, (size_t)p.bytes);
	} else if (p.count > 0) {
		size_t cap = (size_t)p.bytes < NPY_STAGING_BYTES ? (size_t)p.bytes : NPY_STAGING_BYTES;
		staging = hloi_malloc(cap);
		if (!staging) {
			st = HLOI_ENOMEM;
			abandon = 1;
		}
		size_t n;
		while (staging && !o.err && (n = plan_data(&p, staging, cap / p.w)) > 0)
			file_out_write(&o, staging, n * p.w);
	}
	hloi_status cst = file_out_close(&o, ctx, abandon);
	if (st == HLOI_OK)
		st = cst;
	hloi_free(staging);
	sb_free(&p.header);
	return st;
}
