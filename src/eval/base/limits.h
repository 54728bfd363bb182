/* Limits checked between the instructions of a run: the caller's stop flag
 * (interrupts, timeouts) and the bound on evaluated instructions
 * (hloi_run_options.stop and .max_steps). Kept apart from the engines so
 * that each evaluation loop needs one call. */
#ifndef HLOI_EVAL_LIMITS_H
#define HLOI_EVAL_LIMITS_H

#include <stdint.h>

#include "hloi.h"
#include "ir/ir.h"

typedef struct eval_limits {
	const volatile int *stop; /* NULL: never stopped from outside */
	uint64_t max_steps;                /* instructions a run may evaluate */
	uint64_t steps;                    /* evaluated so far */
	volatile uint64_t *progress;       /* NULL, or where steps are published */
} eval_limits;

/* `opts` (may be NULL) as an options struct of this version: the fields
 * of its version, the defaults for the later ones. */
void eval_options_copy(hloi_run_options *out, const hloi_run_options *opts);

/* Reads the limits of `opts` (may be NULL: the defaults). */
void eval_limits_init(eval_limits *l, const hloi_run_options *opts);

/* Called before instruction `in` of `comp` is evaluated: counts it, and
 * returns HLOI_ESTOPPED with an error naming it when the stop flag is set
 * or the step limit is exhausted; else HLOI_OK. */
hloi_status eval_limits_step(eval_limits *l, hloi_context *ctx, const computation *comp, const instr *in);

/* The default memory budget: half of physical memory (base/values.c). */
uint64_t eval_default_budget(void);

#endif
