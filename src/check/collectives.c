/* Shape rules of the collectives, the asynchronous wrappers and the
 * scheduling ops (XLA's shape_inference.cc and hlo_verifier.cc): all-reduce,
 * all-gather, reduce-scatter, all-to-all, collective-permute,
 * collective-broadcast and their -start/-done forms, partition-id,
 * replica-id, async-start/-update/-done, copy-start/-done, after-all,
 * add-dependency.
 *
 * hloi evaluates collectives on one device: a module whose replica_count or
 * num_partitions is more than 1, or a collective whose replica groups or
 * source-target pairs name a participant other than 0, is reported as
 * unsupported when a run needs it (README, semantics table). */
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"

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

/* XLA's CollectiveOpGroupMode, for the size of a group when replica_groups
 * is empty. */
typedef enum { GM_REPLICA, GM_PARTITION, GM_REPLICA_AND_PARTITION, GM_FLATTENED } group_mode;

static group_mode mode_of(const instr *in)
{
	int64_t ch;
	int has_channel = instr_int(in, ATTR_CHANNEL_ID, &ch);
	int has_global = instr_attr(in, ATTR_USE_GLOBAL_DEVICE_IDS) != NULL;
	int global = instr_bool(in, ATTR_USE_GLOBAL_DEVICE_IDS, 0);
	if (!has_channel)
		return GM_REPLICA;
	if (!has_global || in->op == OP_ALL_TO_ALL)
		return GM_PARTITION;
	return global ? GM_FLATTENED : GM_REPLICA_AND_PARTITION;
}

/* XLA's GetSubgroupSize: the size of the first replica group, or the
 * number of participants the mode implies when there is none; 0 when the
 * groups are kept as written (unknown). */
static int64_t subgroup_size(const checker *c, const instr *in)
{
	const attr *a = instr_attr(in, ATTR_REPLICA_GROUPS);
	const replica_groups *rg = a ? a->u.rg : NULL;
	if (rg && rg->form == RG_LIST && rg->list.n > 0)
		return rg->list.v[0].n;
	if (rg && rg->form == RG_IOTA && rg->ngroup_dims == 2)
		return rg->group_dims[1];
	if (rg && rg->form == RG_RAW)
		return 0;
	int64_t r = module_count(c->m, "replica_count", NULL), p = module_count(c->m, "num_partitions", NULL);
	switch (mode_of(in)) {
	case GM_REPLICA:
		return r;
	case GM_PARTITION:
		return p;
	default:
		return r * p;
	}
}

/* The number of devices of mesh replica groups as the parser keeps them
 * (`mesh['a'=2,'b'=4] {'a'}`, `maximal_mesh[device_id=0] {}`): the product
 * of the axis sizes, 1 for a maximal mesh of device 0; -1 when the text is
 * something else. Only the count matters on one device: a mesh of one
 * device has the one group {0} whatever axes are named. */
static int64_t mesh_devices(const char *raw)
{
	if (!raw)
		return -1;
	if (!strncmp(raw, "maximal_mesh[", 13)) {
		const char *p = strchr(raw, '=');
		return p && !strncmp(p, "=0]", 3) ? 1 : -1;
	}
	if (strncmp(raw, "mesh[", 5) != 0)
		return -1;
	int64_t total = 1;
	int quoted = 0;
	for (const char *p = raw + 5; *p; p++) {
		if (*p == '\'' || *p == '"')
			quoted = !quoted;
		else if (quoted)
			continue;
		else if (*p == ']')
			return total;
		else if (*p == '=') {
			char *e;
			long long v = strtoll(p + 1, &e, 10);
			if (e == p + 1 || v < 1 || v > INT32_MAX || total > INT64_MAX / v)
				return -1;
			total *= v;
		}
	}
	return -1;
}

/* For a run: the module must have one participant and the instruction's
 * groups and pairs may name participant 0 only. Reports (once per module
 * for the counts) and returns nonzero otherwise. */
static int one_device(checker *c, const instr *in)
{
	if (!c->report_unsupported)
		return 0;
	static const char *const counts[] = { "replica_count", "num_partitions" };
	for (int k = 0; k < 2; k++) {
		loc at = in->op_at;
		int64_t n = module_count(c->m, counts[k], &at);
		if (n != 1) {
			if (!c->multi_device_reported)
				ck_unsupported(c, at,
					       "unsupported %s=%lld: hloi runs one device (replica_count=1, num_partitions=1) and does not simulate several; '%s' (%s) depends on the participants",
					       counts[k], (long long)n, in->name ? in->name : "?", opcode_name(in->op));
			c->multi_device_reported = 1;
			return 1;
		}
	}
	const attr *a = instr_attr(in, ATTR_REPLICA_GROUPS);
	if (a && a->u.rg) {
		const replica_groups *rg = a->u.rg;
		loc at = ck_attr_loc(c, a->vat, "replica_groups");
		if (rg->form == RG_RAW) {
			int64_t devices = mesh_devices(rg->raw);
			if (devices == 1)
				return 0; /* a one-device mesh: one group, {0} */
			if (devices > 1)
				ck_unsupported(c, at,
					       "unsupported replica groups over a mesh of %lld devices: hloi runs collectives on one device (participant 0)",
					       (long long)devices);
			else
				ck_unsupported(c, at, "unsupported replica_groups form: %s", rg->raw ? rg->raw : "?");
			return 1;
		}
		if (rg->form == RG_LIST) {
			for (int g = 0; g < rg->list.n; g++)
				for (int j = 0; j < rg->list.v[g].n; j++)
					if (rg->list.v[g].v[j] != 0) {
						ck_unsupported(c, at,
							       "unsupported replica group naming participant %lld: hloi runs collectives on one device (participant 0)",
							       (long long)rg->list.v[g].v[j]);
						return 1;
					}
		} else {
			int64_t total = 1;
			for (int d = 0; d < rg->ngroup_dims; d++)
				total *= rg->group_dims[d];
			if (total != 1) {
				ck_unsupported(c, at,
					       "unsupported replica groups of %lld participants: hloi runs collectives on one device (participant 0)",
					       (long long)total);
				return 1;
			}
		}
	}
	const attr *p = instr_attr(in, ATTR_SOURCE_TARGET_PAIRS);
	if (p) {
		for (int g = 0; g < p->u.lists.n; g++)
			for (int j = 0; j < p->u.lists.v[g].n; j++)
				if (p->u.lists.v[g].v[j] != 0) {
					ck_unsupported(c, ck_attr_loc(c, p->vat, "source_target_pairs"),
						       "unsupported source-target pair naming participant %lld: hloi runs collectives on one device (participant 0)",
						       (long long)p->u.lists.v[g].v[j]);
					return 1;
				}
	}
	return 0;
}

/* Every operand must be an array: `Expected array argument for <what>`. */
static int arrays(checker *c, const instr *in, const char *what)
{
	char a[CK_SHAPE_TEXT];
	for (int k = 0; k < in->nops; k++) {
		const shape *s = in->ops[k].def->result;
		if (!shape_is_array(s)) {
			ck_error(c, in->ops[k].at, "Expected array argument for %s, but got %s.", what, ck_shape(a, s));
			return 1;
		}
	}
	return 0;
}

static int at_least_one(checker *c, const instr *in)
{
	if (in->nops == 0) {
		ck_error(c, in->op_at, "%s expects at least one operand", opcode_name(in->op));
		return 1;
	}
	return 0;
}

/* A tuple of n shapes in the module's arena. */
static shape *tuple_of(checker *c, shape *inf, int n)
{
	memset(inf, 0, sizeof *inf);
	inf->type = ET_TUPLE;
	inf->ntuple = n;
	if (n == 0)
		return NULL;
	shape *el = arena_array(&c->m->arena, (size_t)n, sizeof *el);
	if (!el)
		c->oom = 1;
	inf->tuple = el;
	return el;
}

/* The operands' shapes: the only one, or their tuple. */
static int operands_shape(checker *c, const instr *in, shape *out)
{
	if (in->nops == 1) {
		*out = *in->ops[0].def->result;
		return 0;
	}
	shape *el = tuple_of(c, out, in->nops);
	if (c->oom)
		return 1;
	for (int k = 0; k < in->nops; k++)
		el[k] = *in->ops[k].def->result;
	return 0;
}

/* to_apply of all-reduce / reduce-scatter: a scalar reducer (T, T) -> T for
 * every operand's element type. */
static int check_reducer(checker *c, instr *in)
{
	const attr *ta = instr_attr(in, ATTR_TO_APPLY);
	if (!ta) {
		ck_error(c, in->op_at, "attribute to_apply is expected but not seen");
		return 1;
	}
	computation *f = instr_called(in, ATTR_TO_APPLY, 0);
	if (!f || ck_ensure_checked(c, in, f, ck_attr_loc(c, ta->vat, "to_apply")))
		return 1;
	for (int k = 0; k < in->nops; k++) {
		shape init;
		etype t = in->ops[k].def->result->type;
		shape_make_array(&init, t, 0, NULL);
		const shape *inits[1] = { &init };
		if (ck_verify_reducer(c, in, f, inits, &t, 1))
			return 1;
	}
	return 0;
}

/* The dimension of `dimensions={d}` (all-gather, reduce-scatter, array
 * all-to-all); reports when missing or out of the operands' ranks. */
static int one_dimension(checker *c, const instr *in, int64_t *d, int required)
{
	const int_list *l = instr_ints(in, ATTR_DIMENSIONS);
	if (!l) {
		if (required)
			ck_error(c, in->op_at, "attribute dimensions is expected but not seen");
		return required ? 1 : -1;
	}
	if (l->n != 1) {
		ck_error(c, ck_attr_loc(c, l->at, "dimensions"), "%s expects one dimension in dimensions=, got %d",
			 opcode_name(in->op), l->n);
		return 1;
	}
	*d = l->v[0];
	for (int k = 0; k < in->nops; k++) {
		const shape *s = in->ops[k].def->result;
		if (*d < 0 || *d >= s->rank) {
			char a[CK_SHAPE_TEXT];
			ck_error(c, ck_attr_loc(c, l->at, "dimensions"), "%s dimension %lld is out of bounds in shape %s",
				 opcode_name(in->op), (long long)*d, ck_shape(a, s));
			return 1;
		}
	}
	return 0;
}

/* The written result for operand k of an op whose result is the operands'
 * shapes (one, or a tuple) inside element `elem` of a tuple (-1: the
 * result itself); NULL when not written. */
static const shape *written_for(const instr *in, int elem, int k)
{
	if (!in->has_shape)
		return NULL;
	const shape *s = in->shape;
	if (elem >= 0) {
		if (!shape_is_tuple(s) || s->ntuple <= elem)
			return NULL;
		s = &s->tuple[elem];
	}
	if (in->nops == 1)
		return shape_is_tuple(s) ? NULL : s;
	if (!shape_is_tuple(s) || s->ntuple != in->nops || shape_is_tuple(&s->tuple[k]))
		return NULL;
	return &s->tuple[k];
}

static int64_t ceil_ratio(int64_t a, int64_t b)
{
	return b > 0 ? (a + b - 1) / b : 0;
}

/* all-gather and reduce-scatter: the shard count XLA's verifier derives
 * from the written result (else the group size), checked against the group
 * size when that is more than 1. */
static int shard_count(checker *c, const instr *in, int64_t d, int elem, int64_t *out)
{
	int64_t groups = subgroup_size(c, in), n = groups > 0 ? groups : 1;
	const shape *w = written_for(in, elem, 0);
	const shape *op = in->ops[0].def->result;
	if (w && d < w->rank) {
		if (in->op == OP_REDUCE_SCATTER)
			n = w->dims[d] > 0 ? ceil_ratio(op->dims[d], w->dims[d]) : n;
		else
			n = op->dims[d] > 0 ? ceil_ratio(w->dims[d], op->dims[d]) : n;
	}
	if (n < 1)
		n = 1;
	if (groups > 1 && n != groups) {
		ck_error(c, in->op_at, "shard_count = %lld, subgroup_size = %lld", (long long)n, (long long)groups);
		return 1;
	}
	if (n != 1 && c->report_unsupported && groups <= 1) {
		char a[CK_SHAPE_TEXT];
		ck_unsupported(c, in->op_at,
			       "unsupported %s of %lld shards (result %s): hloi runs collectives on one device, whose groups have 1 participant",
			       opcode_name(in->op), (long long)n, ck_shape(a, w));
		return 1;
	}
	*out = n;
	return 0;
}

/* The all-gather / reduce-scatter result of the operands for `shards`. */
static int gathered(checker *c, const instr *in, int64_t d, int64_t shards, shape *inf)
{
	shape *el = NULL;
	if (in->nops > 1 && !(el = tuple_of(c, inf, in->nops)))
		return 1;
	for (int k = 0; k < in->nops; k++) {
		shape s = *in->ops[k].def->result;
		if (in->op == OP_REDUCE_SCATTER) {
			if (s.dims[d] % shards != 0) {
				ck_error(c, in->ops[k].at,
					 "ReduceScatter operand scatter dimension size %lld must be dividable by shard_count %lld.",
					 (long long)s.dims[d], (long long)shards);
				return 1;
			}
			s.dims[d] /= shards;
		} else {
			if (s.dims[d] > INT64_MAX / shards) {
				ck_error(c, in->ops[k].at, "AllGather dimension overflow");
				return 1;
			}
			s.dims[d] *= shards;
		}
		int64_t dims[HLOI_MAX_RANK];
		memcpy(dims, s.dims, sizeof dims);
		shape_make_array(&s, s.type, s.rank, dims);
		if (el)
			el[k] = s;
		else
			*inf = s;
	}
	return 0;
}

/* A tuple result takes the layouts written on the instruction (the
 * driver keeps an inferred tuple's); arrays take them in the driver. */
static int tuple_layouts(checker *c, const instr *in, shape *inf)
{
	if (c->oom)
		return 1;
	if (!shape_is_tuple(inf))
		return 0;
	if (in->has_shape && shape_compatible(in->shape, inf))
		*inf = *in->shape;
	c->keep_layout = 1;
	return 0;
}

int infer_all_reduce(checker *c, instr *in, shape *inf)
{
	if (at_least_one(c, in) || arrays(c, in, "cross replica sum") || check_reducer(c, in) || one_device(c, in))
		return 1;
	return operands_shape(c, in, inf) || tuple_layouts(c, in, inf);
}

int infer_all_gather(checker *c, instr *in, shape *inf)
{
	int64_t d, shards;
	int start = in->op == OP_ALL_GATHER_START;
	if (at_least_one(c, in) || arrays(c, in, "all-gather") || one_dimension(c, in, &d, 1) ||
	    shard_count(c, in, d, start ? 1 : -1, &shards) || one_device(c, in))
		return 1;
	if (!start)
		return gathered(c, in, d, shards, inf) || tuple_layouts(c, in, inf);
	shape *el = tuple_of(c, inf, 2);
	if (!el || operands_shape(c, in, &el[0]) || gathered(c, in, d, shards, &el[1]))
		return 1;
	return tuple_layouts(c, in, inf);
}

int infer_reduce_scatter(checker *c, instr *in, shape *inf)
{
	int64_t d, shards;
	if (at_least_one(c, in) || arrays(c, in, "reduce-scatter") || one_dimension(c, in, &d, 1) ||
	    check_reducer(c, in) || shard_count(c, in, d, -1, &shards) || one_device(c, in))
		return 1;
	return gathered(c, in, d, shards, inf) || tuple_layouts(c, in, inf);
}

/* all-to-all: one operand with dimensions={d} (split and concatenated along
 * d), or N operands of one shape giving a tuple of N. */
int infer_all_to_all(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	int64_t d = 0;
	if (at_least_one(c, in) || arrays(c, in, "all-to-all"))
		return 1;
	int has_dim = one_dimension(c, in, &d, 0);
	if (has_dim > 0)
		return 1;
	int64_t split = subgroup_size(c, in);
	if (has_dim == 0) {
		if (in->nops != 1) {
			ck_error(c, in->op_at, "all-to-all with dimensions= expects 1 operand, but has %d", in->nops);
			return 1;
		}
		const shape s = *in->ops[0].def->result;
		if (split > 0 && s.dims[d] % split != 0) {
			ck_error(c, in->ops[0].at, "AllToAll split dimension size %lld must be dividable by split_count %lld.",
				 (long long)s.dims[d], (long long)split);
			return 1;
		}
		if (one_device(c, in))
			return 1;
		*inf = s;
		return 0;
	}
	const shape *s0 = in->ops[0].def->result;
	for (int k = 1; k < in->nops; k++) {
		const shape *s = in->ops[k].def->result;
		if (s->type != s0->type || !shape_same_dims(s, s0)) {
			ck_error(c, in->ops[k].at,
				 "HLO all-to-all has operands with different shapes: the 0th operand shape %s, but the %dth operand has shape %s.",
				 ck_shape(a, s0), k, ck_shape(b, s));
			return 1;
		}
	}
	if (split > 0 && in->nops != split) {
		ck_error(c, in->op_at, "all-to-all has %d operands, but its groups have %lld participants", in->nops,
			 (long long)split);
		return 1;
	}
	if (one_device(c, in))
		return 1;
	shape *el = tuple_of(c, inf, in->nops);
	if (!el)
		return 1;
	for (int k = 0; k < in->nops; k++)
		el[k] = *in->ops[k].def->result;
	return tuple_layouts(c, in, inf);
}

/* collective-permute(-start): source_target_pairs={{s,t},...}, no source
 * or target twice. */
static int check_pairs(checker *c, const instr *in)
{
	const attr *p = instr_attr(in, ATTR_SOURCE_TARGET_PAIRS);
	if (!p)
		return 0;
	loc at = ck_attr_loc(c, p->vat, "source_target_pairs");
	for (int g = 0; g < p->u.lists.n; g++) {
		const int_list *pr = &p->u.lists.v[g];
		if (pr->n != 2) {
			ck_error(c, at, "source_target_pairs expects pairs {source,target}; pair %d has %d elements", g,
				 pr->n);
			return 1;
		}
		for (int h = 0; h < g; h++) {
			for (int j = 0; j < 2; j++) {
				if (p->u.lists.v[h].v[j] == pr->v[j]) {
					ck_error(c, at, "%s %lld appears more than once in instruction's source-target pairs",
						 j ? "Target" : "Source", (long long)pr->v[j]);
					return 1;
				}
			}
		}
	}
	return 0;
}

int infer_collective_permute(checker *c, instr *in, shape *inf)
{
	int start = in->op == OP_COLLECTIVE_PERMUTE_START;
	if (at_least_one(c, in) ||
	    arrays(c, in, start ? "operand of collective-permute-start" : "operand of collective-permute") ||
	    check_pairs(c, in) || one_device(c, in))
		return 1;
	if (!start)
		return operands_shape(c, in, inf) || tuple_layouts(c, in, inf);
	/* (operands, results, context...): the context as written */
	int nctx = in->has_shape && shape_is_tuple(in->shape) && in->shape->ntuple > 2 ? in->shape->ntuple - 2 : 0;
	shape *el = tuple_of(c, inf, 2 + nctx);
	if (!el || operands_shape(c, in, &el[0]))
		return 1;
	el[1] = el[0];
	for (int j = 0; j < nctx; j++)
		el[2 + j] = in->shape->tuple[2 + j];
	return tuple_layouts(c, in, inf);
}

int infer_collective_broadcast(checker *c, instr *in, shape *inf)
{
	if (at_least_one(c, in) || arrays(c, in, "operand of collective-broadcast") || one_device(c, in))
		return 1;
	return operands_shape(c, in, inf) || tuple_layouts(c, in, inf);
}

/* The operand of a -done op must be the start it finishes. */
static int started_by(checker *c, const instr *in, opcode start)
{
	char a[CK_SHAPE_TEXT];
	const instr *d = in->ops[0].def;
	if (d->op != start && !(start == OP_ASYNC_START && d->op == OP_ASYNC_UPDATE)) {
		ck_error(c, in->ops[0].at, "%s expects the operand to be %s%s, found %s.", opcode_name(in->op),
			 opcode_name(start), start == OP_ASYNC_START ? " or async-update" : "", opcode_name(d->op));
		return 1;
	}
	if (start != OP_ALL_REDUCE_START && (!shape_is_tuple(d->result) || d->result->ntuple < 2)) {
		ck_error(c, in->ops[0].at, "%s expects a tuple operand of at least 2 elements; got %s.",
			 opcode_name(in->op), ck_shape(a, d->result));
		return 1;
	}
	return 0;
}

/* all-reduce-done: the operand; all-gather-done, collective-permute-done,
 * async-done: element 1 of the start's result; copy-done: element 0. */
int infer_done(checker *c, instr *in, shape *inf)
{
	opcode start = in->op == OP_ALL_REDUCE_DONE ? OP_ALL_REDUCE_START
		       : in->op == OP_ALL_GATHER_DONE ? OP_ALL_GATHER_START
		       : in->op == OP_COLLECTIVE_PERMUTE_DONE ? OP_COLLECTIVE_PERMUTE_START
		       : in->op == OP_COPY_DONE ? OP_COPY_START
						  : OP_ASYNC_START;
	if (started_by(c, in, start))
		return 1;
	const shape *s = in->ops[0].def->result;
	*inf = start == OP_ALL_REDUCE_START ? *s : s->tuple[start == OP_COPY_START ? 0 : 1];
	return tuple_layouts(c, in, inf);
}

int infer_copy_start(checker *c, instr *in, shape *inf)
{
	shape *el = tuple_of(c, inf, 3);
	if (!el)
		return 1;
	el[0] = el[1] = *in->ops[0].def->result;
	shape_make_array(&el[2], ET_U32, 0, NULL);
	return tuple_layouts(c, in, inf);
}

int infer_device_id(checker *c, instr *in, shape *inf)
{
	if (one_device(c, in))
		return 1;
	shape_make_array(inf, ET_U32, 0, NULL);
	return 0;
}

int infer_after_all(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	for (int k = 0; k < in->nops; k++) {
		const shape *s = in->ops[k].def->result;
		if (shape_is_tuple(s) || s->type != ET_TOKEN) {
			ck_error(c, in->ops[k].at, "Expected operand %d to be token-shaped, actual shape is %s", k,
				 ck_shape(a, s));
			return 1;
		}
	}
	memset(inf, 0, sizeof *inf);
	inf->type = ET_TOKEN;
	return 0;
}

int infer_add_dependency(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	const shape *t = in->ops[1].def->result;
	if (shape_is_tuple(t) || t->type != ET_TOKEN) {
		ck_error(c, in->ops[1].at, "Expected operand 1 to be token-shaped, actual shape is %s", ck_shape(a, t));
		return 1;
	}
	*inf = *in->ops[0].def->result;
	return tuple_layouts(c, in, inf);
}

/* async-start(operands), calls=f: ((operands), f's result, context...),
 * the context as written; async-update: its operand's shape. */
int infer_async_start(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (in->op == OP_ASYNC_UPDATE) {
		if (in->nops != 1) {
			ck_error(c, in->op_at, "async-update expects a single operand, found %d.", in->nops);
			return 1;
		}
		if (started_by(c, in, OP_ASYNC_START))
			return 1;
		*inf = *in->ops[0].def->result;
		c->keep_layout = 1;
		return 0;
	}
	const attr *ca = instr_attr(in, ATTR_CALLS);
	if (!ca) {
		ck_error(c, in->op_at, "attribute calls is expected but not seen");
		return 1;
	}
	computation *f = instr_called(in, ATTR_CALLS, 0);
	if (!f || ck_ensure_checked(c, in, f, ck_attr_loc(c, ca->vat, "calls")))
		return 1;
	if (f->nparams != in->nops) {
		ck_error(c, in->op_at, "async-start has %d operand%s, but computation %s takes %d parameter%s", in->nops,
			 in->nops == 1 ? "" : "s", f->name, f->nparams, f->nparams == 1 ? "" : "s");
		return 1;
	}
	for (int k = 0; k < in->nops; k++) {
		const shape *os = in->ops[k].def->result, *ps = f->params[k]->result;
		if (!shape_compatible(os, ps)) {
			ck_error(c, in->ops[k].at, "operand %d of async-start has shape %s, but parameter %d of computation %s is %s",
				 k, ck_shape(a, os), k, f->name, ck_shape(b, ps));
			return 1;
		}
	}
	int nctx = in->has_shape && shape_is_tuple(in->shape) && in->shape->ntuple > 2 ? in->shape->ntuple - 2 : 0;
	shape *el = tuple_of(c, inf, 2 + nctx);
	if (!el)
		return 1;
	shape *ops = tuple_of(c, &el[0], in->nops);
	if (c->oom)
		return 1;
	for (int k = 0; k < in->nops; k++)
		ops[k] = *in->ops[k].def->result;
	el[1] = *f->root->result;
	for (int j = 0; j < nctx; j++)
		el[2 + j] = in->shape->tuple[2 + j];
	return tuple_layouts(c, in, inf);
}

