/* The wire-format checker that runs before protobuf-c unpacks anything
 * (protobuf-c 1.4 recurses without a depth limit, accepts strings that are
 * not UTF-8 and cuts them at NUL bytes, and says nothing about why it
 * fails), the classification of a file's root message, and the allocator
 * that routes protobuf-c's allocations through hloi's hook. */
#include <stdarg.h>
#include <string.h>

#include "proto/proto_internal.h"
#include "util/alloc.h"

/* --- allocator and small helpers ------------------------------------------------ */

static void *pa_alloc(void *data, size_t n)
{
	proto_alloc *pa = data;
	void *p = hloi_malloc(n ? n : 1);
	if (!p)
		pa->failed = 1;
	return p;
}

static void pa_free(void *data, void *p)
{
	(void)data;
	hloi_free(p);
}

void proto_alloc_init(proto_alloc *pa)
{
	pa->a.alloc = pa_alloc;
	pa->a.free = pa_free;
	pa->a.allocator_data = pa;
	pa->failed = 0;
}

const ProtobufCMessageDescriptor *proto_root_descriptor(proto_root r)
{
	switch (r) {
	case PROOT_HLO:
		return &xla__hlo_proto__descriptor;
	case PROOT_SNAPSHOT:
		return &xla__hlo_snapshot__descriptor;
	case PROOT_MODULE:
		break;
	}
	return &xla__hlo_module_proto__descriptor;
}

const char *proto_root_name(proto_root r)
{
	switch (r) {
	case PROOT_HLO:
		return "HloProto";
	case PROOT_SNAPSHOT:
		return "HloSnapshot";
	case PROOT_MODULE:
		break;
	}
	return "HloModuleProto";
}

int proto_utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t k;
		uint32_t cp, min;
		if (c >= 0xc2 && c <= 0xdf) {
			k = 1;
			cp = c & 0x1f;
			min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			k = 2;
			cp = c & 0x0f;
			min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			k = 3;
			cp = c & 0x07;
			min = 0x10000;
		} else {
			return 0;
		}
		if (n - i <= k)
			return 0;
		for (size_t j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + j] & 0x3fu);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += k + 1;
	}
	return 1;
}

/* Reads a varint at *pos: 0, or -1 when truncated, -2 when longer than ten
 * bytes or past 64 bits. */
static int read_varint(const unsigned char *p, size_t len, size_t *pos, uint64_t *out)
{
	uint64_t v = 0;
	for (int i = 0; i < 10; i++) {
		if (*pos >= len)
			return -1;
		unsigned char b = p[(*pos)++];
		if (i == 9 && b > 1)
			return -2;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -2;
}

int wire_next(const unsigned char *p, size_t len, size_t *pos, wire_field *f)
{
	uint64_t key;
	f->start = *pos;
	if (read_varint(p, len, pos, &key) || (key >> 3) == 0 || (key >> 3) > 536870911u)
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wt = (int)(key & 7);
	f->vstart = *pos;
	f->v = 0;
	f->p = NULL;
	f->n = 0;
	switch (f->wt) {
	case PROTOBUF_C_WIRE_TYPE_VARINT:
		return read_varint(p, len, pos, &f->v) ? -1 : 0;
	case PROTOBUF_C_WIRE_TYPE_64BIT:
	case PROTOBUF_C_WIRE_TYPE_32BIT: {
		size_t w = f->wt == PROTOBUF_C_WIRE_TYPE_64BIT ? 8 : 4;
		if (len - *pos < w)
			return -1;
		*pos += w;
		return 0;
	}
	case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
		if (read_varint(p, len, pos, &f->v) || f->v > len - *pos)
			return -1;
		f->p = p + *pos;
		f->n = (size_t)f->v;
		*pos += f->n;
		return 0;
	default:
		return -1;
	}
}

void wire_present(const unsigned char *p, size_t len, uint64_t present[2])
{
	present[0] = present[1] = 0;
	size_t pos = 0;
	wire_field f;
	while (pos < len && !wire_next(p, len, &pos, &f))
		if (f.num < 128)
			present[f.num / 64] |= (uint64_t)1 << (f.num % 64);
}

/* --- the checker ------------------------------------------------------------------ */

typedef struct wpath {
	const ProtobufCFieldDescriptor *f;   /* the field holding this message */
	size_t index;                        /* its position among repeats */
	const unsigned char *name;           /* the message's `name`, once seen */
	size_t name_len;
} wpath;

typedef struct wscan {
	const unsigned char *base;
	strbuf *where, *what;
	int depth;
	wpath path[PROTO_MAX_DEPTH + 2];
} wscan;

static int is_named(const ProtobufCFieldDescriptor *f, const ProtobufCMessageDescriptor *d)
{
	return f && f->type == PROTOBUF_C_TYPE_MESSAGE && f->descriptor == d;
}

/* Fills `where` with the computation and instruction around the error and
 * `what` with the message, prefixed by the field path below them. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int fail(wscan *ws, const ProtobufCFieldDescriptor *f, size_t at, const char *fmt, ...)
{
	sb_reset(ws->where);
	sb_reset(ws->what);
	int last_named = 0;
	for (int i = 1; i <= ws->depth; i++) {
		wpath *w = &ws->path[i];
		const char *kind = NULL;
		if (is_named(w->f, &xla__hlo_computation_proto__descriptor))
			kind = "computation";
		else if (is_named(w->f, &xla__hlo_instruction_proto__descriptor))
			kind = "instruction";
		if (!kind)
			continue;
		if (ws->where->len)
			sb_puts(ws->where, ", ");
		if (w->name)
			sb_printf(ws->where, "%s '%.*s'", kind, (int)w->name_len, (const char *)w->name);
		else
			sb_printf(ws->where, "%s #%zu", kind, w->index);
		last_named = i;
	}
	/* The field path below the named messages; a long one (deep nesting)
	 * shows its first and last steps. */
	strbuf path = STRBUF_INIT;
	int nseg = ws->depth - last_named + (f != NULL);
	int seg = 0;
	for (int i = last_named + 1; i <= ws->depth + (f != NULL); i++, seg++) {
		const ProtobufCFieldDescriptor *pf = i <= ws->depth ? ws->path[i].f : f;
		if (nseg > 8 && seg >= 3 && seg < nseg - 2) {
			if (seg == 3)
				sb_printf(&path, ".(%d more).", nseg - 5);
			continue;
		}
		if (path.len && path.s[path.len - 1] != '.')
			sb_putc(&path, '.');
		sb_puts(&path, pf->name);
		if (i <= ws->depth && pf->label == PROTOBUF_C_LABEL_REPEATED)
			sb_printf(&path, "[%zu]", ws->path[i].index);
	}
	if (path.len)
		sb_printf(ws->what, "field %s: ", sb_str(&path));
	sb_free(&path);
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(ws->what, fmt, ap);
	va_end(ap);
	sb_printf(ws->what, " (byte %zu)", at);
	return -1;
}

static int native_wire_type(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return PROTOBUF_C_WIRE_TYPE_32BIT;
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return PROTOBUF_C_WIRE_TYPE_64BIT;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
	case PROTOBUF_C_TYPE_MESSAGE:
		return PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
	default:
		return PROTOBUF_C_WIRE_TYPE_VARINT;
	}
}

/* A packed run of scalars: whole varints, or a multiple of the width. */
static int packed_ok(ProtobufCType t, const unsigned char *p, size_t len)
{
	int wt = native_wire_type(t);
	if (wt == PROTOBUF_C_WIRE_TYPE_32BIT)
		return len % 4 == 0;
	if (wt == PROTOBUF_C_WIRE_TYPE_64BIT)
		return len % 8 == 0;
	size_t pos = 0;
	uint64_t v;
	while (pos < len)
		if (read_varint(p, len, &pos, &v))
			return 0;
	return 1;
}

static const char *wire_type_name(int wt)
{
	switch (wt) {
	case PROTOBUF_C_WIRE_TYPE_VARINT:
		return "varint";
	case PROTOBUF_C_WIRE_TYPE_64BIT:
		return "64-bit";
	case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
		return "length-delimited";
	case PROTOBUF_C_WIRE_TYPE_32BIT:
		return "32-bit";
	}
	return "?";
}

static int scan_message(wscan *ws, const ProtobufCMessageDescriptor *d, const unsigned char *p,
			size_t len)
{
	size_t counts[128];
	memset(counts, 0, sizeof counts);
	size_t pos = 0;
	while (pos < len) {
		size_t start = pos;
		uint64_t key;
		int r = read_varint(p, len, &pos, &key);
		if (r)
			return fail(ws, NULL, (size_t)(p + start - ws->base),
				    r == -1 ? "truncated field key" : "overlong varint in a field key");
		int wt = (int)(key & 7);
		uint64_t num = key >> 3;
		if (num == 0 || num > 536870911u)
			return fail(ws, NULL, (size_t)(p + start - ws->base), "invalid field number %llu",
				    (unsigned long long)num);
		const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field(d, (unsigned)num);
		size_t vstart = pos;
		const unsigned char *payload = NULL;
		size_t plen = 0;
		uint64_t v;
		switch (wt) {
		case PROTOBUF_C_WIRE_TYPE_VARINT:
			r = read_varint(p, len, &pos, &v);
			if (r)
				return fail(ws, f, (size_t)(p + vstart - ws->base),
					    r == -1 ? "truncated varint" : "overlong varint");
			break;
		case PROTOBUF_C_WIRE_TYPE_64BIT:
			if (len - pos < 8)
				return fail(ws, f, (size_t)(p + vstart - ws->base), "truncated 64-bit value");
			pos += 8;
			break;
		case PROTOBUF_C_WIRE_TYPE_32BIT:
			if (len - pos < 4)
				return fail(ws, f, (size_t)(p + vstart - ws->base), "truncated 32-bit value");
			pos += 4;
			break;
		case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
			r = read_varint(p, len, &pos, &v);
			if (r)
				return fail(ws, f, (size_t)(p + vstart - ws->base),
					    r == -1 ? "truncated length" : "overlong length");
			if (v > len - pos)
				return fail(ws, f, (size_t)(p + vstart - ws->base),
					    "length %llu runs past the end of %s (%zu bytes left)",
					    (unsigned long long)v, ws->depth ? "its message" : "the data",
					    len - pos);
			payload = p + pos;
			plen = (size_t)v;
			pos += plen;
			break;
		case 3:
		case 4:
			return fail(ws, NULL, (size_t)(p + start - ws->base),
				    "field %llu uses groups (wire type %d), which proto3 does not have",
				    (unsigned long long)num, wt);
		default:
			return fail(ws, NULL, (size_t)(p + start - ws->base),
				    "field %llu has invalid wire type %d", (unsigned long long)num, wt);
		}
		if (!f)
			continue; /* an unknown field: skipped, as protobuf does */
		size_t idx = (size_t)(f - d->fields);
		size_t at = (size_t)(p + start - ws->base);
		int native = native_wire_type(f->type);
		if (wt != native) {
			if (!(wt == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED &&
			      f->label == PROTOBUF_C_LABEL_REPEATED))
				return fail(ws, f, at, "%s value where a %s one belongs", wire_type_name(wt),
					    wire_type_name(native));
			if (!packed_ok(f->type, payload, plen))
				return fail(ws, f, at, "malformed packed values");
		} else if (f->type == PROTOBUF_C_TYPE_STRING) {
			if (memchr(payload, '\0', plen))
				return fail(ws, f, at, "string holds a NUL byte");
			if (!proto_utf8_valid(payload, plen))
				return fail(ws, f, at, "string is not valid UTF-8");
			if (strcmp(f->name, "name") == 0 && !ws->path[ws->depth].name) {
				ws->path[ws->depth].name = payload;
				ws->path[ws->depth].name_len = plen;
			}
		} else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
			if (ws->depth + 1 > PROTO_MAX_DEPTH)
				return fail(ws, f, at, "messages nested deeper than %d levels", PROTO_MAX_DEPTH);
			ws->depth++;
			wpath *w = &ws->path[ws->depth];
			w->f = f;
			w->index = idx < 128 ? counts[idx] : 0;
			w->name = NULL;
			w->name_len = 0;
			if (scan_message(ws, f->descriptor, payload, plen))
				return -1;
			ws->depth--;
		}
		if (idx < 128)
			counts[idx]++;
	}
	return 0;
}

int wire_check(const ProtobufCMessageDescriptor *d, const unsigned char *data, size_t len,
	       strbuf *where, strbuf *what)
{
	wscan ws;
	ws.base = data;
	ws.where = where;
	ws.what = what;
	ws.depth = 0;
	memset(&ws.path[0], 0, sizeof ws.path[0]);
	return scan_message(&ws, d, data, len);
}

/* --- classification ------------------------------------------------------------- */

/* Whether the bytes parse as a run of fields (one level, lengths in bounds);
 * *first1 gets the payload of the first length-delimited field 1 and *has3
 * whether a length-delimited field 3 occurs. */
static int shallow(const unsigned char *p, size_t len, const unsigned char **first1, size_t *len1,
		   int *has3)
{
	size_t pos = 0;
	*first1 = NULL;
	*len1 = 0;
	*has3 = 0;
	while (pos < len) {
		uint64_t key, v;
		if (read_varint(p, len, &pos, &key))
			return 0;
		uint64_t num = key >> 3;
		if (num == 0)
			return 0;
		switch (key & 7) {
		case PROTOBUF_C_WIRE_TYPE_VARINT:
			if (read_varint(p, len, &pos, &v))
				return 0;
			break;
		case PROTOBUF_C_WIRE_TYPE_64BIT:
			if (len - pos < 8)
				return 0;
			pos += 8;
			break;
		case PROTOBUF_C_WIRE_TYPE_32BIT:
			if (len - pos < 4)
				return 0;
			pos += 4;
			break;
		case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
			if (read_varint(p, len, &pos, &v) || v > len - pos)
				return 0;
			if (num == 1 && !*first1) {
				*first1 = p + pos;
				*len1 = (size_t)v;
			}
			if (num == 3)
				*has3 = 1;
			pos += (size_t)v;
			break;
		default:
			return 0;
		}
	}
	return 1;
}

/* HloModuleProto's field 1 is its name, HloProto's the module, HloSnapshot's
 * the HloProto, and a module has computations (field 3). Names are text, so
 * a name never parses as a message with a field 3 (its key byte would be a
 * control character). */
proto_root wire_classify(const unsigned char *data, size_t len)
{
	const unsigned char *p1, *p2, *p3;
	size_t n1, n2, n3;
	int has3;
	if (!shallow(data, len, &p1, &n1, &has3) || !p1)
		return PROOT_MODULE;
	if (!shallow(p1, n1, &p2, &n2, &has3))
		return PROOT_MODULE;
	int p1_is_module = has3;
	if (p2 && shallow(p2, n2, &p3, &n3, &has3) && has3)
		return PROOT_SNAPSHOT;
	return p1_is_module ? PROOT_HLO : PROOT_MODULE;
}

/* --- the skeleton: the root message without its instructions -------------------- */

typedef struct skel_build {
	proto_skeleton *sk;
	const unsigned char *base;
	strbuf out;
	size_t cap_spans, cap_comps;
	int oom;
} skel_build;

static int skel_push(skel_build *b, size_t **v, size_t *n, size_t *cap, size_t x)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		size_t *nv = hloi_realloc(*v, nc * sizeof *nv);
		if (!nv)
			return b->oom = 1, -1;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = x;
	return 0;
}

/* Copies the fields of one message into b->out, descending into the
 * length-delimited fields numbered path[0], path[1], ... and leaving out
 * the last level (the instructions), whose offsets it records. The bytes
 * passed wire_check, so every key, varint and length is in bounds. */
static int skel_message(skel_build *b, const unsigned char *p, size_t len, const uint32_t *path,
			int npath)
{
	size_t pos = 0;
	wire_field f;
	while (pos < len) {
		if (wire_next(p, len, &pos, &f))
			return -1;
		if (f.wt != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED || f.num != path[0]) {
			sb_putn(&b->out, (const char *)p + f.start, pos - f.start);
			continue;
		}
		proto_skeleton *sk = b->sk;
		if (npath == 1) {
			if (skel_push(b, &sk->spans, &sk->nspans, &b->cap_spans,
				      (size_t)(p + f.vstart - b->base)))
				return -1;
			continue;
		}
		if (npath == 2 && skel_push(b, &sk->first, &sk->ncomps, &b->cap_comps, sk->nspans))
			return -1;
		/* The key, room for the longest length, the stripped payload;
		 * then the payload moves down behind its real length. */
		sb_putn(&b->out, (const char *)p + f.start, f.vstart - f.start);
		size_t at = b->out.len;
		sb_putn(&b->out, "\0\0\0\0\0\0\0\0\0\0", 10);
		if (skel_message(b, f.p, f.n, path + 1, npath - 1))
			return -1;
		if (b->out.oom)
			return b->oom = 1, -1;
		size_t plen = b->out.len - at - 10;
		unsigned char vb[10];
		size_t k = (size_t)(wire_put_varint(vb, plen) - vb);
		memmove(b->out.s + at + k, b->out.s + at + 10, plen);
		memcpy(b->out.s + at, vb, k);
		b->out.len = at + k + plen;
	}
	if (b->out.oom)
		return b->oom = 1, -1;
	return 0;
}

int wire_skeleton(proto_skeleton *sk, proto_root root, const unsigned char *data, size_t len)
{
	static const uint32_t snapshot_path[] = { 1, 1, 3, 2 }, hlo_path[] = { 1, 3, 2 },
			      module_path[] = { 3, 2 };
	const uint32_t *path = root == PROOT_SNAPSHOT ? snapshot_path : root == PROOT_HLO ? hlo_path : module_path;
	int npath = root == PROOT_SNAPSHOT ? 4 : root == PROOT_HLO ? 3 : 2;
	memset(sk, 0, sizeof *sk);
	skel_build b;
	memset(&b, 0, sizeof b);
	b.sk = sk;
	b.base = data;
	int r = skel_message(&b, data, len, path, npath);
	if (r == 0 && skel_push(&b, &sk->first, &sk->ncomps, &b.cap_comps, sk->nspans))
		r = -1;
	if (r == 0) {
		sk->ncomps--; /* the last entry closes the last computation */
		sk->len = b.out.len;
		sk->wire = (unsigned char *)sb_take(&b.out);
		if (!sk->wire)
			r = -1, b.oom = 1;
	}
	sb_free(&b.out);
	if (r) {
		wire_skeleton_free(sk);
		return b.oom ? -1 : -2;
	}
	return 0;
}

void wire_skeleton_free(proto_skeleton *sk)
{
	hloi_free(sk->wire);
	hloi_free(sk->spans);
	hloi_free(sk->first);
	memset(sk, 0, sizeof *sk);
}

const unsigned char *wire_skeleton_span(const proto_skeleton *sk, const unsigned char *data, size_t len,
					size_t i, size_t *n)
{
	size_t pos = sk->spans[i];
	uint64_t v;
	if (read_varint(data, len, &pos, &v) || v > len - pos)
		return NULL;
	*n = (size_t)v;
	return data + pos;
}

/* An instruction's name (field 1) and id (field 35), the last of each as
 * protobuf keeps, without unpacking it. */
void wire_name_id(const unsigned char *p, size_t len, const char **name, size_t *name_len, int64_t *id)
{
	size_t pos = 0;
	wire_field f;
	*name = "";
	*name_len = 0;
	*id = 0;
	while (pos < len && wire_next(p, len, &pos, &f) == 0) {
		if (f.num == 35 && f.wt == PROTOBUF_C_WIRE_TYPE_VARINT)
			*id = (int64_t)f.v;
		else if (f.num == 1 && f.wt == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) {
			*name = (const char *)f.p;
			*name_len = f.n;
		}
	}
}
