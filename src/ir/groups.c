/* Replica groups expanded and the participants of a collective (XLA's
 * GetParticipatingDevices in collective_ops_utils.cc). */
#include <stdlib.h>
#include <string.h>

#include "ir/groups.h"
#include "util/alloc.h"

group_mode collective_group_mode(const instr *in)
{
	int64_t ch;
	if (!instr_int(in, ATTR_CHANNEL_ID, &ch))
		return GM_REPLICA;
	/* send and recv: channel_id=0 is cross-replica too (GetP2PConfigForSendRecv) */
	if (in->op == OP_SEND || in->op == OP_RECV || in->op == OP_SEND_DONE || in->op == OP_RECV_DONE)
		return ch > 0 ? GM_PARTITION : GM_REPLICA;
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

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
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

/* A quoted axis name at p ('a' or "a"): its text in *name, *len; the
 * character after it, or NULL. */
static const char *axis_name(const char *p, const char **name, size_t *len)
{
	char q = *p;
	if (q != '\'' && q != '"')
		return NULL;
	const char *e = strchr(p + 1, q);
	if (!e)
		return NULL;
	*name = p + 1;
	*len = (size_t)(e - p - 1);
	return e + 1;
}

/* XLA's MeshAxesReplicaGroupList over whole axes of a mesh of iota device
 * ids, `mesh['a'=2,'b'=4] {'b'}`: the devices reshaped to the axis sizes,
 * the axes not named moved first and the named ones last in their order,
 * read row-major in groups of the named axes' product; the iota form
 * [G,S]<=[sizes]T(perm). 1 for any other text (sub-axes `'a':(1)2`, a
 * maximal mesh, explicit device ids), -1 as expand_iota. */
static int expand_mesh(const char *raw, id_groups *out)
{
	const char *names[HLOI_MAX_RANK];
	size_t lens[HLOI_MAX_RANK];
	int64_t sizes[HLOI_MAX_RANK], perm[HLOI_MAX_RANK];
	int grouped[HLOI_MAX_RANK], naxes = 0, ngrouped = 0;
	if (!raw || strncmp(raw, "mesh[", 5) != 0)
		return 1;
	const char *p = raw + 5;
	for (;;) {
		p = skip_space(p);
		if (naxes == HLOI_MAX_RANK || !(p = axis_name(p, &names[naxes], &lens[naxes])))
			return 1;
		p = skip_space(p);
		if (*p++ != '=')
			return 1;
		char *e;
		long long v = strtoll(p, &e, 10);
		if (e == p || v < 1 || v > GROUPS_MAX_IDS)
			return 1;
		sizes[naxes++] = v;
		p = skip_space(e);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p++ != ']')
			return 1;
		break;
	}
	p = skip_space(p);
	if (*p++ != '{')
		return 1;
	for (;;) {
		const char *name;
		size_t len;
		p = skip_space(p);
		if (!(p = axis_name(p, &name, &len)))
			return 1;
		int k = 0;
		while (k < naxes && !(lens[k] == len && !strncmp(names[k], name, len)))
			k++;
		if (k == naxes || ngrouped == naxes)
			return 1;
		for (int j = 0; j < ngrouped; j++)
			if (grouped[j] == k)
				return 1;
		grouped[ngrouped++] = k;
		p = skip_space(p);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p++ != '}' || *skip_space(p))
			return 1;
		break;
	}
	int64_t total = 1, size = 1;
	int n = 0;
	for (int k = 0; k < naxes; k++) {
		total *= sizes[k];
		if (total > GROUPS_MAX_IDS)
			return -1;
		int named = 0;
		for (int j = 0; j < ngrouped; j++)
			named |= grouped[j] == k;
		if (!named)
			perm[n++] = k;
	}
	for (int j = 0; j < ngrouped; j++) {
		perm[n++] = grouped[j];
		size *= sizes[grouped[j]];
	}
	int64_t gdims[2] = { total / size, size };
	replica_groups rg;
	memset(&rg, 0, sizeof rg);
	rg.form = RG_IOTA;
	rg.ngroup_dims = 2;
	rg.group_dims = gdims;
	rg.nreshape = naxes;
	rg.reshape_dims = sizes;
	rg.nperm = naxes;
	rg.perm = perm;
	return expand_iota(&rg, out);
}

int groups_expand(const replica_groups *rg, id_groups *out)
{
	memset(out, 0, sizeof *out);
	if (!rg)
		return 0;
	if (rg->form == RG_RAW)
		return expand_mesh(rg->raw, out);
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

/* The end of a frontend attribute's value starting at p: a quoted string,
 * a braced list, or a bare word; NULL when unterminated. */
static const char *value_end(const char *p)
{
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		return *p ? p + 1 : NULL;
	}
	if (*p == '{') {
		int depth = 0;
		for (; *p; p++) {
			if (*p == '{')
				depth++;
			else if (*p == '}' && --depth == 0)
				return p + 1;
		}
		return NULL;
	}
	while (*p && *p != ',' && *p != '}')
		p++;
	return p;
}

int frontend_value(const instr *in, const char *key, const char **v, size_t *len)
{
	const attr *a = instr_attr(in, ATTR_FRONTEND_ATTRIBUTES);
	if (!a || a->kind != AK_RAW || !a->u.s)
		return 0;
	size_t klen = strlen(key);
	const char *p = skip_space(a->u.s);
	if (*p == '{')
		p++;
	for (;;) {
		p = skip_space(p);
		if (!*p || *p == '}')
			return 0;
		const char *k = p, *ke;
		if (*p == '"') {
			k = ++p;
			while (*p && *p != '"')
				p++;
			ke = p;
			if (*p)
				p++;
		} else {
			while (*p && *p != '=' && *p != ',' && *p != '}' && *p != ' ')
				p++;
			ke = p;
		}
		p = skip_space(p);
		if (*p != '=')
			return 0;
		p = skip_space(p + 1);
		const char *e = value_end(p);
		if (!e)
			return 0;
		if ((size_t)(ke - k) == klen && !strncmp(k, key, klen)) {
			if (*p == '"') {
				*v = p + 1;
				*len = (size_t)(e - p - 2);
			} else {
				*v = p;
				*len = (size_t)(e - p);
			}
			return 1;
		}
		p = skip_space(e);
		if (*p == ',')
			p++;
	}
}

/* `{{a,b},{c,d},...}` (len characters at v) into n pairs of a and b;
 * 1 when malformed, -1 out of memory. */
static int read_pairs(const char *v, size_t len, int64_t *n, int64_t **a, int64_t **b)
{
	char *t = hloi_malloc(len + 1);
	if (!t)
		return -1;
	memcpy(t, v, len);
	t[len] = 0;
	int64_t cap = 0, count = 0;
	for (const char *p = t; *p; p++)
		cap += *p == '{';
	*a = hloi_malloc((size_t)(cap ? cap : 1) * sizeof **a);
	*b = hloi_malloc((size_t)(cap ? cap : 1) * sizeof **b);
	int bad = !*a || !*b ? -1 : 0;
	const char *p = skip_space(t);
	if (!bad && *p++ != '{')
		bad = 1;
	while (!bad) {
		p = skip_space(p);
		if (*p == '}' && count == 0) {
			p++;
			break;
		}
		if (*p++ != '{') {
			bad = 1;
			break;
		}
		long long x[2];
		for (int j = 0; j < 2 && !bad; j++) {
			char *e;
			p = skip_space(p);
			x[j] = strtoll(p, &e, 10);
			if (e == p) {
				bad = 1;
				break;
			}
			p = skip_space(e);
			if (*p++ != (j ? '}' : ','))
				bad = 1;
		}
		if (bad)
			break;
		(*a)[count] = x[0];
		(*b)[count] = x[1];
		count++;
		p = skip_space(p);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p++ != '}')
			bad = 1;
		break;
	}
	if (!bad && *skip_space(p))
		bad = 1;
	hloi_free(t);
	if (bad) {
		hloi_free(*a);
		hloi_free(*b);
		*a = *b = NULL;
		return bad;
	}
	*n = count;
	return 0;
}

void p2p_pairs_free(p2p_pairs *p)
{
	hloi_free(p->src);
	hloi_free(p->dst);
	hloi_free(p->lo);
	hloi_free(p->hi);
	memset(p, 0, sizeof *p);
}

int p2p_pairs_read(const instr *in, p2p_pairs *out, const char **why)
{
	const char *v;
	size_t len;
	memset(out, 0, sizeof *out);
	*why = NULL;
	if (!frontend_value(in, P2P_PAIRS_ATTR, &v, &len))
		return 0;
	int rc = read_pairs(v, len, &out->n, &out->src, &out->dst);
	if (rc) {
		*why = P2P_PAIRS_ATTR " expects pairs {{source,target},...}";
		return rc;
	}
	if (!frontend_value(in, P2P_VALIDATION_ATTR, &v, &len))
		return 0;
	if (len == 7 && !strncmp(v, "invalid", 7)) {
		out->invalid = 1;
		return 0;
	}
	int64_t nb = 0;
	rc = read_pairs(v, len, &nb, &out->lo, &out->hi);
	if (rc == 0 && nb != out->n)
		rc = 1;
	if (rc) {
		p2p_pairs_free(out);
		*why = P2P_VALIDATION_ATTR " expects \"invalid\" or one {lo,hi} per source-target pair";
	}
	return rc;
}
