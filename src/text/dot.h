/* The computation graph of a module as Graphviz DOT (`hloi dot`): one node
 * per instruction, operand edges labelled with how they are broadcast, and
 * called computations as clusters. */
#ifndef HLOI_TEXT_DOT_H
#define HLOI_TEXT_DOT_H

#include "ir/ir.h"
#include "util/strbuf.h"

/* Appends the module's graph. A checked module (m->checked) is drawn with
 * the inferred shapes and the checker's operand-to-result dimension maps; an
 * unchecked one with the written shapes and attributes (names resolved here,
 * unknown operands drawn as red placeholders). Node ids are
 * `n_<computation index>_<instruction index>`. Allocation failure sets b->oom. */
void text_print_dot(strbuf *b, const module *m);

/* Groups of nodes drawn as clusters inside their computation (hloi dot
 * --plan: the fused regions of the evaluation plan). group(ctx, c, i) is
 * the group of instruction i of computation c, or -1; label(ctx, c, g, b)
 * appends group g's label. */
typedef struct dot_groups {
	int (*group)(void *ctx, const computation *c, int instr_index);
	void (*label)(void *ctx, const computation *c, int group, strbuf *b);
	void *ctx;
} dot_groups;

/* text_print_dot with the nodes of each group in a cluster of its own. */
void text_print_dot_groups(strbuf *b, const module *m, const dot_groups *g);

#endif
