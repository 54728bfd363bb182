/* The engine's driver: runs the plan of a computation (eval/plan/plan.h) step by
 * step — a fused region through the executor of eval/fast/, any other
 * instruction through the kernel table (engine.h) — frees every value
 * after its last use, lets a step write over a value it reads for the last
 * time, and writes an aliased result (input_output_alias, doc/spec.md §3.3) or
 * the caller's result (run into) straight into its destination. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/index.h"
#include "eval/eval.h"
#include "eval/fast/reduce.h"
#include "eval/base/profile.h"
#include "eval/kernels/kernel.h"
#include "eval/plan/cost.h"
#include "eval/plan/plan.h"
#include "eval/runtime/feeds.h"
#include "eval/runtime/spmd.h"
#include "util/alloc.h"

/* The kernel of every opcode, from the table (ir/opcodes.def). */
static const kernel_fn kernels[OP_COUNT] = {
#define X(E, text, arity, cat, infer, ev, flags, types) [OP_##E] = kernel_##ev,
#include "ir/opcodes.def"
#undef X
};

/* Whether the kernel of `in` places elements through index_strides, which
 * tiled layouts do not have (core/index.h): every op but those whose
 * kernels address elements through core/index.h's positions (elementwise
 * ops, copies, sort), those that only pass values on (tuples, calls,
 * control flow) and bitcast, whose meaning is the buffer's bytes. */
static int needs_untiled(opcode op)
{
	return !opcode_has(op, OPF_TILED);
}

static int is_tiled_array(const shape *s)
{
	return !shape_is_tuple(s) && !index_is_strided(s);
}

/* The shape with its tiles (and what only tiles mean) dropped. */
static shape untiled(const shape *s)
{
	shape u = *s;
	u.layout.ntiles = 0;
	u.layout.tail_padding_alignment = 0;
	u.layout.element_size_in_bits = 0;
	return u;
}

/* `in` on untiled copies of its tiled array operands, into an untiled
 * result converted to in's tiled one: for kernels that place elements
 * through strides (needs_untiled). */
static hloi_status eval_untiled(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
				hloi_literal *const *args, hloi_literal *dest)
{
	hloi_literal *small[8];
	uint8_t owned_small[8] = { 0 };
	hloi_literal **cops = small;
	uint8_t *owned = owned_small;
	hloi_status st = HLOI_OK;
	int pos = in->position;
	if (in->nops > 8) {
		cops = hloi_calloc((size_t)in->nops, sizeof *cops);
		owned = hloi_calloc((size_t)in->nops, 1);
		if (!cops || !owned) {
			hloi_free(cops);
			hloi_free(owned);
			return value_oom(e, (int64_t)in->nops * (int64_t)sizeof *cops);
		}
	}
	for (int i = 0; i < in->nops; i++) {
		cops[i] = ops[i];
		if (ops[i] && is_tiled_array(&ops[i]->shape)) {
			shape u = untiled(&ops[i]->shape);
			int o = 0;
			st = value_conform(e, ops[i], &u, &cops[i], &o);
			if (st != HLOI_OK)
				goto done;
			owned[i] = (uint8_t)o;
		}
	}
	instr copy = *in;
	int tiled_result = is_tiled_array(in->result);
	shape untiled_result;
	if (tiled_result) {
		untiled_result = untiled(in->result);
		copy.result = &untiled_result;
	}
	/* the copies are not the frame's values: no kernel takes one over as
	 * its result (in place), which it would for an operand at its last use */
	uint8_t saved_small[8];
	uint8_t *saved = in->nops > 8 ? hloi_calloc((size_t)in->nops, 1) : saved_small;
	if (!saved) {
		st = value_oom(e, in->nops);
		goto done;
	}
	for (int i = 0; i < in->nops; i++)
		saved[i] = f->owned[in->ops[i].def->position];
	for (int i = 0; i < in->nops; i++)
		if (owned[i])
			f->owned[in->ops[i].def->position] = VAL_BORROWED;
	st = kernels[in->op](&(kernel_ctx){ e, f, &copy, cops, args, tiled_result ? NULL : dest });
	for (int i = in->nops - 1; i >= 0; i--)
		if (owned[i])
			f->owned[in->ops[i].def->position] = saved[i];
	if (saved != saved_small)
		hloi_free(saved);
	if (st != HLOI_OK || !tiled_result)
		goto done;
	/* the untiled result, converted to the written layout */
	hloi_literal *r = f->vals[pos], *t = NULL;
	int o = 0;
	if (dest) {
		value_copy(dest, r);
		t = dest;
	} else {
		st = value_conform(e, r, in->result, &t, &o);
		if (st != HLOI_OK)
			goto done;
	}
	if (f->owned[pos] == VAL_OWNED)
		value_drop(e, r);
	f->vals[pos] = t;
	f->owned[pos] = t == dest ? VAL_BORROWED : VAL_OWNED;
done:
	for (int i = 0; i < in->nops; i++)
		if (owned[i])
			value_drop(e, cops[i]);
	if (cops != small) {
		hloi_free(cops);
		hloi_free(owned);
	}
	return st;
}

/* Evaluates one instruction into f->vals; `dest` (the root of an aliased
 * computation) is where its result must end up, or NULL. */
static hloi_status eval_instr(engine *e, frame *f, const instr *in, hloi_literal *const *args, hloi_literal *dest)
{
	kernel_fn k = kernels[in->op];
	hloi_literal *small[8];
	hloi_literal **ops = small;
	if (in->nops > 8) {
		ops = hloi_calloc((size_t)in->nops, sizeof *ops);
		if (!ops)
			return value_oom(e, (int64_t)in->nops * (int64_t)sizeof *ops);
	}
	int tiled = 0;
	for (int i = 0; i < in->nops; i++) {
		ops[i] = f->vals[in->ops[i].def->position];
		tiled |= ops[i] && is_tiled_array(&ops[i]->shape);
	}
	tiled |= is_tiled_array(in->result);
	hloi_status st = tiled && needs_untiled(in->op) ? eval_untiled(e, f, in, ops, args, dest)
			 : eval_is_dynamic(in, ops)	   ? eval_dynamic(e, f, in, ops, args, dest, k)
							   : k(&(kernel_ctx){ e, f, in, ops, args, dest });
	if (ops != small)
		hloi_free(ops);
	return st;
}

/* The slot of comp in an index of 2^bits slots: its first probe. */
static size_t plan_slot(const computation *comp, int bits)
{
	return (size_t)(((uint64_t)(uintptr_t)comp * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits));
}

/* Rebuilds e->plan_index for 2^bits slots (at least twice the plans):
 * each slot 0 (empty) or 1 + a plan's place in e->plans. */
static int plan_index_build(engine *e, int bits)
{
	size_t cap = (size_t)1 << bits, mask = cap - 1;
	int *t = hloi_calloc(cap, sizeof *t);
	if (!t)
		return -1;
	for (int i = 0; i < e->nplans; i++) {
		size_t k = plan_slot(e->plans[i]->comp, bits);
		while (t[k])
			k = (k + 1) & mask;
		t[k] = i + 1;
	}
	hloi_free(e->plan_index);
	e->plan_index = t;
	e->index_bits = bits;
	return 0;
}

/* The instructions of one computation a run probes (hloi_run_options
 * version 7), and the values each has given so far. */
typedef struct eval_probed {
	uint8_t *on;       /* per position; NULL: none probed */
	uint64_t *count;
} eval_probed;

/* The name of comp as probes name it: a copy sized for a run is named as
 * the computation it was copied from. */
static const char *probe_comp_name(const computation *comp)
{
	return comp->sized_from ? comp->sized_from->name : comp->name;
}

/* Whether probe name `name` (`instruction` or `computation/instruction`)
 * selects instruction `in` of comp. */
static int probe_selects(const char *name, const computation *comp, const instr *in)
{
	const char *slash = strchr(name, '/');
	if (!slash)
		return strcmp(name, in->name) == 0;
	const char *cname = probe_comp_name(comp);
	size_t n = (size_t)(slash - name);
	return strlen(cname) == n && memcmp(name, cname, n) == 0 && strcmp(slash + 1, in->name) == 0;
}

size_t eval_probe_matches(const module *m, const char *name)
{
	size_t n = 0;
	for (int c = 0; m->checked && c < m->ncomps; c++)
		for (int i = 0; i < m->comps[c]->ninstrs; i++)
			n += (size_t)probe_selects(name, m->comps[c], m->comps[c]->instrs[i]);
	return n;
}

/* The probed instructions of comp into *pr (pr->on NULL when none). */
static hloi_status probe_set(engine *e, const computation *comp, eval_probed *pr)
{
	int n = comp->ninstrs, any = 0;
	pr->on = NULL;
	pr->count = NULL;
	uint8_t *on = hloi_calloc((size_t)(n ? n : 1), 1);
	if (!on)
		return value_oom(e, n);
	for (int i = 0; i < n; i++) {
		for (size_t k = 0; !on[i] && k < e->nprobe_names; k++)
			on[i] = (uint8_t)probe_selects(e->probe_names[k], comp, comp->instrs[i]);
		if (!e->probe_names)
			on[i] = 1;
		any |= on[i];
	}
	if (!any) {
		hloi_free(on);
		return HLOI_OK;
	}
	pr->count = hloi_calloc((size_t)n, sizeof *pr->count);
	if (!pr->count) {
		hloi_free(on);
		return value_oom(e, (int64_t)n * (int64_t)sizeof *pr->count);
	}
	pr->on = on;
	return HLOI_OK;
}

/* The plan of comp for this engine, built on first use and kept for the
 * run (a computation called again and again is planned once); *index is
 * its place in e->plans (and e->probed). */
static hloi_status plan_for(engine *e, const computation *comp, const eval_plan **out, int *index)
{
	if (e->plan_index) {
		size_t mask = ((size_t)1 << e->index_bits) - 1;
		for (size_t k = plan_slot(comp, e->index_bits); e->plan_index[k]; k = (k + 1) & mask) {
			int i = e->plan_index[k] - 1;
			if (e->plans[i]->comp == comp) {
				*out = e->plans[i];
				*index = i;
				return HLOI_OK;
			}
		}
	}
	if (e->nplans == e->cap_plans) {
		int cap = e->cap_plans ? 2 * e->cap_plans : 8;
		eval_plan **v = hloi_calloc((size_t)cap, sizeof *v);
		eval_probed *pv = e->probe ? hloi_calloc((size_t)cap, sizeof *pv) : NULL;
		if (!v || (e->probe && !pv)) {
			hloi_free(v);
			hloi_free(pv);
			return value_oom(e, (int64_t)cap * (int64_t)sizeof *v);
		}
		if (e->nplans) {
			memcpy(v, e->plans, (size_t)e->nplans * sizeof *v);
			if (pv)
				memcpy(pv, e->probed, (size_t)e->nplans * sizeof *pv);
		}
		hloi_free(e->plans);
		hloi_free(e->probed);
		e->plans = v;
		e->probed = pv;
		e->cap_plans = cap;
	}
	eval_probed pr = { NULL, NULL };
	if (e->probe) {
		hloi_status st = probe_set(e, comp, &pr);
		if (st != HLOI_OK)
			return st;
	}
	eval_plan *p = NULL;
	hloi_status st = plan_build(&p, comp, e->fast, e->tuning && e->tuning->generic, pr.on);
	if (st != HLOI_OK) {
		hloi_free(pr.on);
		hloi_free(pr.count);
		return value_oom(e, (int64_t)comp->ninstrs * (int64_t)sizeof(int));
	}
	if (e->probed)
		e->probed[e->nplans] = pr;
	*index = e->nplans;
	e->plans[e->nplans++] = p;
	/* the index at most half full */
	int bits = e->index_bits ? e->index_bits : 4;
	while (((size_t)1 << bits) < 2 * (size_t)e->nplans)
		bits++;
	if (!e->plan_index || bits != e->index_bits) {
		if (plan_index_build(e, bits)) {
			e->nplans--;
			plan_free(p);
			if (e->probed) {
				hloi_free(pr.on);
				hloi_free(pr.count);
			}
			return value_oom(e, (int64_t)sizeof(int) << bits);
		}
	} else {
		size_t mask = ((size_t)1 << bits) - 1, k = plan_slot(comp, bits);
		while (e->plan_index[k])
			k = (k + 1) & mask;
		e->plan_index[k] = *index + 1;
	}
	*out = p;
	return HLOI_OK;
}

static void free_plans(engine *e)
{
	for (int i = 0; i < e->nplans; i++) {
		plan_free(e->plans[i]);
		if (e->probed) {
			hloi_free(e->probed[i].on);
			hloi_free(e->probed[i].count);
		}
	}
	hloi_free(e->plans);
	hloi_free(e->plan_index);
	hloi_free(e->probed);
	e->plans = NULL;
	e->plan_index = NULL;
	e->probed = NULL;
	e->nplans = e->cap_plans = e->index_bits = 0;
}

/* Gives the value at `pos` to the probe callback if it is probed. */
static hloi_status probe_value(engine *e, frame *f, int pos, eval_probed *pr)
{
	const computation *comp = f->comp;
	const hloi_literal *v = f->vals[pos];
	if (!pr->on[pos] || !v)
		return HLOI_OK;
	const instr *in = comp->instrs[pos];
	hloi_probe pb = { in->name, probe_comp_name(comp), comp == e->m->entry, e->spmd ? (size_t)e->spmd->id : 0,
			  pr->count[pos]++ };
	size_t errors = hloi_context_error_count(e->ctx);
	hloi_status st = e->probe(e->probe_data, e->ctx, &pb, v);
	if (st != HLOI_OK && hloi_context_error_count(e->ctx) == errors)
		diag_error_where(e->ctx, NULL, "the probe of instruction '%s' in computation '%s' failed (%s)", in->name,
				 pb.computation, hloi_status_name(st));
	return st;
}

/* The probed values a step made: an instruction's, or a region's members'
 * in schedule order (the probed ones are its outputs) then the reduce
 * reading it. */
static hloi_status probe_step(engine *e, frame *f, const plan_step *step, eval_probed *pr)
{
	if (step->kind == STEP_INSTR)
		return probe_value(e, f, step->pos, pr);
	const plan_region *g = &f->plan->regions[step->region];
	hloi_status st = HLOI_OK;
	for (int k = 0; k < g->nmem && st == HLOI_OK; k++)
		st = probe_value(e, f, g->mem_pos[k], pr);
	if (st == HLOI_OK && step->kind == STEP_REDUCE)
		st = probe_value(e, f, step->pos, pr);
	return st;
}

/* A reduce reading its input from region g (its sink): the reduce's
 * value into a new buffer, the region's outputs on the way. */
static hloi_status run_reduce(engine *e, frame *f, const eval_plan *p, const plan_region *g, const fx_region *fr)
{
	const instr *in = p->comp->instrs[g->sink];
	const computation *fn = instr_called(in, ATTR_TO_APPLY, 0);
	const hloi_literal *init = f->vals[in->ops[1].def->position];
	opcode op = fn ? fast_reduce_monoid(fn) : OP_COUNT;
	hloi_literal *res = NULL;
	fx_exec x;
	int threads = e->threads > 0 ? e->threads : fx_machine_threads();
	if (op == OP_COUNT || !init || init->elided) {
		diag_error_where(e->ctx, NULL, "internal error: reduce '%s' cannot read region %d", in->name,
				 (int)(g - p->regions));
		return HLOI_EINVAL;
	}
	if (fx_runs_setup(&x, fr, fast_reduce_run_dim(in->ops[0].def->result), e->tuning) != 0) {
		fx_exec_free(&x);
		return value_oom(e, (int64_t)g->nmem * (int64_t)sizeof(fx_member));
	}
	int64_t reserved = x.scratch_bytes * threads;
	fx_exec_free(&x);
	hloi_status st = value_reserve(e, reserved);
	if (st != HLOI_OK)
		return st;
	st = value_new(e, in->result, &res);
	if (st == HLOI_OK) {
		int rc = fast_reduce_fused(e->threads, in, op, fr, init, res, NULL, e->tuning);
		if (rc < 0) {
			st = value_oom(e, reserved);
		} else if (rc > 0) {
			diag_error_where(e->ctx, NULL, "internal error: reduce '%s' cannot read region %d", in->name,
					 (int)(g - p->regions));
			st = HLOI_EINVAL;
		}
	}
	value_unreserve(e, reserved);
	if (st != HLOI_OK) {
		value_drop(e, res);
		return st;
	}
	f->vals[in->position] = res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}

/* Runs region r of the plan: its inputs from the frame, its outputs into
 * new buffers, dead inputs taken over (g->reuse), or dest for the root. */
static hloi_status run_region(engine *e, frame *f, const eval_plan *p, int r, hloi_literal *dest)
{
	const plan_region *g = &p->regions[r];
	const computation *comp = p->comp;
	const instr *seed = comp->instrs[g->seed];
	const shape *dom = seed->result;
	hloi_status st = HLOI_OK;
	fx_region fr;
	fx_exec x;
	memset(&fr, 0, sizeof fr);
	memset(&x, 0, sizeof x);
	fx_input *in = hloi_calloc((size_t)(g->nin ? g->nin : 1), sizeof *in);
	size_t nout = (size_t)(g->nout ? g->nout : 1);  /* none when a reduce reads the seed */
	fx_output *out = hloi_calloc(nout, sizeof *out);
	hloi_literal **res = hloi_calloc(nout, sizeof *res);
	uint8_t *fresh = hloi_calloc(nout, 1);
	int *taken = hloi_calloc(nout, sizeof *taken);
	hloi_literal *temp = NULL;  /* the root computed aside (see below) */
	int64_t reserved = 0;
	if (!in || !out || !res || !fresh || !taken) {
		st = value_oom(e, (int64_t)(g->nin + g->nout) * (int64_t)sizeof *in);
		goto cleanup;
	}
	fr.rank = dom->rank;
	for (int d = 0; d < dom->rank; d++) {
		fr.dims[d] = dom->dims[d];
		fr.order[d] = dom->layout.minor_to_major[d];
	}
	for (int i = 0; i < g->nin; i++) {
		const instr *v = comp->instrs[g->in[i].pos];
		const hloi_literal *lit = f->vals[v->position];
		if (!lit || lit->elided || shape_is_tuple(&lit->shape) ||
		    fx_input_strides(&lit->shape, g->in[i].map, dom->rank, dom->dims, in[i].st)) {
			diag_error_where(e->ctx, NULL, "internal error: value '%s' cannot be read by region %d", v->name, r);
			st = HLOI_EINVAL;
			goto cleanup;
		}
		in[i].base = lit->data;
		in[i].w = etype_byte_width(lit->shape.type);
	}
	for (int o = 0; o < g->nout; o++) {
		const instr *oi = comp->instrs[g->mem_pos[g->out_member[o]]];
		int v = g->reuse[o];
		taken[o] = -1;
		if (oi == seed && dest) {
			res[o] = dest;
		} else if (v >= 0 && f->owned[v] == VAL_OWNED && f->vals[v] && !f->vals[v]->elided &&
			   f->vals[v]->shape.type == oi->result->type && shape_same_dims(&f->vals[v]->shape, oi->result) &&
			   layout_equal(&f->vals[v]->shape.layout, &oi->result->layout)) {
			/* in place: the dead input's buffer becomes this value */
			res[o] = f->vals[v];
			f->owned[v] = VAL_BORROWED;
			fresh[o] = 1;
			taken[o] = v;
		} else {
			st = value_new(e, oi->result, &res[o]);
			if (st != HLOI_OK)
				goto cleanup;
			fresh[o] = 1;
		}
		int8_t id[HLOI_MAX_RANK];
		for (int d = 0; d < oi->result->rank; d++)
			id[d] = (int8_t)d;
		out[o].base = res[o]->data;
		out[o].w = etype_byte_width(oi->result->type);
		out[o].member = g->out_member[o];
		out[o].bytes = (int64_t)res[o]->nbytes;
		fx_input_strides(&res[o]->shape, id, dom->rank, dom->dims, out[o].st);
	}
	fr.nin = g->nin;
	fr.in = in;
	fr.nmem = g->nmem;
	fr.mem = g->mem;
	fr.nout = g->nout;
	fr.out = out;
	fr.nslots = g->nslots;
	if (g->sink >= 0) {
		st = run_reduce(e, f, p, g, &fr);
		if (st != HLOI_OK)
			goto cleanup;
		goto done;
	}
	int rc = fx_setup(&x, &fr, e->threads, e->tuning);
	if (rc == 1) {
		/* An output's buffer is read at other elements than it is
		 * written: dest (an aliased parameter, read through a broadcast
		 * or a transpose), or a taken-over input that a view of it reads
		 * otherwise. That output is computed into a buffer of its own
		 * (the root's then copied into dest). */
		fx_exec_free(&x);
		for (int o = 0; o < g->nout && st == HLOI_OK; o++) {
			int shared = 0;
			for (int i = 0; i < g->nin; i++)
				shared |= out[o].base && in[i].base == out[o].base;
			if (!shared)
				continue;
			const shape *os = comp->instrs[g->mem_pos[g->out_member[o]]]->result;
			if (res[o] == dest) {
				st = value_new(e, os, &temp);
				if (st == HLOI_OK)
					out[o].base = temp->data;
			} else if (taken[o] >= 0) {
				f->owned[taken[o]] = VAL_OWNED;  /* given back */
				taken[o] = -1;
				st = value_new(e, os, &res[o]);
				if (st == HLOI_OK)
					out[o].base = res[o]->data;
				else
					res[o] = NULL;
			}
		}
		if (st != HLOI_OK)
			goto cleanup;
		rc = fx_setup(&x, &fr, e->threads, e->tuning);
	}
	if (rc != 0) {
		st = value_oom(e, (int64_t)g->nmem * (int64_t)sizeof(fx_member));
		goto cleanup;
	}
	reserved = x.scratch_bytes * x.threads;
	st = value_reserve(e, reserved);
	if (st != HLOI_OK) {
		reserved = 0;
		goto cleanup;
	}
	if (fx_run(&x) != 0) {
		st = value_oom(e, reserved);
		goto cleanup;
	}
	if (temp) {
		value_copy(dest, temp);
		value_drop(e, temp);
		temp = NULL;
	}
done:
	for (int o = 0; o < g->nout; o++) {
		int pos = g->mem_pos[g->out_member[o]];
		f->vals[pos] = res[o];
		f->owned[pos] = res[o] == dest ? VAL_BORROWED : VAL_OWNED;
		res[o] = NULL;
	}
cleanup:
	value_unreserve(e, reserved);
	fx_exec_free(&x);
	if (res)
		for (int o = 0; o < g->nout; o++)
			if (res[o] && fresh[o])
				value_drop(e, res[o]);
	value_drop(e, temp);
	hloi_free(in);
	hloi_free(out);
	hloi_free(res);
	hloi_free(fresh);
	hloi_free(taken);
	return st;
}

/* The values the frame's result reaches through tuples and views, as
 * their literals (a literal reached twice — by two tuple elements, or by a
 * view and a get-tuple-element — is copied once, never moved twice). */
typedef struct refs {
	const hloi_literal **v;
	size_t n, cap;
} refs;

static int collect_refs(const frame *f, const instr *in, refs *r)
{
	int pos = in->position;
	if (f->owned[pos] == VAL_SHELL) {
		for (int k = 0; k < (in->op == OP_TUPLE ? in->nops : 1); k++)
			if (collect_refs(f, in->ops[k].def, r))
				return -1;
		return 0;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		const hloi_literal **v = hloi_calloc(cap, sizeof *v);
		if (!v)
			return -1;
		if (r->n)
			memcpy(v, r->v, r->n * sizeof *v);
		hloi_free(r->v);
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = f->vals[pos];
	return 0;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (const hloi_literal *const *)a, y = (uintptr_t) * (const hloi_literal *const *)b;
	return x < y ? -1 : x > y;
}

/* How many times the result reaches literal v (r sorted). */
static size_t ref_count(const refs *r, const hloi_literal *v)
{
	size_t lo = 0, hi = r->n, n = 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((uintptr_t)r->v[mid] < (uintptr_t)v)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + n < r->n && r->v[lo + n] == v)
		n++;
	return n;
}

/* The value of `in` as (part of) the frame's result: moved out when the
 * frame owns it and the result reaches it once; a parameter or constant
 * lent as it is (*owned = 0); a tuple or view rebuilt from its parts; else
 * copied. */
static hloi_status take_value(engine *e, frame *f, const instr *in, const refs *cnt, hloi_literal **out, int *owned)
{
	int pos = in->position;
	hloi_literal *v = f->vals[pos];
	*out = NULL;
	*owned = 0;
	if (!v) {
		diag_error_where(e->ctx, NULL, "internal error: no value for '%s'", in->name);
		return HLOI_EINVAL;
	}
	if (f->owned[pos] == VAL_SHELL && in->op == OP_TUPLE) {
		hloi_literal **els = hloi_calloc(v->nelems ? v->nelems : 1, sizeof *els);
		if (!els)
			return value_oom(e, (int64_t)v->nelems * (int64_t)sizeof *els);
		hloi_status st = HLOI_OK;
		size_t k = 0;
		for (; k < v->nelems && st == HLOI_OK; k++) {
			int eo = 0;
			st = take_value(e, f, in->ops[k].def, cnt, &els[k], &eo);
			if (st == HLOI_OK && !eo)
				st = value_clone(e, els[k], &els[k]);
		}
		/* the elements taken: all of them, or those before the one that failed */
		size_t held = st == HLOI_OK ? k : k - 1;
		if (st == HLOI_OK)
			st = value_tuple_shell(e, &v->shape, els, (int)v->nelems, out);
		if (st != HLOI_OK) {
			for (size_t j = 0; j < held; j++)
				value_drop(e, els[j]);
			hloi_free(els);
			return st;
		}
		hloi_free(els);
		*owned = 1;  /* its elements are now its own */
		return HLOI_OK;
	}
	if (f->owned[pos] == VAL_SHELL) {
		/* a view: its operand's value (moved or copied) under its shape */
		int eo = 0;
		hloi_status st = take_value(e, f, in->ops[0].def, cnt, out, &eo);
		if (st == HLOI_OK && !eo)
			st = value_clone(e, *out, out);
		if (st != HLOI_OK)
			return st;
		(*out)->shape = v->shape;  /* the result reaches that value only here */
		*owned = 1;
		return HLOI_OK;
	}
	if (f->owned[pos] == VAL_OWNED && ref_count(cnt, v) == 1) {
		f->owned[pos] = VAL_BORROWED;
		*out = v;
		*owned = 1;
		return HLOI_OK;
	}
	if (f->owned[pos] == VAL_BORROWED && (in->op == OP_PARAMETER || in->op == OP_CONSTANT)) {
		*out = v;
		return HLOI_OK;
	}
	*owned = 1;
	return value_clone(e, v, out);
}

/* The root's value as the frame's result (take_value). */
static hloi_status take_root(engine *e, frame *f, const instr *root, hloi_literal **out, int *owned)
{
	refs r = { NULL, 0, 0 };
	hloi_status st;
	if (collect_refs(f, root, &r)) {
		st = value_oom(e, (int64_t)r.n * (int64_t)sizeof *r.v);
	} else {
		if (r.n > 1)  /* none for an empty tuple (r.v NULL) */
			qsort(r.v, r.n, sizeof *r.v, cmp_ptr);
		st = take_value(e, f, root, &r, out, owned);
	}
	hloi_free(r.v);
	return st;
}

/* Computations of at most this many instructions keep their frame on the
 * stack. */
#define FRAME_SMALL 64

/* Evaluates comp on args (eval_computation, base/engine.h: the engine's
 * `computation`). The root's value comes back in *out: owned by the
 * caller when *out_owned, else borrowed (an argument, a constant, or dest).
 * With dest, the root's result is written into dest and *out is dest. */
static hloi_status run_computation(engine *e, const computation *comp, hloi_literal *const *args,
				   hloi_literal *dest, hloi_literal **out, int *out_owned)
{
	hloi_status st = HLOI_OK;
	frame f;
	const eval_plan *p = NULL;
	int n = comp->ninstrs, rootpos = comp->root->position;
	*out = NULL;
	*out_owned = 0;
	memset(&f, 0, sizeof f);
	int pi = 0;
	st = plan_for(e, comp, &p, &pi);
	if (st != HLOI_OK)
		return st;
	/* probed: not inside a per-element application (one element each) */
	eval_probed *probed = e->probed && e->probed[pi].on && !e->uncounted ? &e->probed[pi] : NULL;
	/* Profiled: each step's wall time, the steps of what it calls
	 * counted in e->prof_child so that its own time leaves them out. A
	 * per-element application (e->uncounted) is its caller's time, with
	 * everything below it. */
	int prof = e->prof && e->prof_shard && !e->prof_hold && !e->uncounted;
	int held = e->prof && !prof;
	if (prof)
		e->prof_depth++;
	if (held)
		e->prof_hold++;
	f.comp = comp;
	f.plan = p;
	f.last_use = p->last_use;
	/* a small computation's frame on the stack (loop bodies, calls) */
	hloi_literal *vals_small[FRAME_SMALL];
	uint8_t owned_small[FRAME_SMALL];
	int small = n <= FRAME_SMALL;
	if (small) {
		memset(vals_small, 0, (size_t)n * sizeof *vals_small);
		memset(owned_small, 0, (size_t)n);
		f.vals = vals_small;
		f.owned = owned_small;
	} else {
		f.vals = hloi_calloc((size_t)n, sizeof *f.vals);
		f.owned = hloi_calloc((size_t)n, 1);
	}
	if (!f.vals || !f.owned) {
		diag_error_where(e->ctx, NULL, "out of memory");
		st = HLOI_ENOMEM;
		goto cleanup;
	}
	for (int s = 0; s < p->nsteps; s++) {
		const plan_step *step = &p->steps[s];
		int at = step->pos;
		uint64_t t0 = 0, child = 0;
		if (prof) {
			child = e->prof_child;
			e->prof_child = 0;
			t0 = prof_now();
		}
		if (step->kind == STEP_REGION || step->kind == STEP_REDUCE) {
			/* every member counts as an evaluated instruction (and the
			 * reduce reading the region) */
			const plan_region *rg = &p->regions[step->region];
			for (int k = 0; k < rg->nmem && st == HLOI_OK; k++)
				st = eval_step(e, comp, comp->instrs[rg->mem_pos[k]]);
			if (st == HLOI_OK && step->kind == STEP_REDUCE)
				st = eval_step(e, comp, comp->instrs[at]);
			if (st == HLOI_OK)
				st = run_region(e, &f, p, step->region,
						at == rootpos && step->kind == STEP_REGION ? dest : NULL);
		} else {
			st = eval_step(e, comp, comp->instrs[at]);
			if (st == HLOI_OK)
				st = eval_instr(e, &f, comp->instrs[at], args, at == rootpos ? dest : NULL);
		}
		if (prof) {
			uint64_t t1 = prof_now(), took = t1 - t0;
			uint64_t inner = e->prof_child < took ? e->prof_child : took;
			int region = step->kind == STEP_REGION || step->kind == STEP_REDUCE;
			prof_rec *r = prof_add(e->prof, e->prof_shard, comp->instrs[at], comp, region, took, took - inner);
			if (r && comp->instrs[at]->op == OP_WHILE && st == HLOI_OK)
				r->iterations += (uint64_t)e->loop_trips;
			if (r && r->calls == 1) {
				op_cost c;
				cost_step(p, s, &c);
				r->flops = c.flops;
				r->transcendentals = c.transcendentals;
				r->bytes = c.bytes;
				r->gemm_flops = c.gemm_flops;
				r->nmem = region ? p->regions[step->region].nmem + (step->kind == STEP_REDUCE) : 1;
			}
			if (e->prof->flags & HLOI_PROFILE_TRACE)
				prof_event_add(e->prof, e->prof_shard, comp->instrs[at], region, e->prof_depth - 1, 0, t0, t1);
			e->prof_child = child + took;
		}
		if (st == HLOI_OK && probed)
			st = probe_step(e, &f, step, probed);
		if (st != HLOI_OK)
			goto cleanup;
		for (int k = p->rel_start[at]; k < p->rel_start[at + 1]; k++)
			value_release(e, &f, p->rel_list[k]);
	}
	if (dest && f.vals[rootpos] != dest) {
		/* a parameter, constant, tuple element or call result */
		value_copy(dest, f.vals[rootpos]);
		value_release(e, &f, rootpos);
		f.vals[rootpos] = dest;
		f.owned[rootpos] = VAL_BORROWED;
	}
	if (f.vals[rootpos] == dest && dest) {
		*out = dest;
	} else {
		st = take_root(e, &f, comp->root, out, out_owned);
		if (st != HLOI_OK)
			goto cleanup;
		if (*out == f.vals[rootpos]) {
			f.vals[rootpos] = NULL;
			f.owned[rootpos] = VAL_BORROWED;
		}
	}
cleanup:
	if (prof)
		e->prof_depth--;
	if (held)
		e->prof_hold--;
	if (f.vals && f.owned)
		for (int i = n - 1; i >= 0; i--)
			value_release(e, &f, i);
	if (!small) {
		hloi_free(f.vals);
		hloi_free(f.owned);
	}
	return st;
}

/* Inputs: one per parameter, each with the parameter's type and dims (a
 * `<=N` dimension: any size up to N, literal_fits_bounds). */
static hloi_status check_inputs(const computation *comp, hloi_context *ctx, hloi_literal *const *inputs,
				size_t ninputs)
{
	if ((size_t)comp->nparams != ninputs) {
		diag_error_where(ctx, NULL, "expected %d input%s, got %zu", comp->nparams,
				 comp->nparams == 1 ? "" : "s", ninputs);
		return HLOI_EINVAL;
	}
	hloi_status st = HLOI_OK;
	for (size_t i = 0; i < ninputs; i++) {
		const instr *p = comp->params[i];
		const hloi_literal *lit = inputs[i];
		if (!lit) {
			diag_error_where(ctx, NULL, "input %zu for parameter '%s' is missing", i, p->name);
			st = HLOI_EINVAL;
			continue;
		}
		int bounded = shape_is_array(p->result) && !shape_is_static(p->result);
		if (bounded ? !literal_fits_bounds(lit, p->result) : !shape_compatible(&lit->shape, p->result)) {
			strbuf a = STRBUF_INIT, b = STRBUF_INIT;
			shape_print(&a, &lit->shape, 0);
			shape_print(&b, p->result, 0);
			diag_error_where(ctx, NULL, "input %zu for parameter '%s' has shape %s, but the parameter is %s",
					 i, p->name, sb_str(&a), sb_str(&b));
			sb_free(&a);
			sb_free(&b);
			st = HLOI_EINVAL;
		} else if (lit->elided) {
			diag_error_where(ctx, NULL, "input %zu for parameter '%s' is elided ({...}) and cannot be evaluated",
					 i, p->name);
			st = HLOI_EINVAL;
		} else if (!shape_is_tuple(&lit->shape) && !lit->data && value_bytes(&lit->shape) > 0) {
			diag_error_where(ctx, NULL,
					 "input %zu for parameter '%s' holds no data (an earlier in-place run moved it into its result)",
					 i, p->name);
			st = HLOI_EINVAL;
		}
	}
	return st;
}

/* The parameter the whole (array) result is written into, or -1. */
int eval_aliased_parameter(const module *m)
{
	const computation *comp = m->entry;
	if (!m->checked || !comp || !comp->root || shape_is_tuple(comp->root->result))
		return -1;
	for (int i = 0; i < m->nalias; i++) {
		const alias_entry *a = &m->alias[i];
		if (a->n_output_index == 0 && a->n_parameter_index == 0 && a->parameter_number >= 0 &&
		    a->parameter_number < comp->nparams &&
		    !shape_is_tuple(comp->params[a->parameter_number]->result))
			return (int)a->parameter_number;
	}
	return -1;
}

/* Whether `lit` shares a buffer with any of the inputs (tuples deeply). */
static int shares_buffer(const hloi_literal *lit, const hloi_literal *in)
{
	if (!lit || !in)
		return 0;
	if (shape_is_tuple(&lit->shape)) {
		for (size_t i = 0; i < lit->nelems; i++)
			if (shares_buffer(lit->elems[i], in))
				return 1;
		return 0;
	}
	if (shape_is_tuple(&in->shape)) {
		for (size_t i = 0; i < in->nelems; i++)
			if (shares_buffer(lit, in->elems[i]))
				return 1;
		return 0;
	}
	return lit->data && lit->data == in->data;
}

/* A worker's part of a fork (fast/fast.h's tracer), traced as the
 * instruction being evaluated, on the worker's track. */
static void trace_span(void *data, int worker, uint64_t t0, uint64_t t1)
{
	engine *e = data;
	if (e->cur && !e->prof_hold && !e->uncounted)
		prof_event_add(e->prof, e->prof_shard, e->cur, 0, e->prof_depth - 1, worker + 1, t0, t1);
}

/* Runs the module into `into` (the caller's literal of the result's exact
 * shape) when given, else into a new literal in *out. */
static hloi_status run_module(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			      const hloi_run_options *opts, const fast_tuning *tuning, hloi_literal *into,
			      hloi_literal **out, eval_stats *stats, struct spmd_member *member)
{
	hloi_status st = HLOI_OK;
	engine e;
	hloi_literal **args = NULL;
	uint8_t *args_owned = NULL;
	if (out)
		*out = NULL;
	memset(&e, 0, sizeof e);
	computation *comp = m->entry;
	if (!m->checked || !comp || !comp->root) {
		diag_error_where(ctx, NULL, "the module must be checked before it runs");
		return HLOI_EINVAL;
	}
	if (!member && m->participant_dependent && m->replicas * m->partitions > 1) {
		diag_error_where(ctx, NULL,
				 "the module runs as %lld participants (%lld replicas x %lld partitions) and has collectives: run it with hloi_module_run_participants",
				 (long long)(m->replicas * m->partitions), (long long)m->replicas, (long long)m->partitions);
		return HLOI_EINVAL;
	}
	st = check_inputs(comp, ctx, inputs, ninputs);
	if (st != HLOI_OK)
		return st;

	e.m = m;
	e.ctx = ctx;
	e.budget = opts && opts->max_memory ? opts->max_memory : eval_default_budget();
	e.fast = !opts || opts->engine != HLOI_ENGINE_REFERENCE;
	e.threads = opts ? opts->threads : 0;
	e.tuning = tuning;
	e.spmd = member;
	e.computation = run_computation;
	if (opts && opts->version >= 6 && opts->profile) {
		e.prof = opts->profile;
		e.prof_shard = prof_shard_of(e.prof, member ? member->id : 0);
	}
	eval_limits_init(&e.limits, opts);
	eval_feeds_init(&e.feeds, opts);

	/* One budget: what the run holds before it makes anything (the
	 * inputs, the caller's result buffer, the module's constants) counts
	 * in it, so a program whose inputs and values together do not fit is
	 * refused. */
	uint64_t held_in = literal_buffer_bytes(into), held_const = m->constant_bytes;
	for (size_t i = 0; i < ninputs; i++)
		held_in += literal_buffer_bytes(inputs[i]);
	e.held = held_in + held_const;
	if (e.held > e.budget || e.held < held_in) {
		diag_error_where(ctx, NULL,
				 "memory budget exceeded: the inputs%s hold %llu bytes and the constants %llu bytes, budget %llu bytes",
				 into ? " and the result buffer" : "", (unsigned long long)held_in,
				 (unsigned long long)held_const, (unsigned long long)e.budget);
		return HLOI_ENOMEM;
	}
	e.live = e.peak = e.held;

	/* Elided constants the entry needs are reported all at once, before
	 * anything runs. */
	uint8_t *needed = hloi_calloc((size_t)comp->ninstrs, 1);
	if (!needed) {
		diag_error_where(ctx, NULL, "out of memory");
		return HLOI_ENOMEM;
	}
	needed[comp->root->position] = 1;
	for (int i = comp->root->position; i >= 0; i--)
		for (int k = 0; needed[i] && k < comp->instrs[i]->nops; k++)
			needed[comp->instrs[i]->ops[k].def->position] = 1;
	for (int i = 0; i <= comp->root->position; i++) {
		const instr *in = comp->instrs[i];
		if (needed[i] && in->op == OP_CONSTANT && (!in->value || in->value->elided)) {
			loc at = in->literal ? in->literal->at : in->op_at;
			if (diag_source(ctx, m->src))
				diag_error(ctx, m->src, at, "constant '%s' is elided ({...}) and cannot be evaluated; --random-inputs fills it with random values",
					   in->name);
			else
				diag_error_where(ctx, NULL, "constant '%s' is elided ({...}) and cannot be evaluated; --random-inputs fills it with random values",
						 in->name);
			st = HLOI_EUNSUPPORTED;
		}
	}
	hloi_free(needed);
	if (st != HLOI_OK)
		return st;

	if (opts && opts->version >= 7 && opts->probe) {
		e.probe = opts->probe;
		e.probe_data = opts->probe_data;
		e.probe_names = opts->probe_names;
		e.nprobe_names = opts->probe_names ? opts->nprobe_names : 0;
		for (size_t k = 0; k < e.nprobe_names; k++) {
			if (!e.probe_names[k] || !eval_probe_matches(m, e.probe_names[k])) {
				diag_error_where(ctx, NULL, "probe '%s' names no instruction of the module",
						 e.probe_names[k] ? e.probe_names[k] : "(null)");
				st = HLOI_EINVAL;
			}
		}
		if (st != HLOI_OK)
			return st;
	}

	/* the arrays the module's last run kept (value_pool_keep below) */
	value_pool_take(&e);
	/* The inputs in their parameters' layouts. */
	size_t na = ninputs ? ninputs : 1;
	args = hloi_calloc(na, sizeof *args);
	args_owned = hloi_calloc(na, 1);
	if (!args || !args_owned) {
		diag_error_where(ctx, NULL, "out of memory");
		st = HLOI_ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < ninputs; i++) {
		int owned = 0;
		st = value_conform(&e, inputs[i], comp->params[i]->result, &args[i], &owned);
		if (st != HLOI_OK)
			goto cleanup;
		args_owned[i] = (uint8_t)owned;
	}

	/* input_output_alias: the result goes into the parameter's buffer;
	 * a buffer the caller lent (hloi_literal_wrap) is never written, the
	 * result goes into a copy of it. */
	int ap = eval_aliased_parameter(m);
	if (ap >= 0 && (size_t)ap < ninputs && !args_owned[ap] && args[ap]->borrowed) {
		hloi_literal *copy = NULL;
		st = value_clone(&e, args[ap], &copy);
		if (st != HLOI_OK)
			goto cleanup;
		args[ap] = copy;
		args_owned[ap] = 1;
	}
	hloi_literal *dest = ap >= 0 ? args[ap] : into;
	hloi_literal *r = NULL;
	int owned = 0;
	/* traced: the workers' parts of each step too, on this thread's forks */
	const fx_tracer *outer_tracer = fx_tracer_get();
	fx_tracer tracer = { trace_span, &e };
	if (e.prof_shard && (e.prof->flags & HLOI_PROFILE_TRACE))
		fx_tracer_set(&tracer);
	st = run_computation(&e, comp, args, dest, &r, &owned);
	fx_tracer_set(outer_tracer);
	if (st != HLOI_OK)
		goto cleanup;
	if (into) {
		/* the result is in the caller's literal */
	} else if (dest) {
		if (args_owned[ap]) {
			/* the converted copy of the input is the result */
			*out = dest;
			args_owned[ap] = 0;
			args[ap] = NULL;
		} else {
			/* the caller's input buffer moves into the result */
			hloi_literal *res = hloi_calloc(1, sizeof *res);
			if (!res) {
				st = value_oom(&e, (int64_t)sizeof *res);
				goto cleanup;
			}
			res->shape = dest->shape;
			res->data = dest->data;
			res->nbytes = dest->nbytes;
			dest->data = NULL;
			dest->nbytes = 0;
			*out = res;
		}
	} else if (owned) {
		*out = r;
	} else {
		/* A parameter or constant: the caller gets its own copy. */
		st = value_clone(&e, r, out);
	}
cleanup:
	if (args && args_owned)
		for (size_t i = 0; i < ninputs; i++)
			if (args_owned[i])
				value_drop(&e, args[i]);
	value_pool_keep(&e);
	free_plans(&e);
	eval_rng_free(&e);
	eval_p2p_free(&e);
	if (stats)
		stats->peak_bytes = e.peak - e.held;
	hloi_free(args);
	hloi_free(args_owned);
	return st;
}

hloi_status eval_conform_input(const module *m, const hloi_literal *lit, size_t i, int threads, hloi_literal **out)
{
	const shape *target = m->entry->params[i]->result;
	*out = NULL;
	if (!shape_is_array(target) || !shape_is_static(target) || shape_is_tuple(&lit->shape) ||
	    value_same_layouts(&lit->shape, target) || lit->elided || lit->shape.type != target->type ||
	    !shape_same_dims(&lit->shape, target))
		return literal_clone(out, lit);
	hloi_literal *r = NULL;
	hloi_status st = literal_create_uninit(&r, target);
	if (st != HLOI_OK)
		return st;
	memcpy(r->dynamic_size, lit->dynamic_size, sizeof r->dynamic_size);
	if (fast_relayout(r, lit, threads, NULL) != 0)
		value_copy(r, lit);
	*out = r;
	return HLOI_OK;
}

hloi_status eval_module(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			const hloi_run_options *opts, hloi_literal **out)
{
	return run_module(m, ctx, inputs, ninputs, opts, NULL, NULL, out, NULL, NULL);
}

static hloi_status module_into(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			       const hloi_run_options *opts, const fast_tuning *tuning, hloi_literal *result,
			       eval_stats *stats)
{
	const computation *comp = m->entry;
	if (!m->checked || !comp || !comp->root) {
		diag_error_where(ctx, NULL, "the module must be checked before it runs");
		return HLOI_EINVAL;
	}
	if (!result) {
		diag_error_where(ctx, NULL, "no result literal to run into");
		return HLOI_EINVAL;
	}
	int ap = eval_aliased_parameter(m);
	if (ap >= 0) {
		diag_error_where(ctx, NULL,
				 "the module writes its result into input %d (input_output_alias); run it without a result literal",
				 ap);
		return HLOI_EINVAL;
	}
	const shape *want = comp->root->result;
	if (!shape_compatible(&result->shape, want) || !value_same_layouts(&result->shape, want) || result->elided ||
	    (!shape_is_tuple(want) && !result->data && value_bytes(want) > 0)) {
		strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		shape_print(&a, &result->shape, 1);
		shape_print(&b, want, 1);
		diag_error_where(ctx, NULL, "the result literal is %s%s, but the module's result is %s", sb_str(&a),
				 result->elided ? " (elided)" : "", sb_str(&b));
		sb_free(&a);
		sb_free(&b);
		return HLOI_EINVAL;
	}
	for (size_t i = 0; i < ninputs; i++) {
		if (inputs && shares_buffer(result, inputs[i])) {
			diag_error_where(ctx, NULL, "the result literal shares its buffer with input %zu", i);
			return HLOI_EINVAL;
		}
	}
	return run_module(m, ctx, inputs, ninputs, opts, tuning, result, NULL, stats, NULL);
}

hloi_status eval_module_into(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			     const hloi_run_options *opts, hloi_literal *result)
{
	return module_into(m, ctx, inputs, ninputs, opts, NULL, result, NULL);
}

hloi_status eval_module_tuned(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			      const hloi_run_options *opts, const fast_tuning *tuning, hloi_literal *into,
			      hloi_literal **out, eval_stats *stats)
{
	if (into)
		return module_into(m, ctx, inputs, ninputs, opts, tuning, into, stats);
	return run_module(m, ctx, inputs, ninputs, opts, tuning, NULL, out, stats, NULL);
}

/* eval_module for one participant of a run of several (runtime/spmd.c):
 * the driver with `member` set in the engine. */
static hloi_status eval_module_member(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
				      const hloi_run_options *opts, spmd_member *member, hloi_literal **out)
{
	return run_module(m, ctx, inputs, ninputs, opts, NULL, NULL, out, NULL, member);
}

hloi_status eval_module_participants(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
				     const hloi_run_options *opts, hloi_literal **out)
{
	return spmd_run(m, ctx, inputs, ninputs, opts, eval_module_member, out);
}
