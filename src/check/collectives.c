/* Shape rules of the collectives, the asynchronous wrappers and the
 * scheduling ops (XLA's shape_inference.cc and hlo_verifier.cc): all-reduce,
 * all-gather, reduce-scatter, all-to-all, collective-permute,
 * collective-broadcast and their -start/-done forms, send, recv and their
 * -done, partition-id,
 * replica-id, async-start/-update/-done, copy-start/-done, after-all,
 * add-dependency.
 *
 * A run simulates replicas x partitions participants (the module header's
 * replica_count and num_partitions, or the check options'): replica groups
 * and source-target pairs are checked against them with XLA's verifier
 * messages, and a group naming more participants than the run has is
 * reported as unsupported when a run needs it (doc/participants.md). Mesh
 * replica groups are expanded as XLA does (ir/groups.c); a mesh XLA
 * refuses is an error in XLA's words. */
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"
#include "ir/groups.h"
#include "util/alloc.h"

/* XLA's GetSubgroupSize: the size of the first replica group, or the
 * number of participants the mode implies when there is none; 0 when the
 * groups are kept as written (unknown). */
static int64_t subgroup_size(const checker *c, const instr *in)
{
	const attr *a = instr_attr(in, ATTR_REPLICA_GROUPS);
	const replica_groups *rg = a ? a->u.rg : NULL;
	group_mode mode = collective_group_mode(in);
	/* kCrossReplicaAndPartition: the replicas of a group, each with all partitions */
	int64_t each = mode == GM_REPLICA_AND_PARTITION ? c->partitions : 1;
	if (rg && rg->form == RG_LIST && rg->list.n > 0)
		return rg->list.v[0].n * each;
	if (rg && rg->form == RG_IOTA && rg->ngroup_dims == 2)
		return rg->group_dims[1] * each;
	if (rg && rg->form == RG_RAW) {
		/* a mesh: its first group */
		id_groups g;
		int64_t size = 0;
		if (groups_expand(rg, &g, NULL, 0) == 0 && g.ngroups > 0)
			size = (g.start[1] - g.start[0]) * each;
		groups_free(&g);
		return size;
	}
	switch (mode) {
	case GM_REPLICA:
		return c->replicas;
	case GM_PARTITION:
		return c->partitions;
	default:
		return c->replicas * c->partitions;
	}
}

/* How a run names the participants, for the messages. */
#define RUN_AS "the run has %lld replica%s and %lld partition%s (--replicas, --partitions, or replica_count= and num_partitions= in the module header)"
#define RUN_AS_ARGS(c) (long long)(c)->replicas, (c)->replicas == 1 ? "" : "s", (long long)(c)->partitions, \
		(c)->partitions == 1 ? "" : "s"

/* The ids of the groups (explicit, iota, or a mesh's, expanded as XLA's
 * flattened_replica_groups) against the participants: XLA's
 * CheckReplicaGroups (each id 0..n-1 once, n the mode's count, groups of
 * one size but for all-reduce), then, where XLA's verifier lets a count of
 * 1 pass, that the run has the participants the groups name. */
static int check_groups(checker *c, const instr *in, const replica_groups *rg, loc at, group_mode mode)
{
	id_groups g;
	char why[256];
	int rc = groups_expand(rg, &g, why, sizeof why);
	if (rc == 1) {
		ck_error(c, at, "replica_groups: %s", why);
		return 1;
	}
	if (rc < 0 && rg->form == RG_RAW) {
		c->oom = 1;
		return 1;
	}
	if (rc < 0) {
		ck_error(c, at, "replica_groups: the iota form's group sizes and reshape dimensions do not agree (or exceed 2^24 ids)");
		return 1;
	}
	int64_t n = g.ngroups ? g.start[g.ngroups] : 0;
	uint8_t *seen = n ? hloi_calloc((size_t)n, 1) : NULL;
	if (n && !seen) {
		groups_free(&g);
		c->oom = 1;
		return 1;
	}
	int bad = 0;
	for (int64_t k = 0; k < g.ngroups && !bad; k++) {
		if (g.start[k + 1] == g.start[k]) {
			ck_error(c, at, "Instruction cannot have an empty replica group");
			bad = 1;
		}
		for (int64_t j = g.start[k]; j < g.start[k + 1] && !bad; j++) {
			int64_t id = g.ids[j];
			if (id >= 0 && id < n && seen[id]) {
				ck_error(c, at, "Replica %lld is repeated in instruction's replica-groups", (long long)id);
				bad = 1;
			} else if (id >= 0 && id < n) {
				seen[id] = 1;
			}
		}
	}
	for (int64_t i = 0; i < n && !bad; i++) {
		if (!seen[i]) {
			ck_error(c, at, "Replica %lld is not named in instruction's replica-groups", (long long)i);
			bad = 1;
		}
	}
	hloi_free(seen);
	int64_t count = mode == GM_PARTITION ? c->partitions
			: mode == GM_FLATTENED ? c->replicas * c->partitions
					       : c->replicas;
	if (!bad && n && count != 1 && n != count) {
		ck_error(c, at, "In %s mode, replica groups should contain %lld %s, but found %lld", group_mode_name(mode),
			 (long long)count,
			 mode == GM_PARTITION ? "partitions" : mode == GM_FLATTENED ? "flattened IDs" : "replicas",
			 (long long)n);
		bad = 1;
	}
	int uniform = in->op != OP_ALL_REDUCE && in->op != OP_ALL_REDUCE_START && in->op != OP_COLLECTIVE_REDUCE;
	for (int64_t k = 1; !bad && uniform && k < g.ngroups; k++) {
		if (g.start[k + 1] - g.start[k] != g.start[1] - g.start[0]) {
			ck_error(c, at, "Replica groups expected to be of uniform size");
			bad = 1;
		}
	}
	if (!bad && n > count && c->report_unsupported) {
		ck_unsupported(c, at, "unsupported replica groups naming %lld participants: " RUN_AS, (long long)n,
			       RUN_AS_ARGS(c));
		bad = 1;
	}
	groups_free(&g);
	return bad;
}

/* One id of a source-target pair (j = 0 the source, 1 the target) against
 * the participants of the mode: XLA's verifier's bounds, then what a run
 * has. */
static int pair_id(checker *c, loc at, group_mode mode, int64_t id, int j)
{
	int64_t limit = mode == GM_REPLICA ? c->replicas : c->partitions;
	const char *what = j ? "Target" : "Source";
	if (id < 0) {
		ck_error(c, at, "%s %lld in the instruction's source-target pair must be >= 0", what, (long long)id);
		return 1;
	}
	if (id >= limit && limit != 1) {
		ck_error(c, at, "%s %lld in the instruction's source-target pair must be < %lld", what, (long long)id,
			 (long long)limit);
		return 1;
	}
	if (id >= limit && c->report_unsupported) {
		ck_unsupported(c, at, "unsupported source-target pair naming %s %lld: " RUN_AS,
			       mode == GM_REPLICA ? "replica" : "partition", (long long)id, RUN_AS_ARGS(c));
		return 1;
	}
	return 0;
}

/* The participants of a collective or an id: its groups and pairs name
 * ids of the run's participants (XLA's verifier, then what a run needs). */
static int participants(checker *c, const instr *in)
{
	c->m->participant_dependent = 1;
	if (c->replicas * c->partitions > HLOI_MAX_PARTICIPANTS || c->replicas > HLOI_MAX_PARTICIPANTS ||
	    c->partitions > HLOI_MAX_PARTICIPANTS) {
		if (c->report_unsupported) {
			ck_unsupported(c, in->op_at, "unsupported: %lld replicas x %lld partitions; hloi simulates at most %d participants",
				       (long long)c->replicas, (long long)c->partitions, HLOI_MAX_PARTICIPANTS);
			return 1;
		}
		return 0;
	}
	int64_t ch;
	group_mode mode = collective_group_mode(in);
	if (!instr_int(in, ATTR_CHANNEL_ID, &ch) && instr_bool(in, ATTR_USE_GLOBAL_DEVICE_IDS, 0)) {
		ck_error(c, in->op_at, "Invalid combination of has_channel_id and use_global_device_ids");
		return 1;
	}
	const attr *a = instr_attr(in, ATTR_REPLICA_GROUPS);
	const replica_groups *rg = a ? a->u.rg : NULL;
	int has_groups = rg && !(rg->form == RG_LIST && rg->list.n == 0);
	if (has_groups && check_groups(c, in, rg, ck_attr_loc(c, a->vat, "replica_groups"), mode))
		return 1;
	if (!has_groups && mode == GM_FLATTENED && in->op != OP_REPLICA_ID && in->op != OP_PARTITION_ID) {
		ck_error(c, in->op_at, "Replica groups must be specified in flattened-id mode");
		return 1;
	}
	const attr *p = instr_attr(in, ATTR_SOURCE_TARGET_PAIRS);
	if (p) {
		loc at = ck_attr_loc(c, p->vat, "source_target_pairs");
		for (int g = 0; g < p->u.lists.n; g++)
			for (int j = 0; j < p->u.lists.v[g].n; j++)
				if (pair_id(c, at, mode, p->u.lists.v[g].v[j], j))
					return 1;
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

/* The first n operands' shapes: the only one, or their tuple. */
static int first_operands_shape(checker *c, const instr *in, int n, shape *out)
{
	if (n == 1) {
		*out = *in->ops[0].def->result;
		return 0;
	}
	shape *el = tuple_of(c, out, n);
	if (c->oom)
		return 1;
	for (int k = 0; k < n; k++)
		el[k] = *in->ops[k].def->result;
	return 0;
}

/* The operands' shapes: the only one, or their tuple. */
static int operands_shape(checker *c, const instr *in, shape *out)
{
	return first_operands_shape(c, in, in->nops, out);
}

/* to_apply of all-reduce / reduce-scatter / collective-reduce: a scalar
 * reducer (T, T) -> T for the element type of each of the first n
 * operands. */
static int check_reducer(checker *c, instr *in, int n)
{
	const attr *ta = instr_attr(in, ATTR_TO_APPLY);
	if (!ta) {
		ck_error(c, in->op_at, "attribute to_apply is expected but not seen");
		return 1;
	}
	computation *f = instr_called(in, ATTR_TO_APPLY, 0);
	if (!f || ck_ensure_checked(c, in, f, ck_attr_loc(c, ta->vat, "to_apply")))
		return 1;
	for (int k = 0; k < n; k++) {
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
		ck_unsupported(c, in->op_at, "unsupported %s of %lld shards (result %s): its groups have 1 participant; " RUN_AS,
			       opcode_name(in->op), (long long)n, ck_shape(a, w), RUN_AS_ARGS(c));
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
	if (at_least_one(c, in) || arrays(c, in, "cross replica sum") || check_reducer(c, in, in->nops) || participants(c, in))
		return 1;
	return operands_shape(c, in, inf) || tuple_layouts(c, in, inf);
}

int infer_all_gather(checker *c, instr *in, shape *inf)
{
	int64_t d, shards;
	int start = in->op == OP_ALL_GATHER_START;
	if (at_least_one(c, in) || arrays(c, in, "all-gather") || one_dimension(c, in, &d, 1) || participants(c, in) ||
	    shard_count(c, in, d, start ? 1 : -1, &shards))
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
	    check_reducer(c, in, in->nops) || participants(c, in) || shard_count(c, in, d, -1, &shards))
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
		if (participants(c, in))
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
	if (participants(c, in))
		return 1;
	shape *el = tuple_of(c, inf, in->nops);
	if (!el)
		return 1;
	for (int k = 0; k < in->nops; k++)
		el[k] = *in->ops[k].def->result;
	return tuple_layouts(c, in, inf);
}

/* collective-permute(-start): source_target_pairs={{s,t},...}, no source
 * or target more than `allowed` times (once; the in-place form's slices
 * per buffer, XLA's CheckDuplicatedSourceOrTarget). */
static int check_pairs(checker *c, const instr *in, int64_t allowed)
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
		for (int j = 0; j < 2; j++) {
			int64_t seen = 0;
			for (int h = 0; h < g; h++)
				seen += p->u.lists.v[h].v[j] == pr->v[j];
			if (seen < allowed)
				continue;
			if (allowed == 1)
				ck_error(c, at, "%s %lld appears more than once in instruction's source-target pairs",
					 j ? "Target" : "Source", (long long)pr->v[j]);
			else
				ck_error(c, at, "%s %lld appears more than %lld times in instruction's source-target pairs",
					 j ? "Target" : "Source", (long long)pr->v[j], (long long)allowed);
			return 1;
		}
	}
	return 0;
}

/* XLA's CheckBufferOffset: the offsets of a buffer are a tuple of its
 * rank's scalars, or a tuple of such tuples (one per slice); *slices says
 * how many. */
static int buffer_offset(checker *c, const instr *in, int k, const shape *buf, const shape *off, int64_t *slices)
{
	loc at = in->ops[k].at;
	if (!shape_is_tuple(off)) {
		ck_error(c, at, "Buffer offset is not tuple.");
		return 1;
	}
	int arrays_ = 1, tuples = 1;
	for (int i = 0; i < off->ntuple; i++) {
		arrays_ &= shape_is_array(&off->tuple[i]);
		tuples &= shape_is_tuple(&off->tuple[i]);
	}
	if (!arrays_ && !tuples) {
		ck_error(c, at, "Buffer offset should either be a tuple of arrays or  a tuple of tuples.");
		return 1;
	}
	*slices = tuples && off->ntuple ? off->ntuple : 1;
	for (int64_t j = 0; j < *slices; j++) {
		const shape *idx = tuples ? &off->tuple[j] : off;
		if (idx->ntuple != buf->rank) {
			ck_error(c, at, "Buffer offset index should have the same number of elements as the buffer's rank.");
			return 1;
		}
		for (int d = 0; d < idx->ntuple; d++)
			if (!shape_is_scalar(&idx->tuple[d]) || !etype_is_integer(idx->tuple[d].type)) {
				char a[CK_SHAPE_TEXT];
				ck_error(c, at, "a buffer offset holds integer scalars, but this one holds %s",
					 ck_shape(a, &idx->tuple[d]));
				return 1;
			}
	}
	return 0;
}

/* The in-place form, collective-permute(input, output, input_offsets,
 * output_offsets), slice_sizes={...}: XLA's CheckInplaceCollectivePermute;
 * the result is the output buffer. *slices: offsets per buffer. */
static int inplace_permute(checker *c, const instr *in, int64_t *slices)
{
	if (in->nops != 4) {
		ck_error(c, in->op_at,
			 "CollectivePermute and CollectivePermuteStart must have exactly four operands for dynamic-slice and in-place update.");
		return 1;
	}
	const shape *ib = in->ops[0].def->result, *ob = in->ops[1].def->result;
	const shape *io = in->ops[2].def->result, *oo = in->ops[3].def->result;
	int nbuf = 1;
	if (shape_is_array(ib) && shape_is_array(ob)) {
		if (buffer_offset(c, in, 2, ib, io, slices) || buffer_offset(c, in, 3, ob, oo, slices))
			return 1;
	} else if (shape_is_tuple(ib) && shape_is_tuple(ob)) {
		if (ib->ntuple != ob->ntuple) {
			ck_error(c, in->ops[1].at, "Unmatching input buffers and output buffers.");
			return 1;
		}
		if (!shape_is_tuple(io) || io->ntuple != ib->ntuple) {
			ck_error(c, in->ops[2].at, "Unmatching input buffers and input offset.");
			return 1;
		}
		if (!shape_is_tuple(oo) || oo->ntuple != ob->ntuple) {
			ck_error(c, in->ops[3].at, "Unmatching output buffers and output offset.");
			return 1;
		}
		nbuf = ib->ntuple;
		for (int a = 0; a < nbuf; a++) {
			if (!shape_is_array(&ib->tuple[a]) || !shape_is_array(&ob->tuple[a])) {
				ck_error(c, in->ops[0].at, "Unmatching input buffers and output buffers.");
				return 1;
			}
			int64_t si, so;
			if (buffer_offset(c, in, 2, &ib->tuple[a], &io->tuple[a], &si) ||
			    buffer_offset(c, in, 3, &ob->tuple[a], &oo->tuple[a], &so))
				return 1;
			if ((a > 0 && si != *slices) || si != so) {
				ck_error(c, in->ops[3].at, "the buffers' offsets give different numbers of slices");
				return 1;
			}
			*slices = si;
		}
	} else {
		ck_error(c, in->ops[1].at, "Unmatching input buffers and output buffers.");
		return 1;
	}
	/* slice_sizes: one per buffer and slice, within both buffers */
	const attr *ss = instr_attr(in, ATTR_SLICE_SIZES);
	loc at = ck_attr_loc(c, ss->vat, "slice_sizes");
	if (ss->kind != AK_INTS_LIST || ss->u.lists.n != nbuf * *slices) {
		ck_error(c, at, "slice_sizes expects %lld lists (one per buffer and slice), got %d",
			 (long long)(nbuf * *slices), ss->kind == AK_INTS_LIST ? ss->u.lists.n : 1);
		return 1;
	}
	for (int i = 0; i < ss->u.lists.n; i++) {
		const int_list *l = &ss->u.lists.v[i];
		int a = (int)(i / *slices);
		const shape *bi = nbuf > 1 || shape_is_tuple(ib) ? &ib->tuple[a] : ib;
		const shape *bo = nbuf > 1 || shape_is_tuple(ob) ? &ob->tuple[a] : ob;
		int fits = l->n == bi->rank;
		for (int d = 0; fits && d < l->n; d++)
			fits = l->v[d] >= 0 && l->v[d] <= bi->dims[d] && l->v[d] <= bo->dims[d];
		if (!fits) {
			char x[CK_SHAPE_TEXT], y[CK_SHAPE_TEXT];
			ck_error(c, at, "slice_sizes list %d does not fit the buffers %s and %s", i, ck_shape(x, bi),
				 ck_shape(y, bo));
			return 1;
		}
	}
	return 0;
}

int infer_collective_permute(checker *c, instr *in, shape *inf)
{
	int start = in->op == OP_COLLECTIVE_PERMUTE_START;
	int64_t slices = 1;
	int inplace = instr_attr(in, ATTR_SLICE_SIZES) != NULL;
	if (at_least_one(c, in) ||
	    (inplace ? inplace_permute(c, in, &slices)
		     : arrays(c, in, start ? "operand of collective-permute-start" : "operand of collective-permute")) ||
	    check_pairs(c, in, slices) || participants(c, in))
		return 1;
	if (!start && inplace) {
		*inf = *in->ops[1].def->result;
		return tuple_layouts(c, in, inf);
	}
	if (!start)
		return operands_shape(c, in, inf) || tuple_layouts(c, in, inf);
	/* (operands, results, context...): the context as written; in place,
	 * (input, output, context...) */
	int nctx = in->has_shape && shape_is_tuple(in->shape) && in->shape->ntuple > 2 ? in->shape->ntuple - 2 : 0;
	shape *el = tuple_of(c, inf, 2 + nctx);
	if (!el)
		return 1;
	if (inplace) {
		el[0] = *in->ops[0].def->result;
		el[1] = *in->ops[1].def->result;
	} else if (operands_shape(c, in, &el[0])) {
		return 1;
	} else {
		el[1] = el[0];
	}
	for (int j = 0; j < nctx; j++)
		el[2 + j] = in->shape->tuple[2 + j];
	return tuple_layouts(c, in, inf);
}

/* The number of operands collective-broadcast or collective-reduce
 * moves: all, or with has_dynamic_root=true all but the last (the
 * roots); 0 after an error. */
static int rooted_operands(checker *c, const instr *in, const char *verb)
{
	int dyn = instr_bool(in, ATTR_HAS_DYNAMIC_ROOT, 0);
	int n = in->nops - dyn;
	if (n < 1) {
		ck_error(c, in->op_at, "%s expects at least one operand%s%s%s", opcode_name(in->op), dyn ? " to " : "",
			 dyn ? verb : "", dyn ? " before its roots (has_dynamic_root=true)" : "");
		return 0;
	}
	return n;
}

/* The roots of collective-broadcast or collective-reduce with
 * has_dynamic_root=true: their last operand, s32[n], one rank per operand
 * before it. */
static int dynamic_roots(checker *c, const instr *in, int n)
{
	char a[CK_SHAPE_TEXT];
	const shape *r = in->ops[n].def->result;
	if (r->type != ET_S32 || r->rank != 1 || r->dims[0] != n) {
		ck_error(c, in->ops[n].at,
			 "%s with has_dynamic_root=true takes the roots as its last operand, s32[%d] (one rank per %s operand), but it is %s",
			 opcode_name(in->op), n, in->op == OP_COLLECTIVE_REDUCE ? "reduced" : "broadcast", ck_shape(a, r));
		return 1;
	}
	return 0;
}

/* collective-broadcast(operands..., [roots]): the operands of a root of the
 * group (XLA's collective_broadcast_thunk: rank 0, or with
 * has_dynamic_root=true the rank its last operand, s32[n], holds for each
 * of the n broadcast operands); the result is the broadcast operands'
 * shapes. */
int infer_collective_broadcast(checker *c, instr *in, shape *inf)
{
	int n = rooted_operands(c, in, "broadcast");
	if (n < 1 || arrays(c, in, "operand of collective-broadcast") || (n < in->nops && dynamic_roots(c, in, n)) ||
	    participants(c, in))
		return 1;
	return first_operands_shape(c, in, n, inf) || tuple_layouts(c, in, inf);
}

/* --- send, recv and their -done ------------------------------------------ */

/* (T, u32[], token[]) with T an array: the value of send and recv. */
static int p2p_context(const shape *s)
{
	return shape_is_tuple(s) && s->ntuple == 3 && shape_is_array(&s->tuple[0]) && !shape_is_tuple(&s->tuple[1]) &&
	       s->tuple[1].type == ET_U32 && s->tuple[1].rank == 0 && !shape_is_tuple(&s->tuple[2]) &&
	       s->tuple[2].type == ET_TOKEN;
}

static void make_token(shape *s)
{
	memset(s, 0, sizeof *s);
	s->type = ET_TOKEN;
}

/* Operand k must be a token (XLA's verifier, CheckIsTokenOperand). */
static int token_operand(checker *c, const instr *in, int k)
{
	char a[CK_SHAPE_TEXT];
	const shape *s = in->ops[k].def->result;
	if (shape_is_tuple(s) || s->type != ET_TOKEN) {
		ck_error(c, in->ops[k].at, "Expected operand %d to be token-shaped, actual shape is %s", k, ck_shape(a, s));
		return 1;
	}
	return 0;
}

/* send and recv: a transfer with the host names no peer (its channel_id
 * keys the host's callbacks); between devices, the pairs of the frontend
 * attribute name participants of the mode (replica ids without a
 * channel_id > 0, else partition ids). */
static int p2p_peers(checker *c, const instr *in)
{
	if (instr_bool(in, ATTR_IS_HOST_TRANSFER, 0))
		return 0;
	if (participants(c, in))
		return 1;
	p2p_pairs p;
	const char *why;
	const attr *fa = instr_attr(in, ATTR_FRONTEND_ATTRIBUTES);
	loc at = fa ? ck_attr_loc(c, fa->vat, "frontend_attributes") : in->op_at;
	int rc = p2p_pairs_read(in, &p, &why);
	if (rc < 0) {
		c->oom = 1;
		return 1;
	}
	if (rc > 0) {
		ck_error(c, at, "%s", why);
		return 1;
	}
	group_mode mode = collective_group_mode(in);
	int bad = 0;
	for (int64_t i = 0; i < p.n && !bad; i++)
		bad = pair_id(c, at, mode, p.src[i], 0) || pair_id(c, at, mode, p.dst[i], 1);
	p2p_pairs_free(&p);
	return bad;
}

/* send(data, token): (data, u32[] context, token[]). */
int infer_send(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	const shape *s = in->ops[0].def->result;
	if (token_operand(c, in, 1) || p2p_peers(c, in))
		return 1;
	if (!shape_is_array(s)) {
		ck_error(c, in->ops[0].at, "Expected array argument for operand of send, but got %s.", ck_shape(a, s));
		return 1;
	}
	shape *el = tuple_of(c, inf, 3);
	if (!el)
		return 1;
	el[0] = *s;
	shape_make_array(&el[1], ET_U32, 0, NULL);
	make_token(&el[2]);
	return tuple_layouts(c, in, inf);
}

/* recv(token): the written (T, u32[], token[]). */
int infer_recv(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	if (token_operand(c, in, 0))
		return 1;
	if (!in->has_shape) {
		ck_error(c, in->op_at, "cannot infer shape for opcode: recv");
		return 1;
	}
	if (!p2p_context(in->shape)) {
		ck_error(c, in->op_at, "recv's shape must be (T, u32[], token[]) with T an array, but is %s",
			 ck_shape(a, in->shape));
		return 1;
	}
	if (p2p_peers(c, in))
		return 1;
	*inf = *in->shape;
	c->keep_layout = 1;
	return 0;
}

/* send-done(context): token[]; recv-done(context): (T, token[]). The
 * context is a send's or recv's value, passed on through tuples when the
 * transfer spans loop iterations. */
int infer_p2p_done(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	const shape *s = in->ops[0].def->result;
	int recv = in->op == OP_RECV_DONE;
	if (!p2p_context(s)) {
		ck_error(c, in->ops[0].at, "%s expects the value of a %s, (T, u32[], token[]); got %s", opcode_name(in->op),
			 recv ? "recv" : "send", ck_shape(a, s));
		return 1;
	}
	/* a transfer with the host and one between devices keep their values
	 * differently: a done takes the kind of its start */
	const instr *start = in->ops[0].def;
	int host = instr_bool(in, ATTR_IS_HOST_TRANSFER, 0);
	if ((start->op == OP_SEND || start->op == OP_RECV) && instr_bool(start, ATTR_IS_HOST_TRANSFER, 0) != host) {
		ck_error(c, in->op_at, "%s has is_host_transfer=%s, but its operand '%s' (%s) has is_host_transfer=%s",
			 opcode_name(in->op), host ? "true" : "false", start->name, opcode_name(start->op),
			 host ? "false" : "true");
		return 1;
	}
	if (!recv) {
		make_token(inf);
		return 0;
	}
	shape *el = tuple_of(c, inf, 2);
	if (!el)
		return 1;
	el[0] = s->tuple[0];
	make_token(&el[1]);
	return tuple_layouts(c, in, inf);
}

/* collective-reduce(operands..., [roots]), to_apply=f: the operands
 * reduced with f to a root of the group (XLA's collective_reduce_thunk:
 * rank 0 of the group, or with has_dynamic_root=true the rank its last
 * operand, s32[n], holds for each of the n reduced operands); the result
 * is the reduced operands' shapes, as all-reduce's. */
int infer_collective_reduce(checker *c, instr *in, shape *inf)
{
	int n = rooted_operands(c, in, "reduce");
	if (n < 1 || arrays(c, in, "collective-reduce") || check_reducer(c, in, n))
		return 1;
	if ((n < in->nops && dynamic_roots(c, in, n)) || participants(c, in))
		return 1;
	return first_operands_shape(c, in, n, inf) || tuple_layouts(c, in, inf);
}

/* ragged-all-to-all(input, output, input_offsets, send_sizes,
 * output_offsets, recv_sizes): the offsets and sizes of one shape, rank 1
 * or 2 (XLA's verifier), the result the output's shape (XLA's shape
 * inference). hloi also asks what moving rows of the input into the
 * output needs: integer offsets and sizes, an input and output of one
 * element type and the same dimensions after the first, and as many
 * updates for each member of a group. */
int infer_ragged_all_to_all(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	const shape *input = in->ops[0].def->result, *output = in->ops[1].def->result;
	if (!shape_is_array(output)) {
		ck_error(c, in->ops[1].at, "Expected array argument for operand 1 of ragged-all-to-all, but got %s.",
			 ck_shape(a, output));
		return 1;
	}
	if (!shape_is_array(input)) {
		ck_error(c, in->ops[0].at, "Expected array argument for operand 0 of ragged-all-to-all, but got %s.",
			 ck_shape(a, input));
		return 1;
	}
	for (int k = 3; k < 6; k++) {
		const shape *p = in->ops[k - 1].def->result, *q = in->ops[k].def->result;
		if (!shape_is_array(p) || (p->rank != 1 && p->rank != 2)) {
			ck_error(c, in->ops[k - 1].at, "RaggedAllToAll operand %d must be rank 1 or 2: %s", k - 1,
				 ck_shape(a, p));
			return 1;
		}
		if (!shape_is_array(q) || q->type != p->type || !shape_same_dims(p, q)) {
			ck_error(c, in->ops[k].at, "RaggedAllToAll operands have different shapes (%d, %d): %s and %s",
				 k - 1, k, ck_shape(a, p), ck_shape(b, q));
			return 1;
		}
	}
	const shape *meta = in->ops[2].def->result;
	if (!etype_is_integer(meta->type)) {
		ck_error(c, in->ops[2].at, "ragged-all-to-all offsets and sizes must be integers, but operand 2 is %s",
			 ck_shape(a, meta));
		return 1;
	}
	int same = input->type == output->type && input->rank == output->rank && input->rank >= 1;
	for (int d = 1; same && d < input->rank; d++)
		same = input->dims[d] == output->dims[d];
	if (!same) {
		ck_error(c, in->ops[1].at,
			 "ragged-all-to-all moves rows of its input into its output, which need one element type and the same dimensions after the first: input %s, output %s",
			 ck_shape(a, input), ck_shape(b, output));
		return 1;
	}
	if (participants(c, in))
		return 1;
	int64_t updates = 1, peers = subgroup_size(c, in);
	shape_element_count(meta, &updates);
	if (peers > 0 && updates % peers != 0) {
		ck_error(c, in->ops[2].at,
			 "ragged-all-to-all offsets and sizes have %lld elements, not a whole number of updates for each of the %lld members of its groups",
			 (long long)updates, (long long)peers);
		return 1;
	}
	*inf = *output;
	return 0;
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

static int infer_async_done(checker *c, instr *in, shape *inf);

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
	if (start == OP_ASYNC_START)
		return infer_async_done(c, in, inf);
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
	if (participants(c, in))
		return 1;
	shape_make_array(inf, ET_U32, 0, NULL);
	return 0;
}

int infer_after_all(checker *c, instr *in, shape *inf)
{
	for (int k = 0; k < in->nops; k++)
		if (token_operand(c, in, k))
			return 1;
	make_token(inf);
	return 0;
}

int infer_add_dependency(checker *c, instr *in, shape *inf)
{
	if (token_operand(c, in, 1))
		return 1;
	*inf = *in->ops[0].def->result;
	return tuple_layouts(c, in, inf);
}

/* The async-start an async-update or async-done chain begins with. */
static const instr *async_chain_start(const instr *in)
{
	const instr *d = in;
	while (d->op != OP_ASYNC_START && d->nops > 0 && d->ops[0].def)
		d = d->ops[0].def;
	return d->op == OP_ASYNC_START ? d : NULL;
}

/* async-start(operands), calls=f: ((operands), f's result, context...);
 * async-update(prev, operands...): ((prev's operands, operands...), f's
 * result, context...). The context is as written. A chain may bring f's
 * parameters in parts (XLA's newer parser: `call-start()` whose update
 * adds the operands), so the operands so far must be a leading part of
 * f's parameters; the done checks that they are all there. Where the
 * result is written as `()` and f's is not, it stays `()`: XLA's parser
 * fills it in later in the chain (the done's shape). */
int infer_async_start(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	const shape *before = NULL; /* async-update: the operands its operand holds */
	const instr *start = in;
	if (in->op == OP_ASYNC_UPDATE) {
		if (in->nops < 1) {
			ck_error(c, in->op_at, "async-update expects the async op it continues as its first operand.");
			return 1;
		}
		if (started_by(c, in, OP_ASYNC_START))
			return 1;
		before = &in->ops[0].def->result->tuple[0];
		start = async_chain_start(in);
		if (!start || !shape_is_tuple(before)) {
			ck_error(c, in->ops[0].at, "async-update expects its first operand to continue an async-start.");
			return 1;
		}
	}
	const attr *ca = instr_attr(start, ATTR_CALLS);
	if (!ca) {
		ck_error(c, start->op_at, "attribute calls is expected but not seen");
		return 1;
	}
	computation *f = instr_called(start, ATTR_CALLS, 0);
	if (!f || (start == in && c->async_deferred != in && ck_ensure_checked(c, in, f, ck_attr_loc(c, ca->vat, "calls"))))
		return 1;
	int nbefore = before ? before->ntuple : 0, nnew = before ? in->nops - 1 : in->nops;
	int n = nbefore + nnew;
	if (n > f->nparams) {
		if (before)
			ck_error(c, in->op_at,
				 "async-update brings the async operands to %d, but computation %s takes %d parameter%s", n,
				 f->name, f->nparams, f->nparams == 1 ? "" : "s");
		else
			ck_error(c, in->op_at, "async-start has %d operand%s, but computation %s takes %d parameter%s",
				 in->nops, in->nops == 1 ? "" : "s", f->name, f->nparams, f->nparams == 1 ? "" : "s");
		return 1;
	}
	for (int k = 0; k < nnew; k++) {
		int op = before ? k + 1 : k, p = nbefore + k;
		const shape *os = in->ops[op].def->result, *ps = f->params[p]->result;
		/* a `?` matches any size (XLA's ShapeUtil::Compatible), as call's */
		int unb = shape_has_unbounded(os) || shape_has_unbounded(ps);
		if (!(unb ? shape_compatible_bounds(os, ps) : shape_compatible(os, ps))) {
			ck_error(c, in->ops[op].at, "operand %d of %s has shape %s, but parameter %d of computation %s is %s",
				 op, opcode_name(in->op), ck_shape(a, os), p, f->name, ck_shape(b, ps));
			return 1;
		}
	}
	int nctx = in->has_shape && shape_is_tuple(in->shape) && in->shape->ntuple > 2 ? in->shape->ntuple - 2 : 0;
	shape *el = tuple_of(c, inf, 2 + nctx);
	if (!el)
		return 1;
	shape *ops = tuple_of(c, &el[0], n);
	if (c->oom)
		return 1;
	for (int k = 0; k < nbefore; k++)
		ops[k] = before->tuple[k];
	for (int k = 0; k < nnew; k++)
		ops[nbefore + k] = *in->ops[before ? k + 1 : k].def->result;
	if (in->has_shape && async_result_pending(in->shape, f->root->result))
		el[1] = in->shape->tuple[1];
	else
		el[1] = *f->root->result;
	for (int j = 0; j < nctx; j++)
		el[2 + j] = in->shape->tuple[2 + j];
	return tuple_layouts(c, in, inf);
}

/* async-done: f's result, once the chain holds all of f's operands. */
static int infer_async_done(checker *c, instr *in, shape *inf)
{
	const instr *start = async_chain_start(in);
	computation *f = start ? instr_called(start, ATTR_CALLS, 0) : NULL;
	const shape *s = in->ops[0].def->result;
	if (!f) {
		*inf = s->tuple[1];
		return tuple_layouts(c, in, inf);
	}
	if (!shape_is_tuple(&s->tuple[0]) || s->tuple[0].ntuple != f->nparams) {
		ck_error(c, in->ops[0].at, "async-done: its async op holds %d operand%s, but computation %s takes %d parameter%s",
			 s->tuple[0].ntuple, s->tuple[0].ntuple == 1 ? "" : "s", f->name, f->nparams,
			 f->nparams == 1 ? "" : "s");
		return 1;
	}
	*inf = *f->root->result;
	return tuple_layouts(c, in, inf);
}

