/* Engines: evaluate a checked module's entry computation. */
#ifndef HLOI_EVAL_EVAL_H
#define HLOI_EVAL_EVAL_H

#include <stdint.h>

#include "hloi.h"
#include "ir/ir.h"
#include "util/strbuf.h"

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

struct fast_tuning;

/* What a run measured. */
typedef struct eval_stats {
	uint64_t peak_bytes;  /* the most the engine held at once: values it made
			       * (results included) and the executor's scratch */
} eval_stats;

/* eval_module (into == NULL) or eval_module_into, with the fast engine's
 * sizes (`tuning`, NULL: the defaults) and the run's measurements (`stats`,
 * may be NULL). For the tests. */
hloi_status eval_module_tuned(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			      const hloi_run_options *opts, const struct fast_tuning *tuning, hloi_literal *into,
			      hloi_literal **out, eval_stats *stats);

/* The evaluation plan of the checked module (entry computation, then each
 * computation it calls) as text, as `hloi plan` prints it: steps, fused
 * regions with their instructions, inputs, outputs and buffers reused, the
 * executor's walk (rows or tiles, threads, scratch) and the peak memory.
 * opts: the engine (the reference engine fuses nothing) and threads. */
hloi_status eval_plan_text(strbuf *b, const module *m, const hloi_run_options *opts);
/* The planned peak bytes of one run: the parameters, the most the values
 * hold at once (the result included) and the executor's scratch. */
hloi_status eval_plan_peak(const module *m, const hloi_run_options *opts, uint64_t *out);
/* The module as Graphviz DOT (text/dot.h) with each fused region of two or
 * more instructions drawn as a cluster. */
hloi_status eval_plan_dot(strbuf *b, const module *m, const hloi_run_options *opts);

/* The parameter a checked module's whole result is written into
 * (input_output_alias with output index {}), or -1. */
int eval_aliased_parameter(const module *m);

/* The default memory budget: half of physical memory. */
uint64_t eval_default_budget(void);

/* Deterministic pseudo-random inputs for every parameter of the checked
 * module: the same seed always gives the same values. */
hloi_status eval_random_inputs(hloi_literal ***out, size_t *count, const module *m,
			       hloi_context *ctx, uint64_t seed);

/* A deterministic pseudo-random value of shape s (the values
 * eval_random_inputs draws, from `seed`). */
hloi_status eval_random_literal(hloi_literal **out, hloi_context *ctx, const shape *s, uint64_t seed);

/* Gives every elided constant (`{...}`) of the checked module deterministic
 * pseudo-random values drawn from `seed`; *filled counts them. */
hloi_status eval_fill_elided_constants(module *m, hloi_context *ctx, uint64_t seed, size_t *filled);

#endif
