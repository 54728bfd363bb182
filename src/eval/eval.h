/* Engines: evaluate a checked module's entry computation. */
#ifndef HLOI_EVAL_EVAL_H
#define HLOI_EVAL_EVAL_H

#include <stdint.h>

#include "hloi.h"
#include "ir/ir.h"

/* Runs the checked module. inputs[i] must match parameter i in type and dims
 * (else HLOI_EINVAL with a message naming the parameter); an input in another
 * layout is converted. *out gets the result (caller frees). */
hloi_status eval_module(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			const hloi_run_options *opts, hloi_literal **out);

/* The same, writing the result into `result`, the caller's literal with the
 * exact shape and layouts of the module's result (no result allocation).
 * HLOI_EINVAL when its shape differs, when it shares a buffer with an input,
 * or when the module aliases its result to an input. */
hloi_status eval_module_into(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			     const hloi_run_options *opts, hloi_literal *result);

/* The parameter a checked module's whole result is written into
 * (input_output_alias with output index {}), or -1. */
int eval_aliased_parameter(const module *m);

/* The default memory budget: half of physical memory. */
uint64_t eval_default_budget(void);

/* Deterministic pseudo-random inputs for every parameter of the checked
 * module: the same seed always gives the same values. */
hloi_status eval_random_inputs(hloi_literal ***out, size_t *count, const module *m,
			       hloi_context *ctx, uint64_t seed);

#endif
