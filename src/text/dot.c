/* Graphviz DOT of a module (`hloi dot`): an instruction per node (name,
 * opcode, shape with layout), operand edges labelled with how the operand is
 * broadcast, called computations as clusters reached by dashed edges. */
#include "text/dot.h"
#include "text/attr_text.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"

/* Constants whose text is longer than this show only `constant`. */
#define DOT_CONSTANT_TEXT 40

/* Colour of edges that broadcast their operand, and of their labels. */
#define DOT_BROADCAST_COLOR "#1f5fbf"

/* A DOT string body: quotes and backslashes escaped, newlines as `\n`
 * (Graphviz's centred line break), other control bytes dropped. */
static void put_escaped(strbuf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') {
			sb_putc(b, '\\');
			sb_putc(b, *s);
		} else if (ch == '\n') {
			sb_puts(b, "\\n");
		} else if (ch >= 0x20 && ch != 0x7f) {
			sb_putc(b, *s);
		}
	}
}

static void put_quoted(strbuf *b, const char *s)
{
	sb_putc(b, '"');
	put_escaped(b, s);
	sb_putc(b, '"');
}

/* Label text collected in `lab` (lines separated by '\n') as `label="..."`. */
static void put_label(strbuf *b, const strbuf *lab)
{
	sb_puts(b, "label=");
	put_quoted(b, sb_str(lab));
	if (lab->oom)
		b->oom = 1;
}

static void put_list(strbuf *b, const int64_t *v, int n)
{
	sb_putc(b, '{');
	for (int i = 0; i < n; i++)
		sb_printf(b, i ? ",%lld" : "%lld", (long long)v[i]);
	sb_putc(b, '}');
}

/* A shape with its layout; an array written without one shows the default. */
static void put_shape(strbuf *b, const shape *s)
{
	if (shape_is_array(s) && s->rank > 0 && !s->has_layout) {
		shape t = *s;
		layout_set_default(&t);
		shape_print(b, &t, 1);
	} else {
		shape_print(b, s, 1);
	}
}

/* Compact literal text; gives up (returns nonzero) past `limit` bytes. */
static int put_literal(strbuf *b, const lit_node *n, size_t limit)
{
	if (b->len > limit)
		return 1;
	switch (n->kind) {
	case LIT_NUMBER:
	case LIT_WORD:
		sb_puts(b, n->text ? n->text : "?");
		break;
	case LIT_ELIDED:
		sb_puts(b, "{...}");
		break;
	case LIT_LIST:
	case LIT_TUPLE:
		sb_putc(b, n->kind == LIT_LIST ? '{' : '(');
		for (int i = 0; i < n->n; i++) {
			if (i)
				sb_puts(b, ", ");
			if (put_literal(b, n->kids[i], limit))
				return 1;
		}
		sb_putc(b, n->kind == LIT_LIST ? '}' : ')');
		break;
	}
	return b->len > limit;
}

/* The opcode line of a node: the opcode and the attributes that say what it
 * computes (broadcast's dimensions go on its edge instead). */
static void put_opcode_line(strbuf *lab, const instr *in)
{
	sb_puts(lab, opcode_name(in->op));
	if (in->op == OP_PARAMETER) {
		sb_printf(lab, "(%lld)", (long long)in->parameter_number);
	} else if (in->op == OP_CONSTANT && in->literal) {
		strbuf t = STRBUF_INIT;
		if (!put_literal(&t, in->literal, DOT_CONSTANT_TEXT) && !t.oom)
			sb_printf(lab, "(%s)", sb_str(&t));
		if (t.oom)
			lab->oom = 1;
		sb_free(&t);
	}
	for (int i = 0; i < in->nattrs; i++) {
		const attr *a = &in->attrs[i];
		/* on edges instead: broadcast's dimensions, broadcast_dimensions,
		 * called computations; not what it computes: metadata & co */
		if ((in->op == OP_BROADCAST && a->id == ATTR_DIMENSIONS) || a->id == ATTR_BROADCAST_DIMENSIONS ||
		    a->id == ATTR_KIND ||
		    a->kind == AK_COMP || a->kind == AK_COMPS || a->kind == AK_RAW || a->kind == AK_NAMES ||
		    a->kind == AK_LITERAL)
			continue;
		sb_putc(lab, ' ');
		attr_print(lab, a);
	}
}

/* The shape an instruction's node shows, or NULL when it is not known. */
static const shape *result_shape(const module *m, const instr *in)
{
	if (m->checked)
		return in->result;
	return in->has_shape ? in->shape : NULL;
}

static void put_node(strbuf *b, const char *ind, const module *m, int ci, int ii, const instr *in,
		     int is_root)
{
	strbuf lab = STRBUF_INIT;
	if (is_root)
		sb_puts(&lab, "ROOT ");
	sb_puts(&lab, in->name ? in->name : "?");
	sb_putc(&lab, '\n');
	put_opcode_line(&lab, in);
	const shape *s = result_shape(m, in);
	if (s) {
		sb_putc(&lab, '\n');
		put_shape(&lab, s);
	}
	sb_printf(b, "%sn_%d_%d [", ind, ci, ii);
	put_label(b, &lab);
	sb_free(&lab);
	if (in->op == OP_PARAMETER)
		sb_puts(b, ", shape=ellipse, style=\"filled");
	else if (in->op == OP_CONSTANT)
		sb_puts(b, ", shape=box, style=\"filled");
	else
		sb_puts(b, ", shape=box, style=\"rounded");
	sb_puts(b, is_root ? ",bold\", penwidth=2" : "\"");
	if (in->op == OP_PARAMETER)
		sb_puts(b, ", fillcolor=\"#dbe9f6\"");
	else if (in->op == OP_CONSTANT)
		sb_puts(b, ", fillcolor=\"#eeeeee\"");
	sb_puts(b, "];\n");
}

/* --- operands --------------------------------------------------------------- */

/* Instruction names of one computation, sorted, to resolve operands of an
 * unchecked module (the first definition of a name wins). */
typedef struct name_ix {
	const char *name;
	int pos;
} name_ix;

static int cmp_name_ix(const void *pa, const void *pb)
{
	const name_ix *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

static int lookup(const name_ix *ix, int n, const char *name)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (strcmp(ix[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && strcmp(ix[lo].name, name) == 0 ? ix[lo].pos : -1;
}

/* Index of operand k's definition in computation c, or -1. */
static int operand_pos(const module *m, const instr *in, int k, const name_ix *ix, int nix)
{
	const operand *op = &in->ops[k];
	if (m->checked)
		return op->def ? op->def->position : -1;
	if (!op->name)
		return -1;
	return lookup(ix, nix, op->name);
}

/* The operand's shape as the graph knows it, or NULL. */
static const shape *operand_shape(const module *m, const computation *c, const instr *in, int k,
				  int pos)
{
	const operand *op = &in->ops[k];
	if (m->checked)
		return op->def ? op->def->result : NULL;
	if (pos >= 0 && c->instrs[pos]->has_shape)
		return c->instrs[pos]->shape;
	return op->has_shape ? op->declared : NULL;
}

/* How operand k of a binary op or compare reaches the result: `scalar`, the
 * broadcast_dimensions (written, or `implicit` under NumPy's rule), and
 * `degenerate` when a size-1 dimension is stretched. Nothing for an operand
 * that already has the result's dimensions or when the shapes are unknown. */
static void binary_edge_label(strbuf *lab, const module *m, const instr *in, int k, const shape *os,
			      const shape *rs)
{
	if (!os || !rs || !shape_is_array(os) || !shape_is_array(rs) || os->rank > rs->rank)
		return;
	const int_list *bd = instr_ints(in, ATTR_BROADCAST_DIMENSIONS);
	int64_t map[HLOI_MAX_RANK];
	int written = bd && os->rank < rs->rank;
	if (m->checked) {
		for (int j = 0; j < os->rank; j++)
			map[j] = in->ops[k].out_dim[j];
	} else if (written) {
		if (bd->n != os->rank)
			return;
		for (int j = 0; j < os->rank; j++)
			map[j] = bd->v[j];
	} else if (os->rank == rs->rank || os->rank == 0 ||
		   m->broadcast_mode == HLOI_BROADCAST_NUMPY) {
		for (int j = 0; j < os->rank; j++)
			map[j] = rs->rank - os->rank + j;
	} else {
		return;
	}
	int stretched = 0;
	for (int j = 0; j < os->rank; j++) {
		if (map[j] < 0 || map[j] >= rs->rank)
			return;
		if (os->dims[j] == 1 && rs->dims[map[j]] != 1)
			stretched = 1;
	}
	if (os->rank == 0 && rs->rank > 0) {
		sb_puts(lab, "scalar");
		return;
	}
	if (os->rank < rs->rank) {
		sb_puts(lab, written ? "broadcast_dimensions=" : "implicit broadcast_dimensions=");
		put_list(lab, map, os->rank);
		if (stretched)
			sb_puts(lab, "\ndegenerate");
	} else if (stretched) {
		sb_puts(lab, "degenerate");
	}
}

static void put_edge_attrs(strbuf *b, const strbuf *lab)
{
	if (lab->len == 0 && !lab->oom) {
		sb_puts(b, ";\n");
		return;
	}
	sb_puts(b, " [");
	put_label(b, lab);
	sb_puts(b, ", color=\"" DOT_BROADCAST_COLOR "\", fontcolor=\"" DOT_BROADCAST_COLOR "\"];\n");
}

static void put_operand_edges(strbuf *b, const char *ind, const module *m, const computation *c,
			      int ci, int ii, const name_ix *ix, int nix)
{
	const instr *in = c->instrs[ii];
	op_category cat = opcode_category(in->op);
	for (int k = 0; k < in->nops; k++) {
		int pos = operand_pos(m, in, k, ix, nix);
		if (pos < 0 || pos >= c->ninstrs) {
			/* An operand no instruction defines (the check failed). */
			strbuf lab = STRBUF_INIT;
			sb_printf(&lab, "%s\n(undefined)", in->ops[k].name ? in->ops[k].name : "?");
			sb_printf(b, "%su_%d_%d_%d [", ind, ci, ii, k);
			put_label(b, &lab);
			sb_free(&lab);
			sb_puts(b, ", shape=plaintext, fontcolor=red];\n");
			sb_printf(b, "%su_%d_%d_%d -> n_%d_%d [color=red];\n", ind, ci, ii, k, ci, ii);
			continue;
		}
		strbuf lab = STRBUF_INIT;
		if (in->op == OP_BROADCAST) {
			const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
			sb_puts(&lab, "dimensions=");
			put_list(&lab, dl ? dl->v : NULL, dl ? dl->n : 0);
		} else if (cat == OPC_BINARY || cat == OPC_COMPARE) {
			binary_edge_label(&lab, m, in, k, operand_shape(m, c, in, k, pos),
					  result_shape(m, in));
		}
		sb_printf(b, "%sn_%d_%d -> n_%d_%d", ind, ci, pos, ci, ii);
		put_edge_attrs(b, &lab);
		sb_free(&lab);
	}
}

/* --- computations ----------------------------------------------------------- */

static int comp_index(const module *m, const computation *c)
{
	for (int i = 0; i < m->ncomps; i++)
		if (m->comps[i] == c)
			return i;
	return -1;
}

static int instr_index(const computation *c, const instr *in)
{
	for (int i = 0; i < c->ninstrs; i++)
		if (c->instrs[i] == in)
			return i;
	return -1;
}

static void put_computation(strbuf *b, const char *ind, const module *m, int ci, const dot_groups *groups)
{
	const computation *c = m->comps[ci];
	name_ix *ix = NULL;
	int nix = 0;
	if (!m->checked && c->ninstrs > 0) {
		ix = hloi_malloc((size_t)c->ninstrs * sizeof *ix);
		if (!ix) {
			b->oom = 1;
			return;
		}
		for (int i = 0; i < c->ninstrs; i++) {
			if (c->instrs[i]->name) {
				ix[nix].name = c->instrs[i]->name;
				ix[nix].pos = i;
				nix++;
			}
		}
		qsort(ix, (size_t)nix, sizeof *ix, cmp_name_ix);
	}
	for (int i = 0; i < c->ninstrs; i++) {
		int g = groups ? groups->group(groups->ctx, c, i) : -1;
		if (g < 0) {
			put_node(b, ind, m, ci, i, c->instrs[i], c->instrs[i] == c->root);
			continue;
		}
		/* a group's cluster, opened at its first node (one pass over the
		 * nodes per group) */
		int first = 1;
		for (int j = 0; j < i && first; j++)
			if (groups->group(groups->ctx, c, j) == g)
				first = 0;
		if (!first)
			continue;
		strbuf lab = STRBUF_INIT;
		groups->label(groups->ctx, c, g, &lab);
		sb_printf(b, "%ssubgraph \"cluster_%d_g%d\" {\n%s\tlabel=", ind, ci, g, ind);
		put_quoted(b, sb_str(&lab));
		if (lab.oom)
			b->oom = 1;
		sb_free(&lab);
		sb_printf(b, ";\n%s\tstyle=\"rounded,dashed\";\n%s\tcolor=\"#c05000\";\n", ind, ind);
		strbuf inner = STRBUF_INIT;
		sb_printf(&inner, "%s\t", ind);
		for (int j = i; j < c->ninstrs; j++)
			if (groups->group(groups->ctx, c, j) == g)
				put_node(b, sb_str(&inner), m, ci, j, c->instrs[j], c->instrs[j] == c->root);
		if (inner.oom)
			b->oom = 1;
		sb_free(&inner);
		sb_printf(b, "%s}\n", ind);
	}
	for (int i = 0; i < c->ninstrs; i++)
		put_operand_edges(b, ind, m, c, ci, i, ix, nix);
	hloi_free(ix);
}

/* Dashed edges from every call or fusion to the root of its callee. */
static void put_call_edges(strbuf *b, const module *m)
{
	for (int ci = 0; ci < m->ncomps; ci++) {
		const computation *c = m->comps[ci];
		for (int i = 0; i < c->ninstrs; i++) {
			const instr *in = c->instrs[i];
			for (int j = 0; j < in->nattrs; j++) {
				const attr *a = &in->attrs[j];
				if (a->kind != AK_COMP && a->kind != AK_COMPS)
					continue;
				int n = a->kind == AK_COMP ? 1 : a->u.words.n;
				for (int k = 0; k < n; k++) {
					const char *name = a->kind == AK_COMP ? a->u.s : a->u.words.v[k];
					const computation *callee = module_find_computation(m, name);
					if (!callee || !callee->root)
						continue;
					int cc = comp_index(m, callee), ri = instr_index(callee, callee->root);
					if (cc < 0 || ri < 0)
						continue;
					sb_printf(b, "\tn_%d_%d -> n_%d_%d [style=dashed, constraint=false, label=", ci,
						  i, cc, ri);
					put_quoted(b, attr_text_name(a));
					sb_puts(b, "];\n");
				}
			}
		}
	}
}

void text_print_dot(strbuf *b, const module *m)
{
	text_print_dot_groups(b, m, NULL);
}

void text_print_dot_groups(strbuf *b, const module *m, const dot_groups *groups)
{
	const char *name = m->name ? m->name : "module";
	sb_puts(b, "digraph ");
	put_quoted(b, name);
	sb_puts(b, " {\n");
	sb_puts(b, "\tgraph [labelloc=t, ordering=in, fontname=\"Helvetica\", label=");
	strbuf title = STRBUF_INIT;
	sb_printf(&title, "HloModule %s", name);
	if (m->entry)
		sb_printf(&title, ", ENTRY %s", m->entry->name ? m->entry->name : "?");
	put_quoted(b, sb_str(&title));
	if (title.oom)
		b->oom = 1;
	sb_free(&title);
	sb_puts(b, "];\n");
	sb_puts(b, "\tnode [fontname=\"Helvetica\", fontsize=10];\n");
	sb_puts(b, "\tedge [fontname=\"Helvetica\", fontsize=9];\n");
	for (int ci = 0; ci < m->ncomps; ci++) {
		const computation *c = m->comps[ci];
		if (c == m->entry)
			continue;
		strbuf id = STRBUF_INIT;
		sb_printf(&id, "cluster_%s", c->name ? c->name : "?");
		sb_printf(b, "\tsubgraph ");
		put_quoted(b, sb_str(&id));
		if (id.oom)
			b->oom = 1;
		sb_free(&id);
		sb_puts(b, " {\n\t\tlabel=");
		put_quoted(b, c->name ? c->name : "?");
		sb_puts(b, ";\n\t\tstyle=\"rounded,filled\";\n\t\tfillcolor=\"#f6f6f0\";\n");
		put_computation(b, "\t\t", m, ci, groups);
		sb_puts(b, "\t}\n");
	}
	for (int ci = 0; ci < m->ncomps; ci++)
		if (m->comps[ci] == m->entry)
			put_computation(b, "\t", m, ci, groups);
	put_call_edges(b, m);
	sb_puts(b, "}\n");
}
