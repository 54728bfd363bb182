/* Proto interchange (doc/spec.md §6): XLA-compatible HloModuleProto / HloProto /
 * HloSnapshot in binary and text format <-> the IR. The only files that
 * include the generated *.pb-c.h headers are in src/proto/. */
#ifndef HLOI_PROTO_PROTO_H
#define HLOI_PROTO_PROTO_H

#include <stddef.h>

#include "hloi.h"
#include "ir/ir.h"

/* Loads a binary proto holding an HloModuleProto, HloProto or HloSnapshot
 * (detected by content). A snapshot's arguments are stored in the module
 * (m->snapshot_args). Errors name the computation and instruction; returns
 * HLOI_EPARSE (malformed / invalid), HLOI_ENOMEM. */
hloi_status proto_load_binary(module **out, hloi_context *ctx, const char *name,
			      const unsigned char *data, size_t len);
/* The same for protobuf text format (.pbtxt). */
hloi_status proto_load_text(module **out, hloi_context *ctx, const char *name, const char *text,
			    size_t len);
/* Serialises a checked module as an HloModuleProto; *out is hloi_malloc'd. */
hloi_status proto_save_binary(unsigned char **out, size_t *len, const module *m, hloi_context *ctx);
/* The same bytes handed to put(arg, data, n) in pieces, in order, as they
 * are made: a file is written without the whole of it in memory. put()
 * returns nonzero to stop; then HLOI_EIO, the sink saying why. */
typedef int (*proto_put_fn)(void *arg, const void *data, size_t n);
hloi_status proto_save_binary_to(proto_put_fn put, void *arg, const module *m, hloi_context *ctx);
/* The same in protobuf text format. Fields unknown to hloi's schema have
 * no text form: a warning says how many are dropped. */
hloi_status proto_save_text(char **out, size_t *len, const module *m, hloi_context *ctx);
/* Before writing a module read from a proto as HLO text: warns (at `where`)
 * about the proto fields the IR keeps aside and HLO text cannot show, by
 * name and count, unknown fields included. */
void proto_warn_text_drops(const module *m, hloi_context *ctx, const char *where);

/* XLA's RunHloModuleLiterals (run_hlo_module's --input_literals_file):
 * the arguments of the first iteration of `len` bytes, binary or (`text`)
 * protobuf text; a bare RunHloModuleIterationLiterals is accepted as XLA
 * accepts it. Free *out with hloi_literal_array_free. */
hloi_status proto_run_literals_read(hloi_literal ***out, size_t *count, hloi_context *ctx, const char *name,
				    const unsigned char *data, size_t len, int text);
/* One iteration's arguments, result and (may be NULL) reference result as
 * a RunHloModuleLiterals, binary or text; *out is hloi_malloc'd. */
hloi_status proto_run_literals_write(unsigned char **out, size_t *len, hloi_context *ctx, const char *name,
				     hloi_literal *const *args, size_t nargs, const hloi_literal *result,
				     const hloi_literal *reference, int text);

#endif
