/* Kernels of the data-movement ops: slice, concatenate, pad, reverse, shuffle,
 * dynamic-slice, dynamic-update-slice, bitcast, bitcast-convert between
 * element types of different widths, get-dimension-size and opt-barrier (XLA's operation semantics; the clamping of dynamic start
 * indices as XLA's evaluator does it).
 *
 * Every op is a copy of strided boxes of elements: the fast engine hands
 * them to fast_copy (eval/fast/exec.c: merged dimensions, tiles where the layouts
 * disagree, threads), the reference engine walks every result element
 * through index conversion. Bits are moved, never values. */
#include "eval/kernels/movement.h"

#include <string.h>

#include "core/index.h"
#include "eval/fast/fast.h"
#include "eval/scalar/scalar.h"

/* --- shared helpers (eval/kernels/movement.h) ----------------------------------------- */

int64_t mv_read_index(etype t, const void *p)
{
	switch (t) {
	case ET_S8: case ET_S16: case ET_S32: case ET_S64:
	case ET_U8: case ET_U16: case ET_U32: case ET_U64:
		return etype_read_int(t, p);
	default: return sc_read(t, p).i;
	}
}

void mv_strides(const shape *s, int64_t *st)
{
	index_strides(s, st);
}

void mv_copy_box(char *dst, const int64_t *ds, const char *src, const int64_t *ss, const int64_t *n, int rank,
		 int64_t w)
{
	if (rank == 0) {
		memcpy(dst, src, (size_t)w);
		return;
	}
	int64_t total = 1;
	for (int d = 0; d < rank; d++)
		total *= n[d];
	if (total == 0)
		return;
	/* the innermost loop runs along the dimension dst is densest along */
	int in = -1;
	for (int d = 0; d < rank; d++)
		if (n[d] > 1 && (in < 0 || ds[d] < ds[in]))
			in = d;
	if (in < 0)
		in = 0;
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	int64_t len = n[in];
	int contiguous = ds[in] == 1 && ss[in] == 1;
	for (;;) {
		int64_t od = 0, os = 0;
		for (int d = 0; d < rank; d++) {
			od += idx[d] * ds[d];
			os += idx[d] * ss[d];
		}
		char *o = dst + od * w;
		const char *a = src + os * w;
		if (contiguous) {
			memcpy(o, a, (size_t)(len * w));
		} else {
			for (int64_t i = 0; i < len; i++)
				memcpy(o + i * ds[in] * w, a + i * ss[in] * w, (size_t)w);
		}
		int d = rank - 1;
		for (; d >= 0; d--) {
			if (d == in)
				continue;
			if (++idx[d] < n[d])
				break;
			idx[d] = 0;
		}
		if (d < 0)
			break;
	}
}

int mv_last_use(const frame *f, const instr *in, int k)
{
	int d = in->ops[k].def->position;
	/* a buffer of its own (not a tuple of other values or a view of
	 * another value's buffer) */
	return f->owned[d] == VAL_OWNED && f->last_use[d] == in->position;
}

static int64_t width(const hloi_literal *lit)
{
	return etype_byte_width(lit->shape.type);
}

static int empty(const hloi_literal *lit)
{
	int64_t n;
	return shape_element_count(&lit->shape, &n) || n == 0 || !lit->data;
}

/* A strided copy: fast_copy when the engine is the fast one, else (or for
 * an element width it has no kernel for) mv_copy_box. */
static void copy(const engine *e, char *dst, const int64_t *ds, const char *src, const int64_t *ss, const int64_t *n,
		 int rank, int64_t w)
{
	if (e->fast && fast_copy(dst, ds, src, ss, n, rank, (int)w, e->threads, NULL) == 0)
		return;
	mv_copy_box(dst, ds, src, ss, n, rank, w);
}

/* --- slice ------------------------------------------------------------------------ */

/* result[i] = operand[start + i * stride] */
static void fill_slice(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	const hloi_literal *op = ops[0];
	const slice_dims *sd = &instr_attr(in, ATTR_SLICE)->u.slice;
	int r = out->shape.rank;
	int64_t w = width(out);
	if (empty(out))
		return;
	if (e->fast) {
		int64_t os[HLOI_MAX_RANK], rs[HLOI_MAX_RANK], ss[HLOI_MAX_RANK], off = 0;
		mv_strides(&op->shape, os);
		mv_strides(&out->shape, rs);
		for (int d = 0; d < r; d++) {
			off += sd->start[d] * os[d];
			ss[d] = os[d] * sd->stride[d];
		}
		copy(e, out->data, rs, (const char *)op->data + off * w, ss, out->shape.dims, r, w);
		return;
	}
	int64_t oi[HLOI_MAX_RANK] = { 0 }, si[HLOI_MAX_RANK];
	do {
		for (int d = 0; d < r; d++)
			si[d] = sd->start[d] + oi[d] * sd->stride[d];
		memcpy(literal_element(out, oi), literal_element(op, si), (size_t)w);
	} while (index_next(r, out->shape.dims, oi));
}

hloi_status kernel_slice(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_array(e, f, in, ops, dest, 0, fill_slice);
}

/* --- concatenate ---------------------------------------------------------------------- */

/* The operands one after another along `dimensions`. */
static void fill_concatenate(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	int dim = (int)instr_ints(in, ATTR_DIMENSIONS)->v[0];
	int r = out->shape.rank;
	int64_t w = width(out);
	if (empty(out))
		return;
	if (e->fast) {
		int64_t rs[HLOI_MAX_RANK], os[HLOI_MAX_RANK], off = 0;
		mv_strides(&out->shape, rs);
		for (int k = 0; k < in->nops; k++) {
			const hloi_literal *op = ops[k];
			if (!empty(op)) {
				mv_strides(&op->shape, os);
				copy(e, (char *)out->data + off * rs[dim] * w, rs, op->data, os, op->shape.dims, r, w);
			}
			off += op->shape.dims[dim];
		}
		return;
	}
	int64_t oi[HLOI_MAX_RANK] = { 0 }, si[HLOI_MAX_RANK];
	do {
		int k = 0;
		memcpy(si, oi, sizeof si);
		while (si[dim] >= ops[k]->shape.dims[dim])
			si[dim] -= ops[k++]->shape.dims[dim];
		memcpy(literal_element(out, oi), literal_element(ops[k], si), (size_t)w);
	} while (index_next(r, out->shape.dims, oi));
}

hloi_status kernel_concatenate(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_array(e, f, in, ops, dest, 0, fill_concatenate);
}

/* --- pad ------------------------------------------------------------------------------ */

/* Result position o of a dimension padded lo (may be negative) with
 * interior padding `in1 - 1`: the operand index it holds, or -1 for
 * padding. Unsigned arithmetic: lo may be as low as INT64_MIN. */
static int64_t pad_source(int64_t o, int64_t lo, int64_t in1, int64_t n)
{
	uint64_t t;
	if (lo >= 0) {
		if (o < lo)
			return -1;
		t = (uint64_t)(o - lo);
	} else {
		t = (uint64_t)o + (0 - (uint64_t)lo);
	}
	if (t % (uint64_t)in1 != 0 || t / (uint64_t)in1 >= (uint64_t)n)
		return -1;
	return (int64_t)(t / (uint64_t)in1);
}

/* The operand indices [i0, i0 + cnt) that land in a result dimension of R
 * elements, and where the first lands (a). */
static void pad_range(int64_t lo, int64_t in1, int64_t n, int64_t R, int64_t *i0, int64_t *cnt, int64_t *a)
{
	uint64_t first = 0, last;
	*cnt = 0;
	*i0 = 0;
	*a = 0;
	if (n == 0 || R == 0)
		return;
	if (lo < 0) {
		uint64_t u = 0 - (uint64_t)lo;
		first = (u + (uint64_t)in1 - 1) / (uint64_t)in1;
		last = ((uint64_t)(R - 1) + u) / (uint64_t)in1;
	} else {
		if (R - 1 < lo)
			return;
		last = (uint64_t)(R - 1 - lo) / (uint64_t)in1;
	}
	if (last > (uint64_t)(n - 1))
		last = (uint64_t)(n - 1);
	if (first >= (uint64_t)n || last < first)
		return;
	*i0 = (int64_t)first;
	*cnt = (int64_t)(last - first + 1);
	*a = (int64_t)((uint64_t)lo + first * (uint64_t)in1);
}

static void fill_pad(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	const hloi_literal *op = ops[0];
	const char *pv = ops[1]->data;
	const pad_dims *p = &instr_attr(in, ATTR_PADDING)->u.pad;
	int r = out->shape.rank;
	int64_t w = width(out);
	if (empty(out))
		return;
	if (!e->fast) {
		int64_t oi[HLOI_MAX_RANK] = { 0 }, si[HLOI_MAX_RANK];
		do {
			int inside = 1;
			for (int d = 0; d < r && inside; d++) {
				si[d] = pad_source(oi[d], p->lo[d], p->interior[d] + 1, op->shape.dims[d]);
				inside = si[d] >= 0;
			}
			memcpy(literal_element(out, oi), inside ? literal_element(op, si) : pv, (size_t)w);
		} while (index_next(r, out->shape.dims, oi));
		return;
	}
	int64_t rs[HLOI_MAX_RANK], os[HLOI_MAX_RANK], zero[HLOI_MAX_RANK] = { 0 };
	int64_t i0[HLOI_MAX_RANK], cnt[HLOI_MAX_RANK], at[HLOI_MAX_RANK];
	mv_strides(&out->shape, rs);
	mv_strides(&op->shape, os);
	int interior = 0, some = 1;
	for (int d = 0; d < r; d++) {
		pad_range(p->lo[d], p->interior[d] + 1, op->shape.dims[d], out->shape.dims[d], &i0[d], &cnt[d], &at[d]);
		interior |= p->interior[d] != 0;
		some &= cnt[d] > 0;
	}
	if (!some || interior) {
		copy(e, out->data, rs, pv, zero, out->shape.dims, r, w);
	} else {
		/* only what the operand does not cover: per dimension d, the
		 * slabs before and after it, within the covered range of the
		 * dimensions before d */
		for (int d = 0; d < r; d++) {
			for (int side = 0; side < 2; side++) {
				int64_t bn[HLOI_MAX_RANK], off = 0;
				for (int x = 0; x < r; x++) {
					int64_t s0 = 0, len = out->shape.dims[x];
					if (x < d) {
						s0 = at[x];
						len = cnt[x];
					} else if (x == d) {
						s0 = side ? at[x] + cnt[x] : 0;
						len = side ? out->shape.dims[x] - s0 : at[x];
					}
					bn[x] = len;
					off += s0 * rs[x];
				}
				copy(e, (char *)out->data + off * w, rs, pv, zero, bn, r, w);
			}
		}
	}
	if (!some)
		return;
	int64_t ds[HLOI_MAX_RANK], doff = 0, soff = 0;
	for (int d = 0; d < r; d++) {
		ds[d] = cnt[d] > 1 ? rs[d] * (p->interior[d] + 1) : rs[d];
		doff += at[d] * rs[d];
		soff += i0[d] * os[d];
	}
	copy(e, (char *)out->data + doff * w, ds, (const char *)op->data + soff * w, os, cnt, r, w);
}

hloi_status kernel_pad(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_array(e, f, in, ops, dest, 0, fill_pad);
}

/* --- reverse -------------------------------------------------------------------------------- */

static void fill_reverse(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	const hloi_literal *op = ops[0];
	const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
	int r = out->shape.rank;
	int64_t w = width(out);
	int rev[HLOI_MAX_RANK] = { 0 };
	if (empty(out))
		return;
	for (int i = 0; i < dl->n; i++)
		rev[dl->v[i]] = 1;
	if (e->fast) {
		int64_t os[HLOI_MAX_RANK], rs[HLOI_MAX_RANK], ss[HLOI_MAX_RANK], off = 0;
		mv_strides(&op->shape, os);
		mv_strides(&out->shape, rs);
		for (int d = 0; d < r; d++) {
			ss[d] = rev[d] ? -os[d] : os[d];
			if (rev[d])
				off += (op->shape.dims[d] - 1) * os[d];
		}
		copy(e, out->data, rs, (const char *)op->data + off * w, ss, out->shape.dims, r, w);
		return;
	}
	int64_t oi[HLOI_MAX_RANK] = { 0 }, si[HLOI_MAX_RANK];
	do {
		for (int d = 0; d < r; d++)
			si[d] = rev[d] ? op->shape.dims[d] - 1 - oi[d] : oi[d];
		memcpy(literal_element(out, oi), literal_element(op, si), (size_t)w);
	} while (index_next(r, out->shape.dims, oi));
}

hloi_status kernel_reverse(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_array(e, f, in, ops, dest, 0, fill_reverse);
}

/* --- bitcast-convert between widths ----------------------------------------------------- */

/* The wider value's elements are the narrower value's last dimension, its
 * bytes in memory order (little-endian hosts, as XLA's CPU backend: element
 * 0 of that dimension is the low-order part). The fast engine copies the
 * wide array seen as narrow elements (a last dimension of stride 1) in one
 * strided copy; the reference engine moves each wide element's bytes
 * through index conversion. A byte that becomes pred is 0 or 1. */
static void fill_bitcast_resize(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	(void)in;
	const hloi_literal *op = ops[0];
	int narrowing = width(op) > width(out);
	const hloi_literal *wide = narrowing ? op : out, *narrow = narrowing ? out : op;
	int64_t nw = width(narrow), ratio = width(wide) / nw;
	int r = wide->shape.rank;
	if (empty(out))
		return;
	if (e->fast && index_is_strided(&wide->shape) && index_is_strided(&narrow->shape)) {
		int64_t ws[HLOI_MAX_RANK + 1], ns[HLOI_MAX_RANK + 1], n[HLOI_MAX_RANK + 1];
		mv_strides(&wide->shape, ws);
		mv_strides(&narrow->shape, ns);
		for (int d = 0; d < r; d++) {
			ws[d] *= ratio;
			n[d] = wide->shape.dims[d];
		}
		ws[r] = 1;
		n[r] = ratio;
		if (narrowing)
			copy(e, out->data, ns, op->data, ws, n, r + 1, nw);
		else
			copy(e, out->data, ws, op->data, ns, n, r + 1, nw);
	} else {
		int64_t wi[HLOI_MAX_RANK + 1] = { 0 }, ni[HLOI_MAX_RANK + 1];
		do {
			char *wp = literal_element(wide, wi);
			memcpy(ni, wi, sizeof ni);
			for (int64_t k = 0; k < ratio; k++) {
				ni[r] = k;
				char *np = literal_element(narrow, ni);
				if (narrowing)
					memcpy(np, wp + k * nw, (size_t)nw);
				else
					memcpy(wp + k * nw, np, (size_t)nw);
			}
		} while (index_next(r, wide->shape.dims, wi));
	}
	if (out->shape.type == ET_PRED) {
		unsigned char *b = out->data;
		for (size_t i = 0; i < out->nbytes; i++)
			b[i] = b[i] != 0;
	}
}

/* bitcast-convert: between types of one width an elementwise op (the bits
 * as they are); between widths the result gains or loses the last
 * dimension (the checker's rule), a move of bytes. */
hloi_status kernel_bitcast_convert(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	if (in->result->rank == in->ops[0].def->result->rank)
		return kernel_elementwise(kc);
	return kernel_array(e, f, in, ops, dest, 0, fill_bitcast_resize);
}

/* --- shuffle -------------------------------------------------------------------------------- */

/* Rotation of each dimension: result[i] = x[(i + s) mod n], s the shift
 * (0 for a dimension the shuffle leaves in place) taken mod n into [0, n). */
static void rotations(const instr *in, const shape *s, int64_t *rot)
{
	const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
	const int_list *sl = instr_ints(in, ATTR_SHIFTS);
	for (int d = 0; d < s->rank; d++)
		rot[d] = 0;
	for (int i = 0; i < dl->n; i++) {
		int64_t n = s->dims[dl->v[i]];
		rot[dl->v[i]] = n > 0 ? ((sl->v[i] % n) + n) % n : 0;
	}
}

/* mode=rotate. The fast engine copies the 2^k boxes that k rotated
 * dimensions cut the result into, each a strided copy; the reference
 * engine places each element by its rotated index. */
static void fill_rotate(engine *e, const instr *in, const hloi_literal *op, hloi_literal *out)
{
	int r = out->shape.rank;
	int64_t w = width(out), rot[HLOI_MAX_RANK];
	rotations(in, &op->shape, rot);
	if (e->fast) {
		int64_t os[HLOI_MAX_RANK], rs[HLOI_MAX_RANK], cnt[HLOI_MAX_RANK];
		int cut[HLOI_MAX_RANK], ncut = 0;
		mv_strides(&op->shape, os);
		mv_strides(&out->shape, rs);
		for (int d = 0; d < r; d++)
			if (rot[d])
				cut[ncut++] = d;
		for (uint32_t box = 0; box < (1u << ncut); box++) {
			int64_t doff = 0, soff = 0, none = 0;
			memcpy(cnt, out->shape.dims, sizeof(int64_t) * (size_t)r);
			for (int j = 0; j < ncut; j++) {
				int d = cut[j];
				int64_t n = out->shape.dims[d], s = rot[d];
				if (box & (1u << j)) { /* the tail of the result: x's head */
					cnt[d] = s;
					doff += (n - s) * rs[d];
				} else { /* the head of the result: x from s on */
					cnt[d] = n - s;
					soff += s * os[d];
				}
				none |= cnt[d] == 0;
			}
			if (!none)
				copy(e, (char *)out->data + doff * w, rs, (const char *)op->data + soff * w, os, cnt, r, w);
		}
		return;
	}
	int64_t oi[HLOI_MAX_RANK] = { 0 }, si[HLOI_MAX_RANK];
	do {
		for (int d = 0; d < r; d++) {
			si[d] = oi[d] + rot[d];
			if (si[d] >= op->shape.dims[d])
				si[d] -= op->shape.dims[d];
		}
		memcpy(literal_element(out, oi), literal_element(op, si), (size_t)w);
	} while (index_next(r, out->shape.dims, oi));
}

/* mode=permute: the element of x at the coordinates indices= holds for
 * each result element along the listed dimensions (checked in range);
 * indices' dimensions of size 1 are shared along the operand's. One
 * per-element loop serves both engines. */
static void fill_permute(const instr *in, const hloi_literal *op, hloi_literal *out)
{
	const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
	const hloi_literal *ind = instr_attr(in, ATTR_INDICES)->u.lit.value;
	int r = out->shape.rank, coords = ind->shape.rank == r + 1;
	int64_t w = width(out), oi[HLOI_MAX_RANK] = { 0 }, si[HLOI_MAX_RANK], ii[HLOI_MAX_RANK + 1];
	do {
		for (int d = 0; d < r; d++) {
			si[d] = oi[d];
			ii[d] = ind->shape.dims[d] == 1 ? 0 : oi[d];
		}
		for (int c = 0; c < dl->n; c++) {
			if (coords)
				ii[r] = c;
			si[dl->v[c]] = mv_read_index(ind->shape.type, literal_element(ind, ii));
		}
		memcpy(literal_element(out, oi), literal_element(op, si), (size_t)w);
	} while (index_next(r, out->shape.dims, oi));
}

static void fill_shuffle(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	if (empty(out))
		return;
	if (!strcmp(instr_text(in, ATTR_MODE), "rotate"))
		fill_rotate(e, in, ops[0], out);
	else
		fill_permute(in, ops[0], out);
}

hloi_status kernel_shuffle(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_array(e, f, in, ops, dest, 0, fill_shuffle);
}

/* --- dynamic-slice and dynamic-update-slice ------------------------------------------------ */

/* The start indices (scalar operands from `first` on, or XLA's older single
 * rank-1 operand), each clamped into [0, dims[d] - sizes[d]] as XLA's
 * evaluator clamps them: min(max(0, start), dim - size). */
static void starts(const instr *in, hloi_literal *const *ops, int first, const shape *s, const int64_t *sizes,
		   int64_t *start)
{
	int vector = in->nops == first + 1 && ops[first]->shape.rank == 1;
	for (int d = 0; d < s->rank; d++) {
		int64_t k = d, v;
		if (vector)
			v = mv_read_index(ops[first]->shape.type, literal_element(ops[first], &k));
		else
			v = mv_read_index(ops[first + d]->shape.type, ops[first + d]->data);
		if (v < 0)
			v = 0;
		if (v > s->dims[d] - sizes[d])
			v = s->dims[d] - sizes[d];
		start[d] = v;
	}
}

static void fill_dynamic_slice(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	const hloi_literal *op = ops[0];
	int r = out->shape.rank;
	int64_t w = width(out), start[HLOI_MAX_RANK];
	if (empty(out))
		return;
	starts(in, ops, 1, &op->shape, out->shape.dims, start);
	if (e->fast) {
		int64_t os[HLOI_MAX_RANK], rs[HLOI_MAX_RANK], off = 0;
		mv_strides(&op->shape, os);
		mv_strides(&out->shape, rs);
		for (int d = 0; d < r; d++)
			off += start[d] * os[d];
		copy(e, out->data, rs, (const char *)op->data + off * w, os, out->shape.dims, r, w);
		return;
	}
	int64_t oi[HLOI_MAX_RANK] = { 0 }, si[HLOI_MAX_RANK];
	do {
		for (int d = 0; d < r; d++)
			si[d] = start[d] + oi[d];
		memcpy(literal_element(out, oi), literal_element(op, si), (size_t)w);
	} while (index_next(r, out->shape.dims, oi));
}

hloi_status kernel_dynamic_slice(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_array(e, f, in, ops, dest, 0, fill_dynamic_slice);
}

/* The operand with the update written over it at the clamped start. In
 * place when the operand's buffer is the result's (its last use, or the
 * aliased parameter): then only the update's elements are written. */
static void fill_dynamic_update_slice(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	const hloi_literal *op = ops[0], *up = ops[1];
	int r = out->shape.rank;
	int64_t w = width(out), start[HLOI_MAX_RANK];
	if (empty(out))
		return;
	if (out->data != op->data) {
		if (e->fast && layout_equal(&out->shape.layout, &op->shape.layout) && out->nbytes == op->nbytes) {
			/* the whole buffer, as bytes */
			int64_t n = (int64_t)out->nbytes, one = 1;
			copy(e, out->data, &one, op->data, &one, &n, 1, 1);
		} else if (e->fast) {
			int64_t os[HLOI_MAX_RANK], rs[HLOI_MAX_RANK];
			mv_strides(&op->shape, os);
			mv_strides(&out->shape, rs);
			copy(e, out->data, rs, op->data, os, out->shape.dims, r, w);
		} else {
			value_copy(out, op);
		}
	}
	if (empty(up))
		return;
	starts(in, ops, 2, &out->shape, up->shape.dims, start);
	if (e->fast) {
		int64_t us[HLOI_MAX_RANK], rs[HLOI_MAX_RANK], off = 0;
		mv_strides(&up->shape, us);
		mv_strides(&out->shape, rs);
		for (int d = 0; d < r; d++)
			off += start[d] * rs[d];
		copy(e, (char *)out->data + off * w, rs, up->data, us, up->shape.dims, r, w);
		return;
	}
	int64_t ui[HLOI_MAX_RANK] = { 0 }, oi[HLOI_MAX_RANK];
	do {
		for (int d = 0; d < r; d++)
			oi[d] = start[d] + ui[d];
		memcpy(literal_element(out, oi), literal_element(up, ui), (size_t)w);
	} while (index_next(r, up->shape.dims, ui));
}

hloi_status kernel_dynamic_update_slice(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_array(e, f, in, ops, dest, 1, fill_dynamic_update_slice);
}

/* --- bitcast ---------------------------------------------------------------------------------- */

/* The operand's buffer read as the result's shape and layout: the result's
 * element at index i is the bytes at byte offset L(i) * w of the operand's
 * buffer, where L is the result layout's linear position (padding
 * included) and w the result's element width. The result's padding holds
 * its padding value. When this is the operand's last use its buffer
 * becomes the result (no copy). */
hloi_status kernel_bitcast(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	int pos = in->position;
	hloi_literal *op = ops[0], *res = NULL;
	int64_t bytes = value_bytes(in->result);
	if (bytes < 0 || bytes != (int64_t)op->nbytes) {
		diag_error_where(e->ctx, NULL, "bitcast of %lld bytes into %lld bytes (instruction '%s')",
				 (long long)op->nbytes, (long long)bytes, in->name);
		return HLOI_EINVAL;
	}
	if (mv_last_use(f, in, 0) && op->data && !op->elided) {
		f->owned[in->ops[0].def->position] = 0;
		op->shape = *in->result;
		literal_fill_padding(op);
		f->vals[pos] = op;
		f->owned[pos] = 1;
		return HLOI_OK;
	}
	hloi_status st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	if (res->nbytes && op->data) {
		if (e->fast) {
			memcpy(res->data, op->data, res->nbytes);
			literal_fill_padding(res);
		} else {
			int64_t n, idx[HLOI_MAX_RANK] = { 0 }, w = width(res);
			if (!shape_element_count(&res->shape, &n) && n > 0) {
				do {
					int64_t lin = index_to_linear(&res->shape, idx);
					memcpy((char *)res->data + lin * w, (const char *)op->data + lin * w, (size_t)w);
				} while (index_next(res->shape.rank, res->shape.dims, idx));
			}
		}
	}
	f->vals[pos] = res;
	f->owned[pos] = 1;
	return HLOI_OK;
}

/* --- get-dimension-size and opt-barrier ------------------------------------------------------- */

/* The dimension's size as s32: a `<=N` dimension's size at run time
 * (eval/kernels/dynamic.c), else the static size. */
hloi_status kernel_get_dimension_size(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	int pos = in->position;
	hloi_literal *res = NULL;
	hloi_status st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	int64_t sizes[HLOI_MAX_RANK];
	literal_sizes(ops[0], sizes);
	int32_t v = (int32_t)sizes[instr_ints(in, ATTR_DIMENSIONS)->v[0]];
	memcpy(res->data, &v, sizeof v);
	f->vals[pos] = res;
	f->owned[pos] = 1;
	return HLOI_OK;
}

/* The operand itself, shared (never copied), or converted when the result
 * was written with other layouts. */
hloi_status kernel_optimization_barrier(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	int pos = in->position;
	if (!value_same_layouts(&ops[0]->shape, in->result)) {
		/* a result written with other layouts than the operand's */
		int owned = 0;
		hloi_status st = value_conform(e, ops[0], in->result, &f->vals[pos], &owned);
		f->owned[pos] = (uint8_t)owned;
		return st;
	}
	/* the operand itself: the plan keeps it alive as long as this value
	 * (eval/plan/plan.h: a value that shares its operand's buffers) */
	f->vals[pos] = ops[0];
	f->owned[pos] = VAL_BORROWED;
	return HLOI_OK;
}
