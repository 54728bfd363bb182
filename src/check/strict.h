/* --strict beyond shapes: what XLA's HLO parser and verifier reject that hloi
 * otherwise accepts with a warning or as an extension (unknown attributes,
 * the broadcast_mode header attribute, broadcast_dimensions on binary ops). */
#ifndef HLOI_CHECK_STRICT_H
#define HLOI_CHECK_STRICT_H

#include <stddef.h>

#include "hloi.h"
#include "ir/ir.h"

/* With opts->strict set, reports each such attribute of the module as an
 * error in ctx and returns how many it reported; without, returns 0. Run
 * after the computations were checked (it looks at resolved operands). */
size_t check_strict_attrs(const module *m, hloi_context *ctx, const hloi_check_options *opts);

#endif
