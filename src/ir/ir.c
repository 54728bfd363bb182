/* Opcode table lookups and module lifetime. */
#include "ir/ir.h"

#include <string.h>

#include "util/alloc.h"

#define EVAL 1
#define NOEVAL 0
static const struct {
	const char *name;
	int arity;
	op_category cat;
	int evaluated;
} ops[] = {
#define X(E, text, arity, cat, ev) { text, arity, cat, ev },
#include "ir/opcodes.def"
#undef X
};
#undef EVAL
#undef NOEVAL

const char *opcode_name(opcode op)
{
	return op < OP_COUNT ? ops[op].name : "unknown";
}

opcode opcode_from_name(const char *s, size_t len)
{
	for (int i = 0; i < OP_COUNT; i++)
		if (strlen(ops[i].name) == len && memcmp(ops[i].name, s, len) == 0)
			return (opcode)i;
	return OP_COUNT;
}

int opcode_arity(opcode op)
{
	return ops[op].arity;
}

op_category opcode_category(opcode op)
{
	return ops[op].cat;
}

int opcode_is_evaluated(opcode op)
{
	return ops[op].evaluated;
}

static const char *const dir_names[] = { NULL, "EQ", "NE", "LT", "LE", "GT", "GE" };
static const char *const type_names[] = { NULL, "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED" };

const char *cmp_direction_name(cmp_direction d)
{
	return d > CMP_NONE && d <= CMP_GE ? dir_names[d] : "";
}

cmp_direction cmp_direction_from_name(const char *s, size_t len)
{
	for (int i = 1; i <= CMP_GE; i++)
		if (strlen(dir_names[i]) == len && memcmp(dir_names[i], s, len) == 0)
			return (cmp_direction)i;
	return CMP_NONE;
}

const char *cmp_type_name(cmp_type t)
{
	return t > CMPT_NONE && t <= CMPT_UNSIGNED ? type_names[t] : "";
}

cmp_type cmp_type_from_name(const char *s, size_t len)
{
	for (int i = 1; i <= CMPT_UNSIGNED; i++)
		if (strlen(type_names[i]) == len && memcmp(type_names[i], s, len) == 0)
			return (cmp_type)i;
	return CMPT_NONE;
}

hloi_status module_create(module **out)
{
	module *m = hloi_calloc(1, sizeof *m);
	if (!m) {
		*out = NULL;
		return HLOI_ENOMEM;
	}
	arena_init(&m->arena);
	m->src = -1;
	*out = m;
	return HLOI_OK;
}

void module_destroy(module *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nvalues; i++)
		literal_destroy(m->values[i]);
	hloi_free(m->values);
	for (int i = 0; i < m->nsnapshot_args; i++)
		literal_destroy(m->snapshot_args[i]);
	hloi_free(m->snapshot_args);
	arena_release(&m->arena);
	hloi_free(m);
}

computation *module_find_computation(const module *m, const char *name)
{
	for (int i = 0; i < m->ncomps; i++)
		if (strcmp(m->comps[i]->name, name) == 0)
			return m->comps[i];
	return NULL;
}
