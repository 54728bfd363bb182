/* The text forms of the attributes XLA keeps in structured proto fields
 * and hloi keeps as text (metadata, backend_config, frontend_attributes,
 * statistics, result_accuracy, parameter_replication,
 * output_to_operand_aliasing, origin, domain): printers as XLA prints them
 * and parsers as XLA's parser reads them (hlo_instruction.cc,
 * hlo_op_metadata.cc, hlo_parser.cc at openxla/xla 841f8d2d). Also the
 * C-style escaping shared with the proto text format. */
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
		/* the run of bytes that need no escape, in one piece */
		size_t run = i;
		while (run < n && (unsigned char)s[run] >= 0x20 && (unsigned char)s[run] < 0x7f && s[run] != '"' &&
		       s[run] != '\'' && s[run] != '\\')
			run++;
		if (run > i) {
			sb_putn(b, s + i, run - i);
			i = run - 1;
			continue;
		}
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
/* --- metadata (hlo_op_metadata.cc's OpMetadataToString, hlo_parser.cc's
 * ParseMetadata) -------------------------------------------------------------- */

static void sep(strbuf *b, size_t start)
{
	if (b->len > start)
		sb_putc(b, ' ');
}

void metadata_print_body(strbuf *b, const Xla__OpMetadata *md)
{
	size_t start = b->len;
#define STR_FIELD(f)                                           \
	if (md->f && md->f[0]) {                               \
		sep(b, start);                                 \
		sb_puts(b, #f "=");                            \
		put_quoted(b, md->f, strlen(md->f));           \
	}
#define INT_FIELD(f)                                           \
	if (md->f) {                                           \
		sep(b, start);                                 \
		sb_puts(b, #f "=");                            \
		sb_put_int(b, (int)md->f);                     \
	}
	STR_FIELD(op_type)
	STR_FIELD(op_name)
	STR_FIELD(source_file)
	INT_FIELD(source_line)
	INT_FIELD(source_end_line)
	INT_FIELD(source_column)
	INT_FIELD(source_end_column)
	if (md->n_profile_type) {
		sep(b, start);
		sb_puts(b, "profile_type={");
		for (size_t i = 0; i < md->n_profile_type; i++)
			sb_printf(b, i ? ",%d" : "%d", (int)md->profile_type[i]);
		sb_putc(b, '}');
	}
	STR_FIELD(deduplicated_name)
	STR_FIELD(scheduling_name)
	INT_FIELD(stack_frame_id)
#undef STR_FIELD
#undef INT_FIELD
}

int metadata_parse(tcur *c, Xla__OpMetadata *md, arena *a)
{
	if (tc_expect(c, '{', "'{' to start the metadata"))
		return -1;
	while (!tc_eat(c, '}')) {
		size_t s, e;
		if (!tc_word(c, &s, &e) || tc_expect(c, '=', "'='"))
			return tc_fail(c, "a metadata field: op_type=, op_name=, source_file=, source_line=, "
					  "source_end_line=, source_column=, source_end_column=, profile_type=, "
					  "deduplicated_name=, scheduling_name= or stack_frame_id=");
		char **sf = NULL;
		int32_t *inf = NULL;
		if (tc_word_is(c, s, e, "op_type"))
			sf = &md->op_type;
		else if (tc_word_is(c, s, e, "op_name"))
			sf = &md->op_name;
		else if (tc_word_is(c, s, e, "source_file"))
			sf = &md->source_file;
		else if (tc_word_is(c, s, e, "deduplicated_name"))
			sf = &md->deduplicated_name;
		else if (tc_word_is(c, s, e, "scheduling_name"))
			sf = &md->scheduling_name;
		else if (tc_word_is(c, s, e, "source_line"))
			inf = &md->source_line;
		else if (tc_word_is(c, s, e, "source_end_line"))
			inf = &md->source_end_line;
		else if (tc_word_is(c, s, e, "source_column"))
			inf = &md->source_column;
		else if (tc_word_is(c, s, e, "source_end_column"))
			inf = &md->source_end_column;
		else if (tc_word_is(c, s, e, "stack_frame_id"))
			inf = &md->stack_frame_id;
		if (sf) {
			if (tc_text_string(c, a, sf))
				return -1;
		} else if (inf) {
			if (tc_int32(c, inf))
				return -1;
		} else if (tc_word_is(c, s, e, "profile_type")) {
			int64_t *v;
			size_t n;
			tc_skip(c);
			size_t at = c->i;
			if (tc_int_list(c, '{', '}', &v, &n, a))
				return -1;
			md->profile_type = arena_array(a, n ? n : 1, sizeof *md->profile_type);
			if (!md->profile_type) {
				c->oom = 1;
				return tc_fail(c, "memory");
			}
			for (size_t i = 0; i < n; i++) {
				if (v[i] < INT32_MIN || v[i] > INT32_MAX ||
				    !protobuf_c_enum_descriptor_get_value(&xla__profile_type__descriptor, (int)v[i])) {
					c->i = at;
					return tc_fail(c, "profile types XLA knows (0 to 3)");
				}
				md->profile_type[i] = (Xla__ProfileType)v[i];
			}
			md->n_profile_type = n;
		} else {
			c->i = s;
			return tc_fail(c, "a metadata field: op_type=, op_name=, source_file=, source_line=, "
					  "source_end_line=, source_column=, source_end_column=, profile_type=, "
					  "deduplicated_name=, scheduling_name= or stack_frame_id=");
		}
		tc_eat(c, ',');
	}
	return 0;
}

/* --- backend_config ---------------------------------------------------------------- */

/* Whether the bytes lex as one JSON object, as XLA's lexer takes them. */
static int lexes_as_json_dict(const uint8_t *d, size_t n)
{
	if (n < 2 || d[0] != '{')
		return 0;
	if (memchr(d, '\0', n) || !proto_utf8_valid(d, n))
		return 0;
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t ch = d[i];
		if (ch == '"') {
			for (i++; i < n && d[i] != '"'; i++)
				if (d[i] == '\\')
					i++;
			if (i >= n)
				return 0;
		} else if (ch == '{') {
			depth++;
		} else if (ch == '}') {
			if (--depth == 0)
				return i == n - 1;
		}
	}
	return 0;
}

void backend_config_print(strbuf *b, const uint8_t *data, size_t len)
{
	if (lexes_as_json_dict(data, len))
		sb_putn(b, (const char *)data, len);
	else
		put_quoted(b, (const char *)data, len);
}

int backend_config_parse(tcur *c, ProtobufCBinaryData *out, arena *a)
{
	if (tc_peek(c) == '{') {
		size_t s, e;
		if (tc_braced(c, &s, &e))
			return -1;
		char *copy = arena_strndup(a, c->s + s, e - s);
		if (!copy) {
			c->oom = 1;
			return tc_fail(c, "memory");
		}
		out->data = (uint8_t *)copy;
		out->len = e - s;
		return 0;
	}
	char *buf;
	size_t len;
	if (tc_string(c, a, &buf, &len))
		return -1;
	out->data = (uint8_t *)buf;
	out->len = len;
	return 0;
}

/* --- frontend_attributes ---------------------------------------------------------- */

int proto_is_hloi_key(const char *k)
{
	return strncmp(k, HLOI_KEY_PREFIX, strlen(HLOI_KEY_PREFIX)) == 0;
}

static int entry_cmp(const void *x, const void *y)
{
	const Xla__FrontendAttributes__MapEntry *a = *(Xla__FrontendAttributes__MapEntry *const *)x;
	const Xla__FrontendAttributes__MapEntry *b = *(Xla__FrontendAttributes__MapEntry *const *)y;
	return strcmp(a->key, b->key);
}

size_t frontend_user_count(const Xla__FrontendAttributes *fa)
{
	size_t n = 0;
	for (size_t i = 0; fa && i < fa->n_map; i++)
		if (!proto_is_hloi_key(fa->map[i]->key))
			n++;
	return n;
}

void frontend_print(strbuf *b, const Xla__FrontendAttributes *fa)
{
	size_t n = frontend_user_count(fa);
	Xla__FrontendAttributes__MapEntry **sorted = hloi_calloc(n ? n : 1, sizeof *sorted);
	if (!sorted) {
		b->oom = 1;
		return;
	}
	n = 0;
	for (size_t i = 0; fa && i < fa->n_map; i++)
		if (!proto_is_hloi_key(fa->map[i]->key))
			sorted[n++] = fa->map[i];
	qsort(sorted, n, sizeof *sorted, entry_cmp);
	sb_putc(b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_putc(b, ',');
		sb_puts(b, sorted[i]->key);
		sb_putc(b, '=');
		const char *v = sorted[i]->value;
		if (lexes_as_json_dict((const uint8_t *)v, strlen(v)))
			sb_puts(b, v);
		else
			put_quoted(b, v, strlen(v));
	}
	sb_putc(b, '}');
	hloi_free(sorted);
}

int frontend_parse(tcur *c, char ***keys, char ***values, size_t *n, arena *a)
{
	size_t cap = 0, count = 0;
	char **k = NULL, **v = NULL;
	if (tc_expect(c, '{', "'{'"))
		return -1;
	if (!tc_eat(c, '}')) {
		do {
			char *key, *val;
			size_t s, e;
			if (tc_peek(c) == '"') {
				if (tc_text_string(c, a, &key))
					return -1;
			} else if (tc_word(c, &s, &e)) {
				if (!(key = arena_strndup(a, c->s + s, e - s))) {
					c->oom = 1;
					return tc_fail(c, "memory");
				}
			} else {
				return tc_fail(c, "an attribute name");
			}
			if (tc_expect(c, '=', "'='"))
				return -1;
			if (tc_peek(c) == '{') {
				if (tc_braced(c, &s, &e))
					return -1;
				if (!(val = arena_strndup(a, c->s + s, e - s))) {
					c->oom = 1;
					return tc_fail(c, "memory");
				}
			} else if (tc_text_string(c, a, &val)) {
				return -1;
			}
			if (count == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				char **nk = arena_array(a, ncap, sizeof *nk);
				char **nv = arena_array(a, ncap, sizeof *nv);
				if (!nk || !nv) {
					c->oom = 1;
					return tc_fail(c, "memory");
				}
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
		} while (tc_eat(c, ','));
		if (tc_expect(c, '}', "'}' after the frontend attributes"))
			return -1;
	}
	*keys = k;
	*values = v;
	*n = count;
	return 0;
}

/* --- statistics (StatisticsVizToString, ParseStatisticsViz) ---------------------- */

void statistics_print(strbuf *b, const Xla__StatisticsViz *st)
{
	if (!st->n_statistics) {
		sb_puts(b, "{}");
		return;
	}
	sb_printf(b, "{visualizing_index=%lld", (long long)st->stat_index_to_visualize);
	for (size_t i = 0; i < st->n_statistics; i++) {
		sb_printf(b, ",%s=", st->statistics[i]->stat_name);
		put_double(b, st->statistics[i]->stat_val);
	}
	sb_putc(b, '}');
}

int statistics_parse(tcur *c, Xla__StatisticsViz *st, arena *a)
{
	if (tc_expect(c, '{', "'{'"))
		return -1;
	if (tc_eat(c, '}'))
		return 0;
	size_t s, e;
	if (!tc_word(c, &s, &e) || tc_expect(c, '=', "'='") || tc_int64(c, &st->stat_index_to_visualize))
		return tc_fail(c, "visualizing_index=N");
	size_t cap = 0;
	while (tc_eat(c, ',')) {
		Xla__Statistic *x = arena_alloc(a, sizeof *x);
		if (!x) {
			c->oom = 1;
			return tc_fail(c, "memory");
		}
		xla__statistic__init(x);
		if (!tc_word(c, &s, &e))
			return tc_fail(c, "a statistic's name");
		if (!(x->stat_name = arena_strndup(a, c->s + s, e - s))) {
			c->oom = 1;
			return tc_fail(c, "memory");
		}
		if (tc_expect(c, '=', "'='") || tc_double(c, &x->stat_val))
			return -1;
		if (st->n_statistics == cap) {
			size_t ncap = cap ? cap * 2 : 4;
			Xla__Statistic **nv = arena_array(a, ncap, sizeof *nv);
			if (!nv) {
				c->oom = 1;
				return tc_fail(c, "memory");
			}
			if (st->n_statistics)
				memcpy(nv, st->statistics, st->n_statistics * sizeof *nv);
			st->statistics = nv;
			cap = ncap;
		}
		st->statistics[st->n_statistics++] = x;
	}
	return tc_expect(c, '}', "'}' after the statistics");
}

/* --- result_accuracy ------------------------------------------------------------------ */

int accuracy_print(strbuf *b, const Xla__ResultAccuracy *ra)
{
	if (ra->specs_case == XLA__RESULT_ACCURACY__SPECS_MODE && ra->mode != XLA__RESULT_ACCURACY__MODE__DEFAULT) {
		const ProtobufCEnumValue *v =
			protobuf_c_enum_descriptor_get_value(&xla__result_accuracy__mode__descriptor, (int)ra->mode);
		if (!v)
			return 0;
		sb_puts(b, "{mode=");
		for (const char *p = v->name; *p; p++)
			sb_putc(b, (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p));
		sb_putc(b, '}');
		return 1;
	}
	if (ra->specs_case == XLA__RESULT_ACCURACY__SPECS_TOLERANCE && ra->tolerance) {
		sb_puts(b, "{tolerance={atol=");
		put_double(b, ra->tolerance->atol);
		sb_puts(b, ",rtol=");
		put_double(b, ra->tolerance->rtol);
		sb_printf(b, ",ulps=%lld}}", (long long)ra->tolerance->ulps);
		return 1;
	}
	return 0;
}

int accuracy_parse(tcur *c, Xla__ResultAccuracy *ra, arena *a)
{
	size_t s, e;
	if (tc_expect(c, '{', "'{'"))
		return -1;
	if (!tc_word(c, &s, &e) || tc_expect(c, '=', "'='"))
		return tc_fail(c, "mode= or tolerance=");
	if (tc_word_is(c, s, e, "mode")) {
		size_t ms, me;
		if (!tc_word(c, &ms, &me))
			return tc_fail(c, "default or highest");
		char name[32];
		size_t n = me - ms;
		if (n >= sizeof name)
			return tc_fail(c, "default or highest");
		for (size_t i = 0; i < n; i++) {
			char ch = c->s[ms + i];
			name[i] = (char)(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
		}
		name[n] = '\0';
		const ProtobufCEnumValue *v =
			protobuf_c_enum_descriptor_get_value_by_name(&xla__result_accuracy__mode__descriptor, name);
		if (!v) {
			c->i = ms;
			return tc_fail(c, "default or highest");
		}
		ra->specs_case = XLA__RESULT_ACCURACY__SPECS_MODE;
		ra->mode = (Xla__ResultAccuracy__Mode)v->value;
	} else if (tc_word_is(c, s, e, "tolerance")) {
		Xla__ResultAccuracy__Tolerance *t = arena_alloc(a, sizeof *t);
		if (!t) {
			c->oom = 1;
			return tc_fail(c, "memory");
		}
		xla__result_accuracy__tolerance__init(t);
		if (tc_expect(c, '{', "'{'"))
			return -1;
		if (!tc_eat(c, '}')) {
			do {
				double v;
				if (!tc_word(c, &s, &e) || tc_expect(c, '=', "'='"))
					return tc_fail(c, "atol=, rtol= or ulps=");
				size_t at = s;
				if (tc_double(c, &v))
					return -1;
				if (tc_word_is(c, s, e, "atol")) {
					t->atol = v;
				} else if (tc_word_is(c, s, e, "rtol")) {
					t->rtol = v;
				} else if (tc_word_is(c, s, e, "ulps")) {
					if (v != (double)(int64_t)v) {
						c->i = at;
						return tc_fail(c, "a whole number of ulps");
					}
					t->ulps = (int64_t)v;
				} else {
					c->i = at;
					return tc_fail(c, "atol=, rtol= or ulps=");
				}
			} while (tc_eat(c, ','));
			if (tc_expect(c, '}', "'}'"))
				return -1;
		}
		ra->specs_case = XLA__RESULT_ACCURACY__SPECS_TOLERANCE;
		ra->tolerance = t;
	} else {
		c->i = s;
		return tc_fail(c, "mode= or tolerance=");
	}
	return tc_expect(c, '}', "'}' to end the result accuracy");
}

/* --- parameter_replication -------------------------------------------------------------- */

void replication_print(strbuf *b, const Xla__ParameterReplication *r)
{
	sb_putc(b, '{');
	for (size_t i = 0; i < r->n_replicated_at_leaf_buffers; i++)
		sb_printf(b, "%s%s", i ? "," : "", r->replicated_at_leaf_buffers[i] ? "true" : "false");
	sb_putc(b, '}');
}

int replication_parse(tcur *c, Xla__ParameterReplication *r, arena *a)
{
	protobuf_c_boolean small[256];
	size_t n = 0;
	if (tc_expect(c, '{', "'{'"))
		return -1;
	if (!tc_eat(c, '}')) {
		do {
			if (n == sizeof small / sizeof small[0])
				return tc_fail(c, "at most 256 entries");
			if (tc_keyword(c, "true"))
				small[n++] = 1;
			else if (tc_keyword(c, "false"))
				small[n++] = 0;
			else
				return tc_fail(c, "true or false");
		} while (tc_eat(c, ','));
		if (tc_expect(c, '}', "'}'"))
			return -1;
	}
	r->n_replicated_at_leaf_buffers = n;
	r->replicated_at_leaf_buffers = arena_array(a, n ? n : 1, sizeof *r->replicated_at_leaf_buffers);
	if (!r->replicated_at_leaf_buffers) {
		c->oom = 1;
		return tc_fail(c, "memory");
	}
	memcpy(r->replicated_at_leaf_buffers, small, n * sizeof *small);
	return 0;
}

/* --- output_to_operand_aliasing ---------------------------------------------------------- */

void aliasing_print(strbuf *b, Xla__OutputOperandAliasing *const *v, size_t n)
{
	sb_putc(b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_puts(b, ", ");
		put_int_list(b, v[i]->output_shape_index, v[i]->n_output_shape_index, '{', '}');
		sb_printf(b, ": (%lld, ", (long long)v[i]->operand_index);
		put_int_list(b, v[i]->operand_shape_index, v[i]->n_operand_shape_index, '{', '}');
		sb_putc(b, ')');
	}
	sb_putc(b, '}');
}

int aliasing_parse(tcur *c, Xla__OutputOperandAliasing ***out, size_t *nout, arena *a)
{
	Xla__OutputOperandAliasing **v = NULL;
	size_t n = 0, cap = 0;
	if (tc_expect(c, '{', "'{'"))
		return -1;
	if (!tc_eat(c, '}')) {
		do {
			Xla__OutputOperandAliasing *x = arena_alloc(a, sizeof *x);
			if (!x) {
				c->oom = 1;
				return tc_fail(c, "memory");
			}
			xla__output_operand_aliasing__init(x);
			if (tc_int_list(c, '{', '}', &x->output_shape_index, &x->n_output_shape_index, a) ||
			    tc_expect(c, ':', "':' after the output shape index") ||
			    tc_expect(c, '(', "'(' before the operand") || tc_int64(c, &x->operand_index) ||
			    tc_expect(c, ',', "','") ||
			    tc_int_list(c, '{', '}', &x->operand_shape_index, &x->n_operand_shape_index, a) ||
			    tc_expect(c, ')', "')'"))
				return -1;
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 4;
				Xla__OutputOperandAliasing **nv = arena_array(a, ncap, sizeof *nv);
				if (!nv) {
					c->oom = 1;
					return tc_fail(c, "memory");
				}
				if (n)
					memcpy(nv, v, n * sizeof *nv);
				v = nv;
				cap = ncap;
			}
			v[n++] = x;
		} while (tc_eat(c, ','));
		if (tc_expect(c, '}', "'}'"))
			return -1;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* --- origin (OriginalValue::ToString, ParseOriginalValueImpl) ------------------------- */

static int index_has_prefix(const int64_t *v, size_t n, const int64_t *p, size_t k)
{
	return n >= k && (k == 0 || memcmp(v, p, k * sizeof *v) == 0);
}

static int origin_node(strbuf *b, const Xla__OriginalValueProto *ov, int64_t *prefix, size_t k, int depth)
{
	if (depth > PROTO_MAX_DEPTH || k >= HLOI_MAX_RANK * 8)
		return -1;
	int64_t most = -1;
	for (size_t i = 0; i < ov->n_elements; i++) {
		const Xla__OriginalValueElementProto *e = ov->elements[i];
		if (!index_has_prefix(e->shape_index, e->n_shape_index, prefix, k))
			continue;
		if (e->n_shape_index == k) {
			const Xla__OriginalArrayProto *oa = e->original_array;
			if (!oa) {
				sb_puts(b, "{}");
				return 0;
			}
			sb_putc(b, '{');
			put_quoted(b, oa->instruction_name, strlen(oa->instruction_name));
			if (oa->n_shape_index) {
				sb_putc(b, ' ');
				put_int_list(b, oa->shape_index, oa->n_shape_index, '{', '}');
			}
			sb_putc(b, '}');
			return 0;
		}
		if (e->shape_index[k] < 0)
			return -1;
		if (e->shape_index[k] > most)
			most = e->shape_index[k];
	}
	if (most < 0) {
		sb_puts(b, k ? "{}" : "()");
		return 0;
	}
	sb_putc(b, '(');
	for (int64_t j = 0; j <= most; j++) {
		if (j)
			sb_puts(b, ", ");
		prefix[k] = j;
		if (origin_node(b, ov, prefix, k + 1, depth + 1))
			return -1;
	}
	sb_putc(b, ')');
	return 0;
}

int origin_print(strbuf *b, const Xla__OriginalValueProto *ov)
{
	if (ov->is_synthetic_call) {
		sb_puts(b, "{[synthetic_call]}");
		return 0;
	}
	int64_t prefix[HLOI_MAX_RANK * 8];
	for (size_t i = 0; i < ov->n_elements; i++)
		if (ov->elements[i]->n_shape_index > sizeof prefix / sizeof prefix[0])
			return -1;
	sb_putc(b, '{');
	if (origin_node(b, ov, prefix, 0, 0))
		return -1;
	sb_putc(b, '}');
	return 0;
}

int origin_parse(tcur *c, Xla__OriginalValueProto *ov, arena *a)
{
	if (tc_expect(c, '{', "'{' to start the original value"))
		return -1;
	if (tc_eat(c, '[')) {
		if (!tc_keyword(c, "synthetic_call") || tc_expect(c, ']', "']'"))
			return tc_fail(c, "[synthetic_call]");
		ov->is_synthetic_call = 1;
		return tc_expect(c, '}', "'}'");
	}
	int64_t index[HLOI_MAX_RANK * 8];
	size_t depth = 0, cap = 0;
	int opened = 0;
	while (!tc_eat(c, '}')) {
		int ch = tc_peek(c);
		if (ch == '(') {
			c->i++;
			if (depth == sizeof index / sizeof index[0])
				return tc_fail(c, "less nesting");
			index[depth++] = 0;
			opened = 1;
		} else if (ch == ')') {
			c->i++;
			if (!depth)
				return tc_fail(c, "a '(' before this ')'");
			depth--;
		} else if (ch == ',') {
			c->i++;
			if (!depth)
				return tc_fail(c, "a ',' inside '(...)'");
			index[depth - 1]++;
		} else if (ch == '{') {
			c->i++;
			Xla__OriginalValueElementProto *e = arena_alloc(a, sizeof *e);
			if (!e) {
				c->oom = 1;
				return tc_fail(c, "memory");
			}
			xla__original_value_element_proto__init(e);
			e->n_shape_index = depth;
			if (depth) {
				e->shape_index = arena_array(a, depth, sizeof *e->shape_index);
				if (!e->shape_index) {
					c->oom = 1;
					return tc_fail(c, "memory");
				}
				memcpy(e->shape_index, index, depth * sizeof *index);
			}
			if (tc_peek(c) == '"') {
				Xla__OriginalArrayProto *oa = arena_alloc(a, sizeof *oa);
				if (!oa) {
					c->oom = 1;
					return tc_fail(c, "memory");
				}
				xla__original_array_proto__init(oa);
				if (tc_text_string(c, a, &oa->instruction_name))
					return -1;
				if (tc_peek(c) == '{' &&
				    tc_int_list(c, '{', '}', &oa->shape_index, &oa->n_shape_index, a))
					return -1;
				e->original_array = oa;
			}
			if (tc_expect(c, '}', "'}' to end the original array"))
				return -1;
			if (ov->n_elements == cap) {
				size_t ncap = cap ? 2 * cap : 4;
				Xla__OriginalValueElementProto **nv = arena_array(a, ncap, sizeof *nv);
				if (!nv) {
					c->oom = 1;
					return tc_fail(c, "memory");
				}
				if (ov->n_elements)
					memcpy(nv, ov->elements, ov->n_elements * sizeof *nv);
				ov->elements = nv;
				cap = ncap;
			}
			ov->elements[ov->n_elements++] = e;
		} else {
			return tc_fail(c, "[synthetic_call] or a tuple tree of original arrays");
		}
	}
	(void)opened;
	if (depth)
		return tc_fail(c, "a ')' for every '('");
	return 0;
}

/* --- domain ---------------------------------------------------------------------------- */

/* `{kind="sharding", entry={...}, exit={...}}`. XLA's proto keeps the
 * operand side (the text's exit=) in domain_entry_sharding and the user
 * side (entry=) in domain_exit_sharding. `{}` is no sharding. */
void domain_print(strbuf *b, const Xla__OpSharding *entry_field, const Xla__OpSharding *exit_field)
{
	sb_puts(b, "{kind=\"sharding\", entry=");
	if (exit_field)
		sharding_print(b, exit_field);
	else
		sb_puts(b, "{}");
	sb_puts(b, ", exit=");
	if (entry_field)
		sharding_print(b, entry_field);
	else
		sb_puts(b, "{}");
	sb_putc(b, '}');
}

int domain_parse(tcur *c, Xla__OpSharding **entry_field, Xla__OpSharding **exit_field, arena *a)
{
	int have_kind = 0, have_entry = 0, have_exit = 0;
	*entry_field = *exit_field = NULL;
	if (tc_expect(c, '{', "'{'"))
		return -1;
	while (!tc_eat(c, '}')) {
		size_t s, e;
		if (!tc_word(c, &s, &e) || tc_expect(c, '=', "'='"))
			return tc_fail(c, "kind=, entry= or exit=");
		if (tc_word_is(c, s, e, "kind")) {
			char *k;
			size_t at = c->i;
			if (tc_text_string(c, a, &k))
				return -1;
			if (strcmp(k, "sharding") != 0) {
				c->i = at;
				tc_skip(c);
				return tc_fail(c, "kind=\"sharding\" (the one domain kind XLA has)");
			}
			have_kind = 1;
		} else if (tc_word_is(c, s, e, "entry") || tc_word_is(c, s, e, "exit")) {
			Xla__OpSharding *sh;
			if (sharding_parse(c, a, &sh))
				return -1;
			if (sh->type == XLA__OP_SHARDING__TYPE__TUPLE && !sh->named_sharding && !sh->n_tuple_shardings)
				sh = NULL;
			if (tc_word_is(c, s, e, "entry")) {
				*exit_field = sh;
				have_entry = 1;
			} else {
				*entry_field = sh;
				have_exit = 1;
			}
		} else {
			c->i = s;
			return tc_fail(c, "kind=, entry= or exit=");
		}
		tc_eat(c, ',');
	}
	if (!have_kind || !have_entry || !have_exit)
		return tc_fail(c, "kind=, entry= and exit= (all three)");
	return 0;
}
