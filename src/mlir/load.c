/* The StableHLO front end's driver: lowers the MLIR text to HLO text
 * (mlir.c), parses that with the HLO front end, and points the module's
 * locations back into the `.mlir` source, so that the checker's
 * diagnostics name the op's line there. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "mlir/mlir.h"
#include "text/parse.h"
#include "util/alloc.h"
#include "util/diag.h"

/* The span of the op name at offset `off` of the source. */
static loc span_at(const source *s, size_t off)
{
	size_t e = off;
	while (e < s->len && (isalnum((unsigned char)s->text[e]) || s->text[e] == '_' || s->text[e] == '.' ||
			      s->text[e] == '"' || s->text[e] == '%' || s->text[e] == '#'))
		e++;
	if (e == off && off < s->len)
		e = off + 1;
	return (loc){ off, e };
}

/* The source offset instruction `name` (`<opcode>.<N>`) was written for. */
static int offset_of(const char *name, const size_t *offs, size_t noffs, size_t *out)
{
	const char *dot = strrchr(name, '.');
	if (!dot || !dot[1])
		return 0;
	char *end;
	unsigned long long n = strtoull(dot + 1, &end, 10);
	if (*end || n >= noffs)
		return 0;
	*out = offs[n];
	return 1;
}

static void relocate(module *m, const source *s, const size_t *offs, size_t noffs)
{
	for (int c = 0; c < m->ncomps; c++) {
		computation *comp = m->comps[c];
		size_t off;
		loc cat = { 0, 0 };
		int have = 0;
		if (offset_of(comp->name, offs, noffs, &off)) {
			cat = span_at(s, off);
			have = 1;
		}
		for (int i = 0; i < comp->ninstrs; i++) {
			instr *in = comp->instrs[i];
			if (!offset_of(in->name, offs, noffs, &off))
				continue;
			loc l = span_at(s, off);
			if (!have) {
				cat = l;
				have = 1;
			}
			in->at = in->name_at = in->op_at = in->parameter_at = l;
			for (int k = 0; k < in->nops; k++)
				in->ops[k].at = l;
			for (int k = 0; k < in->nattrs; k++)
				in->attrs[k].at = in->attrs[k].vat = l;
		}
		comp->name_at = comp->sig_at = cat;
	}
}

hloi_status mlir_parse_module(module **out, hloi_context *ctx, const char *name, const char *text,
			      size_t len)
{
	*out = NULL;
	if (memchr(text, '\0', len)) {
		diag_error_where(ctx, name, "a NUL byte in the program text");
		return HLOI_EPARSE;
	}
	int src = diag_add_source(ctx, name, text, len);
	if (src < 0)
		return HLOI_ENOMEM;
	strbuf hlo = { 0 };
	size_t *offs = NULL, noffs = 0;
	const source *s = diag_source(ctx, src);
	hloi_status st = mlir_to_hlo(&hlo, &offs, &noffs, ctx, src, s->text, s->len);
	if (st != HLOI_OK)
		return st;
	/* the lowered text, named so that a message about it says what it is */
	size_t nl = strlen(name) + 32;
	char *lname = hloi_malloc(nl);
	if (!lname) {
		sb_free(&hlo);
		hloi_free(offs);
		return HLOI_ENOMEM;
	}
	snprintf(lname, nl, "%s (lowered to HLO)", name);
	size_t hlen = hlo.len;
	char *htext = sb_take(&hlo);
	module *m = NULL;
	st = htext ? text_parse_module_take(&m, ctx, lname, htext, hlen) : HLOI_ENOMEM;
	hloi_free(lname);
	if (st == HLOI_OK) {
		s = diag_source(ctx, src);
		relocate(m, s, offs, noffs);
		m->src = src;
		m->has_header = 0;
		*out = m;
	}
	hloi_free(offs);
	return st;
}
