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
			if (ck_mul_i64(v, 10, &v) || ck_add_i64(v, *h->p - '0', &v))
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
};

/* Maps a descr to an element type, or reports why not (status returned). */
static hloi_status descr_type(hloi_context *ctx, const char *name, const npy_header *hd,
			      const shape *expect, etype *out)
{
	if (hd->descr_structured) {
		diag_error_where(ctx, name, "unsupported dtype: structured arrays are not supported");
		return HLOI_EUNSUPPORTED;
	}
	const char *d = hd->descr;
	char order = d[0];
	const char *code = (order == '<' || order == '>' || order == '|' || order == '=') ? d + 1 : d;
	if (code[0] == 'O') {
		diag_error_where(ctx, name, "unsupported dtype '%s' (object arrays are not supported)", d);
		return HLOI_EUNSUPPORTED;
	}
	if (code[0] == 'V') {
		diag_error_where(ctx, name, "unsupported dtype '%s' (raw void data)", d);
		return HLOI_EUNSUPPORTED;
	}
	if (code[0] == 'c') {
		diag_error_where(ctx, name, "unsupported dtype '%s' (complex)", d);
		return HLOI_EUNSUPPORTED;
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
		if (t == ET_U16 && expect && expect->type == ET_BF16)
			t = ET_BF16;
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

hloi_status npy_parse(hloi_literal **out, hloi_context *ctx, const char *name, const unsigned char *data,
		      size_t len, const shape *expect)
{
	*out = NULL;
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
	size_t prefix;
	uint32_t hlen;
	if (major == 1) {
		prefix = 10;
		hlen = (uint32_t)data[8] | (uint32_t)data[9] << 8;
	} else {
		if (len < 12) {
			diag_error_where(ctx, name, "truncated .npy header");
			return HLOI_EPARSE;
		}
		prefix = 12;
		hlen = (uint32_t)data[8] | (uint32_t)data[9] << 8 | (uint32_t)data[10] << 16 |
		       (uint32_t)data[11] << 24;
	}
	if (hlen > NPY_MAX_HEADER) {
		diag_error_where(ctx, name, ".npy header too large (%" PRIu32 " bytes; the limit is %u)",
				 hlen, NPY_MAX_HEADER);
		return HLOI_EPARSE;
	}
	if (hlen > len - prefix) {
		diag_error_where(ctx, name,
				 "truncated .npy header: header length %" PRIu32
				 " runs past the end of the file (%zu bytes)",
				 hlen, len);
		return HLOI_EPARSE;
	}
	for (size_t i = 0; i < hlen; i++) {
		if (data[prefix + i] >= 0x80 || data[prefix + i] == 0) {
			diag_error_where(ctx, name, "malformed .npy header: non-ASCII byte at offset %zu",
					 prefix + i);
			return HLOI_EPARSE;
		}
	}
	npy_header hd;
	memset(&hd, 0, sizeof hd);
	hdr_parser h = { (const char *)data + prefix, (const char *)data + prefix + hlen, ctx, name };
	if (!parse_header_dict(&h, &hd))
		return HLOI_EPARSE;
	etype t = ET_INVALID;
	hloi_status st = descr_type(ctx, name, &hd, expect, &t);
	if (st != HLOI_OK)
		return st;

	shape s;
	shape_make_array(&s, t, hd.rank, hd.dims);
	if (hd.fortran && hd.rank >= 2)
		for (int i = 0; i < hd.rank; i++)
			s.layout.minor_to_major[i] = i;
	int64_t count, bytes;
	if (shape_element_count(&s, &count) || shape_byte_size(&s, &bytes) ||
	    (uint64_t)bytes > (uint64_t)(SIZE_MAX / 2)) {
		diag_error_where(ctx, name, "invalid .npy shape: the array is too large");
		return HLOI_EINVAL;
	}
	size_t avail = len - prefix - hlen;
	if (avail != (size_t)bytes) {
		strbuf b = STRBUF_INIT;
		shape_tuple_text(&b, hd.rank, hd.dims);
		if (avail < (size_t)bytes)
			diag_error_where(ctx, name,
					 "truncated .npy data: shape %s of '%s' needs %" PRId64
					 " bytes, the file has %zu",
					 sb_str(&b), hd.descr, bytes, avail);
		else
			diag_error_where(ctx, name,
					 ".npy data has %zu trailing bytes after the %" PRId64
					 " bytes of shape %s of '%s'",
					 avail - (size_t)bytes, bytes, sb_str(&b), hd.descr);
		sb_free(&b);
		return HLOI_EPARSE;
	}
	hloi_literal *lit = NULL;
	st = literal_create(&lit, &s);
	if (st != HLOI_OK) {
		if (st == HLOI_EINVAL)
			diag_error_where(ctx, name, "invalid .npy shape: the array is too large");
		return st;
	}
	if (bytes > 0)
		memcpy(lit->data, data + prefix + hlen, (size_t)bytes);
	if (t == ET_PRED) {
		unsigned char *p = lit->data;
		for (int64_t i = 0; i < bytes; i++)
			p[i] = p[i] != 0;
	}
	*out = lit;
	return HLOI_OK;
}

hloi_status npy_read(hloi_literal **out, hloi_context *ctx, const char *path, const shape *expect)
{
	char *buf = NULL;
	size_t len = 0;
	*out = NULL;
	hloi_status st = file_read_all(&buf, &len, ctx, path);
	if (st != HLOI_OK)
		return st;
	st = npy_parse(out, ctx, path, (const unsigned char *)buf, len, expect);
	hloi_free(buf);
	return st;
}

/* --- writing --------------------------------------------------------------- */

static int is_column_major(const shape *s)
{
	if (s->rank < 2)
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

static hloi_status serialize(unsigned char **out, size_t *len, hloi_context *ctx, const hloi_literal *lit,
			     const char *name)
{
	*out = NULL;
	*len = 0;
	const shape *s = &lit->shape;
	if (shape_is_tuple(s)) {
		diag_error_where(ctx, name, "cannot write a tuple as .npy");
		return HLOI_EINVAL;
	}
	const char *descr = NULL;
	if (etype_is_evaluated(s->type))
		descr = s->type == ET_BF16 ? "<u2" : etype_npy_descr(s->type);
	if (!descr) {
		diag_error_where(ctx, name, "cannot write element type %s as .npy",
				 etype_name(s->type) ? etype_name(s->type) : "?");
		return HLOI_EUNSUPPORTED;
	}
	if (lit->elided) {
		diag_error_where(ctx, name, "cannot write an elided literal ({...}) as .npy");
		return HLOI_EINVAL;
	}
	int fortran = is_column_major(s);
	int64_t count, bytes;
	size_t w = (size_t)etype_byte_width(s->type);
	if (shape_element_count(s, &count) || ck_mul_i64(count, (int64_t)w, &bytes)) {
		diag_error_where(ctx, name, "array too large for .npy");
		return HLOI_EINVAL;
	}

	/* header, as NumPy 1.24 writes it (keys sorted, growth padding) */
	strbuf h = STRBUF_INIT;
	sb_printf(&h, "{'descr': '%s', 'fortran_order': %s, 'shape': ", descr,
		  fortran ? "True" : "False");
	shape_tuple_text(&h, s->rank, s->dims);
	sb_puts(&h, ", }");
	if (s->rank > 0) {
		char digits[32];
		int nd = snprintf(digits, sizeof digits, "%" PRId64,
				  s->dims[fortran ? s->rank - 1 : 0]);
		for (int i = nd; i < NPY_GROWTH_DIGITS; i++)
			sb_putc(&h, ' ');
	}
	size_t hl = h.len + 1; /* with the final newline */
	size_t pad = 64 - ((10 + hl) % 64);
	for (size_t i = 0; i < pad; i++)
		sb_putc(&h, ' ');
	sb_putc(&h, '\n');
	if (h.oom) {
		sb_free(&h);
		return HLOI_ENOMEM;
	}
	size_t total = 10 + h.len + (size_t)bytes;
	unsigned char *buf = hloi_malloc(total);
	if (!buf) {
		sb_free(&h);
		return HLOI_ENOMEM;
	}
	memcpy(buf, npy_magic, 6);
	buf[6] = 1;
	buf[7] = 0;
	buf[8] = (unsigned char)(h.len & 0xff);
	buf[9] = (unsigned char)(h.len >> 8);
	memcpy(buf + 10, h.s, h.len);
	unsigned char *dst = buf + 10 + h.len;
	sb_free(&h);

	int plain = s->layout.n_padded == 0 && (fortran || layout_is_default(s) || s->rank <= 1);
	if (count > 0) {
		if (plain) {
			memcpy(dst, lit->data, (size_t)bytes);
		} else {
			int64_t idx[HLOI_MAX_RANK] = { 0 };
			unsigned char *q = dst;
			do {
				memcpy(q, literal_element(lit, idx), w);
				q += w;
			} while (fortran ? index_next_colmajor(s->rank, s->dims, idx)
					 : index_next(s->rank, s->dims, idx));
		}
		if (s->type == ET_PRED)
			for (int64_t i = 0; i < bytes; i++)
				dst[i] = dst[i] != 0;
	}
	*out = buf;
	*len = total;
	return HLOI_OK;
}

hloi_status npy_serialize(unsigned char **out, size_t *len, hloi_context *ctx, const hloi_literal *lit)
{
	return serialize(out, len, ctx, lit, NULL);
}

hloi_status npy_write(const hloi_literal *lit, hloi_context *ctx, const char *path)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	hloi_status st = serialize(&buf, &len, ctx, lit, path);
	if (st != HLOI_OK)
		return st;
	st = file_write_all(ctx, path, buf, len);
	hloi_free(buf);
	return st;
}
