/* The cost report, the profile report and the trace (report.h;
 * doc/performance.md "Profiles" and "Cost and floor"). */
#include "eval/plan/report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ir/attrs.h"
#include "util/alloc.h"

/* --- printing helpers ---------------------------------------------------------------- */

/* A JSON string: names are HLO identifiers, but a proto may hold anything. */
static void put_json_str(strbuf *b, const char *s)
{
	sb_putc(b, '"');
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			sb_printf(b, "\\%c", ch);
		else if (ch < 0x20)
			sb_printf(b, "\\u%04x", ch);
		else
			sb_putc(b, (char)ch);
	}
	sb_putc(b, '"');
}

/* 1234567 -> "1.23 M" in a field of `w`. */
static void put_count(strbuf *b, double v, int w, const char *unit)
{
	static const char *pre[] = { "", "K", "M", "G", "T", "P" };
	int k = 0;
	while (v >= 999.5 && k < 5) {
		v /= 1000;
		k++;
	}
	char tmp[48];
	const char *sp = k || *unit ? " " : "";
	if (k == 0)
		snprintf(tmp, sizeof tmp, "%.0f%s%s", v, sp, unit);
	else
		snprintf(tmp, sizeof tmp, "%.2f%s%s%s", v, sp, pre[k], unit);
	sb_printf(b, "%*s", w, tmp);
}

static void put_secs(strbuf *b, double s, int w)
{
	char tmp[48];
	if (s >= 1)
		snprintf(tmp, sizeof tmp, "%.3f s", s);
	else if (s >= 1e-3)
		snprintf(tmp, sizeof tmp, "%.3f ms", s * 1e3);
	else
		snprintf(tmp, sizeof tmp, "%.1f us", s * 1e6);
	sb_printf(b, "%*s", w, tmp);
}

/* The step's name: `%x (op)`, or a fused region's seed and its size. */
static void put_step_name(strbuf *b, const instr *in, int region, int nmem)
{
	if (region && nmem > 1)
		sb_printf(b, "fusion of %d -> %%%s (%s)", nmem, in->name, opcode_name(in->op));
	else
		sb_printf(b, "%%%s (%s)", in->name, opcode_name(in->op));
}

static void put_machine(strbuf *b, const report_opts *r)
{
	const cost_machine *m = r->machine;
	if (m && (m->gflops > 0 || m->gbps > 0))
		sb_printf(b, "machine: %.1f GFLOP/s GEMM, %.1f GB/s memory (%s)\n", m->gflops, m->gbps,
			  r->machine_from ? r->machine_from : "given");
	else
		sb_puts(b, "machine: limits unknown (hloi bench --calibrate measures them once; "
			   "--peak-gflops and --bandwidth give them)\n");
}

static void put_machine_json(strbuf *b, const report_opts *r)
{
	const cost_machine *m = r->machine;
	sb_printf(b, "\"machine\":{\"gflops\":%.3f,\"gbps\":%.3f,\"from\":", m ? m->gflops : 0, m ? m->gbps : 0);
	put_json_str(b, r->machine_from ? r->machine_from : (m && (m->gflops > 0 || m->gbps > 0)) ? "given" : "unknown");
	sb_putc(b, '}');
}

/* The bytes the module must read and write at least: its parameters and
 * its result. */
static double io_bytes(const module *m)
{
	double b = cost_bytes(m->entry->root->result);
	for (int i = 0; i < m->entry->nparams; i++)
		b += cost_bytes(m->entry->params[i]->result);
	return b;
}

static const cost_machine no_machine = { 0, 0 };

static const cost_machine *machine_of(const report_opts *r)
{
	return r->machine ? r->machine : &no_machine;
}

/* A computation applied per element by its caller (reduce's to_apply, a
 * sort's comparator, ...): its cost is the caller's. */
static int applies(const instr *in)
{
	return opcode_has(in->op, OPF_TO_APPLY) || in->op == OP_SELECT_AND_SCATTER;
}

/* --- plan --cost ----------------------------------------------------------------------- */

typedef struct comp_count {
	const computation *c;
	double runs;           /* times one run of the module runs it (loop bodies once) */
} comp_count;

typedef struct walk {
	comp_count *v;
	int n, cap;
	int64_t visits;
	int oom;
} walk;

static void walk_add(walk *w, const computation *c, double runs)
{
	if (++w->visits > 1000000 || w->oom)
		return;
	int k = 0;
	while (k < w->n && w->v[k].c != c)
		k++;
	if (k == w->n) {
		if (w->n == w->cap) {
			int cap = w->cap ? 2 * w->cap : 16;
			comp_count *v = hloi_calloc((size_t)cap, sizeof *v);
			if (!v) {
				w->oom = 1;
				return;
			}
			if (w->n)
				memcpy(v, w->v, (size_t)w->n * sizeof *v);
			hloi_free(w->v);
			w->v = v;
			w->cap = cap;
		}
		w->v[w->n].c = c;
		w->v[w->n].runs = 0;
		w->n++;
	}
	w->v[k].runs += runs;
	for (int i = 0; i < c->ninstrs; i++) {
		const instr *in = c->instrs[i];
		if (applies(in))
			continue;
		for (int j = 0; j < in->ncalled; j++)
			if (in->called[j])
				walk_add(w, in->called[j], runs);
	}
}

hloi_status eval_cost_report(strbuf *b, const module *m, const hloi_run_options *opts, const report_opts *r)
{
	if (!m->checked || !m->entry || !m->entry->root)
		return HLOI_EINVAL;
	int fused = !opts || opts->engine != HLOI_ENGINE_REFERENCE;
	int threads = opts && opts->threads > 0 ? opts->threads : fx_machine_threads();
	const cost_machine *mach = machine_of(r);
	walk w = { NULL, 0, 0, 0, 0 };
	walk_add(&w, m->entry, 1);
	if (w.oom) {
		hloi_free(w.v);
		return HLOI_ENOMEM;
	}
	op_cost tot = { 0, 0, 0, 0 };
	double step_floor = 0;
	hloi_status st = HLOI_OK;
	if (r->json) {
		sb_puts(b, "{\"module\":");
		put_json_str(b, m->name ? m->name : "module");
		sb_printf(b, ",\"engine\":\"%s\",\"threads\":%d,", fused ? "fast" : "reference", threads);
		put_machine_json(b, r);
		sb_puts(b, ",\"computations\":[");
	} else {
		sb_printf(b, "cost of %s: %s engine, %d thread%s\n", m->name ? m->name : "module",
			  fused ? "fast" : "reference", threads, threads == 1 ? "" : "s");
		put_machine(b, r);
	}
	for (int k = 0; k < w.n && st == HLOI_OK; k++) {
		const computation *c = w.v[k].c;
		eval_plan *p = NULL;
		st = plan_build(&p, c, fused, 0, NULL);
		if (st != HLOI_OK)
			break;
		if (r->json) {
			sb_printf(b, "%s{\"name\":", k ? "," : "");
			put_json_str(b, c->name);
			sb_printf(b, ",\"runs\":%.0f,\"steps\":[", w.v[k].runs);
		} else {
			sb_printf(b, "\ncomputation %s (%s%.0f run%s per run of the module)\n", c->name,
				  c == m->entry ? "entry, " : "", w.v[k].runs, w.v[k].runs == 1 ? "" : "s");
			sb_printf(b, "%12s %12s %12s %11s  %s\n", "flops", "transc.", "bytes", "floor", "step");
		}
		int first = 1;
		for (int s = 0; s < p->nsteps; s++) {
			op_cost oc;
			cost_step(p, s, &oc);
			const plan_step *ps = &p->steps[s];
			const instr *in = c->instrs[ps->pos];
			int region = ps->kind != STEP_INSTR;  /* a region, or a reduce reading one */
			int nmem = region ? p->regions[ps->region].nmem + (ps->kind == STEP_REDUCE) : 1;
			double fl = cost_floor(&oc, mach);
			double runs = w.v[k].runs;
			tot.flops += oc.flops * runs;
			tot.transcendentals += oc.transcendentals * runs;
			tot.bytes += oc.bytes * runs;
			tot.gemm_flops += oc.gemm_flops * runs;
			step_floor += fl * runs;
			if (oc.flops == 0 && oc.bytes == 0 && oc.transcendentals == 0)
				continue;  /* parameters, tuples, calls: nothing of their own */
			if (r->json) {
				sb_printf(b, "%s{\"name\":", first ? "" : ",");
				put_json_str(b, in->name);
				sb_printf(b, ",\"opcode\":\"%s\",\"region\":%s", opcode_name(in->op), region ? "true" : "false");
				if (region) {
					const plan_region *g = &p->regions[ps->region];
					sb_puts(b, ",\"members\":[");
					for (int q = 0; q < g->nmem; q++) {
						sb_puts(b, q ? "," : "");
						put_json_str(b, c->instrs[g->mem_pos[q]]->name);
					}
					sb_putc(b, ']');
				}
				sb_printf(b, ",\"flops\":%.0f,\"transcendentals\":%.0f,\"bytes\":%.0f,\"floor_s\":%.9g}",
					  oc.flops, oc.transcendentals, oc.bytes, fl);
			} else {
				put_count(b, oc.flops, 12, "");
				put_count(b, oc.transcendentals, 13, "");
				put_count(b, oc.bytes, 13, "B");
				put_secs(b, fl, 12);
				sb_puts(b, "  ");
				put_step_name(b, in, region, nmem);
				sb_putc(b, '\n');
			}
			first = 0;
		}
		if (r->json)
			sb_puts(b, "]}");
		plan_free(p);
	}
	double io = io_bytes(m);
	op_cost floor_c = { tot.gemm_flops, 0, io, tot.gemm_flops };
	double floor = cost_floor(&floor_c, mach);
	if (st == HLOI_OK && r->json) {
		sb_printf(b, "],\"total\":{\"flops\":%.0f,\"gemm_flops\":%.0f,\"transcendentals\":%.0f,\"bytes\":%.0f,"
			     "\"io_bytes\":%.0f,\"floor_s\":%.9g,\"step_floor_s\":%.9g}}\n",
			  tot.flops, tot.gemm_flops, tot.transcendentals, tot.bytes, io, floor, step_floor);
	} else if (st == HLOI_OK) {
		sb_puts(b, "\nmodule: ");
		put_count(b, tot.flops, 0, "FLOP");
		sb_puts(b, " (");
		put_count(b, tot.gemm_flops, 0, "FLOP");
		sb_puts(b, " in dot and convolution), ");
		put_count(b, tot.transcendentals, 0, "");
		sb_puts(b, " transcendentals, ");
		put_count(b, tot.bytes, 0, "B");
		sb_puts(b, " accessed; parameters and result ");
		put_count(b, io, 0, "B");
		sb_putc(b, '\n');
		if (mach->gflops > 0 || mach->gbps > 0) {
			sb_puts(b, "floor: ");
			put_secs(b, floor, 0);
			sb_puts(b, " (dot and convolution FLOPs at the GEMM speed, or parameters and result at the bandwidth, whichever is longer); the steps' own floors add up to ");
			put_secs(b, step_floor, 0);
			sb_putc(b, '\n');
		}
		sb_puts(b, "a while loop's body and condition are counted once; `hloi run --profile` counts every iteration\n");
	}
	hloi_free(w.v);
	return st != HLOI_OK ? st : b->oom ? HLOI_ENOMEM : HLOI_OK;
}

/* --- profiles -------------------------------------------------------------------------- */

static int cmp_key(const void *x, const void *y)
{
	const prof_rec *a = x, *b = y;
	uintptr_t p = (uintptr_t)a->key, q = (uintptr_t)b->key;
	return p < q ? -1 : p > q;
}

static int cmp_self(const void *x, const void *y)
{
	const prof_rec *a = x, *b = y;
	if (a->self_ns != b->self_ns)
		return a->self_ns < b->self_ns ? 1 : -1;
	return cmp_key(x, y);
}

/* Every shard's records merged by key (participants added up). */
static prof_rec *merged(const hloi_profile *p, size_t *count)
{
	size_t n = 0, k = 0;
	for (int i = 0; i < p->nshards; i++)
		n += p->shards[i]->n;
	prof_rec *v = hloi_calloc(n ? n : 1, sizeof *v);
	*count = 0;
	if (!v)
		return NULL;
	for (int i = 0; i < p->nshards; i++)
		for (size_t j = 0; j < p->shards[i]->cap; j++)
			if (p->shards[i]->recs[j].key)
				v[k++] = p->shards[i]->recs[j];
	qsort(v, k, sizeof *v, cmp_key);
	size_t out = 0;
	for (size_t j = 0; j < k; j++) {
		if (out && v[out - 1].key == v[j].key) {
			v[out - 1].calls += v[j].calls;
			v[out - 1].total_ns += v[j].total_ns;
			v[out - 1].self_ns += v[j].self_ns;
			v[out - 1].iterations += v[j].iterations;
		} else {
			v[out++] = v[j];
		}
	}
	*count = out;
	return v;
}

typedef struct op_total {
	const char *name;
	uint64_t self_ns, calls;
	double floor_s;
} op_total;

static int cmp_op(const void *x, const void *y)
{
	const op_total *a = x, *b = y;
	if (a->self_ns != b->self_ns)
		return a->self_ns < b->self_ns ? 1 : -1;
	return strcmp(a->name, b->name);
}

hloi_status eval_profile_report(strbuf *b, const hloi_profile *p, const module *m, const report_opts *r)
{
	size_t n = 0;
	prof_rec *v = merged(p, &n);
	if (!v)
		return HLOI_ENOMEM;
	const cost_machine *mach = machine_of(r);
	size_t nsteps = 0;
	uint64_t total_self = 0;
	for (size_t j = 0; j < n; j++)
		total_self += v[j].self_ns;
	/* the steps, slowest first */
	prof_rec *steps = hloi_calloc(n ? n : 1, sizeof *steps);
	op_total *ops = hloi_calloc(n ? n : 1, sizeof *ops);
	if (!steps || !ops) {
		hloi_free(v);
		hloi_free(steps);
		hloi_free(ops);
		return HLOI_ENOMEM;
	}
	for (size_t j = 0; j < n; j++)
		steps[nsteps++] = v[j];
	qsort(steps, nsteps, sizeof *steps, cmp_self);
	double runs = p->runs ? (double)p->runs : 1;
	double parts = p->nshards ? (double)p->nshards : 1;
	double per = runs * parts;  /* divides sums into one participant's run */
	size_t nops = 0;
	double gemm = 0, step_floor = 0, flops = 0, bytes = 0;
	for (size_t j = 0; j < nsteps; j++) {
		const instr *in = steps[j].key;
		const char *name = steps[j].region && steps[j].nmem > 1 ? "(fused region)" : opcode_name(in->op);
		op_cost c = { steps[j].flops, steps[j].transcendentals, steps[j].bytes, steps[j].gemm_flops };
		double fl = cost_floor(&c, mach) * (double)steps[j].calls;
		gemm += steps[j].gemm_flops * (double)steps[j].calls;
		flops += steps[j].flops * (double)steps[j].calls;
		bytes += steps[j].bytes * (double)steps[j].calls;
		step_floor += fl;
		size_t k = 0;
		while (k < nops && strcmp(ops[k].name, name) != 0)
			k++;
		if (k == nops) {
			ops[nops].name = name;
			nops++;
		}
		ops[k].self_ns += steps[j].self_ns;
		ops[k].calls += steps[j].calls;
		ops[k].floor_s += fl;
	}
	qsort(ops, nops, sizeof *ops, cmp_op);
	double run_s = (double)p->run_ns / runs / 1e9, steps_s = (double)total_self / per / 1e9;
	double io = io_bytes(m);
	op_cost floor_c = { gemm / per, 0, io, gemm / per };
	double floor = cost_floor(&floor_c, mach);
	/* listed in text: the steps that do work, and any other that took a
	 * visible part of the time (a loop's or a call's own overhead);
	 * parameters, tuples and the like count in the totals only (JSON
	 * lists every step) */
	size_t listed = 0;
	for (size_t j = 0; j < nsteps; j++) {
		const prof_rec *s = &steps[j];
		int costed = s->flops > 0 || s->bytes > 0 || s->transcendentals > 0;
		if (r->json || costed || (total_self && (double)s->self_ns >= 0.001 * (double)total_self))
			steps[listed++] = *s;
	}
	size_t hidden = nsteps - listed;
	nsteps = listed;
	size_t shown = r->top > 0 && (size_t)r->top < nsteps ? (size_t)r->top : nsteps;
	if (r->json) {
		sb_puts(b, "{\"module\":");
		put_json_str(b, m->name ? m->name : "module");
		sb_printf(b, ",\"runs\":%" PRIu64 ",\"participants\":%d,\"threads\":%d,\"run_s\":%.9g,\"steps_s\":%.9g,",
			  p->runs, p->nshards, p->threads, run_s, steps_s);
		put_machine_json(b, r);
		sb_printf(b, ",\"flops\":%.0f,\"gemm_flops\":%.0f,\"bytes\":%.0f,\"io_bytes\":%.0f,\"floor_s\":%.9g,"
			     "\"step_floor_s\":%.9g,\"partial\":%s,\"steps\":[",
			  flops / per, gemm / per, bytes / per, io, floor, step_floor / per, p->failed ? "true" : "false");
	} else {
		sb_printf(b, "profile of %s: %" PRIu64 " run%s", m->name ? m->name : "module", p->runs,
			  p->runs == 1 ? "" : "s");
		if (p->nshards > 1)
			sb_printf(b, " of %d participants (times per participant)", p->nshards);
		sb_printf(b, ", %d thread%s; ", p->threads, p->threads == 1 ? "" : "s");
		put_secs(b, run_s, 0);
		sb_puts(b, " per run, ");
		put_secs(b, steps_s, 0);
		sb_puts(b, " in its steps\n");
		put_machine(b, r);
		sb_printf(b, "%11s %6s %9s %9s %9s %6s  %s\n", "self/run", "share", "calls/run", "GFLOP/s", "GB/s",
			  "limit", "step");
	}
	for (size_t j = 0; j < shown; j++) {
		const prof_rec *s = &steps[j];
		const instr *in = s->key;
		double self = (double)s->self_ns / 1e9, calls = (double)s->calls;
		op_cost c = { s->flops, s->transcendentals, s->bytes, s->gemm_flops };
		double fl = cost_floor(&c, mach) * calls;
		double share = total_self ? (double)s->self_ns / (double)total_self : 0;
		double gf = self > 0 ? (s->flops + s->transcendentals) * calls / self / 1e9 : 0;
		double gb = self > 0 ? s->bytes * calls / self / 1e9 : 0;
		double frac = self > 0 && fl > 0 ? fl / self : 0;
		double trips = in->op == OP_WHILE && s->calls ? (double)s->iterations / calls : -1;
		int costed = s->flops > 0 || s->bytes > 0 || s->transcendentals > 0;
		if (r->json) {
			sb_printf(b, "%s{\"name\":", j ? "," : "");
			put_json_str(b, in->name);
			sb_puts(b, ",\"computation\":");
			put_json_str(b, s->comp->name);
			sb_printf(b, ",\"opcode\":\"%s\",\"region\":%s,\"instructions\":%d,\"calls\":%.9g,\"self_s\":%.9g,"
				     "\"total_s\":%.9g,\"share\":%.6f,\"flops\":%.0f,\"transcendentals\":%.0f,\"bytes\":%.0f,"
				     "\"gflops\":%.4f,\"gbps\":%.4f,\"floor_s\":%.9g,\"fraction\":%.6f",
				  opcode_name(in->op), s->region ? "true" : "false", s->nmem, calls / per, self / per,
				  (double)s->total_ns / 1e9 / per, share, s->flops, s->transcendentals, s->bytes, gf, gb,
				  fl / per, frac);
			if (trips >= 0)
				sb_printf(b, ",\"trip_count\":%.9g", trips);
			sb_putc(b, '}');
			continue;
		}
		put_secs(b, self / per, 11);
		sb_printf(b, " %5.1f%% %9.4g", share * 100, calls / per);
		if (costed)
			sb_printf(b, " %9.2f %9.2f", gf, gb);
		else
			sb_printf(b, " %9s %9s", "-", "-");
		if (costed && frac > 0)
			sb_printf(b, " %5.1f%%", frac * 100);
		else
			sb_printf(b, " %6s", "-");
		sb_puts(b, "  ");
		put_step_name(b, in, s->region, s->nmem);
		if (s->comp != m->entry)
			sb_printf(b, " in %s", s->comp->name);
		if (trips >= 0)
			sb_printf(b, ", %.4g iteration%s", trips, trips == 1 ? "" : "s");
		sb_putc(b, '\n');
	}
	if (r->json) {
		sb_puts(b, "],\"by_opcode\":[");
		for (size_t k = 0; k < nops; k++) {
			sb_printf(b, "%s{\"opcode\":", k ? "," : "");
			put_json_str(b, ops[k].name);
			sb_printf(b, ",\"calls\":%.9g,\"self_s\":%.9g,\"share\":%.6f,\"floor_s\":%.9g}",
				  (double)ops[k].calls / per, (double)ops[k].self_ns / 1e9 / per,
				  total_self ? (double)ops[k].self_ns / (double)total_self : 0, ops[k].floor_s / per);
		}
		sb_puts(b, "]}\n");
	} else {
		if (shown < nsteps)
			sb_printf(b, "(%zu of %zu steps; --top N shows more, --top 0 all)\n", shown, nsteps);
		if (hidden)
			sb_printf(b, "(%zu step%s without work of %s own under 0.1%% each not listed: parameters, tuples, ...)\n",
				  hidden, hidden == 1 ? "" : "s", hidden == 1 ? "its" : "their");
		sb_printf(b, "\nby opcode:\n%11s %6s %9s %11s  %s\n", "self/run", "share", "calls/run", "floor", "opcode");
		for (size_t k = 0; k < nops; k++) {
			put_secs(b, (double)ops[k].self_ns / 1e9 / per, 11);
			sb_printf(b, " %5.1f%% %9.4g", total_self ? 100.0 * (double)ops[k].self_ns / (double)total_self : 0,
				  (double)ops[k].calls / per);
			put_secs(b, ops[k].floor_s / per, 12);
			sb_printf(b, "  %s\n", ops[k].name);
		}
		sb_puts(b, "\ntotal: ");
		put_count(b, flops / per, 0, "FLOP");
		sb_puts(b, ", ");
		put_count(b, bytes / per, 0, "B");
		sb_puts(b, " accessed per run");
		if (mach->gflops > 0 || mach->gbps > 0) {
			sb_puts(b, "; floor ");
			put_secs(b, floor, 0);
			sb_printf(b, " (%.1fx), the steps' own floors ", floor > 0 ? run_s / floor : 0);
			put_secs(b, step_floor / per, 0);
		}
		sb_putc(b, '\n');
		if (p->failed)
			sb_puts(b, "note: out of memory while profiling: some steps are missing\n");
	}
	hloi_free(v);
	hloi_free(steps);
	hloi_free(ops);
	return b->oom ? HLOI_ENOMEM : HLOI_OK;
}

/* --- the trace ------------------------------------------------------------------------- */

hloi_status eval_profile_trace(const hloi_profile *p, FILE *f)
{
	if (!(p->flags & HLOI_PROFILE_TRACE))
		return HLOI_EINVAL;
	strbuf b = STRBUF_INIT;
	b.sink = f;  /* written as it grows: a trace may hold millions of events */
	sb_puts(&b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
	for (int i = 0; i < p->nshards; i++) {
		const prof_shard *s = p->shards[i];
		long long pid = (long long)s->participant;
		sb_printf(&b, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%lld,\"args\":{\"name\":\"participant %lld\"}}",
			  i ? ",\n" : "", pid, pid);
		sb_printf(&b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":0,\"args\":{\"name\":\"steps\"}}",
			  pid);
		for (int t = 1; t <= s->max_tid; t++)
			sb_printf(&b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":%d,\"args\":{\"name\":\"worker %d\"}}",
				  pid, t, t - 1);
		for (size_t k = 0; k < s->nevents; k++) {
			const prof_event *ev = &s->events[k];
			sb_puts(&b, ",\n{\"name\":");
			put_json_str(&b, ev->in->name);
			sb_printf(&b, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%lld,\"tid\":%d,"
				      "\"args\":{\"opcode\":\"%s\",\"depth\":%d%s}}",
				  ev->region ? "fusion" : opcode_name(ev->in->op), (double)ev->t0 / 1e3, (double)ev->dur / 1e3,
				  pid, ev->tid, opcode_name(ev->in->op), ev->depth, ev->region ? ",\"fused region\":true" : "");
		}
		if (s->dropped)
			sb_printf(&b, ",\n{\"name\":\"%" PRIu64 " later steps not kept\",\"ph\":\"i\",\"s\":\"p\",\"ts\":0,\"pid\":%lld,\"tid\":0}",
				  s->dropped, pid);
	}
	sb_puts(&b, "\n]}\n");
	int bad = sb_flush(&b) != 0 || b.oom;
	sb_free(&b);
	return bad || fflush(f) != 0 ? HLOI_EIO : HLOI_OK;
}
