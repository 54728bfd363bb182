/* The stop flag and the step limit of a run (see limits.h). */
#include "eval/base/limits.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "util/diag.h"

void eval_options_copy(hloi_run_options *out, const hloi_run_options *opts)
{
	hloi_run_options d = HLOI_RUN_OPTIONS_INIT;
	size_t n = 0;
	if (opts)
		n = opts->version >= 7   ? sizeof d
		    : opts->version == 6 ? offsetof(hloi_run_options, probe)
		    : opts->version == 5 ? offsetof(hloi_run_options, profile)
		    : opts->version == 4 ? offsetof(hloi_run_options, host_recv)
		    : opts->version == 3 ? offsetof(hloi_run_options, infeed)
		    : opts->version == 2 ? offsetof(hloi_run_options, progress)
					 : offsetof(hloi_run_options, stop);
	if (opts)
		memcpy(&d, opts, n);
	d.version = HLOI_RUN_OPTIONS_VERSION;
	*out = d;
}

void eval_limits_init(eval_limits *l, const hloi_run_options *opts)
{
	l->stop = opts && opts->version >= 2 ? opts->stop : NULL;
	l->max_steps = opts && opts->version >= 2 && opts->max_steps ? opts->max_steps : HLOI_DEFAULT_MAX_STEPS;
	l->steps = 0;
	l->progress = opts && opts->version >= 3 ? opts->progress : NULL;
}

hloi_status eval_limits_step(eval_limits *l, hloi_context *ctx, const computation *comp, const instr *in)
{
	/* an atomic load: another thread (a timer) may set the flag */
	if (l->stop && __atomic_load_n(l->stop, __ATOMIC_RELAXED)) {
		diag_error_where(ctx, NULL, "the run was stopped before instruction '%s' in computation '%s'",
				 in->name, comp->name);
		return HLOI_ESTOPPED;
	}
	if (l->steps >= l->max_steps) {
		diag_error_where(ctx, NULL,
				 "the run reached its limit of %" PRIu64 " evaluated instruction%s at instruction '%s' "
				 "in computation '%s' (calls included); raise it with max_steps (hloi: --max-steps)",
				 l->max_steps, l->max_steps == 1 ? "" : "s", in->name, comp->name);
		return HLOI_ESTOPPED;
	}
	l->steps++;
	if (l->progress)
		__atomic_store_n(l->progress, l->steps, __ATOMIC_RELAXED);
	return HLOI_OK;
}
