/* Canonical HLO text printer (`hloi fmt`): parse -> print -> parse is a fixed
 * point. Prints what was written, normalised: no `%` sigils, operands without
 * their shapes, one instruction per line, attributes and literals in XLA's
 * spelling, comments dropped. */
#ifndef HLOI_TEXT_PRINT_H
#define HLOI_TEXT_PRINT_H

#include "ir/ir.h"
#include "util/strbuf.h"

void text_print_module(strbuf *b, const module *m);

#endif
