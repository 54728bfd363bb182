/* Deterministic pseudo-random inputs (--random-inputs): one splitmix64 stream
 * per run, drawn parameter by parameter, each in logical row-major order, so
 * the values do not depend on layouts (tuple parameters: element by element).
 * Floats are multiples of 1/8 in [-8, 8) (the f8/f4 types: that value
 * rounded; f8e8m0fnu, which has no zero or negatives: a power of two from
 * 2^-8 to 2^7), signed ints in [-8, 8], unsigned in [0, 16] (the sub-byte
 * ones: reduced modulo their range), pred true/false, complex values two
 * such floats. A scalar integer parameter that gives a dimension's size
 * (an operand of set-dimension-size, dynamic-reshape or SliceToDynamic
 * after the first) is drawn within what every such use allows: [0, N] for
 * a `<=N` dimension, the dimension itself for a static one (a size past
 * the bound is undefined in XLA). The metadata of a sparse convolution
 * operand (a parameter that is the second element of a tuple a
 * convolution's sparsity_config makes sparse) is drawn valid: the values of
 * each block at distinct positions in [0, block). */
#include <string.h>

#include "core/float8.h"
#include "core/half.h"
#include "core/index.h"
#include "eval/base/limits.h"
#include "eval/base/random.h"
#include "eval/fast/fast.h"
#include "util/alloc.h"

#define GOLDEN 0x9E3779B97F4A7C15ull

/* splitmix64's output for the state z: the stream's k-th draw (from 1) is
 * mix(seed + k * GOLDEN), so any draw can be made without the ones before
 * it, on any thread. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *state)
{
	return mix(*state += GOLDEN);
}

static void put(etype t, void *p, uint64_t r)
{
	float f = (float)((int)(r % 128) - 64) / 8.0f;
	int64_t s = (int64_t)(r % 17) - 8;
	uint64_t u = r % 17;
	switch (t) {
	case ET_PRED: { uint8_t v = (uint8_t)(r & 1); memcpy(p, &v, 1); break; }
	case ET_S8: { int8_t v = (int8_t)s; memcpy(p, &v, sizeof v); break; }
	case ET_S16: { int16_t v = (int16_t)s; memcpy(p, &v, sizeof v); break; }
	case ET_S32: { int32_t v = (int32_t)s; memcpy(p, &v, sizeof v); break; }
	case ET_S64: { memcpy(p, &s, sizeof s); break; }
	case ET_U8: { uint8_t v = (uint8_t)u; memcpy(p, &v, sizeof v); break; }
	case ET_U16: { uint16_t v = (uint16_t)u; memcpy(p, &v, sizeof v); break; }
	case ET_U32: { uint32_t v = (uint32_t)u; memcpy(p, &v, sizeof v); break; }
	case ET_U64: { memcpy(p, &u, sizeof u); break; }
	case ET_F16: { uint16_t v = f32_to_f16(f); memcpy(p, &v, sizeof v); break; }
	case ET_BF16: { uint16_t v = f32_to_bf16(f); memcpy(p, &v, sizeof v); break; }
	case ET_F32: { memcpy(p, &f, sizeof f); break; }
	case ET_F64: { double v = f; memcpy(p, &v, sizeof v); break; }
	case ET_S1: case ET_S2: case ET_S4: {
		int bits = etype_bit_width(t);
		int8_t v = (int8_t)((int64_t)(r % ((uint64_t)1 << bits)) - ((int64_t)1 << (bits - 1)));
		memcpy(p, &v, 1);
		break;
	}
	case ET_U1: case ET_U2: case ET_U4: {
		uint8_t v = (uint8_t)(r % ((uint64_t)1 << etype_bit_width(t)));
		memcpy(p, &v, 1);
		break;
	}
	case ET_F8E8M0FNU: {
		uint8_t v = (uint8_t)(127 - 8 + (int)(r % 16));
		memcpy(p, &v, 1);
		break;
	}
	case ET_C64: {
		float c[2] = { f, (float)((int)((r >> 32) % 128) - 64) / 8.0f };
		memcpy(p, c, sizeof c);
		break;
	}
	case ET_C128: {
		double c[2] = { f, (double)((int)((r >> 32) % 128) - 64) / 8.0 };
		memcpy(p, c, sizeof c);
		break;
	}
	default: {
		const f8_format *f8 = f8_format_of(t);
		if (f8)
			*(uint8_t *)p = f8_from_f32(f8, f);
		break;
	}
	}
}

/* A dense array in logical order, its draws after `state`: element i gets
 * the stream's draw i + 1 from there. */
typedef struct fill_job {
	unsigned char *data;
	etype type;
	size_t width;
	uint64_t state;
} fill_job;

static void fill_range(void *ctx, int64_t lo, int64_t hi)
{
	const fill_job *j = ctx;
	uint64_t z = j->state + (uint64_t)lo * GOLDEN;
	/* the common types written directly (put's values, without its switch) */
	switch (j->type) {
	case ET_F32: {
		float *p = (float *)(void *)j->data;
		for (int64_t i = lo; i < hi; i++)
			p[i] = (float)((int)(mix(z += GOLDEN) % 128) - 64) / 8.0f;
		return;
	}
	case ET_BF16: {
		/* multiples of 1/8 in [-8, 8): exact in bf16, its top 16 bits */
		uint16_t *p = (uint16_t *)(void *)j->data;
		for (int64_t i = lo; i < hi; i++) {
			float f = (float)((int)(mix(z += GOLDEN) % 128) - 64) / 8.0f;
			uint32_t b;
			memcpy(&b, &f, sizeof b);
			p[i] = (uint16_t)(b >> 16);
		}
		return;
	}
	default:
		for (int64_t i = lo; i < hi; i++)
			put(j->type, j->data + (size_t)i * j->width, mix(z += GOLDEN));
		return;
	}
}

/* Draws every element of lit in logical row-major order (tuples element by
 * element, depth first). A dense array in that order is drawn on the
 * machine's cores, with the same values. */
static void fill(hloi_literal *lit, uint64_t *state)
{
	const shape *s = &lit->shape;
	if (shape_is_tuple(s)) {
		for (size_t k = 0; k < lit->nelems; k++)
			fill(lit->elems[k], state);
		return;
	}
	int64_t elems, idx[HLOI_MAX_RANK] = { 0 };
	if (shape_element_count(s, &elems) || elems == 0 || !lit->data)
		return;
	if ((layout_is_default(s) || s->rank <= 1) && s->layout.n_padded == 0 && index_is_strided(s)) {
		/* memory order is logical order: no index conversion */
		fill_job j = { lit->data, s->type, (size_t)etype_byte_width(s->type), *state };
		eval_parallel(0, elems, (int64_t)1 << 16, fill_range, &j);
		*state += (uint64_t)elems * GOLDEN;
		return;
	}
	do
		put(s->type, literal_element(lit, idx), splitmix64(state));
	while (index_next(s->rank, s->dims, idx));
}

/* Narrows [*lo, *hi] to the sizes `p` may give where the entry computation
 * uses it as a dimension's size; 0 when it is not used so. */
static int size_range(const computation *comp, const instr *p, int64_t *lo, int64_t *hi)
{
	int used = 0;
	for (int i = 0; i < comp->ninstrs; i++) {
		const instr *in = comp->instrs[i];
		int sizes = in->op == OP_SET_DIMENSION_SIZE || in->op == OP_DYNAMIC_RESHAPE ||
			    (in->op == OP_CUSTOM_CALL && instr_text(in, ATTR_CUSTOM_CALL_TARGET) &&
			     custom_call_builtin(instr_text(in, ATTR_CUSTOM_CALL_TARGET)) == CC_SLICE_TO_DYNAMIC);
		if (!sizes || !shape_is_array(in->result))
			continue;
		for (int k = 1; k < in->nops; k++) {
			if (in->ops[k].def != p)
				continue;
			int64_t d = k - 1;
			if (in->op == OP_SET_DIMENSION_SIZE) {
				const int_list *dims = instr_ints(in, ATTR_DIMENSIONS);
				d = dims && dims->n > 0 ? dims->v[0] : -1;
			}
			if (d < 0 || d >= in->result->rank)
				continue;
			int64_t b = in->result->dims[d];
			int64_t l = in->result->dim_kind[d] == DIM_BOUNDED ? 0 : b;
			*lo = used && *lo > l ? *lo : l;
			*hi = used && *hi < b ? *hi : b;
			used = 1;
		}
	}
	return used;
}

/* The side of a sparsity_config whose metadata p is (the second element of
 * a tuple a convolution of comp takes as a sparse operand, or the operand
 * idx of one), or NULL. */
static const sparsity_side *metadata_use(const computation *comp, const instr *p)
{
	for (int j = 0; j < comp->ninstrs; j++) {
		const instr *c = comp->instrs[j];
		const attr *a = c->op == OP_CONVOLUTION ? instr_attr(c, ATTR_SPARSITY_CONFIG) : NULL;
		if (!a || a->kind != AK_SPARSITY)
			continue;
		for (int k = 0; k < 2 && k < c->nops; k++) {
			const sparsity_side *sd = &a->u.sp->side[k];
			const instr *t = c->ops[k].def;
			if (sd->present && sd->idx >= 0 ? sd->idx < c->nops && c->ops[sd->idx].def == p
							: sd->present && t->op == OP_TUPLE && t->nops == 2 && t->ops[1].def == p)
				return sd;
		}
	}
	return NULL;
}

/* Metadata for sd into lit (an integer array): value j of a block at
 * (r + j) % block, r drawn per block from the block's first index. */
static void fill_metadata(hloi_literal *lit, const sparsity_side *sd, uint64_t *state)
{
	const shape *s = &lit->shape;
	int64_t count, d = sd->dim;
	if (shape_element_count(s, &count) || count == 0 || !lit->data || sd->nnz <= 0 || sd->block < sd->nnz ||
	    d < 0 || d >= s->rank)
		return;
	uint64_t base = splitmix64(state);
	int w = etype_byte_width(s->type);
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	do {
		int64_t j = idx[d] % sd->nnz, first = 0;
		idx[d] -= j;
		for (int i = 0; i < s->rank; i++)
			first = first * s->dims[i] + idx[i];
		idx[d] += j;
		uint64_t z = base + (uint64_t)first * GOLDEN;
		uint64_t v = (splitmix64(&z) % (uint64_t)sd->block + (uint64_t)j) % (uint64_t)sd->block;
		void *p = literal_element(lit, idx);
		uint8_t v8 = (uint8_t)v;
		uint16_t v16 = (uint16_t)v;
		uint32_t v32 = (uint32_t)v;
		memcpy(p, w == 1 ? (void *)&v8 : w == 2 ? (void *)&v16 : w == 4 ? (void *)&v32 : (void *)&v,
		       (size_t)w);
	} while (index_next(s->rank, s->dims, idx));
}

/* Bytes of the buffers a value of shape s needs (tuples: their elements);
 * nonzero on overflow. */
static int value_bytes(const shape *s, uint64_t *total)
{
	if (shape_is_tuple(s)) {
		for (int i = 0; i < s->ntuple; i++)
			if (value_bytes(&s->tuple[i], total))
				return 1;
		return 0;
	}
	int64_t bytes;
	if (shape_byte_size(s, &bytes) || bytes < 0)
		return 1;
	if (*total > UINT64_MAX - (uint64_t)bytes)
		return 1;
	*total += (uint64_t)bytes;
	return 0;
}

/* The shape of a random input for parameter p: a `?` dimension as declared
 * gets the module's unbounded size (hloi_module_set_unbounded_size). */
static const shape *input_shape(const module *m, const instr *p, shape *tmp)
{
	if (!m->unbounded || !p->has_shape || !shape_is_array(p->shape) || !shape_has_unbounded(p->shape))
		return p->result;
	*tmp = *p->result;
	for (int d = 0; d < tmp->rank && d < p->shape->rank; d++)
		if (p->shape->dim_kind[d] == DIM_UNBOUNDED) {
			tmp->dims[d] = m->unbounded_size > 0 ? m->unbounded_size : HLOI_UNBOUNDED_SIZE_DEFAULT;
			tmp->dim_kind[d] = DIM_STATIC;
		}
	return tmp;
}

hloi_status eval_random_inputs(hloi_literal ***out, size_t *count, const module *m, hloi_context *ctx,
			       uint64_t seed)
{
	*out = NULL;
	*count = 0;
	const computation *comp = m->entry;
	if (!m->checked || !comp) {
		diag_error_where(ctx, NULL, "the module must be checked before inputs are made for it");
		return HLOI_EINVAL;
	}
	size_t n = (size_t)comp->nparams;
	/* Refuse before allocating anything: doc/spec.md §10's memory budget. */
	uint64_t need = 0, budget = eval_default_budget();
	int overflow = 0;
	shape tmp;
	for (size_t i = 0; i < n && !overflow; i++)
		overflow = value_bytes(input_shape(m, comp->params[i], &tmp), &need);
	if (overflow || need > budget) {
		if (overflow)
			diag_error_where(ctx, NULL, "memory budget exceeded: the random inputs need more than %llu bytes, budget %llu bytes",
					 (unsigned long long)UINT64_MAX, (unsigned long long)budget);
		else
			diag_error_where(ctx, NULL, "memory budget exceeded: the random inputs need %llu bytes, budget %llu bytes",
					 (unsigned long long)need, (unsigned long long)budget);
		return HLOI_ENOMEM;
	}
	hloi_literal **lits = hloi_calloc(n ? n : 1, sizeof *lits);
	if (!lits) {
		diag_error_where(ctx, NULL, "out of memory");
		return HLOI_ENOMEM;
	}
	uint64_t state = seed;
	for (size_t i = 0; i < n; i++) {
		const shape *s = input_shape(m, comp->params[i], &tmp);
		hloi_status st = literal_create(&lits[i], s);
		if (st != HLOI_OK) {
			int64_t bytes = 0;
			shape_byte_size(s, &bytes);
			diag_error_where(ctx, NULL, "cannot allocate input %zu for parameter '%s' (%lld bytes)", i,
					 comp->params[i]->name, (long long)bytes);
			for (size_t k = 0; k < i; k++)
				literal_destroy(lits[k]);
			hloi_free(lits);
			return st;
		}
		int64_t lo = 0, hi = 0;
		const shape *ps = comp->params[i]->result;
		if (shape_is_array(ps) && ps->rank == 0 && (ps->type == ET_S32 || ps->type == ET_S64) && lits[i]->data &&
		    size_range(comp, comp->params[i], &lo, &hi) && lo <= hi) {
			/* a dimension's size: within what its uses allow */
			int64_t v = lo + (int64_t)(splitmix64(&state) % (uint64_t)(hi - lo + 1));
			if (ps->type == ET_S32) {
				int32_t v32 = (int32_t)v;
				memcpy(lits[i]->data, &v32, sizeof v32);
			} else {
				memcpy(lits[i]->data, &v, sizeof v);
			}
			continue;
		}
		const sparsity_side *sd = shape_is_array(ps) && etype_is_integer(ps->type) && ps->rank > 0
						  ? metadata_use(comp, comp->params[i])
						  : NULL;
		if (sd)
			fill_metadata(lits[i], sd, &state);
		else
			fill(lits[i], &state);
	}
	*out = lits;
	*count = n;
	return HLOI_OK;
}

hloi_status eval_random_literal(hloi_literal **out, hloi_context *ctx, const shape *s, uint64_t seed)
{
	*out = NULL;
	uint64_t need = 0, budget = eval_default_budget();
	if (value_bytes(s, &need) || need > budget) {
		diag_error_where(ctx, NULL, "memory budget exceeded: a random value of this shape needs more than %llu bytes",
				 (unsigned long long)budget);
		return HLOI_ENOMEM;
	}
	hloi_status st = literal_create(out, s);
	if (st != HLOI_OK) {
		diag_error_where(ctx, NULL, "cannot allocate a random value (%llu bytes)", (unsigned long long)need);
		return st;
	}
	uint64_t state = seed;
	fill(*out, &state);
	return HLOI_OK;
}

/* Replaces each elided array in `lit` (itself, or the elements of a tuple
 * with an elided element, at any depth) by random values; the written
 * elements keep theirs. Leaf j of a tuple (depth first) draws the stream
 * seed ^ (0x9E3779B97F4A7C15 * (j + 1)). */
static hloi_status fill_elided_rec(hloi_literal **slot, hloi_context *ctx, uint64_t seed, uint64_t *leaf,
				   int top)
{
	hloi_literal *lit = *slot;
	if (!shape_is_tuple(&lit->shape)) {
		uint64_t j = (*leaf)++;
		if (!lit->elided)
			return HLOI_OK;
		hloi_literal *r = NULL;
		hloi_status st = eval_random_literal(&r, ctx, &lit->shape,
						     top ? seed : seed ^ (GOLDEN * (j + 1)));
		if (st != HLOI_OK)
			return st;
		literal_destroy(lit);
		*slot = r;
		return HLOI_OK;
	}
	for (size_t i = 0; i < lit->nelems; i++) {
		hloi_status st = fill_elided_rec(&lit->elems[i], ctx, seed, leaf, 0);
		if (st != HLOI_OK)
			return st;
		lit->tuple_shapes[i] = lit->elems[i]->shape;
	}
	lit->elided = 0;
	return HLOI_OK;
}

/* Constant k of the module (in module order: computations, then
 * instructions) draws its own stream, seed ^ (0xD1B54A32D192ED03 * (k + 1)),
 * so a constant's values do not depend on the parameters or on the other
 * constants. */
hloi_status eval_fill_elided_constants(module *m, hloi_context *ctx, uint64_t seed, size_t *filled)
{
	*filled = 0;
	if (!m->checked) {
		diag_error_where(ctx, NULL, "the module must be checked before its constants are filled");
		return HLOI_EINVAL;
	}
	uint64_t k = 0;
	for (int c = 0; c < m->ncomps; c++)
		for (int i = 0; i < m->comps[c]->ninstrs; i++) {
			instr *in = m->comps[c]->instrs[i];
			if (in->op != OP_CONSTANT)
				continue;
			k++;
			hloi_literal *old = in->value;
			if (!old || !old->elided)
				continue;
			uint64_t need = 0, budget = eval_default_budget();
			if (value_bytes(in->result, &need) || need > budget) {
				diag_error_where(ctx, NULL,
						 "memory budget exceeded: random values for the elided constant '%s' need more than %llu bytes",
						 in->name, (unsigned long long)budget);
				return HLOI_ENOMEM;
			}
			/* the module owns its constants' values */
			int slot = -1;
			for (int v = 0; v < m->nvalues && slot < 0; v++)
				if (m->values[v] == old)
					slot = v;
			if (slot < 0) {
				diag_error_where(ctx, NULL, "constant '%s' is not owned by its module", in->name);
				return HLOI_EINVAL;
			}
			uint64_t before = literal_buffer_bytes(old), leaf = 0;
			hloi_status st = fill_elided_rec(&m->values[slot], ctx, seed ^ (0xD1B54A32D192ED03ull * k), &leaf, 1);
			in->value = m->values[slot];
			m->constant_bytes += literal_buffer_bytes(in->value) - before;
			if (st != HLOI_OK)
				return st;
			(*filled)++;
		}
	return HLOI_OK;
}
