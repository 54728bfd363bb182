/* The cost model (cost.h). The counts follow XLA's HloCostAnalysis where
 * it says what an op costs: one flop per element of an elementwise
 * arithmetic op, a transcendental per element of exp, log, tanh, ...; 2
 * per multiply-add of dot and convolution, counting only the products of
 * real input elements (padding and dilation holes are skipped); the
 * applied computation's flops per application for reduce, reduce-window,
 * select-and-scatter, scatter, map, sort and the reducing collectives.
 * Bytes are each operand read once and the result written once; slices,
 * gathers and dynamic-update-slice move only the part they touch. */
#include "eval/plan/cost.h"

#include <math.h>
#include <string.h>

#include "ir/attrs.h"

/* The elements (bytes: the buffer bytes) of an array, or of a tuple's
 * arrays together; 0 for tokens. */
static double total(const shape *s, int bytes)
{
	if (shape_is_tuple(s)) {
		double n = 0;
		for (int i = 0; i < s->ntuple; i++)
			n += total(&s->tuple[i], bytes);
		return n;
	}
	int64_t n = 0;
	if (!shape_is_array(s) || (bytes ? shape_byte_size(s, &n) : shape_element_count(s, &n)))
		return 0;
	return (double)n;
}

static double elems(const shape *s)
{
	return total(s, 0);
}

double cost_bytes(const shape *s)
{
	return total(s, 1);
}

static double operand_bytes(const instr *in)
{
	double b = 0;
	for (int k = 0; k < in->nops; k++)
		b += cost_bytes(in->ops[k].def->result);
	return b;
}

double cost_applied(const computation *comp)
{
	double f = 0;
	if (!comp)
		return 1;
	for (int i = 0; i < comp->ninstrs; i++) {
		const instr *x = comp->instrs[i];
		op_category c = opcode_category(x->op);
		if (c == OPC_BINARY || c == OPC_COMPARE || c == OPC_UNARY || x->op == OP_SELECT || x->op == OP_CLAMP)
			f += elems(x->result) > 0 ? elems(x->result) : 1;
	}
	return f > 0 ? f : 1;
}

/* Products of real input elements along one spatial dimension: the
 * (output position, window position) pairs that land on an element of the
 * input (not on padding, nor between lhs-dilated elements). */
static double conv_taps(int64_t in, int64_t out, const window_dim *w)
{
	int64_t ld = w->lhs_dilate > 0 ? w->lhs_dilate : 1, rd = w->rhs_dilate > 0 ? w->rhs_dilate : 1;
	int64_t st = w->stride > 0 ? w->stride : 1, extent = in > 0 ? (in - 1) * ld + 1 : 0;
	double n = 0;
	for (int64_t k = 0; k < w->size; k++) {
		/* positions o*st + k*rd - pad_lo in [0, extent), multiples of ld */
		int64_t off = k * rd - w->pad_lo;
		for (int64_t o = 0; o < out; o++) {
			int64_t p = o * st + off;
			if (p >= extent)
				break;
			if (p >= 0 && p % ld == 0)
				n++;
		}
	}
	return n;
}

static double conv_flops(const instr *in)
{
	const attr *lab = instr_attr(in, ATTR_DIM_LABELS), *win = instr_attr(in, ATTR_WINDOW);
	if (!lab || !lab->conv || in->nops < 2)
		return 0;
	const conv_dims *cd = lab->conv;
	const shape *lhs = in->ops[0].def->result, *rhs = in->ops[1].def->result, *res = in->result;
	if (shape_is_tuple(res) || shape_is_tuple(lhs) || shape_is_tuple(rhs))
		return 0;
	double taps = 1;
	for (int d = 0; d < cd->nspatial; d++) {
		window_dim w = { rhs->dims[cd->kernel_spatial[d]], 1, 0, 0, 1, 1, 0 };
		if (win && d < win->u.win.n)
			w = win->u.win.d[d];
		taps *= conv_taps(lhs->dims[cd->input_spatial[d]], res->dims[cd->output_spatial[d]], &w);
	}
	double per = (double)rhs->dims[cd->kernel_input_feature];
	double outer = (double)res->dims[cd->output_batch] * (double)res->dims[cd->output_feature];
	return 2 * outer * taps * per;
}

static double dot_flops(const instr *in)
{
	const attr *c = instr_attr(in, ATTR_LHS_CONTRACTING_DIMS);
	if (in->nops < 2)
		return 0;
	const shape *lhs = in->ops[0].def->result;
	double k = 1;
	for (int i = 0; c && i < c->u.ints.n; i++)
		if (c->u.ints.v[i] >= 0 && c->u.ints.v[i] < lhs->rank)
			k *= (double)lhs->dims[c->u.ints.v[i]];
	return 2 * elems(in->result) * k;
}

static double window_size(const instr *in)
{
	const attr *win = instr_attr(in, ATTR_WINDOW);
	double n = 1;
	for (int d = 0; win && d < win->u.win.n; d++)
		n *= (double)win->u.win.d[d].size;
	return n;
}

void cost_instr(const instr *in, op_cost *c)
{
	memset(c, 0, sizeof *c);
	opcode op = in->op;
	op_category cat = opcode_category(op);
	double n = elems(in->result), in0 = in->nops ? elems(in->ops[0].def->result) : 0;
	c->bytes = operand_bytes(in) + cost_bytes(in->result);
	if (cat == OPC_BINARY || cat == OPC_COMPARE || cat == OPC_UNARY || op == OP_SELECT || op == OP_CLAMP ||
	    op == OP_CONVERT || op == OP_REDUCE_PRECISION || op == OP_STOCHASTIC_CONVERT) {
		if (opcode_has(op, OPF_TRANSCENDENTAL))
			c->transcendentals = n;
		else
			c->flops = n;
		return;
	}
	/* op-specific: each op's work, as HloCostAnalysis counts it */
	switch (op) {
	case OP_PARAMETER:
	case OP_CONSTANT:
	case OP_TUPLE:
	case OP_GET_TUPLE_ELEMENT:
	case OP_BITCAST:
	case OP_CALL:
	case OP_WHILE:
	case OP_CONDITIONAL:
	case OP_FUSION:
	case OP_AFTER_ALL:
	case OP_ADD_DEPENDENCY:
	case OP_OPTIMIZATION_BARRIER:
	case OP_DOMAIN:
	case OP_ASYNC_START:
	case OP_ASYNC_UPDATE:
	case OP_ASYNC_DONE:
	case OP_PARTITION_ID:
	case OP_REPLICA_ID:
	case OP_GET_DIMENSION_SIZE:
		/* no work of their own: values passed on, or their computations' */
		c->bytes = 0;
		break;
	case OP_SLICE:
	case OP_DYNAMIC_SLICE:
	case OP_GATHER:
		c->bytes = 2 * cost_bytes(in->result);
		break;
	case OP_DYNAMIC_UPDATE_SLICE:
		c->bytes = in->nops > 1 ? 2 * cost_bytes(in->ops[1].def->result) : 0;
		break;
	case OP_DOT:
		c->flops = c->gemm_flops = dot_flops(in);
		break;
	case OP_CONVOLUTION:
		c->flops = c->gemm_flops = conv_flops(in);
		break;
	case OP_REDUCE: {
		int half = in->nops / 2;
		double per = cost_applied(instr_called(in, ATTR_TO_APPLY, 0));
		double out = half > 1 && shape_is_tuple(in->result) ? elems(&in->result->tuple[0]) : n;
		c->flops = (in0 > out ? in0 - out : 0) * per;  /* applications: one per element folded in */
		break;
	}
	case OP_REDUCE_WINDOW: {
		int half = in->nops / 2;
		double out = half > 1 && shape_is_tuple(in->result) ? elems(&in->result->tuple[0]) : n;
		c->flops = out * window_size(in) * cost_applied(instr_called(in, ATTR_TO_APPLY, 0));
		break;
	}
	case OP_SELECT_AND_SCATTER: {
		double src = in->nops > 1 ? elems(in->ops[1].def->result) : 0;
		c->flops = src * window_size(in) * cost_applied(instr_called(in, ATTR_SELECT, 0)) +
			   src * cost_applied(instr_called(in, ATTR_SCATTER, 0));
		break;
	}
	case OP_SCATTER: {
		double upd = in->nops > 2 ? elems(in->ops[in->nops - 1].def->result) : 0;
		c->flops = upd * cost_applied(instr_called(in, ATTR_TO_APPLY, 0));
		c->bytes = cost_bytes(in->result) + 2 * (in->nops > 2 ? cost_bytes(in->ops[in->nops - 1].def->result) : 0);
		break;
	}
	case OP_MAP:
		c->flops = n * cost_applied(instr_called(in, ATTR_TO_APPLY, 0));
		break;
	case OP_SORT: {
		const attr *d = instr_attr(in, ATTR_DIMENSIONS);
		const shape *k = in->nops ? in->ops[0].def->result : NULL;
		double len = k && d && d->u.ints.n && d->u.ints.v[0] < k->rank ? (double)k->dims[d->u.ints.v[0]] : 1;
		c->flops = in0 * (len > 1 ? log2(len) : 1) * cost_applied(instr_called(in, ATTR_TO_APPLY, 0));
		break;
	}
	case OP_TOPK:
		c->flops = in0;
		break;
	case OP_BATCH_NORM_TRAINING:
		c->flops = 7 * in0;
		break;
	case OP_BATCH_NORM_INFERENCE:
		c->flops = 4 * in0;
		break;
	case OP_BATCH_NORM_GRAD:
		c->flops = 11 * in0;
		break;
	case OP_FFT: {
		const attr *l = instr_attr(in, ATTR_FFT_LENGTH);
		double len = 1;
		for (int i = 0; l && i < l->u.ints.n; i++)
			len *= (double)l->u.ints.v[i];
		c->flops = len > 1 ? 5 * in0 * log2(len) : in0;
		break;
	}
	case OP_CHOLESKY: {
		const shape *a = in->nops ? in->ops[0].def->result : NULL;
		double m = a && a->rank >= 2 ? (double)a->dims[a->rank - 1] : 0;
		c->flops = m > 0 ? in0 / (m * m) * m * m * m / 3 : 0;
		break;
	}
	case OP_TRIANGULAR_SOLVE: {
		const shape *a = in->nops ? in->ops[0].def->result : NULL;
		double m = a && a->rank >= 2 ? (double)a->dims[a->rank - 1] : 0;
		c->flops = n * m;
		break;
	}
	case OP_ALL_REDUCE:
	case OP_ALL_REDUCE_START:
	case OP_REDUCE_SCATTER:
		c->flops = in0 * cost_applied(instr_called(in, ATTR_TO_APPLY, 0));
		break;
	default:
		/* data movement and the rest: bytes only */
		break;
	}
}

void cost_step(const eval_plan *p, int s, op_cost *c)
{
	const plan_step *st = &p->steps[s];
	const computation *comp = p->comp;
	if (st->kind == STEP_INSTR) {
		cost_instr(comp->instrs[st->pos], c);
		if (p->view && p->view[st->pos])
			c->bytes = 0;  /* a reshape or transpose that is a view of its operand's buffer */
		return;
	}
	const plan_region *g = &p->regions[st->region];
	memset(c, 0, sizeof *c);
	if (st->kind == STEP_REDUCE) {
		/* the reduce reads the region's seed as it is computed: its
		 * work, its init and result, and the region's other outputs */
		const instr *red = comp->instrs[st->pos];
		cost_instr(red, c);
		c->bytes = cost_bytes(red->result);
		for (int k = 1; k < red->nops; k++)
			c->bytes += cost_bytes(red->ops[k].def->result);
	}
	for (int k = 0; k < g->nmem; k++) {
		op_cost m;
		cost_instr(comp->instrs[g->mem_pos[k]], &m);
		c->flops += m.flops;
		c->transcendentals += m.transcendentals;
	}
	for (int i = 0; i < g->nin; i++)
		c->bytes += cost_bytes(comp->instrs[g->in[i].pos]->result);
	for (int o = 0; o < g->nout; o++)  /* with a sink, the seed is not one */
		c->bytes += cost_bytes(comp->instrs[g->mem_pos[g->out_member[o]]]->result);
}

double cost_floor(const op_cost *c, const cost_machine *m)
{
	double tf = m->gflops > 0 ? c->flops / (m->gflops * 1e9) : 0;
	double tb = m->gbps > 0 ? c->bytes / (m->gbps * 1e9) : 0;
	return tf > tb ? tf : tb;
}
