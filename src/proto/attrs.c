/* Attributes that HLO text writes as `name=value` and XLA's proto keeps in
 * fields (metadata, backend_config, frontend_attributes, name lists): their
 * text as XLA prints it, and parsers back to the fields. Also the C-style
 * escaping shared by these and the proto text format. */
#include <stdlib.h>
#include <string.h>

#include "proto/pbtxt.h"
#include "proto/proto_internal.h"
#include "util/alloc.h"

/* --- escapes ------------------------------------------------------------------ */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int pbtxt_unescape(const char *s, size_t n, char *out, size_t *outlen, size_t *bad)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			out[o++] = s[i];
			continue;
		}
		size_t start = i;
		if (++i >= n) {
			*bad = start;
			return -1;
		}
		char c = s[i];
		switch (c) {
		case 'n': out[o++] = '\n'; break;
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case 'a': out[o++] = '\a'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'v': out[o++] = '\v'; break;
		case '\\': case '\'': case '"': case '?':
			out[o++] = c;
			break;
		case 'x': case 'X': {
			int v = 0, k = 0;
			while (k < 2 && i + 1 < n && hexval(s[i + 1]) >= 0) {
				v = v * 16 + hexval(s[++i]);
				k++;
			}
			if (k == 0) {
				*bad = start;
				return -1;
			}
			out[o++] = (char)v;
			break;
		}
		case 'u': case 'U': {
			int digits = c == 'u' ? 4 : 8;
			uint32_t cp = 0;
			for (int k = 0; k < digits; k++) {
				if (i + 1 >= n || hexval(s[i + 1]) < 0) {
					*bad = start;
					return -1;
				}
				cp = cp * 16 + (uint32_t)hexval(s[++i]);
			}
			/* A \u escape is longer than its UTF-8, so `out` has room. */
			if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
				*bad = start;
				return -1;
			}
			o += put_utf8(out + o, cp);
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				int v = c - '0', k = 1;
				while (k < 3 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7') {
					v = v * 8 + (s[++i] - '0');
					k++;
				}
				if (v > 255) {
					*bad = start;
					return -1;
				}
				out[o++] = (char)v;
				break;
			}
			*bad = start;
			return -1;
		}
	}
	*outlen = o;
	return 0;
}

void pbtxt_escape(strbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '\n': sb_puts(b, "\\n"); break;
		case '\r': sb_puts(b, "\\r"); break;
		case '\t': sb_puts(b, "\\t"); break;
		case '"': sb_puts(b, "\\\""); break;
		case '\'': sb_puts(b, "\\'"); break;
		case '\\': sb_puts(b, "\\\\"); break;
		default:
			if (c < 0x20 || c >= 0x7f)
				sb_printf(b, "\\%03o", c);
			else
				sb_putc(b, (char)c);
		}
	}
}

/* --- a small cursor over attribute text ----------------------------------------- */

typedef struct cur {
	const char *s;
	size_t i, n;
} cur;

static void skip_ws(cur *c)
{
	while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' ||
			       c->s[c->i] == '\r'))
		c->i++;
}

static int eat(cur *c, char ch)
{
	skip_ws(c);
	if (c->i < c->n && c->s[c->i] == ch) {
		c->i++;
		return 1;
	}
	return 0;
}

static int is_word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '.' || ch == '-' || ch == '%';
}

/* A word of name characters; *out is an arena copy. */
static int word(cur *c, char **out, arena *a)
{
	skip_ws(c);
	size_t start = c->i;
	while (c->i < c->n && is_word_char(c->s[c->i]))
		c->i++;
	if (c->i == start)
		return -1;
	*out = arena_strndup(a, c->s + start, c->i - start);
	return *out ? 0 : -1;
}

/* A double-quoted, C-escaped string; *out is an unescaped arena copy. */
static int quoted(cur *c, char **out, size_t *outlen, arena *a)
{
	skip_ws(c);
	if (c->i >= c->n || c->s[c->i] != '"')
		return -1;
	size_t start = ++c->i;
	while (c->i < c->n && c->s[c->i] != '"') {
		if (c->s[c->i] == '\\')
			c->i++;
		c->i++;
	}
	if (c->i >= c->n)
		return -1;
	size_t len = c->i - start;
	c->i++;
	char *buf = arena_alloc(a, len + 1);
	size_t bad, olen;
	if (!buf || pbtxt_unescape(c->s + start, len, buf, &olen, &bad))
		return -1;
	buf[olen] = '\0';
	*out = buf;
	if (outlen)
		*outlen = olen;
	return 0;
}

/* A quoted string that may become a C string: no NUL bytes, valid UTF-8. */
static int text_string(cur *c, char **out, arena *a)
{
	size_t len;
	if (quoted(c, out, &len, a))
		return -1;
	if (strlen(*out) != len || !proto_utf8_valid((const unsigned char *)*out, len))
		return -1;
	return 0;
}

static int int32_value(cur *c, int32_t *out)
{
	skip_ws(c);
	size_t start = c->i;
	if (c->i < c->n && c->s[c->i] == '-')
		c->i++;
	size_t digits = c->i;
	int64_t v = 0;
	while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
		v = v * 10 + (c->s[c->i] - '0');
		if (v > INT32_MAX + 1LL)
			return -1;
		c->i++;
	}
	if (c->i == digits)
		return -1;
	if (c->s[start] == '-')
		v = -v;
	if (v > INT32_MAX || v < INT32_MIN)
		return -1;
	*out = (int32_t)v;
	return 0;
}

/* A balanced `{...}` taken verbatim (quotes respected). */
static int braced(cur *c, size_t *start, size_t *end)
{
	skip_ws(c);
	if (c->i >= c->n || c->s[c->i] != '{')
		return -1;
	*start = c->i;
	int depth = 0;
	while (c->i < c->n) {
		char ch = c->s[c->i++];
		if (ch == '"') {
			while (c->i < c->n && c->s[c->i] != '"') {
				if (c->s[c->i] == '\\')
					c->i++;
				c->i++;
			}
			if (c->i >= c->n)
				return -1;
			c->i++;
		} else if (ch == '{') {
			depth++;
		} else if (ch == '}' && --depth == 0) {
			*end = c->i;
			return 0;
		}
	}
	return -1;
}

static void put_quoted(strbuf *b, const char *s, size_t n)
{
	sb_putc(b, '"');
	pbtxt_escape(b, s, n);
	sb_putc(b, '"');
}

/* --- metadata ------------------------------------------------------------------ */

void attr_render_metadata(strbuf *b, const Xla__OpMetadata *md)
{
	strbuf t = STRBUF_INIT;
#define STR_FIELD(f)                                                    \
	if (md->f && md->f[0]) {                                        \
		if (t.len)                                              \
			sb_putc(&t, ' ');                               \
		sb_puts(&t, #f "=");                                    \
		put_quoted(&t, md->f, strlen(md->f));                   \
	}
#define INT_FIELD(f)                                                    \
	if (md->f) {                                                    \
		if (t.len)                                              \
			sb_putc(&t, ' ');                               \
		sb_printf(&t, #f "=%d", (int)md->f);                    \
	}
	STR_FIELD(op_type)
	STR_FIELD(op_name)
	STR_FIELD(source_file)
	INT_FIELD(source_line)
	INT_FIELD(source_end_line)
	INT_FIELD(source_column)
	INT_FIELD(source_end_column)
	STR_FIELD(deduplicated_name)
	INT_FIELD(stack_frame_id)
	STR_FIELD(scheduling_name)
#undef STR_FIELD
#undef INT_FIELD
	if (t.len) {
		sb_putc(b, '{');
		sb_putn(b, sb_str(&t), t.len);
		sb_putc(b, '}');
	}
	if (t.oom)
		b->oom = 1;
	sb_free(&t);
}

int attr_parse_metadata(const char *text, Xla__OpMetadata *md, arena *a)
{
	cur c = { text, 0, strlen(text) };
	if (!eat(&c, '{'))
		return -1;
	for (;;) {
		if (eat(&c, '}'))
			break;
		char *key;
		if (word(&c, &key, a) || !eat(&c, '='))
			return -1;
		char **sf = NULL;
		int32_t *inf = NULL;
		if (strcmp(key, "op_type") == 0)
			sf = &md->op_type;
		else if (strcmp(key, "op_name") == 0)
			sf = &md->op_name;
		else if (strcmp(key, "source_file") == 0)
			sf = &md->source_file;
		else if (strcmp(key, "deduplicated_name") == 0)
			sf = &md->deduplicated_name;
		else if (strcmp(key, "scheduling_name") == 0)
			sf = &md->scheduling_name;
		else if (strcmp(key, "source_line") == 0)
			inf = &md->source_line;
		else if (strcmp(key, "source_end_line") == 0)
			inf = &md->source_end_line;
		else if (strcmp(key, "source_column") == 0)
			inf = &md->source_column;
		else if (strcmp(key, "source_end_column") == 0)
			inf = &md->source_end_column;
		else if (strcmp(key, "stack_frame_id") == 0)
			inf = &md->stack_frame_id;
		else
			return -1;
		if (sf ? text_string(&c, sf, a) : int32_value(&c, inf))
			return -1;
		eat(&c, ',');
	}
	skip_ws(&c);
	return c.i == c.n ? 0 : -1;
}

/* --- backend_config ---------------------------------------------------------------- */

void attr_render_backend_config(strbuf *b, const uint8_t *data, size_t len)
{
	if (len == 0)
		return;
	if (data[0] == '{' && data[len - 1] == '}' && !memchr(data, '\0', len) &&
	    !memchr(data, '\n', len) && proto_utf8_valid(data, len))
		sb_putn(b, (const char *)data, len);
	else
		put_quoted(b, (const char *)data, len);
}

int attr_parse_backend_config(const char *text, ProtobufCBinaryData *out, arena *a)
{
	cur c = { text, 0, strlen(text) };
	skip_ws(&c);
	if (c.i < c.n && c.s[c.i] == '{') {
		size_t s, e;
		if (braced(&c, &s, &e))
			return -1;
		skip_ws(&c);
		if (c.i != c.n)
			return -1;
		char *copy = arena_strndup(a, text + s, e - s);
		if (!copy)
			return -1;
		out->data = (uint8_t *)copy;
		out->len = e - s;
		return 0;
	}
	char *buf;
	size_t len;
	if (quoted(&c, &buf, &len, a))
		return -1;
	skip_ws(&c);
	if (c.i != c.n)
		return -1;
	out->data = (uint8_t *)buf;
	out->len = len;
	return 0;
}

/* --- frontend_attributes ---------------------------------------------------------- */

static int is_hloi_key(const char *k)
{
	return strncmp(k, HLOI_KEY_PREFIX, strlen(HLOI_KEY_PREFIX)) == 0;
}

static int entry_cmp(const void *x, const void *y)
{
	const Xla__FrontendAttributes__MapEntry *a = *(Xla__FrontendAttributes__MapEntry *const *)x;
	const Xla__FrontendAttributes__MapEntry *b = *(Xla__FrontendAttributes__MapEntry *const *)y;
	return strcmp(a->key, b->key);
}

/* A value that is itself a JSON object prints bare, as XLA does. */
static int is_json_dict(const char *v)
{
	size_t n = strlen(v);
	return n >= 2 && v[0] == '{' && v[n - 1] == '}';
}

void attr_render_frontend(strbuf *b, const Xla__FrontendAttributes *fa)
{
	size_t n = 0;
	for (size_t i = 0; i < fa->n_map; i++)
		if (!is_hloi_key(fa->map[i]->key))
			n++;
	if (n == 0)
		return;
	Xla__FrontendAttributes__MapEntry **sorted = hloi_calloc(n, sizeof *sorted);
	if (!sorted) {
		b->oom = 1;
		return;
	}
	n = 0;
	for (size_t i = 0; i < fa->n_map; i++)
		if (!is_hloi_key(fa->map[i]->key))
			sorted[n++] = fa->map[i];
	qsort(sorted, n, sizeof *sorted, entry_cmp);
	sb_putc(b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_putc(b, ',');
		sb_puts(b, sorted[i]->key);
		sb_putc(b, '=');
		if (is_json_dict(sorted[i]->value))
			sb_puts(b, sorted[i]->value);
		else
			put_quoted(b, sorted[i]->value, strlen(sorted[i]->value));
	}
	sb_putc(b, '}');
	hloi_free(sorted);
}

int attr_parse_frontend(const char *text, char ***keys, char ***values, size_t *n, arena *a)
{
	cur c = { text, 0, strlen(text) };
	size_t cap = 0, count = 0;
	char **k = NULL, **v = NULL;
	if (!eat(&c, '{'))
		return -1;
	for (;;) {
		if (eat(&c, '}'))
			break;
		char *key, *val;
		skip_ws(&c);
		if (c.i < c.n && c.s[c.i] == '"' ? text_string(&c, &key, a) : word(&c, &key, a))
			return -1;
		if (!eat(&c, '='))
			return -1;
		skip_ws(&c);
		if (c.i < c.n && c.s[c.i] == '{') {
			size_t s, e;
			if (braced(&c, &s, &e) || !(val = arena_strndup(a, text + s, e - s)))
				return -1;
		} else if (text_string(&c, &val, a)) {
			return -1;
		}
		if (count == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			char **nk = arena_array(a, ncap, sizeof *nk);
			char **nv = arena_array(a, ncap, sizeof *nv);
			if (!nk || !nv)
				return -1;
			if (count) {
				memcpy(nk, k, count * sizeof *nk);
				memcpy(nv, v, count * sizeof *nv);
			}
			k = nk;
			v = nv;
			cap = ncap;
		}
		k[count] = key;
		v[count] = val;
		count++;
		eat(&c, ',');
	}
	skip_ws(&c);
	if (c.i != c.n)
		return -1;
	*keys = k;
	*values = v;
	*n = count;
	return 0;
}

/* --- name lists ------------------------------------------------------------------------ */

void attr_render_names(strbuf *b, const char *const *names, size_t n)
{
	sb_putc(b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_puts(b, ", ");
		sb_puts(b, names[i]);
	}
	sb_putc(b, '}');
}

int attr_parse_names(const char *text, char ***names, size_t *n, arena *a)
{
	cur c = { text, 0, strlen(text) };
	size_t cap = 0, count = 0;
	char **v = NULL;
	if (!eat(&c, '{'))
		return -1;
	for (;;) {
		if (eat(&c, '}'))
			break;
		if (count && !eat(&c, ','))
			return -1;
		char *w;
		if (word(&c, &w, a))
			return -1;
		if (w[0] == '%')
			w++;
		if (!w[0])
			return -1;
		if (count == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			char **nv = arena_array(a, ncap, sizeof *nv);
			if (!nv)
				return -1;
			if (count)
				memcpy(nv, v, count * sizeof *nv);
			v = nv;
			cap = ncap;
		}
		v[count++] = w;
	}
	skip_ws(&c);
	if (c.i != c.n)
		return -1;
	*names = v;
	*n = count;
	return 0;
}

/* --- where attributes go --------------------------------------------------------------- */

int attr_slot(const char *name)
{
	static const char *const callees[] = { "condition", "body", "select", "scatter",
					       "branch_computations", "true_computation",
					       "false_computation", "called_computations" };
	for (size_t i = 0; i < sizeof callees / sizeof callees[0]; i++)
		if (strcmp(name, callees[i]) == 0)
			return 0;
	if (strcmp(name, "kind") == 0)
		return 1;
	if (strcmp(name, "control-predecessors") == 0)
		return 3;
	if (strcmp(name, "frontend_attributes") == 0)
		return 4;
	if (strcmp(name, "metadata") == 0)
		return 5;
	if (strcmp(name, "backend_config") == 0)
		return 6;
	return 2;
}

int attr_order_cmp(const char *a, const char *b)
{
	int sa = attr_slot(a), sb = attr_slot(b);
	if (sa != sb)
		return sa < sb ? -1 : 1;
	return sa == 2 ? strcmp(a, b) : 0;
}

int opcode_always_has_dimensions(opcode op)
{
	switch (op) {
	case OP_BROADCAST:
	case OP_TRANSPOSE:
	case OP_REVERSE:
	case OP_REDUCE:
	case OP_CONCATENATE:
	case OP_SORT:
	case OP_MAP:
	case OP_ALL_GATHER:
	case OP_ALL_GATHER_START:
	case OP_REDUCE_SCATTER:
		return 1;
	default:
		return 0;
	}
}

const char *callee_typed_attr(opcode op)
{
	switch (op) {
	case OP_FUSION:
	case OP_ASYNC_START:
	case OP_ASYNC_UPDATE:
	case OP_ASYNC_DONE:
		return "calls";
	case OP_CALL:
	case OP_MAP:
	case OP_REDUCE:
	case OP_REDUCE_WINDOW:
	case OP_SCATTER:
	case OP_SORT:
	case OP_ALL_REDUCE:
	case OP_ALL_REDUCE_START:
	case OP_REDUCE_SCATTER:
		return "to_apply";
	default:
		return NULL;
	}
}

int callee_render(opcode op, const char *const *names, size_t n, const char **anames,
		  char **avalues, arena *a)
{
	if (n == 0)
		return 0;
	if (n == 2 && (op == OP_WHILE || op == OP_SELECT_AND_SCATTER)) {
		anames[0] = op == OP_WHILE ? "condition" : "select";
		anames[1] = op == OP_WHILE ? "body" : "scatter";
		avalues[0] = arena_strdup(a, names[0]);
		avalues[1] = arena_strdup(a, names[1]);
		return avalues[0] && avalues[1] ? 2 : -1;
	}
	anames[0] = op == OP_CONDITIONAL ? "branch_computations" : "called_computations";
	strbuf b = STRBUF_INIT;
	attr_render_names(&b, names, n);
	avalues[0] = b.oom ? NULL : arena_strdup(a, sb_str(&b));
	sb_free(&b);
	return avalues[0] ? 1 : -1;
}
