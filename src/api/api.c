/* The public API (include/hloi.h, and include/hloi/tool.h for tools): thin
 * wrappers that connect the stages — text front end, checker, engines,
 * value I/O — and own nothing of their own but the shape handles. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "core/float8.h"
#include "core/half.h"
#include "core/index.h"
#include "core/literal.h"
#include "core/shape.h"
#include "eval/eval.h"
#include "eval/runtime/mpi.h"
#include "hloi.h"
#include "hloi/tool.h"
#include "io/file.h"
#include "io/npy.h"
#include "ir/ir.h"
#include "mlir/mlir.h"
#include "proto/proto.h"
#include "rewrite/lower.h"
#include "text/dot.h"
#include "text/parse.h"
#include "text/print.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/str.h"

/* --- shapes ---------------------------------------------------------------- */

/* A parsed shape and the arena holding its tuple elements. `s` comes first so
 * a pointer to the wrapper is a pointer to the shape. */
typedef struct owned_shape {
	shape s;
	arena a;
} owned_shape;

hloi_status hloi_shape_parse(hloi_shape **out, hloi_context *ctx, const char *name, const char *text)
{
	*out = NULL;
	owned_shape *o = hloi_calloc(1, sizeof *o);
	if (!o)
		return HLOI_ENOMEM;
	arena_init(&o->a);
	hloi_status st = text_parse_shape(&o->s, &o->a, ctx, name, text, strlen(text));
	if (st != HLOI_OK)
		goto fail;
	if (!o->s.has_layout && shape_is_array(&o->s))
		layout_set_default(&o->s);
	char msg[512];
	if (shape_validate(&o->s, msg, sizeof msg)) {
		diag_error_where(ctx, name, "%s", msg);
		st = HLOI_EINVAL;
		goto fail;
	}
	/* an unbounded dynamic dimension (`?`) has no size to lay out */
	for (int d = 0; shape_is_array(&o->s) && d < o->s.rank; d++) {
		if (o->s.dims[d] < 0) {
			diag_error_where(ctx, name,
					 "dimension %d is dynamic ('?') and has no size; give a size (f32[4]) or a bound "
					 "(f32[<=4], laid out at its bound)",
					 d);
			st = HLOI_EINVAL;
			goto fail;
		}
	}
	*out = &o->s;
	return HLOI_OK;
fail:
	arena_release(&o->a);
	hloi_free(o);
	return st;
}

void hloi_shape_free(hloi_shape *s)
{
	if (!s)
		return;
	owned_shape *o = (owned_shape *)s;
	arena_release(&o->a);
	hloi_free(o);
}

int hloi_shape_rank(const hloi_shape *s)
{
	return shape_is_tuple(s) ? -1 : s->rank;
}

int64_t hloi_shape_dim(const hloi_shape *s, int d)
{
	return d >= 0 && d < s->rank ? s->dims[d] : -1;
}

int64_t hloi_shape_padded_dim(const hloi_shape *s, int d)
{
	return d >= 0 && d < s->rank ? shape_padded_dim(s, d) : -1;
}

int hloi_shape_minor_to_major(const hloi_shape *s, int i)
{
	return i >= 0 && i < s->layout.n_minor_to_major ? (int)s->layout.minor_to_major[i] : -1;
}

int64_t hloi_shape_stride(const hloi_shape *s, int d)
{
	if (d < 0 || d >= s->rank || !index_is_strided(s))
		return -1;
	int64_t strides[HLOI_MAX_RANK];
	index_strides(s, strides);
	return strides[d];
}

int64_t hloi_shape_element_count(const hloi_shape *s)
{
	int64_t n;
	return shape_element_count(s, &n) ? -1 : n;
}

int64_t hloi_shape_buffer_elements(const hloi_shape *s)
{
	int64_t n;
	return shape_buffer_elements(s, &n) ? -1 : n;
}

int64_t hloi_shape_element_bytes(const hloi_shape *s)
{
	return etype_byte_width(s->type);
}

int64_t hloi_shape_element_size_in_bits(const hloi_shape *s)
{
	return s && shape_is_array(s) && s->has_layout ? s->layout.element_size_in_bits : 0;
}

int64_t hloi_shape_element_bits(const hloi_shape *s)
{
	return shape_element_bits(s);
}

int64_t hloi_shape_byte_size(const hloi_shape *s)
{
	int64_t n;
	return shape_is_tuple(s) || shape_byte_size(s, &n) ? -1 : n;
}

int64_t hloi_shape_memory_space(const hloi_shape *s)
{
	return s->layout.memory_space;
}

int64_t hloi_shape_tail_padding_alignment(const hloi_shape *s)
{
	return s->layout.tail_padding_alignment > 1 ? s->layout.tail_padding_alignment : 1;
}

int hloi_shape_tile_count(const hloi_shape *s)
{
	return shape_is_tuple(s) ? 0 : s->layout.ntiles;
}

int hloi_shape_tile(const hloi_shape *s, int t, int64_t *dims)
{
	if (shape_is_tuple(s) || t < 0 || t >= s->layout.ntiles)
		return -1;
	const tile *tl = &s->layout.tiles[t];
	for (int i = 0; i < tl->n; i++)
		dims[i] = tl->dims[i];
	return tl->n;
}

int hloi_shape_tiled_dims(const hloi_shape *s, int level, int64_t *dims)
{
	index_tiling t;
	if (shape_is_tuple(s) || index_tiling_init(&t, s) || level < 0 || level > t.nlevels)
		return -1;
	const int64_t *d;
	int n = index_tiling_dims(&t, level, &d);
	for (int i = 0; i < n; i++)
		dims[i] = d[i];
	return n;
}

int hloi_shape_tiled_coords(const hloi_shape *s, int64_t linear, int level, int64_t *coords)
{
	index_tiling t;
	if (shape_is_tuple(s) || index_tiling_init(&t, s) || level < 0 || level > t.nlevels || linear < 0 ||
	    linear >= t.elements)
		return -1;
	return index_tiling_coords(&t, linear, level, coords);
}

int hloi_shape_has_padding(const hloi_shape *s)
{
	return s->layout.n_padded > 0;
}

/* Copies a string buffer's text into (buf, size) like snprintf. */
/* 0 (and an empty buf) when the text could not be made: out of memory. */
static size_t copy_out(const strbuf *b, char *buf, size_t size)
{
	size_t n = b->oom ? 0 : b->len;
	if (size) {
		size_t k = n < size - 1 ? n : size - 1;
		memcpy(buf, sb_str(b), k);
		buf[k] = '\0';
	}
	return n;
}

size_t hloi_shape_padding_value_to_string(const hloi_shape *s, char *buf, size_t size)
{
	unsigned char bits[16] = { 0 };
	literal_padding_bits(s, bits);
	strbuf b = STRBUF_INIT;
	if (etype_get_kind(s->type) == KIND_PRED)
		sb_puts(&b, bits[0] ? "1" : "0");
	else
		literal_print_element(&b, s->type, bits);
	size_t n = copy_out(&b, buf, size);
	sb_free(&b);
	return n;
}

const char *hloi_shape_element_type(const hloi_shape *s)
{
	if (shape_is_tuple(s))
		return "tuple";
	const char *n = etype_name(s->type);
	return n ? n : "invalid";
}

size_t hloi_shape_to_string(const hloi_shape *s, int with_layout, char *buf, size_t size)
{
	strbuf b = STRBUF_INIT;
	shape_print(&b, s, with_layout);
	size_t n = copy_out(&b, buf, size);
	sb_free(&b);
	return n;
}

hloi_status hloi_shape_index_to_linear(const hloi_shape *s, const int64_t *index, int64_t *out)
{
	if (shape_is_tuple(s))
		return HLOI_EINVAL;
	for (int d = 0; d < s->rank; d++)
		if (index[d] < 0 || index[d] >= s->dims[d])
			return HLOI_EINVAL;
	*out = index_to_linear(s, index);
	return HLOI_OK;
}

hloi_status hloi_shape_linear_to_index(const hloi_shape *s, int64_t linear, int64_t *index, int *is_padding)
{
	int64_t n;
	if (shape_is_tuple(s) || shape_buffer_elements(s, &n) || linear < 0 || linear >= n)
		return HLOI_EINVAL;
	*is_padding = index_from_linear(s, linear, index);
	return HLOI_OK;
}

/* --- literals --------------------------------------------------------------- */

void hloi_literal_array_free(hloi_literal **lits, size_t count)
{
	if (!lits)
		return;
	for (size_t i = 0; i < count; i++)
		literal_destroy(lits[i]);
	hloi_free(lits);
}

hloi_status hloi_literal_parse_list(hloi_literal ***out, size_t *count, hloi_context *ctx,
				    const char *name, const char *text, size_t len)
{
	*out = NULL;
	*count = 0;
	arena a;
	arena_init(&a);
	shape *shapes = NULL;
	lit_node **trees = NULL;
	size_t n = 0;
	int src = -1;
	hloi_literal **lits = NULL;
	hloi_status st = text_parse_literals(&a, ctx, &src, name, text, len, &shapes, &trees, &n);
	if (st != HLOI_OK)
		goto cleanup;
	lits = hloi_calloc(n ? n : 1, sizeof *lits);
	if (!lits) {
		st = HLOI_ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		if (!shapes[i].has_layout && shape_is_array(&shapes[i]))
			layout_set_default(&shapes[i]);
		char msg[512];
		if (shape_validate(&shapes[i], msg, sizeof msg)) {
			diag_error(ctx, src, trees[i]->at, "%s", msg);
			st = HLOI_EPARSE;
			continue;
		}
		hloi_status s2 = literal_from_tree(&lits[i], ctx, src, trees[i], &shapes[i]);
		if (s2 != HLOI_OK && st == HLOI_OK)
			st = s2;
	}
	if (st != HLOI_OK)
		goto cleanup;
	*out = lits;
	*count = n;
	lits = NULL;
cleanup:
	hloi_literal_array_free(lits, n);
	arena_release(&a);
	return st;
}

hloi_status hloi_literal_read_npy(hloi_literal **out, hloi_context *ctx, const char *path,
				  const hloi_shape *expect)
{
	return npy_read(out, ctx, path, expect);
}

hloi_status hloi_literal_write_npy(const hloi_literal *lit, hloi_context *ctx, const char *path)
{
	return npy_write(lit, ctx, path);
}

hloi_status hloi_literal_load(hloi_literal ***out, size_t *count, hloi_context *ctx, const char *path,
			      const hloi_shape *expect)
{
	*out = NULL;
	*count = 0;
	if (str_has_suffix(path, ".npy")) {
		hloi_literal **arr = hloi_calloc(1, sizeof *arr);
		if (!arr)
			return HLOI_ENOMEM;
		hloi_status st = npy_read(&arr[0], ctx, path, expect);
		if (st != HLOI_OK) {
			hloi_free(arr);
			return st;
		}
		*out = arr;
		*count = 1;
		return HLOI_OK;
	}
	char *text = NULL;
	size_t len = 0;
	hloi_status st = file_read_all(&text, &len, ctx, path);
	if (st != HLOI_OK)
		return st;
	int is_stdin = strcmp(path, "-") == 0;
	static const char npy_magic[6] = { (char)0x93, 'N', 'U', 'M', 'P', 'Y' };
	if (is_stdin && len >= 6 && memcmp(text, npy_magic, 6) == 0) {
		/* standard input has no name to go by: a .npy by its magic */
		hloi_literal **arr = hloi_calloc(1, sizeof *arr);
		st = arr ? npy_parse(&arr[0], ctx, "<stdin>", (const unsigned char *)text, len, expect) : HLOI_ENOMEM;
		if (st == HLOI_OK) {
			*out = arr;
			*count = 1;
		} else {
			hloi_free(arr);
		}
	} else {
		st = hloi_literal_parse_list(out, count, ctx, is_stdin ? "<stdin>" : path, text, len);
	}
	hloi_free(text);
	return st;
}

uint64_t hloi_literal_empty_subarrays(const hloi_literal *lit)
{
	return literal_print_empty_count(lit);
}

/* Literal text of n values, one after another, to `path`. With
 * `readable`, a tuple is written as the literal parser reads it back, its
 * shape then its values (`(f32[2], s32[]) ( {1, 2}, 3 )`); else as XLA's
 * ToString() prints it, without the shape of the whole. */
static hloi_status save_text(const hloi_literal *const *lits, size_t n, hloi_context *ctx, const char *path,
			     int readable)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t empty = literal_print_empty_count(lits[i]);
		if (empty > HLOI_PRINT_MAX_EMPTY_SUBARRAYS) {
			strbuf sh = STRBUF_INIT;
			shape_print(&sh, &lits[i]->shape, 0);
			diag_error_where(ctx, strcmp(path, "-") ? path : "<stdout>",
					 "cannot write %s as text: %" PRIu64 " empty sub-arrays (the limit is %u); "
					 "write it as .npy",
					 sh.oom ? "the value" : sb_str(&sh), empty, HLOI_PRINT_MAX_EMPTY_SUBARRAYS);
			sb_free(&sh);
			return HLOI_ENOMEM;
		}
	}
	file_out o;
	hloi_status st = file_out_open(&o, ctx, path);
	if (st != HLOI_OK)
		return st;
	strbuf b = STRBUF_INIT;
	b.sink = o.f;
	for (size_t i = 0; i < n; i++) {
		if (readable && shape_is_tuple(&lits[i]->shape)) {
			shape_print(&b, &lits[i]->shape, 0);
			sb_putc(&b, ' ');
			literal_print(&b, lits[i], 0, 1);
		} else {
			literal_print(&b, lits[i], 1, 0);
		}
		sb_putc(&b, '\n');
	}
	sb_flush(&b);
	int oom = b.oom;
	if (b.werr && !o.err)
		o.err = b.werr;
	sb_free(&b);
	if (oom)
		diag_error_where(ctx, path, "out of memory formatting the result");
	st = file_out_close(&o, ctx, oom);
	return oom ? HLOI_ENOMEM : st;
}

hloi_status hloi_literal_save(const hloi_literal *lit, hloi_context *ctx, const char *path)
{
	if (str_has_suffix(path, ".npy")) {
		if (!literal_is_dynamic(lit))
			return npy_write(lit, ctx, path);
		/* an array with `<=N` dimensions: the elements within its sizes */
		hloi_literal *c = NULL;
		hloi_status st = literal_compact(&c, lit);
		if (st != HLOI_OK) {
			diag_error_where(ctx, path, "out of memory writing the result");
			return st;
		}
		st = npy_write(c, ctx, path);
		literal_destroy(c);
		return st;
	}
	return save_text(&lit, 1, ctx, path, 0);
}

hloi_status hloi_literal_save_list(hloi_literal *const *lits, size_t n, hloi_context *ctx, const char *path)
{
	if (str_has_suffix(path, ".npy")) {
		if (n == 1)
			return hloi_literal_save(lits[0], ctx, path);
		diag_error_where(ctx, path, "a .npy file holds one array, not %zu values; write them as literal text", n);
		return HLOI_EINVAL;
	}
	return save_text((const hloi_literal *const *)lits, n, ctx, path, 1);
}

hloi_status hloi_literal_print(const hloi_literal *lit, FILE *f)
{
	if (literal_print_empty_count(lit) > HLOI_PRINT_MAX_EMPTY_SUBARRAYS)
		return HLOI_ENOMEM;
	strbuf b = STRBUF_INIT;
	b.sink = f;
	literal_print(&b, lit, 1, 0);
	sb_putc(&b, '\n');
	sb_flush(&b);
	hloi_status st = b.oom ? HLOI_ENOMEM : b.werr ? HLOI_EIO : HLOI_OK;
	sb_free(&b);
	return st;
}

const hloi_shape *hloi_literal_shape(const hloi_literal *lit)
{
	return &lit->shape;
}

size_t hloi_literal_tuple_size(const hloi_literal *lit)
{
	return shape_is_tuple(&lit->shape) ? lit->nelems : 0;
}

hloi_literal *hloi_literal_tuple_element(hloi_literal *lit, size_t i)
{
	return shape_is_tuple(&lit->shape) && i < lit->nelems ? lit->elems[i] : NULL;
}

int64_t hloi_literal_dim(const hloi_literal *lit, int d)
{
	const shape *s = &lit->shape;
	if (shape_is_tuple(s) || d < 0 || d >= s->rank)
		return -1;
	return s->dim_kind[d] == DIM_BOUNDED ? lit->dynamic_size[d] : s->dims[d];
}

void *hloi_literal_data(hloi_literal *lit)
{
	return shape_is_tuple(&lit->shape) ? NULL : lit->data;
}

size_t hloi_literal_size_bytes(const hloi_literal *lit)
{
	return lit->nbytes;
}

hloi_status hloi_literal_wrap(hloi_literal **out, hloi_context *ctx, const hloi_shape *s, void *data,
			      size_t nbytes, void (*release)(void *user, void *data), void *user)
{
	hloi_status st = literal_wrap(out, s, data, nbytes, release, user);
	if (st == HLOI_ENOMEM) {
		diag_error_where(ctx, NULL, "out of memory creating a literal");
	} else if (st != HLOI_OK) {
		int64_t want = 0;
		if (shape_is_array(s) && shape_byte_size(s, &want) == 0)
			diag_error_where(ctx, NULL, "cannot wrap %zu bytes as a literal of %" PRId64 " bytes", nbytes,
					 want);
		else
			diag_error_where(ctx, NULL, "cannot wrap a buffer as a literal of this shape (a tuple, or an invalid layout)");
	}
	return st;
}

hloi_status hloi_literal_new(hloi_literal **out, hloi_context *ctx, const hloi_shape *s)
{
	hloi_status st = literal_create(out, s);
	if (st == HLOI_ENOMEM)
		diag_error_where(ctx, NULL, "out of memory creating a literal");
	else if (st != HLOI_OK)
		diag_error_where(ctx, NULL, "cannot create a literal of this shape (size overflows)");
	return st;
}

void hloi_literal_free(hloi_literal *lit)
{
	literal_destroy(lit);
}

hloi_status hloi_literal_clone(hloi_literal **out, const hloi_literal *lit)
{
	*out = NULL;
	return literal_clone(out, lit);
}

/* --- run_hlo_module literals ------------------------------------------------- */

/* Protobuf text rather than binary: the first bytes hold no control
 * characters but white space, and the first word starts with a letter or
 * `#` (binary messages start with a key byte, 0x0a or 0x12 here, and soon
 * hold other control bytes). */
static int looks_like_text_proto(const char *t, size_t len)
{
	size_t i = 0, n = len < 256 ? len : 256;
	for (size_t k = 0; k < n; k++) {
		unsigned char c = (unsigned char)t[k];
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			return 0;
	}
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i < len && ((t[i] >= 'a' && t[i] <= 'z') || t[i] == '#');
}

hloi_status hloi_run_literals_load(hloi_literal ***out, size_t *count, hloi_context *ctx, const char *path)
{
	*out = NULL;
	*count = 0;
	char *data = NULL;
	size_t len = 0;
	hloi_status st = file_read_all(&data, &len, ctx, path);
	if (st != HLOI_OK)
		return st;
	int text = str_has_suffix(path, ".pbtxt") || str_has_suffix(path, ".txt") || looks_like_text_proto(data, len);
	st = proto_run_literals_read(out, count, ctx, path, (const unsigned char *)data, len, text);
	hloi_free(data);
	return st;
}

hloi_status hloi_run_literals_save(hloi_context *ctx, const char *path, hloi_literal *const *args, size_t nargs,
				   const hloi_literal *result, const hloi_literal *reference_result)
{
	unsigned char *data = NULL;
	size_t len = 0;
	hloi_status st = proto_run_literals_write(&data, &len, ctx, path, args, nargs, result, reference_result,
						  str_has_suffix(path, ".pbtxt"));
	if (st == HLOI_OK)
		st = file_write_all(ctx, path, data, len);
	hloi_free(data);
	return st;
}

/* --- modules ---------------------------------------------------------------- */

hloi_status hloi_module_parse(hloi_module **out, hloi_context *ctx, const char *name, const char *text,
			      size_t len)
{
	return text_parse_module(out, ctx, name, text, len);
}

/* doc/spec.md §1: HLO text starts with `HloModule`, `ENTRY`, or a name followed by
 * `{` (after white space and comments). */
static int looks_like_hlo(const char *t, size_t len)
{
	size_t i = 0;
	for (;;) {
		while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
			i++;
		if (i + 1 < len && t[i] == '/' && t[i + 1] == '/') {
			while (i < len && t[i] != '\n')
				i++;
		} else if (i + 1 < len && t[i] == '/' && t[i + 1] == '*') {
			const char *e = strstr(t + i + 2, "*/");
			if (!e)
				return 0;
			i = (size_t)(e - t) + 2;
		} else {
			break;
		}
	}
	if (len - i >= 9 && strncmp(t + i, "HloModule", 9) == 0)
		return 1;
	if (len - i >= 5 && strncmp(t + i, "ENTRY", 5) == 0)
		return 1;
	if (i < len && t[i] == '%')
		i++;
	size_t start = i;
	while (i < len && (t[i] == '_' || t[i] == '.' || t[i] == '-' || (t[i] >= 'a' && t[i] <= 'z') ||
			   (t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= '0' && t[i] <= '9')))
		i++;
	if (i == start)
		return 0;
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i < len && (t[i] == '{' || t[i] == '(');
}

/* Proto text format starts (after white space and `#` comments) with a
 * top-level field of HloModuleProto, HloProto or HloSnapshot followed by `:`,
 * `{` or `<`. */
static int looks_like_pbtxt(const char *t, size_t len)
{
	static const char *const fields[] = { "name", "entry_computation_name", "computations",
					      "host_program_shape", "id", "entry_computation_id",
					      "input_output_alias", "is_dynamic", "frontend_attributes",
					      "hlo_module", "hlo", "arguments", "result",
					      "execution_platform" };
	size_t i = 0;
	for (;;) {
		while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
			i++;
		if (i < len && t[i] == '#') {
			while (i < len && t[i] != '\n')
				i++;
		} else {
			break;
		}
	}
	size_t start = i;
	while (i < len && (t[i] == '_' || (t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
			   (t[i] >= '0' && t[i] <= '9')))
		i++;
	size_t n = i - start;
	int known = 0;
	for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++)
		if (strlen(fields[k]) == n && strncmp(t + start, fields[k], n) == 0)
			known = 1;
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return known && i < len && (t[i] == ':' || t[i] == '{' || t[i] == '<');
}

static hloi_format format_from_path(const char *path)
{
	if (str_has_suffix(path, ".hlo") || str_has_suffix(path, ".txt"))
		return HLOI_FORMAT_HLO;
	if (str_has_suffix(path, ".pb"))
		return HLOI_FORMAT_PB;
	if (str_has_suffix(path, ".pbtxt"))
		return HLOI_FORMAT_PBTXT;
	if (str_has_suffix(path, ".mlir"))
		return HLOI_FORMAT_MLIR;
	return HLOI_FORMAT_AUTO;
}

uint64_t hloi_default_memory_budget(void)
{
	return eval_default_budget();
}

/* Loads a program from `text` (len bytes, hloi_malloc'd; taken) named
 * `path` in diagnostics. */
static hloi_status load_taken(hloi_module **out, hloi_context *ctx, const char *path, char *text, size_t len,
			      hloi_format format)
{
	hloi_status st;
	if (format == HLOI_FORMAT_AUTO)
		format = format_from_path(path);
	if (format == HLOI_FORMAT_AUTO) {
		/* Sniffed: proto text, HLO text, else a binary proto (whose
		 * loader says so when it is not one). */
		if (looks_like_pbtxt(text, len))
			format = HLOI_FORMAT_PBTXT;
		else if (mlir_looks_like(text, len))
			format = HLOI_FORMAT_MLIR;
		else if (looks_like_hlo(text, len))
			format = HLOI_FORMAT_HLO;
		else if (len > 0 && memchr(text, '\0', len) == NULL && !(text[0] & 0x80) &&
			 (unsigned char)text[0] >= 0x20)
			format = HLOI_FORMAT_AUTO; /* text, but neither kind */
		else
			format = HLOI_FORMAT_PB;
	}
	switch (format) {
	case HLOI_FORMAT_HLO:
		st = text_parse_module_take(out, ctx, path, text, len);
		text = NULL;
		break;
	case HLOI_FORMAT_PB:
		st = proto_load_binary(out, ctx, path, (const unsigned char *)text, len);
		break;
	case HLOI_FORMAT_PBTXT:
		st = proto_load_text(out, ctx, path, text, len);
		break;
	case HLOI_FORMAT_MLIR:
		st = mlir_parse_module(out, ctx, path, text, len);
		break;
	default:
		diag_error_where(ctx, path,
				 "cannot tell the program's format; name it .hlo, .pb, .pbtxt or .mlir, or pass --format");
		st = HLOI_EPARSE;
		break;
	}
	hloi_free(text);
	return st;
}

hloi_status hloi_module_load(hloi_module **out, hloi_context *ctx, const char *path, hloi_format format)
{
	*out = NULL;
	char *text = NULL;
	size_t len = 0;
	hloi_status st = file_read_all(&text, &len, ctx, path);
	if (st != HLOI_OK)
		return st;
	return load_taken(out, ctx, path, text, len, format);
}

hloi_status hloi_module_load_memory(hloi_module **out, hloi_context *ctx, const char *name, const void *data,
				    size_t len, hloi_format format)
{
	*out = NULL;
	char *text = hloi_malloc(len + 1);
	if (!text) {
		diag_error_where(ctx, name, "out of memory");
		return HLOI_ENOMEM;
	}
	if (len)
		memcpy(text, data, len);
	text[len] = '\0';
	return load_taken(out, ctx, name ? name : "<memory>", text, len, format);
}

/* Whether the module's text is refused for holding more than
 * HLOI_PRINT_MAX_EMPTY_SUBARRAYS empty sub-arrays (hloi_module_print); if
 * so, says why, naming the constant with the most. */
static int module_text_refused(const hloi_module *m, hloi_context *ctx, const char *path)
{
	const computation *c;
	const instr *in;
	uint64_t total = text_print_empty_count(m, &c, &in);
	if (total <= HLOI_PRINT_MAX_EMPTY_SUBARRAYS)
		return 0;
	const hloi_literal *v = text_printed_literal(in);
	uint64_t most = literal_print_empty_count(v);
	const char *what = in->op == OP_CONSTANT ? "constant" : "the literal of";
	strbuf sh = STRBUF_INIT;
	shape_print(&sh, &v->shape, 0);
	const char *where = strcmp(path, "-") ? path : "<stdout>";
	const char *text = sh.oom ? "?" : sb_str(&sh);
	if (most > HLOI_PRINT_MAX_EMPTY_SUBARRAYS)
		diag_error_where(ctx, where,
				 "cannot write %s '%s' (%s) in computation '%s' as text: %" PRIu64
				 " empty sub-arrays (the limit is %u); write the program as .pb or .pbtxt",
				 what, in->name, text, c->name, most, HLOI_PRINT_MAX_EMPTY_SUBARRAYS);
	else
		diag_error_where(ctx, where,
				 "cannot write the program as text: its constants hold %" PRIu64
				 " empty sub-arrays (the limit is %u), %" PRIu64
				 " of them in %s '%s' (%s) in computation '%s'; write it as .pb or .pbtxt",
				 total, HLOI_PRINT_MAX_EMPTY_SUBARRAYS, most, what, in->name, text, c->name);
	sb_free(&sh);
	return 1;
}

static int put_file(void *arg, const void *data, size_t n)
{
	return file_out_write(arg, data, n);
}

hloi_status hloi_module_save(const hloi_module *m, hloi_context *ctx, const char *path, hloi_format format)
{
	if (format == HLOI_FORMAT_AUTO)
		format = format_from_path(path);
	hloi_status st;
	switch (format) {
	case HLOI_FORMAT_HLO: {
		if (module_text_refused(m, ctx, path))
			return HLOI_ENOMEM;
		proto_warn_text_drops(m, ctx, strcmp(path, "-") ? path : "<stdout>");
		strbuf b = STRBUF_INIT;
		text_print_module(&b, m);
		if (b.oom) {
			sb_free(&b);
			diag_error_where(ctx, path, "out of memory formatting the program");
			return HLOI_ENOMEM;
		}
		st = file_write_all(ctx, path, sb_str(&b), b.len);
		sb_free(&b);
		return st;
	}
	case HLOI_FORMAT_PB: {
		/* written as it is packed (a million instructions' bytes are
		 * not gathered in one buffer first) */
		file_out o;
		st = file_out_open(&o, ctx, path);
		if (st != HLOI_OK)
			return st;
		st = proto_save_binary_to(put_file, &o, m, ctx);
		hloi_status closed = file_out_close(&o, ctx, st != HLOI_OK && st != HLOI_EIO);
		return st == HLOI_EIO || st == HLOI_OK ? closed : st;
	}
	case HLOI_FORMAT_PBTXT: {
		char *data = NULL;
		size_t len = 0;
		st = proto_save_text(&data, &len, m, ctx);
		if (st == HLOI_OK)
			st = file_write_all(ctx, path, data, len);
		hloi_free(data);
		return st;
	}
	case HLOI_FORMAT_MLIR:
		diag_error_where(ctx, path, "hloi reads StableHLO (.mlir) but does not write it; write .hlo, .pb or .pbtxt");
		return HLOI_EINVAL;
	default:
		diag_error_where(ctx, path, "cannot tell the output format; name it .hlo, .pb or .pbtxt");
		return HLOI_EINVAL;
	}
}

size_t hloi_module_snapshot_input_count(const hloi_module *m)
{
	return m->nsnapshot_args > 0 ? (size_t)m->nsnapshot_args : 0;
}

hloi_literal *hloi_module_snapshot_input(const hloi_module *m, size_t i)
{
	return i < hloi_module_snapshot_input_count(m) ? m->snapshot_args[i] : NULL;
}

void hloi_module_free(hloi_module *m)
{
	module_destroy(m);
}

hloi_status hloi_module_check(hloi_module *m, hloi_context *ctx, const hloi_check_options *opts)
{
	hloi_check_options defaults = HLOI_CHECK_OPTIONS_INIT;
	if (!opts)
		opts = &defaults;
	hloi_status st = check_module(m, ctx, opts);
	if (st != HLOI_OK || opts->version < 4 || !opts->allow_mixed_precision)
		return st;
	/* the mixed types made explicit with converts, then checked again */
	size_t changed = 0;
	st = lower_mixed_precision(m, ctx, &changed);
	if (st == HLOI_OK && changed)
		st = check_module(m, ctx, opts);
	return st;
}

int hloi_module_shapes_written(const hloi_module *m)
{
	for (int i = 0; i < m->ncomps; i++)
		for (int k = 0; k < m->comps[i]->ninstrs; k++) {
			const instr *in = m->comps[i]->instrs[k];
			if (!in->has_shape && in->shape->type == ET_INVALID)
				return 0;
		}
	return 1;
}

hloi_status hloi_module_lower(hloi_module *m, hloi_context *ctx)
{
	return lower_module(m, ctx);
}

uint64_t hloi_module_empty_subarrays(const hloi_module *m, const char **comp_name,
				     const char **constant, const hloi_literal **value)
{
	const computation *c;
	const instr *in;
	uint64_t total = text_print_empty_count(m, &c, &in);
	if (comp_name)
		*comp_name = c ? c->name : NULL;
	if (constant)
		*constant = in ? in->name : NULL;
	if (value)
		*value = in ? text_printed_literal(in) : NULL;
	return total;
}

hloi_status hloi_module_print(const hloi_module *m, FILE *f)
{
	if (text_print_empty_count(m, NULL, NULL) > HLOI_PRINT_MAX_EMPTY_SUBARRAYS)
		return HLOI_ENOMEM;
	strbuf b = STRBUF_INIT;
	b.sink = f;
	text_print_module(&b, m);
	sb_flush(&b);
	hloi_status st = b.oom ? HLOI_ENOMEM : b.werr ? HLOI_EIO : HLOI_OK;
	sb_free(&b);
	return st;
}

hloi_status hloi_module_print_dot(const hloi_module *m, FILE *f)
{
	strbuf b = STRBUF_INIT;
	text_print_dot(&b, m);
	if (b.oom) {
		sb_free(&b);
		return HLOI_ENOMEM;
	}
	size_t len = b.len;
	size_t w = fwrite(sb_str(&b), 1, len, f);
	sb_free(&b);
	return w == len ? HLOI_OK : HLOI_EIO;
}

static hloi_status write_all(strbuf *b, FILE *f)
{
	if (b->oom)
		return HLOI_ENOMEM;
	size_t len = b->len;
	return fwrite(sb_str(b), 1, len, f) == len ? HLOI_OK : HLOI_EIO;
}

/* A module with `?` dimensions not yet sized by a run has no sizes to
 * plan with (the plan of a sized one is its last run's). */
static int unsized(const hloi_module *m, hloi_context *ctx)
{
	if (!m->unbounded || !m->entry)
		return 0;
	for (int k = 0; k < m->entry->nparams; k++)
		if (shape_has_unbounded(m->entry->params[k]->result)) {
			if (ctx)
				diag_error_where(ctx, m->filename,
						 "unsupported: planning a module with `?` dimensions before a run gives them its inputs' sizes");
			return 1;
		}
	return 0;
}

hloi_status hloi_module_plan_print(const hloi_module *m, hloi_context *ctx, const hloi_run_options *opts, FILE *f)
{
	if (!m->checked) {
		diag_error_where(ctx, NULL, "the module must be checked before it is planned");
		return HLOI_EINVAL;
	}
	if (unsized(m, ctx))
		return HLOI_EUNSUPPORTED;
	strbuf b = STRBUF_INIT;
	hloi_status st = eval_plan_text(&b, m, opts);
	if (st == HLOI_OK)
		st = write_all(&b, f);
	sb_free(&b);
	return st;
}

/* The cost report of m's plan (p NULL) or the report of profile p, as r
 * asks, written to f. */
static hloi_status print_report(const hloi_module *m, const hloi_run_options *opts, const hloi_profile *p,
				const hloi_report_options *r, FILE *f)
{
	cost_machine mach = { 0, 0 };
	report_opts o = { 0, 0, NULL, NULL };
	if (r) {
		o.json = r->json;
		o.top = r->top;
		o.machine_from = r->machine_from;
		if (r->machine) {
			mach.gflops = r->machine->gflops;
			mach.gbps = r->machine->gbps;
			o.machine = &mach;
		}
	}
	strbuf b = STRBUF_INIT;
	hloi_status st = p ? eval_profile_report(&b, p, m, &o) : eval_cost_report(&b, m, opts, &o);
	if (st == HLOI_OK)
		st = write_all(&b, f);
	sb_free(&b);
	return st;
}

hloi_status hloi_module_cost_print(const hloi_module *m, hloi_context *ctx, const hloi_run_options *opts,
				   const hloi_report_options *r, FILE *f)
{
	if (!m->checked) {
		diag_error_where(ctx, NULL, "the module must be checked before it is planned");
		return HLOI_EINVAL;
	}
	if (unsized(m, ctx))
		return HLOI_EUNSUPPORTED;
	return print_report(m, opts, NULL, r, f);
}

uint64_t hloi_profile_runs(const hloi_profile *p)
{
	return p ? p->runs : 0;
}

hloi_status hloi_profile_print(const hloi_profile *p, const hloi_module *m, const hloi_report_options *r, FILE *f)
{
	if (!p || !m || !p->runs || !m->checked)
		return HLOI_EINVAL;
	return print_report(m, NULL, p, r, f);
}

hloi_status hloi_profile_write_trace(const hloi_profile *p, FILE *f)
{
	return p ? eval_profile_trace(p, f) : HLOI_EINVAL;
}

int hloi_machine_calibrate(hloi_machine *out, int threads, char *why, size_t nwhy)
{
	cost_machine m;
	int rc = eval_calibrate(&m, threads, why, nwhy);
	out->gflops = m.gflops;
	out->gbps = m.gbps;
	return rc;
}

hloi_status hloi_module_plan_peak_bytes(const hloi_module *m, hloi_context *ctx, const hloi_run_options *opts,
					uint64_t *out)
{
	*out = 0;
	if (!m->checked) {
		diag_error_where(ctx, NULL, "the module must be checked before it is planned");
		return HLOI_EINVAL;
	}
	if (unsized(m, ctx))
		return HLOI_EUNSUPPORTED;
	return eval_plan_peak(m, opts, out);
}

hloi_status hloi_module_print_dot_plan(const hloi_module *m, const hloi_run_options *opts, FILE *f)
{
	if (!m->checked)
		return HLOI_EINVAL;
	if (unsized(m, NULL))
		return hloi_module_print_dot(m, f);  /* no plan before sizes: the graph alone */
	strbuf b = STRBUF_INIT;
	hloi_status st = eval_plan_dot(&b, m, opts);
	if (st == HLOI_OK)
		st = write_all(&b, f);
	sb_free(&b);
	return st;
}

size_t hloi_module_parameter_count(const hloi_module *m)
{
	return m->checked && m->entry ? (size_t)m->entry->nparams : 0;
}

/* Parameter i's shape as declared when it has `?` dimensions (a run sizes
 * them from its inputs, and the result shape then holds the last run's
 * sizes), else its checked shape. */
static const shape *declared_parameter(const hloi_module *m, size_t i)
{
	const instr *p = m->entry->params[i];
	return m->unbounded && p->has_shape && shape_has_unbounded(p->shape) ? p->shape : p->result;
}

const hloi_shape *hloi_module_parameter_shape(const hloi_module *m, size_t i)
{
	if (i >= hloi_module_parameter_count(m))
		return NULL;
	return declared_parameter(m, i);
}

int hloi_module_parameter_accepts(const hloi_module *m, size_t i, const hloi_literal *lit)
{
	if (i >= hloi_module_parameter_count(m) || !lit)
		return 0;
	const shape *s = declared_parameter(m, i);
	if (shape_is_array(s) && !shape_is_static(s))
		return literal_fits_bounds(lit, s);
	return shape_compatible(&lit->shape, s);
}

const hloi_shape *hloi_module_result_shape(const hloi_module *m)
{
	if (!m->checked || !m->entry || !m->entry->root)
		return NULL;
	const instr *r = m->entry->root;
	return m->unbounded && r->has_shape && shape_has_unbounded(r->shape) ? r->shape : r->result;
}

const char *hloi_module_parameter_name(const hloi_module *m, size_t i)
{
	if (i >= hloi_module_parameter_count(m))
		return NULL;
	return m->entry->params[i]->name;
}

/* A module with `?` parameters is checked again with its inputs' sizes
 * before it runs (check_module_sized); a failure leaves it unrunnable until
 * the next sized check. */
static hloi_status size_unbounded(hloi_module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs)
{
	if (!m->unbounded)
		return HLOI_OK;
	const shape *stack[16] = { 0 };
	const shape **shapes = ninputs <= 16 ? stack : hloi_calloc(ninputs, sizeof *shapes);
	if (!shapes)
		return HLOI_ENOMEM;
	for (size_t i = 0; i < ninputs; i++)
		shapes[i] = inputs[i] ? &inputs[i]->shape : NULL;
	hloi_status st = check_module_sized(m, ctx, shapes, ninputs);
	if (shapes != stack)
		hloi_free(shapes);
	return st;
}

/* A profiled run's wall time, from t0 (prof_now) to now, counted in the
 * run's profile. */
static void profile_run(const hloi_run_options *opts, uint64_t t0)
{
	if (opts && opts->version >= 6 && opts->profile) {
		int threads = opts->threads > 0 ? opts->threads : fx_machine_threads();
		prof_run_done(opts->profile, prof_now() - t0, threads);
	}
}

hloi_status hloi_module_run(hloi_module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			    const hloi_run_options *opts, hloi_literal **out)
{
	*out = NULL;
	if (!m->checked) {
		diag_error_where(ctx, NULL, "the module must be checked before it runs");
		return HLOI_EINVAL;
	}
	hloi_status st = size_unbounded(m, ctx, inputs, ninputs);
	if (st != HLOI_OK)
		return st;
	hloi_run_options defaults = HLOI_RUN_OPTIONS_INIT;
	uint64_t t0 = prof_now();
	st = eval_module(m, ctx, inputs, ninputs, opts ? opts : &defaults, out);
	profile_run(opts, t0);
	return st;
}

hloi_status hloi_module_run_into(hloi_module *m, hloi_context *ctx, hloi_literal *const *inputs,
				 size_t ninputs, const hloi_run_options *opts, hloi_literal *result)
{
	hloi_run_options defaults = HLOI_RUN_OPTIONS_INIT;
	hloi_status st = m->checked ? size_unbounded(m, ctx, inputs, ninputs) : HLOI_OK;
	if (st != HLOI_OK)
		return st;
	uint64_t t0 = prof_now();
	st = eval_module_into(m, ctx, inputs, ninputs, opts ? opts : &defaults, result);
	profile_run(opts, t0);
	return st;
}

size_t hloi_module_probe_matches(const hloi_module *m, const char *name)
{
	return m && name ? eval_probe_matches(m, name) : 0;
}

hloi_status hloi_module_conform_input(hloi_module *m, hloi_context *ctx, size_t i, const hloi_literal *lit,
				      const hloi_run_options *opts, hloi_literal **out)
{
	*out = NULL;
	if (!m->checked) {
		diag_error_where(ctx, NULL, "the module must be checked before its inputs are converted");
		return HLOI_EINVAL;
	}
	if (!lit || !hloi_module_parameter_accepts(m, i, lit)) {
		diag_error_where(ctx, NULL, "input %zu: %s", i,
				 i >= hloi_module_parameter_count(m) ? "the module has no such parameter"
								     : "not an input of the parameter's type and dimensions");
		return HLOI_EINVAL;
	}
	hloi_status st = eval_conform_input(m, lit, i, opts ? opts->threads : 0, out);
	if (st == HLOI_ENOMEM)
		diag_error_where(ctx, NULL, "out of memory converting input %zu", i);
	return st;
}

size_t hloi_module_participant_count(const hloi_module *m)
{
	if (!m || !m->checked)
		return 0;
	return m->participant_dependent ? (size_t)(m->replicas * m->partitions) : 1;
}

size_t hloi_module_partition_count(const hloi_module *m)
{
	return m && m->checked && m->partitions > 0 ? (size_t)m->partitions : 1;
}

hloi_status hloi_module_run_participants(hloi_module *m, hloi_context *ctx, hloi_literal *const *inputs,
					 size_t ninputs, const hloi_run_options *opts, hloi_literal **out)
{
	if (!m->checked) {
		diag_error_where(ctx, NULL, "the module must be checked before it runs");
		return HLOI_EINVAL;
	}
	hloi_status st = size_unbounded(m, ctx, inputs, ninputs);
	if (st != HLOI_OK)
		return st;
	hloi_run_options defaults = HLOI_RUN_OPTIONS_INIT;
	uint64_t t0 = prof_now();
	if (hloi_module_participant_count(m) == 1)
		st = eval_module(m, ctx, inputs, ninputs, opts ? opts : &defaults, out);
	else
		st = eval_module_participants(m, ctx, inputs, ninputs, opts ? opts : &defaults, out);
	profile_run(opts, t0);
	return st;
}

hloi_status hloi_literal_random(hloi_literal **out, hloi_context *ctx, const hloi_shape *s, uint64_t seed)
{
	return eval_random_literal(out, ctx, s, seed);
}

hloi_status hloi_module_fill_elided_constants(hloi_module *m, hloi_context *ctx, uint64_t seed, size_t *filled)
{
	return eval_fill_elided_constants(m, ctx, seed, filled);
}

int hloi_module_aliased_input(const hloi_module *m)
{
	return m ? eval_aliased_parameter(m) : -1;
}

void hloi_module_set_unbounded_size(hloi_module *m, int64_t n)
{
	if (m && n >= 0)
		m->unbounded_size = n;
}

hloi_status hloi_module_random_inputs(hloi_literal ***out, size_t *count, const hloi_module *m,
				      hloi_context *ctx, uint64_t seed)
{
	*out = NULL;
	*count = 0;
	if (!m->checked) {
		diag_error_where(ctx, NULL, "the module must be checked before inputs are made for it");
		return HLOI_EINVAL;
	}
	return eval_random_inputs(out, count, m, ctx, seed);
}

/* --- comparing results (hloi run --compare) -------------------------------- */

/* A float element as double (f16, bf16 and the f8/f4 types widened exactly). */
static double element_as_double(etype t, const void *p)
{
	switch (t) {
	case ET_F16: {
		uint16_t h;
		memcpy(&h, p, 2);
		return (double)f16_to_f32(h);
	}
	case ET_BF16: {
		uint16_t h;
		memcpy(&h, p, 2);
		return (double)bf16_to_f32(h);
	}
	case ET_F32: {
		float f;
		memcpy(&f, p, 4);
		return (double)f;
	}
	default: {
		const f8_format *f8 = f8_format_of(t);
		if (f8)
			return f8_to_f64(f8, *(const uint8_t *)p);
		double d;
		memcpy(&d, p, 8);
		return d;
	}
	}
}

static int elements_match(etype t, const void *e, const void *a, double abs_tol, double rel_tol)
{
	if (t == ET_PRED)
		return (*(const uint8_t *)e != 0) == (*(const uint8_t *)a != 0);
	if (etype_get_kind(t) == KIND_COMPLEX) {
		/* each part as a float of the part type */
		etype pt = t == ET_C64 ? ET_F32 : ET_F64;
		size_t w = (size_t)etype_byte_width(pt);
		return elements_match(pt, e, a, abs_tol, rel_tol) &&
		       elements_match(pt, (const char *)e + w, (const char *)a + w, abs_tol, rel_tol);
	}
	if (!etype_is_float(t))
		return memcmp(e, a, (size_t)etype_byte_width(t)) == 0;
	double x = element_as_double(t, e), y = element_as_double(t, a);
	if (x == y || (isnan(x) && isnan(y)))
		return 1;
	if (isnan(x) || isnan(y) || isinf(x) || isinf(y))
		return 0;
	double err = fabs(x - y);
	double rel = x != 0 ? err / fabs(x) : INFINITY;
	/* bf16 and f16: at least one unit in the last place, relative (2^-7,
	 * 2^-10), the difference one rounding of a sum summed in another order
	 * can make (the fast engine's dots) */
	double ulp = t == ET_BF16 ? 0x1p-7 : t == ET_F16 ? 0x1p-10 : 0;
	if (ulp > rel_tol)
		rel_tol = ulp;
	return !(err > abs_tol && rel > rel_tol);
}

/* The mismatch with the largest absolute error so far (compare_rec):
 * floats by |expected - got| (infinite when only one is NaN or infinite,
 * a complex number the larger of its parts'), other types by the first. */
typedef struct worst_mismatch {
	int seen;
	double err;
	strbuf line;
} worst_mismatch;

static double mismatch_error(etype t, const void *e, const void *a)
{
	if (etype_get_kind(t) == KIND_COMPLEX) {
		etype pt = t == ET_C64 ? ET_F32 : ET_F64;
		size_t w = (size_t)etype_byte_width(pt);
		double re = mismatch_error(pt, e, a), im = mismatch_error(pt, (const char *)e + w, (const char *)a + w);
		return re > im ? re : im;
	}
	if (!etype_is_float(t))
		return 0;
	double x = element_as_double(t, e), y = element_as_double(t, a);
	if (x == y || (isnan(x) && isnan(y)))
		return 0;
	if (isnan(x) || isnan(y) || isinf(x) || isinf(y))
		return INFINITY;
	return fabs(x - y);
}

/* "{1,0}: index (2): expected 1.5, got 1.75" into b. */
static void mismatch_line(strbuf *b, etype t, const int64_t *path, int depth, const int64_t *idx, int rank,
			  const void *e, const void *a)
{
	if (depth > 0) {
		sb_putc(b, '{');
		for (int d = 0; d < depth; d++)
			sb_printf(b, "%s%lld", d ? "," : "", (long long)path[d]);
		sb_puts(b, "}: ");
	}
	sb_puts(b, "index (");
	for (int d = 0; d < rank; d++)
		sb_printf(b, "%s%lld", d ? "," : "", (long long)idx[d]);
	sb_puts(b, "): expected ");
	literal_print_element(b, t, e);
	sb_puts(b, ", got ");
	literal_print_element(b, t, a);
}

/* Compares arrays, or tuples element by element; `path` names the tuple
 * element in report lines (`{1,0}: index (2): ...`); `worst` (may be NULL)
 * keeps the largest mismatch. */
static hloi_status compare_rec(const hloi_literal *expected, const hloi_literal *actual, hloi_context *ctx,
			       double abs_tol, double rel_tol, FILE *report, size_t max_report, size_t *bad,
			       int64_t *path, int depth, worst_mismatch *worst)
{
	const shape *es = &expected->shape, *as = &actual->shape;
	if (shape_is_tuple(es) && shape_is_tuple(as) && es->ntuple == as->ntuple && depth < HLOI_MAX_RANK &&
	    expected->nelems == (size_t)es->ntuple && actual->nelems == (size_t)as->ntuple) {
		for (int i = 0; i < es->ntuple; i++) {
			path[depth] = i;
			hloi_status st = compare_rec(expected->elems[i], actual->elems[i], ctx, abs_tol, rel_tol, report,
						     max_report, bad, path, depth + 1, worst);
			if (st != HLOI_OK)
				return st;
		}
		return HLOI_OK;
	}
	if (!shape_is_tuple(es) && !shape_is_tuple(as) && es->type == ET_TOKEN && as->type == ET_TOKEN)
		return HLOI_OK;  /* tokens carry no value: any two are equal */
	if (!shape_is_array(es) || !shape_is_array(as) || !shape_compatible(es, as)) {
		strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		shape_print(&a, es, 0);
		shape_print(&b, as, 0);
		diag_error_where(ctx, NULL, "cannot compare %s with %s", sb_str(&a), sb_str(&b));
		sb_free(&a);
		sb_free(&b);
		return HLOI_EINVAL;
	}
	/* `<=N` dimensions: the sizes must agree, then the elements within them */
	int64_t esz[HLOI_MAX_RANK], asz[HLOI_MAX_RANK], n = 1;
	literal_sizes(expected, esz);
	literal_sizes(actual, asz);
	for (int d = 0; d < es->rank; d++) {
		if (esz[d] != asz[d]) {
			if (report && *bad < max_report)
				fprintf(report, "dimension %d: expected size %lld, got %lld\n", d, (long long)esz[d],
					(long long)asz[d]);
			(*bad)++;
			return HLOI_OK;
		}
		n *= esz[d];
	}
	if (n == 0 || !expected->data || !actual->data)
		return HLOI_OK;
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	do {
		const void *e = literal_element(expected, idx), *a = literal_element(actual, idx);
		if (elements_match(es->type, e, a, abs_tol, rel_tol))
			continue;
		if (report && *bad < max_report) {
			strbuf b = STRBUF_INIT;
			mismatch_line(&b, es->type, path, depth, idx, es->rank, e, a);
			fprintf(report, "%s\n", sb_str(&b));
			sb_free(&b);
		}
		if (worst) {
			double err = mismatch_error(es->type, e, a);
			if (!worst->seen || err > worst->err) {
				worst->seen = 1;
				worst->err = err;
				sb_reset(&worst->line);
				mismatch_line(&worst->line, es->type, path, depth, idx, es->rank, e, a);
			}
		}
		(*bad)++;
	} while (index_next(es->rank, esz, idx));
	return HLOI_OK;
}

hloi_status hloi_literal_compare(const hloi_literal *expected, const hloi_literal *actual, hloi_context *ctx,
				 double abs_tol, double rel_tol, FILE *report, size_t max_report,
				 size_t *mismatches)
{
	int64_t path[HLOI_MAX_RANK];
	*mismatches = 0;
	return compare_rec(expected, actual, ctx, abs_tol, rel_tol, report, max_report, mismatches, path, 0, NULL);
}

hloi_status hloi_literal_compare_worst(const hloi_literal *expected, const hloi_literal *actual, hloi_context *ctx,
				       double abs_tol, double rel_tol, size_t *mismatches, char *worst, size_t size)
{
	int64_t path[HLOI_MAX_RANK];
	worst_mismatch w = { 0, 0, STRBUF_INIT };
	*mismatches = 0;
	hloi_status st = compare_rec(expected, actual, ctx, abs_tol, rel_tol, NULL, 0, mismatches, path, 0, &w);
	if (worst && size) {
		worst[0] = '\0';
		if (w.seen && etype_is_float(expected->shape.type) && !shape_is_tuple(&expected->shape))
			sb_printf(&w.line, " (error %g)", w.err);
		if (w.seen)
			snprintf(worst, size, "%s", sb_str(&w.line));
	}
	sb_free(&w.line);
	return st;
}

int hloi_mpi_launched(void)
{
	return mpi_launched();
}

hloi_status hloi_mpi_start(hloi_context *ctx)
{
	return mpi_start(ctx);
}

int hloi_mpi_rank(void)
{
	return mpi_rank();
}

int hloi_mpi_size(void)
{
	return mpi_size();
}

int hloi_mpi_owns(size_t p, size_t np)
{
	return !mpi_active() || mpi_owner((int64_t)p, (int64_t)np) == mpi_rank();
}

hloi_status hloi_mpi_gather(hloi_context *ctx, hloi_literal **out, size_t np, const volatile int *stop)
{
	return mpi_gather(ctx, out, (int64_t)np, stop);
}

void hloi_mpi_abort(int code)
{
	mpi_abort(code);
}

hloi_status hloi_mpi_finish(hloi_context *ctx, const volatile int *stop)
{
	return mpi_finish(ctx, stop);
}

hloi_status hloi_mpi_wait_run(hloi_context *ctx, const volatile int *stop)
{
	return mpi_active() ? mpi_run_wait(ctx, stop) : HLOI_OK;
}
