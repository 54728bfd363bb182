/* Canonical HLO text printer: what was written, normalised so that printing
 * a parse of the output gives the same output (one instruction per line, no
 * operand shapes, literals in XLA's one-line spelling, comments dropped). */
#include "text/print.h"

#include <stdint.h>
#include <string.h>

#include "core/types.h"
#include "text/attr_text.h"

/* Words the lexer reserves: such names need their `%` to read back. */
static int reserved(const char *name)
{
	static const char *const words[] = { "HloModule", "ENTRY", "ROOT", "true", "false", "inf", "nan" };
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (!strcmp(words[i], name))
			return 1;
	return etype_from_name(name, strlen(name)) != ET_INVALID;
}

void text_put_name(strbuf *b, const char *name)
{
	if (reserved(name))
		sb_putc(b, '%');
	sb_puts(b, name);
}

static void put_shape(strbuf *b, const shape *s)
{
	shape_print(b, s, 1);
}

static int has_list_kid(const lit_node *n)
{
	for (int i = 0; i < n->n; i++)
		if (n->kids[i]->kind == LIT_LIST || n->kids[i]->kind == LIT_ELIDED)
			return 1;
	return 0;
}

/* `nested`: the node is an element of a list (so a leaf list is the
 * innermost level of a rank >= 2 array, and a tuple is a complex number). */
static void put_literal(strbuf *b, const lit_node *n, int nested)
{
	switch (n->kind) {
	case LIT_NUMBER:
	case LIT_WORD:
		sb_puts(b, n->text);
		return;
	case LIT_ELIDED:
		sb_puts(b, "{...}");
		return;
	case LIT_TUPLE:
		if (n->n == 0) {
			sb_puts(b, "()");
			return;
		}
		sb_puts(b, nested ? "(" : "( ");
		for (int i = 0; i < n->n; i++) {
			if (i)
				sb_puts(b, ", ");
			put_literal(b, n->kids[i], 0);
		}
		sb_puts(b, nested ? ")" : " )");
		return;
	case LIT_LIST:
		break;
	}
	if (n->n == 0) {
		sb_puts(b, "{}");
		return;
	}
	int pad = has_list_kid(n) || (nested && n->n > 1);
	sb_puts(b, pad ? "{ " : "{");
	for (int i = 0; i < n->n; i++) {
		if (i)
			sb_puts(b, ", ");
		put_literal(b, n->kids[i], 1);
	}
	sb_puts(b, pad ? " }" : "}");
}

void text_put_literal(strbuf *b, const lit_node *n)
{
	put_literal(b, n, 0);
}

/* The value a constant prints from: one loaded from a proto has no text. */
static const hloi_literal *printed_value(const instr *in)
{
	return in->op == OP_CONSTANT && !in->literal ? in->value : NULL;
}

const hloi_literal *text_printed_literal(const instr *in)
{
	const hloi_literal *v = printed_value(in);
	/* a `literal=` attribute loaded from a proto prints from its value too */
	const attr *la = instr_attr(in, ATTR_LITERAL);
	if (!v && la && la->kind == AK_LITERAL && !la->u.lit.tree)
		v = la->u.lit.value;
	return v;
}

static void put_instr(strbuf *b, const instr *in)
{
	sb_puts(b, in->is_root ? "  ROOT " : "  ");
	text_put_name(b, in->name);
	sb_puts(b, " = ");
	if (in->has_shape) {
		put_shape(b, in->shape);
		sb_putc(b, ' ');
	}
	if (in->async_sugar) {
		/* XLA's sugar: the wrapped opcode with the async op's suffix */
		sb_puts(b, opcode_name(in->async_op));
		sb_puts(b, in->op == OP_ASYNC_START ? "-start" : in->op == OP_ASYNC_UPDATE ? "-update" : "-done");
	} else {
		sb_puts(b, opcode_name(in->op));
	}
	sb_putc(b, '(');
	if (in->op == OP_PARAMETER) {
		sb_printf(b, "%lld", (long long)in->parameter_number);
	} else if (in->op == OP_CONSTANT && in->literal) {
		/* a parenthesised value of an array shape is a complex scalar:
		 * `(1, 2)`, not a tuple's `( 1, 2 )` */
		int complex_scalar = in->literal->kind == LIT_TUPLE && in->has_shape && !shape_is_tuple(in->shape);
		put_literal(b, in->literal, complex_scalar);
	} else if (printed_value(in)) {
		/* from a proto: typed values, printed as HLO text writes them */
		if (in->value->elided)
			sb_puts(b, "{...}");
		else
			literal_print(b, in->value, 0, 1);
	} else {
		for (int i = 0; i < in->nops; i++) {
			if (i)
				sb_puts(b, ", ");
			text_put_name(b, in->ops[i].name);
		}
	}
	sb_putc(b, ')');
	/* in attrs.def's order (stable: unknown attributes as written); a
	 * sugared async-start prints the wrapped op's attributes with its own,
	 * not the `calls` naming the computation that holds them */
	const instr *w = in->async_wrapped;
	const attr *sets[2] = { in->attrs, w ? w->attrs : NULL };
	int counts[2] = { in->nattrs, w && in->op == OP_ASYNC_START ? w->nattrs : 0 };
	int last = -1;
	for (;;) {
		int next = INT32_MAX;
		for (int s = 0; s < 2; s++)
			for (int i = 0; i < counts[s]; i++) {
				int k = attr_order_key(&sets[s][i]);
				if (k > last && k < next && !(s == 0 && w && sets[s][i].id == ATTR_CALLS))
					next = k;
			}
		if (next == INT32_MAX)
			break;
		for (int s = 0; s < 2; s++)
			for (int i = 0; i < counts[s]; i++) {
				if (attr_order_key(&sets[s][i]) != next || (s == 0 && w && sets[s][i].id == ATTR_CALLS))
					continue;
				sb_puts(b, ", ");
				attr_print(b, &sets[s][i]);
			}
		last = next;
	}
	sb_putc(b, '\n');
}

static void put_computation(strbuf *b, const computation *c)
{
	if (c->is_entry)
		sb_puts(b, "ENTRY ");
	text_put_name(b, c->name);
	if (c->has_signature) {
		sb_puts(b, " (");
		for (int i = 0; i < c->nsig_params; i++) {
			if (i)
				sb_puts(b, ", ");
			sb_printf(b, "%s: ", c->sig_names[i]);
			put_shape(b, &c->sig_shapes[i]);
		}
		sb_puts(b, ") -> ");
		put_shape(b, &c->sig_result);
	}
	sb_puts(b, " {\n");
	for (int i = 0; i < c->ninstrs; i++)
		put_instr(b, c->instrs[i]);
	sb_putc(b, '}');
	if (c->execution_thread) {
		sb_puts(b, ", execution_thread=\"");
		for (const char *p = c->execution_thread; *p; p++) {
			if (*p == '"' || *p == '\\')
				sb_putc(b, '\\');
			sb_putc(b, *p);
		}
		sb_putc(b, '"');
	}
	sb_putc(b, '\n');
}

void text_print_module(strbuf *b, const module *m)
{
	if (m->has_header) {
		sb_puts(b, "HloModule ");
		text_put_name(b, m->name);
		for (int i = 0; i < m->nheader_attrs; i++)
			sb_printf(b, ", %s=%s", m->header_attrs[i].name, m->header_attrs[i].value);
		sb_puts(b, "\n\n");
	}
	if (m->stack_frames) {
		sb_puts(b, m->stack_frames);
		sb_puts(b, "\n\n");
	}
	int first = 1;
	for (int i = 0; i < m->ncomps; i++) {
		if (m->comps[i]->async_wrapped)
			continue;
		if (!first)
			sb_putc(b, '\n');
		first = 0;
		put_computation(b, m->comps[i]);
	}
}

uint64_t text_print_empty_count(const module *m, const computation **comp, const instr **in)
{
	uint64_t total = 0, most = 0;
	if (comp)
		*comp = NULL;
	if (in)
		*in = NULL;
	for (int i = 0; i < m->ncomps; i++) {
		const computation *c = m->comps[i];
		for (int j = 0; j < c->ninstrs; j++) {
			const instr *x = c->instrs[j];
			const hloi_literal *v = text_printed_literal(x);
			uint64_t k = v ? literal_print_empty_count(v) : 0;
			if (k > most) {
				most = k;
				if (comp)
					*comp = c;
				if (in)
					*in = x;
			}
			total = k > UINT64_MAX - total ? UINT64_MAX : total + k;
		}
	}
	return total;
}
