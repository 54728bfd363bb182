/* Replica groups expanded and the participants of a collective (XLA's
 * GetParticipatingDevices in collective_ops_utils.cc). */
#include <string.h>

#include "ir/groups.h"
#include "util/alloc.h"

group_mode collective_group_mode(const instr *in)
{
	int64_t ch;
	if (!instr_int(in, ATTR_CHANNEL_ID, &ch))
		return GM_REPLICA;
	if (in->op == OP_ALL_TO_ALL || in->op == OP_COLLECTIVE_PERMUTE || in->op == OP_COLLECTIVE_PERMUTE_START ||
	    in->op == OP_COLLECTIVE_BROADCAST || in->op == OP_RAGGED_ALL_TO_ALL || !instr_attr(in, ATTR_USE_GLOBAL_DEVICE_IDS))
		return GM_PARTITION;
	return instr_bool(in, ATTR_USE_GLOBAL_DEVICE_IDS, 0) ? GM_FLATTENED : GM_REPLICA_AND_PARTITION;
}

const char *group_mode_name(group_mode m)
{
	switch (m) {
	case GM_REPLICA:
		return "kCrossReplica";
	case GM_PARTITION:
		return "kCrossPartition";
	case GM_REPLICA_AND_PARTITION:
		return "kCrossReplicaAndPartition";
	default:
		return "kFlattenedID";
	}
}

void groups_free(id_groups *g)
{
	hloi_free(g->start);
	hloi_free(g->ids);
	memset(g, 0, sizeof *g);
}

/* Most ids an iota form may expand to. */
#define GROUPS_MAX_IDS ((int64_t)1 << 24)

/* [G,S]<=[d0,...]T(p...): iota over the reshape dims, transposed by the
 * permutation, read row-major as G groups of S. */
static int expand_iota(const replica_groups *rg, id_groups *out)
{
	if (rg->ngroup_dims != 2 || rg->nreshape < 1 || rg->nreshape > HLOI_MAX_RANK ||
	    (rg->nperm && rg->nperm != rg->nreshape))
		return -1;
	int64_t g = rg->group_dims[0], s = rg->group_dims[1], total = 1;
	for (int d = 0; d < rg->nreshape; d++) {
		if (rg->reshape_dims[d] < 1 || rg->reshape_dims[d] > GROUPS_MAX_IDS)
			return -1;
		total *= rg->reshape_dims[d];
		if (total > GROUPS_MAX_IDS)
			return -1;
	}
	if (g < 1 || s < 1 || g > GROUPS_MAX_IDS || s > GROUPS_MAX_IDS || g * s != total)
		return -1;
	int n = rg->nreshape;
	int64_t tdims[HLOI_MAX_RANK], stride[HLOI_MAX_RANK], t[HLOI_MAX_RANK] = { 0 };
	int perm[HLOI_MAX_RANK];
	for (int d = 0; d < n; d++) {
		perm[d] = rg->nperm ? (int)rg->perm[d] : d;
		if (perm[d] < 0 || perm[d] >= n)
			return -1;
	}
	stride[n - 1] = 1;
	for (int d = n - 2; d >= 0; d--)
		stride[d] = stride[d + 1] * rg->reshape_dims[d + 1];
	for (int d = 0; d < n; d++)
		tdims[d] = rg->reshape_dims[perm[d]];
	out->ids = hloi_malloc((size_t)total * sizeof *out->ids);
	out->start = hloi_malloc((size_t)(g + 1) * sizeof *out->start);
	if (!out->ids || !out->start) {
		groups_free(out);
		return -1;
	}
	for (int64_t o = 0; o < total; o++) {
		int64_t v = 0;
		for (int d = 0; d < n; d++)
			v += t[d] * stride[perm[d]];
		out->ids[o] = v;
		for (int d = n - 1; d >= 0 && ++t[d] == tdims[d]; d--)
			t[d] = 0;
	}
	for (int64_t k = 0; k <= g; k++)
		out->start[k] = k * s;
	out->ngroups = g;
	return 0;
}

int groups_expand(const replica_groups *rg, id_groups *out)
{
	memset(out, 0, sizeof *out);
	if (!rg)
		return 0;
	if (rg->form == RG_RAW)
		return 1;
	if (rg->form == RG_IOTA)
		return expand_iota(rg, out);
	int64_t total = 0;
	for (int k = 0; k < rg->list.n; k++)
		total += rg->list.v[k].n;
	if (rg->list.n == 0)
		return 0;
	out->ids = hloi_malloc((size_t)(total ? total : 1) * sizeof *out->ids);
	out->start = hloi_malloc((size_t)(rg->list.n + 1) * sizeof *out->start);
	if (!out->ids || !out->start) {
		groups_free(out);
		return -1;
	}
	int64_t at = 0;
	for (int k = 0; k < rg->list.n; k++) {
		out->start[k] = at;
		for (int j = 0; j < rg->list.v[k].n; j++)
			out->ids[at++] = rg->list.v[k].v[j];
	}
	out->start[rg->list.n] = at;
	out->ngroups = rg->list.n;
	return 0;
}

int64_t collective_members(const instr *in, int64_t replicas, int64_t partitions, int64_t me, int64_t *members,
			   int64_t *rank)
{
	int64_t r = me / partitions, p = me % partitions;
	group_mode mode = collective_group_mode(in);
	int permute = in->op == OP_COLLECTIVE_PERMUTE || in->op == OP_COLLECTIVE_PERMUTE_START;
	const attr *a = permute ? NULL : instr_attr(in, ATTR_REPLICA_GROUPS);
	id_groups g;
	if (groups_expand(a ? a->u.rg : NULL, &g) != 0)
		return -1;
	/* the id that names me in the groups, and the size of the whole domain */
	int64_t key = mode == GM_PARTITION ? p : mode == GM_FLATTENED ? me : r;
	int64_t domain = mode == GM_PARTITION ? partitions : mode == GM_FLATTENED ? replicas * partitions : replicas;
	const int64_t *ids = NULL;
	int64_t n = 0;
	if (g.ngroups == 0) {
		n = domain;
	} else {
		for (int64_t k = 0; k < g.ngroups && !ids; k++)
			for (int64_t j = g.start[k]; j < g.start[k + 1]; j++)
				if (g.ids[j] == key) {
					ids = g.ids + g.start[k];
					n = g.start[k + 1] - g.start[k];
					break;
				}
		if (!ids) {
			groups_free(&g);
			return 0;
		}
	}
	int64_t count = 0;
	*rank = -1;
	for (int64_t j = 0; j < n; j++) {
		int64_t id = ids ? ids[j] : j;
		int64_t q0 = 0, q1 = 1;
		if (mode == GM_REPLICA_AND_PARTITION)
			q1 = partitions;
		for (int64_t q = q0; q < q1; q++) {
			int64_t m = mode == GM_REPLICA ? id * partitions + p
				    : mode == GM_PARTITION ? r * partitions + id
				    : mode == GM_FLATTENED ? id
							   : id * partitions + q;
			if (m == me)
				*rank = count;
			members[count++] = m;
		}
	}
	groups_free(&g);
	return *rank < 0 ? 0 : count;
}
