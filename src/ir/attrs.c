/* The attribute table (ir/attrs.def): names, kinds and the helpers every
 * front end and printer shares. */
#include "ir/attrs.h"

#include <string.h>

static const struct {
	const char *name;
	attr_kind kind;
	uint32_t field;
	attr_pkind pk;
	const char *pname;
} table[] = {
#define X(E, name, kind, field, pk, fn, pname) { name, kind, field, PK_##pk, pname },
#include "ir/attrs.def"
#undef X
};

const char *attr_name(attr_id id)
{
	return id < ATTR_COUNT ? table[id].name : "?";
}

const char *attr_text_name(const attr *a)
{
	return a->id < ATTR_COUNT ? table[a->id].name : (a->uname ? a->uname : "?");
}

attr_kind attr_table_kind(attr_id id)
{
	return id < ATTR_COUNT ? table[id].kind : AK_RAW;
}

uint32_t attr_proto_field(attr_id id)
{
	return id < ATTR_COUNT ? table[id].field : 0;
}

const char *attr_proto_name(attr_id id)
{
	return id < ATTR_COUNT ? table[id].pname : "";
}

attr_pkind attr_proto_kind(attr_id id)
{
	return id < ATTR_COUNT ? table[id].pk : PK_NONE;
}

attr_id attr_from_name(const char *name, size_t len)
{
	/* a linear scan with a first-byte filter: called for every attribute */
	for (int i = 0; i < ATTR_COUNT; i++)
		if (table[i].name[0] == (len ? name[0] : 0) && strlen(table[i].name) == len &&
		    memcmp(table[i].name, name, len) == 0)
			return (attr_id)i;
	return ATTR_COUNT;
}

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

/* C escapes as XLA's lexer reads strings (absl CUnescape): \n \t \r \a \b
 * \f \v \\ \' \" \? \xHH \ooo. */
char *attr_string_value(arena *a, const char *quoted, size_t *len)
{
	size_t n = strlen(quoted);
	if (n >= 2 && (quoted[0] == '"' || quoted[0] == '\'') && quoted[n - 1] == quoted[0]) {
		quoted++;
		n -= 2;
	}
	char *out = arena_alloc(a, n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = quoted[i];
		if (c != '\\' || i + 1 >= n) {
			out[o++] = c;
			continue;
		}
		c = quoted[++i];
		switch (c) {
		case 'n': out[o++] = '\n'; break;
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case 'a': out[o++] = '\a'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'v': out[o++] = '\v'; break;
		case 'x': {
			int v = 0, k = 0;
			while (k < 2 && i + 1 < n && hexval(quoted[i + 1]) >= 0) {
				v = v * 16 + hexval(quoted[++i]);
				k++;
			}
			out[o++] = (char)v;
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				int v = c - '0', k = 1;
				while (k < 3 && i + 1 < n && quoted[i + 1] >= '0' && quoted[i + 1] <= '7') {
					v = v * 8 + (quoted[++i] - '0');
					k++;
				}
				out[o++] = (char)v;
			} else {
				out[o++] = c;
			}
			break;
		}
	}
	out[o] = '\0';
	if (len)
		*len = o;
	return out;
}

int conv_dims_equal(const conv_dims *a, const conv_dims *b)
{
	if (a->nspatial != b->nspatial || a->input_batch != b->input_batch || a->input_feature != b->input_feature ||
	    a->kernel_input_feature != b->kernel_input_feature || a->kernel_output_feature != b->kernel_output_feature ||
	    a->output_batch != b->output_batch || a->output_feature != b->output_feature)
		return 0;
	for (int i = 0; i < a->nspatial; i++)
		if (a->input_spatial[i] != b->input_spatial[i] || a->kernel_spatial[i] != b->kernel_spatial[i] ||
		    a->output_spatial[i] != b->output_spatial[i])
			return 0;
	return 1;
}

int attr_order_key(const attr *a)
{
	/* unknown attributes go after the opcode's own and its calls, before
	 * the ones every instruction may carry */
	if (a->id >= ATTR_COUNT)
		return 2 * ATTR_SHARDING - 1;
	return 2 * a->id;
}
