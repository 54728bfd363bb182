/* Index conversion between multi-indices and buffer positions: strided for
 * untiled layouts (the fast path), tile by tile for tiled ones. */
#include "core/index.h"

#include <string.h>

#include "util/checked.h"

int index_is_strided(const shape *s)
{
	return s->layout.ntiles == 0;
}

void index_strides(const shape *s, int64_t *strides)
{
	int64_t scale = 1;
	for (int i = 0; i < s->rank; i++) {
		int d = (int)s->layout.minor_to_major[i];
		strides[d] = scale;
		scale *= shape_padded_dim(s, d);
	}
}

/* --- tiles ----------------------------------------------------------------- */

/* The physical dimensions (and coordinates of idx, if given), most major
 * first. */
static int physical(const shape *s, const int64_t *idx, int64_t *d, int64_t *e)
{
	int n = s->rank;
	for (int j = 0; j < n; j++) {
		int dim = (int)s->layout.minor_to_major[n - 1 - j];
		d[j] = shape_padded_dim(s, dim);
		if (e)
			e[j] = idx[dim];
	}
	return n;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	return a / b + (a % b != 0);
}

/* Applies tile `tl` to dimensions d[0..*n) and, when e is given,
 * coordinates e; fills L when given. Nonzero for an invalid tile or an
 * overflowing size (d is then unspecified). */
static int step(const tile *tl, int *n, int64_t *d, int64_t *e, index_level *L)
{
	int k = tl->n, r = *n;
	if (k < 1 || k > HLOI_MAX_RANK || tl->dims[k - 1] < 1)
		return 1;
	int ext = k > r ? k - r : 0;
	if (ext) {
		memmove(d + ext, d, (size_t)r * sizeof *d);
		if (e)
			memmove(e + ext, e, (size_t)r * sizeof *e);
		for (int j = 0; j < ext; j++) {
			d[j] = 1;
			if (e)
				e[j] = 0;
		}
		r += ext;
	}
	if (L) {
		L->ext = ext;
		L->n = r;
		L->k = k;
		memcpy(L->d, d, (size_t)r * sizeof *d);
	}
	/* combine `*` dimensions into the next more minor one */
	int base = r - k, w = base, kc = 0;
	int64_t accd = 1, acce = 0, t[HLOI_MAX_RANK];
	for (int j = 0; j < k; j++) {
		int64_t dj;
		if (checked_mul_i64(accd, d[base + j], &dj))
			return 1;
		if (e)
			acce = acce * d[base + j] + e[base + j];
		if (L)
			L->star[j] = tl->dims[j] < 0;
		if (tl->dims[j] < 0) {
			if (tl->dims[j] != -1)
				return 1;
			accd = dj;
			continue;
		}
		if (tl->dims[j] == 0)
			return 1;
		d[w] = dj;
		if (e)
			e[w] = acce;
		w++;
		t[kc++] = tl->dims[j];
		accd = 1;
		acce = 0;
	}
	/* tile indices, then within-tile indices */
	int nc = w;
	if (nc + kc > INDEX_MAX_TILED)
		return 1;
	for (int j = 0; j < kc; j++) {
		int64_t x = d[base + j];
		d[base + j] = ceil_div(x, t[j]);
		d[nc + j] = t[j];
		if (e) {
			int64_t y = e[base + j];
			e[base + j] = y / t[j];
			e[nc + j] = y % t[j];
		}
	}
	*n = nc + kc;
	if (L) {
		L->kc = kc;
		memcpy(L->t, t, (size_t)kc * sizeof *t);
		L->out_rank = *n;
		memcpy(L->out, d, (size_t)*n * sizeof *d);
	}
	return 0;
}

/* Undoes level L on coordinates e (L->out_rank of them, L->n - L->ext
 * after); returns PAD_BOUND when they are padding of this level's tiles,
 * PAD_EXT when the padding lies in the leading size-1 dimensions the tile
 * added (no index of the shape before names it). */
enum { PAD_BOUND = 1, PAD_EXT = 2 };

static int unstep(const index_level *L, int64_t *e)
{
	int base = L->n - L->k, nc = base + L->kc, pad = 0;
	int64_t comb[HLOI_MAX_RANK];
	for (int j = 0; j < L->kc; j++)
		comb[j] = e[base + j] * L->t[j] + e[nc + j];
	/* split each combined coordinate back, most minor first; the most
	 * major dimension of a chain keeps the quotient (padding shows as a
	 * coordinate at or beyond its bound) */
	int r = L->kc - 1;
	for (int j = L->k - 1; j >= 0;) {
		int64_t x = comb[r--];
		int i = j;
		while (i > 0 && L->star[i - 1])
			i--;
		for (int m = j; m > i; m--) {
			e[base + m] = x % L->d[base + m];
			x /= L->d[base + m];
		}
		e[base + i] = x;
		j = i - 1;
	}
	for (int j = 0; j < L->n; j++)
		if (e[j] >= L->d[j])
			pad |= PAD_BOUND;
	if (L->ext) {
		for (int j = 0; j < L->ext; j++)
			if (e[j] != 0)
				pad |= PAD_EXT;
		memmove(e, e + L->ext, (size_t)(L->n - L->ext) * sizeof *e);
	}
	return pad;
}

int index_tiling_init(index_tiling *t, const shape *s)
{
	t->nlevels = 0;
	t->overflow = 0;
	t->rank0 = physical(s, NULL, t->d0, NULL);
	int64_t d[INDEX_MAX_TILED];
	memcpy(d, t->d0, (size_t)t->rank0 * sizeof *d);
	int n = t->rank0;
	for (int i = 0; i < s->layout.ntiles && i < HLOI_MAX_TILES; i++) {
		if (step(&s->layout.tiles[i], &n, d, NULL, &t->lv[i])) {
			t->overflow = 1;
			return 1;
		}
		t->nlevels++;
	}
	int64_t p = 1;
	for (int j = 0; j < n; j++) {
		if (checked_mul_i64(p, d[j], &p)) {
			t->overflow = 1;
			return 1;
		}
	}
	t->elements = p;
	return 0;
}

int index_tiling_dims(const index_tiling *t, int level, const int64_t **dims)
{
	if (level <= 0 || t->nlevels == 0) {
		*dims = t->d0;
		return t->rank0;
	}
	const index_level *L = &t->lv[(level < t->nlevels ? level : t->nlevels) - 1];
	*dims = L->out;
	return L->out_rank;
}

/* Row-major coordinates of linear in the final dimensions; then levels
 * undone down to `level`; returns the count and ORs padding into *pad. */
static int coords(const index_tiling *t, int64_t linear, int level, int64_t *e, int *pad)
{
	const int64_t *d;
	int n = index_tiling_dims(t, t->nlevels, &d);
	for (int j = n - 1; j >= 0; j--) {
		e[j] = linear % d[j];
		linear /= d[j];
	}
	for (int i = t->nlevels - 1; i >= level && i >= 0; i--) {
		*pad |= unstep(&t->lv[i], e);
		n = t->lv[i].n - t->lv[i].ext;
	}
	return n;
}

int index_tiling_coords(const index_tiling *t, int64_t linear, int level, int64_t *out)
{
	int pad = 0;
	return coords(t, linear, level < 0 ? 0 : level, out, &pad);
}

int index_tiling_from_linear(const index_tiling *t, const shape *s, int64_t linear, int64_t *idx)
{
	if (linear >= t->elements) {
		for (int d = 0; d < s->rank; d++)
			idx[d] = 0;
		return 2;
	}
	int64_t e[INDEX_MAX_TILED];
	int pad = 0;
	int n = coords(t, linear, 0, e, &pad);
	for (int j = 0; j < n && j < s->rank; j++) {
		int dim = (int)s->layout.minor_to_major[n - 1 - j];
		idx[dim] = e[j];
		if (e[j] >= s->dims[dim])
			pad |= PAD_BOUND;
	}
	return pad & PAD_EXT ? 3 : pad ? 1 : 0;
}

static int64_t tiled_to_linear(const shape *s, const int64_t *idx)
{
	int64_t d[INDEX_MAX_TILED], e[INDEX_MAX_TILED];
	int n = physical(s, idx, d, e);
	for (int i = 0; i < s->layout.ntiles; i++)
		step(&s->layout.tiles[i], &n, d, e, NULL);
	int64_t linear = 0;
	for (int j = 0; j < n; j++)
		linear = linear * d[j] + e[j];
	return linear;
}

/* --- conversions ------------------------------------------------------------ */

int64_t index_to_linear(const shape *s, const int64_t *idx)
{
	if (s->layout.ntiles)
		return tiled_to_linear(s, idx);
	int64_t linear = 0, scale = 1;
	for (int i = 0; i < s->rank; i++) {
		int d = (int)s->layout.minor_to_major[i];
		linear += idx[d] * scale;
		scale *= shape_padded_dim(s, d);
	}
	return linear;
}

int index_from_linear(const shape *s, int64_t linear, int64_t *idx)
{
	if (s->layout.ntiles) {
		index_tiling t;
		if (index_tiling_init(&t, s))
			return 1;
		return index_tiling_from_linear(&t, s, linear, idx);
	}
	int padding = 0;
	int64_t rest = linear;
	for (int i = 0; i < s->rank; i++) {
		int d = (int)s->layout.minor_to_major[i];
		int64_t size = shape_padded_dim(s, d);
		idx[d] = rest % size;
		rest /= size;
		if (idx[d] >= s->dims[d])
			padding = 1;
	}
	if (rest > 0 || (s->rank == 0 && linear > 0)) {
		/* beyond the padded shape: L(n)'s tail padding */
		for (int d = 0; d < s->rank; d++)
			idx[d] = 0;
		return 2;
	}
	return padding;
}

int index_next(int rank, const int64_t *dims, int64_t *idx)
{
	for (int d = rank - 1; d >= 0; d--) {
		if (++idx[d] < dims[d])
			return 1;
		idx[d] = 0;
	}
	return 0;
}

int index_next_minor_to_major(const shape *s, int64_t *idx)
{
	for (int i = 0; i < s->rank; i++) {
		int d = (int)s->layout.minor_to_major[i];
		if (++idx[d] < s->dims[d])
			return 1;
		idx[d] = 0;
	}
	return 0;
}
