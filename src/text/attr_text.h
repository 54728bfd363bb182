/* Attribute values as HLO text: printing (here) and parsing (through the
 * parser's internal interface, text/parse_int.h). */
#ifndef HLOI_TEXT_ATTR_TEXT_H
#define HLOI_TEXT_ATTR_TEXT_H

#include "ir/ir.h"
#include "util/strbuf.h"

/* `name=value` as XLA prints it. */
void attr_print(strbuf *b, const attr *a);
/* Just the value. */
void attr_print_value(strbuf *b, const attr *a);
/* `{size=3x3 stride=2x2 ...}` (defaults left out, as XLA's WindowToString). */
void attr_print_window(strbuf *b, const window *w);
/* `{lhs={sparsity=1x4 dimension=0 stride=1} rhs={...}}` */
void attr_print_sparsity(strbuf *b, const sparsity_config *sp);
/* `b01f_01io->b01f` */
void attr_print_dim_labels(strbuf *b, const conv_dims *d);

/* From text/print.c: a name with the `%` it needs to read back (reserved
 * words), and a literal tree in XLA's one-line spelling. */
void text_put_name(strbuf *b, const char *name);
void text_put_literal(strbuf *b, const lit_node *n);

#endif
