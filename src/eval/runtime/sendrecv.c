/* Kernels of send, recv, send-done and recv-done between participants
 * (XLA's P2P send and recv: GetP2PConfigForSendRecv, RecvThunk):
 *
 *   send(data, token)   (data, u32 0, token); leaves a copy of data for the
 *                       target of the pair whose source is this participant
 *                       (nothing without one); never waits
 *   recv(token)         (zeros, u32 handle, token): the handle names the
 *                       message recv-done takes, from the source of the pair
 *                       whose target is this participant
 *   send-done           a token
 *   recv-done           (the message, token), waiting for it; zeros when
 *                       the recv has no source or does not run
 *
 * The k-th recv of a participant from a source on a channel takes the k-th
 * message that source sent it on that channel, so a recv may come before
 * the send it pairs with, and a transfer may span loop iterations (the
 * handle travels in the recv's value). `_xla_send_recv_validation` skips
 * the transfer on both sides ("invalid", or executions outside the pair's
 * bounds), as XLA's runtime does; hloi gives zeros where XLA leaves the
 * buffer as it was. On one device the only peer is the participant itself
 * (a pair {0,0}); a recv-done whose message was not sent before it fails
 * at once. A send or recv with is_host_transfer=true moves data to or from
 * the run's host callbacks instead (below). Both engines share these
 * kernels. */
#include <string.h>

#include "eval/runtime/feeds.h"
#include "eval/runtime/spmd.h"
#include "ir/attrs.h"
#include "ir/groups.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/strbuf.h"

/* A count kept per participant: the executions of an instruction, or the
 * messages sent to (received from) a peer on a channel. */
typedef struct p2p_count {
	const void *what;       /* the instruction, or &sends / &recvs */
	int64_t channel, peer;
	uint64_t n;
} p2p_count;

/* A recv whose recv-done has not run yet. */
typedef struct p2p_pending {
	const instr *recv;
	p2p_key key;
	int moves;              /* 0: recv-done gives zeros */
	uint32_t gen;           /* of the slot, in the handle's high bits */
	int live;
} p2p_pending;

struct p2p_state {
	p2p_count *counts;
	int ncounts, capcounts;
	p2p_pending *pending;
	int npending, cappending;
	p2p_msg *local;         /* one device: sent, not yet received */
};

static const char sends, recvs;

/* A handle: the pending slot + 1 in the low 20 bits, its generation above. */
#define HANDLE_SLOTS (1 << 20)

void eval_p2p_free(engine *e)
{
	struct p2p_state *p = e->p2p;
	if (!p)
		return;
	p2p_msg_free_all(&p->local);
	hloi_free(p->counts);
	hloi_free(p->pending);
	hloi_free(p);
	e->p2p = NULL;
}

static struct p2p_state *state(engine *e)
{
	if (!e->p2p)
		e->p2p = hloi_calloc(1, sizeof *e->p2p);
	return e->p2p;
}

/* The count of (what, channel, peer) before this one, counted up; -1 out
 * of memory. */
static int next_count(struct p2p_state *p, const void *what, int64_t channel, int64_t peer, uint64_t *out)
{
	for (int i = 0; i < p->ncounts; i++) {
		p2p_count *c = &p->counts[i];
		if (c->what == what && c->channel == channel && c->peer == peer) {
			*out = c->n++;
			return 0;
		}
	}
	if (p->ncounts == p->capcounts) {
		int cap = p->capcounts ? 2 * p->capcounts : 16;
		p2p_count *v = hloi_realloc(p->counts, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		p->counts = v;
		p->capcounts = cap;
	}
	p->counts[p->ncounts++] = (p2p_count){ what, channel, peer, 1 };
	*out = 0;
	return 0;
}

/* This participant's place in the pairs of `in`: its id in the mode, and
 * the flattened id of the mode's id `id`. */
typedef struct p2p_where {
	group_mode mode;
	int64_t me;             /* flattened */
	int64_t id;             /* replica id, or partition id with a channel_id > 0 */
	int64_t channel;
} p2p_where;

static p2p_where where_am_i(const engine *e, const instr *in)
{
	p2p_where w;
	int64_t r = e->spmd ? e->spmd->replica : 0, p = e->spmd ? e->spmd->partition : 0;
	w.mode = collective_group_mode(in);
	w.me = r * e->m->partitions + p;
	w.id = w.mode == GM_PARTITION ? p : r;
	if (!instr_int(in, ATTR_CHANNEL_ID, &w.channel))
		w.channel = 0;
	return w;
}

static int64_t flat(const engine *e, const p2p_where *w, int64_t id)
{
	int64_t r = e->spmd ? e->spmd->replica : 0, p = e->spmd ? e->spmd->partition : 0;
	return w->mode == GM_PARTITION ? r * e->m->partitions + id : id * e->m->partitions + p;
}

/* The peer of this participant in the pairs of `in` (the target of a send,
 * the source of a recv; the last pair naming it, as XLA's map keeps), as a
 * flattened id in *peer, and whether data moves at this execution (the
 * validation). *peer = -1 when there is none. */
static hloi_status peer_of(engine *e, struct p2p_state *ps, const instr *in, const p2p_where *w, int64_t *peer,
			   int *moves)
{
	p2p_pairs pairs;
	const char *why;
	uint64_t execution;
	*peer = -1;
	*moves = 0;
	int rc = p2p_pairs_read(in, &pairs, &why);
	if (rc) {
		if (rc < 0)
			return value_oom(e, 64);
		diag_error_where(e->ctx, NULL, "'%s' (%s): %s", in->name, opcode_name(in->op), why);
		return HLOI_EINVAL;
	}
	if (next_count(ps, in, 0, 0, &execution)) {
		p2p_pairs_free(&pairs);
		return value_oom(e, (int64_t)sizeof(p2p_count));
	}
	int send = in->op == OP_SEND;
	for (int64_t i = 0; i < pairs.n; i++) {
		if ((send ? pairs.src[i] : pairs.dst[i]) != w->id)
			continue;
		*peer = flat(e, w, send ? pairs.dst[i] : pairs.src[i]);
		*moves = !pairs.invalid &&
			 (!pairs.lo || ((int64_t)execution >= pairs.lo[i] && (int64_t)execution <= pairs.hi[i]));
	}
	p2p_pairs_free(&pairs);
	if (*peer < 0)
		*moves = 0;
	return HLOI_OK;
}

static hloi_status do_send(engine *e, struct p2p_state *ps, const instr *in, const hloi_literal *data)
{
	p2p_where w = where_am_i(e, in);
	int64_t to;
	int moves;
	hloi_status st = peer_of(e, ps, in, &w, &to, &moves);
	if (st != HLOI_OK || !moves)
		return st;
	p2p_key k = { w.channel, w.me, to, 0 };
	if (next_count(ps, &sends, w.channel, to, &k.seq))
		return value_oom(e, (int64_t)sizeof(p2p_count));
	hloi_literal *copy = NULL;
	if (hloi_literal_clone(&copy, data) != HLOI_OK)
		return value_oom(e, (int64_t)data->nbytes);
	if (e->spmd)
		return spmd_post(e, &k, in, copy);
	return p2p_msg_push(&ps->local, &k, in, copy) ? value_oom(e, (int64_t)sizeof(p2p_msg)) : HLOI_OK;
}

/* recv: a pending slot for recv-done, named by the handle written into the
 * value's u32 element. */
static hloi_status do_recv(engine *e, struct p2p_state *ps, const instr *in, hloi_literal *res)
{
	p2p_where w = where_am_i(e, in);
	int64_t from;
	int moves;
	hloi_status st = peer_of(e, ps, in, &w, &from, &moves);
	if (st != HLOI_OK)
		return st;
	p2p_key k = { w.channel, from, w.me, 0 };
	if (moves && next_count(ps, &recvs, w.channel, from, &k.seq))
		return value_oom(e, (int64_t)sizeof(p2p_count));
	int slot = 0;
	while (slot < ps->npending && ps->pending[slot].live)
		slot++;
	if (slot == ps->npending) {
		if (ps->npending >= HANDLE_SLOTS - 1) {
			diag_error_where(e->ctx, NULL, "'%s' (recv): more than %d recvs wait for their recv-done", in->name,
					 HANDLE_SLOTS - 2);
			return HLOI_EUNSUPPORTED;
		}
		if (ps->npending == ps->cappending) {
			int cap = ps->cappending ? 2 * ps->cappending : 8;
			p2p_pending *v = hloi_realloc(ps->pending, (size_t)cap * sizeof *v);
			if (!v)
				return value_oom(e, (int64_t)sizeof *v * cap);
			ps->pending = v;
			ps->cappending = cap;
		}
		memset(&ps->pending[ps->npending++], 0, sizeof *ps->pending);
	}
	p2p_pending *pd = &ps->pending[slot];
	pd->recv = in;
	pd->key = k;
	pd->moves = moves;
	pd->gen = (pd->gen + 1) & 0xfff;
	pd->live = 1;
	uint32_t handle = (pd->gen << 20) | (uint32_t)(slot + 1);
	memcpy(res->elems[1]->data, &handle, sizeof handle);
	return HLOI_OK;
}

static hloi_status do_recv_done(engine *e, struct p2p_state *ps, const instr *in, const hloi_literal *ctx,
				hloi_literal *res)
{
	uint32_t handle = 0;
	if (ctx->elems[1]->data)
		memcpy(&handle, ctx->elems[1]->data, sizeof handle);
	int slot = (int)(handle & (HANDLE_SLOTS - 1)) - 1;
	if (slot < 0 || slot >= ps->npending || !ps->pending[slot].live || ps->pending[slot].gen != handle >> 20) {
		diag_error_where(e->ctx, NULL,
				 "'%s' (recv-done): its operand is not the value of a recv waiting for its recv-done (context %u): a send's, made another way, or done already",
				 in->name, handle);
		return HLOI_EINVAL;
	}
	p2p_pending pd = ps->pending[slot];
	ps->pending[slot].live = 0;
	if (!pd.moves)
		return HLOI_OK;
	p2p_msg *m = NULL;
	hloi_status st = HLOI_OK;
	if (e->spmd) {
		st = spmd_take(e, in, pd.recv, &pd.key, &m);
	} else if (!(m = p2p_msg_take(&ps->local, &pd.key))) {
		diag_error_where(e->ctx, NULL,
				 "'%s' (recv-done) waits for what this device sends itself on channel %lld for '%s' (recv), and no send before it did (deadlock)",
				 in->name, (long long)pd.key.channel, pd.recv->name);
		st = HLOI_EINVAL;
	}
	if (st != HLOI_OK)
		return st;
	const shape *got = &m->val->shape, *want = &res->elems[0]->shape;
	if (got->type != want->type || !shape_same_dims(got, want)) {
		strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		shape_print(&a, got, 0);
		shape_print(&b, want, 0);
		diag_error_where(e->ctx, NULL, "'%s' (recv-done): '%s' (send) sent %s, but '%s' (recv) receives %s",
				 in->name, m->send->name, sb_str(&a), pd.recv->name, sb_str(&b));
		sb_free(&a);
		sb_free(&b);
		st = HLOI_EINVAL;
	} else {
		value_copy(res->elems[0], m->val);
	}
	p2p_msg_free(m);
	return st;
}

/* --- transfers with the host (is_host_transfer=true) ------------------------
 *
 * A host send hands its operand to the run's host_send callback (none: the
 * value is dropped); a host recv takes its data from host_recv when it runs
 * and holds it in its value's element 0, which its recv-done gives on. The
 * channel_id keys both, as PjRt's send and recv callbacks are keyed. */

static const char host_sends, host_recvs;

/* What the callbacks learn of `in`; the rendezvous name copied into `name`. */
static hloi_status describe_host(engine *e, struct p2p_state *ps, const frame *f, const instr *in, const shape *s,
				 strbuf *name, hloi_host_transfer *out)
{
	const char *v;
	size_t len = 0;
	memset(out, 0, sizeof *out);
	if (!instr_int(in, ATTR_CHANNEL_ID, &out->channel_id))
		out->channel_id = 0;
	if (next_count(ps, in->op == OP_SEND ? &host_sends : &host_recvs, out->channel_id, 0, &out->index))
		return value_oom(e, (int64_t)sizeof(p2p_count));
	if (frontend_value(in, "_xla_host_transfer_rendezvous", &v, &len))
		sb_putn(name, v, len);
	if (name->oom)
		return value_oom(e, (int64_t)len);
	out->rendezvous = sb_str(name);
	out->instruction = in->name;
	out->computation = f->comp->name;
	out->shape = s;
	out->participant = e->spmd ? (size_t)e->spmd->id : 0;
	return HLOI_OK;
}

static hloi_status host_send(engine *e, struct p2p_state *ps, const frame *f, const instr *in,
			     const hloi_literal *data)
{
	eval_feeds *q = &e->feeds;
	strbuf name = STRBUF_INIT;
	hloi_host_transfer t;
	hloi_status st = describe_host(e, ps, f, in, &data->shape, &name, &t);
	if (st == HLOI_OK && q->host_send) {
		size_t errors = hloi_context_error_count(e->ctx);
		st = q->host_send(q->host_data, e->ctx, &t, data);
		if (st != HLOI_OK)
			st = eval_callback_failed(e, in, errors, st, "host send");
	}
	sb_free(&name);
	return st;
}

static hloi_status host_recv(engine *e, struct p2p_state *ps, const frame *f, const instr *in, hloi_literal *res)
{
	eval_feeds *q = &e->feeds;
	const shape *want = &res->elems[0]->shape;
	const hloi_literal *v = NULL;
	strbuf name = STRBUF_INIT;
	hloi_host_transfer t;
	hloi_status st = describe_host(e, ps, f, in, want, &name, &t);
	if (st == HLOI_OK && q->host_recv) {
		size_t errors = hloi_context_error_count(e->ctx);
		st = q->host_recv(q->host_data, e->ctx, &t, &v);
		if (st != HLOI_OK)
			st = eval_callback_failed(e, in, errors, st, "host recv");
	}
	sb_free(&name);
	if (st != HLOI_OK)
		return st;
	if (!v) {
		diag_error(e->ctx, e->m->src, in->op_at,
			   "recv '%s' in computation '%s' receives from the host on channel %lld, which gives no value "
			   "(after %llu value%s); give them with the run's host_recv callback (hloi: --host-recv %lld:FILE)",
			   in->name, f->comp->name, (long long)t.channel_id, (unsigned long long)t.index,
			   t.index == 1 ? "" : "s", (long long)t.channel_id);
		return HLOI_EINVAL;
	}
	if (!shape_compatible(&v->shape, want) || eval_value_incomplete(v)) {
		strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		shape_print(&a, &v->shape, 0);
		shape_print(&b, want, 0);
		diag_error(e->ctx, e->m->src, in->op_at,
			   "recv '%s' receives %s, but value %llu the host gives on channel %lld is %s%s", in->name,
			   sb_str(&b), (unsigned long long)t.index, (long long)t.channel_id, sb_str(&a),
			   shape_compatible(&v->shape, want) ? " without values ({...})" : "");
		sb_free(&a);
		sb_free(&b);
		return HLOI_EINVAL;
	}
	value_copy(res->elems[0], v);
	return HLOI_OK;
}

hloi_status kernel_p2p(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *res = NULL;
	hloi_status st = value_result(e, f, in, &res);
	if (st != HLOI_OK)
		return st;
	value_zero(res);
	struct p2p_state *ps = state(e);
	if (!ps)
		return value_oom(e, (int64_t)sizeof *ps);
	if (instr_bool(in, ATTR_IS_HOST_TRANSFER, 0)) {
		/* op-specific: each transfer's own step */
		switch (in->op) {
		case OP_SEND:
			value_copy(res->elems[0], ops[0]);
			return host_send(e, ps, f, in, ops[0]);
		case OP_RECV:
			return host_recv(e, ps, f, in, res);
		case OP_RECV_DONE:
			value_copy(res->elems[0], ops[0]->elems[0]);
			return HLOI_OK;
		default:
			return HLOI_OK;
		}
	}
	/* op-specific: each transfer's own step */
	switch (in->op) {
	case OP_SEND:
		value_copy(res->elems[0], ops[0]);
		return do_send(e, ps, in, ops[0]);
	case OP_RECV:
		return do_recv(e, ps, in, res);
	case OP_RECV_DONE:
		return do_recv_done(e, ps, in, ops[0], res);
	default: /* send-done: a token */
		return HLOI_OK;
	}
}
