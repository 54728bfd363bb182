/* What `hloi plan --cost` and the profiles print (report.c): the cost of
 * each step of the plan and the module's floor, a profile's steps sorted
 * by time with their rates against the machine's limits, and a profile as
 * a Chrome trace. */
#ifndef HLOI_EVAL_REPORT_H
#define HLOI_EVAL_REPORT_H

#include <stdio.h>

#include "eval/base/profile.h"
#include "eval/plan/cost.h"
#include "hloi.h"
#include "ir/ir.h"
#include "util/strbuf.h"

/* How a report prints. */
typedef struct report_opts {
	int json;
	int top;                   /* steps listed (0: all) */
	const cost_machine *machine; /* limits (zeros: unknown) */
	const char *machine_from;  /* where they came from, for the header */
} report_opts;

/* The cost of every step of the checked module's plan (entry first, then
 * each computation it calls, a while body once) and the module's floor. */
hloi_status eval_cost_report(strbuf *b, const module *m, const hloi_run_options *opts, const report_opts *r);
/* The profile's steps, slowest first, totals by opcode, and the floor. */
hloi_status eval_profile_report(strbuf *b, const hloi_profile *p, const module *m, const report_opts *r);
/* The profile's events as a Chrome trace-event JSON file (Perfetto,
 * chrome://tracing): a process per participant, a thread per nesting
 * depth of computations. HLOI_EINVAL when it holds no events (made
 * without HLOI_PROFILE_TRACE), HLOI_EIO on a write error. */
hloi_status eval_profile_trace(const hloi_profile *p, FILE *f);

#endif
