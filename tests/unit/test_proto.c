/* Unit tests for proto interchange (doc/spec.md §6): round trips of every golden
 * program through .pb and .pbtxt, the XLA-style fixtures, snapshots, the
 * text-format reader and writer (checked against protoc when it is
 * installed), malformed input of every kind, and allocation failures. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/check.h"
#include "core/literal.h"
#include "io/file.h"
#include "ir/ir.h"
#include "proto/proto.h"
#include "proto/proto_internal.h"
#include "text/parse.h"
#include "text/print.h"
#include "unit.h"
#include "util/alloc.h"
#include "util/str.h"
#include "util/strbuf.h"

#define PROTO_DIR HLOI_TESTDATA "/proto"

/* --- helpers ----------------------------------------------------------------- */

static char *read_all(const char *path, size_t *len)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	char *text = NULL;
	if (file_read_all(&text, len, ctx, path) != HLOI_OK)
		text = NULL;
	hloi_context_free(ctx);
	return text;
}

static char *module_text(const module *m)
{
	strbuf b = STRBUF_INIT;
	text_print_module(&b, m);
	return sb_take(&b);
}

static char *literal_text(const hloi_literal *lit)
{
	strbuf b = STRBUF_INIT;
	literal_print(&b, lit, 1, 0);
	return sb_take(&b);
}

/* The last error message recorded, or "". */
static const char *last_error(hloi_context *ctx)
{
	const char *e = hloi_context_last_error(ctx);
	return e ? e : "";
}

/* Loads a fixture below testdata/proto (binary or text by extension). */
static hloi_status load_fixture(module **out, hloi_context *ctx, const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", PROTO_DIR, name);
	size_t len = 0;
	char *data = read_all(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	hloi_status st = str_has_suffix(name, ".pbtxt") ? proto_load_text(out, ctx, name, data, len) :
		proto_load_binary(out, ctx, name, (const unsigned char *)data, len);
	hloi_free(data);
	return st;
}

static const instr *find_instr(const module *m, const char *name)
{
	for (int c = 0; c < m->ncomps; c++)
		for (int i = 0; i < m->comps[c]->ninstrs; i++)
			if (strcmp(m->comps[c]->instrs[i]->name, name) == 0)
				return m->comps[c]->instrs[i];
	return NULL;
}

static char *diag_text(hloi_context *ctx);
static void expect_in(const char *text, const char *want);

/* The instruction `name` of computation `comp` (names are unique within a
 * computation only). */
static const instr *find_instr_in(const module *m, const char *comp, const char *name)
{
	const computation *cc = module_find_computation(m, comp);
	for (int i = 0; cc && i < cc->ninstrs; i++)
		if (strcmp(cc->instrs[i]->name, name) == 0)
			return cc->instrs[i];
	return NULL;
}

/* --- round trips of the golden programs ---------------------------------------- */

typedef struct rt_stats {
	int programs;      /* parsed */
	int round_trips;   /* through .pb and .pbtxt and back */
	int runs;          /* evaluated before and after, equal */
	int spliced;       /* written streamed, equal to the whole tree packed */
	int files;         /* written to a file by pieces, equal to the buffer */
	char dir[64];      /* scratch directory for those files */
} rt_stats;

/* Canonical texts must match line for line. The text printer shows a
 * constant parsed from text by its literal tree and one read from a proto
 * by its value, so constant lines are compared up to `constant(` and their
 * values are compared as literals. */
static void compare_texts(const char *path, const char *a, const char *b)
{
	const char *p = a, *q = b;
	int line = 1, ok = 1;
	while (*p || *q) {
		const char *pe = strchr(p, '\n'), *qe = strchr(q, '\n');
		size_t pn = pe ? (size_t)(pe - p) : strlen(p);
		size_t qn = qe ? (size_t)(qe - q) : strlen(q);
		const char *k = strstr(p, " constant(");
		if (k && k < p + pn) {
			size_t pre = (size_t)(k - p) + 10;
			ok = qn >= pre && memcmp(p, q, pre) == 0;
		} else {
			ok = pn == qn && memcmp(p, q, pn) == 0;
		}
		if (!ok) {
			fprintf(stderr, "\n%s: line %d differs:\n  %.*s\n  %.*s\n", path, line, (int)pn, p, (int)qn,
				q);
			break;
		}
		p = pe ? pe + 1 : p + pn;
		q = qe ? qe + 1 : q + qn;
		line++;
	}
	CU_ASSERT(ok);
}

static void compare_constants(const char *path, const module *a, const module *b)
{
	for (int c = 0; c < a->ncomps; c++) {
		for (int i = 0; i < a->comps[c]->ninstrs; i++) {
			const instr *x = a->comps[c]->instrs[i];
			if (x->op != OP_CONSTANT || !x->value)
				continue;
			const instr *y = find_instr_in(b, a->comps[c]->name, x->name);
			CU_ASSERT_PTR_NOT_NULL_FATAL(y);
			CU_ASSERT_PTR_NOT_NULL_FATAL(y->value);
			char *sx = literal_text(x->value), *sy = literal_text(y->value);
			CU_ASSERT_STRING_EQUAL(sx, sy);
			CU_ASSERT_EQUAL(x->value->elided, y->value->elided);
			CU_ASSERT(shape_compatible(&x->value->shape, &y->value->shape));
			if (x->value->nbytes == y->value->nbytes && x->value->data && y->value->data &&
			    layout_equal(&x->value->shape.layout, &y->value->shape.layout))
				CU_ASSERT(memcmp(x->value->data, y->value->data, x->value->nbytes) == 0);
			if (strcmp(sx, sy) != 0)
				fprintf(stderr, "\n%s: constant %s differs\n", path, x->name);
			hloi_free(sx);
			hloi_free(sy);
		}
	}
}

/* Runs a checked module on `inputs`; the printed result or the status. */
static char *run_text(module *m, hloi_context *ctx, hloi_literal **inputs, size_t n)
{
	hloi_literal *out = NULL;
	/* the goldens' own step limits are at most 10^5 (the loops that never
	 * end): the same status, without running ten million steps */
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.max_steps = 100000;
	hloi_status st = hloi_module_run(m, ctx, inputs, n, &o, &out);
	char *s;
	if (st == HLOI_OK) {
		s = literal_text(out);
	} else {
		char buf[64];
		snprintf(buf, sizeof buf, "status %d", (int)st);
		s = hloi_strdup(buf);
	}
	hloi_literal_free(out);
	hloi_context_clear(ctx);
	return s;
}

static int omits_shape(const module *m)
{
	for (int c = 0; c < m->ncomps; c++)
		for (int i = 0; i < m->comps[c]->ninstrs; i++)
			if (!m->comps[c]->instrs[i]->has_shape)
				return 1;
	return 0;
}

static int tree_has_elided(const lit_node *n, int depth)
{
	if (n->kind == LIT_ELIDED)
		return 1;
	for (int i = 0; n->kind == LIT_TUPLE && i < n->n && depth < 64; i++)
		if (tree_has_elided(n->kids[i], depth + 1))
			return 1;
	return 0;
}

/* Whether a constant is a tuple with an elided element, which a proto
 * cannot hold (the writer refuses it; an elided array is marked). */
static int has_elided_tuple_constant(const module *m)
{
	for (int c = 0; c < m->ncomps; c++)
		for (int i = 0; i < m->comps[c]->ninstrs; i++) {
			const instr *in = m->comps[c]->instrs[i];
			if (in->op == OP_CONSTANT && in->literal && in->literal->kind == LIT_TUPLE &&
			    tree_has_elided(in->literal, 0))
				return 1;
		}
	return 0;
}

/* The inferred result shapes as if the text had written them. */
static void write_inferred_shapes(module *m)
{
	for (int c = 0; c < m->ncomps; c++)
		for (int i = 0; i < m->comps[c]->ninstrs; i++) {
			instr *in = m->comps[c]->instrs[i];
			if (!in->has_shape) {
				in->shape = in->result;
				in->has_shape = 1;
			}
		}
}

static void roundtrip_file(const char *path, rt_stats *stats)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	size_t len = 0;
	char *text = read_all(path, &len);
	module *m1 = NULL, *m2 = NULL, *m3 = NULL, *m4 = NULL;
	unsigned char *pb1 = NULL, *pb2 = NULL, *pb4 = NULL;
	char *tx1 = NULL, *tx3 = NULL, *s1 = NULL, *s2 = NULL, *s3 = NULL;
	size_t n1 = 0, n2 = 0, n4 = 0, t1 = 0, t3 = 0;
	hloi_literal **inputs = NULL;
	size_t ninputs = 0;
	if (!text || text_parse_module(&m1, ctx, path, text, len) != HLOI_OK)
		goto done;
	stats->programs++;
	/* The writer resolves names itself, so an unchecked module converts;
	 * a result shape the text leaves out reaches the proto once the
	 * checker has inferred it. */
	if (omits_shape(m1)) {
		hloi_check_options o = HLOI_CHECK_OPTIONS_INIT;
		if (check_module(m1, ctx, &o) == HLOI_OK)
			write_inferred_shapes(m1);
		hloi_context_clear(ctx);
	}
	if (proto_save_binary(&pb1, &n1, m1, ctx) != HLOI_OK) {
		/* only for programs the checker rejects too, and for tuple
		 * constants with an elided element */
		const char *why = hloi_context_last_error(ctx);
		if (has_elided_tuple_constant(m1)) {
			CU_ASSERT(why && strstr(why, "has an elided element ({...}), which a proto cannot hold"));
			goto done;
		}
		hloi_context_clear(ctx);
		CU_ASSERT(check_module(m1, ctx, NULL) == HLOI_ETYPE);
		goto done;
	}
	CU_ASSERT_FATAL(proto_save_text(&tx1, &t1, m1, ctx) == HLOI_OK);
	hloi_status ls = proto_load_binary(&m2, ctx, "x.pb", pb1, n1);
	hloi_status lt = proto_load_text(&m3, ctx, "x.pbtxt", tx1, t1);
	CU_ASSERT_EQUAL(ls, lt);
	hloi_check_options opts = HLOI_CHECK_OPTIONS_INIT;
	hloi_status c1 = check_module(m1, ctx, &opts);
	if (ls != HLOI_OK) {
		/* The loader may only reject what the checker rejects (invalid
		 * layouts, which it validates itself). */
		CU_ASSERT(c1 == HLOI_ETYPE);
		if (c1 != HLOI_ETYPE)
			fprintf(stderr, "\n%s: %s\n", path, last_error(ctx));
		goto done;
	}
	stats->round_trips++;
	s1 = module_text(m1);
	s2 = module_text(m2);
	s3 = module_text(m3);
	compare_texts(path, s1, s2);
	CU_ASSERT_STRING_EQUAL(s2, s3);
	/* proto -> IR -> proto is the identity, in both formats */
	CU_ASSERT_FATAL(proto_save_binary(&pb2, &n2, m2, ctx) == HLOI_OK);
	CU_ASSERT(n1 == n2 && memcmp(pb1, pb2, n1) == 0);
	CU_ASSERT_FATAL(proto_save_text(&tx3, &t3, m3, ctx) == HLOI_OK);
	CU_ASSERT(t1 == t3 && strcmp(tx1, tx3) == 0);
	/* the same status from the checker, and the same values */
	hloi_status c2 = check_module(m2, ctx, &opts);
	hloi_status c3 = check_module(m3, ctx, &opts);
	if (c1 != c2) {
		/* What the text says but a proto cannot (operand shapes written
		 * in an operand list) the canonical text drops too. */
		char *canon = module_text(m1);
		CU_ASSERT_FATAL(text_parse_module(&m4, ctx, "canon.hlo", canon, strlen(canon)) == HLOI_OK);
		hloi_free(canon);
		c1 = check_module(m4, ctx, &opts);
	}
	CU_ASSERT_EQUAL(c1, c2);
	CU_ASSERT_EQUAL(c1, c3);
	if (c1 != c2)
		fprintf(stderr, "\n%s: checker says %d for the text, %d for the proto\n", path, (int)c1, (int)c2);
	hloi_context_clear(ctx);
	if (c1 != HLOI_OK || c2 != HLOI_OK)
		goto done;
	compare_constants(path, m1, m2);
	/* a checked module writes the same bytes */
	CU_ASSERT_FATAL(proto_save_binary(&pb4, &n4, m1, ctx) == HLOI_OK);
	CU_ASSERT(n1 == n4 && memcmp(pb1, pb4, n1) == 0);
	{
		/* the writer packs one instruction at a time and splices them
		 * in: the bytes are protobuf-c's for the whole tree */
		arena a;
		arena_init(&a);
		Xla__HloModuleProto *mp = NULL;
		CU_ASSERT_FATAL(proto_build_module(&mp, &a, m1, ctx, NULL) == HLOI_OK);
		size_t nw = xla__hlo_module_proto__get_packed_size(mp);
		unsigned char *w = hloi_malloc(nw ? nw : 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(w);
		xla__hlo_module_proto__pack(mp, w);
		CU_ASSERT(nw == n4 && memcmp(w, pb4, nw) == 0);
		stats->spliced += nw == n4 && memcmp(w, pb4, nw) == 0;
		hloi_free(w);
		arena_release(&a);
	}
	{
		/* hloi_module_save hands the pieces to the file as they are
		 * made: the same bytes */
		char out[128];
		snprintf(out, sizeof out, "%s/m.pb", stats->dir);
		CU_ASSERT_FATAL(hloi_module_save(m1, ctx, out, HLOI_FORMAT_PB) == HLOI_OK);
		size_t nf = 0;
		char *f = read_all(out, &nf);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		CU_ASSERT(nf == n4 && memcmp(f, pb4, nf) == 0);
		stats->files += nf == n4 && memcmp(f, pb4, nf) == 0;
		hloi_free(f);
		remove(out);
	}
	/* fresh inputs for each run: an in-place program writes into them */
	char *r[3] = { NULL, NULL, NULL };
	module *ms[3] = { m1, m2, m3 };
	for (int k = 0; k < 3; k++) {
		if (hloi_module_random_inputs(&inputs, &ninputs, m1, ctx, 42) != HLOI_OK)
			break;
		r[k] = run_text(ms[k], ctx, inputs, ninputs);
		hloi_literal_array_free(inputs, ninputs);
		inputs = NULL;
		ninputs = 0;
	}
	if (r[0] && r[1] && r[2]) {
		CU_ASSERT_STRING_EQUAL(r[0], r[1]);
		CU_ASSERT_STRING_EQUAL(r[0], r[2]);
		if (strcmp(r[0], r[1]) != 0)
			fprintf(stderr, "\n%s: results differ:\n%s\n%s\n", path, r[0], r[1]);
		if (strncmp(r[0], "status", 6) != 0)
			stats->runs++;
	}
	for (int k = 0; k < 3; k++)
		hloi_free(r[k]);
done:
	hloi_literal_array_free(inputs, ninputs);
	hloi_free(text);
	hloi_free(pb1);
	hloi_free(pb2);
	hloi_free(pb4);
	hloi_free(tx1);
	hloi_free(tx3);
	hloi_free(s1);
	hloi_free(s2);
	hloi_free(s3);
	module_destroy(m1);
	module_destroy(m2);
	module_destroy(m3);
	module_destroy(m4);
	hloi_context_free(ctx);
}

static void walk(const char *dir, rt_stats *stats)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		struct stat sb;
		if (stat(path, &sb))
			continue;
		if (S_ISDIR(sb.st_mode))
			walk(path, stats);
		else if (str_has_suffix(path, ".hlo"))
			roundtrip_file(path, stats);
	}
	closedir(d);
}

static void test_roundtrip_goldens(void)
{
	rt_stats stats = { 0, 0, 0, 0, 0, "/tmp/hloi_rt_XXXXXX" };
	CU_ASSERT_FATAL(mkdtemp(stats.dir) != NULL);
	unsigned long plain = proto_plain_written;
	walk(HLOI_TESTDATA, &stats);
	plain = proto_plain_written - plain;
	rmdir(stats.dir);
	fprintf(stderr, "\n  %d programs, %d round trips, %d evaluated ", stats.programs, stats.round_trips,
		stats.runs);
	CU_ASSERT(stats.programs >= 50);
	CU_ASSERT(stats.round_trips >= 50);
	CU_ASSERT(stats.runs >= 30);
	CU_ASSERT(stats.spliced >= 50);
	CU_ASSERT_EQUAL(stats.files, stats.spliced);
	/* the streamed writes, equal to the tree, packed most instructions
	 * themselves */
	CU_ASSERT(plain >= 1000);
}

/* What HLO text cannot say in XLA's fields travels in `hloi.` attributes:
 * a program exercising all of it comes back the same. */
static const char tricky[] =
	"HloModule weird, is_scheduled=true, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n"
	"\n"
	"fused (fp: f32[2]) -> f32[2] {\n"
	"  fp = f32[2]{0} parameter(0)\n"
	"  ROOT n = f32[2]{0} negate(fp)\n"
	"}\n"
	"\n"
	"cond {\n"
	"  cp = (s32[], f32[2]) parameter(0)\n"
	"  ci = s32[] get-tuple-element(cp), index=0\n"
	"  lim = s32[] constant(10)\n"
	"  lt = pred[] compare(ci, lim), direction=LT, type=SIGNED\n"
	"}\n"
	"\n"
	"body {\n"
	"  bp = (s32[], f32[2]) parameter(0)\n"
	"  ROOT bt = (s32[], f32[2]) copy(bp)\n"
	"}\n"
	"\n"
	"main.7 (p: f32[2]) -> f32[2] {\n"
	"  p = f32[2]{0} parameter(0), sharding={replicated}, metadata={op_type=\"Arg\" op_name=\"p\" source_file=\"a.py\" source_line=3}\n"
	"  c = bf16[3] constant({1.5, -2, 3})\n"
	"  pr = pred[2,2]{0,1} constant({ { true, false }, { false, true } })\n"
	"  u = u64[] constant(18446744073709551615)\n"
	"  t = (s32[], f32[2]) constant(( 1, {2, 3} ))\n"
	"  g = f32[2] get-tuple-element(t), index=1\n"
	"  e = f32[100] constant({...})\n"
	"  io = s32[4] iota(), iota_dimension=0\n"
	"  pd = f32[2,3]{0,1:pad(3,5)} constant({ { 1, 2, 3 }, { 4, 5, 6 } })\n"
	"  sc = f32[] constant(2)\n"
	"  bs = f32[2,3] broadcast(sc), dimensions={}\n"
	"  f = f32[2] fusion(p), calls=fused, kind=kLoop, backend_config=\"{\\\"x\\\":1}\"\n"
	"  w = (s32[], f32[2]) while(t), body=body, condition=cond\n"
	"  m = f32[2] multiply(f, g), frontend_attributes={b=\"2\",a=\"1\"}, control-predecessors={w}\n"
	"  ad = f32[2] add(m, sc), broadcast_dimensions={}\n"
	"  r = f32[2] add(ad, p), metadata={op_name=\"r\"}, backend_config={\"y\":2}\n"
	"}\n";

static void test_roundtrip_extras(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m1 = NULL, *m2 = NULL, *m3 = NULL;
	CU_ASSERT_FATAL(text_parse_module(&m1, ctx, "t.hlo", tricky, sizeof tricky - 1) == HLOI_OK);
	unsigned char *pb = NULL;
	char *tx = NULL;
	size_t n = 0, t = 0;
	CU_ASSERT_FATAL(proto_save_binary(&pb, &n, m1, ctx) == HLOI_OK);
	CU_ASSERT_FATAL(proto_save_text(&tx, &t, m1, ctx) == HLOI_OK);
	CU_ASSERT_FATAL(proto_load_binary(&m2, ctx, "t.pb", pb, n) == HLOI_OK);
	CU_ASSERT_FATAL(proto_load_text(&m3, ctx, "t.pbtxt", tx, t) == HLOI_OK);
	char *s1 = module_text(m1), *s2 = module_text(m2), *s3 = module_text(m3);
	compare_texts("tricky", s1, s2);
	CU_ASSERT_STRING_EQUAL(s2, s3);
	/* the facts behind the text */
	CU_ASSERT_FALSE(m2->entry->is_entry);
	CU_ASSERT_STRING_EQUAL(m2->entry->name, "main.7");
	CU_ASSERT_TRUE(m2->entry->has_signature);
	CU_ASSERT_EQUAL(m2->nheader_attrs, 2);
	const instr *e = find_instr(m2, "e");
	CU_ASSERT_TRUE(e->value && e->value->elided);
	const instr *io = find_instr(m2, "io");
	int64_t iod = -1;
	CU_ASSERT_TRUE(instr_int(io, ATTR_IOTA_DIMENSION, &iod) && iod == 0);
	const instr *f = find_instr(m2, "f");
	CU_ASSERT_PTR_NOT_NULL(instr_attr(f, ATTR_CALLS));
	CU_ASSERT_STRING_EQUAL(instr_text(f, ATTR_CALLS), "fused");
	const instr *ad = find_instr(m2, "ad");
	const int_list *adb = instr_ints(ad, ATTR_BROADCAST_DIMENSIONS);
	CU_ASSERT_TRUE(adb && adb->n == 0);
	const instr *pd = find_instr(m2, "pd");
	CU_ASSERT_EQUAL(pd->value->shape.layout.n_padded, 2);
	/* the padded, column-major constant keeps its values */
	int64_t idx[2] = { 1, 2 };
	float v;
	memcpy(&v, literal_element(pd->value, idx), 4);
	CU_ASSERT_DOUBLE_EQUAL(v, 6.0, 0);
	CU_ASSERT_FALSE(find_instr(m2, "lt")->is_root);
	hloi_free(s1);
	hloi_free(s2);
	hloi_free(s3);
	hloi_free(pb);
	hloi_free(tx);
	module_destroy(m1);
	module_destroy(m2);
	module_destroy(m3);
	hloi_context_free(ctx);
}

/* Plain instructions (elementwise ops and parameters with a written
 * layout and at most metadata in XLA's spelling) are packed straight to
 * wire bytes; everything else is built as a message. Both ways give the
 * same bytes, for metadata in XLA's spelling and in every other. */
static const char *const plain_metadata[] = {
	"",
	", metadata={op_type=\"Add\" op_name=\"jit(f)/add\" source_file=\"/a/b.py\" source_line=12}",
	", metadata={op_name=\"x\"}",
	", metadata={source_line=2147483647}",
	", metadata={source_line=7 source_end_line=8 source_column=3 source_end_column=9}",
	", metadata={deduplicated_name=\"d\" scheduling_name=\"s\"}",
	", metadata={op_type=\"Add\" op_name=\"x\" source_file=\"f\" source_line=1 source_end_line=2 "
	"source_column=3 source_end_column=4 deduplicated_name=\"d\" scheduling_name=\"s\"}",
	/* spelled otherwise: through the messages, spelling kept */
	", metadata={}",
	", metadata={op_name=\"x\"  op_type=\"y\"}",
	", metadata={op_name=\"x\" op_type=\"y\"}",
	", metadata={ op_name=\"x\"}",
	", metadata={op_name=\"\"}",
	", metadata={op_name=\"a\\\"b\"}",
	", metadata={op_name=\"caf\xc3\xa9\"}",
	", metadata={op_name='x'}",
	", metadata={source_line=0}",
	", metadata={source_line=012}",
	", metadata={source_line=-3}",
	", metadata={source_line=2147483648}",
	", metadata={op_type=\"t\" op_type=\"u\"}",
	", metadata={profile_type={1}}",
	", metadata={stack_frame_id=1}",
	", metadata={op_name=\"x\"}, sharding={replicated}",
	", frontend_attributes={a=\"1\"}",
};

static void test_plain_writer(void)
{
	size_t n = sizeof plain_metadata / sizeof plain_metadata[0];
	int plain = 0;
	for (size_t i = 0; i < n; i++) {
		const char *md = plain_metadata[i];
		char text[4096];
		snprintf(text, sizeof text,
			 "HloModule m\n\nENTRY e {\n"
			 "  p0 = f32[2,3]{1,0} parameter(0)%s\n"
			 "  p1 = f32[2,3]{0,1} parameter(1)%s\n"
			 "  a = f32[2,3]{1,0} add(p0, p1)%s\n"
			 "  n = f32[2,3]{1,0} negate(a)%s\n"
			 "  c = f32[2,3] copy(n)%s\n"
			 "  t = pred[2,3]{1,0} compare(c, n), direction=LT%s\n"
			 "  ROOT s = f32[2,3]{1,0} select(t, c, a)\n}\n",
			 md, md, md, md, md, md);
		hloi_context *ctx = NULL;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		module *m = NULL, *back = NULL;
		if (text_parse_module(&m, ctx, "plain.hlo", text, strlen(text)) != HLOI_OK) {
			/* what the parser refuses never reaches the writer */
			CU_ASSERT(i >= 7);
			hloi_context_free(ctx);
			continue;
		}
		unsigned char *fast = NULL, *slow = NULL;
		size_t nfast = 0, nslow = 0;
		unsigned long before = proto_plain_written;
		hloi_status sf = proto_save_binary(&fast, &nfast, m, ctx);
		unsigned long wrote = proto_plain_written - before;
		proto_plain_writer = 0;
		hloi_status ss = proto_save_binary(&slow, &nslow, m, ctx);
		proto_plain_writer = 1;
		CU_ASSERT_EQUAL(sf, ss);
		if (sf == HLOI_OK && ss == HLOI_OK) {
			CU_ASSERT(nfast == nslow && memcmp(fast, slow, nfast) == 0);
			/* in XLA's spelling, p0, p1, a and n (c's layout is not
			 * written, t is a compare, s a select) */
			CU_ASSERT_EQUAL(wrote, i < 7 ? 4u : 0u);
			plain += wrote > 0;
			/* and XLA's spelling comes back (some others come back
			 * as the same value: op_name="" as {}) */
			CU_ASSERT_FATAL(proto_load_binary(&back, ctx, "plain.pb", fast, nfast) == HLOI_OK);
			char *s1 = module_text(m), *s2 = module_text(back);
			if (i < 7)
				CU_ASSERT_STRING_EQUAL(s1, s2);
			hloi_free(s1);
			hloi_free(s2);
		}
		hloi_free(fast);
		hloi_free(slow);
		module_destroy(m);
		module_destroy(back);
		hloi_context_free(ctx);
	}
	CU_ASSERT_EQUAL(plain, 7);
}

/* --- fixtures written the way XLA writes ------------------------------------------ */

static void test_xla_style(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	CU_ASSERT_FATAL(load_fixture(&m, ctx, "xla_style.pb") == HLOI_OK);
	CU_ASSERT_STRING_EQUAL(m->name, "jit_f");
	CU_ASSERT_STRING_EQUAL(m->entry->name, "main.8");
	CU_ASSERT_EQUAL(m->entry->ninstrs, 6);
	CU_ASSERT_STRING_EQUAL(m->entry->root->name, "multiply.6");
	/* `layout {}` on a scalar is a layout */
	const instr *two = find_instr(m, "constant.4");
	CU_ASSERT_TRUE(two->shape->has_layout);
	CU_ASSERT_EQUAL(two->shape->rank, 0);
	/* the column-major constant: 1 4 2 5 3 6 in memory is {{1,2,3},{4,5,6}} */
	const instr *k = find_instr(m, "constant.2");
	CU_ASSERT_EQUAL(k->shape->layout.minor_to_major[0], 0);
	char *s = literal_text(k->value);
	CU_ASSERT_STRING_EQUAL(s, "f32[2,3] {\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n}");
	hloi_free(s);
	const instr *add = find_instr(m, "add.3");
	CU_ASSERT_EQUAL(add->nattrs, 1);
	CU_ASSERT_EQUAL(add->attrs[0].id, ATTR_METADATA);
	CU_ASSERT_STRING_EQUAL(instr_text(add, ATTR_METADATA), "{op_type=\"add\" op_name=\"jit(f)/jit(main)/add\"}");
	/* empty metadata {} and frontend_attributes {} leave no attributes;
	 * the sharding is XLA's sharding= */
	const instr *arg = find_instr(m, "Arg_0.1");
	CU_ASSERT_EQUAL(arg->nattrs, 1);
	CU_ASSERT_STRING_EQUAL(instr_text(arg, ATTR_SHARDING), "{replicated}");
	CU_ASSERT_PTR_NOT_NULL(instr_ints(find_instr(m, "broadcast.5"), ATTR_DIMENSIONS));
	CU_ASSERT_FATAL(check_module(m, ctx, NULL) == HLOI_OK);
	hloi_literal **in = NULL;
	size_t n = 0;
	const char input[] = "f32[2,3] {{0.5, 1, 1.5}, {2, 2.5, 3}}";
	CU_ASSERT_FATAL(hloi_literal_parse_list(&in, &n, ctx, "in", input, sizeof input - 1) == HLOI_OK);
	char *r = run_text(m, ctx, in, n);
	CU_ASSERT_STRING_EQUAL(r, "f32[2,3] {\n  { 3, 6, 9 },\n  { 12, 15, 18 }\n}");
	hloi_free(r);
	hloi_literal_array_free(in, n);
	module_destroy(m);
	hloi_context_free(ctx);
}

static void test_snapshot(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	CU_ASSERT_FATAL(load_fixture(&m, ctx, "snapshot.pb") == HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_module_snapshot_input_count(m), 2);
	CU_ASSERT_PTR_NULL(hloi_module_snapshot_input(m, 2));
	char *s = literal_text(hloi_module_snapshot_input(m, 1));
	CU_ASSERT_STRING_EQUAL(s, "s32[3] {2, 5, 1}");
	hloi_free(s);
	CU_ASSERT_FATAL(check_module(m, ctx, NULL) == HLOI_OK);
	hloi_literal *in[2] = { hloi_module_snapshot_input(m, 0), hloi_module_snapshot_input(m, 1) };
	char *r = run_text(m, ctx, in, 2);
	CU_ASSERT_STRING_EQUAL(r, "pred[3] {1, 0, 0}");
	hloi_free(r);
	module_destroy(m);

	/* an HloProto around a module with little-endian f16 bytes */
	CU_ASSERT_FATAL(load_fixture(&m, ctx, "hlo_proto.pb") == HLOI_OK);
	CU_ASSERT_EQUAL(hloi_module_snapshot_input_count(m), 0);
	s = literal_text(find_instr(m, "constant.2")->value);
	CU_ASSERT_STRING_EQUAL(s, "f16[2] {0.5, -2}");
	hloi_free(s);
	module_destroy(m);

	CU_ASSERT_FATAL(load_fixture(&m, ctx, "handwritten.pbtxt") == HLOI_OK);
	CU_ASSERT_STRING_EQUAL(m->name, "handwritten");
	s = literal_text(find_instr(m, "k")->value);
	CU_ASSERT_STRING_EQUAL(s, "bf16[2] {1, -2}");
	hloi_free(s);
	const instr *y = find_instr(m, "y");
	const int_list *yb = instr_ints(y, ATTR_BROADCAST_DIMENSIONS);
	CU_ASSERT_TRUE(yb && yb->n == 1);
	CU_ASSERT_STRING_EQUAL(instr_text(y, ATTR_METADATA), "{op_type=\"mul\" op_name=\"tab\\there \\\"quoted\\\"\"}");
	module_destroy(m);
	hloi_context_free(ctx);
}

/* --- the text format ----------------------------------------------------------------- */

static const char scalars_pbtxt[] =
	"# every way of writing a value\n"
	"hlo { hlo_module { name: 'm' entry_computation_name: \"main\"\n"
	"  computations { name: \"main\" instructions { name: \"p\" opcode: \"parameter\"\n"
	"    shape { element_type: F32 dimensions: 8 } } } } }\n"
	"arguments { shape { element_type: F32 dimensions: [8] }\n"
	"  f32s: [1, -2.5, inf, -inf, nan, 1e3, 0x10, 1.5f] }\n"
	"arguments < shape < element_type: S64 dimensions: 5 >\n"
	"  s64s: -9223372036854775808 s64s: 0x7fffffffffffffff; s64s: 017, s64s: [-1, 0] >\n"
	"arguments { shape: { element_type: PRED, dimensions: [6] }; preds: [true, false, t, f, 1, 0] }\n"
	"arguments { shape { element_type: 9 dimensions: 1 } u64s: 18446744073709551615 }\n"
	"arguments { shape { element_type: U8 dimensions: 4 } u8s: \"a\\n\" \"\\377\\x01\" }\n"
	"arguments { shape { element_type: F64 dimensions: 2 } f64s: -nan f64s: -0.0 }\n";

static void test_pbtxt_values(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	hloi_status st = proto_load_text(&m, ctx, "v.pbtxt", scalars_pbtxt, sizeof scalars_pbtxt - 1);
	if (st != HLOI_OK)
		fprintf(stderr, "\n%s\n", last_error(ctx));
	CU_ASSERT_FATAL(st == HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_module_snapshot_input_count(m), 6);
	const float *f = hloi_literal_data(hloi_module_snapshot_input(m, 0));
	CU_ASSERT_DOUBLE_EQUAL(f[0], 1, 0);
	CU_ASSERT_DOUBLE_EQUAL(f[1], -2.5, 0);
	CU_ASSERT_TRUE(isinf(f[2]) && f[2] > 0);
	CU_ASSERT_TRUE(isinf(f[3]) && f[3] < 0);
	CU_ASSERT_TRUE(isnan(f[4]));
	CU_ASSERT_DOUBLE_EQUAL(f[5], 1000, 0);
	CU_ASSERT_DOUBLE_EQUAL(f[6], 16, 0);
	CU_ASSERT_DOUBLE_EQUAL(f[7], 1.5, 0);
	const int64_t *s = hloi_literal_data(hloi_module_snapshot_input(m, 1));
	CU_ASSERT(s[0] == INT64_MIN && s[1] == INT64_MAX && s[2] == 15 && s[3] == -1 && s[4] == 0);
	const uint8_t *p = hloi_literal_data(hloi_module_snapshot_input(m, 2));
	CU_ASSERT(p[0] == 1 && p[1] == 0 && p[2] == 1 && p[3] == 0 && p[4] == 1 && p[5] == 0);
	const uint64_t *u = hloi_literal_data(hloi_module_snapshot_input(m, 3));
	CU_ASSERT(u[0] == UINT64_MAX);
	const uint8_t *b = hloi_literal_data(hloi_module_snapshot_input(m, 4));
	CU_ASSERT(b[0] == 'a' && b[1] == '\n' && b[2] == 0xff && b[3] == 1);
	const double *d = hloi_literal_data(hloi_module_snapshot_input(m, 5));
	CU_ASSERT(isnan(d[0]) && signbit(d[0]));
	CU_ASSERT(d[1] == 0 && signbit(d[1]));
	module_destroy(m);
	hloi_context_free(ctx);
}

/* The new types' literal fields: XLA writes sub-byte integers one per byte
 * in the low bits (s4 -1 is 0x0f) and ignores the bits above; c64s and
 * c128s interleave real and imaginary parts; the f8/f4 fields hold raw
 * encodings, one per byte. Written back the same way. */
static const char new_types_pbtxt[] =
	"hlo { hlo_module { name: 'm' entry_computation_name: \"main\"\n"
	"  computations { name: \"main\" instructions { name: \"p\" opcode: \"parameter\"\n"
	"    shape { element_type: F32 dimensions: 1 } } } } }\n"
	"arguments { shape { element_type: S4 dimensions: 4 } s4s: \"\\017\\010\\007\\367\" }\n"
	"arguments { shape { element_type: U2 dimensions: 2 } u2s: \"\\003\\377\" }\n"
	"arguments { shape { element_type: C64 dimensions: 2 } c64s: [1, -2, 0.5, nan] }\n"
	"arguments { shape { element_type: F8E4M3FN dimensions: 2 } f8e4m3fns: \"\\177\\070\" }\n"
	"arguments { shape { element_type: F4E2M1FN dimensions: 2 } f4e2m1fns: \"\\017\\372\" }\n"
	"arguments { shape { element_type: C128 dimensions: 1 } c128s: [0.25, -1e300] }\n";

static void test_new_type_literals(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	hloi_status st = proto_load_text(&m, ctx, "n.pbtxt", new_types_pbtxt, sizeof new_types_pbtxt - 1);
	if (st != HLOI_OK)
		fprintf(stderr, "\n%s\n", last_error(ctx));
	CU_ASSERT_FATAL(st == HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_module_snapshot_input_count(m), 6);
	const int8_t *s4 = hloi_literal_data(hloi_module_snapshot_input(m, 0));
	CU_ASSERT(s4[0] == -1 && s4[1] == -8 && s4[2] == 7 && s4[3] == 7);
	const uint8_t *u2 = hloi_literal_data(hloi_module_snapshot_input(m, 1));
	CU_ASSERT(u2[0] == 3 && u2[1] == 3);
	const float *c = hloi_literal_data(hloi_module_snapshot_input(m, 2));
	CU_ASSERT(c[0] == 1 && c[1] == -2 && c[2] == 0.5f && isnan(c[3]));
	const uint8_t *fn = hloi_literal_data(hloi_module_snapshot_input(m, 3));
	CU_ASSERT(fn[0] == 0x7f && fn[1] == 0x38);
	const uint8_t *f4 = hloi_literal_data(hloi_module_snapshot_input(m, 4));
	CU_ASSERT(f4[0] == 0x0f && f4[1] == 0x0a);
	const double *z = hloi_literal_data(hloi_module_snapshot_input(m, 5));
	CU_ASSERT(z[0] == 0.25 && z[1] == -1e300);
	/* the constant of a text program writes s4 -1 as \017, as XLA does */
	module_destroy(m);
	m = NULL;
	static const char prog[] = "HloModule m\nENTRY e {\n  ROOT c = s4[3] constant({-1, -8, 7})\n}\n";
	CU_ASSERT_FATAL(text_parse_module(&m, ctx, "p.hlo", prog, sizeof prog - 1) == HLOI_OK);
	char *tx = NULL;
	size_t tl = 0;
	CU_ASSERT_FATAL(proto_save_text(&tx, &tl, m, ctx) == HLOI_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(tx, "s4s: \"\\017\\010\\007\""));
	if (!strstr(tx, "s4s: \"\\017\\010\\007\""))
		fprintf(stderr, "\n%s\n", tx);
	hloi_free(tx);
	module_destroy(m);
	hloi_context_free(ctx);
}

static void expect_text_error(const char *text, const char *message)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	hloi_status st = proto_load_text(&m, ctx, "e.pbtxt", text, strlen(text));
	CU_ASSERT_EQUAL(st, HLOI_EPARSE);
	CU_ASSERT_PTR_NULL(m);
	CU_ASSERT_PTR_NOT_NULL(strstr(last_error(ctx), message));
	if (!strstr(last_error(ctx), message))
		fprintf(stderr, "\n'%s': got '%s', want '%s'\n", text, last_error(ctx), message);
	module_destroy(m);
	hloi_context_free(ctx);
}

/* XLA's fields the IR does not model are read from text as from binary
 * files and written back; a newer XLA's field known by name is skipped with
 * a warning (text has no number to keep it by); a typo is an error. */
static void test_pbtxt_xla_fields(void)
{
	static const char text[] =
		"name: \"m\" entry_computation_name: \"main\"\n"
		"schedule { sequences { key: 1 value { instruction_ids: [1] } } }\n"
		"computations { name: \"main\" root_id: 1 id: 1\n"
		"  instructions { name: \"p\" id: 1 opcode: \"parameter\"\n"
		"    shape { element_type: F32 layout { split_configs { dimension: 0 } } }\n"
		"    sharding { type: REPLICATED }\n"
		"    metadata { profile_type: [WINDOW] metadata_payload { } } } }\n";
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	CU_ASSERT_EQUAL(proto_load_text(&m, ctx, "x.pbtxt", text, sizeof text - 1), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_context_error_count(ctx), 0);
	CU_ASSERT_FATAL(m && m->entry && m->entry->ninstrs == 1);
	char *d = diag_text(ctx);
	CU_ASSERT_STRING_EQUAL(d, "x.pbtxt:7:39: warning: xla.OpMetadata.metadata_payload is a newer XLA's "
				  "field, not in hloi's schema; it is skipped\n"
				  "    metadata { profile_type: [WINDOW] metadata_payload { } } } }\n"
				  "                                      ^~~~~~~~~~~~~~~~\n");
	free(d);
	char *out = NULL;
	size_t n = 0;
	CU_ASSERT_FATAL(proto_save_text(&out, &n, m, ctx) == HLOI_OK);
	expect_in(out, "schedule {\n  sequences {\n    key: 1\n");
	expect_in(out, "      split_configs {\n");
	expect_in(out, "    sharding {\n");
	expect_in(out, "      profile_type: WINDOW\n");
	hloi_free(out);
	module_destroy(m);
	hloi_context_free(ctx);
	expect_text_error("computations { instructions { shardng { } } }",
			  "xla.HloInstructionProto has no field named 'shardng'");
}

static void test_pbtxt_errors(void)
{
	expect_text_error("name: \"x\" name: \"y\"", "field 'name' is given more than once");
	expect_text_error("id: 1.5", "expected an integer for field 'id' (int64)");
	expect_text_error("id: 99999999999999999999", "integer out of range for field 'id'");
	expect_text_error("computations { id: 9223372036854775808 }", "integer out of range");
	expect_text_error("name: [\"a\"]", "field 'name' is not repeated");
	expect_text_error("name { }", "field 'name' is a string, not a message");
	expect_text_error("computations: 5", "field 'computations' holds a message");
	expect_text_error("name: \"\\q\"", "invalid escape sequence");
	expect_text_error("name: \"a\\000b\"", "must be UTF-8 text without NUL bytes");
	expect_text_error("name: \"\\377\"", "must be UTF-8 text without NUL bytes");
	expect_text_error("is_dynamic: maybe", "expected true or false for field 'is_dynamic'");
	expect_text_error("[xla.ext]: 1", "syntax error");
	expect_text_error("name: \"x\" }", "syntax error, unexpected '}'");
	expect_text_error("name: 'x", "unterminated string");
	expect_text_error("name: \"x\" @", "invalid character '@'");
	expect_text_error("computations { instructions { shape { element_type: F33 } } }",
			  "unknown value 'F33' for enum xla.PrimitiveType");
	expect_text_error("computations { name: \"main\" instructions { name: \"p\" opcode: \"parameter\"\n"
			  "  shape { element_type: F32 } } }\n"
			  "input_output_alias { entries { kind: 3 } }",
			  "kind must be MAY_ALIAS or MUST_ALIAS");
	expect_text_error("computations { name: \"main\" instructions { name: \"p\" opcode: \"parameter\"\n"
			  "  shape { element_type: F32 dimensions: 1 layout { padding_value: 9 } } } }",
			  "invalid padding_value 9");
	expect_text_error("entry_computation_id: -x", "expected an integer");
	expect_text_error("nonsense: 1", "xla.HloModuleProto has no field named 'nonsense'");
	expect_text_error("", "the module has no computations");
}

/* A one-instruction module around `instr` (the fields of an instruction
 * named p with id 1, which is the root). */
static void expect_instr_error(const char *instr, const char *message)
{
	char text[2048];
	snprintf(text, sizeof text,
		 "name: \"m\" entry_computation_name: \"main\"\n"
		 "computations { name: \"main\" root_id: 1\n"
		 "  instructions { name: \"p\" id: 1 %s } }\n",
		 instr);
	expect_text_error(text, message);
}

static void test_validation(void)
{
	expect_instr_error("opcode: \"parameter\"", "shape is missing");
	expect_instr_error("opcode: \"frobnicate\" shape { element_type: F32 }", "unknown opcode 'frobnicate'");
	expect_instr_error("shape { element_type: F32 }", "instruction has no opcode");
	expect_instr_error("opcode: \"parameter\" parameter_number: -1 shape { element_type: F32 }",
			   "negative parameter_number -1");
	expect_instr_error("opcode: \"parameter\" shape { element_type: F32 dimensions: [2, -3] }",
			   "negative dimension -3 at index 1");
	expect_instr_error("opcode: \"parameter\" shape { }", "shape has no element_type");
	expect_instr_error("opcode: \"parameter\" shape { element_type: 1234 }", "invalid element_type 1234");
	/* XLA's buffer shape holds exactly one array shape */
	expect_instr_error("opcode: \"parameter\" shape { element_type: BUFFER }",
			   "a buffer shape needs exactly one shape in tuple_shapes");
	expect_instr_error("opcode: \"parameter\" shape { element_type: BUFFER dimensions: 2 "
			   "tuple_shapes { element_type: F32 } }",
			   "a buffer shape needs exactly one shape in tuple_shapes");
	expect_instr_error("opcode: \"parameter\" shape { element_type: BUFFER "
			   "tuple_shapes { element_type: TUPLE } }",
			   "a buffer shape must hold an array shape");
	expect_instr_error("opcode: \"parameter\" shape { element_type: BUFFER "
			   "tuple_shapes { element_type: BUFFER tuple_shapes { element_type: F32 } } }",
			   "a buffer shape must hold an array shape");
	expect_instr_error("opcode: \"parameter\" shape { element_type: F32 dimensions: 2 "
			   "is_dynamic_dimension: [true, false] }",
			   "is_dynamic_dimension has 2 entries for 1 dimensions");
	expect_instr_error("opcode: \"parameter\" shape { element_type: F32 dimensions: "
			   "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1] }",
			   "shape has 17 dimensions; hloi's maximum rank is 16");
	expect_instr_error("opcode: \"parameter\" shape { element_type: F32 dimensions: 2 "
			   "layout { minor_to_major: 0 dim_level_types: DIM_COMPRESSED } }",
			   "sparse layouts (dim_level_types) are not supported");
	expect_instr_error("opcode: \"parameter\" shape { element_type: F32 dimensions: [2, 2] "
			   "layout { minor_to_major: [0, 0] } }",
			   "layout minor_to_major field has duplicate values");
	expect_instr_error("opcode: \"parameter\" shape { element_type: TUPLE dimensions: 2 }",
			   "a tuple shape has dimensions");
	expect_instr_error("opcode: \"compare\" comparison_direction: \"SIDEWAYS\" "
			   "shape { element_type: PRED }",
			   "invalid comparison_direction 'SIDEWAYS'");
	expect_instr_error("opcode: \"compare\" comparison_type: \"FUZZY\" shape { element_type: PRED }",
			   "invalid comparison_type 'FUZZY'");
	expect_instr_error("opcode: \"constant\" shape { element_type: F32 }", "constant has no literal");
	expect_instr_error("opcode: \"constant\" shape { element_type: F16 dimensions: 2 }\n"
			   "literal { shape { element_type: F16 dimensions: 2 } f16s: \"abc\" }",
			   "literal of shape f16[2] needs 4 bytes in f16s, has 3");
	expect_instr_error("opcode: \"constant\" shape { element_type: S32 dimensions: 2 }\n"
			   "literal { shape { element_type: S32 dimensions: 3 } s32s: [1, 2, 3] }",
			   "literal of shape s32[3] does not match the instruction's shape s32[2]");
	expect_instr_error("opcode: \"constant\" shape { element_type: TUPLE tuple_shapes { element_type: S32 } }\n"
			   "literal { shape { element_type: TUPLE tuple_shapes { element_type: S32 } } }",
			   "has 0 elements in tuple_literals, expected 1");
	expect_instr_error("opcode: \"constant\" shape { element_type: F32 dimensions: 1 }\n"
			   "literal { shape { element_type: F32 dimensions: 1 "
			   "layout { minor_to_major: 0 padded_dimensions: 100000000 } } f32s: 1 }",
			   "hloi refuses padding that large");
	expect_instr_error("opcode: \"constant\" shape { element_type: F32 }\n"
			   "literal { shape { element_type: F32 } f32s: 1 sparse_indices: 0 }",
			   "sparse literals are not supported");
	expect_instr_error("opcode: \"get-tuple-element\" tuple_index: -1 shape { element_type: F32 }",
			   "negative tuple_index -1");
	expect_instr_error("opcode: \"iota\" dimensions: [0, 1] shape { element_type: S32 dimensions: 2 }",
			   "iota has 2 dimensions");
	expect_instr_error("opcode: \"call\" called_computation_ids: 0 shape { element_type: F32 }",
			   "calls its own computation");
	expect_instr_error("opcode: \"call\" called_computation_ids: 5 shape { element_type: F32 }",
			   "called computation id 5 is not defined");
	expect_instr_error("opcode: \"parameter\" control_predecessor_ids: 7 shape { element_type: F32 }",
			   "control predecessor 0 refers to unknown instruction id 7");
	expect_text_error("computations { name: \"a\" id: 1 root_id: 1 instructions { name: \"p\" id: 1\n"
			  "  opcode: \"call\" called_computation_ids: 2 shape { element_type: F32 } } }\n"
			  "computations { name: \"b\" id: 2 root_id: 1 instructions { name: \"q\" id: 1\n"
			  "  opcode: \"parameter\" shape { element_type: F32 } } }\n"
			  "entry_computation_id: 1",
			  "calls computation 'b' (id 2), which comes after its caller");
	expect_text_error("computations { name: \"a\" id: 1 instructions { name: \"p\" opcode: \"parameter\"\n"
			  "  shape { element_type: F32 } } }\n"
			  "computations { name: \"a\" id: 2 instructions { name: \"p\" opcode: \"parameter\"\n"
			  "  shape { element_type: F32 } } }",
			  "computation name 'a' is used twice");
	expect_text_error("computations { name: \"a\" instructions { name: \"p\" opcode: \"parameter\" id: 1\n"
			  "  shape { element_type: F32 } } instructions { name: \"p\" id: 2 opcode: \"parameter\"\n"
			  "  shape { element_type: F32 } } }",
			  "instruction name 'p' is used twice");
	expect_text_error("computations { name: \"a\" instructions { opcode: \"parameter\"\n"
			  "  shape { element_type: F32 } } }",
			  "instruction 0 (id 0) has no name");
	expect_text_error("computations { name: \"a\" }", "computation has no instructions");
	expect_text_error("hlo_module { }", "the module has no computations");
	expect_text_error("hlo { }", "HloSnapshot has no hlo.hlo_module");
}

/* Nesting deeper than the limit is an error, not a stack overflow. */
static void test_deep_nesting(void)
{
	const size_t levels = 100000;
	strbuf b = STRBUF_INIT;
	sb_puts(&b, "computations { instructions { shape ");
	for (size_t i = 0; i < levels; i++)
		sb_puts(&b, "{ tuple_shapes ");
	sb_puts(&b, "{ element_type: F32 }");
	for (size_t i = 0; i < levels; i++)
		sb_puts(&b, " }");
	sb_puts(&b, " } }");
	CU_ASSERT_FATAL(!b.oom);
	expect_text_error(b.s, "messages nested deeper than 100 levels");
	sb_free(&b);

	/* the same in wire format: sizes from the inside out, then the keys
	 * and lengths from the outside in */
	size_t *sizes = hloi_calloc(levels + 1, sizeof *sizes);
	CU_ASSERT_FATAL(sizes != NULL);
	sizes[0] = 2; /* element_type: F32 */
	for (size_t i = 1; i <= levels; i++) {
		size_t n = sizes[i - 1], vl = 1;
		for (size_t v = n; v >= 0x80; v >>= 7)
			vl++;
		sizes[i] = 1 + vl + n;
	}
	strbuf w = STRBUF_INIT;
	for (size_t i = levels; i >= 1; i--) {
		sb_putc(&w, 0x22); /* tuple_shapes */
		for (size_t v = sizes[i - 1]; ; v >>= 7) {
			sb_putc(&w, (char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
			if (v < 0x80)
				break;
		}
	}
	sb_putn(&w, "\x10\x0b", 2);
	hloi_free(sizes);
	CU_ASSERT_FATAL(!w.oom);
	/* wrap it: instruction { shape }, computation { instructions },
	 * module { computations } */
	const unsigned char tags[] = { 0x1a, 0x12, 0x1a };
	for (int k = 0; k < 3; k++) {
		strbuf o = STRBUF_INIT;
		sb_putc(&o, (char)tags[k]);
		for (size_t v = w.len; ; v >>= 7) {
			sb_putc(&o, (char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
			if (v < 0x80)
				break;
		}
		sb_putn(&o, w.s, w.len);
		sb_free(&w);
		w = o;
	}
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	CU_ASSERT_EQUAL(proto_load_binary(&m, ctx, "deep.pb", (const unsigned char *)w.s, w.len), HLOI_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(last_error(ctx), "messages nested deeper than 100 levels"));
	sb_free(&w);
	hloi_context_free(ctx);
}

/* --- malformed binary input ---------------------------------------------------------- */

static hloi_status try_load(const unsigned char *data, size_t len)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	hloi_status st = proto_load_binary(&m, ctx, "x.pb", data, len);
	CU_ASSERT(st == HLOI_OK || st == HLOI_EPARSE);
	if (st == HLOI_OK) {
		CU_ASSERT_PTR_NOT_NULL(m);
		/* whatever loads also checks without crashing */
		check_module(m, ctx, NULL);
	} else {
		CU_ASSERT_PTR_NULL(m);
		CU_ASSERT(hloi_context_error_count(ctx) > 0);
	}
	module_destroy(m);
	hloi_context_free(ctx);
	return st;
}

static void test_malformed_binary(void)
{
	char path[512];
	snprintf(path, sizeof path, "%s/xla_style.pb", PROTO_DIR);
	size_t len = 0;
	unsigned char *good = (unsigned char *)read_all(path, &len);
	CU_ASSERT_FATAL(good != NULL && len > 100);
	CU_ASSERT_EQUAL(try_load(good, len), HLOI_OK);
	/* every truncation */
	int rejected = 0;
	for (size_t k = 0; k < len; k++)
		rejected += try_load(good, k) != HLOI_OK;
	CU_ASSERT(rejected > (int)len / 2);
	/* every byte changed three ways */
	unsigned char *copy = hloi_malloc(len);
	CU_ASSERT_FATAL(copy != NULL);
	for (size_t k = 0; k < len; k++) {
		static const unsigned char masks[] = { 0x01, 0x80, 0xff };
		for (int j = 0; j < 3; j++) {
			memcpy(copy, good, len);
			copy[k] ^= masks[j];
			try_load(copy, len);
		}
	}
	hloi_free(copy);
	/* random bytes */
	uint64_t x = 0x9e3779b97f4a7c15u;
	unsigned char buf[256];
	for (int t = 0; t < 2000; t++) {
		size_t n = (size_t)(t % 256);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (unsigned char)x;
		}
		try_load(buf, n);
	}
	hloi_free(good);
}

static void expect_bad_fixture(const char *name, const char *message)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	char path[256];
	snprintf(path, sizeof path, "bad/%s", name);
	CU_ASSERT_EQUAL(load_fixture(&m, ctx, path), HLOI_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(last_error(ctx), message));
	if (!strstr(last_error(ctx), message))
		fprintf(stderr, "\n%s: got '%s'\n", name, last_error(ctx));
	module_destroy(m);
	hloi_context_free(ctx);
}

static void test_bad_fixtures(void)
{
	expect_bad_fixture("truncated.pb", "runs past the end of the data");
	expect_bad_fixture("garbage.pb", "not a valid HloModuleProto");
	expect_bad_fixture("deep_tuple.pb", "messages nested deeper than 100 levels");
	expect_bad_fixture("unknown_operand.pb", "operand 1 refers to unknown instruction id 999");
	expect_bad_fixture("use_before_def.pb", "is used before its definition");
	expect_bad_fixture("wrong_literal_length.pb", "needs 6 values in f32s, has 5");
	expect_bad_fixture("negative_dim.pb", "negative dimension -2 at index 0");
	expect_bad_fixture("bad_enum.pb", "invalid element_type 99");
	expect_bad_fixture("duplicate_id.pb", "is also used by 'constant.4'");
	expect_bad_fixture("missing_root.pb", "root_id 12345 does not name an instruction");
	expect_bad_fixture("bad_opcode.pb", "unknown opcode 'mutliply'");
	expect_bad_fixture("missing_entry.pb", "entry computation not found");
	expect_bad_fixture("bad_utf8_name.pb", "string is not valid UTF-8");
	expect_bad_fixture("syntax.pbtxt", "syntax error");
	expect_bad_fixture("unknown_field.pbtxt", "has no field named 'nmae'");
}

/* Messages name the computation and the instruction. */
static void test_error_where(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	CU_ASSERT_EQUAL(load_fixture(&m, ctx, "bad/unknown_operand.pb"), HLOI_EPARSE);
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	CU_ASSERT_FATAL(f != NULL);
	hloi_context_print_diagnostics(ctx, f, HLOI_DIAG_BASENAME);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(out, "unknown_operand.pb: computation 'main.8', instruction 'add.3' "
				    "(id 12884901891): error: operand 1 refers to unknown instruction id 999\n");
	free(out);
	hloi_context_free(ctx);
}

/* --- against protoc ---------------------------------------------------------------- */

static int have_protoc(void)
{
	return system("protoc --version >/dev/null 2>&1") == 0;
}

/* protoc decodes hloi's .pb with the schema in proto/, printing exactly the
 * text hloi writes for .pbtxt; and protoc encodes that text into the same
 * bytes. */
static void test_protoc(void)
{
	if (!have_protoc()) {
		fprintf(stderr, "\n  protoc not installed: skipped ");
		return;
	}
	char dir[] = "/tmp/hloi_proto_XXXXXX";
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	const char *programs[] = { tricky, NULL };
	for (int i = 0; i < 2; i++) {
		hloi_context *ctx = NULL;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		module *m = NULL;
		hloi_status st = programs[i] ? text_parse_module(&m, ctx, "t.hlo", programs[i], strlen(programs[i])) :
			load_fixture(&m, ctx, "xla_style.pb");
		CU_ASSERT_FATAL(st == HLOI_OK);
		char pb[256], txt[256], dec[256], enc[256], cmd[2048];
		snprintf(pb, sizeof pb, "%s/m.pb", dir);
		snprintf(txt, sizeof txt, "%s/m.pbtxt", dir);
		snprintf(dec, sizeof dec, "%s/decoded.pbtxt", dir);
		snprintf(enc, sizeof enc, "%s/encoded.pb", dir);
		CU_ASSERT_FATAL(hloi_module_save(m, ctx, pb, HLOI_FORMAT_AUTO) == HLOI_OK);
		CU_ASSERT_FATAL(hloi_module_save(m, ctx, txt, HLOI_FORMAT_AUTO) == HLOI_OK);
		snprintf(cmd, sizeof cmd,
			 "protoc --decode=xla.HloModuleProto -I %s/../proto hlo.proto < %s > %s && "
			 "protoc --encode=xla.HloModuleProto -I %s/../proto hlo.proto < %s > %s",
			 HLOI_TESTDATA, pb, dec, HLOI_TESTDATA, txt, enc);
		CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
		size_t a = 0, b = 0, c = 0, d = 0;
		char *ours = read_all(txt, &a), *theirs = read_all(dec, &b);
		char *pbs = read_all(pb, &c), *encs = read_all(enc, &d);
		CU_ASSERT_FATAL(ours && theirs && pbs && encs);
		CU_ASSERT_STRING_EQUAL(ours, theirs);
		/* protoc's bytes have the map entries sorted; they mean the same */
		module *m2 = NULL;
		unsigned char *again = NULL;
		size_t an = 0;
		CU_ASSERT_FATAL(proto_load_binary(&m2, ctx, "enc.pb", (unsigned char *)encs, d) == HLOI_OK);
		CU_ASSERT_FATAL(proto_save_binary(&again, &an, m2, ctx) == HLOI_OK);
		CU_ASSERT(an == c && memcmp(again, pbs, c) == 0);
		hloi_free(again);
		module_destroy(m2);
		hloi_free(ours);
		hloi_free(theirs);
		hloi_free(pbs);
		hloi_free(encs);
		unlink(pb);
		unlink(txt);
		unlink(dec);
		unlink(enc);
		module_destroy(m);
		hloi_context_free(ctx);
	}
	rmdir(dir);
}

/* --- fields the IR does not model, and unknown ones ----------------------------------- */

#define FIELDS_PBTXT HLOI_TESTDATA "/../tests/proto/xla_fields.pbtxt"

/* Everything the context recorded, as hloi prints it. */
static char *diag_text(hloi_context *ctx)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	CU_ASSERT_FATAL(f != NULL);
	hloi_context_print_diagnostics(ctx, f, HLOI_DIAG_BASENAME);
	fclose(f);
	return buf;
}

static void expect_in(const char *text, const char *want)
{
	CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
	if (!strstr(text, want))
		fprintf(stderr, "\n'%s' not in:\n%s\n", want, text);
}

static void put_varint(unsigned char **p, uint64_t v)
{
	do {
		unsigned char b = v & 0x7f;
		v >>= 7;
		*(*p)++ = (unsigned char)(b | (v ? 0x80 : 0));
	} while (v);
}

static int get_varint(const unsigned char *p, size_t n, size_t *pos, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *pos < n && shift < 64; shift += 7) {
		unsigned char b = p[(*pos)++];
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* Wire bytes with `extra` appended to the payload of the first
 * length-delimited field path[0], inside it path[1], ... (depth levels),
 * lengths fixed up; malloc'd. */
static unsigned char *splice(const unsigned char *p, size_t n, const int *path, int depth,
			     const unsigned char *extra, size_t en, size_t *outn)
{
	if (depth == 0) {
		unsigned char *r = malloc(n + en);
		CU_ASSERT_FATAL(r != NULL);
		memcpy(r, p, n);
		memcpy(r + n, extra, en);
		*outn = n + en;
		return r;
	}
	size_t pos = 0;
	while (pos < n) {
		size_t start = pos;
		uint64_t key, len = 0;
		CU_ASSERT_FATAL(get_varint(p, n, &pos, &key) == 0);
		switch (key & 7) {
		case 0: CU_ASSERT_FATAL(get_varint(p, n, &pos, &len) == 0); continue;
		case 1: pos += 8; continue;
		case 5: pos += 4; continue;
		case 2: break;
		default: CU_FAIL_FATAL("bad wire type");
		}
		CU_ASSERT_FATAL(get_varint(p, n, &pos, &len) == 0);
		if ((int)(key >> 3) != path[0]) {
			pos += (size_t)len;
			continue;
		}
		size_t inner_n;
		unsigned char *inner = splice(p + pos, (size_t)len, path + 1, depth - 1, extra, en, &inner_n);
		unsigned char *r = malloc(n + en + 16), *q = r;
		CU_ASSERT_FATAL(r != NULL);
		memcpy(q, p, start);
		q += start;
		put_varint(&q, key);
		put_varint(&q, inner_n);
		memcpy(q, inner, inner_n);
		q += inner_n;
		memcpy(q, p + pos + len, n - pos - (size_t)len);
		q += n - pos - (size_t)len;
		*outn = (size_t)(q - r);
		free(inner);
		return r;
	}
	CU_FAIL_FATAL("field not found");
	return NULL;
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_EQUAL(fwrite(data, 1, n, f), n);
	fclose(f);
}

/* Fields a newer XLA writes survive .pb -> .pb byte for byte, wherever
 * they are (instruction, a shape inside it, computation, module); proto
 * text and HLO text cannot hold them and say so. */
static void test_unknown_fields(void)
{
	static const char program[] = "HloModule u\n\nENTRY main {\n"
				      "  p = f32[3]{0} parameter(0)\n"
				      "  k = f32[3]{0} constant({1, 2, 3}), metadata={op_name=\"k\"}\n"
				      "  ROOT a = f32[3]{0} add(p, k)\n}\n";
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	CU_ASSERT_FATAL(text_parse_module(&m, ctx, "u.hlo", program, sizeof program - 1) == HLOI_OK);
	unsigned char *pb = NULL;
	size_t n = 0;
	CU_ASSERT_FATAL(proto_save_binary(&pb, &n, m, ctx) == HLOI_OK);
	module_destroy(m);
	m = NULL;
	/* field 1000 varint 7, 1001 "new", 1002 fixed32, 1003 fixed64 */
	static const unsigned char on_instr[] = { 0xc0, 0x3e, 0x07, 0xca, 0x3e, 0x03, 'n', 'e', 'w',
						  0xd5, 0x3e, 1, 2, 3, 4, 0xd9, 0x3e, 1, 2, 3, 4, 5, 6, 7, 8 };
	static const unsigned char on_shape[] = { 0xe0, 0x3e, 0x01 };  /* 1004: 1 */
	static const unsigned char on_comp[] = { 0xe8, 0x3e, 0x02 };   /* 1005: 2 */
	static const unsigned char on_module[] = { 0xf0, 0x3e, 0x03 }; /* 1006: 3 */
	const int instr_path[] = { 3, 2 }, shape_path[] = { 3, 2, 3 }, comp_path[] = { 3 };
	size_t n1, n2, n3;
	unsigned char *b1 = splice(pb, n, instr_path, 2, on_instr, sizeof on_instr, &n1);
	unsigned char *b2 = splice(b1, n1, shape_path, 3, on_shape, sizeof on_shape, &n2);
	unsigned char *b3 = splice(b2, n2, comp_path, 1, on_comp, sizeof on_comp, &n3);
	unsigned char *in = malloc(n3 + sizeof on_module);
	CU_ASSERT_FATAL(in != NULL);
	memcpy(in, b3, n3);
	memcpy(in + n3, on_module, sizeof on_module);
	size_t nin = n3 + sizeof on_module;
	free(b1);
	free(b2);
	free(b3);

	CU_ASSERT_FATAL(proto_load_binary(&m, ctx, "u.pb", in, nin) == HLOI_OK);
	CU_ASSERT_EQUAL(hloi_context_error_count(ctx), 0);
	unsigned char *out = NULL;
	size_t nout = 0;
	CU_ASSERT_FATAL(proto_save_binary(&out, &nout, m, ctx) == HLOI_OK);
	CU_ASSERT(nout == nin && memcmp(out, in, nin) == 0);
	/* and again, from what was written */
	module *m2 = NULL;
	unsigned char *out2 = NULL;
	size_t nout2 = 0;
	CU_ASSERT_FATAL(proto_load_binary(&m2, ctx, "u2.pb", out, nout) == HLOI_OK);
	CU_ASSERT_FATAL(proto_save_binary(&out2, &nout2, m2, ctx) == HLOI_OK);
	CU_ASSERT(nout2 == nin && memcmp(out2, in, nin) == 0);
	/* the loaded program runs as before */
	CU_ASSERT_FATAL(check_module(m, ctx, NULL) == HLOI_OK);
	hloi_context_clear(ctx);

	/* proto text: the 7 unknown fields are dropped, with a warning */
	char *tx = NULL;
	size_t ntx = 0;
	CU_ASSERT_FATAL(proto_save_text(&tx, &ntx, m, ctx) == HLOI_OK);
	char *d = diag_text(ctx);
	expect_in(d, "u.pb: warning: proto text has no form for fields unknown to hloi's schema: 7 are dropped "
		     "(the first is field 1006)");
	free(d);
	hloi_free(tx);
	hloi_context_clear(ctx);

	/* HLO text: the same, by name and place */
	char dir[] = "/tmp/hloi_unknown_XXXXXX";
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof path, "%s/u.hlo", dir);
	CU_ASSERT_FATAL(hloi_module_save(m, ctx, path, HLOI_FORMAT_AUTO) == HLOI_OK);
	d = diag_text(ctx);
	expect_in(d, "u.hlo: warning: HLO text cannot give back these fields of the proto as they are (it drops "
		     "them, or shows them as XLA prints them): "
		     "unknown field 1006 (the module), unknown field 1005 (1 computation), unknown field 1000 "
		     "(1 instruction), unknown field 1001 (1 instruction), unknown field 1002 (1 instruction), "
		     "unknown field 1003 (1 instruction), unknown field 1004 in shape (1 instruction); 7 of them "
		     "are unknown to hloi's schema (a newer XLA's)");
	free(d);
	unlink(path);
	rmdir(dir);

	hloi_free(pb);
	hloi_free(out);
	hloi_free(out2);
	free(in);
	module_destroy(m);
	module_destroy(m2);
	hloi_context_free(ctx);
}

/* A module that sets fields of XLA's schema the IR does not model
 * (tests/proto/xla_fields.pbtxt) comes back byte for byte, keeping XLA's
 * ids and its schedule; HLO text names what it drops. */
static void test_xla_fields(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	size_t len = 0;
	char *text = read_all(FIELDS_PBTXT, &len);
	CU_ASSERT_FATAL(text != NULL);
	module *m = NULL;
	CU_ASSERT_FATAL(proto_load_text(&m, ctx, "xla_fields.pbtxt", text, len) == HLOI_OK);
	CU_ASSERT_EQUAL(hloi_context_error_count(ctx), 0);
	unsigned char *pb = NULL, *pb2 = NULL;
	size_t n = 0, n2 = 0;
	CU_ASSERT_FATAL(proto_save_binary(&pb, &n, m, ctx) == HLOI_OK);
	module *m2 = NULL;
	CU_ASSERT_FATAL(proto_load_binary(&m2, ctx, "xla_fields.pb", pb, n) == HLOI_OK);
	CU_ASSERT_FATAL(proto_save_binary(&pb2, &n2, m2, ctx) == HLOI_OK);
	CU_ASSERT(n == n2 && memcmp(pb, pb2, n) == 0);
	char *tx = NULL;
	size_t ntx = 0;
	CU_ASSERT_FATAL(proto_save_text(&tx, &ntx, m2, ctx) == HLOI_OK);
	/* XLA's ids, not 1, 2, ... */
	expect_in(tx, "  id: 43\n");
	expect_in(tx, "entry_computation_id: 20\n");
	expect_in(tx, "schedule {\n");
	expect_in(tx, "    window {\n");
	expect_in(tx, "    iota_collective_device_list {\n");
	expect_in(tx, "    cross_program_prefetch_index: 0\n");
	expect_in(tx, "      split_configs {\n");
	CU_ASSERT_EQUAL(hloi_context_error_count(ctx), 0);
	char *d = diag_text(ctx);
	CU_ASSERT_STRING_EQUAL(d, ""); /* nothing dropped, nothing to say */
	free(d);

	if (have_protoc()) {
		/* protoc's bytes are hloi's, and its text hloi's */
		char dir[] = "/tmp/hloi_fields_XXXXXX";
		CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
		char enc[256], dec[256], ours[256], cmd[2048];
		snprintf(enc, sizeof enc, "%s/enc.pb", dir);
		snprintf(dec, sizeof dec, "%s/dec.pbtxt", dir);
		snprintf(ours, sizeof ours, "%s/ours.pb", dir);
		write_file(ours, pb, n);
		snprintf(cmd, sizeof cmd,
			 "protoc --encode=xla.HloModuleProto -I %s/../proto hlo.proto < %s > %s && "
			 "protoc --decode=xla.HloModuleProto -I %s/../proto hlo.proto < %s > %s",
			 HLOI_TESTDATA, FIELDS_PBTXT, enc, HLOI_TESTDATA, ours, dec);
		CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
		size_t ne = 0, nd = 0;
		char *encs = read_all(enc, &ne), *decs = read_all(dec, &nd);
		CU_ASSERT_FATAL(encs && decs);
		CU_ASSERT(ne == n && memcmp(encs, pb, n) == 0);
		CU_ASSERT_STRING_EQUAL(decs, tx);
		hloi_free(encs);
		hloi_free(decs);
		unlink(enc);
		unlink(dec);
		unlink(ours);
		rmdir(dir);
	} else {
		fprintf(stderr, "\n  protoc not installed: comparison skipped ");
	}

	/* HLO text names what it cannot show */
	hloi_context_clear(ctx);
	char dir[] = "/tmp/hloi_fields_XXXXXX";
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof path, "%s/f.hlo", dir);
	CU_ASSERT_FATAL(hloi_module_save(m2, ctx, path, HLOI_FORMAT_AUTO) == HLOI_OK);
	d = diag_text(ctx);
	/* what HLO text cannot hold: fields without a text form, parts of
	 * messages it shows (metadata's sizes, a layout's split_configs), and
	 * values it shows only as XLA prints them (a replicated sharding
	 * without XLA's device 0, execution_thread "main" spelled out, a
	 * schedule that leaves out a computation, host_program_shape's
	 * parameter names) */
	expect_in(d, "f.hlo: warning: HLO text cannot give back these fields of the proto as they are (it drops "
		     "them, or shows them as XLA prints them): host_program_shape (the module), schedule (the "
		     "module), cross_program_prefetches (the module), is_dynamic (the module), ");
	expect_in(d, ", original_value_recovery_table (the module), execution_thread (1 computation), "
		     "shape.layout.split_configs (1 instruction), metadata.size_of_generated_code_in_bytes (1 "
		     "instruction), metadata.profile_info (1 instruction), sharding (2 instructions), ");
	CU_ASSERT_PTR_NULL(strstr(d, "window"));
	CU_ASSERT_PTR_NULL(strstr(d, "literal"));
	CU_ASSERT_PTR_NULL(strstr(d, "input_output_alias"));
	CU_ASSERT_PTR_NULL(strstr(d, "unknown"));
	CU_ASSERT_PTR_NULL(strstr(d, " id")); /* ids are not fields text shows either */
	free(d);
	/* and what it holds comes back: .pb -> .hlo -> .pb gives every field
	 * it showed */
	size_t nh = 0;
	char *htext = read_all(path, &nh);
	CU_ASSERT_FATAL(htext != NULL);
	expect_in(htext, "HloModule xla_fields, is_scheduled=true, input_output_alias={ {2}: (1, {}, may-alias) }, "
			 "buffer_donor={ (0, {}) }, entry_computation_layout=");
	expect_in(htext, "\nFileNames\n1 \"model.py\"\n\nFunctionNames\n1 \"f\"\n\nFileLocations\n");
	expect_in(htext, "sharding={devices=[2,1,1,1]<=[2] last_tile_dims={manual} metadata={op_name=\"shard\"}}");
	expect_in(htext, "window={size=3x3 pad=0_0x-1_1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f");
	expect_in(htext, "replica_groups=[1,2]<=[2], channel_id=5, use_global_device_ids=true");
	expect_in(htext, "literal=s32[] 7, output_to_operand_aliasing={{}: (0, {})}");
	module *mh = NULL;
	CU_ASSERT_FATAL(text_parse_module(&mh, ctx, "f.hlo", htext, nh) == HLOI_OK);
	unsigned char *pbh = NULL;
	size_t nph = 0;
	CU_ASSERT_FATAL(proto_save_binary(&pbh, &nph, mh, ctx) == HLOI_OK);
	module *mh2 = NULL;
	CU_ASSERT_FATAL(proto_load_binary(&mh2, ctx, "fh.pb", pbh, nph) == HLOI_OK);
	const instr *cc = find_instr(mh2, "cc.34");
	CU_ASSERT_PTR_NOT_NULL_FATAL(cc);
	CU_ASSERT_STRING_EQUAL(instr_text(cc, ATTR_CUSTOM_CALL_TARGET), "\"my_target\"");
	CU_ASSERT_STRING_EQUAL(instr_text(cc, ATTR_API_VERSION), "API_VERSION_TYPED_FFI");
	CU_ASSERT_TRUE(instr_bool(cc, ATTR_CUSTOM_CALL_HAS_SIDE_EFFECT, 0));
	hloi_free(htext);
	hloi_free(pbh);
	module_destroy(mh);
	module_destroy(mh2);
	unlink(path);
	rmdir(dir);

	/* Once an instruction is not the one read (here: it forgets it was),
	 * ids are renumbered and the schedule, which names them, is rebuilt
	 * from the instructions' order. */
	hloi_context_clear(ctx);
	m2->entry->instrs[0]->pb_rest = NULL;
	unsigned char *pb3 = NULL;
	size_t n3 = 0;
	CU_ASSERT_FATAL(proto_save_binary(&pb3, &n3, m2, ctx) == HLOI_OK);
	d = diag_text(ctx);
	expect_in(d, "xla_fields.pb: warning: the module's schedule is rebuilt from the order of its instructions: "
		     "instructions were added or renumbered since it was read");
	free(d);
	module *m3 = NULL;
	char *tx3 = NULL;
	size_t ntx3 = 0;
	CU_ASSERT_FATAL(proto_load_binary(&m3, ctx, "r.pb", pb3, n3) == HLOI_OK);
	CU_ASSERT_FATAL(proto_save_text(&tx3, &ntx3, m3, ctx) == HLOI_OK);
	expect_in(tx3, "schedule {\n");
	CU_ASSERT_PTR_NULL(strstr(tx3, "id: 43\n"));
	expect_in(tx3, "    window {\n"); /* the rest stays */
	hloi_free(tx3);
	hloi_free(pb3);
	module_destroy(m3);

	hloi_free(text);
	hloi_free(tx);
	hloi_free(pb);
	hloi_free(pb2);
	module_destroy(m);
	module_destroy(m2);
	hloi_context_free(ctx);
}

/* Inside repeated messages the IR models (tuple shapes here), a field it
 * has no place for cannot be kept: the loader says so. */
static void test_loss_warning(void)
{
	static const char text[] =
		"name: \"m\" entry_computation_name: \"main\"\n"
		"computations { name: \"main\" root_id: 1\n"
		"  instructions { name: \"p\" id: 1 opcode: \"parameter\"\n"
		"    shape { element_type: TUPLE tuple_shapes { element_type: F32 layout {\n"
		"      split_configs { dimension: 0 } } } } } }\n";
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	module *m = NULL;
	CU_ASSERT_FATAL(proto_load_text(&m, ctx, "l.pbtxt", text, sizeof text - 1) == HLOI_OK);
	char *d = diag_text(ctx);
	CU_ASSERT_STRING_EQUAL(d, "l.pbtxt: warning: 1 proto field inside repeated shapes, tiles, literals or "
				  "aliases has nowhere for hloi to keep and is dropped (the first: field "
				  "split_configs of a LayoutProto in computation 'main', instruction 'p')\n");
	free(d);
	module_destroy(m);
	hloi_context_free(ctx);
}

/* --- the public API: formats by extension and by content ------------------------------ */

static void test_sniffing(void)
{
	char dir[] = "/tmp/hloi_sniff_XXXXXX";
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	hloi_module *m = NULL;
	CU_ASSERT_FATAL(hloi_module_parse(&m, ctx, "t.hlo", tricky, strlen(tricky)) == HLOI_OK);
	char pb[256], txt[256], hlo[256], junk[256];
	snprintf(pb, sizeof pb, "%s/a.dat", dir);
	snprintf(txt, sizeof txt, "%s/b.dat", dir);
	snprintf(hlo, sizeof hlo, "%s/c.dat", dir);
	snprintf(junk, sizeof junk, "%s/d.dat", dir);
	CU_ASSERT_FATAL(hloi_module_save(m, ctx, pb, HLOI_FORMAT_PB) == HLOI_OK);
	CU_ASSERT_FATAL(hloi_module_save(m, ctx, txt, HLOI_FORMAT_PBTXT) == HLOI_OK);
	CU_ASSERT_FATAL(hloi_module_save(m, ctx, hlo, HLOI_FORMAT_HLO) == HLOI_OK);
	CU_ASSERT_EQUAL(hloi_module_save(m, ctx, junk, HLOI_FORMAT_AUTO), HLOI_EINVAL);
	hloi_context_clear(ctx);
	hloi_module_free(m);
	const char *paths[] = { pb, txt, hlo };
	for (int i = 0; i < 3; i++) {
		m = NULL;
		CU_ASSERT_EQUAL(hloi_module_load(&m, ctx, paths[i], HLOI_FORMAT_AUTO), HLOI_OK);
		CU_ASSERT(m && m->ncomps == 4);
		hloi_module_free(m);
	}
	/* the wrong format, forced */
	m = NULL;
	CU_ASSERT_EQUAL(hloi_module_load(&m, ctx, hlo, HLOI_FORMAT_PB), HLOI_EPARSE);
	CU_ASSERT_EQUAL(hloi_module_load(&m, ctx, pb, HLOI_FORMAT_PBTXT), HLOI_EPARSE);
	hloi_context_free(ctx);
	unlink(pb);
	unlink(txt);
	unlink(hlo);
	rmdir(dir);
}

/* --- the module printer's limit ------------------------------------------------------ */

/* A module with constant `a` (f32[ROWS_A,0]) in ENTRY `main`, which calls
 * `rows`, whose root is constant `b` (f32[ROWS_B,0]). */
static char *zero_rows_pbtxt(const char *rows_a, const char *rows_b)
{
	static const char fmt[] =
		"name: \"z\" entry_computation_name: \"main\"\n"
		"computations { name: \"rows\" id: 2 root_id: 3\n"
		"  instructions { name: \"b\" opcode: \"constant\" id: 3\n"
		"    shape { element_type: F32 dimensions: [%s, 0] }\n"
		"    literal { shape { element_type: F32 dimensions: [%s, 0] } } } }\n"
		"computations { name: \"main\" id: 1 root_id: 2\n"
		"  instructions { name: \"a\" opcode: \"constant\" id: 1\n"
		"    shape { element_type: F32 dimensions: [%s, 0] }\n"
		"    literal { shape { element_type: F32 dimensions: [%s, 0] } } }\n"
		"  instructions { name: \"c\" opcode: \"call\" id: 2 called_computation_ids: 2\n"
		"    shape { element_type: F32 dimensions: [%s, 0] } } }\n"
		"entry_computation_id: 1\n";
	size_t n = sizeof fmt + 5 * 32;
	char *t = malloc(n);
	CU_ASSERT_FATAL(t != NULL);
	snprintf(t, n, fmt, rows_b, rows_b, rows_a, rows_a, rows_b);
	return t;
}

static hloi_module *load_zero_rows(hloi_context *ctx, const char *rows_a, const char *rows_b)
{
	char *text = zero_rows_pbtxt(rows_a, rows_b);
	module *m = NULL;
	hloi_status st = proto_load_text(&m, ctx, "z.pbtxt", text, strlen(text));
	free(text);
	if (st != HLOI_OK)
		hloi_context_print_diagnostics(ctx, stderr, 0);
	CU_ASSERT_FATAL(st == HLOI_OK);
	return m;
}

/* Prints the module to a temporary file; returns the status, *len the
 * bytes written. */
static hloi_status print_len(const hloi_module *m, long *len)
{
	FILE *f = tmpfile();
	CU_ASSERT_FATAL(f != NULL);
	hloi_status st = hloi_module_print(m, f);
	fflush(f);
	*len = ftell(f);
	fclose(f);
	return st;
}

static void test_print_limit(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
	const char *comp = NULL, *name = NULL;
	const hloi_literal *v = NULL;
	long len = -1;

	/* under the limit: counted over both computations, printed */
	hloi_module *m = load_zero_rows(ctx, "3", "5");
	CU_ASSERT_EQUAL(hloi_module_empty_subarrays(m, &comp, &name, &v), 8);
	CU_ASSERT_STRING_EQUAL(comp ? comp : "", "rows");
	CU_ASSERT_STRING_EQUAL(name ? name : "", "b");
	CU_ASSERT(v && hloi_literal_empty_subarrays(v) == 5);
	CU_ASSERT_EQUAL(print_len(m, &len), HLOI_OK);
	char *text = module_text(m);
	CU_ASSERT(text && strstr(text, "a = f32[3,0] constant({ {}, {}, {} })"));
	CU_ASSERT_EQUAL(len, text ? (long)strlen(text) : -2);
	hloi_free(text);
	hloi_module_free(m);

	/* exactly the limit prints; one more is refused before anything is
	 * written, and the most is named even when no constant alone is over */
	m = load_zero_rows(ctx, "8388608", "8388608");
	CU_ASSERT_EQUAL(hloi_module_empty_subarrays(m, NULL, NULL, NULL), HLOI_PRINT_MAX_EMPTY_SUBARRAYS);
	CU_ASSERT_EQUAL(print_len(m, &len), HLOI_OK);
	CU_ASSERT(len > 4 * (long)HLOI_PRINT_MAX_EMPTY_SUBARRAYS - 16);
	hloi_module_free(m);
	m = load_zero_rows(ctx, "8388609", "8388608");
	CU_ASSERT_EQUAL(hloi_module_empty_subarrays(m, &comp, &name, &v), HLOI_PRINT_MAX_EMPTY_SUBARRAYS + 1u);
	CU_ASSERT_STRING_EQUAL(comp ? comp : "", "main");
	CU_ASSERT_STRING_EQUAL(name ? name : "", "a");
	CU_ASSERT_EQUAL(print_len(m, &len), HLOI_ENOMEM);
	CU_ASSERT_EQUAL(len, 0);

	/* save: refused as text with a message, no file; the protos work */
	char dir[] = "/tmp/hloi_limit_XXXXXX";
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	char hlo[256], pbtxt[256], pb[256];
	snprintf(hlo, sizeof hlo, "%s/m.hlo", dir);
	snprintf(pbtxt, sizeof pbtxt, "%s/m.pbtxt", dir);
	snprintf(pb, sizeof pb, "%s/m.pb", dir);
	hloi_context_clear(ctx);
	CU_ASSERT_EQUAL(hloi_module_save(m, ctx, hlo, HLOI_FORMAT_AUTO), HLOI_ENOMEM);
	CU_ASSERT_STRING_EQUAL(last_error(ctx),
			       "cannot write the program as text: its constants hold 16777217 empty sub-arrays "
			       "(the limit is 16777216), 8388609 of them in constant 'a' (f32[8388609,0]) in "
			       "computation 'main'; write it as .pb or .pbtxt");
	CU_ASSERT_EQUAL(access(hlo, F_OK), -1);
	hloi_module_free(m);
	m = load_zero_rows(ctx, "1099511627776", "2");
	hloi_context_clear(ctx);
	CU_ASSERT_EQUAL(hloi_module_save(m, ctx, hlo, HLOI_FORMAT_AUTO), HLOI_ENOMEM);
	CU_ASSERT_STRING_EQUAL(last_error(ctx),
			       "cannot write constant 'a' (f32[1099511627776,0]) in computation 'main' as text: "
			       "1099511627776 empty sub-arrays (the limit is 16777216); write the program as .pb or .pbtxt");
	CU_ASSERT_EQUAL(access(hlo, F_OK), -1);
	CU_ASSERT_EQUAL(hloi_module_save(m, ctx, pbtxt, HLOI_FORMAT_AUTO), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_module_save(m, ctx, pb, HLOI_FORMAT_AUTO), HLOI_OK);
	hloi_module_free(m);
	const char *paths[] = { pbtxt, pb };
	for (int i = 0; i < 2; i++) {
		m = NULL;
		CU_ASSERT_FATAL(hloi_module_load(&m, ctx, paths[i], HLOI_FORMAT_AUTO) == HLOI_OK);
		CU_ASSERT_EQUAL(hloi_module_empty_subarrays(m, NULL, NULL, NULL), 1099511627778u);
		CU_ASSERT_EQUAL(print_len(m, &len), HLOI_ENOMEM);
		hloi_module_free(m);
	}
	unlink(pbtxt);
	unlink(pb);
	rmdir(dir);

	/* the count saturates: 5 levels of 2^62 sub-arrays */
	m = load_zero_rows(ctx, "4611686018427387904, 1, 1, 1, 1", "4611686018427387904");
	CU_ASSERT_EQUAL(hloi_module_empty_subarrays(m, NULL, NULL, NULL), UINT64_MAX);
	hloi_module_free(m);

	/* a `literal=` attribute read from a proto prints from its value too
	 * (the pbtxt fuzzer's: printing it ran for hours) */
	static const char lit_attr[] =
		"name: \"m\" entry_computation_name: \"main\" computations { name: \"main\" id: 0 root_id: 1\n"
		"  instructions { name: \"k\" opcode: \"custom-call\" custom_call_target: \"t\" id: 1\n"
		"    shape { element_type: F32 dimensions: [1099511627776, 0] }\n"
		"    literal { shape { element_type: F32 dimensions: [1099511627776, 0] } } } }\n"
		"entry_computation_id: 0\n";
	m = NULL;
	CU_ASSERT_FATAL(proto_load_text(&m, ctx, "l.pbtxt", lit_attr, strlen(lit_attr)) == HLOI_OK);
	CU_ASSERT_EQUAL(hloi_module_empty_subarrays(m, &comp, &name, &v), 1099511627776u);
	CU_ASSERT_STRING_EQUAL(name, "k");
	CU_ASSERT(v && hloi_literal_empty_subarrays(v) == 1099511627776u);
	CU_ASSERT_EQUAL(print_len(m, &len), HLOI_ENOMEM);
	hloi_module_free(m);

	/* a constant written as HLO text prints as written: it counts 0,
	 * checked (with its value) or not */
	static const char src[] = "HloModule t\n\nENTRY e {\n  ROOT k = f32[3,0] constant({ {}, {}, {} })\n}\n";
	m = NULL;
	CU_ASSERT_FATAL(hloi_module_parse(&m, ctx, "t.hlo", src, strlen(src)) == HLOI_OK);
	CU_ASSERT_EQUAL(hloi_module_empty_subarrays(m, &comp, &name, &v), 0);
	CU_ASSERT(comp == NULL && name == NULL && v == NULL);
	CU_ASSERT_FATAL(hloi_module_check(m, ctx, NULL) == HLOI_OK);
	CU_ASSERT_PTR_NOT_NULL(find_instr(m, "k")->value);
	CU_ASSERT_EQUAL(hloi_module_empty_subarrays(m, NULL, NULL, NULL), 0);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

/* --- allocation failures --------------------------------------------------------------- */

static void test_alloc_failures(void)
{
	char path[512];
	snprintf(path, sizeof path, "%s/handwritten.pbtxt", PROTO_DIR);
	size_t tlen = 0;
	char *text = read_all(path, &tlen);
	CU_ASSERT_FATAL(text != NULL);
	int done = 0;
	for (long n = 0; n < 5000 && !done; n++) {
		hloi_context *ctx = NULL;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		module *m = NULL, *m2 = NULL;
		unsigned char *pb = NULL;
		char *tx = NULL;
		size_t pn = 0, tn = 0;
		alloc_fail_after(n);
		hloi_status st = proto_load_text(&m, ctx, "h.pbtxt", text, tlen);
		if (st == HLOI_OK)
			st = proto_save_binary(&pb, &pn, m, ctx);
		if (st == HLOI_OK)
			st = proto_load_binary(&m2, ctx, "h.pb", pb, pn);
		if (st == HLOI_OK)
			st = proto_save_text(&tx, &tn, m2, ctx);
		alloc_fail_after(-1);
		CU_ASSERT(st == HLOI_OK || st == HLOI_ENOMEM);
		if (st != HLOI_OK && st != HLOI_ENOMEM)
			fprintf(stderr, "\nafter %ld allocations: status %d: %s\n", n, (int)st, last_error(ctx));
		done = st == HLOI_OK;
		hloi_free(pb);
		hloi_free(tx);
		module_destroy(m);
		module_destroy(m2);
		hloi_context_free(ctx);
	}
	CU_ASSERT(done);
	hloi_free(text);
}

static const unit_test roundtrip_tests[] = {
	{ "golden programs through .pb and .pbtxt", test_roundtrip_goldens },
	{ "attributes XLA has no field for", test_roundtrip_extras },
	{ "plain instructions packed directly, the same bytes", test_plain_writer },
	{ NULL, NULL },
};

static const unit_test fixture_tests[] = {
	{ "a module written the way XLA writes it", test_xla_style },
	{ "HloSnapshot, HloProto and hand-written text", test_snapshot },
	{ NULL, NULL },
};

static const unit_test text_tests[] = {
	{ "new_type_literals", test_new_type_literals },
	{ "values in every spelling", test_pbtxt_values },
	{ "located errors", test_pbtxt_errors },
	{ "XLA's fields in text, and a newer XLA's", test_pbtxt_xla_fields },
	{ "what the loader checks", test_validation },
	{ "hloi's text and bytes agree with protoc", test_protoc },
	{ NULL, NULL },
};

static const unit_test rest_tests[] = {
	{ "unknown fields survive .pb -> .pb", test_unknown_fields },
	{ "XLA's fields of every kind, through .pb and .hlo", test_xla_fields },
	{ "what cannot be kept is said", test_loss_warning },
	{ NULL, NULL },
};

static const unit_test bad_tests[] = {
	{ "100,000-deep nesting", test_deep_nesting },
	{ "truncated, flipped and random bytes", test_malformed_binary },
	{ "malformed fixtures", test_bad_fixtures },
	{ "messages name computation and instruction", test_error_where },
	{ "allocation failures", test_alloc_failures },
	{ NULL, NULL },
};

static const unit_test api_tests[] = {
	{ "formats by extension and by content", test_sniffing },
	{ "printing refuses over 2^24 empty sub-arrays", test_print_limit },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "roundtrip", roundtrip_tests },
	{ "fixtures", fixture_tests },
	{ "pbtxt", text_tests },
	{ "rest", rest_tests },
	{ "malformed", bad_tests },
	{ "api", api_tests },
	{ NULL, NULL },
};
