/* infeed and outfeed: XLA's host transfers, here the run's infeed queue and
 * callbacks (hloi_run_options version 4; send and recv with
 * is_host_transfer=true are in sendrecv.c). An infeed takes the next value
 * of the queue, then what the infeed callback gives; with neither, the run
 * fails where XLA's device would wait forever. An outfeed hands its operand
 * to the outfeed callback. Both engines run these kernels. */
#include <string.h>

#include "eval/runtime/feeds.h"
#include "eval/runtime/spmd.h"
#include "ir/attrs.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/strbuf.h"

void eval_feeds_init(eval_feeds *f, const hloi_run_options *opts)
{
	memset(f, 0, sizeof *f);
	if (!opts || opts->version < 4)
		return;
	f->queue = opts->infeed;
	f->nqueue = opts->infeed ? opts->ninfeed : 0;
	f->infeed = opts->infeed_fn;
	f->outfeed = opts->outfeed;
	f->data = opts->feed_data;
	if (opts->version < 5)
		return;
	f->host_recv = opts->host_recv;
	f->host_send = opts->host_send;
	f->host_data = opts->host_data;
}

int eval_value_incomplete(const hloi_literal *v)
{
	if (shape_is_tuple(&v->shape)) {
		for (size_t i = 0; i < v->nelems; i++)
			if (!v->elems[i] || eval_value_incomplete(v->elems[i]))
				return 1;
		return 0;
	}
	return v->elided || (!v->data && value_bytes(&v->shape) > 0);
}

/* What the callbacks learn of `in`; its config unquoted into `a`. */
static void describe(engine *e, const frame *f, const instr *in, attr_id config, const shape *s, uint64_t index,
		     arena *a, hloi_feed *out)
{
	const char *q = instr_text(in, config);
	const char *text = q ? attr_string_value(a, q, NULL) : NULL;
	out->instruction = in->name;
	out->computation = f->comp->name;
	out->config = text ? text : "";
	out->shape = s;
	out->participant = e->spmd ? (size_t)e->spmd->id : 0;
	out->index = index;
}

hloi_status eval_callback_failed(engine *e, const instr *in, size_t errors, hloi_status st, const char *which)
{
	if (hloi_context_error_count(e->ctx) == errors)
		diag_error(e->ctx, e->m->src, in->op_at, "%s '%s': the %s callback failed (%s)", opcode_name(in->op),
			   in->name, which, hloi_status_name(st));
	return st;
}

hloi_status kernel_infeed(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	eval_feeds *q = &e->feeds;
	const shape *want = &in->result->tuple[0];
	const hloi_literal *v = NULL;
	hloi_status st = HLOI_OK;
	if (q->taken < q->nqueue) {
		v = q->queue[q->taken];
	} else if (q->infeed) {
		arena a;
		arena_init(&a);
		hloi_feed info;
		describe(e, f, in, ATTR_INFEED_CONFIG, want, q->taken, &a, &info);
		size_t errors = hloi_context_error_count(e->ctx);
		st = q->infeed(q->data, e->ctx, &info, &v);
		arena_release(&a);
		if (st != HLOI_OK)
			return eval_callback_failed(e, in, errors, st, "infeed");
	}
	if (!v) {
		diag_error(e->ctx, e->m->src, in->op_at,
			   "infeed '%s' in computation '%s' finds the infeed queue empty (after %llu value%s); give "
			   "the values with the run's infeed queue (hloi: --infeed FILE)",
			   in->name, f->comp->name, (unsigned long long)q->taken, q->taken == 1 ? "" : "s");
		return HLOI_EINVAL;
	}
	if (!shape_compatible(&v->shape, want) || eval_value_incomplete(v)) {
		strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		shape_print(&a, &v->shape, 0);
		shape_print(&b, want, 0);
		diag_error(e->ctx, e->m->src, in->op_at, "infeed '%s' reads %s, but value %llu of the infeed queue is %s%s",
			   in->name, sb_str(&b), (unsigned long long)q->taken, sb_str(&a),
			   shape_compatible(&v->shape, want) ? " without values ({...})" : "");
		sb_free(&a);
		sb_free(&b);
		return HLOI_EINVAL;
	}
	q->taken++;
	hloi_literal *res = NULL;
	st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	value_copy(res->elems[0], v);
	f->vals[in->position] = res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}

hloi_status kernel_outfeed(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	eval_feeds *q = &e->feeds;
	hloi_status st = HLOI_OK;
	if (q->outfeed) {
		arena a;
		arena_init(&a);
		hloi_feed info;
		describe(e, f, in, ATTR_OUTFEED_CONFIG, &ops[0]->shape, q->given, &a, &info);
		size_t errors = hloi_context_error_count(e->ctx);
		st = q->outfeed(q->data, e->ctx, &info, ops[0]);
		arena_release(&a);
		if (st != HLOI_OK)
			return eval_callback_failed(e, in, errors, st, "outfeed");
	}
	q->given++;
	hloi_literal *res = NULL;
	st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	f->vals[in->position] = res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}
