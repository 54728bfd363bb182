/* Canonical HLO text printer (`hloi fmt`): parse -> print -> parse is a fixed
 * point. Prints what was written, normalised: no `%` sigils, operands without
 * their shapes, one instruction per line, attributes and literals in XLA's
 * spelling, comments dropped. */
#ifndef HLOI_TEXT_PRINT_H
#define HLOI_TEXT_PRINT_H

#include "ir/ir.h"
#include "util/strbuf.h"

/* Prints the whole module. A constant loaded from a proto prints from its
 * value with literal_print, so its text can be huge for a tiny file
 * (f32[1099511627776,0] prints one `{}` per row): the public printers call
 * text_print_empty_count first and refuse more than
 * HLOI_PRINT_MAX_EMPTY_SUBARRAYS. */
void text_print_module(strbuf *b, const module *m);
/* How many empty sub-arrays text_print_module writes: the sum of
 * literal_print_empty_count over the constants and `literal=` attributes it
 * prints from their values (those loaded from a proto; a constant written as HLO text prints as
 * written). Saturates at UINT64_MAX. When not NULL, *comp and *in receive
 * the constant with the most and its computation (NULL when none has
 * any). */
uint64_t text_print_empty_count(const module *m, const computation **comp, const instr **in);
/* The value `in` prints from (a constant or a `literal=` attribute loaded
 * from a proto), or NULL when it prints as written. */
const hloi_literal *text_printed_literal(const instr *in);

#endif
