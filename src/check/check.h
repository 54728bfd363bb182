/* The checker: names, operand counts, element types, shapes, broadcasting
 * (doc/spec.md §3), layouts. Fills the checker fields of the IR. */
#ifndef HLOI_CHECK_CHECK_H
#define HLOI_CHECK_CHECK_H

#include "hloi.h"
#include "ir/ir.h"

/* Records every error found in ctx (located in m->src). Returns HLOI_OK,
 * HLOI_ETYPE, HLOI_EUNSUPPORTED (only unsupported features found) or
 * HLOI_ENOMEM. Sets m->checked on success. */
hloi_status check_module(module *m, hloi_context *ctx, const hloi_check_options *opts);
/* The module checked again for a run with inputs of these shapes: each `?`
 * dimension of an entry parameter becomes its input's size, and the shapes
 * are inferred again from there (as StableHLO's shape refinement
 * specialises a module to its arguments). Uses the options of the module's
 * last check. A `?` left where no input decides it is refused. */
hloi_status check_module_sized(module *m, hloi_context *ctx, const shape *const *inputs, size_t ninputs);

#endif
