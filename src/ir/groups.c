/* Replica groups expanded and the participants of a collective (XLA's
 * GetParticipatingDevices in collective_ops_utils.cc). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/groups.h"
#include "util/alloc.h"
#include "util/diag.h"

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

/* Most ids an iota form or a mesh may expand to. */
#define GROUPS_MAX_IDS ((int64_t)1 << 24)
/* Most dimensions a mesh's devices are reshaped to: each axis, and two
 * more for each sub-axis named. */
#define GROUPS_MAX_DIMS (3 * HLOI_MAX_RANK)

/* Groups of s read row-major from the array of `n` dimensions `dims`
 * transposed by `perm`: element o of the transposed array is the one at
 * the row-major offset of its index in the original, src[offset] (the
 * offset itself when src is NULL: an iota). total is the product of dims
 * and a multiple of s. Returns 0, -1 out of memory. */
static int read_transposed(const int64_t *src, const int64_t *dims, const int *perm, int n, int64_t total,
			   int64_t s, id_groups *out)
{
	int64_t tdims[GROUPS_MAX_DIMS], stride[GROUPS_MAX_DIMS], t[GROUPS_MAX_DIMS] = { 0 };
	int64_t g = total / s;
	if (n > 0)
		stride[n - 1] = 1;
	for (int d = n - 2; d >= 0; d--)
		stride[d] = stride[d + 1] * dims[d + 1];
	for (int d = 0; d < n; d++)
		tdims[d] = dims[perm[d]];
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
		out->ids[o] = src ? src[v] : v;
		for (int d = n - 1; d >= 0 && ++t[d] == tdims[d]; d--)
			t[d] = 0;
	}
	for (int64_t k = 0; k <= g; k++)
		out->start[k] = k * s;
	out->ngroups = g;
	return 0;
}

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
	int n = rg->nreshape, perm[HLOI_MAX_RANK], used[HLOI_MAX_RANK] = { 0 };
	for (int d = 0; d < n; d++) {
		perm[d] = rg->nperm ? (int)rg->perm[d] : d;
		if (perm[d] < 0 || perm[d] >= n || used[perm[d]]++)
			return -1;
	}
	return read_transposed(NULL, rg->reshape_dims, perm, n, total, s, out);
}

/* --- mesh replica groups (XLA's MeshAxesReplicaGroupList) ------------------------ */

/* One axis of the groups: mesh axis `axis`, whole, or its sub-axis of
 * `size` devices after `pre` (XLA's AxisRef, 'a':(pre)size). */
typedef struct mesh_ref {
	int axis;
	int sub;
	int64_t pre, size;
} mesh_ref;

/* The mesh replica groups as written, read by mesh_read. */
typedef struct mesh_groups {
	const char *mesh;          /* the mesh's text (for the messages) */
	size_t mesh_len;
	int naxes;
	const char *names[HLOI_MAX_RANK];
	size_t lens[HLOI_MAX_RANK];
	int64_t sizes[HLOI_MAX_RANK];
	int64_t total;             /* devices: the product of the sizes */
	int maximal;               /* maximal_mesh[device_id=...] */
	int64_t device_id;
	int ids;                   /* device_ids=: 0 none (iota), 1 a list, 2 an iota */
	int64_t *list;             /* ids == 1: `total` entries (hloi_malloc) */
	int64_t nlist;             /* how many were written */
	int nreshape, nperm;       /* ids == 2: ([reshape]T(perm)) */
	int64_t reshape[HLOI_MAX_RANK], perm[HLOI_MAX_RANK];
	int nrefs;
	mesh_ref refs[HLOI_MAX_RANK];
} mesh_groups;

/* A reason in *why (why_size bytes; none when why is NULL); returns 1. */
static int mesh_fail(char *why, size_t why_size, const char *fmt, ...) DIAG_PRINTF(3, 4);
static int mesh_fail(char *why, size_t why_size, const char *fmt, ...)
{
	if (why && why_size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, why_size, fmt, ap);
		va_end(ap);
	}
	return 1;
}

/* An integer at *p (after spaces); *p moves past it. 0, or 1 when there
 * is none. */
static int read_int(const char **p, int64_t *v)
{
	const char *s = skip_space(*p);
	char *e;
	errno = 0;
	long long x = strtoll(s, &e, 10);
	if (e == s || errno)
		return 1;
	*v = x;
	*p = e;
	return 0;
}

/* Whether `c` comes next (after spaces); consumed if so. */
static int eat(const char **p, char c)
{
	const char *s = skip_space(*p);
	if (*s != c)
		return 0;
	*p = s + 1;
	return 1;
}

/* Whether the word `w` comes next (after spaces); consumed if so. */
static int eat_word(const char **p, const char *w)
{
	const char *s = skip_space(*p);
	size_t n = strlen(w);
	if (strncmp(s, w, n) != 0 || (s[n] >= 'a' && s[n] <= 'z') || s[n] == '_')
		return 0;
	*p = s + n;
	return 1;
}

/* A quoted name at *p (after spaces), 'a' or "a" (a backslash keeps the
 * character after it): its text in *name, *len. 0, or 1 when there is
 * none. */
static int read_name(const char **p, const char **name, size_t *len)
{
	const char *s = skip_space(*p);
	char q = *s;
	if (q != '\'' && q != '"')
		return 1;
	const char *e = s + 1;
	while (*e && *e != q)
		e += e[0] == '\\' && e[1] ? 2 : 1;
	if (!*e)
		return 1;
	*name = s + 1;
	*len = (size_t)(e - s - 1);
	*p = e + 1;
	return 0;
}

/* Whether the name is an integer (XLA refuses such axis names: an axis
 * may be named by its index); its value in *v. */
static int name_is_int(const char *name, size_t len, int64_t *v)
{
	char buf[32];
	if (len == 0 || len >= sizeof buf)
		return 0;
	memcpy(buf, name, len);
	buf[len] = 0;
	const char *p = buf;
	return !read_int(&p, v) && !*skip_space(p);
}

/* `[ints]` after spaces into v (at most HLOI_MAX_RANK); 0 or 1. */
static int read_bracket(const char **p, char open, char close, int64_t *v, int *n)
{
	*n = 0;
	if (!eat(p, open))
		return 1;
	if (eat(p, close))
		return 0;
	do {
		if (*n == HLOI_MAX_RANK || read_int(p, &v[*n]))
			return 1;
		(*n)++;
	} while (eat(p, ','));
	return !eat(p, close);
}

/* Reads the text of mesh replica groups (the grammar of attr_text.c's
 * check_mesh_groups) into *m, with XLA's parser's checks of the mesh
 * (Mesh::Validate) and of the axis names. Returns 0, 1 with *why, -1 out
 * of memory. m->list is the caller's to free. */
static int mesh_read(const char *raw, mesh_groups *m, char *why, size_t why_size)
{
	memset(m, 0, sizeof *m);
	const char *p = skip_space(raw);
	m->mesh = p;
	m->total = 1;
	const char *malformed = "malformed mesh replica groups";
	if (eat_word(&p, "maximal_mesh")) {
		m->maximal = 1;
		if (!eat(&p, '[') || !eat_word(&p, "device_id") || !eat(&p, '=') || read_int(&p, &m->device_id) ||
		    !eat(&p, ']'))
			return mesh_fail(why, why_size, "%s", malformed);
		m->mesh_len = (size_t)(p - m->mesh);
	} else if (eat_word(&p, "mesh")) {
		if (!eat(&p, '['))
			return mesh_fail(why, why_size, "%s", malformed);
		if (!eat(&p, ']')) {
			do {
				int k = m->naxes;
				if (k == HLOI_MAX_RANK)
					return mesh_fail(why, why_size, "a mesh of more than %d axes", HLOI_MAX_RANK);
				if (read_name(&p, &m->names[k], &m->lens[k]) || !eat(&p, '=') || read_int(&p, &m->sizes[k]))
					return mesh_fail(why, why_size, "%s", malformed);
				m->naxes++;
			} while (eat(&p, ','));
			if (!eat(&p, ']'))
				return mesh_fail(why, why_size, "%s", malformed);
		}
		m->mesh_len = (size_t)(p - m->mesh);
		for (int k = 0; k < m->naxes; k++) {
			int64_t v;
			if (m->sizes[k] < 1)
				return mesh_fail(why, why_size, "Mesh axis size must be positive: %.*s=%lld", (int)m->lens[k],
						 m->names[k], (long long)m->sizes[k]);
			if (m->total > GROUPS_MAX_IDS / m->sizes[k])
				return mesh_fail(why, why_size, "a mesh of more than %lld devices",
						 (long long)GROUPS_MAX_IDS);
			m->total *= m->sizes[k];
			for (int j = 0; j < k; j++)
				if (m->lens[j] == m->lens[k] && !memcmp(m->names[j], m->names[k], m->lens[k]))
					return mesh_fail(why, why_size,
							 "Mesh has duplicate axis names. Duplicate axis name: %.*s",
							 (int)m->lens[k], m->names[k]);
			if (name_is_int(m->names[k], m->lens[k], &v))
				return mesh_fail(why, why_size,
						 "Mesh axis name cannot be an integer to avoid confusion with axis indices: %.*s",
						 (int)m->lens[k], m->names[k]);
		}
		const char *q = p;
		if (eat(&q, ',')) {
			p = q;
			if (!eat_word(&p, "device_ids") || !eat(&p, '=') || !eat(&p, '('))
				return mesh_fail(why, why_size, "%s", malformed);
			if (*skip_space(p) == '[') {
				m->ids = 2;
				if (read_bracket(&p, '[', ']', m->reshape, &m->nreshape) || m->nreshape == 0)
					return mesh_fail(why, why_size, "%s", malformed);
				if (eat(&p, 'T') && read_bracket(&p, '(', ')', m->perm, &m->nperm))
					return mesh_fail(why, why_size, "%s", malformed);
			} else {
				m->ids = 1;
				m->list = hloi_malloc((size_t)m->total * sizeof *m->list);
				if (!m->list)
					return -1;
				if (*skip_space(p) != ')') {
					do {
						int64_t v;
						if (read_int(&p, &v))
							return mesh_fail(why, why_size, "%s", malformed);
						if (m->nlist < m->total)
							m->list[m->nlist] = v;
						m->nlist++;
					} while (eat(&p, ','));
				}
			}
			if (!eat(&p, ')'))
				return mesh_fail(why, why_size, "%s", malformed);
			m->mesh_len = (size_t)(p - m->mesh);
		}
	} else {
		return mesh_fail(why, why_size, "%s", malformed);
	}
	/* the devices (XLA's parser, then Mesh::Validate) */
	if (m->ids == 1 && m->nlist != m->total)
		return mesh_fail(why, why_size, "Expected %lld device_ids based on mesh axes, but got %lld",
				 (long long)m->total, (long long)m->nlist);
	if (m->ids == 1 && m->naxes > 0) {
		int identity = 1;
		for (int64_t i = 0; i < m->total; i++) {
			if (m->list[i] < 0)
				return mesh_fail(why, why_size, "Mesh device ids must be non-negative. Device id: %lld",
						 (long long)m->list[i]);
			identity &= m->list[i] == i;
		}
		if (identity)
			return mesh_fail(why, why_size, "Non-iota device assignment has iota device id list [0,1,2,3...].");
		uint8_t *seen = hloi_calloc((size_t)m->total, 1);
		if (!seen)
			return -1;
		int bad = 0;
		for (int64_t i = 0; i < m->total && !bad; i++) {
			bad = m->list[i] >= m->total || seen[m->list[i]];
			if (!bad)
				seen[m->list[i]] = 1;
		}
		hloi_free(seen);
		if (bad)
			return mesh_fail(why, why_size, "Device ids must be a permutation of [0,1,2,3...].");
	}
	if (m->ids == 2) {
		int64_t n = 1;
		int used[HLOI_MAX_RANK] = { 0 };
		if (m->nreshape > 1 && m->nperm == 0)
			return mesh_fail(why, why_size, "expected 'T(' to start sharding devices iota_transpose_perm");
		for (int d = 0; d < m->nperm; d++) {
			if (m->perm[d] < 0 || m->perm[d] >= m->nreshape)
				return mesh_fail(why, why_size,
						 "Out of range iota minor_to_major value %lld, expecting value in range [0, %d)",
						 (long long)m->perm[d], m->nreshape);
			if (used[m->perm[d]]++ || m->nperm != m->nreshape)
				return mesh_fail(why, why_size, "device_ids=(...T(...)): the transpose is not a permutation of the %d reshape dimensions",
						 m->nreshape);
		}
		for (int d = 0; d < m->nreshape; d++) {
			if (m->reshape[d] < 1 || n > GROUPS_MAX_IDS / m->reshape[d]) {
				n = -1;
				break;
			}
			n *= m->reshape[d];
		}
		if (n != m->total)
			return mesh_fail(why, why_size, "device_ids=(...) reshapes an iota of other than the mesh's %lld devices",
					 (long long)m->total);
	}
	/* the axes of the groups (XLA's ParseAxisRef) */
	if (!eat(&p, '{'))
		return mesh_fail(why, why_size, "%s", malformed);
	if (!eat(&p, '}')) {
		do {
			const char *name;
			size_t len;
			if (m->nrefs == HLOI_MAX_RANK)
				return mesh_fail(why, why_size, "replica groups over more than %d axes", HLOI_MAX_RANK);
			if (read_name(&p, &name, &len))
				return mesh_fail(why, why_size, "%s", malformed);
			mesh_ref *r = &m->refs[m->nrefs++];
			int64_t index = -1;
			for (int k = 0; k < m->naxes && index < 0; k++)
				if (m->lens[k] == len && !memcmp(m->names[k], name, len))
					index = k;
			if (index < 0 && !name_is_int(name, len, &index))
				return mesh_fail(why, why_size, "axis '%.*s' is not a valid axis name or index in mesh %.*s",
						 (int)len, name, (int)m->mesh_len, m->mesh);
			if (index < 0 || index >= m->naxes)
				return mesh_fail(why, why_size, "axis index %lld is out of bounds for mesh %.*s which has %d axes",
						 (long long)index, (int)m->mesh_len, m->mesh, m->naxes);
			r->axis = (int)index;
			if (eat(&p, ':')) {
				r->sub = 1;
				if (!eat(&p, '(') || read_int(&p, &r->pre) || !eat(&p, ')') || read_int(&p, &r->size))
					return mesh_fail(why, why_size, "%s", malformed);
				if (r->pre < 1)
					return mesh_fail(why, why_size, "sub-axis pre-size must be >= 1");
				if (r->size <= 1)
					return mesh_fail(why, why_size, "sub-axis size must be > 1");
			}
		} while (eat(&p, ','));
		if (!eat(&p, '}'))
			return mesh_fail(why, why_size, "%s", malformed);
	}
	if (*skip_space(p))
		return mesh_fail(why, why_size, "%s", malformed);
	return 0;
}

/* `name` or `name:(pre)size`, as XLA's AxisRef::ToString prints it. */
static int ref_text(char *buf, size_t n, const mesh_groups *m, const mesh_ref *r)
{
	int k = r->axis;
	if (!r->sub)
		return snprintf(buf, n, "%.*s", (int)m->lens[k], m->names[k]);
	return snprintf(buf, n, "%.*s:(%lld)%lld", (int)m->lens[k], m->names[k], (long long)r->pre, (long long)r->size);
}

/* XLA's AxisRef::CanCoexistWithoutOverlap. */
static int refs_coexist(const mesh_ref *a, const mesh_ref *b)
{
	if (a->axis != b->axis)
		return 1;
	if (!a->sub || !b->sub)
		return 0;
	int64_t an = a->pre * a->size, bn = b->pre * b->size;
	if (an > b->pre && bn > a->pre)
		return 0;
	int64_t max_pre = a->pre > b->pre ? a->pre : b->pre, min_next = an < bn ? an : bn;
	return max_pre % min_next == 0;
}

/* XLA's ValidateSpanOfAxes over the groups' axes: each sub-axis within its
 * axis, no two overlapping, no two neighbours that would merge. */
static int mesh_validate(const mesh_groups *m, char *why, size_t why_size)
{
	for (int i = 0; i < m->nrefs; i++) {
		const mesh_ref *r = &m->refs[i];
		int64_t size = m->sizes[r->axis], next;
		if (!r->sub)
			continue;
		if (__builtin_mul_overflow(r->pre, r->size, &next))
			return mesh_fail(why, why_size,
					 "Sub-axis next_pre_size must divide the full axis size. Next pre-size: %lld*%lld, Axis size: %lld",
					 (long long)r->pre, (long long)r->size, (long long)size);
		if (size % next != 0)
			return mesh_fail(why, why_size,
					 "Sub-axis next_pre_size must divide the full axis size. Next pre-size: %lld, Axis size: %lld",
					 (long long)next, (long long)size);
		if (r->size >= size)
			return mesh_fail(why, why_size,
					 "Sub-axis size must be strictly less than the full axis size. Sub-axis size: %lld, Axis size: %lld",
					 (long long)r->size, (long long)size);
	}
	for (int i = 0; i < m->nrefs; i++)
		for (int j = i + 1; j < m->nrefs; j++)
			if (!refs_coexist(&m->refs[i], &m->refs[j]))
				return mesh_fail(why, why_size, "Axes cannot coexist or axes overlap.");
	for (int i = 0; i + 1 < m->nrefs; i++) {
		const mesh_ref *a = &m->refs[i], *b = &m->refs[i + 1];
		if (a->axis == b->axis && a->sub && b->sub && a->pre * a->size == b->pre) {
			char ta[128], tb[128];
			ref_text(ta, sizeof ta, m, a);
			ref_text(tb, sizeof tb, m, b);
			return mesh_fail(why, why_size, "Adjacent axes in dimension sharding can be merged: %s, %s", ta, tb);
		}
	}
	return 0;
}

/* The devices of the mesh in row-major order of its axes: NULL for iota
 * ids (the caller reads offsets), else an array the caller frees in
 * *owned. Returns 0, -1 out of memory. */
static int mesh_device_ids(mesh_groups *m, const int64_t **ids, int64_t **owned)
{
	*ids = NULL;
	*owned = NULL;
	if (m->maximal) {
		*ids = &m->device_id;
		return 0;
	}
	if (m->ids == 1) {
		*ids = m->list;
		return 0;
	}
	if (m->ids != 2 || m->nreshape == 1)
		return 0;
	/* ([r...]T(p...)): iota over r transposed by p, read row-major */
	id_groups all;
	memset(&all, 0, sizeof all);
	int perm[HLOI_MAX_RANK];
	for (int d = 0; d < m->nreshape; d++)
		perm[d] = (int)m->perm[d];
	if (read_transposed(NULL, m->reshape, perm, m->nreshape, m->total, m->total, &all))
		return -1;
	hloi_free(all.start);
	*ids = *owned = all.ids;
	return 0;
}

/* XLA's MeshAxesReplicaGroupList::flattened_replica_groups: each mesh
 * axis split into the dimensions its sub-axes need (one named sub-axis
 * 'a':(pre)size of an axis of n: [pre, size, n/(pre*size)]; several: the
 * sub-axes by pre-size with the dimensions between and after them), the
 * devices reshaped to all these dimensions, the ones not named moved first
 * and the named ones last in the order named, read row-major in groups of
 * the named sizes' product. */
static int expand_mesh(const char *raw, id_groups *out, char *why, size_t why_size)
{
	mesh_groups m;
	int rc = mesh_read(raw, &m, why, why_size);
	if (rc == 0)
		rc = mesh_validate(&m, why, why_size);
	int64_t dims[GROUPS_MAX_DIMS];
	int grouped[HLOI_MAX_RANK], perm[GROUPS_MAX_DIMS], ndims = 0;
	int64_t size = 1;
	for (int k = 0; rc == 0 && k < m.naxes; k++) {
		/* the refs on axis k, in the order written, by pre-size */
		int on[HLOI_MAX_RANK], n = 0;
		for (int i = 0; i < m.nrefs; i++)
			if (m.refs[i].axis == k)
				on[n++] = i;
		if (n == 0) {
			dims[ndims++] = m.sizes[k];
			continue;
		}
		if (n == 1 && !m.refs[on[0]].sub) {
			grouped[on[0]] = ndims;
			dims[ndims++] = m.sizes[k];
			continue;
		}
		for (int a = 1; a < n; a++)
			for (int b = a; b > 0 && m.refs[on[b]].pre < m.refs[on[b - 1]].pre; b--) {
				int t = on[b];
				on[b] = on[b - 1];
				on[b - 1] = t;
			}
		int64_t prefix = 1;
		for (int a = 0; a < n; a++) {
			const mesh_ref *r = &m.refs[on[a]];
			if (r->pre != prefix) {
				dims[ndims++] = r->pre / prefix;
				prefix = r->pre;
			}
			grouped[on[a]] = ndims;
			dims[ndims++] = r->size;
			prefix *= r->size;
		}
		if (prefix != m.sizes[k])
			dims[ndims++] = m.sizes[k] / prefix;
	}
	if (rc == 0) {
		int np = 0;
		for (int d = 0; d < ndims; d++) {
			int named = 0;
			for (int i = 0; i < m.nrefs; i++)
				named |= grouped[i] == d;
			if (!named)
				perm[np++] = d;
		}
		for (int i = 0; i < m.nrefs; i++) {
			perm[np++] = grouped[i];
			size *= dims[grouped[i]];
		}
		const int64_t *ids;
		int64_t *owned;
		rc = mesh_device_ids(&m, &ids, &owned);
		if (rc == 0)
			rc = read_transposed(ids, dims, perm, ndims, m.total, size, out);
		hloi_free(owned);
	}
	hloi_free(m.list);
	return rc;
}

int groups_expand(const replica_groups *rg, id_groups *out, char *why, size_t why_size)
{
	memset(out, 0, sizeof *out);
	if (why && why_size)
		why[0] = 0;
	if (!rg)
		return 0;
	if (rg->form == RG_RAW)
		return expand_mesh(rg->raw, out, why, why_size);
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
	if (groups_expand(a ? a->u.rg : NULL, &g, NULL, 0) != 0)
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
