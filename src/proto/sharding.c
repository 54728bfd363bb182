/* XLA's sharding text <-> OpSharding (hlo_sharding.cc's Print / ToProto and
 * hlo_parser.cc's ParseSharding at openxla/xla 841f8d2d): `{replicated}`,
 * `{maximal device=1}`, `{manual}`, `{unknown}`, `{unreduced}`,
 * `{devices=[2,1]0,1}`, iota tile assignments `{devices=[2,2]<=[4]}` and
 * `<=[2,2]T(1,0)`, `last_tile_dim_replicate`, `last_tile_dims={manual}`,
 * `shard_as 1` / `shard_like 1`, `metadata={...}` or `metadata={{...},
 * {...}}`, tuples `{{...}, {...}}`, and the named forms over a mesh
 * (`{mesh['x'=2,'y'=4], [{'x'}, {}], replicated={'y'}}`,
 * `{maximal_mesh[device_id=3]}`). Also the mesh form of replica groups
 * (`mesh['x'=2,'y'=4] {'x'}`).
 *
 * The proto is built the way XLA's HloSharding::ToProto writes one (a
 * replicated sharding carries the one device 0 of its tile assignment); a
 * proto whose sharding another writer spelled differently is printed with
 * XLA's meaning, and the loader keeps the original (load.c's echo). */
#include <stdlib.h>
#include <string.h>

#include "proto/pbtxt.h"
#include "proto/proto_internal.h"
#include "util/alloc.h"

#define OOM_FAIL(c) ((c)->oom = 1, tc_fail((c), "memory"))

static void *calloc_msg(tcur *c, arena *a, size_t size)
{
	void *p = arena_alloc(a, size);
	if (!p) {
		OOM_FAIL(c);
		return NULL;
	}
	memset(p, 0, size);
	return p;
}

/* A growable array of message pointers in the arena. */
typedef struct mvec {
	void **v;
	size_t n, cap;
} mvec;

static int mv_push(tcur *c, arena *a, mvec *m, void *x)
{
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 4;
		void **nv = arena_array(a, ncap, sizeof *nv);
		if (!nv)
			return OOM_FAIL(c);
		if (m->n)
			memcpy(nv, m->v, m->n * sizeof *nv);
		m->v = nv;
		m->cap = ncap;
	}
	m->v[m->n++] = x;
	return 0;
}

/* --- metadata inside a sharding ------------------------------------------------ */

/* `metadata={op_name="a"}` or `metadata={{op_name="a"}, {op_name="b"}}`. */
static int metadata_list(tcur *c, arena *a, mvec *out)
{
	tc_skip(c);
	size_t save = c->i;
	if (tc_expect(c, '{', "'{'"))
		return -1;
	if (tc_peek(c) == '{') {
		do {
			Xla__OpMetadata *md = calloc_msg(c, a, sizeof *md);
			if (!md)
				return -1;
			xla__op_metadata__init(md);
			if (metadata_parse(c, md, a) || mv_push(c, a, out, md))
				return -1;
		} while (tc_eat(c, ','));
		return tc_expect(c, '}', "'}' after the metadata list");
	}
	c->i = save;
	Xla__OpMetadata *md = calloc_msg(c, a, sizeof *md);
	if (!md)
		return -1;
	xla__op_metadata__init(md);
	if (metadata_parse(c, md, a))
		return -1;
	return mv_push(c, a, out, md);
}

static void print_metadata_list(strbuf *b, Xla__OpMetadata *const *md, size_t n, int always_list)
{
	if (n == 1 && !always_list) {
		sb_putc(b, '{');
		metadata_print_body(b, md[0]);
		sb_putc(b, '}');
		return;
	}
	sb_putc(b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_puts(b, ", ");
		sb_putc(b, '{');
		metadata_print_body(b, md[i]);
		sb_putc(b, '}');
	}
	sb_putc(b, '}');
}

/* --- meshes (named shardings, mesh replica groups) ---------------------------------- */

/* mesh['x'=2,'y'=4][, device_ids=(0,1,...)] | maximal_mesh[device_id=N] |
 * mesh[] */
static int mesh_parse(tcur *c, arena *a, Xla__MeshProto **out)
{
	Xla__MeshProto *m = calloc_msg(c, a, sizeof *m);
	if (!m)
		return -1;
	xla__mesh_proto__init(m);
	*out = m;
	if (tc_keyword(c, "maximal_mesh")) {
		int64_t dev;
		size_t s, e;
		if (tc_expect(c, '[', "'['") )
			return -1;
		if (!tc_word(c, &s, &e) || !tc_word_is(c, s, e, "device_id"))
			return tc_fail(c, "device_id=");
		if (tc_expect(c, '=', "'='") || tc_int64(c, &dev) || tc_expect(c, ']', "']'"))
			return -1;
		m->device_ids = arena_array(a, 1, sizeof *m->device_ids);
		if (!m->device_ids)
			return OOM_FAIL(c);
		m->device_ids[0] = dev;
		m->n_device_ids = 1;
		return 0;
	}
	if (!tc_keyword(c, "mesh"))
		return tc_fail(c, "mesh[...] or maximal_mesh[...]");
	if (tc_expect(c, '[', "'['"))
		return -1;
	mvec axes = { NULL, 0, 0 };
	if (!tc_eat(c, ']')) {
		do {
			Xla__MeshProto__MeshAxis *ax = calloc_msg(c, a, sizeof *ax);
			if (!ax)
				return -1;
			xla__mesh_proto__mesh_axis__init(ax);
			if (tc_text_string(c, a, &ax->name) || tc_expect(c, '=', "'=' after an axis name") ||
			    tc_int64(c, &ax->size) || mv_push(c, a, &axes, ax))
				return -1;
		} while (tc_eat(c, ','));
		if (tc_expect(c, ']', "']' after the mesh axes"))
			return -1;
	}
	m->n_axes = axes.n;
	m->axes = (Xla__MeshProto__MeshAxis **)axes.v;
	/* `, device_ids=(...)` belongs to the mesh */
	size_t save = c->i;
	if (m->n_axes && tc_eat(c, ',')) {
		if (!tc_keyword(c, "device_ids")) {
			c->i = save;
			return 0;
		}
		if (tc_expect(c, '=', "'='"))
			return -1;
		if (tc_peek(c) == '(') {
			tcur k = *c;
			k.i++;
			if (tc_peek(&k) == '[')
				return tc_fail(c, "device ids as a list (an iota device order has no field in "
						  "this XLA's MeshProto)");
		}
		size_t n;
		if (tc_int_list(c, '(', ')', &m->device_ids, &n, a))
			return -1;
		m->n_device_ids = n;
	}
	return 0;
}

static void mesh_print(strbuf *b, const Xla__MeshProto *m)
{
	if (m->n_axes == 0) {
		if (m->n_device_ids == 1)
			sb_printf(b, "maximal_mesh[device_id=%lld]", (long long)m->device_ids[0]);
		else
			sb_puts(b, "mesh[]");
		return;
	}
	sb_puts(b, "mesh[");
	for (size_t i = 0; i < m->n_axes; i++) {
		if (i)
			sb_putc(b, ',');
		sb_putc(b, '\'');
		pbtxt_escape(b, m->axes[i]->name, strlen(m->axes[i]->name));
		sb_printf(b, "'=%lld", (long long)m->axes[i]->size);
	}
	sb_putc(b, ']');
	if (m->n_device_ids)
		put_int_list_sep(b, ", device_ids=(", m->device_ids, m->n_device_ids, ",", ")");
}

static int mesh_printable(const Xla__MeshProto *m)
{
	if (!m)
		return 0;
	if (m->n_axes == 0)
		return m->n_device_ids <= 1;
	return 1;
}

/* An axis by name (or by index) with an optional sub-axis `:(pre)size`. */
static int axis_parse(tcur *c, arena *a, const Xla__MeshProto *m, Xla__AxisRefProto **out)
{
	char *name;
	tc_skip(c);
	size_t at = c->i;
	if (tc_text_string(c, a, &name))
		return -1;
	Xla__AxisRefProto *ax = calloc_msg(c, a, sizeof *ax);
	if (!ax)
		return -1;
	xla__axis_ref_proto__init(ax);
	int64_t idx = -1;
	for (size_t i = 0; i < m->n_axes; i++)
		if (strcmp(m->axes[i]->name, name) == 0)
			idx = (int64_t)i;
	if (idx < 0) {
		char *end;
		long long v = strtoll(name, &end, 10);
		if (*name && !*end && v >= 0 && (size_t)v < m->n_axes)
			idx = v;
	}
	if (idx < 0) {
		c->i = at;
		return tc_fail(c, "an axis of the mesh");
	}
	ax->mesh_axis_index = idx;
	if (tc_eat(c, ':')) {
		Xla__AxisRefProto__SubAxis *sub = calloc_msg(c, a, sizeof *sub);
		if (!sub)
			return -1;
		xla__axis_ref_proto__sub_axis__init(sub);
		if (tc_expect(c, '(', "'(' before the sub-axis pre-size") || tc_int64(c, &sub->pre_size) ||
		    tc_expect(c, ')', "')'") || tc_int64(c, &sub->size))
			return -1;
		ax->sub_axis_info = sub;
	}
	*out = ax;
	return 0;
}

static int axis_printable(const Xla__AxisRefProto *ax, const Xla__MeshProto *m)
{
	return ax->mesh_axis_index >= 0 && (size_t)ax->mesh_axis_index < m->n_axes;
}

static void axis_print(strbuf *b, const Xla__AxisRefProto *ax, const Xla__MeshProto *m)
{
	const char *name = m->axes[ax->mesh_axis_index]->name;
	sb_putc(b, '\'');
	pbtxt_escape(b, name, strlen(name));
	sb_putc(b, '\'');
	if (ax->sub_axis_info)
		sb_printf(b, ":(%lld)%lld", (long long)ax->sub_axis_info->pre_size,
			  (long long)ax->sub_axis_info->size);
}

/* `{'x', 'y':(1)2}`; `allow_open`: a trailing `?` (an open dimension). */
static int axis_list_parse(tcur *c, arena *a, const Xla__MeshProto *m, mvec *out, int allow_open,
			   int *closed)
{
	if (closed)
		*closed = 1;
	if (tc_expect(c, '{', "'{'"))
		return -1;
	if (tc_eat(c, '}'))
		return 0;
	do {
		if (allow_open && tc_eat(c, '?')) {
			*closed = 0;
			break;
		}
		Xla__AxisRefProto *ax = NULL;
		if (axis_parse(c, a, m, &ax) || mv_push(c, a, out, ax))
			return -1;
	} while (tc_eat(c, ','));
	return tc_expect(c, '}', "'}' after the axes");
}

static void axis_list_print(strbuf *b, Xla__AxisRefProto *const *v, size_t n, const Xla__MeshProto *m,
			    const char *sep)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_puts(b, sep);
		axis_print(b, v[i], m);
	}
}

static int axes_printable(Xla__AxisRefProto *const *v, size_t n, const Xla__MeshProto *m)
{
	for (size_t i = 0; i < n; i++)
		if (!axis_printable(v[i], m))
			return 0;
	return 1;
}

/* Whether the axes are all of the mesh's, in order, whole. */
static int all_axes(Xla__AxisRefProto *const *v, size_t n, const Xla__MeshProto *m)
{
	if (n != m->n_axes)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (v[i]->mesh_axis_index != (int64_t)i || v[i]->sub_axis_info)
			return 0;
	return 1;
}

static int every_axis(tcur *c, arena *a, const Xla__MeshProto *m, Xla__AxisRefProto ***v, size_t *n)
{
	*n = m->n_axes;
	*v = NULL;
	if (!m->n_axes)
		return 0;
	*v = arena_array(a, m->n_axes, sizeof **v);
	if (!*v)
		return OOM_FAIL(c);
	for (size_t i = 0; i < m->n_axes; i++) {
		Xla__AxisRefProto *ax = calloc_msg(c, a, sizeof *ax);
		if (!ax)
			return -1;
		xla__axis_ref_proto__init(ax);
		ax->mesh_axis_index = (int64_t)i;
		(*v)[i] = ax;
	}
	return 0;
}

/* After `{` and the mesh: the rest of a named sharding up to its `}`. */
static int named_parse(tcur *c, arena *a, Xla__OpSharding *s)
{
	Xla__NamedShardingProto *ns = calloc_msg(c, a, sizeof *ns);
	if (!ns)
		return -1;
	xla__named_sharding_proto__init(ns);
	s->named_sharding = ns;
	if (mesh_parse(c, a, &ns->mesh))
		return -1;
	const Xla__MeshProto *m = ns->mesh;
	mvec md = { NULL, 0, 0 };
	int rc = 0;
	if (m->n_axes == 0 && m->n_device_ids == 1) {
		/* maximal: only metadata may follow */
		if (tc_eat(c, ',')) {
			if (!tc_keyword(c, "metadata") || tc_expect(c, '=', "'='"))
				return tc_fail(c, "metadata=");
			rc = metadata_list(c, a, &md);
		}
		goto done;
	}
	if (tc_peek(c) == '}')
		goto done;
	if (tc_expect(c, ',', "','"))
		return -1;
	int special = 0;
	if (tc_keyword(c, "replicated")) {
		special = 1;
	} else if (tc_keyword(c, "manual")) {
		special = 1;
		rc = every_axis(c, a, m, &ns->manual_axes, &ns->n_manual_axes);
	} else if (tc_keyword(c, "unreduced")) {
		special = 1;
		if (tc_peek(c) == '=')
			return tc_fail(c, "unreduced without a reduction kind (this XLA's NamedShardingProto "
					  "has no field for one)");
		if (tc_peek(c) == '{') {
			mvec v = { NULL, 0, 0 };
			rc = axis_list_parse(c, a, m, &v, 0, NULL);
			ns->n_unreduced_axes = v.n;
			ns->unreduced_axes = (Xla__AxisRefProto **)v.v;
		} else {
			rc = every_axis(c, a, m, &ns->unreduced_axes, &ns->n_unreduced_axes);
		}
	}
	if (rc)
		return -1;
	if (special) {
		if (tc_eat(c, ',')) {
			if (!tc_keyword(c, "metadata") || tc_expect(c, '=', "'='"))
				return tc_fail(c, "metadata=");
			rc = metadata_list(c, a, &md);
		}
		goto done;
	}
	/* [{...}, {...}] then named lists */
	mvec dims = { NULL, 0, 0 };
	if (tc_expect(c, '[', "replicated, manual, unreduced or '[' and the dimension shardings"))
		return -1;
	if (!tc_eat(c, ']')) {
		do {
			Xla__NamedShardingProto__DimensionSharding *d = calloc_msg(c, a, sizeof *d);
			if (!d)
				return -1;
			xla__named_sharding_proto__dimension_sharding__init(d);
			mvec ax = { NULL, 0, 0 };
			int closed;
			if (axis_list_parse(c, a, m, &ax, 1, &closed) || mv_push(c, a, &dims, d))
				return -1;
			d->n_axes = ax.n;
			d->axes = (Xla__AxisRefProto **)ax.v;
			d->is_closed = closed;
		} while (tc_eat(c, ','));
		if (tc_expect(c, ']', "']' after the dimension shardings"))
			return -1;
	}
	ns->n_dim_shardings = dims.n;
	ns->dim_shardings = (Xla__NamedShardingProto__DimensionSharding **)dims.v;
	while (tc_eat(c, ',')) {
		size_t ws, e;
		if (!tc_word(c, &ws, &e) || tc_expect(c, '=', "'='"))
			return tc_fail(c, "replicated=, unreduced=, manual= or metadata=");
		mvec v = { NULL, 0, 0 };
		if (tc_word_is(c, ws, e, "metadata")) {
			if (metadata_list(c, a, &md))
				return -1;
			continue;
		}
		if (tc_word_is(c, ws, e, "unreduced") && tc_peek(c) != '{')
			return tc_fail(c, "unreduced={...} (this XLA's NamedShardingProto has no field for a "
					  "reduction kind)");
		if (axis_list_parse(c, a, m, &v, 0, NULL))
			return -1;
		if (tc_word_is(c, ws, e, "replicated")) {
			ns->n_replicated_axes = v.n;
			ns->replicated_axes = (Xla__AxisRefProto **)v.v;
		} else if (tc_word_is(c, ws, e, "unreduced")) {
			ns->n_unreduced_axes = v.n;
			ns->unreduced_axes = (Xla__AxisRefProto **)v.v;
		} else if (tc_word_is(c, ws, e, "manual")) {
			ns->n_manual_axes = v.n;
			ns->manual_axes = (Xla__AxisRefProto **)v.v;
		} else {
			c->i = ws;
			return tc_fail(c, "replicated=, unreduced=, manual= or metadata=");
		}
	}
done:
	if (rc)
		return -1;
	ns->n_metadata = md.n;
	ns->metadata = (Xla__OpMetadata **)md.v;
	return tc_expect(c, '}', "'}' to end the sharding");
}

static int named_printable(const Xla__NamedShardingProto *ns)
{
	const Xla__MeshProto *m = ns->mesh;
	if (!mesh_printable(m))
		return 0;
	for (size_t i = 0; i < ns->n_dim_shardings; i++)
		if (!axes_printable(ns->dim_shardings[i]->axes, ns->dim_shardings[i]->n_axes, m))
			return 0;
	if (m->n_axes == 0 && m->n_device_ids == 1)
		return !ns->n_dim_shardings && !ns->n_replicated_axes && !ns->n_unreduced_axes &&
		       !ns->n_manual_axes;
	return axes_printable(ns->replicated_axes, ns->n_replicated_axes, m) &&
	       axes_printable(ns->unreduced_axes, ns->n_unreduced_axes, m) &&
	       axes_printable(ns->manual_axes, ns->n_manual_axes, m);
}

static void named_print(strbuf *b, const Xla__NamedShardingProto *ns)
{
	const Xla__MeshProto *m = ns->mesh;
	sb_putc(b, '{');
	mesh_print(b, m);
	int maximal = m->n_axes == 0 && m->n_device_ids == 1;
	int nodims = ns->n_dim_shardings == 0;
	if (maximal) {
		/* nothing but metadata */
	} else if (nodims && !ns->n_replicated_axes && !ns->n_unreduced_axes && !ns->n_manual_axes) {
		sb_puts(b, ", replicated");
	} else if (nodims && ns->n_unreduced_axes && !ns->n_replicated_axes && !ns->n_manual_axes) {
		sb_puts(b, ", unreduced");
		if (!all_axes(ns->unreduced_axes, ns->n_unreduced_axes, m)) {
			sb_putc(b, '{');
			axis_list_print(b, ns->unreduced_axes, ns->n_unreduced_axes, m, ", ");
			sb_putc(b, '}');
		}
	} else if (nodims && all_axes(ns->manual_axes, ns->n_manual_axes, m) && m->n_axes &&
		   !ns->n_replicated_axes && !ns->n_unreduced_axes) {
		sb_puts(b, ", manual");
	} else {
		sb_puts(b, ", [");
		for (size_t i = 0; i < ns->n_dim_shardings; i++) {
			const Xla__NamedShardingProto__DimensionSharding *d = ns->dim_shardings[i];
			if (i)
				sb_puts(b, ", ");
			sb_putc(b, '{');
			axis_list_print(b, d->axes, d->n_axes, m, ", ");
			if (!d->is_closed)
				sb_puts(b, d->n_axes ? ", ?" : "?");
			sb_putc(b, '}');
		}
		sb_putc(b, ']');
		if (ns->n_replicated_axes) {
			sb_puts(b, ", replicated={");
			axis_list_print(b, ns->replicated_axes, ns->n_replicated_axes, m, ", ");
			sb_putc(b, '}');
		}
		if (ns->n_unreduced_axes) {
			sb_puts(b, ", unreduced={");
			axis_list_print(b, ns->unreduced_axes, ns->n_unreduced_axes, m, ", ");
			sb_putc(b, '}');
		}
		if (ns->n_manual_axes) {
			sb_puts(b, ", manual={");
			axis_list_print(b, ns->manual_axes, ns->n_manual_axes, m, ", ");
			sb_putc(b, '}');
		}
	}
	if (ns->n_metadata) {
		sb_puts(b, ", metadata=");
		print_metadata_list(b, ns->metadata, ns->n_metadata, 1);
	}
	sb_putc(b, '}');
}

/* --- single shardings ---------------------------------------------------------------- */

static int64_t *one_device(tcur *c, arena *a, int64_t d)
{
	int64_t *v = arena_array(a, 1, sizeof *v);
	if (!v) {
		OOM_FAIL(c);
		return NULL;
	}
	v[0] = d;
	return v;
}

/* `devices=[2,2]0,1,2,3` or `devices=[2,2]<=[4]` / `<=[2,2]T(1,0)`. */
static int tile_assignment(tcur *c, arena *a, Xla__OpSharding *s)
{
	size_t n;
	if (tc_int_list(c, '[', ']', &s->tile_assignment_dimensions, &n, a))
		return -1;
	s->n_tile_assignment_dimensions = n;
	if (!n)
		return tc_fail(c, "at least one tile assignment dimension");
	tc_skip(c);
	if (c->i + 1 < c->n && c->s[c->i] == '<' && c->s[c->i + 1] == '=') {
		c->i += 2;
		if (tc_int_list(c, '[', ']', &s->iota_reshape_dims, &n, a))
			return -1;
		if (!n)
			return tc_fail(c, "non-empty iota reshape dimensions");
		s->n_iota_reshape_dims = n;
		s->iota_transpose_perm = arena_array(a, n, sizeof *s->iota_transpose_perm);
		if (!s->iota_transpose_perm)
			return OOM_FAIL(c);
		s->n_iota_transpose_perm = n;
		if (n == 1) {
			s->iota_transpose_perm[0] = 0;
			return 0;
		}
		if (!tc_keyword(c, "T"))
			return tc_fail(c, "'T(' and the transpose permutation");
		int64_t *perm;
		size_t np;
		if (tc_int_list(c, '(', ')', &perm, &np, a))
			return -1;
		if (np != n)
			return tc_fail(c, "a permutation as long as the reshape dimensions");
		for (size_t i = 0; i < n; i++) {
			if (perm[i] < 0 || (size_t)perm[i] >= n)
				return tc_fail(c, "permutation entries below the number of reshape dimensions");
			s->iota_transpose_perm[i] = (int32_t)perm[i];
		}
		return 0;
	}
	int64_t small[64], *v = small;
	size_t k = 0, cap = 64;
	int rc = 0;
	do {
		int64_t d;
		if (tc_int64(c, &d)) {
			rc = -1;
			break;
		}
		if (k == cap) {
			int64_t *nv = hloi_malloc(2 * cap * sizeof *nv);
			if (!nv) {
				rc = OOM_FAIL(c);
				break;
			}
			memcpy(nv, v, k * sizeof *nv);
			if (v != small)
				hloi_free(v);
			v = nv;
			cap *= 2;
		}
		v[k++] = d;
	} while (tc_eat(c, ','));
	if (!rc) {
		s->tile_assignment_devices = arena_array(a, k, sizeof *s->tile_assignment_devices);
		if (!s->tile_assignment_devices)
			rc = OOM_FAIL(c);
		else
			memcpy(s->tile_assignment_devices, v, k * sizeof *v);
		s->n_tile_assignment_devices = k;
	}
	if (v != small)
		hloi_free(v);
	return rc;
}

/* One sharding after its `{` (not a tuple). */
static int single_parse(tcur *c, arena *a, Xla__OpSharding *s)
{
	xla__op_sharding__init(s);
	tc_skip(c);
	size_t start = c->i;
	if (tc_keyword(c, "mesh") || tc_keyword(c, "maximal_mesh")) {
		c->i = start;
		return named_parse(c, a, s);
	}
	int maximal = 0, replicated = 0, manual = 0, unknown = 0, unreduced = 0, ltdr = 0;
	int have_devices = 0;
	int64_t device = 0;
	mvec md = { NULL, 0, 0 };
	while (!tc_eat(c, '}')) {
		if (c->bad)
			return -1;
		size_t ws, we;
		if (!tc_word(c, &ws, &we)) {
			if (c->i >= c->n)
				return tc_fail(c, "'}' to end the sharding");
			return tc_fail(c, "replicated, maximal, manual, unknown, unreduced, device=, devices=, "
					  "last_tile_dim_replicate, last_tile_dims=, shard_as, shard_like or metadata=");
		}
		if (tc_word_is(c, ws, we, "maximal")) {
			maximal = 1;
		} else if (tc_word_is(c, ws, we, "replicated")) {
			replicated = 1;
		} else if (tc_word_is(c, ws, we, "manual")) {
			manual = 1;
		} else if (tc_word_is(c, ws, we, "unknown")) {
			unknown = 1;
		} else if (tc_word_is(c, ws, we, "unreduced")) {
			unreduced = 1;
		} else if (tc_word_is(c, ws, we, "last_tile_dim_replicate")) {
			ltdr = 1;
		} else if (tc_word_is(c, ws, we, "shard_as") || tc_word_is(c, ws, we, "shard_like")) {
			s->is_shard_group = 1;
			s->shard_group_type = tc_word_is(c, ws, we, "shard_as") ? XLA__OP_SHARDING__SHARD_GROUP_TYPE__AS
									 : XLA__OP_SHARDING__SHARD_GROUP_TYPE__LIKE;
			if (tc_int64(c, &s->shard_group_id))
				return -1;
		} else if (tc_word_is(c, ws, we, "device")) {
			if (tc_expect(c, '=', "'='") || tc_int64(c, &device))
				return -1;
			have_devices = 1;
		} else if (tc_word_is(c, ws, we, "devices")) {
			if (tc_expect(c, '=', "'='") || tile_assignment(c, a, s))
				return -1;
			have_devices = 2;
		} else if (tc_word_is(c, ws, we, "metadata")) {
			if (tc_expect(c, '=', "'='") || metadata_list(c, a, &md))
				return -1;
		} else if (tc_word_is(c, ws, we, "last_tile_dims")) {
			if (tc_expect(c, '=', "'='") || tc_expect(c, '{', "'{'"))
				return -1;
			static const struct {
				const char *w;
				Xla__OpSharding__Type t;
			} types[] = { { "maximal", XLA__OP_SHARDING__TYPE__MAXIMAL },
				      { "replicated", XLA__OP_SHARDING__TYPE__REPLICATED },
				      { "manual", XLA__OP_SHARDING__TYPE__MANUAL },
				      { "unreduced", XLA__OP_SHARDING__TYPE__UNREDUCED } };
			Xla__OpSharding__Type tv[64];
			size_t nt = 0;
			if (!tc_eat(c, '}')) {
				do {
					size_t s2, e2;
					size_t k = 0;
					if (tc_word(c, &s2, &e2))
						for (k = 0; k < 4 && !tc_word_is(c, s2, e2, types[k].w); k++)
							;
					if (k >= 4 || nt == 64)
						return tc_fail(c, "maximal, replicated, manual or unreduced");
					tv[nt++] = types[k].t;
				} while (tc_eat(c, ','));
				if (tc_expect(c, '}', "'}'"))
					return -1;
			}
			s->n_last_tile_dims = nt;
			s->last_tile_dims = arena_array(a, nt ? nt : 1, sizeof *s->last_tile_dims);
			if (!s->last_tile_dims)
				return OOM_FAIL(c);
			memcpy(s->last_tile_dims, tv, nt * sizeof *tv);
		} else {
			c->i = ws;
			return tc_fail(c, "replicated, maximal, manual, unknown, unreduced, device=, devices=, "
					  "last_tile_dim_replicate, last_tile_dims=, shard_as, shard_like or metadata=");
		}
	}
	s->n_metadata = md.n;
	s->metadata = (Xla__OpMetadata **)md.v;
	if (replicated + maximal + manual + unknown + unreduced > 1)
		return tc_fail(c, "one of replicated, maximal, manual, unknown and unreduced");
	Xla__OpSharding__Type type = replicated ? XLA__OP_SHARDING__TYPE__REPLICATED
				     : maximal  ? XLA__OP_SHARDING__TYPE__MAXIMAL
				     : manual   ? XLA__OP_SHARDING__TYPE__MANUAL
				     : unknown  ? XLA__OP_SHARDING__TYPE__UNKNOWN
				     : unreduced ? XLA__OP_SHARDING__TYPE__UNREDUCED
						 : XLA__OP_SHARDING__TYPE__OTHER;
	s->type = type;
	if (type == XLA__OP_SHARDING__TYPE__MAXIMAL) {
		if (have_devices != 1)
			return tc_fail(c, "device=N in a maximal sharding");
		s->n_tile_assignment_devices = 1;
		return (s->tile_assignment_devices = one_device(c, a, device)) ? 0 : -1;
	}
	if (type != XLA__OP_SHARDING__TYPE__OTHER) {
		if (have_devices)
			return tc_fail(c, "no devices in a replicated, manual, unknown or unreduced sharding");
		/* XLA writes the one device of the default tile assignment */
		s->n_tile_assignment_devices = 1;
		return (s->tile_assignment_devices = one_device(c, a, 0)) ? 0 : -1;
	}
	if (have_devices != 2)
		return tc_fail(c, "devices=[...] in a tiled sharding");
	if (ltdr && s->n_last_tile_dims)
		return tc_fail(c, "either last_tile_dim_replicate or last_tile_dims");
	s->replicate_on_last_tile_dim = ltdr;
	return 0;
}

int sharding_parse(tcur *c, arena *a, Xla__OpSharding **out)
{
	Xla__OpSharding *s = calloc_msg(c, a, sizeof *s);
	if (!s)
		return -1;
	xla__op_sharding__init(s);
	*out = s;
	if (tc_expect(c, '{', "'{' to start the sharding"))
		return -1;
	int k = tc_peek(c);
	if (k != '{' && k != '}')
		return single_parse(c, a, s);
	/* a tuple: `{}` or `{{...}, {...}}` */
	s->type = XLA__OP_SHARDING__TYPE__TUPLE;
	mvec el = { NULL, 0, 0 };
	if (!tc_eat(c, '}')) {
		do {
			Xla__OpSharding *e = calloc_msg(c, a, sizeof *e);
			if (!e || tc_expect(c, '{', "'{' to start a tuple element's sharding") ||
			    single_parse(c, a, e) || mv_push(c, a, &el, e))
				return -1;
		} while (tc_eat(c, ','));
		if (tc_expect(c, '}', "'}' to end the tuple sharding"))
			return -1;
	}
	s->n_tuple_shardings = el.n;
	s->tuple_shardings = (Xla__OpSharding **)el.v;
	return 0;
}

/* --- printing ------------------------------------------------------------------------ */

static int product(const int64_t *v, size_t n, int64_t *out)
{
	int64_t p = 1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < 0 || __builtin_mul_overflow(p, v[i], &p))
			return -1;
	}
	*out = p;
	return 0;
}

/* What XLA reads an OTHER sharding as: -1 invalid, 0 tiled, 1 replicated
 * (one device in all). */
static int other_kind(const Xla__OpSharding *s)
{
	int iota = s->n_iota_reshape_dims > 0;
	if (iota && (s->n_tile_assignment_devices || s->n_iota_transpose_perm != s->n_iota_reshape_dims))
		return -1;
	if (!iota && !s->n_tile_assignment_devices)
		return -1;
	if (iota) {
		int all1 = 1;
		for (size_t i = 0; i < s->n_iota_reshape_dims; i++)
			all1 &= s->iota_reshape_dims[i] == 1;
		if (all1)
			return 1;
	} else if (s->n_tile_assignment_devices == 1) {
		return 1;
	}
	if (!s->n_tile_assignment_dimensions)
		return -1;
	int64_t p, q;
	for (size_t i = 0; i < s->n_tile_assignment_dimensions; i++)
		if (s->tile_assignment_dimensions[i] <= 0)
			return -1;
	if (product(s->tile_assignment_dimensions, s->n_tile_assignment_dimensions, &p))
		return -1;
	if (iota) {
		if (product(s->iota_reshape_dims, s->n_iota_reshape_dims, &q) || p != q)
			return -1;
		for (size_t i = 0; i < s->n_iota_transpose_perm; i++)
			if (s->iota_transpose_perm[i] < 0 || (size_t)s->iota_transpose_perm[i] >= s->n_iota_reshape_dims)
				return -1;
	} else if ((size_t)p != s->n_tile_assignment_devices) {
		return -1;
	}
	if (s->n_last_tile_dims && s->replicate_on_last_tile_dim)
		return -1;
	for (size_t i = 0; i < s->n_last_tile_dims; i++) {
		int t = (int)s->last_tile_dims[i];
		if (t != XLA__OP_SHARDING__TYPE__MAXIMAL && t != XLA__OP_SHARDING__TYPE__REPLICATED &&
		    t != XLA__OP_SHARDING__TYPE__MANUAL && t != XLA__OP_SHARDING__TYPE__UNREDUCED)
			return -1;
	}
	return 0;
}

static int single_printable(const Xla__OpSharding *s)
{
	if (s->named_sharding)
		return named_printable(s->named_sharding);
	switch (s->type) {
	case XLA__OP_SHARDING__TYPE__REPLICATED:
	case XLA__OP_SHARDING__TYPE__MANUAL:
	case XLA__OP_SHARDING__TYPE__UNKNOWN:
	case XLA__OP_SHARDING__TYPE__UNREDUCED:
		return 1;
	case XLA__OP_SHARDING__TYPE__MAXIMAL:
		return s->n_tile_assignment_devices == 1;
	case XLA__OP_SHARDING__TYPE__OTHER:
		return other_kind(s) >= 0;
	default:
		return 0;
	}
}

int sharding_printable(const Xla__OpSharding *s)
{
	if (!s->named_sharding && s->type == XLA__OP_SHARDING__TYPE__TUPLE) {
		if (s->n_metadata)
			return 0;
		for (size_t i = 0; i < s->n_tuple_shardings; i++) {
			const Xla__OpSharding *e = s->tuple_shardings[i];
			if ((!e->named_sharding && e->type == XLA__OP_SHARDING__TYPE__TUPLE) || !single_printable(e))
				return 0;
		}
		return 1;
	}
	return single_printable(s);
}

static void single_print(strbuf *b, const Xla__OpSharding *s)
{
	if (s->named_sharding) {
		named_print(b, s->named_sharding);
		return;
	}
	const char *word = NULL;
	switch (s->type) {
	case XLA__OP_SHARDING__TYPE__REPLICATED: word = "replicated"; break;
	case XLA__OP_SHARDING__TYPE__MANUAL: word = "manual"; break;
	case XLA__OP_SHARDING__TYPE__UNKNOWN: word = "unknown"; break;
	case XLA__OP_SHARDING__TYPE__UNREDUCED: word = "unreduced"; break;
	case XLA__OP_SHARDING__TYPE__OTHER:
		if (other_kind(s) == 1)
			word = "replicated";
		break;
	default: break;
	}
	sb_putc(b, '{');
	if (word) {
		sb_puts(b, word);
	} else if (s->type == XLA__OP_SHARDING__TYPE__MAXIMAL) {
		sb_printf(b, "maximal device=%lld", (long long)s->tile_assignment_devices[0]);
	} else {
		put_int_list_sep(b, "devices=[", s->tile_assignment_dimensions, s->n_tile_assignment_dimensions, ",",
				 "]");
		if (s->n_iota_reshape_dims) {
			put_int_list_sep(b, "<=[", s->iota_reshape_dims, s->n_iota_reshape_dims, ",", "]");
			if (s->n_iota_reshape_dims > 1) {
				sb_puts(b, "T(");
				for (size_t i = 0; i < s->n_iota_transpose_perm; i++)
					sb_printf(b, i ? ",%d" : "%d", (int)s->iota_transpose_perm[i]);
				sb_putc(b, ')');
			}
		} else {
			put_int_list_sep(b, "", s->tile_assignment_devices, s->n_tile_assignment_devices, ",", "");
		}
		if (s->replicate_on_last_tile_dim)
			sb_puts(b, " last_tile_dim_replicate");
		if (s->n_last_tile_dims) {
			sb_puts(b, " last_tile_dims={");
			for (size_t i = 0; i < s->n_last_tile_dims; i++) {
				const char *t = "replicated";
				switch ((int)s->last_tile_dims[i]) {
				case XLA__OP_SHARDING__TYPE__MANUAL: t = "manual"; break;
				case XLA__OP_SHARDING__TYPE__MAXIMAL: t = "maximal"; break;
				case XLA__OP_SHARDING__TYPE__UNREDUCED: t = "unreduced"; break;
				default: break;
				}
				sb_printf(b, "%s%s", i ? ", " : "", t);
			}
			sb_putc(b, '}');
		}
	}
	if (s->is_shard_group)
		sb_printf(b, " %s %lld", s->shard_group_type == XLA__OP_SHARDING__SHARD_GROUP_TYPE__AS ? "shard_as" : "shard_like",
			  (long long)s->shard_group_id);
	if (s->n_metadata) {
		sb_puts(b, " metadata=");
		print_metadata_list(b, s->metadata, s->n_metadata, 0);
	}
	sb_putc(b, '}');
}

void sharding_print(strbuf *b, const Xla__OpSharding *s)
{
	if (s->named_sharding || s->type != XLA__OP_SHARDING__TYPE__TUPLE) {
		single_print(b, s);
		return;
	}
	sb_putc(b, '{');
	for (size_t i = 0; i < s->n_tuple_shardings; i++) {
		if (i)
			sb_puts(b, i % 5 == 0 ? "" : ", ");
		if (i && i % 5 == 0)
			sb_printf(b, ", /*index=%zu*/", i);
		single_print(b, s->tuple_shardings[i]);
	}
	sb_putc(b, '}');
}

/* --- mesh replica groups ------------------------------------------------------------- */

int mesh_groups_parse(tcur *c, arena *a, Xla__MeshAxesReplicaGroupListProto **out)
{
	Xla__MeshAxesReplicaGroupListProto *g = calloc_msg(c, a, sizeof *g);
	if (!g)
		return -1;
	xla__mesh_axes_replica_group_list_proto__init(g);
	*out = g;
	if (mesh_parse(c, a, &g->mesh))
		return -1;
	mvec v = { NULL, 0, 0 };
	if (axis_list_parse(c, a, g->mesh, &v, 0, NULL))
		return -1;
	g->n_axes = v.n;
	g->axes = (Xla__AxisRefProto **)v.v;
	return 0;
}

int mesh_groups_printable(const Xla__MeshAxesReplicaGroupListProto *g)
{
	return mesh_printable(g->mesh) && axes_printable(g->axes, g->n_axes, g->mesh);
}

void mesh_groups_print(strbuf *b, const Xla__MeshAxesReplicaGroupListProto *g)
{
	mesh_print(b, g->mesh);
	sb_puts(b, " {");
	axis_list_print(b, g->axes, g->n_axes, g->mesh, ",");
	sb_putc(b, '}');
}
