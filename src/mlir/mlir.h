/* The StableHLO front end: MLIR text (`.mlir`, as JAX, stablehlo-opt and
 * stablehlo-translate print it) lowered to HLO text, which the HLO front end
 * then reads (doc/stablehlo.md says why). The module's locations point into
 * the `.mlir` source, so the checker's diagnostics name its lines. */
#ifndef HLOI_MLIR_MLIR_H
#define HLOI_MLIR_MLIR_H

#include <stddef.h>

#include "hloi.h"
#include "ir/ir.h"
#include "util/strbuf.h"

/* Parses StableHLO text (`len` bytes, NUL at text[len]) into a module.
 * Errors are located in the source (registered in ctx under `name`);
 * HLOI_EPARSE then, and *out = NULL. */
hloi_status mlir_parse_module(module **out, hloi_context *ctx, const char *name, const char *text,
			      size_t len);

/* Lowers StableHLO text to HLO text in *hlo (its instructions named
 * `<opcode>.<N>`), and the source offset of each N in *offs (hloi_malloc'd,
 * *noffs entries). src is the source id of `text` in ctx (for diagnostics).
 * HLOI_EPARSE or HLOI_ENOMEM on failure. */
hloi_status mlir_to_hlo(strbuf *hlo, size_t **offs, size_t *noffs, hloi_context *ctx, int src,
			const char *text, size_t len);

/* Whether text (after white space and `//` comments) starts as MLIR does:
 * `module`, `func.func`, `#` or `"builtin.module"`. */
int mlir_looks_like(const char *t, size_t len);

#endif
