/* The checker: resolves names and callees, collects parameters, infers and
 * verifies every instruction's shape (doc/spec.md §3) and element types (§4's
 * gates), converts constants, and reports every error it finds. */
#include "check/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"
#include "check/strict.h"
#include "util/alloc.h"
#include "util/strbuf.h"

/* --- where the declared shape is written ---------------------------------- */

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Skips white space and comments in t[p, end). */
static size_t skip_blank(const char *t, size_t p, size_t end)
{
	while (p < end) {
		if (is_space(t[p])) {
			p++;
		} else if (p + 1 < end && t[p] == '/' && t[p + 1] == '*') {
			p += 2;
			while (p + 1 < end && !(t[p] == '*' && t[p + 1] == '/'))
				p++;
			p = p + 2 < end ? p + 2 : end;
		} else if (p + 1 < end && t[p] == '/' && t[p + 1] == '/') {
			while (p < end && t[p] != '\n')
				p++;
		} else {
			break;
		}
	}
	return p;
}

/* The declared result shape's span: between `name =` and the opcode. The IR
 * keeps no location for it, so it is found in the source text. */
static loc shape_loc(const checker *c, const instr *in)
{
	if (!c->text || !in->has_shape)
		return in->op_at;
	const char *t = c->text->text;
	size_t p = in->name_at.end, e = in->op_at.start;
	if (p >= e || e > c->text->len)
		return in->op_at;
	p = skip_blank(t, p, e);
	if (p < e && t[p] == '=')
		p = skip_blank(t, p + 1, e);
	while (e > p && is_space(t[e - 1]))
		e--;
	if (p >= e)
		return in->op_at;
	loc at = { p, e };
	return at;
}

/* --- names ----------------------------------------------------------------- */

/* Each slot keeps its name's hash: a probe compares hashes and reads an
 * instruction only on a match (a large computation's instructions are far
 * apart in memory). */
typedef struct name_slot {
	size_t hash;
	instr *in;
} name_slot;

typedef struct name_table {
	size_t mask;
	name_slot *slots;
} name_table;

static size_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static int nt_init(name_table *nt, int n)
{
	size_t cap = 16;
	while (cap < 2 * (size_t)n)
		cap *= 2;
	nt->mask = cap - 1;
	nt->slots = hloi_calloc(cap, sizeof *nt->slots);
	return nt->slots ? 0 : -1;
}

static instr *nt_find_hashed(const name_table *nt, const char *name, size_t h)
{
	for (size_t i = h & nt->mask; nt->slots[i].in; i = (i + 1) & nt->mask)
		if (nt->slots[i].hash == h && strcmp(nt->slots[i].in->name, name) == 0)
			return nt->slots[i].in;
	return NULL;
}

static instr *nt_find(const name_table *nt, const char *name)
{
	return nt_find_hashed(nt, name, hash_name(name));
}

static void nt_put(name_table *nt, instr *in, size_t h)
{
	size_t i = h & nt->mask;
	while (nt->slots[i].in)
		i = (i + 1) & nt->mask;
	nt->slots[i] = (name_slot){ h, in };
}

/* A big computation's instructions, their operands and the name table's
 * slots are far apart in memory: walking them in order is a cache miss
 * at each step. The walks below ask for what step i + d will read while
 * doing step i (a struct d steps ahead, its name and operands half as
 * far, the slots a quarter). */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif
enum {
	NT_AHEAD = 16, /* checking an instruction takes a while */
	INS_AHEAD = 64 /* putting its name in the table does not */
};

static size_t nt_hash_prefetch(const name_table *nt, const char *name)
{
	size_t h = hash_name(name);
	PREFETCH(&nt->slots[h & nt->mask]);
	return h;
}

/* For the check of instruction i: the instructions and operand slots the
 * next ones read. */
static void prefetch_operands(const name_table *nt, instr *const *v, int n, int i)
{
	if (i + NT_AHEAD < n) {
		PREFETCH(v[i + NT_AHEAD]);
		PREFETCH((const char *)v[i + NT_AHEAD] + 64);
	}
	if (i + NT_AHEAD / 2 < n) {
		const instr *in = v[i + NT_AHEAD / 2];
		for (int k = 0; k < in->nops && k < 4; k++)
			PREFETCH(&in->ops[k]);
	}
	if (i + NT_AHEAD / 4 < n) {
		const instr *in = v[i + NT_AHEAD / 4];
		for (int k = 0; k < in->nops && k < 4; k++)
			nt_hash_prefetch(nt, in->ops[k].name);
	}
}

/* --- shapes ---------------------------------------------------------------- */

/* A written array shape (or, recursively, the elements of a tuple): a valid
 * layout, and something hloi evaluates. */
static int usable_rec(checker *c, const shape *s, loc at, int depth, int entry_param, int dynamic)
{
	char a[CK_SHAPE_TEXT];
	if (shape_is_tuple(s)) {
		if (depth > 64) {
			ck_unsupported(c, at, "unsupported tuple nesting deeper than 64");
			return 0;
		}
		for (int i = 0; i < s->ntuple; i++)
			if (!usable_rec(c, &s->tuple[i], at, depth + 1, entry_param, dynamic))
				return 0;
		return 1;
	}
	if (!c->report_unsupported)
		return 1;
	if (s->is_buffer && entry_param) {
		ck_unsupported(c, at, "unsupported buffer shape %s of an entry parameter: a run's inputs are arrays (Pin one in the program)",
			       ck_shape(a, s));
		return 0;
	}
	if (!etype_is_evaluated(s->type) && s->type != ET_TOKEN) {
		const char *name = etype_name(s->type);
		ck_unsupported(c, at, "unsupported element type '%s'", name ? name : "?");
		return 0;
	}
	int unbounded = 0, bounded = 0;
	for (int d = 0; d < s->rank; d++) {
		unbounded |= s->dim_kind[d] == DIM_UNBOUNDED;
		bounded |= s->dim_kind[d] == DIM_BOUNDED;
	}
	if ((bounded && !(dynamic & 1)) || (unbounded && !(dynamic & 2))) {
		ck_unsupported(c, at, "unsupported dynamic dimension in %s", ck_shape(a, s));
		return 0;
	}
	/* tiles place elements, but each element is still addressed in whole
	 * bytes: E(n) other than the storage width (packing) is not evaluated;
	 * E(n) at a sub-byte type's own width is accepted (buffers hold one
	 * element per byte, as XLA's literals do) */
	if (s->has_layout && shape_element_bits(s) != 8 * etype_byte_width(s->type)) {
		ck_unsupported(c, at, "unsupported element size in bits E(%lld) for %s (elements are stored in %d bits)",
			       (long long)s->layout.element_size_in_bits, etype_name(s->type),
			       8 * etype_byte_width(s->type));
		return 0;
	}
	return 1;
}

/* entry_param: the shape of an entry computation's parameter, which an
 * input gives (a token parameter gets a token: its input carries
 * nothing; a buffer is refused); dynamic: which dynamic
 * dimensions may (bit 1: `<=N`, the results of the ops that make or pass
 * on sizes; bit 2: `?`, the ops with a shape rule for it; both: the entry
 * computation's parameters, whose inputs give the sizes). */
static int usable_shape(checker *c, const shape *s, loc at, int entry_param, int dynamic)
{
	char msg[1024];
	if (shape_validate(s, msg, sizeof msg)) {
		ck_error(c, at, "%s", msg);
		return 0;
	}
	return usable_rec(c, s, at, 0, entry_param, dynamic);
}

/* A deep copy of `src` in the module's arena with every array's layout
 * filled in (the default where none was written). */
static int copy_shape(checker *c, shape *dst, const shape *src)
{
	*dst = *src;
	if (!shape_is_tuple(src)) {
		if (!src->has_layout || src->layout.n_minor_to_major != src->rank) {
			shape_make_array(dst, src->type, src->rank, src->dims);
			dst->is_buffer = src->is_buffer;
			memcpy(dst->dim_kind, src->dim_kind, sizeof dst->dim_kind);  /* a `<=N` element stays */
		}
		return 0;
	}
	dst->tuple = NULL;
	if (src->ntuple <= 0)
		return 0;
	shape *el = arena_array(&c->m->arena, (size_t)src->ntuple, sizeof *el);
	if (!el) {
		c->oom = 1;
		return -1;
	}
	for (int i = 0; i < src->ntuple; i++)
		if (copy_shape(c, &el[i], &src->tuple[i]))
			return -1;
	dst->tuple = el;
	return 0;
}

/* in->result = `inf` (type, dims, and for tuples the elements with their
 * layouts), with the written layout, else inf's own (`keep_layout`: the
 * layout a tuple element, a callee's root or a parameter brings), else the
 * default one. */
static int set_result_ex(checker *c, instr *in, const shape *inf, int keep_layout)
{
	shape r;
	if (shape_is_tuple(inf)) {
		if (copy_shape(c, &r, inf))
			return -1;
	} else {
		shape_make_array(&r, inf->type, inf->rank, inf->dims);
		memcpy(r.dim_kind, inf->dim_kind, sizeof r.dim_kind);  /* set-dimension-size's `<=N` */
		r.is_buffer = inf->is_buffer;
		if (in->has_shape && in->shape->has_layout && in->shape->rank == inf->rank &&
		    !shape_is_tuple(in->shape))
			r.layout = in->shape->layout;
		else if (keep_layout && inf->has_layout && inf->layout.n_minor_to_major == inf->rank)
			r.layout = inf->layout;
	}
	const shape *interned = module_intern_shape(c->m, &r);
	if (!interned) {
		c->oom = 1;
		return -1;
	}
	in->result = interned;
	return 0;
}


static int constant(checker *c, instr *in)
{
	if (in->value)
		return 0;  /* checked before */
	if (!in->literal) {
		ck_error(c, in->op_at, "constant has no value");
		return 1;
	}
	hloi_literal *lit = NULL;
	hloi_status st = literal_from_tree(&lit, c->ctx, c->text ? c->m->src : -1, in->literal,
					   in->result);
	if (st == HLOI_ENOMEM) {
		c->oom = 1;
		return 1;
	}
	if (st != HLOI_OK) {
		c->nerrors++;
		return 1;
	}
	if (ck_store_value(c, lit)) {
		literal_destroy(lit);
		c->oom = 1;
		return 1;
	}
	in->value = lit;
	return 0;
}

/* Resolves the operands of `in`; returns 1 when all are usable. */
static int resolve_operands(checker *c, instr *in, const name_table *nt, const uint8_t *ok)
{
	int good = 1;
	for (int k = 0; k < in->nops; k++) {
		operand *op = &in->ops[k];
		instr *d = nt_find(nt, op->name);
		op->def = NULL;
		if (!d) {
			ck_error(c, op->at, "instruction does not exist: %s", op->name);
			good = 0;
		} else if (d->position >= in->position) {
			ck_error(c, op->at, "instruction '%s' is used before its definition", op->name);
			ck_note(c, d->name_at, "'%s' is defined here", d->name);
			good = 0;
		} else {
			op->def = d;
			if (!ok[d->position])
				good = 0;
		}
	}
	return good;
}

/* Operands written with a shape must match what their definition gives,
 * whichever dimensions are `<=N` (XLA's parser asks ShapeUtil::Compatible). */
static void written_operand_shapes(checker *c, instr *in, const uint8_t *ok)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT], msg[1024];
	for (int k = 0; k < in->nops; k++) {
		operand *op = &in->ops[k];
		if (!op->has_shape)
			continue;
		if (shape_validate(op->declared, msg, sizeof msg)) {
			ck_error(c, op->at, "%s", msg);
			continue;
		}
		if (op->def && ok[op->def->position] && !shape_compatible_bounds(op->declared, op->def->result))
			ck_error(c, op->at,
				 "The declared operand shape %s is not compatible with the shape of the operand instruction %s.",
				 ck_shape(a, op->declared), ck_shape(b, op->def->result));
	}
}

/* The shape rule of every opcode, from the table (ir/opcodes.def). */
typedef int (*infer_fn)(checker *c, instr *in, shape *inf);
static const infer_fn infer_rules[OP_COUNT] = {
#define X(E, text, arity, cat, infer, ev, flags, types) [OP_##E] = infer_##infer,
#include "ir/opcodes.def"
#undef X
};

int ck_infer_as(checker *c, opcode op, instr *in, shape *inf)
{
	return infer_rules[op](c, in, inf);
}

/* Resolves the computations `in` calls (AK_COMP and AK_COMPS attributes, in
 * the table's order: to_apply, calls, condition, body, branches, ...). */
static int resolve_called(checker *c, instr *in)
{
	int n = 0, good = 1;
	for (int i = 0; i < in->nattrs; i++) {
		const attr *a = &in->attrs[i];
		if (a->kind == AK_COMP)
			n++;
		else if (a->kind == AK_COMPS)
			n += a->u.words.n;
	}
	in->ncalled = 0;
	in->called = NULL;
	in->callee = NULL;
	if (!n)
		return 1;
	in->called = arena_array(&c->m->arena, (size_t)n, sizeof *in->called);
	if (!in->called) {
		c->oom = 1;
		return 0;
	}
	for (int id = 0; id < ATTR_COUNT; id++) {
		const attr *a = instr_attr(in, (attr_id)id);
		if (!a || (a->kind != AK_COMP && a->kind != AK_COMPS))
			continue;
		int k = a->kind == AK_COMP ? 1 : a->u.words.n;
		for (int j = 0; j < k; j++) {
			const char *name = a->kind == AK_COMP ? a->u.s : a->u.words.v[j];
			loc at = a->kind == AK_COMP ? a->vat : attr_word_loc(a, j);
			computation *cc = module_find_computation(c->m, name);
			if (!cc) {
				ck_error(c, at, "computation does not exist: %s", name);
				good = 0;
			}
			in->called[in->ncalled++] = cc;
		}
	}
	in->callee = in->called[0];
	return good;
}

static int declared_root_in_place(checker *c, const instr *in, const shape *inf);

/* Dynamic dimensions (`<=N`) run as far as their sizes are defined: the
 * results of set-dimension-size, dynamic-reshape and the SliceToDynamic
 * custom-call carry their sizes; the elementwise ops, broadcast, transpose,
 * reshape, slice, dot and a reduce of one operand pass them on (eval/kernels/dynamic.c);
 * get-dimension-size and PadToStatic read them; the entry computation's
 * result may be one (or a tuple of them). Any other use is refused at the
 * operand (doc/dynamic.md). */
static int is_target(const instr *in, cc_target target)
{
	const char *t = in->op == OP_CUSTOM_CALL ? instr_text(in, ATTR_CUSTOM_CALL_TARGET) : NULL;
	return t && custom_call_builtin(t) == (int)target;
}

/* the ops whose shape rules take `<=N` and `?` operand dimensions alike */
static int follows_operand_sizes(opcode op)
{
	return opcode_has(op, OPF_FOLLOWS_SIZES);
}

/* whether `in` may have a `<=N` result */
static int makes_dynamic(const instr *in)
{
	/* op-specific: a custom-call by its target */
	if (in->op == OP_CUSTOM_CALL)
		return is_target(in, CC_SLICE_TO_DYNAMIC) || is_target(in, CC_DYNAMIC_CONV_FORWARD) ||
		       is_target(in, CC_DYNAMIC_REDUCE_WINDOW_SAME) || is_target(in, CC_DYNAMIC_SELECT_AND_SCATTER_SAME) ||
		       is_target(in, CC_DYNAMIC_CONV_INPUT_GRAD);
	/* the rest by their rows: set-dimension-size and dynamic-reshape make
	 * sizes; the others follow, compute within or pass them on (control
	 * flow: the sizes travel with the values; fusion, the async wrappers,
	 * map, opt-barrier, reduce-precision, copy-start/-done and all-reduce:
	 * XLA's dynamic dimension inference passes their operands' sizes on) */
	return follows_operand_sizes(in->op) || opcode_dynamic_on_sizes(in) || opcode_has(in->op, OPF_PASSES_SIZES);
}

/* The `<=N` operand dimensions XLA's dynamic dimension inference leaves
 * Unimplemented for an op that takes others: a convolution's spatial ones
 * (its input batch and feature and the kernel's input feature are
 * defined; DynamicConvolutionForward takes a spatial one), a gather's
 * operand dimension sliced in part (neither 1 nor whole) or batched, or
 * its indices' index vector dimension, a dynamic-slice's dimension
 * sliced in part. -1, or the operand holding one, *why XLA's words. */
static int scatter_refused(const instr *in, const char **why)
{
	int n = in->nops / 2;
	const int_list *uwd = instr_ints(in, ATTR_UPDATE_WINDOW_DIMS), *iwd = instr_ints(in, ATTR_INSERTED_WINDOW_DIMS);
	const int_list *ibd = instr_ints(in, ATTR_INPUT_BATCHING_DIMS);
	const shape *o = in->ops[0].def ? in->ops[0].def->result : NULL;
	for (int k = n + 1; o && shape_is_array(o) && k < in->nops; k++) {
		const shape *u = in->ops[k].def ? in->ops[k].def->result : NULL;
		int od = 0;
		for (int d = 0; u && shape_is_array(u) && d < u->rank; d++) {
			if (!int_list_has(uwd, d))
				continue;
			while (od < o->rank && (int_list_has(iwd, od) || int_list_has(ibd, od)))
				od++;
			*why = "Dynamic dimension of update window dims that are not the same as corresponding operand dim is not supported";
			if (u->dim_kind[d] == DIM_BOUNDED && (od >= o->rank || u->dims[d] != o->dims[od]))
				return k;
			od++;
		}
	}
	return -1;
}

static int dynamic_refused(const instr *in, const char **why)
{
	const attr *la = instr_attr(in, ATTR_DIM_LABELS);
	if (in->op == OP_SCATTER)
		return scatter_refused(in, why);
	for (int k = 0; k < in->nops && k < 2; k++) {
		const shape *s = in->ops[k].def ? in->ops[k].def->result : NULL;
		for (int d = 0; s && shape_is_array(s) && d < s->rank; d++) {
			if (s->dim_kind[d] != DIM_BOUNDED)
				continue;
			if (in->op == OP_CONVOLUTION && la && la->conv) {
				const conv_dims *cd = la->conv;
				*why = "Dynamic Spatial Convolution is not supported";
				if (k == 0 ? d != cd->input_batch && d != cd->input_feature : d != cd->kernel_input_feature)
					return k;
			} else if (in->op == OP_GATHER) {
				const int_list *ss = instr_ints(in, ATTR_SLICE_SIZES);
				int64_t ivd = k == 1 ? in->ops[1].def->result->rank : 0;
				instr_int(in, ATTR_INDEX_VECTOR_DIM, &ivd);
				*why = k == 0 ? "Detects a dynamic dimension on the data input of gather, which is not supported"
					      : "Detects a non-batch dynamic dimension of gather, which is not supported";
				if (k == 0 && (!ss || d >= ss->n || (ss->v[d] != 1 && ss->v[d] != s->dims[d]) ||
					       int_list_has(instr_ints(in, ATTR_OPERAND_BATCHING_DIMS), d)))
					return k;
				if (k == 1 && (d == ivd || int_list_has(instr_ints(in, ATTR_START_INDICES_BATCHING_DIMS), d)))
					return k;
			} else if (in->op == OP_DYNAMIC_SLICE && k == 0) {
				const shape *r = in->result && shape_is_array(in->result) ? in->result : in->shape;
				*why = "Dynamic dimension propagation on DynamicSlice where a partial dimension is selected";
				if (shape_is_array(r) && d < r->rank && r->dims[d] != 1 && r->dims[d] != s->dims[d])
					return k;
			}
		}
	}
	return -1;
}

/* dimension d of an inferred result becomes `<=N` (a `?` stays `?`) */
static void mark_bounded(shape *s, int d)
{
	if (s->dim_kind[d] == DIM_STATIC)
		s->dim_kind[d] = DIM_BOUNDED;
}

/* An arena copy of tuple inf's elements, for the dynamic rules to mark
 * (NULL when it has none, or out of memory: c->oom set). */
static shape *tuple_elements(checker *c, const shape *inf)
{
	if (inf->ntuple <= 0)
		return NULL;
	shape *el = arena_array(&c->m->arena, (size_t)inf->ntuple, sizeof *el);
	if (!el) {
		c->oom = 1;
		return NULL;
	}
	memcpy(el, inf->tuple, sizeof *el * (size_t)inf->ntuple);
	return el;
}

/* The elements of a sort's, variadic reduce's or reduce-window's tuple
 * result: a dimension `<=N` in any input is `<=N` in every output (a
 * reduce's dimensions not reduced), as XLA's dynamic dimension inference
 * gives every output the dynamic input's size. */
static void dynamic_tuple_result(checker *c, const instr *in, shape *inf)
{
	int ninputs = in->op == OP_SORT ? in->nops : in->nops / 2;
	const int_list *rd = in->op == OP_REDUCE ? instr_ints(in, ATTR_DIMENSIONS) : NULL;
	const shape *x = in->nops > 0 && in->ops[0].def ? in->ops[0].def->result : NULL;
	shape *el = x && shape_is_array(x) ? tuple_elements(c, inf) : NULL;
	if (!el)
		return;
	for (int i = 0; i < inf->ntuple; i++) {
		if (!shape_is_array(&el[i]))
			continue;
		int r = 0;
		for (int d = 0; d < x->rank; d++) {
			if (int_list_has(rd, d))
				continue;
			int dyn = 0;
			for (int k = 0; k < ninputs && k < in->nops; k++) {
				const shape *o = in->ops[k].def ? in->ops[k].def->result : NULL;
				dyn |= o && shape_is_array(o) && d < o->rank && o->dim_kind[d] == DIM_BOUNDED;
			}
			if (dyn && r < el[i].rank)
				mark_bounded(&el[i], r);
			r++;
		}
	}
	inf->tuple = el;
}

/* The result dimensions of the data-movement ops and convolution that a
 * `<=N` operand dimension flows into are `<=N`, as XLA's shape inference
 * makes them (InferPadShape, InferConcatOpShape, InferWindowOutputShape,
 * InferConvolveShape keep is_dynamic_dimension) and its dynamic dimension
 * inference sizes them (eval/kernels/dynamic.c gives the sizes). */
static void dynamic_result(checker *c, const instr *in, shape *inf)
{
	if (shape_is_tuple(inf) && (in->op == OP_SORT || in->op == OP_REDUCE || in->op == OP_REDUCE_WINDOW)) {
		dynamic_tuple_result(c, in, inf);
		return;
	}
	if (shape_is_tuple(inf) && in->op == OP_SCATTER) {
		/* a variadic scatter: each result takes its operand's `<=N`
		 * dimensions (XLA's HandleScatter) */
		shape *el = tuple_elements(c, inf);
		if (!el)
			return;
		for (int i = 0; i < inf->ntuple; i++) {
			const shape *o = i < in->nops && in->ops[i].def ? in->ops[i].def->result : NULL;
			for (int d = 0; o && shape_is_array(o) && shape_is_array(&el[i]) && d < o->rank && d < el[i].rank; d++)
				if (o->dim_kind[d] == DIM_BOUNDED)
					mark_bounded(&el[i], d);
		}
		inf->tuple = el;
		return;
	}
	if (!shape_is_array(inf) || in->nops < 1 || !in->ops[0].def)
		return;
	const shape *x = in->ops[0].def->result;
	if (!x || !shape_is_array(x))
		return;
	/* op-specific: each op's own `<=N` result rule */
	switch (in->op) {
	case OP_PAD:
	case OP_REVERSE:
	case OP_SORT:
	case OP_REDUCE_WINDOW:
	case OP_DYNAMIC_UPDATE_SLICE:
	case OP_SELECT_AND_SCATTER:
	case OP_SCATTER:
		for (int d = 0; d < x->rank && d < inf->rank; d++)
			if (x->dim_kind[d] == DIM_BOUNDED)
				mark_bounded(inf, d);
		return;
	case OP_DYNAMIC_SLICE:
		for (int d = 0; d < x->rank && d < inf->rank; d++)
			if (x->dim_kind[d] == DIM_BOUNDED && inf->dims[d] == x->dims[d])
				mark_bounded(inf, d);
		return;
	case OP_CONCATENATE:
		for (int k = 0; k < in->nops; k++) {
			const shape *o = in->ops[k].def ? in->ops[k].def->result : NULL;
			for (int d = 0; o && shape_is_array(o) && d < o->rank && d < inf->rank; d++)
				if (o->dim_kind[d] == DIM_BOUNDED)
					mark_bounded(inf, d);
		}
		return;
	case OP_CONVOLUTION: {
		const attr *la = instr_attr(in, ATTR_DIM_LABELS);
		if (la && la->conv && la->conv->input_batch < x->rank && x->dim_kind[la->conv->input_batch] == DIM_BOUNDED)
			inf->dim_kind[la->conv->output_batch] = DIM_BOUNDED;
		return;
	}
	case OP_GATHER: {
		const shape *ix = in->nops > 1 && in->ops[1].def ? in->ops[1].def->result : NULL;
		int from_op[HLOI_MAX_RANK], from_dim[HLOI_MAX_RANK];
		if (!ix || !shape_is_array(ix))
			return;
		gather_result_sources(in, x->dims, x->rank, ix->rank, inf->rank, from_op, from_dim);
		for (int r = 0; r < inf->rank; r++)
			if (from_op[r] >= 0 && (from_op[r] ? ix : x)->dim_kind[from_dim[r]] == DIM_BOUNDED)
				mark_bounded(inf, r);
		return;
	}
	default:
		return;
	}
}

/* whether `in` may take a `?` operand or have a `?` result: the ops whose
 * shape rules know XLA's unbounded dimensions; a run gives each `?` its
 * input's size first (check_module_sized), so the kernels see static
 * shapes */
static int takes_unbounded(const instr *in)
{
	if (in->op == OP_CUSTOM_CALL) {
		/* a target hloi does not have is refused at its name anyway
		 * (the registry's shape rules want sizes) */
		const char *t = instr_text(in, ATTR_CUSTOM_CALL_TARGET);
		return t && custom_call_builtin(t) < 0 && !custom_call_user(t);
	}
	/* a callee's parameter: a run sizes it per call site (size_call_site) */
	return opcode_has(in->op, OPF_TAKES_UNBOUNDED) || follows_operand_sizes(in->op);
}

/* An op without a `?` rule here whose result is written: its check waits
 * for a run, which checks the module again with the inputs' sizes
 * (check_module_sized), when its operands are static. */
static int defers_unbounded(const checker *c, const instr *in)
{
	if (c->input_shapes || !in->has_shape || takes_unbounded(in))
		return 0;
	for (int k = 0; k < in->nops; k++)
		if (in->ops[k].def && in->ops[k].def->result && shape_has_unbounded(in->ops[k].def->result))
			return 1;
	return 0;
}

/* whether `in` may take a `<=N` operand */
static int takes_dynamic(const instr *in)
{
	return makes_dynamic(in) || in->op == OP_GET_DIMENSION_SIZE || is_target(in, CC_PAD_TO_STATIC) ||
	       is_target(in, CC_DYNAMIC_CONV_KERNEL_GRAD);
}

/* the entry's result: a tuple of such values prints each with its sizes */
static int entry_root_tuple(const checker *c, const instr *in)
{
	return in->op == OP_TUPLE && c->cur_comp == c->m->entry && c->cur_comp->root == in;
}

static void dynamic_operands(checker *c, const instr *in)
{
	char a[CK_SHAPE_TEXT];
	if (!c->report_unsupported)
		return;
	const char *why = NULL;
	int k = dynamic_refused(in, &why);
	if (k >= 0) {
		ck_unsupported(c, in->ops[k].at,
			       "unsupported dynamic dimension in %s (operand %d of %s): %s (XLA's dynamic dimension inference)",
			       ck_shape(a, in->ops[k].def->result), k, opcode_name(in->op), why);
		return;
	}
	if (entry_root_tuple(c, in))
		return;
	for (int i = 0; i < in->nops; i++) {
		const instr *d = in->ops[i].def;
		if (!d || !d->result || shape_is_static(d->result))
			continue;
		if (shape_has_unbounded(d->result) && !takes_unbounded(in) && !defers_unbounded(c, in)) {
			if (in->has_shape || c->input_shapes)
				ck_unsupported(c, in->ops[i].at,
					       "unsupported dynamic dimension in %s (operand %d of %s): no input's size decides this `?` in a run",
					       ck_shape(a, d->result), i, opcode_name(in->op));
			else
				ck_unsupported(c, in->ops[i].at,
					       "unsupported dynamic dimension in %s (operand %d of %s): hloi has no `?` shape rule for %s; write its result shape, which a run checks with the inputs' sizes",
					       ck_shape(a, d->result), i, opcode_name(in->op), opcode_name(in->op));
			return;
		}
		if (!takes_dynamic(in) && shape_has_dim_kind(d->result, DIM_BOUNDED)) {
			ck_unsupported(c, in->ops[i].at,
				       "unsupported dynamic dimension in %s (operand %d of %s): only the elementwise ops, broadcast, transpose, reshape, slice, dot, reduce, concatenate, pad, reverse, sort, reduce-window, convolution, gather, dynamic-slice, dynamic-update-slice, select-and-scatter, scatter, tuple, get-tuple-element, while, conditional, call, fusion, the async ops, map, opt-barrier, reduce-precision, copy-start, copy-done, all-reduce, set-dimension-size, dynamic-reshape, get-dimension-size and the custom-calls PadToStatic, DynamicConvolutionForward, DynamicConvolutionInputGrad, DynamicConvolutionKernelGrad, DynamicReduceWindowSamePadding and DynamicSelectAndScatterSamePadding take one",
				       ck_shape(a, d->result), i, opcode_name(in->op));
			return;
		}
	}
}

/* A written array shape that differs from the inferred one only in which
 * dimensions are `<=N`: XLA's verifier compares the two ignoring that
 * (ShapeUtil::Compatible). A written `<=N` dimension is kept (its size comes
 * from the operands, or is the bound; eval/kernels/dynamic.c); a written static one
 * the operands make dynamic takes the inferred `<=N`, as XLA's dynamic
 * dimension inference follows the size whatever the text writes (its
 * dynamic_padder_test writes `s32[12] set-dimension-size(...)`). 1: accepted
 * (inf takes the written `<=N` dimensions), 0: another difference. */
static int dynamic_kinds(const instr *in, shape *inf)
{
	const shape *w = in->shape;
	if (w->type != inf->type || !shape_same_bounds(w, inf))
		return 0;
	for (int d = 0; d < w->rank; d++) {
		/* an inferred `?` takes the written size or bound; a written
		 * `?` takes the inferred one (ShapeUtil::Compatible) */
		if (inf->dim_kind[d] == DIM_UNBOUNDED) {
			inf->dims[d] = w->dims[d];
			inf->dim_kind[d] = w->dim_kind[d];
		} else if (w->dim_kind[d] == DIM_BOUNDED) {
			inf->dim_kind[d] = DIM_BOUNDED;
		}
	}
	return 1;
}

/* Buffers b(T) go through parameters, tuples, get-tuple-element, call and
 * custom-calls (Pin, Unpin, CreateBuffer and the targets that update a
 * buffer in place, which check their own operands): any other instruction
 * taking or giving one is refused, as XLA has no meaning for it (hloi's
 * rule; XLA's verifier checks the buffer custom-calls' shapes). */
static int buffers_refused(checker *c, const instr *in, const shape *inf)
{
	char a[CK_SHAPE_TEXT];
	if (opcode_has(in->op, OPF_BUFFERS))
		return 0;
	for (int k = 0; k < in->nops; k++)
		if (shape_has_buffer(in->ops[k].def->result)) {
			ck_error(c, in->ops[k].at,
				 "%s takes no buffer: operand %d is %s (a buffer goes through parameter, tuple, get-tuple-element, call and custom-call; Unpin gives its array)",
				 opcode_name(in->op), k, ck_shape(a, in->ops[k].def->result));
			return 1;
		}
	const shape *r = in->has_shape && shape_has_buffer(in->shape) ? in->shape : inf;
	if (shape_has_buffer(r)) {
		ck_error(c, in->op_at, "%s gives no buffer: its result is %s (CreateBuffer and Pin make one)",
			 opcode_name(in->op), ck_shape(a, r));
		return 1;
	}
	return 0;
}

/* A run sized from its inputs (check_module_sized): an entry parameter's
 * `?` dimensions take its input's sizes (an input of another rank or a
 * tuple is left to the run's own input check). */
static void sized_parameter(const checker *c, const instr *in, shape *inf)
{
	if (!c->input_shapes || in->op != OP_PARAMETER || c->cur_comp != c->m->entry || in->parameter_number < 0 ||
	    (size_t)in->parameter_number >= c->ninputs || !shape_is_array(inf))
		return;
	const shape *x = c->input_shapes[in->parameter_number];
	if (!x || !shape_is_array(x) || x->rank != inf->rank)
		return;
	for (int d = 0; d < inf->rank; d++)
		if (inf->dim_kind[d] == DIM_UNBOUNDED) {
			inf->dims[d] = x->dims[d];
			inf->dim_kind[d] = DIM_STATIC;
		}
}

/* --- `?` parameters sized per call site (a run) ------------------------------- */

/* s (a parameter's declared shape) with each `?` dimension taking arg's
 * size or bound, into *out (tuple elements alike, in the arena); 0 when
 * arg does not fit s (another rank or tuple arity: the caller's shape rule
 * reports it). */
static int size_shape(checker *c, shape *out, const shape *s, const shape *arg)
{
	*out = *s;
	if (shape_is_tuple(s)) {
		if (!shape_is_tuple(arg) || arg->ntuple != s->ntuple)
			return 0;
		if (!shape_has_unbounded(s))
			return 1;
		shape *el = arena_array(&c->m->arena, (size_t)s->ntuple, sizeof *el);
		if (!el) {
			c->oom = 1;
			return 0;
		}
		for (int i = 0; i < s->ntuple; i++)
			if (!size_shape(c, &el[i], &s->tuple[i], &arg->tuple[i]))
				return 0;
		out->tuple = el;
		return 1;
	}
	if (shape_is_tuple(arg) || arg->rank != s->rank)
		return 0;
	for (int d = 0; d < s->rank; d++)
		if (s->dim_kind[d] == DIM_UNBOUNDED && arg->dim_kind[d] != DIM_UNBOUNDED) {
			out->dims[d] = arg->dims[d];
			out->dim_kind[d] = arg->dim_kind[d];
		}
	return 1;
}

/* A copy of orig whose parameters are written with the shapes in sig: new
 * instructions (the checker fills their results, operands and callees),
 * the same names, attributes, constants' values and source locations, so
 * its errors point at orig's text. */
static computation *sized_copy(checker *c, computation *orig, const shape **sig)
{
	arena *a = &c->m->arena;
	computation *cp = arena_alloc(a, sizeof *cp);
	instr **v = arena_array(a, orig->ninstrs > 0 ? (size_t)orig->ninstrs : 1, sizeof *v);
	if (!cp || !v)
		return NULL;
	*cp = *orig;
	cp->is_entry = 0;
	cp->instrs = v;
	cp->nparams = 0;
	cp->params = NULL;
	cp->sized_from = orig;
	cp->sized_args = sig;
	cp->sized_copies = NULL;
	cp->sized_epoch = 0;
	cp->root = NULL;
	for (int i = 0; i < orig->ninstrs; i++) {
		const instr *x = orig->instrs[i];
		instr *y = arena_alloc(a, sizeof *y);
		operand *ops = x->nops > 0 ? arena_array(a, (size_t)x->nops, sizeof *ops) : NULL;
		if (!y || (x->nops > 0 && !ops))
			return NULL;
		*y = *x;
		if (x->nops > 0)
			memcpy(ops, x->ops, (size_t)x->nops * sizeof *ops);
		y->ops = ops;
		y->ncalled = 0;
		y->called = NULL;
		y->callee = NULL;
		if (x->op == OP_PARAMETER && x->parameter_number >= 0 && x->parameter_number < orig->nparams) {
			y->shape = sig[x->parameter_number];
			y->has_shape = 1;
		}
		v[i] = y;
		if (x == orig->root)
			cp->root = y;
	}
	cp->next_sized = orig->sized_copies;
	orig->sized_copies = cp;
	return cp;
}

/* The computation a call site runs: orig itself unless its parameters
 * declare `?`, else its copy sized by the call site's argument shapes
 * args (one per parameter), made once per distinct signature and kept
 * with the module for later runs. orig when an argument does not fit its
 * parameter (the shape rule reports it) or still has a `?`. */
static computation *sized_callee(checker *c, computation *orig, const shape *const *args, int nargs)
{
	if (!orig || orig->sized_from || !orig->params || nargs != orig->nparams)
		return orig;
	int any = 0;
	for (int k = 0; k < nargs; k++) {
		const instr *p = orig->params[k];
		if (!p || !p->has_shape)
			return orig;
		any |= shape_has_unbounded(p->shape);
	}
	if (!any)
		return orig;
	const shape **sig = arena_array(&c->m->arena, (size_t)nargs, sizeof *sig);
	if (!sig) {
		c->oom = 1;
		return orig;
	}
	for (int k = 0; k < nargs; k++) {
		shape t;
		if (!size_shape(c, &t, orig->params[k]->shape, args[k]) || shape_has_unbounded(&t))
			return orig;
		if (!(sig[k] = module_intern_shape(c->m, &t))) {
			c->oom = 1;
			return orig;
		}
	}
	for (computation *s = orig->sized_copies; s; s = s->next_sized)
		if (!memcmp(s->sized_args, sig, (size_t)nargs * sizeof *sig))
			return s;
	computation *cp = sized_copy(c, orig, sig);
	if (!cp)
		c->oom = 1;
	return cp ? cp : orig;
}

/* The slot's computation takes operands first..first+n-1 of in. */
static void size_slot(checker *c, const instr *in, computation **slot, int first, int n)
{
	if (!slot || !*slot || n <= 0 || first + n > in->nops)
		return;
	const shape *stack[8];
	const shape **args = n <= 8 ? stack : hloi_calloc((size_t)n, sizeof *args);
	if (!args) {
		c->oom = 1;
		return;
	}
	for (int k = 0; k < n; k++)
		args[k] = in->ops[first + k].def->result;
	*slot = sized_callee(c, *slot, args, n);
	if (args != stack)
		hloi_free(args);
}

/* The next op of in's async chain: the async-update or async-done after
 * it in its computation that continues it, or NULL. */
static instr *async_next(const checker *c, const instr *in)
{
	const computation *comp = c->cur_comp;
	for (int i = in->position + 1; comp && i < comp->ninstrs; i++) {
		instr *x = comp->instrs[i];
		if ((x->op == OP_ASYNC_UPDATE || x->op == OP_ASYNC_DONE) && x->nops > 0 &&
		    !strcmp(x->ops[0].name, in->name))
			return x;
	}
	return NULL;
}

/* The operands a chain of async ops brings its computation f, in XLA's
 * order (its parser's UpdateAsyncWrappedComputation): the start's, then
 * each async-update's after the op it continues, from the start up to
 * `last`, into args (f->nparams of them at most); their count. The
 * operands are sized by the op `at` of the chain being checked when
 * defined before it; *later is set when one is not and f's parameter for
 * it declares `?`, *bad when one is already in error (reported there). */
static int async_chain_args(const checker *c, const instr *start, const instr *last, const instr *at,
			    const computation *f, const name_table *nt, const uint8_t *ok, const shape **args,
			    int *later, int *bad)
{
	int k = 0;
	for (const instr *x = start; x && k < f->nparams; x = x == last ? NULL : async_next(c, x)) {
		for (int j = x == start ? 0 : 1; j < x->nops && k < f->nparams; j++, k++) {
			const instr *p = f->params[k];
			const instr *d = nt_find(nt, x->ops[j].name);
			if (p && p->has_shape && !shape_has_unbounded(p->shape))
				args[k] = p->shape; /* nothing to size */
			else if (!d || d->position >= at->position)
				*later = 1;
			else if (!ok[d->position])
				*bad = 1;
			else
				args[k] = d->result;
		}
		if (x->op == OP_ASYNC_DONE)
			break;
	}
	return k;
}

/* An async-start whose computation f takes more parameters than the start
 * has operands (XLA's newer syntax): f's copy is sized by the operands of
 * the whole chain. When they are all defined before the start, at the
 * start; else the async-update that brings the last of them sizes it
 * (size_async_update), and the start checks f only there. 1 when
 * reported. */
static int size_async_chain(checker *c, instr *in, computation *f, const name_table *nt, const uint8_t *ok)
{
	const shape **args = hloi_calloc((size_t)f->nparams, sizeof *args);
	if (!args) {
		c->oom = 1;
		return 1;
	}
	const instr *last = in;
	for (const instr *x = async_next(c, in); x; x = async_next(c, x))
		last = x;
	int later = 0, bad = 0;
	int k = async_chain_args(c, in, last, in, f, nt, ok, args, &later, &bad);
	if (!bad && later && in->has_shape && f->root && shape_has_unbounded(f->root->result) &&
	    !async_result_pending(in->shape, f->root->result)) {
		/* the start's result is f's, which the start cannot size */
		ck_unsupported(c, in->op_at,
			       "unsupported `?` in the result of this async-start: an async-update brings operands defined after it that size computation %s, so its result must be written () until then",
			       f->name);
		bad = 1;
	} else if (!bad && later) {
		c->async_deferred = in;
	} else if (!bad) {
		/* fewer operands than parameters: the done reports it, and
		 * sized_callee, wanting them all, keeps f */
		*instr_called_slot(in, ATTR_CALLS, 0) = sized_callee(c, f, args, k);
	}
	hloi_free(args);
	return bad;
}

/* The async-update that brings the last of its chain's operands, when the
 * start left its computation unsized: the computation's copy sized by the
 * chain's operands, in the start's slot, checked here. 1 when reported. */
static int size_async_update(checker *c, instr *in, const name_table *nt, const uint8_t *ok)
{
	instr *start = in;
	while (start->op != OP_ASYNC_START && start->nops > 0 && start->ops[0].def)
		start = start->ops[0].def;
	computation **slot = start->op == OP_ASYNC_START ? instr_called_slot(start, ATTR_CALLS, 0) : NULL;
	computation *f = slot ? *slot : NULL;
	if (!f || f->sized_from || !f->params || start->nops >= f->nparams)
		return 0;
	const shape **args = hloi_calloc((size_t)f->nparams, sizeof *args);
	if (!args) {
		c->oom = 1;
		return 1;
	}
	int later = 0, bad = 0;
	int k = async_chain_args(c, start, in, in, f, nt, ok, args, &later, &bad);
	int r = bad;
	if (!bad && !later && k == f->nparams) {
		*slot = sized_callee(c, f, args, k);
		start->callee = *slot;
		r = *slot != f && ck_ensure_checked(c, in, *slot, in->op_at);
	}
	hloi_free(args);
	return r;
}

/* A run (check_module_sized): each computation in calls whose parameters
 * declare `?` becomes its copy sized by the operands this call passes it
 * (call, fusion: all operands; async-start: the operands of its chain;
 * while's condition and body: the state; a conditional's branch: its
 * operand). The async-update and async-done of a chain find the copy
 * through their async-start. 1 when reported. */
static int size_call_site(checker *c, instr *in, const name_table *nt, const uint8_t *ok)
{
	/* op-specific: each op's own callee slots */
	switch (in->op) {
	case OP_CALL:
		size_slot(c, in, instr_called_slot(in, ATTR_TO_APPLY, 0), 0, in->nops);
		break;
	case OP_ASYNC_START: {
		computation *f = instr_called(in, ATTR_CALLS, 0);
		c->async_deferred = NULL;
		if (f && f->params && in->nops < f->nparams) {
			if (size_async_chain(c, in, f, nt, ok))
				return 1;
		} else {
			size_slot(c, in, instr_called_slot(in, ATTR_CALLS, 0), 0, in->nops);
		}
		break;
	}
	case OP_ASYNC_UPDATE:
		return size_async_update(c, in, nt, ok);
	case OP_FUSION:
		size_slot(c, in, instr_called_slot(in, ATTR_CALLS, 0), 0, in->nops);
		break;
	case OP_WHILE:
		size_slot(c, in, instr_called_slot(in, ATTR_CONDITION, 0), 0, 1);
		size_slot(c, in, instr_called_slot(in, ATTR_BODY, 0), 0, 1);
		break;
	case OP_CONDITIONAL: {
		size_slot(c, in, instr_called_slot(in, ATTR_TRUE_COMPUTATION, 0), 1, 1);
		size_slot(c, in, instr_called_slot(in, ATTR_FALSE_COMPUTATION, 0), 2, 1);
		const attr *bc = instr_attr(in, ATTR_BRANCH_COMPUTATIONS);
		for (int j = 0; bc && bc->kind == AK_COMPS && j < bc->u.words.n; j++)
			size_slot(c, in, instr_called_slot(in, ATTR_BRANCH_COMPUTATIONS, j), 1 + j, 1);
		break;
	}
	default:
		return 0;
	}
	in->callee = in->ncalled > 0 ? in->called[0] : NULL;
	return 0;
}

/* allow_mixed_precision, a tuple result: a declared tuple of arrays whose
 * elements differ from the inferred ones only in float types stands (XLA's
 * CompatibleIgnoringFpPrecision, element by element); the inferred tuple is
 * kept in in->mixed_tuple (the run computes it, then converts) and inf
 * takes the declared types. Returns 1 when so. */
static int mixed_tuple(checker *c, instr *in, shape *inf)
{
	const shape *d = in->shape;
	if (!shape_is_tuple(inf) || !shape_is_tuple(d) || d->ntuple != inf->ntuple)
		return 0;
	int differ = 0;
	for (int i = 0; i < d->ntuple; i++) {
		const shape *de = &d->tuple[i], *ie = &inf->tuple[i];
		if (!shape_is_array(de) || !shape_is_array(ie) || !shape_same_dims(de, ie) ||
		    !etype_same_ignoring_fp(de->type, ie->type) || de->is_buffer || ie->is_buffer)
			return 0;
		differ |= de->type != ie->type;
	}
	if (!differ)
		return 0;
	shape *el = arena_array(&c->m->arena, (size_t)inf->ntuple, sizeof *el);
	const shape *kept = module_intern_shape(c->m, inf);
	if (!el || !kept) {
		c->oom = 1;
		return 0;
	}
	for (int i = 0; i < inf->ntuple; i++) {
		el[i] = inf->tuple[i];
		el[i].type = d->tuple[i].type;
	}
	in->mixed_tuple = kept;
	inf->tuple = el;
	c->nmixed++;
	return 1;
}

static void check_instr(checker *c, instr *in, const name_table *nt, uint8_t *ok)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	int good = resolve_operands(c, in, nt, ok);
	loc sat = shape_loc(c, in);

	if (!resolve_called(c, in))
		good = 0;
	int arity = opcode_arity(in->op);
	if (arity >= 0 && in->nops != arity) {
		ck_error(c, in->op_at, "%s expects %d operands, but has %d operands", opcode_name(in->op),
			 arity, in->nops);
		good = 0;
	}
	if (!opcode_is_evaluated(in->op) && c->report_unsupported)
		ck_unsupported(c, in->op_at, "unsupported opcode '%s'", opcode_name(in->op));
	int entry_param = in->op == OP_PARAMETER && c->cur_comp && c->cur_comp == c->m->entry;
	/* a parameter may be `<=N` (its argument gives the size) or `?` (the
	 * entry's: its input's size; a callee's: its call site's, size_call_site) */
	int root = entry_root_tuple(c, in);
	int defer = defers_unbounded(c, in);
	int dynamic = entry_param || in->op == OP_PARAMETER
			      ? 3
			      : ((makes_dynamic(in) || root) ? 1 : 0) | ((takes_unbounded(in) || root || defer || c->input_shapes) ? 2 : 0);
	if (in->has_shape && !usable_shape(c, in->shape, sat, entry_param, dynamic))
		good = 0;
	written_operand_shapes(c, in, ok);
	dynamic_operands(c, in);
	if (!good)
		return;
	if (defer) {
		/* the written result stands until a run sizes the `?` */
		if (!set_result_ex(c, in, in->shape, 0))
			ok[in->position] = 1;
		return;
	}
	if (c->input_shapes && (in->ncalled > 0 || in->op == OP_ASYNC_UPDATE) && size_call_site(c, in, nt, ok))
		return;
	if (c->oom)
		return;

	shape inf;
	memset(&inf, 0, sizeof inf);
	c->keep_layout = 0;
	in->mixed_type = ET_INVALID;
	in->mixed_tuple = NULL;
	int err = infer_rules[in->op](c, in, &inf);
	if (err || c->oom)
		return;
	dynamic_result(c, in, &inf);
	sized_parameter(c, in, &inf);
	if (in->has_shape) {
		int same = shape_is_tuple(&inf) || shape_is_tuple(in->shape)
				   ? shape_compatible_bounds(in->shape, &inf)
				   : in->shape->type == inf.type && in->shape->is_buffer == inf.is_buffer &&
					     shape_same_dims(in->shape, &inf);
		if (!same && c->mixed && shape_is_array(&inf) && shape_is_array(in->shape) &&
		    etype_get_kind(inf.type) == KIND_FLOAT && etype_get_kind(in->shape->type) == KIND_FLOAT &&
		    shape_same_dims(in->shape, &inf)) {
			/* allow_mixed_precision: the declared float type stands
			 * (XLA's CompatibleIgnoringFpPrecision) */
			in->mixed_type = inf.type;
			inf.type = in->shape->type;
			c->nmixed++;
			same = 1;
		}
		if (!same && c->mixed && mixed_tuple(c, in, &inf))
			same = 1;
		if (!same && !shape_is_tuple(&inf) &&
		    (makes_dynamic(in) || shape_has_unbounded(&inf) || shape_has_unbounded(in->shape)))
			same = dynamic_kinds(in, &inf);
		if (!same) {
			if (!declared_root_in_place(c, in, &inf))
				ck_error(c, sat, "declared shape %s does not match the inferred shape %s",
					 ck_shape(a, in->shape), ck_shape(b, &inf));
			return;
		}
	}
	if (buffers_refused(c, in, &inf))
		return;
	if (c->input_shapes && (in->op != OP_PARAMETER || c->cur_comp != c->m->entry) && shape_has_unbounded(&inf)) {
		/* a run: every `?` has its input's size by now, but this one
		 * (a custom-call's, a called computation's parameter) */
		ck_unsupported(c, sat, "unsupported dynamic dimension in %s: no input's size decides its `?`",
			       ck_shape(a, &inf));
		return;
	}
	if (set_result_ex(c, in, &inf, c->keep_layout))
		return;
	if (in->op == OP_CONSTANT && constant(c, in))
		return;
	ok[in->position] = 1;
}

/* parameter(N): dense from 0, no number twice; fills comp->params from
 * the parameters found (`count` of them, in source order). */
static void collect_parameters(checker *c, computation *comp, instr *const *found, int count)
{
	comp->nparams = 0;
	comp->params = NULL;
	if (count == 0)
		return;
	instr **params = arena_array(&c->m->arena, (size_t)count, sizeof *params);
	if (!params) {
		c->oom = 1;
		return;
	}
	/* Numbers used twice are reported once; the others must be 0..distinct-1. */
	int distinct = count;
	for (int i = 0; i < count; i++) {
		instr *in = found[i];
		int64_t num = in->parameter_number;
		if (num < 0) {
			ck_error(c, in->op_at, "parameter number must be >= 0");
			distinct--;
		} else if (num < count) {
			if (params[num]) {
				ck_error(c, in->op_at, "parameter number %lld is used twice", (long long)num);
				distinct--;
			} else {
				params[num] = in;
			}
		}
	}
	for (int k = 0; k < distinct; k++) {
		if (!params[k]) {
			ck_error(c, comp->name_at, "parameter numbers must be dense from 0: parameter %d is missing",
				 k);
			break;
		}
	}
	comp->params = params;
	comp->nparams = count;
}

static int comp_index(const checker *c, const computation *comp)
{
	for (int i = 0; i < c->m->ncomps; i++)
		if (c->m->comps[i] == comp)
			return i;
	return -1;
}

/* Checks one computation (its callees first, through ensure_checked) and
 * records in comp_state whether its root and parameters are usable. */
int ck_check_computation(checker *c, computation *comp)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	name_table nt = { 0, NULL };
	instr **params = NULL;
	int nparams = 0, params_cap = 0;
	int idx = comp_index(c, comp), usable = 0;
	if (idx >= 0 && c->comp_state)
		c->comp_state[idx] = 1;
	uint8_t *ok = hloi_calloc(comp->ninstrs > 0 ? (size_t)comp->ninstrs : 1, 1);
	if (!ok || nt_init(&nt, comp->ninstrs)) {
		c->oom = 1;
		goto cleanup;
	}
	/* names into the table, positions, and the parameters, in one walk */
	instr *const *v = comp->instrs;
	int n = comp->ninstrs;
	size_t hs[INS_AHEAD / 4];
	for (int i = 0; i < n && i < INS_AHEAD / 4; i++)
		hs[i] = nt_hash_prefetch(&nt, v[i]->name);
	for (int i = 0; i < n; i++) {
		if (i + INS_AHEAD < n) {
			PREFETCH(v[i + INS_AHEAD]);
			PREFETCH(&v[i + INS_AHEAD]->position);
		}
		if (i + INS_AHEAD / 2 < n)
			PREFETCH(v[i + INS_AHEAD / 2]->name);
		size_t h = hs[i % (INS_AHEAD / 4)];
		if (i + INS_AHEAD / 4 < n)
			hs[i % (INS_AHEAD / 4)] = nt_hash_prefetch(&nt, v[i + INS_AHEAD / 4]->name);
		instr *in = v[i];
		in->position = i;
		if (in->op == OP_PARAMETER) {
			if (nparams == params_cap) {
				int cap = params_cap ? 2 * params_cap : 16;
				instr **np = hloi_realloc(params, (size_t)cap * sizeof *np);
				if (!np) {
					c->oom = 1;
					goto cleanup;
				}
				params = np;
				params_cap = cap;
			}
			params[nparams++] = in;
		}
		instr *prev = nt_find_hashed(&nt, in->name, h);
		if (prev) {
			ck_error(c, in->name_at, "instruction already exists: %s", in->name);
			ck_note(c, prev->name_at, "previous definition of '%s' is here", prev->name);
		} else {
			nt_put(&nt, in, h);
		}
	}
	const computation *outer_comp = c->cur_comp;
	const instr *outer_instr = c->cur_instr;
	c->cur_comp = comp;
	c->cur_instr = NULL;
	size_t before = c->nerrors + c->nunsupported;
	collect_parameters(c, comp, params, nparams);
	for (int i = 0; i < comp->ninstrs && !c->oom; i++) {
		prefetch_operands(&nt, v, n, i);
		c->cur_instr = comp->instrs[i];
		check_instr(c, comp->instrs[i], &nt, ok);
	}
	c->cur_instr = NULL;

	/* a computation's `<=N` result goes to its caller, whose result the
	 * operand rules of its users then see (dynamic_operands) */
	instr *root = comp->root;
	usable = root && ok[root->position] && c->nerrors + c->nunsupported == before;
	for (int k = 0; usable && k < comp->nparams; k++)
		usable = comp->params[k] && ok[comp->params[k]->position];
	if (comp->has_signature && root && ok[root->position] &&
	    !shape_compatible_bounds(&comp->sig_result, root->result)) {
		loc at = comp->sig_at.end > comp->sig_at.start ? comp->sig_at : comp->name_at;
		ck_error(c, at,
			 "Shape of computation %s, %s, is not compatible with that of its root instruction %s, %s",
			 comp->name, ck_shape(a, &comp->sig_result), root->name, ck_shape(b, root->result));
		usable = 0;
	}
	c->cur_comp = outer_comp;
	c->cur_instr = outer_instr;
cleanup:
	if (idx >= 0 && c->comp_state)
		c->comp_state[idx] = usable ? 2 : 3;
	hloi_free(nt.slots);
	hloi_free(ok);
	hloi_free(params);
	return usable;
}

/* Where a sized copy of a computation failed: the call site and the
 * parameter shapes it was checked with. */
static void sized_note(checker *c, const computation *cp, loc at)
{
	strbuf b = STRBUF_INIT;
	for (int k = 0; k < cp->sized_from->nparams; k++) {
		sb_puts(&b, k ? ", " : "(");
		shape_print(&b, cp->sized_args[k], 0);
	}
	sb_putc(&b, ')');
	if (b.oom)
		c->oom = 1;
	else
		ck_note(c, at, "computation %s checked with the sizes this call gives its parameters: %s", cp->name,
			sb_str(&b));
	sb_free(&b);
}

/* Checks a callee before its caller; 0 when its root is usable. */
int ck_ensure_checked(checker *c, instr *in, computation *callee, loc at)
{
	(void)in;
	if (callee->sized_from) {
		/* a copy sized for its call sites: checked once per check */
		if (callee->sized_epoch != c->m->check_epoch) {
			if (c->depth >= 64) {
				ck_unsupported(c, at, "unsupported nesting of calls deeper than 64");
				return 1;
			}
			callee->sized_epoch = c->m->check_epoch;
			callee->sized_state = 1;
			c->depth++;
			int usable = ck_check_computation(c, callee);
			c->depth--;
			callee->sized_state = usable ? 2 : 3;
			if (!usable)
				sized_note(c, callee, at);
		}
		return callee->sized_state == 2 ? 0 : 1;
	}
	int idx = -1;
	for (int i = 0; i < c->m->ncomps; i++)
		if (c->m->comps[i] == callee)
			idx = i;
	if (idx < 0 || !c->comp_state)
		return 1;
	if (c->comp_state[idx] == 1) {
		ck_error(c, at, "computation %s calls itself (recursion is not supported)", callee->name);
		return 1;
	}
	if (c->comp_state[idx] == 0) {
		if (c->depth >= 64) {
			ck_unsupported(c, at, "unsupported nesting of calls deeper than 64");
			return 1;
		}
		c->depth++;
		ck_check_computation(c, callee);
		c->depth--;
	}
	return c->comp_state[idx] == 2 ? 0 : 1;
}

/* --- input_output_alias (doc/spec.md §3.3: PyTorch's in-place rule) --------------- */

static void index_text(strbuf *b, const int64_t *v, int n)
{
	sb_putc(b, '{');
	for (int i = 0; i < n; i++)
		sb_printf(b, i ? ",%lld" : "%lld", (long long)v[i]);
	sb_putc(b, '}');
}

/* The subshape at `index` of s, or NULL. */
static const shape *subshape(const shape *s, const int64_t *index, int n)
{
	for (int i = 0; i < n; i++) {
		if (!shape_is_tuple(s) || index[i] < 0 || index[i] >= s->ntuple)
			return NULL;
		s = &s->tuple[index[i]];
	}
	return s;
}

static void alias_index_error(checker *c, const alias_entry *al, const char *what, const int64_t *index, int n,
			      const shape *s)
{
	char a[CK_SHAPE_TEXT];
	strbuf m = STRBUF_INIT;
	sb_printf(&m, "input_output_alias: %s index ", what);
	index_text(&m, index, n);
	sb_printf(&m, " does not exist in %s", ck_shape(a, s));
	if (m.oom)
		c->oom = 1;
	else
		ck_error(c, al->at, "%s", sb_str(&m));
	sb_free(&m);
}

/* PyTorch's in-place error: the broadcast result `out` has other dims than
 * the destination `dst` (with its expand message, the first difference
 * from the trailing end). */
static void in_place_dims_error(checker *c, const instr *root, const shape *dst, const shape *out)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	strbuf m = STRBUF_INIT;
	sb_printf(&m, "output with shape %s doesn't match the broadcast shape %s", ck_shape(a, dst), ck_shape(b, out));
	for (int i = 1; i <= out->rank && i <= dst->rank; i++) {
		int64_t want = out->dims[out->rank - i], have = dst->dims[dst->rank - i];
		if (want != have) {
			sb_printf(&m, ": the expanded size of the tensor (%lld) must match the existing size (%lld) at non-singleton dimension %d",
				  (long long)want, (long long)have, out->rank - i);
			break;
		}
	}
	if (m.oom)
		c->oom = 1;
	else
		ck_error(c, root->op_at, "%s", sb_str(&m));
	sb_free(&m);
}

/* The entry's root declared with its destination's shape (as a program
 * written for PyTorch's in-place rule declares it) while broadcasting gives
 * another: the in-place error, not only "declared shape does not match".
 * Returns whether it was reported. */
static int declared_root_in_place(checker *c, const instr *in, const shape *inf)
{
	const computation *comp = c->cur_comp;
	if (!comp || comp != c->m->entry || comp->root != in || shape_is_tuple(inf))
		return 0;
	for (int k = 0; k < c->m->nalias; k++) {
		const alias_entry *al = &c->m->alias[k];
		if (al->n_output_index != 0 || al->n_parameter_index != 0)
			continue;
		if (al->parameter_number < 0 || al->parameter_number >= comp->nparams)
			continue;
		const instr *param = comp->params[al->parameter_number];
		if (!param || !param->has_shape || shape_is_tuple(param->shape) || param->shape->type != in->shape->type ||
		    !shape_same_dims(param->shape, in->shape) || shape_same_dims(param->shape, inf))
			continue;
		in_place_dims_error(c, in, param->shape, inf);
		ck_note(c, al->at, "the result is written into parameter %lld's buffer (input_output_alias)",
			(long long)al->parameter_number);
		return 1;
	}
	return 0;
}

/* The result (or the aliased part of it) must keep the parameter's element
 * type, dims and layout: broadcasting may not change the destination. */
static void check_alias(checker *c, const alias_entry *al)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	computation *comp = c->m->entry;
	instr *root = comp->root;
	if (al->parameter_number < 0 || al->parameter_number >= comp->nparams) {
		ck_error(c, al->at, "input_output_alias: parameter %lld does not exist (the entry computation has %d parameter%s)",
			 (long long)al->parameter_number, comp->nparams, comp->nparams == 1 ? "" : "s");
		return;
	}
	instr *param = comp->params[al->parameter_number];
	const shape *out = subshape(root->result, al->output_index, al->n_output_index);
	if (!out) {
		alias_index_error(c, al, "output", al->output_index, al->n_output_index, root->result);
		return;
	}
	const shape *dst = subshape(param->result, al->parameter_index, al->n_parameter_index);
	if (!dst) {
		alias_index_error(c, al, "parameter", al->parameter_index, al->n_parameter_index, param->result);
		return;
	}
	int err = 1;
	if (shape_is_tuple(out) || shape_is_tuple(dst)) {
		if (!shape_compatible(out, dst))
			ck_error(c, root->op_at, "output with shape %s doesn't match the result shape %s",
				 ck_shape(a, dst), ck_shape(b, out));
		else
			err = 0;
	} else if (out->type != dst->type) {
		ck_error(c, root->op_at, "result type %s can't be cast to the desired output type %s",
			 etype_name(out->type), etype_name(dst->type));
	} else if (!shape_same_dims(out, dst)) {
		in_place_dims_error(c, root, dst, out);
	} else {
		/* A result without a written layout takes the destination's. */
		if (al->n_output_index == 0 && !(root->has_shape && root->shape->has_layout)) {
			shape r = *root->result;
			r.layout = dst->layout;
			if (!(out = root->result = module_intern_shape(c->m, &r))) {
				c->oom = 1;
				return;
			}
		}
		if (!layout_equal(&out->layout, &dst->layout)) {
			strbuf x = STRBUF_INIT, y = STRBUF_INIT;
			shape_print(&x, dst, 1);
			shape_print(&y, out, 1);
			if (x.oom || y.oom)
				c->oom = 1;
			else
				ck_error(c, root->op_at, "output with layout %s doesn't match the result layout %s",
					 sb_str(&x), sb_str(&y));
			sb_free(&x);
			sb_free(&y);
		} else {
			err = 0;
		}
	}
	if (err)
		ck_note(c, al->at, "the result is written into parameter %lld's buffer (input_output_alias)",
			(long long)al->parameter_number);
}

/* --- participants --------------------------------------------------------- */

/* The module's replica_count or num_partitions header attribute (1 when
 * absent), and where it was written. */
static int64_t module_count(const module *m, const char *name, loc *at)
{
	for (int i = 0; i < m->nheader_attrs; i++) {
		const raw_attr *r = &m->header_attrs[i];
		if (strcmp(r->name, name) != 0)
			continue;
		char *end = NULL;
		long long v = strtoll(r->value, &end, 10);
		if (at)
			*at = r->at;
		return end && end != r->value ? (int64_t)v : 1;
	}
	return 1;
}

int ck_participants(checker *c, const hloi_check_options *opts)
{
	static const char *const names[] = { "replica_count", "num_partitions" };
	int64_t n[2];
	for (int k = 0; k < 2; k++) {
		loc at = { 0, 0 };
		n[k] = module_count(c->m, names[k], &at);
		if (n[k] < 1) {
			ck_error(c, at, "%s=%lld: a module runs on at least one %s", names[k], (long long)n[k],
				 k ? "partition" : "replica");
			return 1;
		}
	}
	if (opts && opts->version >= 3 && opts->replicas > 0)
		n[0] = opts->replicas;
	if (opts && opts->version >= 3 && opts->partitions > 0)
		n[1] = opts->partitions;
	c->replicas = n[0];
	c->partitions = n[1];
	return 0;
}

static hloi_status check_with(module *m, hloi_context *ctx, const hloi_check_options *opts,
			      const shape *const *inputs, size_t ninputs);

hloi_status check_module(module *m, hloi_context *ctx, const hloi_check_options *opts)
{
	/* kept for a run that sizes `?` dimensions; only the fields of the
	 * caller's version are read */
	hloi_check_options keep = HLOI_CHECK_OPTIONS_INIT;
	if (opts) {
		keep.strict = opts->strict;
		keep.broadcast_mode = opts->broadcast_mode;
		if (opts->version >= 2)
			keep.shapes_only = opts->shapes_only;
		if (opts->version >= 3) {
			keep.replicas = opts->replicas;
			keep.partitions = opts->partitions;
		}
		if (opts->version >= 4)
			keep.allow_mixed_precision = opts->allow_mixed_precision;
	}
	m->check_opts = keep;
	m->unbounded = 0;
	hloi_status st = check_with(m, ctx, opts, NULL, 0);
	for (int i = 0; st == HLOI_OK && i < m->ncomps && !m->unbounded; i++)
		for (int k = 0; k < m->comps[i]->ninstrs && !m->unbounded; k++)
			m->unbounded = m->comps[i]->instrs[k]->result && shape_has_unbounded(m->comps[i]->instrs[k]->result);
	return st;
}

hloi_status check_module_sized(module *m, hloi_context *ctx, const shape *const *inputs, size_t ninputs)
{
	return check_with(m, ctx, &m->check_opts, inputs, ninputs);
}

static hloi_status check_with(module *m, hloi_context *ctx, const hloi_check_options *opts,
			      const shape *const *inputs, size_t ninputs)
{
	checker c;
	memset(&c, 0, sizeof c);
	c.input_shapes = inputs;
	c.ninputs = ninputs;
	c.m = m;
	c.ctx = ctx;
	c.text = m->src >= 0 ? diag_source(ctx, m->src) : NULL;
	c.strict = opts ? opts->strict : 0;
	c.mixed = opts && opts->version >= 4 && opts->allow_mixed_precision;
	c.report_unsupported = !(opts && opts->version >= 2 && opts->shapes_only);
	c.mode = opts ? opts->broadcast_mode : HLOI_BROADCAST_DEFAULT;
	if (c.mode == HLOI_BROADCAST_DEFAULT)
		c.mode = m->broadcast_mode;
	if (c.mode == HLOI_BROADCAST_DEFAULT)
		c.mode = HLOI_BROADCAST_XLA;
	m->checked = 0;
	m->participant_dependent = 0;
	if (ck_participants(&c, opts))
		c.nerrors++;

	if (!m->entry) {
		diag_error_where(ctx, NULL, "the module has no entry computation");
		c.nerrors++;
	}
	c.comp_state = hloi_calloc(m->ncomps > 0 ? (size_t)m->ncomps : 1, 1);
	if (!c.comp_state)
		return HLOI_ENOMEM;
	m->check_epoch++;
	/* a run checks what it runs sized: the entry and, through it, its
	 * callees (sized copies in place of those with `?` parameters); the
	 * computations it does not reach keep their unsized check */
	for (int i = 0; inputs && i < m->ncomps && !c.oom; i++)
		if (m->comps[i] == m->entry && c.comp_state[i] == 0)
			ck_check_computation(&c, m->comps[i]);
	c.input_shapes = NULL;
	for (int i = 0; i < m->ncomps && !c.oom; i++)
		if (c.comp_state[i] == 0)
			ck_check_computation(&c, m->comps[i]);
	c.input_shapes = inputs;
	/* The aliases, once the entry's root is known. */
	int entry_ok = 0;
	for (int i = 0; i < m->ncomps; i++)
		if (m->comps[i] == m->entry)
			entry_ok = c.comp_state[i] == 2;
	for (int i = 0; entry_ok && i < m->nalias && !c.oom; i++)
		check_alias(&c, &m->alias[i]);
	hloi_free(c.comp_state);
	c.comp_state = NULL;
	c.nerrors += check_strict_attrs(m, ctx, opts);
	if (c.oom)
		return HLOI_ENOMEM;
	if (c.nerrors)
		return HLOI_ETYPE;
	if (c.nunsupported)
		return HLOI_EUNSUPPORTED;
	if (!c.report_unsupported)
		return HLOI_OK;  /* shapes are inferred, but the module is not runnable */
	m->checked = 1;
	m->checked_mode = c.mode;
	m->replicas = c.replicas;
	m->partitions = c.partitions;
	m->constant_bytes = 0;
	for (int i = 0; i < m->ncomps; i++)
		for (int k = 0; k < m->comps[i]->ninstrs; k++) {
			const instr *in = m->comps[i]->instrs[k];
			if (in->op == OP_CONSTANT)
				m->constant_bytes += literal_buffer_bytes(in->value);
		}
	return HLOI_OK;
}
