/* The executor of fused regions (fx.h): the domain in output 0's physical
 * order, size-1 dimensions dropped, neighbours merged while every input,
 * output and iota stays regular; row segments of `chunk` elements, or, when
 * an input's layout disagrees with the walk's, block x block1 tiles of two
 * dimensions whose strided inputs are gathered per tile with register
 * transposes; threads over the segments or tiles. Also fast_elementwise
 * (eval/fast/fast.h): one instruction as a region of one member. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core/index.h"
#include "eval/fast/fx.h"
#include "util/alloc.h"

/* Below this many elements per thread, another thread does not pay. */
#define FAST_MIN_PER_THREAD ((int64_t)1 << 16)
/* Outputs at least this large are written with non-temporal stores: larger
 * than a core's share of the last-level cache, they would only evict the
 * inputs on their way to memory. */
#define FAST_STREAM_BYTES ((int64_t)8 << 20)
/* Tiles when an input's layout disagrees with the walk's: FAST_TILE elements
 * along the walk's innermost dimension (runs of the outputs and of inputs in
 * their layout), as many along the strided input's dense dimension as fit
 * FAST_TILE_BYTES (its runs: 1024 elements of 4 bytes), so that a gathered
 * tile stays in L2. Chosen by measurement (64 x 1024 beat square tiles of
 * 64 to 256 and streaming stores). */
#define FAST_TILE 64
#define FAST_TILE_BYTES ((int64_t)256 << 10)
/* In tiles, the rows this many ahead are prefetched: each row is a short
 * run far from the last, too short for the hardware prefetcher (measured
 * 21 -> 16 ms on one thread for colmajor). */
#define FAST_PREFETCH_ROWS 8
/* A row segment: this many bytes of the widest member (4096: 1024 f32). */
#define FAST_CHUNK_BYTES 4096
/* The row buffers of a thread stay within this many bytes (L1) by
 * shortening the segments of long chains, down to FAST_CHUNK_MIN elements. */
#define FAST_ROWS_BYTES ((int64_t)32 << 10)
#define FAST_CHUNK_MIN 128
#define FX_MAX_THREADS 64

void fast_default_tuning(fast_tuning *t)
{
	memset(t, 0, sizeof *t);
	t->stream_bytes = FAST_STREAM_BYTES;
	t->tile = FAST_TILE;
	t->tile_bytes = FAST_TILE_BYTES;
	t->chunk_bytes = FAST_CHUNK_BYTES;
	t->min_per_thread = FAST_MIN_PER_THREAD;
}

/* Asked once: sysconf reads a file each time, three system calls that
 * cost more than a small instruction (they dominated while loops). */
int fx_machine_threads(void)
{
	static _Atomic int cached;
	int c = atomic_load_explicit(&cached, memory_order_relaxed);
	if (c == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		c = n < 1 ? 1 : n > FX_MAX_THREADS ? FX_MAX_THREADS : (int)n;
		atomic_store_explicit(&cached, c, memory_order_relaxed);
	}
	return c;
}

/* --- setup ------------------------------------------------------------------------ */

void fx_exec_free(fx_exec *x)
{
	hloi_free(x->mem);
	x->mem = NULL;
}

static int64_t round_up(int64_t v, int64_t m)
{
	return (v + m - 1) / m * m;
}

int fx_setup(fx_exec *x, const fx_region *r, int threads, const fast_tuning *tuning)
{
	fast_tuning deflt;
	if (!tuning) {
		fast_default_tuning(&deflt);
		tuning = &deflt;
	}
	memset(x, 0, sizeof *x);
	x->r = r;
	int nin = r->nin, nout = r->nout, nmem = r->nmem;
	/* The iota members each add a stride vector (1 along their dimension)
	 * so that merging keeps their dimension apart. */
	int niota = 0;
	for (int m = 0; m < nmem; m++)
		niota += r->mem[m].kind == FX_IOTA;
	int nv = nin + nout + niota;
	size_t vec = sizeof(int64_t[HLOI_MAX_RANK]);
	size_t bytes = (size_t)nv * vec * 2 + (size_t)(nin + nout + 2 * nmem) + (size_t)nin * sizeof(int64_t) + 64;
	char *mem = hloi_calloc(1, bytes);
	if (!mem)
		return -1;
	x->mem = mem;
	int64_t (*full)[HLOI_MAX_RANK] = (int64_t (*)[HLOI_MAX_RANK])(void *)mem;
	int64_t (*st)[HLOI_MAX_RANK] = full + nv;
	x->ist = st;
	x->ost = st + nin;
	char *p = (char *)(st + nv);
	x->row_off = (int64_t *)(void *)p;
	p += (size_t)nin * sizeof(int64_t);
	x->mode = (int8_t *)p;
	p += nin;
	x->stream = (int8_t *)p;
	p += nout;
	x->direct = (int8_t *)p;
	p += nmem;
	x->iota_at = (int8_t *)p;

	for (int i = 0; i < nin; i++)
		memcpy(full[i], r->in[i].st, vec);
	for (int o = 0; o < nout; o++)
		memcpy(full[nin + o], r->out[o].st, vec);
	int iv = nin + nout;
	for (int m = 0; m < nmem; m++) {
		x->iota_at[m] = -1;
		if (r->mem[m].kind != FX_IOTA)
			continue;
		int d = r->mem[m].iota_dim;
		if (d >= 0 && d < r->rank)
			full[iv][d] = 1;
		iv++;
	}

	/* Physical order of output 0, size-1 dimensions dropped, neighbours
	 * merged. */
	int rank = 0;
	for (int i = 0; i < r->rank; i++) {
		int d = (int)r->order[i];
		if (r->dims[d] == 1)
			continue;
		if (rank > 0) {
			int merge = 1;
			for (int v = 0; v < nv && merge; v++)
				if (full[v][d] != st[v][rank - 1] * x->n[rank - 1])
					merge = 0;
			if (merge) {
				x->n[rank - 1] *= r->dims[d];
				continue;
			}
		}
		x->n[rank] = r->dims[d];
		for (int v = 0; v < nv; v++)
			st[v][rank] = full[v][d];
		rank++;
	}
	if (rank == 0) {
		x->n[0] = 1;
		for (int v = 0; v < nv; v++)
			st[v][0] = 0;
		rank = 1;
	}
	x->rank = rank;

	/* An input strided along the walk's inner dimension (its layout
	 * disagrees with the outputs'): walk dimension 0 and the dimension along
	 * which that input is densest in tiles, gathering each strided input's
	 * tile so that rows are read contiguously. */
	int q = -1;
	if (rank >= 2) {
		for (int i = 0; i < nin && q < 0; i++) {
			int64_t s0 = x->ist[i][0] < 0 ? -x->ist[i][0] : x->ist[i][0];
			if (s0 == 0 || s0 == 1)
				continue;
			int64_t best = s0;
			for (int d = 1; d < rank; d++) {
				int64_t sd = x->ist[i][d] < 0 ? -x->ist[i][d] : x->ist[i][d];
				if (sd != 0 && sd < best) {
					best = sd;
					q = d;
				}
			}
		}
	}
	if (q > 0) {
		int64_t n = x->n[q];
		for (int v = 0; v < nv; v++) {
			int64_t sq = st[v][q];
			for (int d = q; d > 1; d--)
				st[v][d] = st[v][d - 1];
			st[v][1] = sq;
		}
		for (int d = q; d > 1; d--)
			x->n[d] = x->n[d - 1];
		x->n[1] = n;
		x->tiled = 1;
	}
	/* the iota members' dimension in the walk */
	iv = nin + nout;
	for (int m = 0; m < nmem; m++) {
		if (r->mem[m].kind != FX_IOTA)
			continue;
		for (int d = 0; d < rank; d++)
			if (st[iv][d] == 1 && x->n[d] > 1)
				x->iota_at[m] = (int8_t)d;
		iv++;
	}

	int64_t wmax = 1;
	for (int m = 0; m < nmem; m++)
		if (r->mem[m].w > wmax)
			wmax = r->mem[m].w;
	for (int i = 0; i < nin; i++)
		if (r->in[i].w > wmax)
			wmax = r->in[i].w;
	x->wslot = wmax;

	/* In place: an output over an input's buffer must read it exactly where
	 * it writes (same strides, same width); rows then go through the row
	 * buffers and are written after every member of the row is computed. */
	for (int o = 0; o < nout; o++) {
		for (int i = 0; i < nin; i++) {
			if (!r->out[o].base || r->in[i].base != r->out[o].base)
				continue;
			if (r->in[i].w != r->out[o].w)
				return 1;
			for (int d = 0; d < r->rank; d++)
				if (r->dims[d] != 1 && r->in[i].st[d] != r->out[o].st[d])
					return 1;
			x->inplace = 1;
		}
	}

	int64_t total = 1;
	for (int d = 0; d < rank; d++)
		total *= x->n[d];
	if (total == 0) {
		x->threads = 1;
		return 0;
	}
	int64_t scratch = 0;
	if (x->tiled) {
		x->block = tuning->tile > 0 ? tuning->tile : FAST_TILE;
		x->block1 = (tuning->tile_bytes > 0 ? tuning->tile_bytes : FAST_TILE_BYTES) / (x->block * wmax);
		if (x->block1 < 1)
			x->block1 = 1;
		/* no tile larger than the array */
		if (x->block > x->n[0])
			x->block = x->n[0];
		if (x->block1 > x->n[1])
			x->block1 = x->n[1];
		x->chunk = x->block;
		for (int i = 0; i < nin; i++) {
			int64_t s0 = x->ist[i][0];
			if (s0 != 0 && s0 != 1) {
				x->mode[i] = 1;
				x->ngathered++;
				x->row_off[i] = scratch;
				scratch += round_up(x->block * x->block1 * r->in[i].w, 64);
			}
		}
		x->units = total / (x->n[0] * x->n[1]) * ((x->n[0] + x->block - 1) / x->block) *
			   ((x->n[1] + x->block1 - 1) / x->block1);
	} else {
		int64_t cb = tuning->chunk_bytes > 0 ? tuning->chunk_bytes : FAST_CHUNK_BYTES;
		int64_t c = cb / wmax;
		if (r->nslots > 0 && c * wmax * r->nslots > FAST_ROWS_BYTES) {
			c = FAST_ROWS_BYTES / (wmax * r->nslots);
			if (c < FAST_CHUNK_MIN)
				c = FAST_CHUNK_MIN;
			if (c > cb / wmax)
				c = cb / wmax;
		}
		if (c < 1)
			c = 1;
		if (c >= 64)
			c &= ~(int64_t)31;
		x->chunk = c;
		for (int i = 0; i < nin; i++) {
			int64_t s0 = x->ist[i][0];
			if (s0 != 0 && s0 != 1) {
				x->mode[i] = 2;
				x->nstrided++;
				x->row_off[i] = scratch;
				scratch += round_up(c * r->in[i].w, 64);
			}
		}
		x->units = total / x->n[0] * ((x->n[0] + c - 1) / c);
	}
	x->slots_off = scratch;
	scratch += round_up(x->chunk * wmax, 64) * r->nslots;
	x->ptrs_off = scratch;
	scratch += (int64_t)(nmem + nin + nout) * (int64_t)(sizeof(void *) + sizeof(int64_t));
	x->scratch_bytes = round_up(scratch, 64);

	/* Outputs: streamed when large and written in long runs (tiles write
	 * short runs of many rows, where streaming stores lose: measured);
	 * computed straight into the output when nothing reads it in place. */
	for (int o = 0; o < nout; o++) {
		x->stream[o] = fx_can_stream() && !x->tiled && x->ost[o][0] == 1 && r->out[o].bytes >= tuning->stream_bytes;
		x->nstreamed += x->stream[o];
	}
	for (int m = 0; m < nmem; m++) {
		int o = r->mem[m].out;
		x->direct[m] = o >= 0 && r->mem[m].kind != FX_ALIAS && !x->inplace && !x->stream[o] && x->ost[o][0] == 1;
	}
	x->prefetch = x->tiled;

	int64_t nt = threads > 0 ? threads : fx_machine_threads();
	if (nt > FX_MAX_THREADS)
		nt = FX_MAX_THREADS;
	x->min_per_thread = tuning->min_per_thread > 0 ? tuning->min_per_thread : 1;
	if (nt > total / x->min_per_thread)
		nt = total / x->min_per_thread;
	if (nt > x->units)
		nt = x->units;
	if (nt < 1)
		nt = 1;
	x->threads = (int)nt;
	return 0;
}

/* --- running ----------------------------------------------------------------------- */

/* A thread's share: units [lo, hi), its scratch, its row pointers. */
typedef struct fx_thread {
	const fx_exec *x;
	int64_t lo, hi;
	char *scratch;
	const char **rp; /* per member: its row in this segment */
	int64_t *rs;     /* ... and that row's stride (0 or 1) */
	const char **ip; /* per input */
	int64_t *is;
	char **op;       /* per output */
} fx_thread;

static inline char *slot_row(const fx_thread *t, int slot)
{
	const fx_exec *x = t->x;
	return t->scratch + x->slots_off + (int64_t)slot * round_up(x->chunk * x->wslot, 64);
}

/* Computes the members on a row of n elements (the inputs' rows in t->ip /
 * t->is, the outputs' in t->op) and writes the outputs. idx is the walk's
 * index of the row's first element (iota). */
static void eval_row(const fx_thread *t, const int64_t *idx, int64_t n)
{
	const fx_exec *x = t->x;
	const fx_region *r = x->r;
	const void *a[FX_MAX_ARGS];
	int64_t s[FX_MAX_ARGS];
	for (int m = 0; m < r->nmem; m++) {
		const fx_member *mb = &r->mem[m];
		for (int k = 0; k < mb->nargs; k++) {
			int g = mb->arg[k];
			if (g >= 0) {
				a[k] = t->rp[g];
				s[k] = t->rs[g];
			} else {
				a[k] = t->ip[-1 - g];
				s[k] = t->is[-1 - g];
			}
		}
		char *dst = x->direct[m] ? t->op[mb->out] : mb->slot >= 0 ? slot_row(t, mb->slot) : NULL;
		switch (mb->kind) {
		case FX_ALIAS:
			if (x->inplace && mb->out >= 0 && dst) {
				/* read before any output of the row is written */
				if (s[0])
					memcpy(dst, a[0], (size_t)(n * mb->w));
				else
					fx_fill_row(dst, a[0], n, mb->w);
				t->rp[m] = dst;
				t->rs[m] = 1;
			} else {
				t->rp[m] = a[0];
				t->rs[m] = s[0];
			}
			break;
		case FX_IOTA: {
			int d = x->iota_at[m];
			mb->iota(dst, d < 0 ? 0 : idx[d], d == 0 ? 1 : 0, n);
			t->rp[m] = dst;
			t->rs[m] = 1;
			break;
		}
		case FX_KERNEL:
			mb->fn(dst, a, s, n, mb);
			t->rp[m] = dst;
			t->rs[m] = 1;
			break;
		}
	}
	for (int o = 0; o < r->nout; o++) {
		int m = r->out[o].member;
		if (x->direct[m])
			continue;
		int w = r->out[o].w;
		int64_t ds = x->ost[o][0];
		if (ds == 1 && t->rs[m] == 1) {
			fx_copy_row(t->op[o], t->rp[m], n, w, x->stream[o]);
		} else if (ds == 1 && x->stream[o] && r->mem[m].slot >= 0) {
			/* one value (a broadcast): filled in the cache, streamed out */
			char *row = slot_row(t, r->mem[m].slot);
			if (row != t->rp[m])
				fx_fill_row(row, t->rp[m], n, w);
			fx_copy_row(t->op[o], row, n, w, 1);
		} else if (ds == 1) {
			fx_fill_row(t->op[o], t->rp[m], n, w);
		} else {
			fx_scatter_row(t->op[o], ds, t->rp[m], t->rs[m], n, w);
		}
	}
}

/* Offsets of the walk's index idx (dimensions from `from` on). */
static inline int64_t offset(const int64_t *st, const int64_t *idx, int from, int rank)
{
	int64_t off = 0;
	for (int d = from; d < rank; d++)
		off += idx[d] * st[d];
	return off;
}

/* Row segments: unit u is segment u % nchunks of row u / nchunks. */
static void run_rows(fx_thread *t)
{
	const fx_exec *x = t->x;
	const fx_region *r = x->r;
	int rank = x->rank;
	int64_t c = x->chunk, n0 = x->n[0], nch = (n0 + c - 1) / c;
	int64_t idx[HLOI_MAX_RANK];
	int64_t u = t->lo, outer = u / nch;
	idx[0] = u % nch * c;
	for (int d = 1; d < rank; d++) {
		idx[d] = outer % x->n[d];
		outer /= x->n[d];
	}
	for (; u < t->hi; u++) {
		int64_t len = n0 - idx[0] < c ? n0 - idx[0] : c;
		for (int i = 0; i < r->nin; i++) {
			const char *p = r->in[i].base + offset(x->ist[i], idx, 0, rank) * r->in[i].w;
			if (x->mode[i] == 2) {
				char *row = t->scratch + x->row_off[i];
				fx_scatter_row(row, 1, p, x->ist[i][0], len, r->in[i].w);
				t->ip[i] = row;
				t->is[i] = 1;
			} else {
				t->ip[i] = p;
				t->is[i] = x->ist[i][0];
			}
		}
		for (int o = 0; o < r->nout; o++)
			t->op[o] = r->out[o].base + offset(x->ost[o], idx, 0, rank) * r->out[o].w;
		eval_row(t, idx, len);
		idx[0] += c;
		if (idx[0] >= n0) {
			idx[0] = 0;
			for (int d = 1; d < rank; d++) {
				if (++idx[d] < x->n[d])
					break;
				idx[d] = 0;
			}
		}
	}
}

/* Prefetches the cache lines of a run of n elements of w bytes at p (for
 * writing when `write`). */
static inline void prefetch_run(const char *p, int64_t n, int64_t w, int write)
{
#if defined(__GNUC__)
	for (int64_t k = 0; k < n * w; k += 64) {
		if (write)
			__builtin_prefetch(p + k, 1);
		else
			__builtin_prefetch(p + k, 0);
	}
#else
	(void)p, (void)n, (void)w, (void)write;
#endif
}

/* Tiles: unit u is tile (u % nt0) along dimension 0, (u / nt0) % nt1 along
 * dimension 1, of the outer index u / (nt0 * nt1). */
static void run_tiles(fx_thread *t)
{
	const fx_exec *x = t->x;
	const fx_region *r = x->r;
	int rank = x->rank;
	int64_t B = x->block, B1 = x->block1, n0 = x->n[0], n1 = x->n[1];
	int64_t nt0 = (n0 + B - 1) / B, nt1 = (n1 + B1 - 1) / B1;
	int64_t idx[HLOI_MAX_RANK];
	memset(idx, 0, sizeof idx);
	for (int64_t u = t->lo; u < t->hi; u++) {
		int64_t i0 = u % nt0 * B, j0 = u / nt0 % nt1 * B1, outer = u / nt0 / nt1;
		for (int d = 2; d < rank; d++) {
			idx[d] = outer % x->n[d];
			outer /= x->n[d];
		}
		idx[0] = i0;
		idx[1] = j0;
		int64_t ni = n0 - i0 < B ? n0 - i0 : B, nj = n1 - j0 < B1 ? n1 - j0 : B1;
		for (int i = 0; i < r->nin; i++) {
			const char *p = r->in[i].base + offset(x->ist[i], idx, 0, rank) * r->in[i].w;
			if (x->mode[i] == 1) {
				char *tl = t->scratch + x->row_off[i];
				fx_gather(tl, p, r->in[i].w, ni, nj, x->ist[i][0], x->ist[i][1], B);
				t->ip[i] = tl;
				t->is[i] = 1;
			} else {
				t->ip[i] = p;
				t->is[i] = x->ist[i][0];
			}
		}
		for (int o = 0; o < r->nout; o++)
			t->op[o] = r->out[o].base + offset(x->ost[o], idx, 0, rank) * r->out[o].w;
		for (int64_t j = 0; j < nj; j++) {
			if (j > 0) {
				for (int i = 0; i < r->nin; i++)
					t->ip[i] += (x->mode[i] == 1 ? B : x->ist[i][1]) * r->in[i].w;
				for (int o = 0; o < r->nout; o++)
					t->op[o] += x->ost[o][1] * r->out[o].w;
			}
			if (x->prefetch && j + FAST_PREFETCH_ROWS < nj) {
				for (int o = 0; o < r->nout; o++)
					if (x->ost[o][0] == 1)
						prefetch_run(t->op[o] + FAST_PREFETCH_ROWS * x->ost[o][1] * r->out[o].w, ni,
							     r->out[o].w, 1);
				for (int i = 0; i < r->nin; i++)
					if (x->mode[i] == 0 && x->ist[i][0] == 1 && x->ist[i][1] != 0)
						prefetch_run(t->ip[i] + FAST_PREFETCH_ROWS * x->ist[i][1] * r->in[i].w, ni,
							     r->in[i].w, 0);
			}
			idx[1] = j0 + j;
			eval_row(t, idx, ni);
		}
	}
}

static void *worker(void *arg)
{
	fx_thread *t = arg;
	if (t->x->tiled)
		run_tiles(t);
	else
		run_rows(t);
	if (t->x->nstreamed)
		fx_stream_fence();
	return NULL;
}

int fx_run(const fx_exec *x)
{
	const fx_region *r = x->r;
	int nt = x->threads;
	if (x->units == 0)
		return 0;
	fx_thread th[FX_MAX_THREADS];
	char *scratch = hloi_aligned_alloc((size_t)(x->scratch_bytes * nt));
	if (!scratch)
		return 1;
	for (int k = 0; k < nt; k++) {
		fx_thread *t = &th[k];
		t->x = x;
		t->lo = x->units * k / nt;
		t->hi = x->units * (k + 1) / nt;
		t->scratch = scratch + (int64_t)k * x->scratch_bytes;
		char *p = t->scratch + x->ptrs_off;
		t->rp = (const char **)(void *)p;
		p += (size_t)r->nmem * sizeof(void *);
		t->ip = (const char **)(void *)p;
		p += (size_t)r->nin * sizeof(void *);
		t->op = (char **)(void *)p;
		p += (size_t)r->nout * sizeof(void *);
		t->rs = (int64_t *)(void *)p;
		p += (size_t)r->nmem * sizeof(int64_t);
		t->is = (int64_t *)(void *)p;
	}
	fx_fork(nt, th, sizeof *th, worker);
	hloi_aligned_free(scratch);
	return 0;
}

/* --- runs for a reduction ----------------------------------------------------------- */

int fx_runs_setup(fx_exec *x, const fx_region *r, int dim, const fast_tuning *tuning)
{
	fast_tuning deflt;
	if (!tuning) {
		fast_default_tuning(&deflt);
		tuning = &deflt;
	}
	memset(x, 0, sizeof *x);
	x->r = r;
	int nin = r->nin, nout = r->nout, nmem = r->nmem, rank = r->rank;
	if (rank < 1 || rank > HLOI_MAX_RANK || dim < 0 || dim >= rank)
		return -1;
	size_t vec = sizeof(int64_t[HLOI_MAX_RANK]);
	size_t bytes = (size_t)(nin + nout) * vec + (size_t)(nin + nout + 2 * nmem) + (size_t)nin * sizeof(int64_t) + 64;
	char *mem = hloi_calloc(1, bytes);
	if (!mem)
		return -1;
	x->mem = mem;
	int64_t (*st)[HLOI_MAX_RANK] = (int64_t (*)[HLOI_MAX_RANK])(void *)mem;
	x->ist = st;
	x->ost = st + nin;
	char *p = (char *)(st + nin + nout);
	x->row_off = (int64_t *)(void *)p;
	p += (size_t)nin * sizeof(int64_t);
	x->mode = (int8_t *)p;
	p += nin;
	x->stream = (int8_t *)p;
	p += nout;
	x->direct = (int8_t *)p;
	p += nmem;
	x->iota_at = (int8_t *)p;
	/* walk dimension 0 is the run's; the others in the domain's order */
	x->rank = rank;
	x->wdim[0] = (int8_t)dim;
	for (int d = 0, k = 1; d < rank; d++)
		if (d != dim)
			x->wdim[k++] = (int8_t)d;
	for (int k = 0; k < rank; k++) {
		int d = x->wdim[k];
		x->n[k] = r->dims[d];
		for (int i = 0; i < nin; i++)
			x->ist[i][k] = r->in[i].st[d];
		for (int o = 0; o < nout; o++)
			x->ost[o][k] = r->out[o].st[d];
	}
	for (int m = 0; m < nmem; m++) {
		x->iota_at[m] = -1;
		if (r->mem[m].kind != FX_IOTA)
			continue;
		for (int k = 0; k < rank; k++)
			if (x->wdim[k] == r->mem[m].iota_dim && x->n[k] > 1)
				x->iota_at[m] = (int8_t)k;
	}
	int64_t wmax = 1;
	for (int m = 0; m < nmem; m++)
		if (r->mem[m].w > wmax)
			wmax = r->mem[m].w;
	for (int i = 0; i < nin; i++)
		if (r->in[i].w > wmax)
			wmax = r->in[i].w;
	x->wslot = wmax;
	int64_t cb = tuning->chunk_bytes > 0 ? tuning->chunk_bytes : FAST_CHUNK_BYTES;
	int64_t c = cb / wmax;
	if (r->nslots > 0 && c * wmax * r->nslots > FAST_ROWS_BYTES) {
		c = FAST_ROWS_BYTES / (wmax * r->nslots);
		if (c < FAST_CHUNK_MIN)
			c = FAST_CHUNK_MIN;
		if (c > cb / wmax)
			c = cb / wmax;
	}
	if (c < 1)
		c = 1;
	if (c >= 64)
		c &= ~(int64_t)31;
	x->chunk = c;
	int64_t scratch = 0;
	for (int i = 0; i < nin; i++) {
		int64_t s0 = x->ist[i][0];
		if (s0 != 0 && s0 != 1) {
			x->mode[i] = 2;
			x->nstrided++;
			x->row_off[i] = scratch;
			scratch += round_up(c * r->in[i].w, 64);
		}
	}
	x->slots_off = scratch;
	scratch += round_up(x->chunk * wmax, 64) * r->nslots;
	x->ptrs_off = scratch;
	scratch += (int64_t)(nmem + nin + nout) * (int64_t)(sizeof(void *) + sizeof(int64_t));
	x->scratch_bytes = round_up(scratch, 64);
	x->threads = 1;
	x->units = 1;
	return 0;
}

const char *fx_run_at(const fx_exec *x, char *scratch, const int64_t *idx, int64_t n, int64_t *stride)
{
	const fx_region *r = x->r;
	fx_thread t;
	int64_t widx[HLOI_MAX_RANK];
	t.x = x;
	t.scratch = scratch;
	char *p = scratch + x->ptrs_off;
	t.rp = (const char **)(void *)p;
	p += (size_t)r->nmem * sizeof(void *);
	t.ip = (const char **)(void *)p;
	p += (size_t)r->nin * sizeof(void *);
	t.op = (char **)(void *)p;
	p += (size_t)r->nout * sizeof(void *);
	t.rs = (int64_t *)(void *)p;
	p += (size_t)r->nmem * sizeof(int64_t);
	t.is = (int64_t *)(void *)p;
	for (int k = 0; k < x->rank; k++)
		widx[k] = idx[x->wdim[k]];
	for (int i = 0; i < r->nin; i++) {
		const char *q = r->in[i].base + offset(x->ist[i], widx, 0, x->rank) * r->in[i].w;
		if (x->mode[i] == 2) {
			char *row = scratch + x->row_off[i];
			fx_scatter_row(row, 1, q, x->ist[i][0], n, r->in[i].w);
			t.ip[i] = row;
			t.is[i] = 1;
		} else {
			t.ip[i] = q;
			t.is[i] = x->ist[i][0];
		}
	}
	for (int o = 0; o < r->nout; o++)
		t.op[o] = r->out[o].base + offset(x->ost[o], widx, 0, x->rank) * r->out[o].w;
	eval_row(&t, widx, n);
	*stride = t.rs[r->nmem - 1];
	return t.rp[r->nmem - 1];
}

/* --- one instruction as a region ------------------------------------------------------ */

int fx_operand_map(const instr *in, int k, int8_t *map)
{
	const shape *s = in->ops[k].def->result;
	if (shape_is_tuple(s) || s->rank > HLOI_MAX_RANK)
		return 1;
	if (in->op == OP_TRANSPOSE) {
		const int_list *perm = instr_ints(in, ATTR_DIMENSIONS);
		if (!perm || perm->n != s->rank)
			return 1;
		/* result dimension i reads operand dimension perm[i] */
		for (int i = 0; i < perm->n; i++) {
			if (perm->v[i] < 0 || perm->v[i] >= s->rank)
				return 1;
			map[perm->v[i]] = (int8_t)i;
		}
		return 0;
	}
	for (int j = 0; j < s->rank; j++)
		map[j] = in->ops[k].out_dim[j];
	return 0;
}

int fx_input_strides(const shape *s, const int8_t *map, int rank, const int64_t *dims, int64_t *st)
{
	int64_t own[HLOI_MAX_RANK];
	memset(st, 0, sizeof(int64_t) * HLOI_MAX_RANK);
	/* tiled layouts: positions are not strides (core/index.h) */
	if (shape_is_tuple(s) || s->rank > HLOI_MAX_RANK || !index_is_strided(s))
		return 1;
	index_strides(s, own);
	for (int j = 0; j < s->rank; j++) {
		int d = map[j];
		if (d < 0 || d >= rank)
			return 1;
		if (s->dims[j] == 1)
			continue;
		if (s->dims[j] != dims[d])
			return 1;
		/* two operand dimensions into one result dimension (a broadcast
		 * with dimensions={0,0}, which XLA's verifier accepts) read its
		 * diagonal: their strides add */
		st[d] += own[j];
	}
	return 0;
}

int fast_elementwise(const instr *in, hloi_literal *out, hloi_literal *const *ops, int threads,
		     const fast_tuning *tuning)
{
	const shape *os = &out->shape;
	fx_member m;
	fx_input inputs[FX_MAX_ARGS];
	fx_output output;
	fx_region r;
	fx_exec x;
	if (shape_is_tuple(os) || os->rank > HLOI_MAX_RANK || in->nops > FX_MAX_ARGS ||
	    fx_member_init(&m, in, tuning && tuning->generic))
		return 1;
	int64_t total;
	if (shape_element_count(os, &total))
		return 1;
	if (total == 0)
		return 0;
	if (!out->data)
		return 1;
	memset(&r, 0, sizeof r);
	r.rank = os->rank;
	for (int d = 0; d < os->rank; d++) {
		r.dims[d] = os->dims[d];
		r.order[d] = os->layout.minor_to_major[d];
	}
	m.nargs = in->nops;
	for (int k = 0; k < in->nops; k++) {
		int8_t map[HLOI_MAX_RANK];
		if (!ops[k] || !ops[k]->data || fx_operand_map(in, k, map) ||
		    fx_input_strides(&ops[k]->shape, map, os->rank, os->dims, inputs[k].st))
			return 1;
		inputs[k].base = ops[k]->data;
		inputs[k].w = etype_byte_width(ops[k]->shape.type);
		m.arg[k] = -1 - k;
	}
	m.slot = 0;
	m.out = 0;
	output.base = out->data;
	output.w = etype_byte_width(os->type);
	output.member = 0;
	output.bytes = (int64_t)out->nbytes;
	int8_t id[HLOI_MAX_RANK];
	for (int d = 0; d < os->rank; d++)
		id[d] = (int8_t)d;
	if (fx_input_strides(os, id, os->rank, os->dims, output.st))
		return 1;
	r.nin = in->nops;
	r.in = inputs;
	r.nmem = 1;
	r.mem = &m;
	r.nout = 1;
	r.out = &output;
	r.nslots = 1;
	int rc = fx_setup(&x, &r, threads, tuning);
	if (rc == 0)
		rc = fx_run(&x);
	fx_exec_free(&x);
	return rc != 0;
}

int fast_relayout(hloi_literal *dst, const hloi_literal *src, int threads, const fast_tuning *tuning)
{
	const shape *os = &dst->shape;
	fx_member m;
	fx_input input;
	fx_output output;
	fx_region r;
	fx_exec x;
	if (shape_is_tuple(os) || shape_is_tuple(&src->shape) || os->rank > HLOI_MAX_RANK ||
	    !shape_same_dims(os, &src->shape) || etype_byte_width(os->type) != etype_byte_width(src->shape.type))
		return 1;
	int64_t total;
	if (shape_element_count(os, &total))
		return 1;
	if (total == 0)
		return 0;
	if (!dst->data || !src->data)
		return 1;
	memset(&r, 0, sizeof r);
	memset(&m, 0, sizeof m);
	r.rank = os->rank;
	int8_t id[HLOI_MAX_RANK];
	for (int d = 0; d < os->rank; d++) {
		r.dims[d] = os->dims[d];
		r.order[d] = os->layout.minor_to_major[d];
		id[d] = (int8_t)d;
	}
	if (fx_input_strides(&src->shape, id, os->rank, os->dims, input.st) ||
	    fx_input_strides(os, id, os->rank, os->dims, output.st))
		return 1;
	m.kind = FX_ALIAS;
	m.nargs = 1;
	m.arg[0] = -1;
	m.w = etype_byte_width(os->type);
	m.type = m.from = os->type;
	m.slot = 0;
	m.out = 0;
	input.base = src->data;
	input.w = m.w;
	output.base = dst->data;
	output.w = m.w;
	output.member = 0;
	output.bytes = (int64_t)dst->nbytes;
	r.nin = 1;
	r.in = &input;
	r.nmem = 1;
	r.mem = &m;
	r.nout = 1;
	r.out = &output;
	r.nslots = 1;
	int rc = fx_setup(&x, &r, threads, tuning);
	if (rc == 0)
		rc = fx_run(&x);
	fx_exec_free(&x);
	return rc != 0;
}

/* A reshape keeps the row-major order of the elements. Both shapes' dims
 * (size 1 set aside), from the innermost, are cut into common factors
 * (f32[6,4] -> f32[2,3,4] gives 4, 3, 2); when each factor lies within one
 * dimension of each shape, the reshape is a copy over the factors with
 * each side's strides, in the result's physical order. */
int fast_reshape(hloi_literal *out, const hloi_literal *op, int threads, const fast_tuning *tuning)
{
	const shape *os = &out->shape, *is = &op->shape;
	int64_t total, itotal;
	if (shape_is_tuple(os) || shape_is_tuple(is) || !index_is_strided(os) || !index_is_strided(is) ||
	    etype_byte_width(os->type) != etype_byte_width(is->type) ||
	    shape_element_count(os, &total) || shape_element_count(is, &itotal) || total != itotal)
		return 1;
	if (total == 0)
		return 0;
	if (!out->data || !op->data)
		return 1;
	int64_t ad[HLOI_MAX_RANK], as[HLOI_MAX_RANK], bd[HLOI_MAX_RANK], bs[HLOI_MAX_RANK], st[HLOI_MAX_RANK];
	int na = 0, nb = 0;
	index_strides(is, st);
	for (int d = 0; d < is->rank; d++)
		if (is->dims[d] != 1) {
			ad[na] = is->dims[d];
			as[na++] = st[d];
		}
	index_strides(os, st);
	for (int d = 0; d < os->rank; d++)
		if (os->dims[d] != 1) {
			bd[nb] = os->dims[d];
			bs[nb++] = st[d];
		}
	fx_region r;
	fx_input input;
	fx_output output;
	fx_member m;
	memset(&r, 0, sizeof r);
	memset(&input, 0, sizeof input);
	memset(&output, 0, sizeof output);
	memset(&m, 0, sizeof m);
	int nf = 0, i = na - 1, j = nb - 1;
	int64_t ra = i >= 0 ? ad[i] : 1, rb = j >= 0 ? bd[j] : 1, sa = i >= 0 ? as[i] : 0, sb = j >= 0 ? bs[j] : 0;
	while (i >= 0 && j >= 0) {
		int64_t f = ra < rb ? ra : rb;
		if (ra % f || rb % f || nf == HLOI_MAX_RANK)
			return 1;
		r.dims[nf] = f;
		input.st[nf] = sa;
		output.st[nf] = sb;
		nf++;
		ra /= f;
		rb /= f;
		sa *= f;
		sb *= f;
		if (ra == 1 && --i >= 0) {
			ra = ad[i];
			sa = as[i];
		}
		if (rb == 1 && --j >= 0) {
			rb = bd[j];
			sb = bs[j];
		}
	}
	if (i >= 0 || j >= 0)
		return 1;
	/* the result's physical order: its strides ascending */
	r.rank = nf;
	for (int k = 0; k < nf; k++) {
		int at = k;
		while (at > 0 && output.st[r.order[at - 1]] > output.st[k]) {
			r.order[at] = r.order[at - 1];
			at--;
		}
		r.order[at] = k;
	}
	m.kind = FX_ALIAS;
	m.nargs = 1;
	m.arg[0] = -1;
	m.w = etype_byte_width(os->type);
	m.type = m.from = os->type;
	m.slot = 0;
	m.out = 0;
	input.base = op->data;
	input.w = m.w;
	output.base = out->data;
	output.w = m.w;
	output.member = 0;
	output.bytes = (int64_t)out->nbytes;
	r.nin = 1;
	r.in = &input;
	r.nmem = 1;
	r.mem = &m;
	r.nout = 1;
	r.out = &output;
	r.nslots = 1;
	fx_exec x;
	int rc = fx_setup(&x, &r, threads, tuning);
	if (rc == 0)
		rc = fx_run(&x);
	fx_exec_free(&x);
	return rc != 0;
}

void fast_copy_run(void *dst, const void *src, size_t bytes, int stream)
{
	fx_copy_row(dst, src, (int64_t)bytes, 1, stream && fx_can_stream());
}

void fast_stream_fence(void)
{
	fx_stream_fence();
}

int fast_can_stream(void)
{
	return fx_can_stream();
}

int fast_streams(int64_t bytes)
{
	return fx_can_stream() && bytes >= FAST_STREAM_BYTES;
}

/* The data-movement ops' strided copy: a region of one copying member over
 * the box n, in dst's memory order (a negative dst stride turned around
 * together with src's: a copy may visit its pairs in any order). */
int fast_copy(void *dst, const int64_t *ds, const void *src, const int64_t *ss, const int64_t *n, int rank, int w,
	      int threads, const fast_tuning *tuning)
{
	if (rank < 0 || rank > HLOI_MAX_RANK || (w != 1 && w != 2 && w != 4 && w != 8 && w != 16))
		return 1;
	int64_t total = 1;
	for (int d = 0; d < rank; d++) {
		if (n[d] < 0)
			return 1;
		total *= n[d];
	}
	if (total == 0)
		return 0;
	char *o = dst;
	const char *a = src;
	fx_region r;
	fx_input input;
	fx_output output;
	fx_member m;
	memset(&r, 0, sizeof r);
	memset(&input, 0, sizeof input);
	memset(&output, 0, sizeof output);
	memset(&m, 0, sizeof m);
	int k = 0;
	for (int d = 0; d < rank; d++) {
		if (n[d] == 1)
			continue;
		int64_t dsd = ds[d], ssd = ss[d];
		if (dsd < 0) {
			o += (n[d] - 1) * dsd * w;
			a += (n[d] - 1) * ssd * w;
			dsd = -dsd;
			ssd = -ssd;
		}
		r.dims[k] = n[d];
		output.st[k] = dsd;
		input.st[k] = ssd;
		/* dst's physical order: its strides ascending */
		int at = k;
		while (at > 0 && output.st[r.order[at - 1]] > dsd) {
			r.order[at] = r.order[at - 1];
			at--;
		}
		r.order[at] = k;
		k++;
	}
	r.rank = k;
	m.kind = FX_ALIAS;
	m.nargs = 1;
	m.arg[0] = -1;
	m.w = w;
	m.type = m.from = ET_U8;
	m.slot = 0;
	m.out = 0;
	input.base = a;
	input.w = w;
	output.base = o;
	output.w = w;
	output.member = 0;
	/* streaming stores from FAST_STREAM_BYTES of the copy */
	output.bytes = total * w;
	r.nin = 1;
	r.in = &input;
	r.nmem = 1;
	r.mem = &m;
	r.nout = 1;
	r.out = &output;
	r.nslots = 1;
	fx_exec x;
	int rc = fx_setup(&x, &r, threads, tuning);
	if (rc == 0)
		rc = fx_run(&x);
	fx_exec_free(&x);
	return rc != 0;
}
