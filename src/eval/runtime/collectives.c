/* Kernels of the collectives on one device, the asynchronous wrappers and
 * the scheduling ops. With one participant every collective is data
 * movement (XLA's single-participant semantics):
 *
 *   all-reduce, all-gather, reduce-scatter, all-to-all,
 *   collective-broadcast   the operands (a tuple of them when several;
 *                          all-to-all's tuple form always a tuple)
 *   collective-permute     the operands where a pair {0,0} sends them to
 *                          this device; zeros when no pair targets it; in
 *                          place (four operands, slice_sizes): the output
 *                          buffer with the windows the pairs send written in
 *   -start forms           (operands, result[, context zeros]); -done: the
 *                          result (all-reduce-done: its operand)
 *   partition-id, replica-id   u32 0
 *   async-start            ((operands), result, context zeros): the wrapped
 *                          computation runs at the first of the chain that
 *                          holds all its operands (async-update may add
 *                          some) and a place for its result, else at
 *                          async-done, which gives the result
 *   copy-start / copy-done (operand, operand, u32 0) / element 0
 *   after-all              a token; add-dependency its first operand
 *
 * With several participants (e->spmd, eval/runtime/spmd.h) the group meets and
 * each member computes its result from the others' operands, in row-major
 * copies of them:
 *
 *   all-reduce             to_apply folded over the group in its order:
 *                          ((v0 + v1) + v2) + ... (XLA leaves it open)
 *   all-gather             the members' operands concatenated along the
 *                          dimension, in group order
 *   reduce-scatter         the all-reduce's block `rank` along the dimension
 *   all-to-all             block j of the result is member j's block `rank`
 *                          (tuple form: element j is member j's operand `rank`)
 *   collective-permute     the operand of the source paired with this
 *                          participant, zeros when none is
 *   collective-broadcast   each operand of its root: the group's first
 *                          member, or with has_dynamic_root=true the rank
 *                          the last operand (s32[n]) names for it
 *   replica-id, partition-id   this participant's
 *
 * Both engines share these kernels: each result is a value of its own,
 * filled by copies between layouts. When the reducer is add, multiply,
 * maximum, minimum, and or or of its parameters (the accumulator first)
 * and the fast engine runs, the reductions combine whole arrays
 * (fast_combine) instead of applying the computation per element, in the
 * same group order, so the values are bit for bit the reference engine's:
 * an all-reduce whose operands and results share a layout is cut into
 * slices, each member combining its slice of everyone's operands once and
 * writing it into every member's result; a reduce-scatter of row-major
 * arrays combines only the member's own block. */
#include <string.h>

#include "core/index.h"
#include "eval/fast/reduce.h"
#include "eval/kernels/apply.h"
#include "eval/kernels/kernel.h"
#include "eval/kernels/movement.h"
#include "eval/kernels/reduce.h"
#include "eval/runtime/mpi.h"
#include "eval/runtime/spmd.h"
#include "ir/groups.h"
#include "util/alloc.h"

/* dst holds the operands: the only one, or a tuple of them. */
static void put_operands(hloi_literal *dst, hloi_literal *const *ops, int n)
{
	if (n == 1 && !shape_is_tuple(&dst->shape)) {
		value_copy(dst, ops[0]);
		return;
	}
	for (int k = 0; k < n && (size_t)k < dst->nelems; k++)
		value_copy(dst->elems[k], ops[k]);
}

/* Whether collective-permute's pairs send this device's operand to itself. */
static int self_pair(const instr *in)
{
	const attr *p = instr_attr(in, ATTR_SOURCE_TARGET_PAIRS);
	if (!p)
		return 0;
	for (int g = 0; g < p->u.lists.n; g++) {
		const int_list *pr = &p->u.lists.v[g];
		if (pr->n == 2 && pr->v[0] == 0 && pr->v[1] == 0)
			return 1;
	}
	return 0;
}

/* Result slot k of an op whose result is its operands' shapes: the result
 * itself for one operand, else its element k. */
static hloi_literal *slot(hloi_literal *res, int nops, int k)
{
	return nops == 1 && !shape_is_tuple(&res->shape) ? res : res->elems[k];
}

/* `lit` in row-major order (the default layout): lit itself when it is
 * already, else a copy (*owned). */
static hloi_status dense(engine *e, const hloi_literal *lit, hloi_literal **out, int *owned)
{
	shape s = lit->shape;
	layout_set_default(&s);
	return value_conform(e, (hloi_literal *)lit, &s, out, owned);
}

/* A new value of `like`'s type and dims in row-major order. */
static hloi_status dense_new(engine *e, const shape *like, hloi_literal **out)
{
	shape s = *like;
	layout_set_default(&s);
	return value_new(e, &s, out);
}

/* Elements before dimension d, and bytes of one step along d. */
static void around(const shape *s, int64_t d, int64_t *outer, int64_t *inner)
{
	*outer = 1;
	*inner = etype_byte_width(s->type);
	for (int64_t i = 0; i < s->rank; i++) {
		if (i < d)
			*outer *= s->dims[i];
		else if (i > d)
			*inner *= s->dims[i];
	}
}

/* out[o, out_at + t] = in[o, in_at + t] for t < len along the dimension
 * (out_dim and in_dim long), over `outer` rows of `inner` bytes a step. */
static void move_block(char *out, int64_t out_dim, int64_t out_at, const char *in, int64_t in_dim, int64_t in_at,
		       int64_t len, int64_t outer, int64_t inner)
{
	if (len <= 0 || inner <= 0)
		return;
	for (int64_t o = 0; o < outer; o++)
		memcpy(out + (o * out_dim + out_at) * inner, in + (o * in_dim + in_at) * inner, (size_t)(len * inner));
}

/* Bytes of the buffer a piece of the members' operands is combined in:
 * within the first-level cache, so that each operand is read once and
 * each result written once. */
#define COMBINE_BYTES 8192

/* The monoid of collective `in`'s reducer on elements of type t when the
 * fast engine combines whole arrays with it (fast_combine), bit for bit
 * what the reducer applied element by element gives: add, multiply,
 * maximum, minimum, and, or of its two parameters of type t, taken in
 * their order (the accumulator first) on floats, where the order decides
 * which NaN comes out; else OP_COUNT. */
static opcode collective_monoid(const engine *e, const instr *in, etype t)
{
	const computation *f = instr_called(in, ATTR_TO_APPLY, 0);
	if (!e->fast || !f)
		return OP_COUNT;
	opcode op = reduce_monoid(f);
	if (op == OP_COUNT || f->root->result->type != t || fast_combine(op, t, NULL, NULL, 0) != 0)
		return OP_COUNT;
	if (!etype_is_integer(t) && t != ET_PRED && f->root->ops[0].def != f->params[0])
		return OP_COUNT;
	return op;
}

/* dst[i][0..len) = ((src[0] op src[1]) op src[2]) op ... op src[n - 1],
 * elements of type t (w bytes) at each pointer, for i < ndst: group order,
 * the order the reducer is applied in element by element. */
static void combine_run(opcode op, etype t, int64_t w, const char *const *src, int64_t n, char *const *dst,
			int64_t ndst, int64_t len)
{
	double buf[COMBINE_BYTES / sizeof(double)];
	int64_t per = COMBINE_BYTES / w;
	for (int64_t c = 0; c < len; c += per) {
		int64_t m = len - c < per ? len - c : per;
		memcpy(buf, src[0] + c * w, (size_t)(m * w));
		for (int64_t j = 1; j < n; j++)
			fast_combine(op, t, buf, src[j] + c * w, m);
		for (int64_t i = 0; i < ndst; i++)
			memcpy(dst[i] + c * w, buf, (size_t)(m * w));
	}
}

/* The members' operand k folded with to_apply in group order, into a new
 * row-major value *out: by whole arrays when the reducer is a monoid the
 * fast engine combines exactly (collective_monoid), else element by
 * element through the computation. */
static hloi_status reduce_members(engine *e, const instr *in, hloi_literal *const *const *all, int64_t n, int k,
				  hloi_literal **out)
{
	const computation *f = instr_called(in, ATTR_TO_APPLY, 0);
	const hloi_literal *first = all[0][k];
	etype t = first->shape.type;
	int64_t w = etype_byte_width(t), count = 0;
	hloi_literal *acc = NULL, *other = NULL;
	int owned = 0;
	applier ap;
	uint64_t *state = NULL;
	memset(&ap, 0, sizeof ap);
	hloi_status st = dense_new(e, &first->shape, &acc);
	if (st != HLOI_OK)
		return st;
	value_copy(acc, first);
	shape_element_count(&acc->shape, &count);
	opcode mono = collective_monoid(e, in, t);
	if (mono != OP_COUNT && (int64_t)acc->nbytes != count * w)
		mono = OP_COUNT;
	if (mono == OP_COUNT) {
		st = applier_init(&ap, e, f);
		if (st != HLOI_OK)
			goto cleanup;
		state = hloi_calloc((size_t)(ap.nslots > 0 ? ap.nslots : 1), sizeof *state);
		if (!state) {
			st = value_oom(e, (int64_t)ap.nslots * 8);
			goto cleanup;
		}
		applier_start(&ap, state);
	}
	for (int64_t j = 1; j < n; j++) {
		st = dense(e, all[j][k], &other, &owned);
		if (st != HLOI_OK)
			goto cleanup;
		char *a = acc->data;
		const char *b = other->data;
		if (mono != OP_COUNT)
			fast_combine(mono, t, a, b, count);
		for (int64_t i = 0; mono == OP_COUNT && i < count && st == HLOI_OK; i++) {
			applier_param(&ap, state, 0, t, a + i * w);
			applier_param(&ap, state, 1, t, b + i * w);
			st = applier_run(&ap, state);
			if (st == HLOI_OK)
				applier_result_to(&ap, state, 0, t, a + i * w);
		}
		if (owned)
			value_drop(e, other);
		other = NULL;
	}
cleanup:
	hloi_free(state);
	applier_free(&ap);
	if (st != HLOI_OK) {
		value_drop(e, acc);
		acc = NULL;
	}
	*out = acc;
	return st;
}

/* Whether array `a` holds `count` elements of type t with no padding, in
 * layout `like` (NULL: row-major), readable (not elided). */
static int plain_array(const hloi_literal *a, etype t, int64_t count, const shape *like)
{
	if (shape_is_tuple(&a->shape) || a->shape.type != t || a->elided || (count > 0 && !a->data) ||
	    (int64_t)a->nbytes != count * etype_byte_width(t))
		return 0;
	return like ? layout_equal(&a->shape.layout, &like->layout) : layout_is_default(&a->shape);
}

/* all-reduce by slices: when each member's operands and result slots
 * (all[j][0..nops) and all[j][nops..2 nops)) share, slot by slot, one
 * layout of unpadded elements, and the reducer is a monoid combined
 * exactly, member `rank` combines its slice of every operand (elements
 * [count * rank / n, count * (rank + 1) / n), cut on cache lines) over
 * the members in group order and writes it into every member's result:
 * the members' slices cover the arrays once, and each element is combined
 * in the order reduce_members takes. The decision reads every member's
 * values, so all members take it alike. 0 when done. */
static int all_reduce_slices(engine *e, const instr *in, hloi_literal *const *const *all, int64_t n, int64_t rank,
			     int nops)
{
	const char *src[HLOI_MAX_PARTICIPANTS];
	char *dst[HLOI_MAX_PARTICIPANTS];
	/* distributed (mpi.h): the others' result slots are not here; each
	 * member folds the whole array, in the same order */
	if (n > HLOI_MAX_PARTICIPANTS || e->spmd->distributed)
		return 1;
	for (int k = 0; k < nops; k++) {
		const hloi_literal *a0 = all[0][k];
		int64_t count = 0;
		if (shape_is_tuple(&a0->shape) || shape_element_count(&a0->shape, &count) ||
		    collective_monoid(e, in, a0->shape.type) == OP_COUNT)
			return 1;
		for (int64_t j = 0; j < n; j++)
			if (!plain_array(all[j][k], a0->shape.type, count, &a0->shape) ||
			    !plain_array(all[j][nops + k], a0->shape.type, count, &a0->shape) ||
			    !shape_same_dims(&all[j][k]->shape, &a0->shape))
				return 1;
	}
	for (int k = 0; k < nops; k++) {
		const hloi_literal *a0 = all[0][k];
		etype t = a0->shape.type;
		int64_t w = etype_byte_width(t), count = 0;
		shape_element_count(&a0->shape, &count);
		int64_t lo = count / n * rank & ~(int64_t)63, hi = rank + 1 == n ? count : count / n * (rank + 1) & ~(int64_t)63;
		for (int64_t j = 0; j < n; j++) {
			src[j] = (const char *)all[j][k]->data + lo * w;
			dst[j] = (char *)all[j][nops + k]->data + lo * w;
		}
		if (hi > lo)
			combine_run(collective_monoid(e, in, t), t, w, src, n, dst, n, hi - lo);
		/* this member's result takes member 0's sizes, as value_copy of
		 * reduce_members' result gives */
		memcpy(all[rank][nops + k]->dynamic_size, a0->dynamic_size, sizeof a0->dynamic_size);
	}
	return 0;
}

/* reduce-scatter of operand k straight into this member's block dst: when
 * the operands and dst are row-major and unpadded and the reducer a monoid
 * combined exactly, only block `rank` of the operands is read and
 * combined, in group order. 0 when done. */
static int scatter_block(engine *e, const instr *in, hloi_literal *dst, hloi_literal *const *const *all, int64_t n,
			 int64_t rank, int k, int64_t d)
{
	const char *src[HLOI_MAX_PARTICIPANTS];
	const hloi_literal *a0 = all[0][k];
	etype t = a0->shape.type;
	int64_t count = 0, dcount = 0;
	opcode op = collective_monoid(e, in, t);
	if (op == OP_COUNT || n > HLOI_MAX_PARTICIPANTS || shape_is_tuple(&a0->shape) || d < 0 ||
	    d >= a0->shape.rank || shape_element_count(&a0->shape, &count) ||
	    shape_element_count(&dst->shape, &dcount) || !plain_array(dst, t, dcount, NULL) ||
	    dst->shape.rank != a0->shape.rank)
		return 1;
	for (int64_t j = 0; j < n; j++)
		if (!plain_array(all[j][k], t, count, NULL) || !shape_same_dims(&all[j][k]->shape, &a0->shape))
			return 1;
	int64_t w = etype_byte_width(t), outer, inner;
	around(&dst->shape, d, &outer, &inner);
	int64_t chunk = dst->shape.dims[d], id = a0->shape.dims[d];
	for (int64_t o = 0; o < outer && chunk * inner > 0; o++) {
		for (int64_t j = 0; j < n; j++)
			src[j] = (const char *)all[j][k]->data + (o * id + rank * chunk) * inner;
		char *out = (char *)dst->data + o * chunk * inner;
		combine_run(op, t, w, src, n, &out, 1, chunk * inner / w);
	}
	for (int i = 0; i < dst->shape.rank; i++)
		dst->dynamic_size[i] = dst->shape.dims[i];
	return 0;
}

/* Moves blocks of the members' operand k into dst (any layout) through a
 * row-major value of dst's shape: gather (all-gather), or exchange
 * (all-to-all's array form). */
static hloi_status assemble(engine *e, hloi_literal *dst, hloi_literal *const *const *all, int64_t n, int64_t rank,
			    int k, int64_t d, int exchange)
{
	hloi_literal *out = NULL, *src = NULL;
	int owned = 0;
	hloi_status st = dense_new(e, &dst->shape, &out);
	if (st != HLOI_OK)
		return st;
	int64_t outer, inner;
	around(&dst->shape, d, &outer, &inner);
	int64_t od = dst->shape.dims[d];
	for (int64_t j = 0; j < n && st == HLOI_OK; j++) {
		st = dense(e, all[j][k], &src, &owned);
		if (st != HLOI_OK)
			break;
		int64_t id = src->shape.dims[d];
		if (exchange) {
			int64_t chunk = id / n;
			move_block(out->data, od, j * chunk, src->data, id, rank * chunk, chunk, outer, inner);
		} else {
			move_block(out->data, od, j * id, src->data, id, 0, id, outer, inner);
		}
		if (owned)
			value_drop(e, src);
	}
	if (st == HLOI_OK)
		value_copy(dst, out);
	value_drop(e, out);
	return st;
}

/* The block `rank` of n along d of the members' reduced operand k. */
static hloi_status reduce_scatter(engine *e, const instr *in, hloi_literal *dst, hloi_literal *const *const *all,
				  int64_t n, int64_t rank, int k, int64_t d)
{
	hloi_literal *acc = NULL, *out = NULL;
	if (scatter_block(e, in, dst, all, n, rank, k, d) == 0)
		return HLOI_OK;
	hloi_status st = reduce_members(e, in, all, n, k, &acc);
	if (st == HLOI_OK)
		st = dense_new(e, &dst->shape, &out);
	if (st == HLOI_OK) {
		int64_t outer, inner;
		around(&dst->shape, d, &outer, &inner);
		int64_t chunk = dst->shape.dims[d];
		move_block(out->data, chunk, 0, acc->data, acc->shape.dims[d], rank * chunk, chunk, outer, inner);
		value_copy(dst, out);
	}
	if (acc)
		value_drop(e, acc);
	if (out)
		value_drop(e, out);
	return st;
}

/* The source paired with target `rank` in collective-permute's pairs, or -1. */
static int64_t permute_source(const instr *in, int64_t rank)
{
	const attr *p = instr_attr(in, ATTR_SOURCE_TARGET_PAIRS);
	for (int g = 0; p && g < p->u.lists.n; g++) {
		const int_list *pr = &p->u.lists.v[g];
		if (pr->n == 2 && pr->v[1] == rank)
			return pr->v[0];
	}
	return -1;
}

/* The offsets of buffer a, slice j of the in-place collective-permute:
 * the tuple of scalars inside offsets `off` (per buffer when the buffers
 * are a tuple; per slice when it holds tuples). */
static const hloi_literal *slice_offsets(const hloi_literal *off, int tuple, int a, int64_t j)
{
	if (tuple)
		off = off->elems[a];
	if (off->nelems > 0 && shape_is_tuple(&off->elems[0]->shape))
		off = off->elems[j];
	return off;
}

/* Window `sizes` of src at src_at (offsets, clamped into the buffer as
 * dynamic-slice clamps) copied into dst at dst_at (clamped likewise). */
static void copy_window(hloi_literal *dst, const hloi_literal *dst_at, const hloi_literal *src,
			const hloi_literal *src_at, const int_list *sizes)
{
	int r = dst->shape.rank;
	int64_t so[HLOI_MAX_RANK], dof[HLOI_MAX_RANK], idx[HLOI_MAX_RANK] = { 0 }, a[HLOI_MAX_RANK],
		b[HLOI_MAX_RANK];
	for (int d = 0; d < r; d++) {
		if (sizes->v[d] == 0)
			return;
		int64_t x = mv_read_index(src_at->elems[d]->shape.type, src_at->elems[d]->data);
		int64_t y = mv_read_index(dst_at->elems[d]->shape.type, dst_at->elems[d]->data);
		int64_t xm = src->shape.dims[d] - sizes->v[d], ym = dst->shape.dims[d] - sizes->v[d];
		so[d] = x < 0 ? 0 : x > xm ? xm : x;
		dof[d] = y < 0 ? 0 : y > ym ? ym : y;
	}
	size_t w = (size_t)etype_byte_width(dst->shape.type);
	do {
		for (int d = 0; d < r; d++) {
			a[d] = dof[d] + idx[d];
			b[d] = so[d] + idx[d];
		}
		memcpy(literal_element(dst, a), literal_element(src, b), w);
	} while (index_next(r, sizes->v, idx));
}

/* The in-place collective-permute(input, output, input_offsets,
 * output_offsets), slice_sizes: the output buffer, where for each pair
 * {s, t} naming this participant (rank) as t the window of s's input at
 * s's input offsets is written at this participant's output offsets. The
 * j-th pair of a source takes the j-th offsets of each buffer and the
 * slice_sizes of buffer a, slice j at a * slices + j. all[m] holds member
 * m's operands (one device: its own). */
static void permute_inplace(const instr *in, hloi_literal *const *ops, hloi_literal *const *const *all, int64_t n,
			    int64_t rank, hloi_literal *res)
{
	hloi_literal *r = res;
	if (in->op == OP_COLLECTIVE_PERMUTE_START) {
		value_copy(res->elems[0], ops[0]);
		r = res->elems[1];
	}
	value_copy(r, ops[1]);
	const attr *p = instr_attr(in, ATTR_SOURCE_TARGET_PAIRS);
	const attr *ss = instr_attr(in, ATTR_SLICE_SIZES);
	int tuple = shape_is_tuple(&ops[1]->shape);
	int nbuf = tuple ? (int)ops[1]->nelems : 1;
	int64_t slices = ss->u.lists.n / (nbuf ? nbuf : 1);
	for (int g = 0; p && g < p->u.lists.n; g++) {
		const int_list *pr = &p->u.lists.v[g];
		int64_t j = 0;
		for (int h = 0; h < g; h++)
			j += p->u.lists.v[h].v[0] == pr->v[0];
		if (pr->v[1] != rank || pr->v[0] >= n || j >= slices)
			continue;
		hloi_literal *const *from = all[pr->v[0]];
		for (int a = 0; a < nbuf; a++) {
			hloi_literal *dst = tuple ? r->elems[a] : r;
			const hloi_literal *src = tuple ? from[0]->elems[a] : from[0];
			copy_window(dst, slice_offsets(ops[3], tuple, a, j), src, slice_offsets(from[2], tuple, a, j),
				    &ss->u.lists.v[a * slices + j]);
		}
	}
}

/* ragged-all-to-all into res: this member's output operand (operand 1),
 * over which each member j of the group, in group order, writes its
 * updates for this member: with U = (elements of the offsets) / n, update
 * u of member j moves rows [input_offsets[i], + send_sizes[i]) of j's
 * input to rows [output_offsets[i], + send_sizes[i]) here, i = rank * U +
 * u in j's offsets and sizes read row-major (XLA's ragged-all-to-all
 * kernels). recv_sizes is not read: the sender's sizes say what arrives;
 * neither are the offsets of an update of no rows. */
static hloi_status ragged(engine *e, const instr *in, hloi_literal *res, hloi_literal *const *const *all, int64_t n,
			  int64_t rank)
{
	hloi_literal *out = NULL, *src = NULL, *meta[3] = { NULL, NULL, NULL };
	int owned = 0, mowned[3] = { 0, 0, 0 };
	hloi_status st = dense_new(e, &res->shape, &out);
	if (st != HLOI_OK)
		return st;
	value_copy(out, all[rank][1]);
	int64_t outer, row, count = 0;
	around(&out->shape, 0, &outer, &row);
	int64_t out_rows = out->shape.dims[0];
	for (int64_t j = 0; j < n && st == HLOI_OK; j++) {
		st = dense(e, all[j][0], &src, &owned);
		for (int q = 0; q < 3 && st == HLOI_OK; q++)
			st = dense(e, all[j][q == 0 ? 2 : q == 1 ? 3 : 4], &meta[q], &mowned[q]);
		if (st == HLOI_OK) {
			etype t = meta[0]->shape.type;
			int64_t w = etype_byte_width(t), in_rows = src->shape.dims[0];
			shape_element_count(&meta[0]->shape, &count);
			int64_t per = count / n;
			for (int64_t u = 0; u < per && st == HLOI_OK; u++) {
				int64_t i = rank * per + u;
				int64_t from = mv_read_index(t, meta[0]->data + i * w);
				int64_t size = mv_read_index(t, meta[1]->data + i * w);
				int64_t to = mv_read_index(t, meta[2]->data + i * w);
				/* an update of no rows moves nothing: its offsets are
				 * not read */
				if (size < 0 || (size > 0 && (from < 0 || from > in_rows - size || to < 0 ||
							      to > out_rows - size))) {
					diag_error_where(e->ctx, NULL,
							 "'%s' (ragged-all-to-all): update %lld of group member %lld for member %lld moves %lld rows from row %lld of an input of %lld rows to row %lld of an output of %lld rows",
							 in->name, (long long)i, (long long)j, (long long)rank, (long long)size,
							 (long long)from, (long long)in_rows, (long long)to, (long long)out_rows);
					st = HLOI_EINVAL;
					break;
				}
				if (size > 0 && row > 0)
					memcpy(out->data + to * row, src->data + from * row, (size_t)(size * row));
			}
		}
		if (owned && src)
			value_drop(e, src);
		src = NULL;
		owned = 0;
		for (int q = 0; q < 3; q++) {
			if (mowned[q] && meta[q])
				value_drop(e, meta[q]);
			meta[q] = NULL;
			mowned[q] = 0;
		}
	}
	if (st == HLOI_OK)
		value_copy(res, out);
	value_drop(e, out);
	return st;
}

/* The root of collective-reduce's or collective-broadcast's operand k among
 * n members: rank 0 of the group, or with has_dynamic_root=true element k
 * of the roots (the last operand), which every member must give alike; -1
 * after an error. */
static int64_t group_root(engine *e, const instr *in, hloi_literal *const *const *all, int64_t n, int k)
{
	if (!instr_bool(in, ATTR_HAS_DYNAMIC_ROOT, 0))
		return 0;
	int last = in->nops - 1;
	int32_t root, other;
	memcpy(&root, (const char *)all[0][last]->data + 4 * k, 4);
	for (int64_t j = 1; j < n; j++) {
		memcpy(&other, (const char *)all[j][last]->data + 4 * k, 4);
		if (other != root) {
			diag_error_where(e->ctx, NULL,
					 "'%s' (%s): the members of a group give different roots for operand %d: %d (member 0) and %d (member %lld)",
					 in->name, opcode_name(in->op), k, (int)root, (int)other, (long long)j);
			return -1;
		}
	}
	if (root < 0 || root >= n) {
		diag_error_where(e->ctx, NULL, "'%s': %s dynamic root %d at index %d is out of range [0, %lld)", in->name,
				 opcode_name(in->op), (int)root, k, (long long)n);
		return -1;
	}
	return root;
}

/* collective-broadcast: each operand k from its root, all of them from
 * rank 0 of the group without has_dynamic_root. */
static hloi_status collective_broadcast(engine *e, const instr *in, hloi_literal *res, hloi_literal *const *const *all,
					int64_t n)
{
	int nb = in->nops - (instr_bool(in, ATTR_HAS_DYNAMIC_ROOT, 0) ? 1 : 0);
	for (int k = 0; k < nb; k++) {
		int64_t root = group_root(e, in, all, n, k);
		if (root < 0)
			return HLOI_EINVAL;
		value_copy(slot(res, nb, k), all[root][k]);
	}
	return HLOI_OK;
}

/* collective-reduce: each reduced operand k folded with to_apply over the
 * group in its order on its root; the other members' result is zeros
 * (XLA's runtime leaves their buffer unwritten). */
static hloi_status collective_reduce(engine *e, const instr *in, hloi_literal *res, hloi_literal *const *const *all,
				     int64_t n, int64_t rank)
{
	int nred = in->nops - (instr_bool(in, ATTR_HAS_DYNAMIC_ROOT, 0) ? 1 : 0);
	hloi_status st = HLOI_OK;
	value_zero(res);
	for (int k = 0; k < nred && st == HLOI_OK; k++) {
		int64_t root = group_root(e, in, all, n, k);
		if (root < 0)
			return HLOI_EINVAL;
		if (root != rank)
			continue;
		hloi_literal *acc = NULL;
		st = reduce_members(e, in, all, n, k, &acc);
		if (st == HLOI_OK) {
			value_copy(slot(res, nred, k), acc);
			value_drop(e, acc);
		}
	}
	return st;
}

/* all-reduce across MPI ranks (distributed, mpi.h) of unpadded arrays
 * whose operand and result share a layout: member `rank` receives its
 * slice of every member's operand (elements [count * rank / n, count *
 * (rank + 1) / n)), folds them in the group's order with reduce_members as
 * the whole arrays are folded in one process (element by element: the
 * same values), and sends the folded slice to every other member, which
 * receives each member's into its result. Each rank moves about twice its
 * operand, as MPI's own all-reduce does, and holds only slices of the
 * others'. 1 when it does not apply (*st untouched). */
static int all_reduce_distributed(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *res,
				  const int64_t *members, int64_t n, int64_t rank, hloi_status *st)
{
	for (int k = 0; k < in->nops; k++) {
		const hloi_literal *a = ops[k], *r = slot(res, in->nops, k);
		int64_t count = 0;
		if (shape_is_tuple(&a->shape) || shape_is_tuple(&r->shape) || literal_is_dynamic(a) ||
		    shape_element_count(&a->shape, &count) || !plain_array(a, a->shape.type, count, &r->shape) ||
		    !plain_array(r, a->shape.type, count, &r->shape))
			return 1;
	}
	uint64_t occ;
	if (spmd_next_occurrence(e, in, &occ)) {
		*st = value_oom(e, 16);
		return 0;
	}
	size_t cells = (size_t)n;
	hloi_literal **parts = hloi_calloc(cells, sizeof *parts);
	hloi_literal *const **all = hloi_calloc(cells, sizeof *all);
	const void **send = hloi_calloc(cells, sizeof *send);
	void **recv = hloi_calloc(cells, sizeof *recv);
	size_t *send_len = hloi_calloc(cells, sizeof *send_len), *recv_len = hloi_calloc(cells, sizeof *recv_len);
	*st = parts && all && send && recv && send_len && recv_len ? HLOI_OK : value_oom(e, n * 48);
	for (int k = 0; k < in->nops && *st == HLOI_OK; k++) {
		hloi_literal *a = ops[k], *r = slot(res, in->nops, k), *acc = NULL;
		etype t = a->shape.type;
		int64_t count = 0, w = etype_byte_width(t);
		shape_element_count(&a->shape, &count);
		int64_t lo = count * rank / n, len = count * (rank + 1) / n - lo;
		shape s1;
		shape_make_array(&s1, t, 1, &len);
		for (int64_t j = 0; j < n && *st == HLOI_OK; j++)
			*st = value_new(e, &s1, &parts[j]);
		if (*st != HLOI_OK)
			goto next;
		if (len > 0)
			memcpy(parts[rank]->data, (const char *)a->data + lo * w, (size_t)(len * w));
		for (int64_t j = 0; j < n; j++) {
			int64_t jlo = count * j / n, jhi = count * (j + 1) / n;
			send[j] = (const char *)a->data + jlo * w;
			send_len[j] = (size_t)((jhi - jlo) * w);
			recv[j] = parts[j]->data;
			recv_len[j] = (size_t)(len * w);
			all[j] = (hloi_literal *const *)&parts[j];
		}
		*st = mpi_alltoallv(e, in, occ, 2 * (uint64_t)k, members, n, rank, send, send_len, recv, recv_len,
				    spmd_stop(e));
		if (*st == HLOI_OK)
			*st = reduce_members(e, in, (hloi_literal *const *const *)all, n, 0, &acc);
		if (*st != HLOI_OK)
			goto next;
		if (len > 0)
			memcpy((char *)r->data + lo * w, acc->data, (size_t)(len * w));
		for (int64_t j = 0; j < n; j++) {
			int64_t jlo = count * j / n, jhi = count * (j + 1) / n;
			send[j] = acc->data;
			send_len[j] = (size_t)(len * w);
			recv[j] = (char *)r->data + jlo * w;
			recv_len[j] = (size_t)((jhi - jlo) * w);
		}
		*st = mpi_alltoallv(e, in, occ, 2 * (uint64_t)k + 1, members, n, rank, send, send_len, recv, recv_len,
				    spmd_stop(e));
		memcpy(r->dynamic_size, a->dynamic_size, sizeof a->dynamic_size);
next:
		if (acc)
			value_drop(e, acc);
		for (int64_t j = 0; parts && j < n; j++) {
			if (parts[j])
				value_drop(e, parts[j]);
			parts[j] = NULL;
		}
	}
	hloi_free(parts);
	hloi_free(all);
	hloi_free(send);
	hloi_free(recv);
	hloi_free(send_len);
	hloi_free(recv_len);
	return 0;
}

/* reduce-scatter across MPI ranks (distributed) of unpadded arrays whose
 * operand and result share a layout in which the scattered dimension is
 * the most major: block j of an operand is then a run of its bytes, and
 * member `rank` receives only block `rank` of every member's operand and
 * folds them in the group's order (reduce_members, element by element:
 * the thread runtime's values). 1 when it does not apply. */
static int reduce_scatter_distributed(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *res,
				      const int64_t *members, int64_t n, int64_t rank, int64_t d, hloi_status *st)
{
	for (int k = 0; k < in->nops; k++) {
		const hloi_literal *a = ops[k], *r = slot(res, in->nops, k);
		int64_t count = 0, rcount = 0;
		if (d < 0 || shape_is_tuple(&a->shape) || shape_is_tuple(&r->shape) || literal_is_dynamic(a) ||
		    !a->shape.has_layout || a->shape.rank < 1 || d >= a->shape.rank ||
		    a->shape.layout.minor_to_major[a->shape.rank - 1] != d ||
		    shape_element_count(&a->shape, &count) || shape_element_count(&r->shape, &rcount) ||
		    count != rcount * n || !plain_array(a, a->shape.type, count, &a->shape) ||
		    !plain_array(r, a->shape.type, rcount, &a->shape))
			return 1;
	}
	uint64_t occ;
	if (spmd_next_occurrence(e, in, &occ)) {
		*st = value_oom(e, 16);
		return 0;
	}
	size_t cells = (size_t)n;
	hloi_literal **parts = hloi_calloc(cells, sizeof *parts);
	hloi_literal *const **all = hloi_calloc(cells, sizeof *all);
	const void **send = hloi_calloc(cells, sizeof *send);
	void **recv = hloi_calloc(cells, sizeof *recv);
	size_t *lens = hloi_calloc(cells, sizeof *lens);
	*st = parts && all && send && recv && lens ? HLOI_OK : value_oom(e, n * 40);
	for (int k = 0; k < in->nops && *st == HLOI_OK; k++) {
		hloi_literal *a = ops[k], *r = slot(res, in->nops, k), *acc = NULL;
		etype t = a->shape.type;
		int64_t rcount = 0, w = etype_byte_width(t);
		shape_element_count(&r->shape, &rcount);
		size_t block = (size_t)(rcount * w);
		shape s1;
		shape_make_array(&s1, t, 1, &rcount);
		for (int64_t j = 0; j < n && *st == HLOI_OK; j++)
			*st = value_new(e, &s1, &parts[j]);
		if (*st != HLOI_OK)
			goto next;
		if (block)
			memcpy(parts[rank]->data, (const char *)a->data + (size_t)rank * block, block);
		for (int64_t j = 0; j < n; j++) {
			send[j] = (const char *)a->data + (size_t)j * block;
			recv[j] = parts[j]->data;
			lens[j] = block;
			all[j] = (hloi_literal *const *)&parts[j];
		}
		*st = mpi_alltoallv(e, in, occ, (uint64_t)k, members, n, rank, send, lens, recv, lens, spmd_stop(e));
		if (*st == HLOI_OK)
			*st = reduce_members(e, in, (hloi_literal *const *const *)all, n, 0, &acc);
		if (*st == HLOI_OK && block)
			memcpy(r->data, acc->data, block);
next:
		if (acc)
			value_drop(e, acc);
		for (int64_t j = 0; parts && j < n; j++) {
			if (parts[j])
				value_drop(e, parts[j]);
			parts[j] = NULL;
		}
	}
	hloi_free(parts);
	hloi_free(all);
	hloi_free(send);
	hloi_free(recv);
	hloi_free(lens);
	return 0;
}

/* Whether a and r are unpadded arrays of one type and layout, not
 * dynamic, of `count` and `rcount` elements; with d >= 0, d is the most
 * major dimension of the layout (a block along it is a run of bytes). */
static int plain_pair(const hloi_literal *a, const hloi_literal *r, int64_t d, int64_t *count, int64_t *rcount)
{
	if (shape_is_tuple(&a->shape) || shape_is_tuple(&r->shape) || literal_is_dynamic(a) || !a->shape.has_layout ||
	    shape_element_count(&a->shape, count) || shape_element_count(&r->shape, rcount) ||
	    !plain_array(a, a->shape.type, *count, &a->shape) || !plain_array(r, a->shape.type, *rcount, &a->shape))
		return 0;
	return d < 0 || (d < a->shape.rank && a->shape.layout.minor_to_major[a->shape.rank - 1] == d);
}

/* Raw bytes to and from each member (mpi_alltoallv) with the tables of
 * n entries it takes, made and freed here. */
typedef struct exchange {
	const void **send;
	void **recv;
	size_t *send_len, *recv_len;
} exchange;

static hloi_status exchange_new(engine *e, exchange *x, int64_t n)
{
	x->send = hloi_calloc((size_t)n, sizeof *x->send);
	x->recv = hloi_calloc((size_t)n, sizeof *x->recv);
	x->send_len = hloi_calloc((size_t)n, sizeof *x->send_len);
	x->recv_len = hloi_calloc((size_t)n, sizeof *x->recv_len);
	return x->send && x->recv && x->send_len && x->recv_len ? HLOI_OK : value_oom(e, n * 32);
}

static void exchange_free(exchange *x)
{
	hloi_free(x->send);
	hloi_free(x->recv);
	hloi_free(x->send_len);
	hloi_free(x->recv_len);
}

/* collective-permute across MPI ranks (distributed) of one unpadded array
 * whose result shares its layout: the operand goes to the targets of this
 * member's pairs alone, and the result comes from its source alone
 * (zeros without one), instead of every member's operand to every member.
 * 1 when it does not apply. */
static int permute_distributed(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *res,
			       const int64_t *members, int64_t n, int64_t rank, hloi_status *st)
{
	if (in->nops != 1 || instr_attr(in, ATTR_SLICE_SIZES))
		return 1;
	hloi_literal *a = ops[0], *r = in->op == OP_COLLECTIVE_PERMUTE_START ? res->elems[1] : res;
	int64_t count = 0, rcount = 0;
	if (!plain_pair(a, r, -1, &count, &rcount) || count != rcount)
		return 1;
	uint64_t occ;
	exchange x;
	memset(&x, 0, sizeof x);
	if (spmd_next_occurrence(e, in, &occ)) {
		*st = value_oom(e, 16);
		return 0;
	}
	if ((*st = exchange_new(e, &x, n)) != HLOI_OK) {
		exchange_free(&x);
		return 0;
	}
	value_zero(res);
	if (in->op == OP_COLLECTIVE_PERMUTE_START)
		put_operands(res->elems[0], ops, 1);
	int64_t src = permute_source(in, rank);
	for (int64_t j = 0; j < n; j++) {
		x.send[j] = a->data;
		x.send_len[j] = permute_source(in, j) == rank ? a->nbytes : 0;
		x.recv[j] = r->data;
		x.recv_len[j] = j == src ? r->nbytes : 0;
	}
	if (src == rank && a->nbytes)
		memcpy(r->data, a->data, a->nbytes);
	*st = mpi_alltoallv(e, in, occ, 0, members, n, rank, x.send, x.send_len, x.recv, x.recv_len, spmd_stop(e));
	exchange_free(&x);
	return 0;
}

/* all-gather across MPI ranks (distributed) of unpadded arrays along the
 * layout's most major dimension, result in the operand's layout: member
 * j's operand is block j of the result, a run of its bytes, received
 * straight into it. 1 when it does not apply. */
static int all_gather_distributed(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *res,
				  const int64_t *members, int64_t n, int64_t rank, int64_t d, hloi_status *st)
{
	hloi_literal *out = in->op == OP_ALL_GATHER_START ? res->elems[1] : res;
	for (int k = 0; k < in->nops; k++) {
		int64_t count = 0, rcount = 0;
		if (d < 0 || !plain_pair(ops[k], slot(out, in->nops, k), d, &count, &rcount) || rcount != count * n)
			return 1;
	}
	uint64_t occ;
	exchange x;
	memset(&x, 0, sizeof x);
	if (spmd_next_occurrence(e, in, &occ)) {
		*st = value_oom(e, 16);
		return 0;
	}
	if ((*st = exchange_new(e, &x, n)) != HLOI_OK) {
		exchange_free(&x);
		return 0;
	}
	if (in->op == OP_ALL_GATHER_START)
		put_operands(res->elems[0], ops, in->nops);
	for (int k = 0; k < in->nops && *st == HLOI_OK; k++) {
		hloi_literal *a = ops[k], *r = slot(out, in->nops, k);
		size_t block = a->nbytes;
		for (int64_t j = 0; j < n; j++) {
			x.send[j] = a->data;
			x.send_len[j] = block;
			x.recv[j] = (char *)r->data + (size_t)j * block;
			x.recv_len[j] = block;
		}
		if (block)
			memcpy((char *)r->data + (size_t)rank * block, a->data, block);
		*st = mpi_alltoallv(e, in, occ, (uint64_t)k, members, n, rank, x.send, x.send_len, x.recv, x.recv_len,
				    spmd_stop(e));
		for (int i = 0; i < r->shape.rank; i++)
			r->dynamic_size[i] = r->shape.dims[i];
	}
	exchange_free(&x);
	return 0;
}

/* all-to-all across MPI ranks (distributed) of one unpadded array along the
 * layout's most major dimension, result in the operand's layout: block j
 * of the operand, a run of its bytes, goes to member j alone, and member
 * j's block `rank` comes straight into block j of the result. 1 when it
 * does not apply. */
static int all_to_all_distributed(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *res,
				  const int64_t *members, int64_t n, int64_t rank, int64_t d, hloi_status *st)
{
	int64_t count = 0, rcount = 0;
	if (in->nops != 1 || d < 0 || !plain_pair(ops[0], res, d, &count, &rcount) || count != rcount ||
	    ops[0]->shape.dims[d] % n)
		return 1;
	hloi_literal *a = ops[0];
	uint64_t occ;
	exchange x;
	memset(&x, 0, sizeof x);
	if (spmd_next_occurrence(e, in, &occ)) {
		*st = value_oom(e, 16);
		return 0;
	}
	if ((*st = exchange_new(e, &x, n)) != HLOI_OK) {
		exchange_free(&x);
		return 0;
	}
	size_t block = a->nbytes / (size_t)n;
	for (int64_t j = 0; j < n; j++) {
		x.send[j] = (const char *)a->data + (size_t)j * block;
		x.send_len[j] = block;
		x.recv[j] = (char *)res->data + (size_t)j * block;
		x.recv_len[j] = block;
	}
	if (block)
		memcpy((char *)res->data + (size_t)rank * block, (const char *)a->data + (size_t)rank * block, block);
	*st = mpi_alltoallv(e, in, occ, 0, members, n, rank, x.send, x.send_len, x.recv, x.recv_len, spmd_stop(e));
	for (int i = 0; i < res->shape.rank; i++)
		res->dynamic_size[i] = res->shape.dims[i];
	exchange_free(&x);
	return 0;
}

/* A collective among several participants: meet the group, compute this
 * member's result into res from everyone's operands, leave. */
static hloi_status collective_spmd(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *res)
{
	const module *m = e->m;
	int64_t total = m->replicas * m->partitions, rank = -1;
	int64_t *members = hloi_malloc((size_t)total * sizeof *members);
	if (!members)
		return value_oom(e, total * (int64_t)sizeof *members);
	int64_t n = collective_members(in, m->replicas, m->partitions, e->spmd->id, members, &rank);
	if (n <= 0) {
		hloi_free(members);
		if (n == 0) {
			diag_error_where(e->ctx, NULL, "'%s' (%s): replica %lld, partition %lld is in none of its groups",
					 in->name, opcode_name(in->op), (long long)e->spmd->replica,
					 (long long)e->spmd->partition);
			return HLOI_EINVAL;
		}
		return value_oom(e, total * (int64_t)sizeof *members);
	}
	hloi_literal *const *const *all = NULL;
	spmd_meet *meet = NULL;
	/* all-reduce: each member publishes its result slots after its
	 * operands, for the members to write their slices into */
	int reduce_all = in->op == OP_ALL_REDUCE || in->op == OP_ALL_REDUCE_START;
	hloi_status dst = HLOI_OK;
	if (reduce_all && e->spmd->distributed && all_reduce_distributed(e, in, ops, res, members, n, rank, &dst) == 0) {
		hloi_free(members);
		return dst;
	}
	if ((in->op == OP_COLLECTIVE_PERMUTE || in->op == OP_COLLECTIVE_PERMUTE_START) && e->spmd->distributed &&
	    permute_distributed(e, in, ops, res, members, n, rank, &dst) == 0) {
		hloi_free(members);
		return dst;
	}
	if ((in->op == OP_ALL_GATHER || in->op == OP_ALL_GATHER_START) && e->spmd->distributed) {
		const int_list *gd = instr_ints(in, ATTR_DIMENSIONS);
		if (gd && gd->n == 1 && all_gather_distributed(e, in, ops, res, members, n, rank, gd->v[0], &dst) == 0) {
			hloi_free(members);
			return dst;
		}
	}
	if (in->op == OP_ALL_TO_ALL && e->spmd->distributed) {
		const int_list *ad = instr_ints(in, ATTR_DIMENSIONS);
		if (ad && ad->n == 1 && all_to_all_distributed(e, in, ops, res, members, n, rank, ad->v[0], &dst) == 0) {
			hloi_free(members);
			return dst;
		}
	}
	if (in->op == OP_REDUCE_SCATTER && e->spmd->distributed) {
		const int_list *sd = instr_ints(in, ATTR_DIMENSIONS);
		if (sd && sd->n == 1 &&
		    reduce_scatter_distributed(e, in, ops, res, members, n, rank, sd->v[0], &dst) == 0) {
			hloi_free(members);
			return dst;
		}
	}
	hloi_literal **pub = NULL;
	if (reduce_all) {
		pub = hloi_malloc((size_t)(2 * in->nops + 1) * sizeof *pub);
		if (!pub) {
			hloi_free(members);
			return value_oom(e, (int64_t)(2 * in->nops + 1) * (int64_t)sizeof *pub);
		}
		for (int k = 0; k < in->nops; k++) {
			pub[k] = ops[k];
			pub[in->nops + k] = slot(res, in->nops, k);
		}
	}
	hloi_status st = spmd_arrive(e, in, members, n, rank, pub ? pub : ops, &all, &meet);
	hloi_free(members);
	if (st != HLOI_OK) {
		hloi_free(pub);
		return st;
	}
	const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
	int64_t d = dl && dl->n == 1 ? dl->v[0] : -1;
	/* op-specific: each collective's own exchange */
	switch (in->op) {
	case OP_ALL_REDUCE:
	case OP_ALL_REDUCE_START:
		if (all_reduce_slices(e, in, all, n, rank, in->nops) == 0)
			break;
		for (int k = 0; k < in->nops && st == HLOI_OK; k++) {
			hloi_literal *acc = NULL;
			st = reduce_members(e, in, all, n, k, &acc);
			if (st == HLOI_OK) {
				value_copy(slot(res, in->nops, k), acc);
				value_drop(e, acc);
			}
		}
		break;
	case OP_ALL_GATHER:
	case OP_ALL_GATHER_START: {
		hloi_literal *r = res;
		if (in->op == OP_ALL_GATHER_START) {
			put_operands(res->elems[0], ops, in->nops);
			r = res->elems[1];
		}
		for (int k = 0; k < in->nops && st == HLOI_OK; k++)
			st = assemble(e, slot(r, in->nops, k), all, n, rank, k, d, 0);
		break;
	}
	case OP_REDUCE_SCATTER:
		for (int k = 0; k < in->nops && st == HLOI_OK; k++)
			st = reduce_scatter(e, in, slot(res, in->nops, k), all, n, rank, k, (int)d);
		break;
	case OP_ALL_TO_ALL:
		if (d >= 0)
			st = assemble(e, res, all, n, rank, 0, d, 1);
		else
			for (int64_t j = 0; j < n && j < (int64_t)res->nelems; j++)
				value_copy(res->elems[j], all[j][rank]);
		break;
	case OP_COLLECTIVE_PERMUTE:
	case OP_COLLECTIVE_PERMUTE_START: {
		hloi_literal *r = res;
		value_zero(res);
		if (instr_attr(in, ATTR_SLICE_SIZES)) {
			permute_inplace(in, ops, all, n, rank, res);
			break;
		}
		if (in->op == OP_COLLECTIVE_PERMUTE_START) {
			put_operands(res->elems[0], ops, in->nops);
			r = res->elems[1];
		}
		int64_t src = permute_source(in, rank);
		if (src >= 0 && src < n)
			put_operands(r, all[src], in->nops);
		break;
	}
	case OP_RAGGED_ALL_TO_ALL:
		st = ragged(e, in, res, all, n, rank);
		break;
	case OP_COLLECTIVE_REDUCE:
		st = collective_reduce(e, in, res, all, n, rank);
		break;
	default:
		st = collective_broadcast(e, in, res, all, n);
		break;
	}
	spmd_depart(e, meet);
	hloi_free(pub);
	return st;
}

hloi_status kernel_collective(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *res = NULL;
	hloi_status st = value_result(e, f, in, &res);
	if (st != HLOI_OK)
		return st;
	if (e->spmd)
		return collective_spmd(e, in, ops, res);
	if (instr_attr(in, ATTR_SLICE_SIZES)) {
		value_zero(res);
		permute_inplace(in, ops, &ops, 1, 0, res);
		return HLOI_OK;
	}
	hloi_literal *const *const one[1] = { ops };
	/* op-specific: each collective alone (one participant) */
	switch (in->op) {
	case OP_RAGGED_ALL_TO_ALL:
		return ragged(e, in, res, one, 1, 0);
	case OP_COLLECTIVE_REDUCE:
		return collective_reduce(e, in, res, one, 1, 0);
	case OP_COLLECTIVE_BROADCAST:
		return collective_broadcast(e, in, res, one, 1);
	case OP_ALL_GATHER_START:
		put_operands(res->elems[0], ops, in->nops);
		put_operands(res->elems[1], ops, in->nops);
		break;
	case OP_COLLECTIVE_PERMUTE:
		if (self_pair(in))
			put_operands(res, ops, in->nops);
		else
			value_zero(res);
		break;
	case OP_COLLECTIVE_PERMUTE_START:
		value_zero(res);
		put_operands(res->elems[0], ops, in->nops);
		if (self_pair(in))
			put_operands(res->elems[1], ops, in->nops);
		break;
	default:
		put_operands(res, ops, in->nops);
		break;
	}
	return HLOI_OK;
}

static hloi_status async_done(engine *e, const instr *in, const hloi_literal *op, hloi_literal *res);

hloi_status kernel_done(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *res = NULL;
	hloi_status st = value_result(e, f, in, &res);
	if (st != HLOI_OK)
		return st;
	const hloi_literal *src = ops[0];
	if (in->op == OP_ASYNC_DONE)
		return async_done(e, in, src, res);
	if (in->op == OP_COPY_DONE)
		src = src->elems[0];
	else if (in->op != OP_ALL_REDUCE_DONE)
		src = src->elems[1];
	value_copy(res, src);
	return HLOI_OK;
}

hloi_status kernel_device_id(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *res = NULL;
	hloi_status st = value_result(e, f, in, &res);
	if (st != HLOI_OK)
		return st;
	uint32_t id = 0;
	if (e->spmd)
		id = (uint32_t)(in->op == OP_REPLICA_ID ? e->spmd->replica : e->spmd->partition);
	memcpy(res->data, &id, sizeof id);
	return HLOI_OK;
}

hloi_status kernel_copy_start(const kernel_ctx *kc)
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
	value_copy(res->elems[0], ops[0]);
	value_copy(res->elems[1], ops[0]);
	return HLOI_OK;
}

hloi_status kernel_after_all(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *res = NULL;
	return value_result(e, f, in, &res);
}

hloi_status kernel_add_dependency(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *res = NULL;
	hloi_status st = value_result(e, f, in, &res);
	if (st == HLOI_OK)
		value_copy(res, ops[0]);
	return st;
}

/* The async-start a chain of async-updates and an async-done begins with. */
static const instr *async_chain_start(const instr *in)
{
	while (in->op != OP_ASYNC_START && in->nops > 0 && in->ops[0].def)
		in = in->ops[0].def;
	return in->op == OP_ASYNC_START ? in : NULL;
}

/* Whether an async-start's or async-update's value holds the result: it
 * has all of comp's operands and its result is not left for later. */
static int async_has_result(const instr *in, const computation *comp)
{
	return in->result->tuple[0].ntuple == comp->nparams && !async_result_pending(in->result, comp->root->result);
}

/* Runs comp on args into dest. */
static hloi_status async_run(engine *e, const instr *in, const computation *comp, hloi_literal *const *args,
			     hloi_literal *dest)
{
	if (e->depth >= EVAL_MAX_DEPTH) {
		diag_error_where(e->ctx, NULL, "calls nested deeper than %d (instruction '%s')", EVAL_MAX_DEPTH,
				 in->name);
		return HLOI_EUNSUPPORTED;
	}
	hloi_literal *r = NULL;
	int owned = 0;
	e->depth++;
	hloi_status st = eval_computation(e, comp, args, NULL, &r, &owned);
	e->depth--;
	if (st != HLOI_OK)
		return st;
	value_copy(dest, r);
	if (owned)
		value_drop(e, r);
	return HLOI_OK;
}

/* async-start and async-update: ((operands so far), result, context
 * zeros). The computation runs at the first of the chain that holds all
 * its operands and a place for its result (XLA's newer syntax brings the
 * operands in updates and may leave the result `()` until the done);
 * later ones pass the result on. */
hloi_status kernel_async_start(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *res = NULL;
	hloi_status st = value_result(e, f, in, &res);
	if (st != HLOI_OK)
		return st;
	const instr *start = async_chain_start(in);
	const computation *comp = start ? instr_called(start, ATTR_CALLS, 0) : NULL;
	if (!comp)
		return kernel_none(kc);
	value_zero(res);
	hloi_literal *held = res->elems[0];
	int nbefore = 0;
	if (in->op == OP_ASYNC_UPDATE) {
		const hloi_literal *prev = ops[0]->elems[0];
		for (; (size_t)nbefore < prev->nelems && (size_t)nbefore < held->nelems; nbefore++)
			value_copy(held->elems[nbefore], prev->elems[nbefore]);
		for (int k = 1; k < in->nops && (size_t)(nbefore + k - 1) < held->nelems; k++)
			value_copy(held->elems[nbefore + k - 1], ops[k]);
		if (async_has_result(in->ops[0].def, comp)) {
			value_copy(res->elems[1], ops[0]->elems[1]);
			return HLOI_OK;
		}
	} else {
		for (int k = 0; k < in->nops && (size_t)k < held->nelems; k++)
			value_copy(held->elems[k], ops[k]);
	}
	if (!async_has_result(in, comp))
		return HLOI_OK;
	/* a start runs on its operands as they are */
	return async_run(e, in, comp, in->op == OP_ASYNC_START ? ops : held->elems, res->elems[1]);
}

/* async-done: the result its async op holds, or the computation run on
 * the operands the chain gathered when none does. */
static hloi_status async_done(engine *e, const instr *in, const hloi_literal *op, hloi_literal *res)
{
	const instr *start = async_chain_start(in);
	const computation *comp = start ? instr_called(start, ATTR_CALLS, 0) : NULL;
	if (!comp || async_has_result(in->ops[0].def, comp)) {
		value_copy(res, op->elems[1]);
		return HLOI_OK;
	}
	return async_run(e, in, comp, op->elems[0]->elems, res);
}
