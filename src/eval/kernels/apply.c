/* A computation applied to scalars element by element (see apply.h): the
 * compiled program of scalar instructions, and the driver path for the
 * rest. */
#include "eval/kernels/apply.h"

#include <string.h>

#include "eval/scalar/scalar.h"
#include "util/alloc.h"

/* Programs of more instructions than this are left to the driver (a state
 * lives on a thread's stack). */
#define APPLY_MAX_SLOTS 512

/* --- element kernels: eval/scalar/scalar.h on bytes ----------------------------- */

typedef void (*ap_bin_fn)(void *o, const void *a, const void *b);
typedef uint8_t (*ap_cmp_fn)(const void *a, const void *b, cmp_direction d, cmp_type t);

#define AP_BIN(OPC, fn, E, T)                                              \
	static void ap_##fn##_##E(void *o, const void *a, const void *b)   \
	{                                                                  \
		T x, y, r;                                                 \
		memcpy(&x, a, sizeof x);                                   \
		memcpy(&y, b, sizeof y);                                   \
		r = sc_##fn##_##E(x, y);                                   \
		memcpy(o, &r, sizeof r);                                   \
	}
#define AP_CMP(E, T)                                                                            \
	static uint8_t ap_compare_##E(const void *a, const void *b, cmp_direction d, cmp_type t) \
	{                                                                                       \
		T x, y;                                                                         \
		memcpy(&x, a, sizeof x);                                                        \
		memcpy(&y, b, sizeof y);                                                        \
		return sc_compare_##E(x, y, d, t);                                              \
	}
#define ROW_EVAL(E, T, kind) SC_OPS_##kind(AP_BIN, E, T) AP_CMP(E, T)
#define ROW_NOEVAL(E, T, kind)
#define X(E, name, num, width, kind, ctype, ev, npy) ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X
#undef ROW_EVAL
#undef ROW_NOEVAL

static ap_bin_fn bin_lookup(opcode op, etype t)
{
#define CASE(OPC, fn, E, T) \
	case OP_##OPC:      \
		return ap_##fn##_##E;
	SC_LOOKUP_BY_OP_TYPE(op, t, SC_OPS, CASE)
#undef CASE
}

static ap_cmp_fn cmp_lookup(etype t)
{
	SC_LOOKUP_BY_TYPE(t, ap_compare_)
}

/* --- the program ------------------------------------------------------------ */

typedef enum ap_kind { AP_OP_BIN, AP_OP_CMP, AP_OP_SELECT, AP_OP_CONVERT } ap_kind;

typedef struct ap_op {
	ap_kind kind;
	cmp_direction dir;
	cmp_type ctype;
	etype to, from;
	int width;             /* AP_OP_SELECT: bytes */
	int out, a, b, c;      /* slots */
	ap_bin_fn bin;
	ap_cmp_fn cmp;
} ap_op;

struct apply_prog {
	int nops;
	ap_op *ops;
	int nslots;
	uint64_t *image;       /* the state before a call: constants in their slots */
	int *result_slot;
};

static void prog_free(apply_prog *p)
{
	if (!p)
		return;
	hloi_free(p->ops);
	hloi_free(p->image);
	hloi_free(p->result_slot);
	hloi_free(p);
}

static int is_scalar(const shape *s)
{
	return !shape_is_tuple(s) && s->rank == 0 && etype_byte_width(s->type) > 0 &&
	       etype_byte_width(s->type) <= 8;
}

/* Compiles comp; NULL when it has an instruction the program does not
 * cover (or out of memory: the driver path then reports it). */
static apply_prog *prog_compile(const computation *comp, int nresults)
{
	int n = comp->ninstrs;
	if (!comp->root || n <= 0 || comp->nparams + n > APPLY_MAX_SLOTS)
		return NULL;
	apply_prog *p = hloi_calloc(1, sizeof *p);
	int *slot = hloi_calloc((size_t)n, sizeof *slot);
	uint8_t *needed = hloi_calloc((size_t)n, 1);
	int *tuple_first = hloi_calloc((size_t)n, sizeof *tuple_first);  /* tuples: slot list start in elems */
	int *elems = hloi_calloc((size_t)n * 2 + 2, sizeof *elems);
	int nelems = 0, ok = 0;
	if (!p || !slot || !needed || !tuple_first || !elems)
		goto done;
	p->ops = hloi_calloc((size_t)n, sizeof *p->ops);
	p->image = hloi_calloc((size_t)(comp->nparams + n), sizeof *p->image);
	p->result_slot = hloi_calloc((size_t)nresults, sizeof *p->result_slot);
	if (!p->ops || !p->image || !p->result_slot)
		goto done;
	needed[comp->root->position] = 1;
	for (int i = comp->root->position; i >= 0; i--)
		for (int k = 0; needed[i] && k < comp->instrs[i]->nops; k++)
			needed[comp->instrs[i]->ops[k].def->position] = 1;
	int next = comp->nparams;
	for (int i = 0; i <= comp->root->position; i++) {
		const instr *in = comp->instrs[i];
		slot[i] = -1;
		if (!needed[i])
			continue;
		int s[3] = { -1, -1, -1 };
		for (int k = 0; k < in->nops && k < 3; k++) {
			s[k] = slot[in->ops[k].def->position];
			if (in->op != OP_GET_TUPLE_ELEMENT && s[k] < 0)
				goto done;  /* a tuple operand */
		}
		if (in->op == OP_TUPLE) {
			for (int k = 0; k < in->nops; k++)
				if (slot[in->ops[k].def->position] < 0)
					goto done;
			if (nelems + in->nops + 1 > 2 * n + 2)
				goto done;
			tuple_first[i] = nelems;
			elems[nelems++] = in->nops;
			for (int k = 0; k < in->nops; k++)
				elems[nelems++] = slot[in->ops[k].def->position];
			slot[i] = -2 - i;  /* a tuple: its elements are in elems */
			continue;
		}
		if (in->op == OP_GET_TUPLE_ELEMENT) {
			int t = in->ops[0].def->position;
			int64_t index;
			if (slot[t] != -2 - t || !instr_int(in, ATTR_INDEX, &index) || index < 0 ||
			    index >= elems[tuple_first[t]])
				goto done;
			slot[i] = elems[tuple_first[t] + 1 + index];
			continue;
		}
		if (!is_scalar(in->result))
			goto done;
		ap_op *o = &p->ops[p->nops];
		memset(o, 0, sizeof *o);
		o->a = s[0];
		o->b = s[1];
		o->c = s[2];
		o->to = in->result->type;
		o->width = etype_byte_width(in->result->type);
		/* op-specific: this engine's way with each non-scalar elementwise op */
		switch (in->op) {
		case OP_PARAMETER:
			if (in->parameter_number < 0 || in->parameter_number >= comp->nparams)
				goto done;
			slot[i] = (int)in->parameter_number;
			continue;
		case OP_CONSTANT:
			if (!in->value || in->value->elided || !in->value->data || in->value->nbytes < (size_t)o->width)
				goto done;
			slot[i] = next++;
			memcpy(&p->image[slot[i]], in->value->data, (size_t)o->width);
			continue;
		case OP_COPY:
		case OP_RESHAPE:
		case OP_BROADCAST:
		case OP_TRANSPOSE:
			/* a scalar to the same scalar */
			if (in->nops != 1 || in->ops[0].def->result->type != in->result->type)
				goto done;
			slot[i] = s[0];
			continue;
		case OP_BITCAST_CONVERT:
			/* the same byte, but a byte to pred is normalised to 0/1 */
			if (in->nops != 1 || etype_byte_width(in->ops[0].def->result->type) != o->width ||
			    (in->result->type == ET_PRED && in->ops[0].def->result->type != ET_PRED))
				goto done;
			slot[i] = s[0];
			continue;
		case OP_CONVERT:
			o->kind = AP_OP_CONVERT;
			o->from = in->ops[0].def->result->type;
			break;
		case OP_SELECT:
			if (in->nops != 3 || in->ops[0].def->result->type != ET_PRED)
				goto done;
			o->kind = AP_OP_SELECT;
			break;
		case OP_COMPARE: {
			etype t = in->ops[0].def->result->type;
			o->kind = AP_OP_CMP;
			o->cmp = cmp_lookup(t);
			o->dir = instr_direction(in);
			o->ctype = eval_cmp_type(in, t);
			if (!o->cmp || in->nops != 2)
				goto done;
			break;
		}
		default:
			if (opcode_category(in->op) != OPC_BINARY || in->nops != 2 ||
			    in->ops[0].def->result->type != in->result->type ||
			    in->ops[1].def->result->type != in->result->type)
				goto done;
			o->kind = AP_OP_BIN;
			o->bin = bin_lookup(in->op, in->result->type);
			if (!o->bin)
				goto done;
			break;
		}
		for (int k = 0; k < in->nops; k++)
			if (!is_scalar(in->ops[k].def->result))
				goto done;
		o->out = slot[i] = next++;
		p->nops++;
	}
	int r = comp->root->position;
	if (slot[r] >= 0) {
		if (nresults != 1)
			goto done;
		p->result_slot[0] = slot[r];
	} else if (slot[r] == -2 - r && elems[tuple_first[r]] == nresults) {
		for (int k = 0; k < nresults; k++)
			p->result_slot[k] = elems[tuple_first[r] + 1 + k];
	} else {
		goto done;
	}
	p->nslots = next;
	ok = 1;
done:
	hloi_free(slot);
	hloi_free(needed);
	hloi_free(tuple_first);
	hloi_free(elems);
	if (!ok) {
		prog_free(p);
		return NULL;
	}
	return p;
}

static void prog_run(const apply_prog *p, uint64_t *st)
{
	for (int i = 0; i < p->nops; i++) {
		const ap_op *o = &p->ops[i];
		void *out = &st[o->out];
		switch (o->kind) {
		case AP_OP_BIN:
			o->bin(out, &st[o->a], &st[o->b]);
			break;
		case AP_OP_CMP:
			*(uint8_t *)out = o->cmp(&st[o->a], &st[o->b], o->dir, o->ctype);
			break;
		case AP_OP_SELECT:
			memcpy(out, *(const uint8_t *)&st[o->a] ? (const void *)&st[o->b] : (const void *)&st[o->c],
			       (size_t)o->width);
			break;
		case AP_OP_CONVERT:
			sc_convert(o->to, out, o->from, &st[o->a]);
			break;
		}
	}
}

/* --- the applier --------------------------------------------------------------- */

/* 8-byte words of the driver's state per parameter or result: the widest
 * element type (c128) is 16 bytes. */
#define DRIVER_WORDS 2

hloi_status applier_init(applier *a, engine *e, const computation *comp)
{
	memset(a, 0, sizeof *a);
	a->e = e;
	a->comp = comp;
	a->nparams = comp->nparams;
	const shape *r = comp->root->result;
	a->nresults = shape_is_tuple(r) ? r->ntuple : 1;
	a->ptype = hloi_calloc((size_t)a->nparams + 1, sizeof *a->ptype);
	a->rtype = hloi_calloc((size_t)a->nresults + 1, sizeof *a->rtype);
	if (!a->ptype || !a->rtype)
		goto oom;
	for (int k = 0; k < a->nparams; k++)
		a->ptype[k] = comp->params[k]->result->type;
	for (int k = 0; k < a->nresults; k++)
		a->rtype[k] = shape_is_tuple(r) ? r->tuple[k].type : r->type;
	a->prog = prog_compile(comp, a->nresults);
	if (a->prog) {
		a->nslots = a->prog->nslots;
		return HLOI_OK;
	}
	/* the driver: parameters then results in the state, two words each
	 * (a c128 is 16 bytes) */
	a->nslots = DRIVER_WORDS * (a->nparams + a->nresults);
	a->args = hloi_calloc((size_t)a->nparams + 1, sizeof *a->args);
	if (!a->args)
		goto oom;
	for (int k = 0; k < a->nparams; k++) {
		hloi_status st = value_new(e, comp->params[k]->result, &a->args[k]);
		if (st != HLOI_OK) {
			applier_free(a);
			return st;
		}
	}
	return HLOI_OK;
oom:
	applier_free(a);
	return value_oom(e, (int64_t)sizeof(applier));
}

void applier_free(applier *a)
{
	if (a->args)
		for (int k = 0; k < a->nparams; k++)
			value_drop(a->e, a->args[k]);
	hloi_free(a->args);
	prog_free(a->prog);
	hloi_free(a->ptype);
	hloi_free(a->rtype);
	a->args = NULL;
	a->prog = NULL;
	a->ptype = a->rtype = NULL;
}

void applier_start(const applier *a, uint64_t *st)
{
	if (a->prog)
		memcpy(st, a->prog->image, (size_t)a->nslots * sizeof *st);
	else
		memset(st, 0, (size_t)a->nslots * sizeof *st);
}

void apply_convert(etype dt, void *out, etype st, const void *in)
{
	if (dt == st)
		memcpy(out, in, (size_t)etype_byte_width(st));
	else
		sc_convert(dt, out, st, in);
}

/* Where parameter k lives in a state. */
static uint64_t *param_at(const applier *a, uint64_t *st, int k)
{
	return &st[a->prog ? k : DRIVER_WORDS * k];
}

void applier_param(const applier *a, uint64_t *st, int k, etype t, const void *p)
{
	apply_convert(a->ptype[k], param_at(a, st, k), t, p);
}

void applier_result_to(const applier *a, const uint64_t *st, int r, etype t, void *out)
{
	apply_convert(t, out, a->rtype[r], applier_result(a, st, r));
}

void applier_param_from_result(const applier *a, uint64_t *st, int k, int r)
{
	memcpy(param_at(a, st, k), applier_result(a, st, r), (size_t)etype_byte_width(a->ptype[k]));
}

const void *applier_result(const applier *a, const uint64_t *st, int r)
{
	return &st[a->prog ? a->prog->result_slot[r] : DRIVER_WORDS * (a->nparams + r)];
}

hloi_status applier_run(applier *a, uint64_t *st)
{
	if (a->prog) {
		prog_run(a->prog, st);
		return HLOI_OK;
	}
	engine *e = a->e;
	for (int k = 0; k < a->nparams; k++)
		memcpy(a->args[k]->data, param_at(a, st, k), (size_t)etype_byte_width(a->ptype[k]));
	if (e->depth >= EVAL_MAX_DEPTH) {
		diag_error_where(e->ctx, NULL, "calls nested deeper than %d (computation '%s')", EVAL_MAX_DEPTH,
				 a->comp->name);
		return HLOI_EUNSUPPORTED;
	}
	hloi_literal *r = NULL;
	int owned = 0;
	e->depth++;
	e->uncounted++;
	hloi_status s = eval_computation(e, a->comp, a->args, NULL, &r, &owned);
	e->uncounted--;
	e->depth--;
	if (s != HLOI_OK)
		return s;
	for (int k = 0; k < a->nresults; k++) {
		const hloi_literal *v = shape_is_tuple(&r->shape) ? r->elems[k] : r;
		memcpy(&st[DRIVER_WORDS * (a->nparams + k)], v->data, (size_t)etype_byte_width(a->rtype[k]));
	}
	if (owned)
		value_drop(e, r);
	return HLOI_OK;
}
