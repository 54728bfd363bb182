/* The evaluation plan (plan.h): schedule, fused regions, liveness, buffer
 * reuse and peak memory of a computation, and its text form (hloi plan). */
#include <stdlib.h>
#include <string.h>

#include "core/index.h"
#include "eval/base/engine.h"
#include "eval/fast/reduce.h"
#include "eval/plan/plan.h"
#include "text/dot.h"
#include "util/alloc.h"

/* --- building ------------------------------------------------------------------ */

/* A max-heap of instruction positions: a region takes its producers from
 * the latest down, so that every user of a candidate in the region is in it
 * before the candidate is considered. */
typedef struct heap {
	int *v;
	int n, cap;
} heap;

static int heap_push(heap *h, int x)
{
	if (h->n == h->cap) {
		int cap = h->cap ? 2 * h->cap : 64;
		int *v = hloi_malloc((size_t)cap * sizeof *v);
		if (!v)
			return -1;
		if (h->n)
			memcpy(v, h->v, (size_t)h->n * sizeof *v);
		hloi_free(h->v);
		h->v = v;
		h->cap = cap;
	}
	int i = h->n++;
	while (i > 0 && h->v[(i - 1) / 2] < x) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = x;
	return 0;
}

static int heap_pop(heap *h)
{
	int top = h->v[0], x = h->v[--h->n], i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] > h->v[c])
			c++;
		if (h->v[c] <= x)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

int plan_reshape_is_view(const shape *op, const shape *res)
{
	if (shape_is_tuple(op) || shape_is_tuple(res) || op->type != res->type || op->layout.n_padded ||
	    res->layout.n_padded || !index_is_strided(op) || !index_is_strided(res))
		return 0;
	/* The elements in row-major order must sit at increasing, contiguous
	 * buffer positions in both: each array's physical order is its
	 * logical order once size-1 dimensions are set aside. */
	const shape *s[2] = { op, res };
	for (int k = 0; k < 2; k++) {
		int last = s[k]->rank;  /* the previous (more minor) non-1 dimension */
		for (int i = 0; i < s[k]->rank; i++) {
			int d = (int)s[k]->layout.minor_to_major[i];
			if (s[k]->dims[d] == 1)
				continue;
			if (d >= last)
				return 0;
			last = d;
		}
	}
	return 1;
}

int plan_transpose_is_view(const shape *op, const shape *res, const int_list *perm)
{
	if (!perm || shape_is_tuple(op) || shape_is_tuple(res) || op->type != res->type || op->rank != res->rank ||
	    perm->n != res->rank || op->layout.n_padded || res->layout.n_padded || !index_is_strided(op) ||
	    !index_is_strided(res))
		return 0;
	/* result dimension j is operand dimension perm[j]: the same bytes when
	 * the operand's non-1 dimensions, minor first, are those of the
	 * result mapped through perm, in the same order */
	int a[HLOI_MAX_RANK], b[HLOI_MAX_RANK], na = 0, nb = 0;
	for (int i = 0; i < op->rank; i++) {
		int d = (int)op->layout.minor_to_major[i];
		if (op->dims[d] != 1)
			a[na++] = d;
		int r = (int)res->layout.minor_to_major[i];
		if (r < 0 || r >= perm->n || perm->v[r] < 0 || perm->v[r] >= op->rank)
			return 0;
		if (res->dims[r] != 1)
			b[nb++] = (int)perm->v[r];
	}
	if (na != nb)
		return 0;
	for (int i = 0; i < na; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

int plan_instr_is_view(const instr *in)
{
	if (in->nops != 1)
		return 0;
	const shape *op = in->ops[0].def->result;
	if (in->op == OP_RESHAPE)
		return plan_reshape_is_view(op, in->result);
	if (in->op == OP_TRANSPOSE)
		return plan_transpose_is_view(op, in->result, instr_ints(in, ATTR_DIMENSIONS));
	return 0;
}

/* Whether user u reads operand k at the elements it writes: the same dims,
 * the identity map (no dimension stretched). */
static int identity_read(const instr *u, int k)
{
	const shape *s = u->ops[k].def->result;
	int8_t map[HLOI_MAX_RANK];
	if (shape_is_tuple(s) || !shape_same_dims(s, u->result) || fx_operand_map(u, k, map))
		return 0;
	for (int j = 0; j < s->rank; j++)
		if (map[j] != j)
			return 0;
	return 1;
}

int eval_is_elementwise(opcode op)
{
	return opcode_has(op, OPF_ELEMENTWISE);
}

/* Whether the fast engine fuses `in`. */
static int fusible(const instr *in, int generic)
{
	fx_member m;
	/* a transpose that keeps every byte where it is is a view, not a copy */
	if (in->op == OP_TRANSPOSE && plan_instr_is_view(in))
		return 0;
	if (!eval_is_elementwise(in->op) || !opcode_is_evaluated(in->op) || shape_is_tuple(in->result) ||
	    (in->op == OP_BITCAST_CONVERT && in->nops == 1 && in->ops[0].def->result->rank != in->result->rank) ||
	    in->result->rank > HLOI_MAX_RANK || !shape_is_static(in->result))
		return 0;
	int64_t n;
	if (shape_byte_size(in->result, &n))
		return 0;
	for (int k = 0; k < in->nops; k++) {
		int8_t map[HLOI_MAX_RANK];
		/* a `<=N` operand's sizes go to the result (eval_dynamic) */
		if (fx_operand_map(in, k, map) || !shape_is_static(in->ops[k].def->result))
			return 0;
	}
	return fx_member_init(&m, in, generic) == 0;
}

void plan_free(eval_plan *p)
{
	if (!p)
		return;
	for (int r = 0; r < p->nregions; r++) {
		plan_region *g = &p->regions[r];
		hloi_free(g->mem);
		hloi_free(g->mem_pos);
		hloi_free(g->in);
		hloi_free(g->out_member);
		hloi_free(g->reuse);
	}
	hloi_free(p->regions);
	hloi_free(p->steps);
	hloi_free(p->mem);
	hloi_free(p);
}

/* Row buffers of a region's members: a computing member gets one (so does
 * an output that is an alias: in place, it is copied there before any
 * output of the row is written); it is free again after the last member
 * reading it, following aliases (an alias's row is its argument's).
 * Outputs keep theirs to the end of the row. */
static int assign_slots(plan_region *g)
{
	int nm = g->nmem, rc = 0;
	int *owner = hloi_malloc((size_t)nm * 3 * sizeof *owner);
	if (!owner)
		return -1;
	int *last = owner + nm, *freelist = owner + 2 * nm;
	int nfree = 0, nslots = 0;
	for (int m = 0; m < nm; m++) {
		const fx_member *mb = &g->mem[m];
		owner[m] = mb->kind == FX_ALIAS ? (mb->arg[0] >= 0 ? owner[mb->arg[0]] : -1) : m;
		last[m] = -1;
	}
	for (int m = 0; m < nm; m++) {
		const fx_member *mb = &g->mem[m];
		for (int k = 0; k < mb->nargs; k++)
			if (mb->arg[k] >= 0 && owner[mb->arg[k]] >= 0 && last[owner[mb->arg[k]]] < m)
				last[owner[mb->arg[k]]] = m;
		if (mb->out >= 0) {
			last[m] = nm;
			if (owner[m] >= 0)
				last[owner[m]] = nm;
		}
	}
	for (int m = 0; m < nm; m++) {
		fx_member *mb = &g->mem[m];
		if (mb->kind != FX_ALIAS || mb->out >= 0)
			mb->slot = nfree ? freelist[--nfree] : nslots++;
		for (int k = 0; k < mb->nargs; k++) {
			int a = mb->arg[k];
			if (a < 0 || owner[a] < 0)
				continue;
			int o = owner[a];
			if (last[o] == m && g->mem[o].slot >= 0 && g->mem[o].kind != FX_ALIAS) {
				freelist[nfree++] = g->mem[o].slot;
				last[o] = -1;  /* freed once */
			}
		}
	}
	g->nslots = nslots;
	hloi_free(owner);
	return rc;
}

/* The region seeded at `seed`: its producers join while plan.h's rule
 * allows. Fills region_of and the region's members, inputs and outputs. */
static hloi_status grow_region(eval_plan *p, int r, int seed, const uint8_t *fus, const uint8_t *keep,
			       const int *ustart, const int *ulist, heap *h)
{
	const computation *comp = p->comp;
	plan_region *g = &p->regions[r];
	int *region_of = p->region_of;
	const shape *dom = comp->instrs[seed]->result;
	int count = 0, cap = 16;
	int *pos = hloi_malloc((size_t)cap * sizeof *pos);
	if (!pos)
		return HLOI_ENOMEM;
	memset(g, 0, sizeof *g);
	g->seed = seed;
	g->sink = -1;
	region_of[seed] = r;
	/* input fusion: the seed's one reader a reduce that can read it a run
	 * at a time (as its input only, not its init value) */
	if (!p->generic && !(keep && keep[seed]) && ustart[seed + 1] - ustart[seed] == 1) {
		const instr *u = comp->instrs[ulist[ustart[seed]]];
		if (u->op == OP_REDUCE && u->nops == 2 && u->ops[0].def->position == seed &&
		    u->ops[1].def->position != seed && fast_reduce_fusible(u))
			g->sink = u->position;
	}
	/* users outside the region come after the step that runs it */
	int after = g->sink >= 0 ? g->sink : seed;
	pos[count++] = seed;
	h->n = 0;
	const instr *sin = comp->instrs[seed];
	for (int k = 0; k < sin->nops; k++)
		if (heap_push(h, sin->ops[k].def->position))
			goto oom;
	while (h->n) {
		int c = heap_pop(h);
		while (h->n && h->v[0] == c)
			heap_pop(h);
		if (!fus[c] || region_of[c] >= 0)
			continue;
		const instr *cin = comp->instrs[c];
		if (!shape_same_dims(cin->result, dom))
			continue;
		int ok = 1, inside = 0;
		for (int e = ustart[c]; e < ustart[c + 1] && ok; e++) {
			const instr *u = comp->instrs[ulist[e]];
			if (region_of[u->position] == r) {
				inside = 1;
				for (int k = 0; k < u->nops && ok; k++)
					if (u->ops[k].def == cin && !identity_read(u, k))
						ok = 0;
			} else if (u->position < after) {
				ok = 0;  /* it could lead back into the region, or come before it runs */
			}
		}
		if (!ok || !inside)
			continue;
		region_of[c] = r;
		if (count == cap) {
			int *np = hloi_malloc((size_t)cap * 2 * sizeof *np);
			if (!np)
				goto oom;
			memcpy(np, pos, (size_t)count * sizeof *np);
			hloi_free(pos);
			pos = np;
			cap *= 2;
		}
		pos[count++] = c;
		for (int k = 0; k < cin->nops; k++)
			if (heap_push(h, cin->ops[k].def->position))
				goto oom;
	}
	/* members in schedule order */
	for (int i = 1; i < count; i++) {
		int v = pos[i], j = i;
		while (j > 0 && pos[j - 1] > v) {
			pos[j] = pos[j - 1];
			j--;
		}
		pos[j] = v;
	}
	g->nmem = count;
	g->mem_pos = pos;
	pos = NULL;
	g->mem = hloi_calloc((size_t)count, sizeof *g->mem);
	int nargs = 0;
	for (int m = 0; m < count; m++)
		nargs += comp->instrs[g->mem_pos[m]]->nops;
	g->in = hloi_calloc((size_t)(nargs ? nargs : 1), sizeof *g->in);
	g->out_member = hloi_calloc((size_t)count, sizeof *g->out_member);
	g->reuse = hloi_calloc((size_t)count, sizeof *g->reuse);
	if (!g->mem || !g->in || !g->out_member || !g->reuse)
		return HLOI_ENOMEM;
	/* members, their arguments and the region's inputs */
	for (int m = 0; m < count; m++) {
		const instr *in = comp->instrs[g->mem_pos[m]];
		fx_member *mb = &g->mem[m];
		fx_member_init(mb, in, p->generic);
		for (int k = 0; k < in->nops; k++) {
			int d = in->ops[k].def->position;
			if (region_of[d] == r) {
				int a = 0;
				while (g->mem_pos[a] != d)
					a++;
				mb->arg[k] = a;
				continue;
			}
			plan_input pi;
			memset(&pi, 0, sizeof pi);
			pi.pos = d;
			fx_operand_map(in, k, pi.map);
			int i = 0;
			while (i < g->nin && (g->in[i].pos != d || memcmp(g->in[i].map, pi.map, sizeof pi.map)))
				i++;
			if (i == g->nin)
				g->in[g->nin++] = pi;
			mb->arg[k] = -1 - i;
		}
	}
	/* outputs: the seed first (unless a reduce reads it), then members
	 * used outside or kept (probed), in order */
	g->mem[count - 1].out = -1;
	if (g->sink < 0) {
		g->out_member[g->nout++] = count - 1;
		g->mem[count - 1].out = 0;
	}
	for (int m = 0; m < count - 1; m++) {
		int c = g->mem_pos[m];
		for (int e = ustart[c]; e < ustart[c + 1] + (keep && keep[c]); e++) {
			if (e == ustart[c + 1] || region_of[ulist[e]] != r) {
				g->mem[m].out = g->nout;
				g->out_member[g->nout++] = m;
				break;
			}
		}
	}
	return assign_slots(g) ? HLOI_ENOMEM : HLOI_OK;
oom:
	hloi_free(pos);
	return HLOI_ENOMEM;
}

/* The value whose buffer position `pos` reads: itself, or through reshape
 * views and elements of tuples the value it shares. */
static int buffer_of(const eval_plan *p, int pos)
{
	const computation *comp = p->comp;
	for (;;) {
		const instr *in = comp->instrs[pos];
		if (p->value[pos] != PV_SHARED)
			return pos;
		if (in->op == OP_RESHAPE || in->op == OP_TRANSPOSE || in->op == OP_OPTIMIZATION_BARRIER) {
			pos = in->ops[0].def->position;
		} else if (in->op == OP_GET_TUPLE_ELEMENT) {
			/* the tuple, through the barriers that pass it on */
			const instr *t = in->ops[0].def;
			while (t->op == OP_OPTIMIZATION_BARRIER && p->value[t->position] == PV_SHARED)
				t = t->ops[0].def;
			int64_t k = -1;
			instr_int(in, ATTR_INDEX, &k);
			if (t->op != OP_TUPLE || p->value[t->position] != PV_SHARED || k < 0 || k >= t->nops)
				return pos;
			pos = t->ops[k].def->position;
		} else {
			return pos;
		}
	}
}

/* Which dead input each output of region g takes over (plan.h): one the
 * region reads only where it writes, through no other value sharing its
 * buffer. */
static void plan_reuse(eval_plan *p, plan_region *g)
{
	const computation *comp = p->comp;
	for (int o = 0; o < g->nout; o++) {
		const shape *os = comp->instrs[g->mem_pos[g->out_member[o]]]->result;
		g->reuse[o] = -1;
		/* feeding a reduce, the last member's row may be an input's run
		 * that an output in its place would overwrite first */
		if (g->sink >= 0)
			continue;
		for (int i = 0; i < g->nin && g->reuse[o] < 0; i++) {
			int v = g->in[i].pos, ok = 1;
			const shape *vs = comp->instrs[v]->result;
			if (p->value[v] != PV_OWNED || p->last_use[v] != g->seed || vs->type != os->type ||
			    !shape_same_dims(vs, os) || !layout_equal(&vs->layout, &os->layout))
				continue;
			for (int j = 0; j < g->nin && ok; j++) {
				if (g->in[j].pos != v) {
					if (buffer_of(p, g->in[j].pos) == v)
						ok = 0;
					continue;
				}
				for (int d = 0; d < vs->rank; d++)
					if (g->in[j].map[d] != d)
						ok = 0;
			}
			for (int q = 0; q < o && ok; q++)
				if (g->reuse[q] == v)
					ok = 0;
			if (ok)
				g->reuse[o] = v;
		}
	}
}

/* Instructions that run although nothing reads their value, as XLA runs
 * them (HloComputation::Accept visits the roots nothing reaches): the
 * transfers to and from the host, and send, recv and their -done, whose
 * effects reach other participants; and the assertions of StableHLO's
 * check dialect (custom-calls to check.expect_*), whose effect is to fail
 * the run. */
static int side_effect(const instr *in)
{
	if (in->op == OP_CUSTOM_CALL) {
		int t = custom_call_builtin(instr_text(in, ATTR_CUSTOM_CALL_TARGET));
		return t == CC_CHECK_EXPECT_EQ || t == CC_CHECK_EXPECT_ALMOST_EQ || t == CC_CHECK_EXPECT_CLOSE;
	}
	return opcode_has(in->op, OPF_SIDE_EFFECT);
}

hloi_status plan_build(eval_plan **out, const computation *comp, int fused, int generic, const uint8_t *keep)
{
	hloi_status st = HLOI_ENOMEM;
	int n = comp->ninstrs, root = comp->root->position;
	/* `last`: the last position the schedule runs, the root's or a later
	 * side effect's */
	int last = root;
	for (int i = 0; i < n; i++)
		if (side_effect(comp->instrs[i]) && i > last)
			last = i;
	int nedges = 0;
	for (int i = 0; i < n; i++)
		nedges += comp->instrs[i]->nops;
	*out = NULL;
	eval_plan *p = hloi_calloc(1, sizeof *p);
	if (!p)
		return HLOI_ENOMEM;
	p->comp = comp;
	p->fused = fused;
	p->generic = generic;
	p->n = n;
	size_t nn = (size_t)(n ? n : 1);
	char *mem = hloi_calloc(1, nn * (4 * sizeof(int) + 2) + sizeof(int));
	int *ustart = hloi_calloc(nn + 1, sizeof *ustart);
	int *ulist = hloi_calloc((size_t)(nedges ? nedges : 1), sizeof *ulist);
	uint8_t *fus = hloi_calloc(nn, 1);
	heap h = { NULL, 0, 0 };
	p->steps = hloi_calloc(nn, sizeof *p->steps);
	p->mem = mem;
	if (!mem || !ustart || !ulist || !fus || !p->steps)
		goto cleanup;
	p->region_of = (int *)(void *)mem;
	p->last_use = p->region_of + nn;
	p->rel_start = p->last_use + nn;
	p->rel_list = p->rel_start + nn + 1;
	p->value = (uint8_t *)(p->rel_list + nn);
	p->view = p->value + nn;

	/* what the root and the side effects need (operands come before their
	 * users); a side effect nothing reads is released where it runs */
	for (int i = 0; i < n; i++) {
		p->region_of[i] = -1;
		p->last_use[i] = side_effect(comp->instrs[i]) ? i : -1;
	}
	p->last_use[root] = n;
	for (int i = last; i >= 0; i--) {
		const instr *in = comp->instrs[i];
		if (p->last_use[i] < 0)
			continue;
		for (int k = 0; k < in->nops; k++)
			if (p->last_use[in->ops[k].def->position] < 0)
				p->last_use[in->ops[k].def->position] = 0;  /* needed */
	}
	/* users of every needed value: each needed instruction once per value
	 * it reads */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			for (int i = 0; i < n; i++)
				ustart[i + 1] += ustart[i];
		}
		for (int i = 0; i <= last; i++) {
			const instr *in = comp->instrs[i];
			if (p->last_use[i] < 0)
				continue;
			for (int k = 0; k < in->nops; k++) {
				int d = in->ops[k].def->position, seen = 0;
				for (int j = 0; j < k; j++)
					if (in->ops[j].def == in->ops[k].def)
						seen = 1;
				if (seen)
					continue;
				if (pass == 0)
					ustart[d + 1]++;
				else
					/* region_of counts the users filled in (from -1) */
					ulist[ustart[d] + ++p->region_of[d]] = i;
			}
		}
	}
	for (int i = 0; i < n; i++)
		p->region_of[i] = -1;
	int nfus = 0;
	for (int i = 0; i <= last; i++) {
		fus[i] = fused && p->last_use[i] >= 0 && fusible(comp->instrs[i], generic);
		nfus += fus[i];
	}
	/* at most a region per fused instruction */
	p->regions = hloi_calloc((size_t)(nfus ? nfus : 1), sizeof *p->regions);
	if (!p->regions)
		goto cleanup;

	/* regions, seeded from the root down */
	if (fused) {
		for (int i = last; i >= 0; i--) {
			if (!fus[i] || p->region_of[i] >= 0)
				continue;
			st = grow_region(p, p->nregions, i, fus, keep, ustart, ulist, &h);
			p->nregions++;
			if (st != HLOI_OK)
				goto cleanup;
		}
	}

	/* the schedule, and each value's last reader */
	for (int i = 0; i <= last; i++) {
		const instr *in = comp->instrs[i];
		if (p->last_use[i] < 0)
			continue;
		int r = p->region_of[i];
		if (r >= 0 && (p->regions[r].seed != i || p->regions[r].sink >= 0))
			continue;
		/* a reduce whose input a region computes where it is read */
		int fed = in->op == OP_REDUCE && in->nops == 2 ? p->region_of[in->ops[0].def->position] : -1;
		if (fed >= 0 && p->regions[fed].sink != i)
			fed = -1;
		plan_step *s = &p->steps[p->nsteps++];
		s->pos = i;
		if (fed >= 0) {
			const plan_region *g = &p->regions[fed];
			s->kind = STEP_REDUCE;
			s->region = fed;
			for (int k = 0; k < g->nin; k++)
				if (p->last_use[g->in[k].pos] < i)
					p->last_use[g->in[k].pos] = i;
			int init = in->ops[1].def->position;
			if (p->last_use[init] < i)
				p->last_use[init] = i;
		} else if (r >= 0) {
			const plan_region *g = &p->regions[r];
			s->kind = STEP_REGION;
			s->region = r;
			for (int k = 0; k < g->nin; k++)
				if (p->last_use[g->in[k].pos] < i)
					p->last_use[g->in[k].pos] = i;
		} else {
			s->kind = STEP_INSTR;
			s->region = -1;
			for (int k = 0; k < in->nops; k++)
				if (p->last_use[in->ops[k].def->position] < i)
					p->last_use[in->ops[k].def->position] = i;
		}
	}
	/* a kept member no step outside its region reads lives until the
	 * step that computes it has run */
	for (int r = 0; keep && r < p->nregions; r++) {
		const plan_region *g = &p->regions[r];
		int at = g->sink >= 0 ? g->sink : g->seed;
		for (int m = 0; m < g->nmem; m++)
			if (keep[g->mem_pos[m]] && p->last_use[g->mem_pos[m]] < at)
				p->last_use[g->mem_pos[m]] = at;
	}
	/* how each value holds memory; shared buffers live as long as their
	 * sharers */
	for (int i = 0; i <= last; i++) {
		const instr *in = comp->instrs[i];
		if (p->last_use[i] < 0 || p->region_of[i] >= 0)
			continue;
		/* op-specific: how each op's value holds memory */
		switch (in->op) {
		case OP_PARAMETER:
		case OP_CONSTANT:
			p->value[i] = PV_BORROWED;
			break;
		case OP_TUPLE:
		case OP_GET_TUPLE_ELEMENT:
		case OP_OPTIMIZATION_BARRIER:
			p->value[i] = PV_SHARED;
			break;
		case OP_RESHAPE:
		case OP_TRANSPOSE:
			p->view[i] = fused && plan_instr_is_view(in);
			p->value[i] = p->view[i] ? PV_SHARED : PV_OWNED;
			break;
		default:
			p->value[i] = PV_OWNED;
			break;
		}
	}
	for (int r = 0; r < p->nregions; r++) {
		const plan_region *g = &p->regions[r];
		for (int m = 0; m < g->nmem; m++)
			p->value[g->mem_pos[m]] = g->mem[m].out >= 0 ? PV_OWNED : PV_NONE;
	}
	for (int i = last; i >= 0; i--) {
		const instr *in = comp->instrs[i];
		if (p->value[i] != PV_SHARED)
			continue;
		for (int k = 0; k < in->nops; k++) {
			int d = in->ops[k].def->position;
			if (p->last_use[d] < p->last_use[i])
				p->last_use[d] = p->last_use[i];
		}
	}
	for (int r = 0; r < p->nregions; r++)
		plan_reuse(p, &p->regions[r]);
	/* the values to release after each position (their last use) */
	for (int i = 0; i < n; i++)
		if (p->last_use[i] >= 0 && p->last_use[i] < n && p->value[i] != PV_NONE)
			p->rel_start[p->last_use[i] + 1]++;
	for (int i = 0; i < n; i++)
		p->rel_start[i + 1] += p->rel_start[i];
	{
		int *at = hloi_calloc(nn, sizeof *at);
		if (!at) {
			st = HLOI_ENOMEM;
			goto cleanup;
		}
		for (int i = 0; i < n; i++) {
			int u = p->last_use[i];
			if (u >= 0 && u < n && p->value[i] != PV_NONE)
				p->rel_list[p->rel_start[u] + at[u]++] = i;
		}
		hloi_free(at);
	}
	st = HLOI_OK;
cleanup:
	hloi_free(ustart);
	hloi_free(ulist);
	hloi_free(fus);
	hloi_free(h.v);
	if (st != HLOI_OK) {
		plan_free(p);
		return st;
	}
	*out = p;
	return HLOI_OK;
}

/* --- the walk, the peak ------------------------------------------------------------ */

int plan_region_walk(const eval_plan *p, int r, int threads, const fast_tuning *tuning, fx_exec *x)
{
	const plan_region *g = &p->regions[r];
	const computation *comp = p->comp;
	const shape *dom = comp->instrs[g->seed]->result;
	fx_region fr;
	memset(&fr, 0, sizeof fr);
	memset(x, 0, sizeof *x);
	fx_input *in = hloi_calloc((size_t)(g->nin ? g->nin : 1), sizeof *in);
	fx_output *out = hloi_calloc((size_t)(g->nout ? g->nout : 1), sizeof *out);
	int rc = -1;
	if (!in || !out)
		goto cleanup;
	fr.rank = dom->rank;
	for (int d = 0; d < dom->rank; d++) {
		fr.dims[d] = dom->dims[d];
		fr.order[d] = dom->layout.minor_to_major[d];
	}
	for (int i = 0; i < g->nin; i++) {
		const shape *s = comp->instrs[g->in[i].pos]->result;
		in[i].w = etype_byte_width(s->type);
		fx_input_strides(s, g->in[i].map, dom->rank, dom->dims, in[i].st);
	}
	for (int o = 0; o < g->nout; o++) {
		const shape *s = comp->instrs[g->mem_pos[g->out_member[o]]]->result;
		int8_t id[HLOI_MAX_RANK];
		for (int d = 0; d < s->rank; d++)
			id[d] = (int8_t)d;
		out[o].w = etype_byte_width(s->type);
		out[o].member = g->out_member[o];
		out[o].bytes = value_bytes(s);
		fx_input_strides(s, id, dom->rank, dom->dims, out[o].st);
	}
	fr.nin = g->nin;
	fr.in = in;
	fr.nmem = g->nmem;
	fr.mem = g->mem;
	fr.nout = g->nout;
	fr.out = out;
	fr.nslots = g->nslots;
	if (g->sink >= 0) {
		/* runs along the innermost dimension of more than one element,
		 * on as many threads as the reduce takes, each with scratch */
		rc = dom->rank > 0 ? fx_runs_setup(x, &fr, fast_reduce_run_dim(dom), tuning) : -1;
		x->threads = threads > 0 ? threads : fx_machine_threads();
	} else {
		rc = fx_setup(x, &fr, threads, tuning);
	}
cleanup:
	fx_exec_free(x);
	x->r = NULL;
	x->ist = x->ost = NULL;
	x->mode = x->stream = x->direct = x->iota_at = NULL;
	x->row_off = NULL;
	hloi_free(in);
	hloi_free(out);
	return rc;
}

/* The most a run of p holds at once beyond its parameters: its values and
 * the executor's scratch, with those of called computations at their call;
 * *at gets the step of the peak, *scratch_at the scratch there. */
static int64_t plan_extra(const eval_plan *p, int threads, const fast_tuning *tuning, int depth, int *at,
			  int64_t *scratch_at)
{
	const computation *comp = p->comp;
	int n = p->n;
	int64_t live = 0, peak = 0;
	*at = -1;
	*scratch_at = 0;
	int64_t *bytes = hloi_calloc((size_t)(n ? n : 1), sizeof *bytes);
	uint8_t *moved = hloi_calloc((size_t)(n ? n : 1), 1);
	if (!bytes || !moved) {
		hloi_free(bytes);
		hloi_free(moved);
		return 0;
	}
	for (int i = 0; i < n; i++)
		if (p->value[i] == PV_OWNED) {
			int64_t b = value_bytes(comp->instrs[i]->result);
			bytes[i] = b > 0 ? b : 0;
		}
	for (int s = 0; s < p->nsteps; s++) {
		const plan_step *st = &p->steps[s];
		int64_t fresh = 0, scratch = 0;
		if (st->kind == STEP_REGION || st->kind == STEP_REDUCE) {
			const plan_region *g = &p->regions[st->region];
			fx_exec x;
			if (st->kind == STEP_REDUCE)
				fresh += bytes[st->pos];
			for (int o = 0; o < g->nout; o++) {
				if (g->reuse[o] >= 0)
					moved[g->reuse[o]] = 1;
				else
					fresh += bytes[g->mem_pos[g->out_member[o]]];
			}
			if (plan_region_walk(p, st->region, threads, tuning, &x) == 0)
				scratch = x.scratch_bytes * x.threads;
		} else {
			const instr *in = comp->instrs[st->pos];
			fresh = bytes[st->pos];
			for (int c = 0; c < in->ncalled && depth < EVAL_MAX_DEPTH; c++) {
				eval_plan *cp = NULL;
				if (!in->called[c] || !in->called[c]->root ||
				    plan_build(&cp, in->called[c], p->fused, p->generic, NULL) != HLOI_OK)
					continue;
				int cat;
				int64_t cs, ce = plan_extra(cp, threads, tuning, depth + 1, &cat, &cs);
				if (ce > scratch)
					scratch = ce;
				plan_free(cp);
			}
		}
		if (live + fresh + scratch > peak) {
			peak = live + fresh + scratch;
			*at = s;
			*scratch_at = scratch;
		}
		live += fresh;
		for (int k = p->rel_start[st->pos]; k < p->rel_start[st->pos + 1]; k++) {
			int i = p->rel_list[k];
			if (p->value[i] == PV_OWNED && !moved[i])
				live -= bytes[i];
		}
	}
	hloi_free(bytes);
	hloi_free(moved);
	return peak;
}

static int64_t param_bytes(const computation *comp)
{
	int64_t total = 0;
	for (int i = 0; i < comp->nparams; i++) {
		int64_t b = value_bytes(comp->params[i]->result);
		total += b > 0 ? b : 0;
	}
	return total;
}

int64_t plan_peak_bytes(const eval_plan *p, int threads, const fast_tuning *tuning)
{
	int at;
	int64_t scratch;
	return param_bytes(p->comp) + plan_extra(p, threads, tuning, 0, &at, &scratch);
}

/* --- the text form ------------------------------------------------------------------- */

static void put_bytes(strbuf *b, int64_t v)
{
	if (v < 10 * 1024)
		sb_printf(b, "%lld B", (long long)v);
	else if (v < (int64_t)10 << 20)
		sb_printf(b, "%.1f KiB", (double)v / 1024);
	else if (v < (int64_t)10 << 30)
		sb_printf(b, "%.1f MiB", (double)v / (1024.0 * 1024));
	else
		sb_printf(b, "%.1f GiB", (double)v / (1024.0 * 1024 * 1024));
}

static void put_operands(strbuf *b, const instr *in)
{
	if (in->op == OP_PARAMETER) {
		sb_printf(b, "parameter(%lld)", (long long)in->parameter_number);
		return;
	}
	sb_printf(b, "%s(", opcode_name(in->op));
	for (int k = 0; k < in->nops; k++)
		sb_printf(b, "%s%s", k ? ", " : "", in->ops[k].def->name);
	sb_puts(b, ")");
}

static void put_walk(strbuf *b, const fx_exec *x)
{
	int64_t total = 1;
	for (int d = 0; d < x->rank; d++)
		total *= x->n[d];
	sb_printf(b, "      walk      %lld element%s", (long long)total, total == 1 ? "" : "s");
	if (x->rank > 1) {
		sb_puts(b, " as ");
		for (int d = x->rank - 1; d >= 0; d--)
			sb_printf(b, "%s%lld", d == x->rank - 1 ? "" : " x ", (long long)x->n[d]);
	}
	if (x->tiled)
		sb_printf(b, ", tiles of %lld x %lld (%d input%s gathered per tile)", (long long)x->block,
			  (long long)x->block1, x->ngathered, x->ngathered == 1 ? "" : "s");
	else
		sb_printf(b, ", rows of %lld", (long long)x->chunk);
	if (x->nstrided)
		sb_printf(b, ", %d strided input%s copied per row", x->nstrided, x->nstrided == 1 ? "" : "s");
	if (x->nstreamed)
		sb_puts(b, ", streaming stores");
	sb_printf(b, "; %d thread%s, scratch ", x->threads, x->threads == 1 ? "" : "s");
	put_bytes(b, x->scratch_bytes);
	sb_puts(b, " per thread\n");
}

static void put_region(strbuf *b, const eval_plan *p, int r, int threads, const fast_tuning *tuning)
{
	const computation *comp = p->comp;
	const plan_region *g = &p->regions[r];
	const instr *seed = comp->instrs[g->seed];
	sb_printf(b, "region %d: %d instruction%s -> ", r, g->nmem, g->nmem == 1 ? "" : "s fused");
	shape_print(b, seed->result, 1);
	sb_putc(b, '\n');
	for (int m = 0; m < g->nmem; m++) {
		const instr *in = comp->instrs[g->mem_pos[m]];
		sb_printf(b, "      %-9s %s = ", m == 0 ? "computes" : "", in->name);
		put_operands(b, in);
		if (g->mem[m].kind == FX_ALIAS)
			sb_puts(b, "  (no work: read through strides)");
		else if (g->mem[m].fn == fx_generic_row)
			sb_puts(b, "  (element loop)");
		sb_putc(b, '\n');
	}
	for (int i = 0; i < g->nin; i++) {
		const instr *in = comp->instrs[g->in[i].pos];
		const shape *s = in->result;
		sb_printf(b, "      %-9s %s ", i == 0 ? "reads" : "", in->name);
		shape_print(b, s, 1);
		int id = s->rank == seed->result->rank;
		for (int d = 0; d < s->rank && id; d++)
			id = g->in[i].map[d] == d;
		if (!id) {
			sb_puts(b, " as dims {");
			for (int d = 0; d < s->rank; d++)
				sb_printf(b, "%s%d", d ? "," : "", g->in[i].map[d]);
			sb_puts(b, "}");
		}
		if (!layout_equal(&s->layout, &seed->result->layout) && s->rank == seed->result->rank)
			sb_puts(b, ", another layout");
		sb_putc(b, '\n');
	}
	if (g->sink >= 0)
		sb_printf(b, "      %-9s %s: never materialised, reduced by %s\n", "keeps", seed->name,
			  comp->instrs[g->sink]->name);
	for (int o = 0; o < g->nout; o++) {
		const instr *in = comp->instrs[g->mem_pos[g->out_member[o]]];
		sb_printf(b, "      %-9s %s: ", o == 0 ? "writes" : "", in->name);
		if (g->reuse[o] >= 0)
			sb_printf(b, "in place over %s (dead after this step)", comp->instrs[g->reuse[o]]->name);
		else if (in == comp->root)
			sb_puts(b, "new buffer, or the destination (input_output_alias, run into)");
		else
			sb_puts(b, "new buffer");
		sb_putc(b, '\n');
	}
	fx_exec x;
	if (plan_region_walk(p, r, threads, tuning, &x) == 0)
		put_walk(b, &x);
}

void plan_print(strbuf *b, const eval_plan *p, int threads, const fast_tuning *tuning)
{
	const computation *comp = p->comp;
	int at;
	int64_t scratch, params = param_bytes(comp);
	int64_t extra = plan_extra(p, threads, tuning, 0, &at, &scratch);
	int nfused = 0;
	for (int r = 0; r < p->nregions; r++)
		nfused += p->regions[r].nmem;
	sb_printf(b, "computation %s: %d step%s, %d region%s fusing %d instruction%s\n", comp->name, p->nsteps,
		  p->nsteps == 1 ? "" : "s", p->nregions, p->nregions == 1 ? "" : "s", nfused,
		  nfused == 1 ? "" : "s");
	for (int s = 0; s < p->nsteps; s++) {
		const plan_step *st = &p->steps[s];
		const instr *in = comp->instrs[st->pos];
		sb_printf(b, "  %3d  ", s + 1);
		if (st->kind == STEP_REGION) {
			put_region(b, p, st->region, threads, tuning);
			continue;
		}
		if (st->kind == STEP_REDUCE) {
			sb_printf(b, "%s = ", in->name);
			put_operands(b, in);
			sb_puts(b, "  (its input computed where it is read:)\n       ");
			put_region(b, p, st->region, threads, tuning);
			continue;
		}
		sb_printf(b, "%s = ", in->name);
		put_operands(b, in);
		switch (p->value[st->pos]) {
		case PV_BORROWED:
			sb_puts(b, "  (no copy)");
			break;
		case PV_SHARED:
			sb_puts(b, in->op == OP_RESHAPE || in->op == OP_TRANSPOSE ? "  (a view of its operand's buffer)"
							: "  (shares its operands' buffers)");
			break;
		default:
			break;
		}
		sb_putc(b, '\n');
	}
	sb_puts(b, "  peak ");
	put_bytes(b, params + extra);
	sb_puts(b, ": parameters ");
	put_bytes(b, params);
	sb_puts(b, " + values ");
	put_bytes(b, extra - scratch);
	sb_puts(b, " + scratch ");
	put_bytes(b, scratch);
	if (at >= 0)
		sb_printf(b, " (at step %d)", at + 1);
	sb_putc(b, '\n');
}

/* --- the module's plans ----------------------------------------------------------------- */

/* The entry computation and every computation it calls (transitively),
 * entry first, each once: indices into m->comps in *order. */
static hloi_status reachable(const module *m, int **order, int *count)
{
	int nc = m->ncomps, n = 0;
	int *v = hloi_calloc((size_t)(nc ? nc : 1), sizeof *v);
	uint8_t *seen = hloi_calloc((size_t)(nc ? nc : 1), 1);
	*order = NULL;
	*count = 0;
	if (!v || !seen) {
		hloi_free(v);
		hloi_free(seen);
		return HLOI_ENOMEM;
	}
	for (int c = 0; c < nc; c++)
		if (m->comps[c] == m->entry) {
			v[n++] = c;
			seen[c] = 1;
		}
	for (int k = 0; k < n; k++) {
		const computation *comp = m->comps[v[k]];
		for (int i = 0; i < comp->ninstrs; i++) {
			const instr *in = comp->instrs[i];
			for (int j = 0; j < in->ncalled; j++)
				for (int c = 0; c < nc; c++)
					if (m->comps[c] == in->called[j] && !seen[c]) {
						seen[c] = 1;
						v[n++] = c;
					}
		}
	}
	hloi_free(seen);
	*order = v;
	*count = n;
	return HLOI_OK;
}

static int opts_fused(const hloi_run_options *opts)
{
	return !opts || opts->engine != HLOI_ENGINE_REFERENCE;
}

static int opts_threads(const hloi_run_options *opts)
{
	int t = opts ? opts->threads : 0;
	return t > 0 ? t : fx_machine_threads();
}

hloi_status eval_plan_text(strbuf *b, const module *m, const hloi_run_options *opts)
{
	int *order = NULL, count = 0;
	if (!m->checked || !m->entry || !m->entry->root)
		return HLOI_EINVAL;
	hloi_status st = reachable(m, &order, &count);
	int threads = opts_threads(opts), fused = opts_fused(opts);
	sb_printf(b, "plan of %s: %s engine, %d thread%s\n", m->name ? m->name : "module",
		  fused ? "fast" : "reference", threads, threads == 1 ? "" : "s");
	for (int k = 0; k < count && st == HLOI_OK; k++) {
		eval_plan *p = NULL;
		st = plan_build(&p, m->comps[order[k]], fused, 0, NULL);
		if (st != HLOI_OK)
			break;
		plan_print(b, p, threads, NULL);
		plan_free(p);
	}
	hloi_free(order);
	return b->oom ? HLOI_ENOMEM : st;
}

hloi_status eval_plan_peak(const module *m, const hloi_run_options *opts, uint64_t *out)
{
	eval_plan *p = NULL;
	*out = 0;
	if (!m->checked || !m->entry || !m->entry->root)
		return HLOI_EINVAL;
	hloi_status st = plan_build(&p, m->entry, opts_fused(opts), 0, NULL);
	if (st != HLOI_OK)
		return st;
	int64_t peak = plan_peak_bytes(p, opts_threads(opts), NULL);
	*out = peak > 0 ? (uint64_t)peak : 0;
	plan_free(p);
	return HLOI_OK;
}

/* dot --plan: the plans of the drawn computations, by computation index. */
typedef struct dot_plans {
	const module *m;
	eval_plan **plans;
	int threads;
} dot_plans;

static const eval_plan *plan_of(const dot_plans *d, const computation *c)
{
	for (int i = 0; i < d->m->ncomps; i++)
		if (d->m->comps[i] == c)
			return d->plans[i];
	return NULL;
}

static int dot_group(void *ctx, const computation *c, int i)
{
	const eval_plan *p = plan_of(ctx, c);
	if (!p || p->region_of[i] < 0)
		return -1;
	return p->regions[p->region_of[i]].nmem > 1 ? p->region_of[i] : -1;
}

static void dot_label(void *ctx, const computation *c, int g, strbuf *b)
{
	const dot_plans *d = ctx;
	const eval_plan *p = plan_of(d, c);
	fx_exec x;
	sb_printf(b, "region %d: %d fused", g, p->regions[g].nmem);
	if (plan_region_walk(p, g, d->threads, NULL, &x) == 0) {
		if (x.tiled)
			sb_printf(b, ", tiles %lld x %lld", (long long)x.block, (long long)x.block1);
		else
			sb_printf(b, ", rows of %lld", (long long)x.chunk);
	}
}

hloi_status eval_plan_dot(strbuf *b, const module *m, const hloi_run_options *opts)
{
	dot_plans d;
	hloi_status st = HLOI_OK;
	d.m = m;
	d.threads = opts_threads(opts);
	d.plans = hloi_calloc((size_t)(m->ncomps ? m->ncomps : 1), sizeof *d.plans);
	if (!d.plans)
		return HLOI_ENOMEM;
	for (int c = 0; c < m->ncomps && st == HLOI_OK; c++)
		if (m->checked && m->comps[c]->root)
			st = plan_build(&d.plans[c], m->comps[c], opts_fused(opts), 0, NULL);
	if (st == HLOI_OK) {
		dot_groups g = { dot_group, dot_label, &d };
		text_print_dot_groups(b, m, &g);
	}
	for (int c = 0; c < m->ncomps; c++)
		plan_free(d.plans[c]);
	hloi_free(d.plans);
	return st != HLOI_OK ? st : b->oom ? HLOI_ENOMEM : HLOI_OK;
}
