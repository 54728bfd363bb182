/* The checker: resolves names and callees, collects parameters, infers and
 * verifies every instruction's shape (SPEC §3) and element types (§4's
 * gates), converts constants, and reports every error it finds. */
#include "check/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check/check_internal.h"
#include "util/alloc.h"
#include "util/strbuf.h"

/* --- reporting ------------------------------------------------------------ */

static void emit(checker *c, diag_severity sev, loc at, const char *fmt, va_list ap)
{
	strbuf b = STRBUF_INIT;
	sb_vprintf(&b, fmt, ap);
	if (b.oom) {
		c->oom = 1;
	} else {
		int src = c->text ? c->m->src : -1;
		diag_emit(c->ctx, sev, src, at, "%s", sb_str(&b));
	}
	sb_free(&b);
}

void ck_error(checker *c, loc at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(c, DIAG_ERROR, at, fmt, ap);
	va_end(ap);
	c->nerrors++;
}

void ck_unsupported(checker *c, loc at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(c, DIAG_ERROR, at, fmt, ap);
	va_end(ap);
	c->nunsupported++;
}

void ck_note(checker *c, loc at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(c, DIAG_NOTE, at, fmt, ap);
	va_end(ap);
}

const char *ck_shape(char *buf, const shape *s)
{
	strbuf b = STRBUF_INIT;
	shape_print(&b, s, 0);
	snprintf(buf, CK_SHAPE_TEXT, "%s", b.oom ? "?" : sb_str(&b));
	sb_free(&b);
	return buf;
}

loc ck_attr_loc(const checker *c, loc value, const char *name)
{
	size_t k = strlen(name);
	if (!c->text || value.end > c->text->len || value.start > value.end)
		return value;
	const char *t = c->text->text;
	if (value.end - value.start > k && memcmp(t + value.start, name, k) == 0)
		return value;  /* already the whole attribute */
	if (value.start > k && t[value.start - 1] == '=' &&
	    memcmp(t + value.start - k - 1, name, k) == 0)
		value.start -= k + 1;
	return value;
}

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Skips white space and comments in t[p, end). */
static size_t skip_blank(const char *t, size_t p, size_t end)
{
	while (p < end) {
		if (is_space(t[p])) {
			p++;
		} else if (p + 1 < end && t[p] == '/' && t[p + 1] == '*') {
			p += 2;
			while (p + 1 < end && !(t[p] == '*' && t[p + 1] == '/'))
				p++;
			p = p + 2 < end ? p + 2 : end;
		} else if (p + 1 < end && t[p] == '/' && t[p + 1] == '/') {
			while (p < end && t[p] != '\n')
				p++;
		} else {
			break;
		}
	}
	return p;
}

/* The declared result shape's span: between `name =` and the opcode. The IR
 * keeps no location for it, so it is found in the source text. */
static loc shape_loc(const checker *c, const instr *in)
{
	if (!c->text || !in->has_shape)
		return in->op_at;
	const char *t = c->text->text;
	size_t p = in->name_at.end, e = in->op_at.start;
	if (p >= e || e > c->text->len)
		return in->op_at;
	p = skip_blank(t, p, e);
	if (p < e && t[p] == '=')
		p = skip_blank(t, p + 1, e);
	while (e > p && is_space(t[e - 1]))
		e--;
	if (p >= e)
		return in->op_at;
	loc at = { p, e };
	return at;
}

/* --- names ----------------------------------------------------------------- */

typedef struct name_table {
	size_t mask;
	instr **slots;
} name_table;

static size_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static int nt_init(name_table *nt, int n)
{
	size_t cap = 16;
	while (cap < 2 * (size_t)n)
		cap *= 2;
	nt->mask = cap - 1;
	nt->slots = hloi_calloc(cap, sizeof *nt->slots);
	return nt->slots ? 0 : -1;
}

static instr *nt_find(const name_table *nt, const char *name)
{
	for (size_t i = hash_name(name) & nt->mask; nt->slots[i]; i = (i + 1) & nt->mask)
		if (strcmp(nt->slots[i]->name, name) == 0)
			return nt->slots[i];
	return NULL;
}

static void nt_put(name_table *nt, instr *in)
{
	size_t i = hash_name(in->name) & nt->mask;
	while (nt->slots[i])
		i = (i + 1) & nt->mask;
	nt->slots[i] = in;
}

/* --- shapes ---------------------------------------------------------------- */

/* A written shape: a valid layout, and something hloi evaluates. */
static int usable_shape(checker *c, const shape *s, loc at)
{
	char msg[1024], a[CK_SHAPE_TEXT];
	if (shape_validate(s, msg, sizeof msg)) {
		ck_error(c, at, "%s", msg);
		return 0;
	}
	if (shape_is_tuple(s)) {
		ck_unsupported(c, at, "unsupported tuple shape %s", ck_shape(a, s));
		return 0;
	}
	if (!etype_is_evaluated(s->type)) {
		const char *name = etype_name(s->type);
		ck_unsupported(c, at, "unsupported element type '%s'", name ? name : "?");
		return 0;
	}
	if (!shape_is_static(s)) {
		ck_unsupported(c, at, "unsupported dynamic dimension in %s", ck_shape(a, s));
		return 0;
	}
	if (s->has_layout && s->layout.ntiles > 0) {
		ck_unsupported(c, at, "unsupported tiled layout");
		return 0;
	}
	if (s->has_layout && s->layout.element_size_in_bits &&
	    s->layout.element_size_in_bits != 8 * etype_byte_width(s->type)) {
		ck_unsupported(c, at, "unsupported element size in bits E(%lld)",
			       (long long)s->layout.element_size_in_bits);
		return 0;
	}
	return 1;
}

/* in->result = dims and type of `inf`, with the written layout or the
 * default one. */
static void set_result(instr *in, const shape *inf)
{
	shape r;
	shape_make_array(&r, inf->type, inf->rank, inf->dims);
	if (in->has_shape && in->shape.has_layout && in->shape.rank == inf->rank)
		r.layout = in->shape.layout;
	in->result = r;
}

/* --- element types ---------------------------------------------------------- */

/* SPEC §4's gates; the same sets as SC_OPS_* in eval/scalar.h. */
static int type_gate(checker *c, const instr *in, etype t)
{
	etype_kind k = etype_get_kind(t);
	const char *tn = etype_name(t);
	switch (in->op) {
	case OP_SUBTRACT:
	case OP_DIVIDE:
	case OP_REMAINDER:
	case OP_POWER:
	case OP_ATAN2:
	case OP_SHIFT_LEFT:
	case OP_SHIFT_RIGHT_ARITHMETIC:
	case OP_SHIFT_RIGHT_LOGICAL:
		if (k == KIND_PRED) {
			ck_error(c, in->op_at,
				 "Expected element type in shape to be arithmetic type for operation %s; got PRED.",
				 opcode_name(in->op));
			return 1;
		}
		break;
	case OP_AND:
	case OP_OR:
	case OP_XOR:
		if (k != KIND_PRED && k != KIND_SINT && k != KIND_UINT) {
			ck_error(c, in->op_at,
				 "Expected pred or integral type in argument to and/or/xor operation; got %s.", tn);
			return 1;
		}
		break;
	default:
		break;
	}
	switch (in->op) {
	case OP_SHIFT_LEFT:
	case OP_SHIFT_RIGHT_ARITHMETIC:
	case OP_SHIFT_RIGHT_LOGICAL:
		if (k != KIND_SINT && k != KIND_UINT) {
			ck_error(c, in->op_at, "Expected integral type for operation %s; got %s.",
				 opcode_name(in->op), tn);
			return 1;
		}
		break;
	case OP_ATAN2:
		if (k != KIND_FLOAT) {
			ck_error(c, in->op_at, "Expected floating-point type for operation atan2; got %s.", tn);
			return 1;
		}
		break;
	default:
		break;
	}
	return 0;
}

static cmp_type default_cmp_type(etype t)
{
	switch (etype_get_kind(t)) {
	case KIND_SINT: return CMPT_SIGNED;
	case KIND_FLOAT:
	case KIND_COMPLEX: return CMPT_FLOAT;
	default: return CMPT_UNSIGNED;
	}
}

static int compare_attrs(checker *c, const instr *in, const shape *lhs)
{
	int err = 0;
	char a[CK_SHAPE_TEXT];
	if (in->direction == CMP_NONE) {
		ck_error(c, in->op_at, "attribute direction is expected but not seen");
		err = 1;
	}
	if (in->comparison_type != CMPT_NONE) {
		cmp_type def = default_cmp_type(lhs->type), t = in->comparison_type;
		if (def == CMPT_FLOAT && t != CMPT_FLOAT && t != CMPT_TOTALORDER) {
			ck_error(c, in->comparison_type_at,
				 "Expected comparison type FLOAT or TOTALORDER; actual: %s, operand: %s.",
				 cmp_type_name(t), ck_shape(a, lhs));
			err = 1;
		} else if (def != CMPT_FLOAT && t != def) {
			ck_error(c, in->comparison_type_at,
				 "Expected comparison type %s; actual: %s, operand: %s.", cmp_type_name(def),
				 cmp_type_name(t), ck_shape(a, lhs));
			err = 1;
		}
	}
	return err;
}

/* --- instructions ------------------------------------------------------------ */

static int binary(checker *c, instr *in, shape *inf)
{
	const shape *lhs = &in->ops[0].def->result, *rhs = &in->ops[1].def->result;
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	int err = 0;
	if (lhs->type != rhs->type) {
		ck_error(c, in->op_at, "Binary op %s with different element types: %s and %s.",
			 opcode_name(in->op), ck_shape(a, lhs), ck_shape(b, rhs));
		err = 1;
	} else if (in->op == OP_COMPARE) {
		err = compare_attrs(c, in, lhs);
	} else {
		err = type_gate(c, in, lhs->type);
	}
	if (check_binary_shapes(c, in, lhs, rhs, inf))
		err = 1;
	inf->type = in->op == OP_COMPARE ? ET_PRED : lhs->type;
	return err;
}

static int broadcast(checker *c, instr *in, shape *inf)
{
	if (!in->has_shape) {
		ck_error(c, in->op_at, "cannot infer shape for opcode: broadcast");
		return 1;
	}
	*inf = in->shape;
	inf->type = in->ops[0].def->result.type;
	return check_broadcast_shapes(c, in, &in->ops[0].def->result, &in->shape);
}

static int store_value(checker *c, hloi_literal *lit)
{
	module *m = c->m;
	int n = m->nvalues;
	if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
		size_t cap = n == 0 ? 4 : 2 * (size_t)n;
		hloi_literal **v = hloi_realloc(m->values, cap * sizeof *v);
		if (!v)
			return -1;
		m->values = v;
	}
	m->values[m->nvalues++] = lit;
	return 0;
}

static int constant(checker *c, instr *in)
{
	if (in->value)
		return 0;  /* checked before */
	if (!in->literal) {
		ck_error(c, in->op_at, "constant has no value");
		return 1;
	}
	hloi_literal *lit = NULL;
	hloi_status st = literal_from_tree(&lit, c->ctx, c->text ? c->m->src : -1, in->literal,
					   &in->result);
	if (st == HLOI_ENOMEM) {
		c->oom = 1;
		return 1;
	}
	if (st != HLOI_OK) {
		c->nerrors++;
		return 1;
	}
	if (store_value(c, lit)) {
		literal_destroy(lit);
		c->oom = 1;
		return 1;
	}
	in->value = lit;
	return 0;
}

/* Resolves the operands of `in`; returns 1 when all are usable. */
static int resolve_operands(checker *c, instr *in, const name_table *nt, const uint8_t *ok)
{
	int good = 1;
	for (int k = 0; k < in->nops; k++) {
		operand *op = &in->ops[k];
		instr *d = nt_find(nt, op->name);
		op->def = NULL;
		if (!d) {
			ck_error(c, op->at, "instruction does not exist: %s", op->name);
			good = 0;
		} else if (d->position >= in->position) {
			ck_error(c, op->at, "instruction '%s' is used before its definition", op->name);
			ck_note(c, d->name_at, "'%s' is defined here", d->name);
			good = 0;
		} else {
			op->def = d;
			if (!ok[d->position])
				good = 0;
		}
	}
	return good;
}

/* Operands written with a shape must match what their definition gives. */
static void written_operand_shapes(checker *c, instr *in, const uint8_t *ok)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT], msg[1024];
	for (int k = 0; k < in->nops; k++) {
		operand *op = &in->ops[k];
		if (!op->has_shape)
			continue;
		if (shape_validate(&op->declared, msg, sizeof msg)) {
			ck_error(c, op->at, "%s", msg);
			continue;
		}
		if (op->def && ok[op->def->position] && !shape_compatible(&op->declared, &op->def->result))
			ck_error(c, op->at,
				 "The declared operand shape %s is not compatible with the shape of the operand instruction %s.",
				 ck_shape(a, &op->declared), ck_shape(b, &op->def->result));
	}
}

static void check_instr(checker *c, instr *in, const name_table *nt, uint8_t *ok)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT], msg[1024];
	int good = resolve_operands(c, in, nt, ok);
	loc sat = shape_loc(c, in);

	if (in->callee_name) {
		in->callee = module_find_computation(c->m, in->callee_name);
		if (!in->callee)
			ck_error(c, in->callee_at, "computation does not exist: %s", in->callee_name);
	}
	int arity = opcode_arity(in->op);
	if (arity >= 0 && in->nops != arity) {
		ck_error(c, in->op_at, "%s expects %d operands, but has %d operands", opcode_name(in->op),
			 arity, in->nops);
		good = 0;
	}
	if (!opcode_is_evaluated(in->op)) {
		ck_unsupported(c, in->op_at, "unsupported opcode '%s'", opcode_name(in->op));
		/* Users are still checked against the written shape. */
		if (in->has_shape) {
			if (shape_validate(&in->shape, msg, sizeof msg)) {
				ck_error(c, sat, "%s", msg);
			} else if (shape_is_array(&in->shape) && etype_is_evaluated(in->shape.type) &&
				   shape_is_static(&in->shape) && in->shape.layout.ntiles == 0) {
				set_result(in, &in->shape);
				ok[in->position] = 1;
			}
		}
		return;
	}
	if (in->has_shape && !usable_shape(c, &in->shape, sat))
		good = 0;
	written_operand_shapes(c, in, ok);
	if (!good)
		return;

	shape inf;
	memset(&inf, 0, sizeof inf);
	int err = 0;
	switch (in->op) {
	case OP_PARAMETER:
	case OP_CONSTANT:
		if (!in->has_shape) {
			ck_error(c, in->op_at, "cannot infer shape for opcode: %s", opcode_name(in->op));
			return;
		}
		inf = in->shape;
		break;
	case OP_BROADCAST:
		err = broadcast(c, in, &inf);
		break;
	default:
		if (opcode_category(in->op) == OPC_BINARY || opcode_category(in->op) == OPC_COMPARE) {
			err = binary(c, in, &inf);
		} else {
			ck_unsupported(c, in->op_at, "unsupported opcode '%s'", opcode_name(in->op));
			return;
		}
		break;
	}
	if (err)
		return;
	if (in->has_shape && (in->shape.type != inf.type || !shape_same_dims(&in->shape, &inf))) {
		ck_error(c, sat, "declared shape %s does not match the inferred shape %s",
			 ck_shape(a, &in->shape), ck_shape(b, &inf));
		return;
	}
	set_result(in, &inf);
	if (in->op == OP_CONSTANT && constant(c, in))
		return;
	ok[in->position] = 1;
}

/* parameter(N): dense from 0, no number twice; fills comp->params. */
static void collect_parameters(checker *c, computation *comp)
{
	int count = 0;
	for (int i = 0; i < comp->ninstrs; i++)
		if (comp->instrs[i]->op == OP_PARAMETER)
			count++;
	comp->nparams = 0;
	comp->params = NULL;
	if (count == 0)
		return;
	instr **params = arena_array(&c->m->arena, (size_t)count, sizeof *params);
	if (!params) {
		c->oom = 1;
		return;
	}
	/* Numbers used twice are reported once; the others must be 0..distinct-1. */
	int distinct = count;
	for (int i = 0; i < comp->ninstrs; i++) {
		instr *in = comp->instrs[i];
		if (in->op != OP_PARAMETER)
			continue;
		int64_t num = in->parameter_number;
		if (num < 0) {
			ck_error(c, in->op_at, "parameter number must be >= 0");
			distinct--;
		} else if (num < count) {
			if (params[num]) {
				ck_error(c, in->op_at, "parameter number %lld is used twice", (long long)num);
				distinct--;
			} else {
				params[num] = in;
			}
		}
	}
	for (int k = 0; k < distinct; k++) {
		if (!params[k]) {
			ck_error(c, comp->name_at, "parameter numbers must be dense from 0: parameter %d is missing",
				 k);
			break;
		}
	}
	comp->params = params;
	comp->nparams = count;
}

static void check_computation(checker *c, computation *comp)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	name_table nt = { 0, NULL };
	uint8_t *ok = hloi_calloc(comp->ninstrs > 0 ? (size_t)comp->ninstrs : 1, 1);
	if (!ok || nt_init(&nt, comp->ninstrs)) {
		c->oom = 1;
		goto cleanup;
	}
	for (int i = 0; i < comp->ninstrs; i++) {
		instr *in = comp->instrs[i];
		in->position = i;
		instr *prev = nt_find(&nt, in->name);
		if (prev) {
			ck_error(c, in->name_at, "instruction already exists: %s", in->name);
			ck_note(c, prev->name_at, "previous definition of '%s' is here", prev->name);
		} else {
			nt_put(&nt, in);
		}
	}
	collect_parameters(c, comp);
	for (int i = 0; i < comp->ninstrs && !c->oom; i++)
		check_instr(c, comp->instrs[i], &nt, ok);

	instr *root = comp->root;
	if (comp->has_signature && root && ok[root->position] &&
	    !shape_compatible(&comp->sig_result, &root->result)) {
		loc at = comp->sig_at.end > comp->sig_at.start ? comp->sig_at : comp->name_at;
		ck_error(c, at,
			 "Shape of computation %s, %s, is not compatible with that of its root instruction %s, %s",
			 comp->name, ck_shape(a, &comp->sig_result), root->name, ck_shape(b, &root->result));
	}
cleanup:
	hloi_free(nt.slots);
	hloi_free(ok);
}

hloi_status check_module(module *m, hloi_context *ctx, const hloi_check_options *opts)
{
	checker c;
	memset(&c, 0, sizeof c);
	c.m = m;
	c.ctx = ctx;
	c.text = m->src >= 0 ? diag_source(ctx, m->src) : NULL;
	c.strict = opts ? opts->strict : 0;
	c.mode = opts ? opts->broadcast_mode : HLOI_BROADCAST_DEFAULT;
	if (c.mode == HLOI_BROADCAST_DEFAULT)
		c.mode = m->broadcast_mode;
	if (c.mode == HLOI_BROADCAST_DEFAULT)
		c.mode = HLOI_BROADCAST_XLA;
	m->checked = 0;

	if (!m->entry) {
		diag_error_where(ctx, NULL, "the module has no entry computation");
		c.nerrors++;
	}
	for (int i = 0; i < m->ncomps && !c.oom; i++)
		check_computation(&c, m->comps[i]);
	if (c.oom)
		return HLOI_ENOMEM;
	if (c.nerrors)
		return HLOI_ETYPE;
	if (c.nunsupported)
		return HLOI_EUNSUPPORTED;
	m->checked = 1;
	m->checked_mode = c.mode;
	return HLOI_OK;
}
