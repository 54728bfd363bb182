/* The HLO text front end: a reentrant flex + bison parser (grammar/hlo.l,
 * grammar/hlo.y) with three entry points sharing one grammar. */
#ifndef HLOI_TEXT_PARSE_H
#define HLOI_TEXT_PARSE_H

#include <stddef.h>

#include "core/literal.h"
#include "core/shape.h"
#include "hloi.h"
#include "ir/ir.h"

/* Parses a whole program (doc/spec.md §2). The text is registered as a source in
 * ctx (m->src). Errors are recorded with their locations, several per run
 * where the parser can recover; returns HLOI_EPARSE then (and *out = NULL).
 * Unknown attributes are skipped with a warning. */
hloi_status text_parse_module(module **out, hloi_context *ctx, const char *name, const char *text,
			      size_t len);
/* The same, taking `text` (hloi_malloc'd, NUL at text[len]) as the
 * registered source instead of copying it: the caller no longer owns it. */
hloi_status text_parse_module_take(module **out, hloi_context *ctx, const char *name, char *text,
				   size_t len);

/* Parses literals written with their shape prefix, separated by white space
 * (`f32[2] {1, 2}  s32[] 3`). Shapes and trees go into arena `a`; *src is the
 * source id registered in ctx (for literal_from_tree's locations). */
hloi_status text_parse_literals(arena *a, hloi_context *ctx, int *src, const char *name,
				const char *text, size_t len, shape **shapes, lit_node ***trees,
				size_t *count);

/* Parses one shape (`f32[2,3]{0,1:pad(3,5)}`); tuple element shapes go into
 * arena `a`. Does not fill in a missing layout or validate. */
hloi_status text_parse_shape(shape *out, arena *a, hloi_context *ctx, const char *name,
			     const char *text, size_t len);

/* Parses `value` as the value of attribute `name` in XLA's text syntax into
 * *out (strings and arrays in m's arena); an unknown name gives an AK_RAW
 * attribute keeping the text. Errors are reported in ctx against a source
 * named `where`. HLOI_EPARSE or HLOI_ENOMEM on failure. */
hloi_status text_parse_attr(attr *out, module *m, hloi_context *ctx, const char *where, const char *name,
			    const char *value);

#endif
