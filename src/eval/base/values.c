/* The engine's memory: every buffer it holds is counted against one budget
 * (--max-memory), and the most it held is its peak; values are freed after
 * their last use. Tuples and reshape views share their operands' buffers
 * (shells). Also the copies between layouts that inputs, tuples and
 * aliased results need.
 *
 * The pool: a freed array (EVAL_SPARE_MIN bytes or more) is kept, up to
 * EVAL_POOL_MAX of them (the oldest goes first), for the next value of
 * exactly its size, whose pages are then already there (fresh pages cost
 * the kernel's zeroing, which on a virtual machine also faults the host's
 * memory in: 40% of a MobileNetV2 training step's time when every step
 * took new pages). Pooled arrays stay counted in `live` and in the budget;
 * they never raise the peak: before a new buffer or the executor's
 * scratch would take `live` above the most held so far, pooled arrays
 * leave the pool (oldest first) until it does not or none is left, so the
 * peak is at most what it would be without the pool, and within the
 * plan's (`hloi plan`). An array leaving the pool is not freed while the
 * budget has room for it: it joins the kept arrays (below), outside
 * `live` and the peak. A value of a size that no spare array has takes
 * one of another size (the largest not larger, else the smallest larger:
 * a shrunk array gives its tail's pages back, to be faulted in again by
 * the next that grows), remapped to its size (hloi_aligned_resize: the
 * pages it keeps stay), and
 * a tuple's arrays are taken and given back one by one, so that a
 * training step's mix of sizes (batch-norm's tuples among them) needs no
 * new pages once one step has run.
 *
 * At the end of a run the pool goes to the module (value_pool_keep), at
 * most EVAL_POOL_MAX arrays and at most the run's peak of values in bytes
 * (memory the run held at once anyway), and the next run takes it
 * (value_pool_take): a value of a kept array's size takes that array,
 * counted then as a new buffer; the others are freed first when the
 * budget needs their memory (the kept arrays and `live` together stay
 * within the budget). hloi_module_free frees what is kept. */
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core/index.h"
#include "eval/base/engine.h"
#include "eval/fast/fast.h"
#include "util/alloc.h"
#include "util/strbuf.h"

/* Freed arrays at least this large are kept for reuse (smaller ones cost
 * malloc nothing to get back). */
#define EVAL_SPARE_MIN ((int64_t)64 << 10)

uint64_t eval_default_budget(void)
{
	/* asked once: sysconf(_SC_PHYS_PAGES) is a sysinfo system call, a
	 * third of a tiny module's run */
	static _Atomic uint64_t budget;
	uint64_t b = atomic_load_explicit(&budget, memory_order_relaxed);
	if (b)
		return b;
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
	b = pages <= 0 || size <= 0 ? UINT64_MAX : (uint64_t)pages / 2 * (uint64_t)size;
	atomic_store_explicit(&budget, b, memory_order_relaxed);
	return b;
}

/* Reserves `bytes` of the budget; a refusal names the instruction being
 * evaluated, what it needs and what is held. */
static hloi_status reserve(engine *e, int64_t bytes)
{
	uint64_t need = e->live + (uint64_t)bytes;
	if (bytes < 0 || need < e->live || need > e->budget) {
		char what[512] = "";
		if (e->cur)
			snprintf(what, sizeof what, " at instruction '%s' in computation '%s'", e->cur->name,
				 e->cur_comp ? e->cur_comp->name : "?");
		if (bytes < 0 || need < e->live)
			diag_error_where(e->ctx, NULL, "memory budget exceeded%s: need more than %llu bytes, budget %llu bytes",
					 what, (unsigned long long)INT64_MAX, (unsigned long long)e->budget);
		else
			diag_error_where(e->ctx, NULL,
					 "memory budget exceeded%s: need %llu bytes (a new buffer of %llu bytes; %llu held, %llu of them inputs and constants), budget %llu bytes",
					 what, (unsigned long long)need, (unsigned long long)bytes,
					 (unsigned long long)e->live, (unsigned long long)e->held,
					 (unsigned long long)e->budget);
		return HLOI_ENOMEM;
	}
	e->live = need;
	if (need > e->peak)
		e->peak = need;
	return HLOI_OK;
}

/* The executor's scratch (a few rows and tiles per thread, bounded by its
 * tuning) counts in the peak but is not refused by the budget, which
 * bounds values: a program whose values fit runs. */
static void pool_make_room(engine *e, uint64_t bytes);
static void kept_free(engine *e, int k);

hloi_status value_reserve(engine *e, int64_t bytes)
{
	pool_make_room(e, bytes > 0 ? (uint64_t)bytes : 0);
	e->live += bytes > 0 ? (uint64_t)bytes : 0;
	if (e->live > e->peak)
		e->peak = e->live;
	return HLOI_OK;
}

void value_unreserve(engine *e, int64_t bytes)
{
	e->live -= bytes > 0 ? (uint64_t)bytes : 0;
}

/* Buffer bytes of a value (tuples: the sum over their elements); -1 on overflow. */
int64_t value_bytes(const shape *s)
{
	if (shape_is_tuple(s)) {
		int64_t total = 0;
		for (int i = 0; i < s->ntuple; i++) {
			int64_t b = value_bytes(&s->tuple[i]);
			if (b < 0 || total > INT64_MAX - b)
				return -1;
			total += b;
		}
		return total;
	}
	int64_t bytes;
	return shape_byte_size(s, &bytes) ? -1 : bytes;
}

hloi_status value_oom(engine *e, int64_t bytes)
{
	diag_error_where(e->ctx, NULL, "out of memory allocating %lld bytes", (long long)bytes);
	return HLOI_ENOMEM;
}

/* Takes pooled array k out of `live`: it moves to the kept arrays when
 * `bytes` more and they fit in the budget (keep), else it is freed. */
static void pool_evict(engine *e, int k, int keep, uint64_t bytes)
{
	hloi_literal *lit = e->pool[k];
	e->live -= (uint64_t)lit->nbytes;
	memmove(&e->pool[k], &e->pool[k + 1], (size_t)(e->npool - k - 1) * sizeof *e->pool);
	e->npool--;
	uint64_t after = e->live + bytes + e->kept_bytes + (uint64_t)lit->nbytes;
	if (keep && e->nkept < EVAL_POOL_MAX && after >= e->live && after <= e->budget) {
		e->kept[e->nkept++] = lit;
		e->kept_bytes += (uint64_t)lit->nbytes;
		return;
	}
	literal_destroy(lit);
}

/* Takes pooled arrays out of `live`, oldest first, until `bytes` more fit
 * under the peak so far and the budget (or none is left): they go on as
 * kept arrays while the budget has room for them. */
static void pool_make_room(engine *e, uint64_t bytes)
{
	while (e->npool > 0 && (e->live + bytes > e->peak || e->live + bytes > e->budget || e->live + bytes < e->live))
		pool_evict(e, 0, 1, bytes);
}

void value_free_spare(engine *e)
{
	while (e->npool > 0)
		pool_evict(e, e->npool - 1, 0, 0);
	while (e->nkept > 0)
		kept_free(e, e->nkept - 1);
}

void value_pool_take(engine *e)
{
	hloi_literal *b = atomic_exchange(&e->m->kept, NULL);
	if (!b)
		return;
	for (size_t i = 0; i < b->nelems && e->nkept < EVAL_POOL_MAX; i++) {
		e->kept[e->nkept++] = b->elems[i];
		e->kept_bytes += (uint64_t)b->elems[i]->nbytes;
		b->elems[i] = NULL;
	}
	literal_destroy(b);
}

static void kept_free(engine *e, int k)
{
	e->kept_bytes -= (uint64_t)e->kept[k]->nbytes;
	literal_destroy(e->kept[k]);
	e->kept[k] = e->kept[--e->nkept];
}

void value_pool_keep(engine *e)
{
	uint64_t room = e->peak > e->held ? e->peak - e->held : 0, bytes = 0;
	hloi_literal *b = hloi_calloc(1, sizeof *b);
	hloi_literal **el = b ? hloi_calloc(EVAL_POOL_MAX, sizeof *el) : NULL;
	size_t n = 0;
	/* the newest pooled arrays first, then the kept ones not taken */
	for (int k = e->npool - 1; k >= 0; k--) {
		hloi_literal *lit = e->pool[k];
		e->live -= (uint64_t)lit->nbytes;
		if (el && n < EVAL_POOL_MAX && bytes + lit->nbytes <= room) {
			bytes += lit->nbytes;
			el[n++] = lit;
		} else {
			literal_destroy(lit);
		}
	}
	e->npool = 0;
	while (e->nkept > 0) {
		hloi_literal *lit = e->kept[e->nkept - 1];
		if (el && n < EVAL_POOL_MAX && bytes + lit->nbytes <= room) {
			bytes += lit->nbytes;
			el[n++] = lit;
			e->kept_bytes -= (uint64_t)lit->nbytes;
			e->nkept--;
		} else {
			kept_free(e, e->nkept - 1);
		}
	}
	if (!el || n == 0) {
		hloi_free(el);
		hloi_free(b);
		return;
	}
	b->elems = el;
	b->nelems = n;
	hloi_literal *none = NULL;
	/* another run of the module may have kept its own meanwhile */
	if (!atomic_compare_exchange_strong(&e->m->kept, &none, b))
		literal_destroy(b);
}

/* Array `lit` of the pool taken as a new value of shape s. */
static hloi_literal *reuse(hloi_literal *lit, const shape *s)
{
	lit->shape = *s;
	lit->elided = 0;
	for (int d = 0; d < HLOI_MAX_RANK; d++)
		lit->dynamic_size[d] = d < s->rank ? s->dims[d] : 0;
	literal_fill_padding(lit);
	return lit;
}

/* A tuple of new values (value_new's tuple case): the same literal as
 * literal_create_uninit's, its arrays taken one by one, so that they come
 * from the pool and go back to it (a batch-norm's results). */
static hloi_status tuple_new(engine *e, const shape *s, hloi_literal **out)
{
	size_t n = s->ntuple > 0 ? (size_t)s->ntuple : 0;
	hloi_literal *t = hloi_calloc(1, sizeof *t);
	if (!t)
		return value_oom(e, (int64_t)sizeof *t);
	t->shape = *s;
	t->shape.ntuple = (int)n;
	t->shape.tuple = NULL;
	t->nelems = n;
	if (n == 0) {
		*out = t;
		return HLOI_OK;
	}
	t->elems = hloi_calloc(n, sizeof *t->elems);
	t->tuple_shapes = hloi_calloc(n, sizeof *t->tuple_shapes);
	if (!t->elems || !t->tuple_shapes) {
		literal_destroy(t);
		return value_oom(e, (int64_t)(n * sizeof *t->elems));
	}
	for (size_t i = 0; i < n; i++) {
		hloi_status st = value_new(e, &s->tuple[i], &t->elems[i]);
		if (st != HLOI_OK) {
			t->shape.tuple = t->tuple_shapes;
			t->shape.ntuple = (int)i;
			t->nelems = i;
			value_drop(e, t);
			return st;
		}
		t->tuple_shapes[i] = t->elems[i]->shape;
	}
	t->shape.tuple = t->tuple_shapes;
	*out = t;
	return HLOI_OK;
}

/* A new value of shape `s`, within the budget: a pooled array when its
 * buffer has the size asked for (it is still counted in e->live), the
 * newest first. Its elements are left unset; padding holds the padding
 * value. */
hloi_status value_new(engine *e, const shape *s, hloi_literal **out)
{
	int64_t bytes = value_bytes(s);
	if (shape_is_tuple(s) && bytes >= 0)
		return tuple_new(e, s, out);
	if (!shape_is_tuple(s) && s->has_layout && bytes >= EVAL_SPARE_MIN) {
		for (int k = e->npool - 1; k >= 0; k--) {
			if ((int64_t)e->pool[k]->nbytes != bytes)
				continue;
			hloi_literal *lit = e->pool[k];
			memmove(&e->pool[k], &e->pool[k + 1], (size_t)(e->npool - k - 1) * sizeof *e->pool);
			e->npool--;
			*out = reuse(lit, s);
			return HLOI_OK;
		}
	}
	/* the previous run's arrays give way to what this run needs */
	while (e->nkept > 0 && (bytes < 0 || e->live + (uint64_t)bytes + e->kept_bytes > e->budget))
		kept_free(e, e->nkept - 1);
	/* pooled memory is better spent on this value than refused, and
	 * never raises the peak */
	if (bytes < 0)
		value_free_spare(e);
	else
		pool_make_room(e, (uint64_t)bytes);
	hloi_status st = reserve(e, bytes);
	if (st != HLOI_OK)
		return st;
	for (int k = 0; k < e->nkept && !shape_is_tuple(s) && s->has_layout; k++)
		if ((int64_t)e->kept[k]->nbytes == bytes) {
			hloi_literal *lit = e->kept[k];
			e->kept_bytes -= (uint64_t)lit->nbytes;
			e->kept[k] = e->kept[--e->nkept];
			*out = reuse(lit, s);
			return HLOI_OK;
		}
	/* else a spare array of another size, remapped: the largest not
	 * larger (only what it lacks is new memory), else the smallest larger
	 * (shrinking gives pages back) */
	if (!shape_is_tuple(s) && s->has_layout && bytes >= EVAL_SPARE_MIN && e->nkept + e->npool > 0) {
		hloi_literal *best = NULL;
		int at = -1;
		for (int k = 0; k < e->nkept + e->npool; k++) {
			hloi_literal *c = k < e->nkept ? e->kept[k] : e->pool[k - e->nkept];
			int64_t n = (int64_t)c->nbytes, b = best ? (int64_t)best->nbytes : 0;
			if (!best || (n <= bytes ? b > bytes || n > b : b > bytes && n < b)) {
				best = c;
				at = k;
			}
		}
		size_t old = best->nbytes;
		void *d = hloi_aligned_resize(best->data, (size_t)bytes);
		if (d) {
			if (at < e->nkept) {
				e->kept_bytes -= (uint64_t)old;
				e->kept[at] = e->kept[--e->nkept];
			} else {
				at -= e->nkept;
				e->live -= (uint64_t)old;
				memmove(&e->pool[at], &e->pool[at + 1], (size_t)(e->npool - at - 1) * sizeof *e->pool);
				e->npool--;
			}
			best->data = d;
			best->nbytes = (size_t)bytes;
			*out = reuse(best, s);
			return HLOI_OK;
		}
	}
	st = literal_create_uninit(out, s);
	if (st != HLOI_OK) {
		e->live -= (uint64_t)bytes;
		if (st == HLOI_ENOMEM)
			return value_oom(e, bytes);
		strbuf b = STRBUF_INIT;
		shape_print(&b, s, 1);
		diag_error_where(e->ctx, NULL, "cannot make a value of shape %s", b.oom ? "?" : sb_str(&b));
		sb_free(&b);
		return st;
	}
	return HLOI_OK;
}

/* Frees a value new_value made, or keeps it in the pool. */
void value_drop(engine *e, hloi_literal *lit)
{
	if (!lit)
		return;
	/* a tuple's arrays one by one, into the pool (tuple_new) */
	if (shape_is_tuple(&lit->shape) && lit->nelems == (size_t)lit->shape.ntuple && !lit->borrowed) {
		for (size_t i = 0; i < lit->nelems; i++) {
			if (lit->elems[i]) {
				value_drop(e, lit->elems[i]);
				lit->elems[i] = NULL;
			} else {
				int64_t b = value_bytes(&lit->shape.tuple[i]);
				e->live -= b > 0 ? (uint64_t)b : 0;
			}
		}
		literal_destroy(lit);
		return;
	}
	if (!shape_is_tuple(&lit->shape) && lit->data && !lit->borrowed && !lit->elided && (int64_t)lit->nbytes >= EVAL_SPARE_MIN &&
	    value_bytes(&lit->shape) == (int64_t)lit->nbytes) {
		if (e->npool == EVAL_POOL_MAX)
			pool_evict(e, 0, 1, 0);
		e->pool[e->npool++] = lit;
		return;
	}
	int64_t bytes = value_bytes(&lit->shape);
	e->live -= bytes > 0 ? (uint64_t)bytes : 0;
	literal_destroy(lit);
}

void value_release(engine *e, frame *f, int pos)
{
	if (f->vals[pos] && f->owned[pos] == VAL_OWNED)
		value_drop(e, f->vals[pos]);
	else if (f->vals[pos] && f->owned[pos] == VAL_SHELL)
		value_shell_free(f->vals[pos]);
	f->vals[pos] = NULL;
	f->owned[pos] = VAL_BORROWED;
}

/* Shells hold no buffer of their own, so they are not counted against the
 * budget: what they point to already is. */
hloi_status value_tuple_shell(engine *e, const shape *s, hloi_literal *const *elems, int n, hloi_literal **out)
{
	hloi_literal *t = hloi_calloc(1, sizeof *t);
	*out = NULL;
	if (!t)
		return value_oom(e, (int64_t)sizeof *t);
	t->shape = *s;
	t->shape.ntuple = n;
	t->shape.tuple = NULL;
	t->nelems = (size_t)n;
	if (n > 0) {
		t->elems = hloi_calloc((size_t)n, sizeof *t->elems);
		t->tuple_shapes = hloi_calloc((size_t)n, sizeof *t->tuple_shapes);
		if (!t->elems || !t->tuple_shapes) {
			value_shell_free(t);
			return value_oom(e, (int64_t)n * (int64_t)(sizeof *t->elems + sizeof *t->tuple_shapes));
		}
		for (int k = 0; k < n; k++) {
			t->elems[k] = elems[k];
			t->tuple_shapes[k] = elems[k]->shape;
		}
		t->shape.tuple = t->tuple_shapes;
	}
	*out = t;
	return HLOI_OK;
}

hloi_status value_view(engine *e, const shape *s, const hloi_literal *of, hloi_literal **out)
{
	hloi_literal *v = hloi_calloc(1, sizeof *v);
	*out = NULL;
	if (!v)
		return value_oom(e, (int64_t)sizeof *v);
	v->shape = *s;
	v->data = of->data;
	v->nbytes = of->nbytes;
	v->elided = of->elided;
	memcpy(v->dynamic_size, of->dynamic_size, sizeof v->dynamic_size);
	*out = v;
	return HLOI_OK;
}

void value_shell_free(hloi_literal *lit)
{
	if (!lit)
		return;
	hloi_free(lit->elems);
	hloi_free(lit->tuple_shapes);
	hloi_free(lit);
}

/* Equal layouts everywhere (tuples element by element). */
int value_same_layouts(const shape *a, const shape *b)
{
	if (shape_is_tuple(a) || shape_is_tuple(b)) {
		if (!shape_is_tuple(a) || !shape_is_tuple(b) || a->ntuple != b->ntuple)
			return 0;
		for (int i = 0; i < a->ntuple; i++)
			if (!value_same_layouts(&a->tuple[i], &b->tuple[i]))
				return 0;
		return 1;
	}
	return layout_equal(&a->layout, &b->layout);
}

/* Copies the values of src into dst (same type and dims; any layouts). */
void value_copy(hloi_literal *dst, const hloi_literal *src)
{
	if (shape_is_tuple(&dst->shape)) {
		for (size_t i = 0; i < dst->nelems && i < src->nelems; i++)
			value_copy(dst->elems[i], src->elems[i]);
		return;
	}
	memcpy(dst->dynamic_size, src->dynamic_size, sizeof dst->dynamic_size);
	if (dst->data == src->data)
		return;
	if (layout_equal(&dst->shape.layout, &src->shape.layout)) {
		if (dst->nbytes && dst->nbytes == src->nbytes)
			memcpy(dst->data, src->data, dst->nbytes);
		return;
	}
	if (fast_relayout(dst, src, 1, NULL) == 0)
		return;
	int64_t n;
	if (shape_element_count(&dst->shape, &n) || n == 0)
		return;
	size_t w = (size_t)etype_byte_width(dst->shape.type);
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	do
		memcpy(literal_element(dst, idx), literal_element(src, idx), w);
	while (index_next(dst->shape.rank, dst->shape.dims, idx));
}

/* Copies the array src into dst (same type and dims, another layout) with
 * the fast engine's tiled copy; nonzero when it does not cover the case. */
static int relayout_fast(const engine *e, hloi_literal *dst, hloi_literal *src)
{
	if (!e->fast || shape_is_tuple(&dst->shape) || dst->shape.type != src->shape.type)
		return 1;
	return fast_relayout(dst, src, e->threads, NULL);
}

/* `lit` in the layouts of `target`: lit itself (*owned = 0) when they agree,
 * else a converted copy (*owned = 1). */
hloi_status value_conform(engine *e, hloi_literal *lit, const shape *target, hloi_literal **out, int *owned)
{
	*owned = 0;
	*out = lit;
	int bounded = shape_is_array(target) && !shape_is_static(target);
	if (value_same_layouts(&lit->shape, target) && (!bounded || shape_same_dims(&lit->shape, target)))
		return HLOI_OK;
	hloi_status st = value_new(e, target, out);
	if (st != HLOI_OK) {
		*out = NULL;
		return st;
	}
	*owned = 1;
	if (bounded) {
		/* an input for a `<=N` parameter: its elements at their indices
		 * in a buffer of the bounds, its sizes the dynamic sizes */
		value_zero(*out);
		literal_fill_padding(*out);
		literal_copy_within_sizes(*out, lit);
		return HLOI_OK;
	}
	if (lit->elided || relayout_fast(e, *out, lit) != 0)
		value_copy(*out, lit);
	(*out)->elided = lit->elided;
	return HLOI_OK;
}

hloi_status value_result(engine *e, frame *f, const instr *in, hloi_literal **res)
{
	hloi_status st = value_new(e, in->result, res);
	if (st != HLOI_OK)
		return st;
	f->vals[in->position] = *res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}

void value_zero(hloi_literal *v)
{
	if (shape_is_tuple(&v->shape)) {
		for (size_t i = 0; i < v->nelems; i++)
			value_zero(v->elems[i]);
		return;
	}
	if (v->data && v->nbytes)
		memset(v->data, 0, v->nbytes);
}

/* A copy of `lit` of its own, within the budget. */
hloi_status value_clone(engine *e, const hloi_literal *lit, hloi_literal **out)
{
	hloi_status st = value_new(e, &lit->shape, out);
	if (st != HLOI_OK)
		return st;
	value_copy(*out, lit);
	return HLOI_OK;
}

hloi_status eval_scratch_begin(engine *e, const instr *in, hloi_literal *dest, int64_t bytes, hloi_literal **res,
			       void **scratch)
{
	*res = dest;
	*scratch = NULL;
	if (!dest) {
		hloi_status st = value_new(e, in->result, res);
		if (st != HLOI_OK)
			return st;
	}
	hloi_status st = value_reserve(e, bytes);
	if (st == HLOI_OK && !(*scratch = hloi_malloc((size_t)(bytes ? bytes : 1)))) {
		value_unreserve(e, bytes);
		st = value_oom(e, bytes);
	}
	if (st != HLOI_OK && *res != dest)
		value_drop(e, *res);
	return st;
}

hloi_status eval_scratch_finish(engine *e, frame *f, const instr *in, hloi_literal *dest, hloi_literal *res,
				void *scratch, int64_t bytes)
{
	hloi_free(scratch);
	value_unreserve(e, bytes);
	f->vals[in->position] = res;
	f->owned[in->position] = res != dest ? VAL_OWNED : VAL_BORROWED;
	return HLOI_OK;
}
