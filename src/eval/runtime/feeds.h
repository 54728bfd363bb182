/* Infeed and outfeed (runtime/feeds.c): the run's queue and the host's
 * callbacks, shared with send and recv to the host (runtime/sendrecv.c). */
#ifndef HLOI_EVAL_RUNTIME_FEEDS_H
#define HLOI_EVAL_RUNTIME_FEEDS_H

#include "eval/kernels/kernel.h"

/* Reads the queue and callbacks of `opts` (version 4 and later; else none). */
void eval_feeds_init(eval_feeds *f, const hloi_run_options *opts);
/* Whether a value has elements whose values are unknown ({...}) or none:
 * what an infeed or a host recv refuses from the host. */
int eval_value_incomplete(const hloi_literal *v);
/* A host callback's failure status st for `in`; one that recorded no error
 * in the context (its count was `errors` before the call) gets one naming
 * the callback (`which`). Returns st. */
hloi_status eval_callback_failed(engine *e, const instr *in, size_t errors, hloi_status st, const char *which);

#endif
