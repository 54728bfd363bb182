/* Typed instruction attributes <-> XLA's HloInstructionProto fields, both
 * ways, with XLA's conventions (hlo_instruction.cc's CreateFromProto and
 * ToProto, hlo_instructions.cc's ToProto and PrintExtraAttributesImpl per
 * op family, openxla/xla 841f8d2d):
 *
 * - fields_in gives the attributes XLA's printer shows for an
 *   instruction's fields: those an opcode always prints (a dot's
 *   contracting dimensions, a sort's dimensions) and any other whose field
 *   holds a value other than its default (an empty list, false, 0, an
 *   absent message). Callees, control predecessors and literals are the
 *   callers' (they need ids and the module).
 * - field_out writes one attribute into its field, and fields_defaults the
 *   fields XLA's writer sets for an opcode whatever the text said (a
 *   compare's comparison_type, a dot's precision_config, a collective's
 *   device list, ...).
 *
 * Several attributes share a field (dimensions holds dimensions=,
 * iota_dimension=, inferred_dimension= and hloi's broadcast_dimensions=;
 * algorithm= is a dot's PrecisionConfig algorithm or rng-bit-generator's
 * rng_algorithm; slice_sizes= is gather's gather_slice_sizes or
 * collective-permute's dynamic_slice_sizes; lower= is triangular-solve's or
 * cholesky's); the opcode decides.
 *
 * field_out is table-driven: ir/attrs.def gives each attribute its field
 * number, the field's name and how the value maps onto it; the handlers
 * below (fo_<handler>, named in the table) write what the mapping alone
 * cannot. What XLA's printer and CreateFromProto do per opcode class
 * (which opcodes always print dimensions=, which are
 * HloCollectiveInstructions, which spell their callee to_apply=) are flags
 * of ir/opcodes.def (OPF_DIMENSIONS, OPF_COLLECTIVE, OPF_TO_APPLY); the
 * one `case OP_` switch left, fields_canon_callees, names the opcodes whose
 * callee attributes are their own. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto_internal.h"
#include "text/attr_text.h"
#include "util/alloc.h"

/* --- opcode families ------------------------------------------------------------ */

static int is_binaryish(opcode op)
{
	op_category c = opcode_category(op);
	return c == OPC_BINARY || c == OPC_COMPARE;
}

/* Opcodes whose text always carries dimensions={...} (OPF_DIMENSIONS). */
int fields_always_dimensions(opcode op)
{
	return opcode_has(op, OPF_DIMENSIONS);
}

/* HloCollectiveInstruction: replica_groups= always printed, a device list
 * always written (OPF_COLLECTIVE). */
static int is_collective(opcode op)
{
	return opcode_has(op, OPF_COLLECTIVE);
}

static int is_permute(opcode op)
{
	return op == OP_COLLECTIVE_PERMUTE || op == OP_COLLECTIVE_PERMUTE_START;
}

static int is_dot(opcode op)
{
	return op == OP_DOT || op == OP_SCALED_DOT || op == OP_RAGGED_DOT;
}

static int is_batch_norm(opcode op)
{
	return op == OP_BATCH_NORM_GRAD || op == OP_BATCH_NORM_INFERENCE || op == OP_BATCH_NORM_TRAINING;
}

/* How many entries XLA gives operand_precision (CreateFromProto resizes to
 * it): every operand, but a ragged or scaled dot's two. */
static size_t precision_count(opcode op, size_t nops)
{
	return op == OP_RAGGED_DOT || op == OP_SCALED_DOT ? 2 : nops;
}

static int uses_precision(opcode op)
{
	return is_dot(op) || op == OP_CONVOLUTION || op == OP_CUSTOM_CALL;
}

/* XLA's default comparison type for an element type
 * (Comparison::DefaultComparisonType). */
const char *fields_default_comparison_type(etype t)
{
	switch (etype_get_kind(t)) {
	case KIND_FLOAT:
	case KIND_COMPLEX:
		return "FLOAT";
	case KIND_SINT:
		return "SIGNED";
	case KIND_PRED:
	case KIND_UINT:
		return "UNSIGNED";
	default:
		return NULL;
	}
}

/* --- enums as text ----------------------------------------------------------------- */

static int ieq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
		char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
		if (x != y)
			return 0;
	}
	return *a == *b;
}

/* An enum value's name without `strip`, lower-cased when `lower`; NULL for
 * an unknown value. */
static const char *enum_text(arena *a, const ProtobufCEnumDescriptor *d, int v, const char *strip, int lower)
{
	const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(d, v);
	if (!ev)
		return NULL;
	const char *n = ev->name;
	if (strip && strncmp(n, strip, strlen(strip)) == 0)
		n += strlen(strip);
	if (!lower)
		return n;
	char *s = arena_strdup(a, n);
	if (s)
		for (char *p = s; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
	return s;
}

/* The enum value a word names (case-insensitively, `strip` left out of
 * the names); -1 when none. */
static int enum_value(const ProtobufCEnumDescriptor *d, const char *w, const char *strip)
{
	for (unsigned i = 0; i < d->n_values; i++) {
		const char *n = d->values[i].name;
		if (strip && strncmp(n, strip, strlen(strip)) == 0)
			n += strlen(strip);
		if (ieq(n, w))
			return d->values[i].value;
	}
	return -1;
}

/* The words the enum's values print as, for an error message. */
static void enum_words(strbuf *b, const ProtobufCEnumDescriptor *d, const char *strip, int lower, int skip0)
{
	int first = 1;
	for (unsigned i = 0; i < d->n_values; i++) {
		if (skip0 && d->values[i].value == 0)
			continue;
		const char *n = d->values[i].name;
		if (strip && strncmp(n, strip, strlen(strip)) == 0)
			n += strlen(strip);
		sb_puts(b, first ? "" : ", ");
		for (; *n; n++)
			sb_putc(b, (char)(lower && *n >= 'A' && *n <= 'Z' ? *n - 'A' + 'a' : *n));
		first = 0;
	}
}

/* --- building attributes ------------------------------------------------------------- */

typedef struct fbuild {
	arena *a;
	opcode op;
	const Xla__HloInstructionProto *ip;
	const fields_ops *ops;
	const fields_hooks *hooks;
	const uint8_t *force, *suppress;
	attr *slot[ATTR_COUNT];
	attr *store;          /* ATTR_COUNT attributes, slot[id] = &store[id] */
	int oom, bad;
	strbuf *err;
} fbuild;

/* Whether attribute `id` is shown: when `cond` (XLA's printer shows it) or
 * forced (hloi.explicit), unless suppressed (hloi.implicit). */
static int want(fbuild *f, attr_id id, int cond)
{
	if (f->slot[id])
		return 0;
	if (f->suppress && f->suppress[id])
		return 0;
	return cond || (f->force && f->force[id]);
}

static attr *put(fbuild *f, attr_id id, attr_kind kind)
{
	attr *a = &f->store[id];
	memset(a, 0, sizeof *a);
	a->id = (uint16_t)id;
	a->kind = (uint8_t)kind;
	f->slot[id] = a;
	return a;
}

static void put_int(fbuild *f, attr_id id, int64_t v)
{
	attr *a = put(f, id, AK_INT);
	if (a)
		a->u.i = v;
}

static void put_bool(fbuild *f, attr_id id, int v)
{
	attr *a = put(f, id, AK_BOOL);
	if (a)
		a->u.i = v != 0;
}

static void put_word(fbuild *f, attr_id id, const char *w)
{
	if (!w) {
		f->bad = 1;
		return;
	}
	attr *a = put(f, id, AK_WORD);
	if (a && !(a->u.s = arena_strdup(f->a, w)))
		f->oom = 1;
}

static void put_text(fbuild *f, attr_id id, attr_kind kind, strbuf *b)
{
	if (b->oom) {
		f->oom = 1;
		return;
	}
	attr *a = put(f, id, kind);
	if (a && !(a->u.s = arena_strdup(f->a, sb_str(b))))
		f->oom = 1;
}

/* A quoted, escaped string value (kept with its quotes, as the parser
 * keeps AK_STRING values). */
static void put_string(fbuild *f, attr_id id, const char *s, size_t n)
{
	strbuf b = STRBUF_INIT;
	put_quoted(&b, s, n);
	put_text(f, id, AK_STRING, &b);
	sb_free(&b);
}

static void put_ints(fbuild *f, attr_id id, const int64_t *v, size_t n)
{
	attr *a = put(f, id, AK_INTS);
	if (!a)
		return;
	a->u.ints.present = 1;
	a->u.ints.n = (int)n;
	if (n) {
		a->u.ints.v = arena_array(f->a, n, sizeof *v);
		if (!a->u.ints.v) {
			f->oom = 1;
			return;
		}
		memcpy(a->u.ints.v, v, n * sizeof *v);
	}
}

static void put_raw(fbuild *f, attr_id id, strbuf *b)
{
	put_text(f, id, AK_RAW, b);
}

/* --- fields -> attributes ----------------------------------------------------------- */

static void dims_in(fbuild *f)
{
	const Xla__HloInstructionProto *ip = f->ip;
	size_t n = ip->n_dimensions;
	if (is_binaryish(f->op)) {
		if (want(f, ATTR_BROADCAST_DIMENSIONS, n > 0))
			put_ints(f, ATTR_BROADCAST_DIMENSIONS, ip->dimensions, n);
	} else if (f->op == OP_IOTA) {
		if (n == 1 && want(f, ATTR_IOTA_DIMENSION, 1))
			put_int(f, ATTR_IOTA_DIMENSION, ip->dimensions[0]);
	} else if (f->op == OP_RESHAPE) {
		if (n == 1 && want(f, ATTR_INFERRED_DIMENSION, 1))
			put_int(f, ATTR_INFERRED_DIMENSION, ip->dimensions[0]);
	} else if (want(f, ATTR_DIMENSIONS, n > 0 || fields_always_dimensions(f->op))) {
		put_ints(f, ATTR_DIMENSIONS, ip->dimensions, n);
	}
}

static void window_in(fbuild *f)
{
	const Xla__Window *w = f->ip->window;
	size_t n = w ? w->n_dimensions : 0;
	if (!want(f, ATTR_WINDOW, n > 0 || (w && f->op == OP_CUSTOM_CALL)))
		return;
	attr *a = put(f, ATTR_WINDOW, AK_WINDOW);
	if (!a || !n)
		return;
	if (n > INT32_MAX || !(a->u.win.d = arena_array(f->a, n, sizeof *a->u.win.d))) {
		f->oom = 1;
		return;
	}
	a->u.win.n = (int)n;
	for (size_t i = 0; i < n; i++) {
		const Xla__WindowDimension *d = w->dimensions[i];
		window_dim *o = &a->u.win.d[i];
		o->size = d->size;
		o->stride = d->stride;
		o->pad_lo = d->padding_low;
		o->pad_hi = d->padding_high;
		o->lhs_dilate = d->base_dilation;
		o->rhs_dilate = d->window_dilation;
		o->reversal = d->window_reversal != 0;
	}
}

/* dim_labels= needs each part's dimensions to be a permutation of
 * 0..n+1 with n spatial dimensions (at most 10: one digit each). */
static int labels_ok(int64_t a, int64_t b, const int64_t *sp, size_t n)
{
	if (n > 10 || n + 2 > HLOI_MAX_RANK)
		return 0;
	uint32_t seen = 0;
	int64_t all[HLOI_MAX_RANK + 2];
	all[0] = a;
	all[1] = b;
	for (size_t i = 0; i < n; i++)
		all[i + 2] = sp[i];
	for (size_t i = 0; i < n + 2; i++) {
		if (all[i] < 0 || all[i] >= (int64_t)(n + 2) || (seen & (1u << all[i])))
			return 0;
		seen |= 1u << all[i];
	}
	return 1;
}

static void conv_in(fbuild *f)
{
	const Xla__ConvolutionDimensionNumbers *d = f->ip->convolution_dimension_numbers;
	if (!d || !want(f, ATTR_DIM_LABELS, 1))
		return;
	size_t n = d->n_input_spatial_dimensions;
	if (d->n_kernel_spatial_dimensions != n || d->n_output_spatial_dimensions != n ||
	    !labels_ok(d->input_batch_dimension, d->input_feature_dimension, d->input_spatial_dimensions, n) ||
	    !labels_ok(d->kernel_input_feature_dimension, d->kernel_output_feature_dimension,
		       d->kernel_spatial_dimensions, n) ||
	    !labels_ok(d->output_batch_dimension, d->output_feature_dimension, d->output_spatial_dimensions, n)) {
		f->bad = 1; /* no text form: the loader keeps the field as it is */
		return;
	}
	conv_dims *c = arena_alloc(f->a, sizeof *c);
	if (!c) {
		f->oom = 1;
		return;
	}
	memset(c, 0, sizeof *c);
	c->nspatial = (int)n;
	c->input_batch = d->input_batch_dimension;
	c->input_feature = d->input_feature_dimension;
	c->kernel_input_feature = d->kernel_input_feature_dimension;
	c->kernel_output_feature = d->kernel_output_feature_dimension;
	c->output_batch = d->output_batch_dimension;
	c->output_feature = d->output_feature_dimension;
	for (size_t i = 0; i < n; i++) {
		c->input_spatial[i] = d->input_spatial_dimensions[i];
		c->kernel_spatial[i] = d->kernel_spatial_dimensions[i];
		c->output_spatial[i] = d->output_spatial_dimensions[i];
	}
	attr *a = put(f, ATTR_DIM_LABELS, AK_DIM_LABELS);
	if (!a)
		return;
	a->conv = c;
	strbuf b = STRBUF_INIT;
	attr_print_dim_labels(&b, c);
	if (b.oom || !(a->u.s = arena_strdup(f->a, sb_str(&b))))
		f->oom = 1;
	sb_free(&b);
}

static void dot_in(fbuild *f, const Xla__DotDimensionNumbers *d, int always)
{
	if (!d && !always)
		return;
	static const Xla__DotDimensionNumbers none = XLA__DOT_DIMENSION_NUMBERS__INIT;
	if (!d)
		d = &none;
	if (want(f, ATTR_LHS_BATCH_DIMS, d->n_lhs_batch_dimensions > 0))
		put_ints(f, ATTR_LHS_BATCH_DIMS, d->lhs_batch_dimensions, d->n_lhs_batch_dimensions);
	if (want(f, ATTR_LHS_CONTRACTING_DIMS, 1))
		put_ints(f, ATTR_LHS_CONTRACTING_DIMS, d->lhs_contracting_dimensions, d->n_lhs_contracting_dimensions);
	if (want(f, ATTR_RHS_BATCH_DIMS, d->n_rhs_batch_dimensions > 0))
		put_ints(f, ATTR_RHS_BATCH_DIMS, d->rhs_batch_dimensions, d->n_rhs_batch_dimensions);
	if (want(f, ATTR_RHS_CONTRACTING_DIMS, 1))
		put_ints(f, ATTR_RHS_CONTRACTING_DIMS, d->rhs_contracting_dimensions, d->n_rhs_contracting_dimensions);
}

static void precision_in(fbuild *f)
{
	const Xla__PrecisionConfig *pc = f->ip->precision_config;
	size_t n = pc ? pc->n_operand_precision : 0;
	int any = 0;
	for (size_t i = 0; i < n; i++)
		any |= pc->operand_precision[i] != XLA__PRECISION_CONFIG__PRECISION__DEFAULT;
	if (want(f, ATTR_OPERAND_PRECISION, any)) {
		attr *a = put(f, ATTR_OPERAND_PRECISION, AK_PRECISION);
		if (!a)
			return;
		if (n > INT32_MAX || (n && !(a->u.words.v = arena_array(f->a, n, sizeof *a->u.words.v)))) {
			f->oom = 1;
			return;
		}
		a->u.words.n = (int)n;
		for (size_t i = 0; i < n; i++) {
			a->u.words.v[i] = enum_text(f->a, &xla__precision_config__precision__descriptor,
						    (int)pc->operand_precision[i], NULL, 1);
			if (!a->u.words.v[i])
				f->bad = 1;
		}
	}
	if (f->op != OP_RNG_BIT_GENERATOR && pc &&
	    want(f, ATTR_ALGORITHM, pc->algorithm != XLA__PRECISION_CONFIG__ALGORITHM__ALG_UNSET))
		put_word(f, ATTR_ALGORITHM,
			 enum_text(f->a, &xla__precision_config__algorithm__descriptor, (int)pc->algorithm, "ALG_", 1));
	/* rng-bit-generator's algorithm= is its rng_algorithm, always written
	 * (rng_default for 0, as XLA prints it) */
	if (f->op == OP_RNG_BIT_GENERATOR && want(f, ATTR_ALGORITHM, 1))
		put_word(f, ATTR_ALGORITHM,
			 enum_text(f->a, &xla__random_algorithm__descriptor, (int)f->ip->rng_algorithm, NULL, 1));
}

static void gather_in(fbuild *f)
{
	const Xla__GatherDimensionNumbers *g = f->ip->gather_dimension_numbers;
	const Xla__ScatterDimensionNumbers *s = f->ip->scatter_dimension_numbers;
	if (g && f->op != OP_SCATTER) {
		if (want(f, ATTR_OFFSET_DIMS, 1))
			put_ints(f, ATTR_OFFSET_DIMS, g->offset_dims, g->n_offset_dims);
		if (want(f, ATTR_COLLAPSED_SLICE_DIMS, 1))
			put_ints(f, ATTR_COLLAPSED_SLICE_DIMS, g->collapsed_slice_dims, g->n_collapsed_slice_dims);
		if (want(f, ATTR_START_INDEX_MAP, 1))
			put_ints(f, ATTR_START_INDEX_MAP, g->start_index_map, g->n_start_index_map);
		if (want(f, ATTR_OPERAND_BATCHING_DIMS, g->n_operand_batching_dims > 0))
			put_ints(f, ATTR_OPERAND_BATCHING_DIMS, g->operand_batching_dims, g->n_operand_batching_dims);
		if (want(f, ATTR_START_INDICES_BATCHING_DIMS, g->n_start_indices_batching_dims > 0))
			put_ints(f, ATTR_START_INDICES_BATCHING_DIMS, g->start_indices_batching_dims,
				 g->n_start_indices_batching_dims);
		if (want(f, ATTR_INDEX_VECTOR_DIM, 1))
			put_int(f, ATTR_INDEX_VECTOR_DIM, g->index_vector_dim);
	}
	if (s && f->op != OP_GATHER) {
		if (want(f, ATTR_UPDATE_WINDOW_DIMS, 1))
			put_ints(f, ATTR_UPDATE_WINDOW_DIMS, s->update_window_dims, s->n_update_window_dims);
		if (want(f, ATTR_INSERTED_WINDOW_DIMS, 1))
			put_ints(f, ATTR_INSERTED_WINDOW_DIMS, s->inserted_window_dims, s->n_inserted_window_dims);
		if (want(f, ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, 1))
			put_ints(f, ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, s->scatter_dims_to_operand_dims,
				 s->n_scatter_dims_to_operand_dims);
		if (want(f, ATTR_INPUT_BATCHING_DIMS, s->n_input_batching_dims > 0))
			put_ints(f, ATTR_INPUT_BATCHING_DIMS, s->input_batching_dims, s->n_input_batching_dims);
		if (want(f, ATTR_SCATTER_INDICES_BATCHING_DIMS, s->n_scatter_indices_batching_dims > 0))
			put_ints(f, ATTR_SCATTER_INDICES_BATCHING_DIMS, s->scatter_indices_batching_dims,
				 s->n_scatter_indices_batching_dims);
		if (want(f, ATTR_INDEX_VECTOR_DIM, 1))
			put_int(f, ATTR_INDEX_VECTOR_DIM, s->index_vector_dim);
	}
}

/* collective-permute's slice_sizes: dynamic_slice_sizes split by the rank
 * of the input (operand 0), or of each of its tuple elements in turn. */
static void permute_sizes_in(fbuild *f)
{
	const Xla__HloInstructionProto *ip = f->ip;
	size_t n = ip->n_dynamic_slice_sizes;
	if (!want(f, ATTR_SLICE_SIZES, n > 0))
		return;
	const shape *in = f->ops && f->ops->nops > 0 ? f->ops->shapes[0] : NULL;
	int ranks[HLOI_MAX_RANK * 4], nr = 0;
	if (in && shape_is_tuple(in)) {
		for (int i = 0; i < in->ntuple && nr < (int)(sizeof ranks / sizeof ranks[0]); i++)
			ranks[nr++] = in->tuple[i].rank;
	} else if (in) {
		ranks[nr++] = in->rank;
	}
	int chunked = nr > 0;
	for (int i = 0; i < nr; i++)
		chunked &= ranks[i] > 0;
	if (!chunked) {
		put_ints(f, ATTR_SLICE_SIZES, ip->dynamic_slice_sizes, n);
		return;
	}
	/* count the chunks */
	size_t pos = 0, k = 0;
	while (pos < n) {
		pos += (size_t)ranks[k % (size_t)nr];
		k++;
	}
	if (pos != n) {
		put_ints(f, ATTR_SLICE_SIZES, ip->dynamic_slice_sizes, n);
		return;
	}
	attr *a = put(f, ATTR_SLICE_SIZES, AK_INTS_LIST);
	if (!a)
		return;
	a->u.lists.v = arena_array(f->a, k, sizeof *a->u.lists.v);
	if (!a->u.lists.v) {
		f->oom = 1;
		return;
	}
	a->u.lists.n = (int)k;
	/* a copy: the module outlives the decoded message */
	int64_t *sizes = arena_array(f->a, n, sizeof *sizes);
	if (!sizes) {
		f->oom = 1;
		return;
	}
	memcpy(sizes, ip->dynamic_slice_sizes, n * sizeof *sizes);
	pos = 0;
	for (size_t j = 0; j < k; j++) {
		int r = ranks[j % (size_t)nr];
		int_list *l = &a->u.lists.v[j];
		memset(l, 0, sizeof *l);
		l->present = 1;
		l->n = r;
		l->v = sizes + pos;
		pos += (size_t)r;
	}
}

static void replica_groups_in(fbuild *f)
{
	const Xla__HloInstructionProto *ip = f->ip;
	const Xla__IotaReplicaGroupListProto *iota = NULL;
	const Xla__CollectiveDeviceListProto *list = NULL;
	const Xla__MeshAxesReplicaGroupListProto *mesh = NULL;
	switch (ip->replica_group_list_case) {
	case XLA__HLO_INSTRUCTION_PROTO__REPLICA_GROUP_LIST_COLLECTIVE_DEVICE_LIST:
		list = ip->collective_device_list;
		if (list && list->iota_replica_group_list && !list->n_replica_groups)
			iota = list->iota_replica_group_list;  /* an older XLA's */
		break;
	case XLA__HLO_INSTRUCTION_PROTO__REPLICA_GROUP_LIST_IOTA_COLLECTIVE_DEVICE_LIST:
		iota = ip->iota_collective_device_list;
		break;
	case XLA__HLO_INSTRUCTION_PROTO__REPLICA_GROUP_LIST_MESH_AXES_REPLICA_GROUP_LIST:
		mesh = ip->mesh_axes_replica_group_list;
		break;
	default:
		break;
	}
	int any = ip->n_replica_groups || list || iota || mesh;
	if (mesh && !mesh_groups_printable(mesh)) {
		f->bad = 1;  /* no text form: the loader keeps the field as it is */
		return;
	}
	if (!want(f, ATTR_REPLICA_GROUPS, any || is_collective(f->op)))
		return;
	attr *a = put(f, ATTR_REPLICA_GROUPS, AK_REPLICA_GROUPS);
	if (!a)
		return;
	replica_groups *rg = arena_alloc(f->a, sizeof *rg);
	if (!rg) {
		f->oom = 1;
		return;
	}
	memset(rg, 0, sizeof *rg);
	a->u.rg = rg;
	if (iota) {
		rg->form = RG_IOTA;
		rg->ngroup_dims = 2;
		rg->group_dims = arena_array(f->a, 2, sizeof *rg->group_dims);
		size_t nr = iota->n_iota_reshape_dims;
		rg->reshape_dims = nr ? arena_array(f->a, nr, sizeof *rg->reshape_dims) : NULL;
		rg->perm = nr ? arena_array(f->a, nr, sizeof *rg->perm) : NULL;
		if (!rg->group_dims || (nr && (!rg->reshape_dims || !rg->perm))) {
			f->oom = 1;
			return;
		}
		rg->group_dims[0] = iota->num_replica_groups;
		rg->group_dims[1] = iota->num_devices_per_group;
		rg->nreshape = (int)nr;
		if (nr)
			memcpy(rg->reshape_dims, iota->iota_reshape_dims, nr * sizeof(int64_t));
		if (nr > 1) {
			if (iota->n_iota_transpose_perm != nr)
				f->bad = 1;
			rg->nperm = (int)nr;
			for (size_t i = 0; i < nr && i < iota->n_iota_transpose_perm; i++)
				rg->perm[i] = iota->iota_transpose_perm[i];
		}
		return;
	}
	if (mesh) {
		rg->form = RG_RAW;
		strbuf b = STRBUF_INIT;
		mesh_groups_print(&b, mesh);
		if (b.oom || !(rg->raw = arena_strdup(f->a, sb_str(&b))))
			f->oom = 1;
		sb_free(&b);
		return;
	}
	rg->form = RG_LIST;
	size_t n = ip->n_replica_groups ? ip->n_replica_groups : list ? list->n_replica_groups : 0;
	Xla__ReplicaGroup *const *g = ip->n_replica_groups ? ip->replica_groups : list ? list->replica_groups : NULL;
	if (!n)
		return;
	rg->list.v = arena_array(f->a, n, sizeof *rg->list.v);
	if (!rg->list.v) {
		f->oom = 1;
		return;
	}
	rg->list.n = (int)n;
	for (size_t i = 0; i < n; i++) {
		int_list *l = &rg->list.v[i];
		memset(l, 0, sizeof *l);
		l->present = 1;
		l->n = (int)g[i]->n_replica_ids;
		if (!l->n)
			continue;
		/* the ids are copied: the unpacked message is freed after loading */
		l->v = arena_array(f->a, (size_t)l->n, sizeof *l->v);
		if (!l->v) {
			f->oom = 1;
			return;
		}
		memcpy(l->v, g[i]->replica_ids, (size_t)l->n * sizeof *l->v);
	}
}

static void pairs_in(fbuild *f)
{
	const Xla__HloInstructionProto *ip = f->ip;
	size_t n = ip->n_source_target_pairs;
	if (!want(f, ATTR_SOURCE_TARGET_PAIRS, n > 0 || is_permute(f->op)))
		return;
	attr *a = put(f, ATTR_SOURCE_TARGET_PAIRS, AK_INTS_LIST);
	if (!a || !n)
		return;
	a->u.lists.v = arena_array(f->a, n, sizeof *a->u.lists.v);
	int64_t *vals = arena_array(f->a, 2 * n, sizeof *vals);
	if (!a->u.lists.v || !vals) {
		f->oom = 1;
		return;
	}
	a->u.lists.n = (int)n;
	for (size_t i = 0; i < n; i++) {
		vals[2 * i] = ip->source_target_pairs[i]->source;
		vals[2 * i + 1] = ip->source_target_pairs[i]->target;
		int_list *l = &a->u.lists.v[i];
		memset(l, 0, sizeof *l);
		l->present = 1;
		l->n = 2;
		l->v = vals + 2 * i;
	}
}

static void shape_attr_in(fbuild *f, attr_id id, const Xla__ShapeProto *sp)
{
	attr *a = put(f, id, AK_SHAPE);
	if (!a)
		return;
	if (!sp || !f->hooks || !f->hooks->shape_in)
		return;  /* names only */
	shape *s = arena_alloc(f->a, sizeof *s);
	if (!s) {
		f->oom = 1;
		return;
	}
	if (f->hooks->shape_in(f->hooks->ctx, sp, s)) {
		f->bad = 2;  /* reported by the hook */
		return;
	}
	a->u.shp = s;
}

static void custom_call_in(fbuild *f)
{
	const Xla__HloInstructionProto *ip = f->ip;
	int cc = f->op == OP_CUSTOM_CALL;
	const char *t = ip->custom_call_target ? ip->custom_call_target : "";
	if (want(f, ATTR_CUSTOM_CALL_TARGET, cc || t[0]))
		put_string(f, ATTR_CUSTOM_CALL_TARGET, t, strlen(t));
	if (want(f, ATTR_API_VERSION,
		 cc ? ip->custom_call_api_version != XLA__CUSTOM_CALL_API_VERSION__API_VERSION_ORIGINAL
		    : ip->custom_call_api_version != 0))
		put_word(f, ATTR_API_VERSION, enum_text(f->a, &xla__custom_call_api_version__descriptor,
							(int)ip->custom_call_api_version, NULL, 0));
	if (want(f, ATTR_CUSTOM_CALL_HAS_SIDE_EFFECT, ip->custom_call_has_side_effect))
		put_bool(f, ATTR_CUSTOM_CALL_HAS_SIDE_EFFECT, ip->custom_call_has_side_effect);
	if (want(f, ATTR_CUSTOM_CALL_SCHEDULE, ip->custom_call_schedule != 0))
		put_word(f, ATTR_CUSTOM_CALL_SCHEDULE, enum_text(f->a, &xla__custom_call_schedule__descriptor,
								 (int)ip->custom_call_schedule, NULL, 0));
	/* constrain_layout on a custom-call is operand_layout_constraints= */
	if (cc && ip->constrain_layout && want(f, ATTR_OPERAND_LAYOUT_CONSTRAINTS, 1)) {
		attr *a = put(f, ATTR_OPERAND_LAYOUT_CONSTRAINTS, AK_SHAPES);
		if (!a)
			return;
		size_t n = ip->n_operand_shapes_with_layout;
		if (!n || !f->hooks || !f->hooks->shape_in)
			return;
		a->u.shapes.v = arena_array(f->a, n, sizeof *a->u.shapes.v);
		if (!a->u.shapes.v) {
			f->oom = 1;
			return;
		}
		a->u.shapes.n = (int)n;
		for (size_t i = 0; i < n; i++)
			if (f->hooks->shape_in(f->hooks->ctx, ip->operand_shapes_with_layout[i], &a->u.shapes.v[i])) {
				f->bad = 2;
				return;
			}
	}
}

static void raw_messages_in(fbuild *f)
{
	const Xla__HloInstructionProto *ip = f->ip;
	strbuf b = STRBUF_INIT;
	if (ip->n_output_operand_aliasing || (f->force && f->force[ATTR_OUTPUT_TO_OPERAND_ALIASING])) {
		if (want(f, ATTR_OUTPUT_TO_OPERAND_ALIASING, ip->n_output_operand_aliasing > 0)) {
			aliasing_print(&b, ip->output_operand_aliasing, ip->n_output_operand_aliasing);
			put_raw(f, ATTR_OUTPUT_TO_OPERAND_ALIASING, &b);
		}
	}
	if (want(f, ATTR_DOMAIN, f->op == OP_DOMAIN || ip->domain_entry_sharding || ip->domain_exit_sharding)) {
		if ((ip->domain_entry_sharding && !sharding_printable(ip->domain_entry_sharding)) ||
		    (ip->domain_exit_sharding && !sharding_printable(ip->domain_exit_sharding))) {
			f->bad = 1;
		} else {
			sb_reset(&b);
			domain_print(&b, ip->domain_entry_sharding, ip->domain_exit_sharding);
			put_raw(f, ATTR_DOMAIN, &b);
		}
	}
	if (want(f, ATTR_SHARDING, ip->sharding != NULL) && ip->sharding) {
		if (!sharding_printable(ip->sharding)) {
			f->bad = 1;
		} else {
			sb_reset(&b);
			sharding_print(&b, ip->sharding);
			put_raw(f, ATTR_SHARDING, &b);
		}
	}
	const Xla__ParameterReplication *pr = ip->parameter_replication;
	if (want(f, ATTR_PARAMETER_REPLICATION, pr && pr->n_replicated_at_leaf_buffers)) {
		static const Xla__ParameterReplication none = XLA__PARAMETER_REPLICATION__INIT;
		sb_reset(&b);
		replication_print(&b, pr ? pr : &none);
		put_raw(f, ATTR_PARAMETER_REPLICATION, &b);
	}
	if (want(f, ATTR_FRONTEND_ATTRIBUTES, frontend_user_count(ip->frontend_attributes) > 0)) {
		sb_reset(&b);
		frontend_print(&b, ip->frontend_attributes);
		put_raw(f, ATTR_FRONTEND_ATTRIBUTES, &b);
	}
	const Xla__StatisticsViz *st = ip->statistics_viz;
	if (want(f, ATTR_STATISTICS, st && st->n_statistics)) {
		static const Xla__StatisticsViz none = XLA__STATISTICS_VIZ__INIT;
		sb_reset(&b);
		statistics_print(&b, st ? st : &none);
		put_raw(f, ATTR_STATISTICS, &b);
	}
	if (ip->result_accuracy) {
		sb_reset(&b);
		int shown = accuracy_print(&b, ip->result_accuracy);
		if (shown && want(f, ATTR_RESULT_ACCURACY, 1))
			put_raw(f, ATTR_RESULT_ACCURACY, &b);
	}
	if (want(f, ATTR_ORIGIN, ip->original_value != NULL) && ip->original_value) {
		sb_reset(&b);
		if (origin_print(&b, ip->original_value))
			f->bad = 1;
		else
			put_raw(f, ATTR_ORIGIN, &b);
	}
	if (ip->metadata || (f->force && f->force[ATTR_METADATA])) {
		sb_reset(&b);
		sb_putc(&b, '{');
		if (ip->metadata)
			metadata_print_body(&b, ip->metadata);
		sb_putc(&b, '}');
		if (want(f, ATTR_METADATA, b.len > 2))
			put_raw(f, ATTR_METADATA, &b);
	}
	if (want(f, ATTR_BACKEND_CONFIG, ip->backend_config.len > 0)) {
		sb_reset(&b);
		backend_config_print(&b, ip->backend_config.data, ip->backend_config.len);
		put_raw(f, ATTR_BACKEND_CONFIG, &b);
	}
	sb_free(&b);
}

int fields_in(arena *a, opcode op, const Xla__HloInstructionProto *ip, const fields_ops *ops,
	      const fields_hooks *hooks, const uint8_t *force, const uint8_t *suppress, attr *out, int *nout)
{
	fbuild fb;
	memset(&fb, 0, sizeof fb);
	fbuild *f = &fb;
	attr store[ATTR_COUNT]; /* not cleared: put() clears what it takes */
	f->store = store;
	f->a = a;
	f->op = op;
	f->ip = ip;
	f->ops = ops;
	f->hooks = hooks;
	f->force = force;
	f->suppress = suppress;
	*nout = 0;

	dims_in(f);
	if (ip->comparison_direction && ip->comparison_direction[0] && want(f, ATTR_DIRECTION, 1))
		put_word(f, ATTR_DIRECTION, ip->comparison_direction);
	if (ip->comparison_type && ip->comparison_type[0]) {
		const char *dflt = NULL;
		if (op == OP_COMPARE && ops && ops->nops > 0 && ops->shapes[0])
			dflt = fields_default_comparison_type(ops->shapes[0]->type);
		if (want(f, ATTR_TYPE, !dflt || strcmp(dflt, ip->comparison_type) != 0))
			put_word(f, ATTR_TYPE, ip->comparison_type);
	}
	if (want(f, ATTR_INDEX, op == OP_GET_TUPLE_ELEMENT || ip->tuple_index != 0))
		put_int(f, ATTR_INDEX, ip->tuple_index);
	size_t ns = ip->n_slice_dimensions;
	if (want(f, ATTR_SLICE, ns > 0 || op == OP_SLICE)) {
		attr *at = put(f, ATTR_SLICE, AK_SLICE);
		if (at && ns) {
			at->u.slice.n = (int)ns;
			at->u.slice.start = arena_array(a, ns, sizeof(int64_t));
			at->u.slice.limit = arena_array(a, ns, sizeof(int64_t));
			at->u.slice.stride = arena_array(a, ns, sizeof(int64_t));
			if (!at->u.slice.start || !at->u.slice.limit || !at->u.slice.stride) {
				f->oom = 1;
			} else {
				for (size_t i = 0; i < ns; i++) {
					at->u.slice.start[i] = ip->slice_dimensions[i]->start;
					at->u.slice.limit[i] = ip->slice_dimensions[i]->limit;
					at->u.slice.stride[i] = ip->slice_dimensions[i]->stride;
				}
			}
		}
	}
	if (is_permute(op))
		permute_sizes_in(f);
	else if (want(f, ATTR_DYNAMIC_SLICE_SIZES, ip->n_dynamic_slice_sizes > 0 || op == OP_DYNAMIC_SLICE))
		put_ints(f, ATTR_DYNAMIC_SLICE_SIZES, ip->dynamic_slice_sizes, ip->n_dynamic_slice_sizes);
	if (want(f, ATTR_PADDING, ip->padding_config || op == OP_PAD)) {
		const Xla__PaddingConfig *pc = ip->padding_config;
		size_t np = pc ? pc->n_dimensions : 0;
		attr *at = put(f, ATTR_PADDING, AK_PADDING);
		if (at && np) {
			at->u.pad.n = (int)np;
			at->u.pad.lo = arena_array(a, np, sizeof(int64_t));
			at->u.pad.hi = arena_array(a, np, sizeof(int64_t));
			at->u.pad.interior = arena_array(a, np, sizeof(int64_t));
			if (!at->u.pad.lo || !at->u.pad.hi || !at->u.pad.interior) {
				f->oom = 1;
			} else {
				for (size_t i = 0; i < np; i++) {
					at->u.pad.lo[i] = pc->dimensions[i]->edge_padding_low;
					at->u.pad.hi[i] = pc->dimensions[i]->edge_padding_high;
					at->u.pad.interior[i] = pc->dimensions[i]->interior_padding;
				}
			}
		} else if (at && !np) {
			f->bad = 1; /* `padding=` has no text for zero dimensions */
		}
	}
	window_in(f);
	conv_in(f);
	if (want(f, ATTR_FEATURE_GROUP_COUNT, ip->feature_group_count > 1 || ip->feature_group_count < 0))
		put_int(f, ATTR_FEATURE_GROUP_COUNT, ip->feature_group_count);
	if (want(f, ATTR_BATCH_GROUP_COUNT, ip->batch_group_count > 1 || ip->batch_group_count < 0))
		put_int(f, ATTR_BATCH_GROUP_COUNT, ip->batch_group_count);
	if (want(f, ATTR_CONVOLUTION_KIND, ip->conv_kind != 0))
		put_word(f, ATTR_CONVOLUTION_KIND,
			 enum_text(a, &xla__convolution_kind__descriptor, (int)ip->conv_kind, "CONVOLUTION_KIND_", 1));
	if (op == OP_RAGGED_DOT || ip->ragged_dot_dimension_numbers) {
		const Xla__RaggedDotDimensionNumbers *r = ip->ragged_dot_dimension_numbers;
		dot_in(f, r ? r->dot_dimension_numbers : NULL, op == OP_RAGGED_DOT);
		if (r && want(f, ATTR_LHS_RAGGED_DIMS, r->n_lhs_ragged_dimensions > 0))
			put_ints(f, ATTR_LHS_RAGGED_DIMS, r->lhs_ragged_dimensions, r->n_lhs_ragged_dimensions);
		if (r && want(f, ATTR_RHS_GROUP_DIMS, r->n_rhs_group_dimensions > 0))
			put_ints(f, ATTR_RHS_GROUP_DIMS, r->rhs_group_dimensions, r->n_rhs_group_dimensions);
	} else {
		dot_in(f, ip->dot_dimension_numbers, op == OP_DOT || op == OP_SCALED_DOT);
	}
	precision_in(f);
	if (want(f, ATTR_PADDING_TYPE, ip->padding_type != 0))
		put_word(f, ATTR_PADDING_TYPE, enum_text(a, &xla__padding_type__descriptor, (int)ip->padding_type, NULL, 0));
	gather_in(f);
	if (!is_permute(op) &&
	    want(f, ATTR_SLICE_SIZES, op == OP_GATHER || ip->n_gather_slice_sizes > 0))
		put_ints(f, ATTR_SLICE_SIZES, ip->gather_slice_sizes, ip->n_gather_slice_sizes);
	if (want(f, ATTR_INDICES_ARE_SORTED, ip->indices_are_sorted))
		put_bool(f, ATTR_INDICES_ARE_SORTED, ip->indices_are_sorted);
	if (want(f, ATTR_UNIQUE_INDICES, ip->unique_indices))
		put_bool(f, ATTR_UNIQUE_INDICES, ip->unique_indices);
	if (want(f, ATTR_IS_STABLE, ip->is_stable || op == OP_TOPK))
		put_bool(f, ATTR_IS_STABLE, ip->is_stable);
	if (want(f, ATTR_K, ip->k != 0 || op == OP_TOPK))
		put_int(f, ATTR_K, ip->k);
	if (want(f, ATTR_LARGEST, ip->largest || op == OP_TOPK))
		put_bool(f, ATTR_LARGEST, ip->largest);
	int rp = op == OP_REDUCE_PRECISION;
	if (want(f, ATTR_EXPONENT_BITS, rp || ip->exponent_bits))
		put_int(f, ATTR_EXPONENT_BITS, ip->exponent_bits);
	if (want(f, ATTR_MANTISSA_BITS, rp || ip->mantissa_bits))
		put_int(f, ATTR_MANTISSA_BITS, ip->mantissa_bits);
	if (want(f, ATTR_DISTRIBUTION, op == OP_RNG || ip->distribution != 0))
		put_word(f, ATTR_DISTRIBUTION,
			 enum_text(a, &xla__random_distribution__descriptor, (int)ip->distribution, NULL, 1));
	int bn = is_batch_norm(op);
	if (want(f, ATTR_EPSILON, bn || ip->epsilon != 0)) {
		attr *at = put(f, ATTR_EPSILON, AK_FLOAT);
		if (at)
			at->u.f = (double)ip->epsilon;
	}
	if (want(f, ATTR_FEATURE_INDEX, bn || ip->feature_index != 0))
		put_int(f, ATTR_FEATURE_INDEX, ip->feature_index);
	if (want(f, ATTR_FFT_TYPE, op == OP_FFT || ip->fft_type != 0))
		put_word(f, ATTR_FFT_TYPE, enum_text(a, &xla__fft_type__descriptor, (int)ip->fft_type, NULL, 0));
	if (want(f, ATTR_FFT_LENGTH, op == OP_FFT || ip->n_fft_length > 0))
		put_ints(f, ATTR_FFT_LENGTH, ip->fft_length, ip->n_fft_length);
	/* TriangularSolveOptions / CholeskyOptions print their set fields */
	const Xla__TriangularSolveOptions *ts = ip->triangular_solve_options;
	const Xla__CholeskyOptions *ch = ip->cholesky_options;
	if (ts && op != OP_CHOLESKY) {
		if (want(f, ATTR_LEFT_SIDE, ts->left_side))
			put_bool(f, ATTR_LEFT_SIDE, ts->left_side);
		if (want(f, ATTR_LOWER, ts->lower))
			put_bool(f, ATTR_LOWER, ts->lower);
		if (want(f, ATTR_UNIT_DIAGONAL, ts->unit_diagonal))
			put_bool(f, ATTR_UNIT_DIAGONAL, ts->unit_diagonal);
		if (want(f, ATTR_TRANSPOSE_A, ts->transpose_a != 0))
			put_word(f, ATTR_TRANSPOSE_A,
				 enum_text(a, &xla__triangular_solve_options__transpose__descriptor, (int)ts->transpose_a,
					   NULL, 0));
	}
	if (ch && op != OP_TRIANGULAR_SOLVE && want(f, ATTR_LOWER, ch->lower))
		put_bool(f, ATTR_LOWER, ch->lower);
	if (want(f, ATTR_DELTA, op == OP_RNG_GET_AND_UPDATE_STATE || ip->delta != 0))
		put_int(f, ATTR_DELTA, ip->delta);
	if (want(f, ATTR_IS_REVERSE, ip->is_reverse))
		put_bool(f, ATTR_IS_REVERSE, ip->is_reverse);
	if (want(f, ATTR_NUM_CARRIES, op == OP_SCAN || ip->num_carries != 0))
		put_int(f, ATTR_NUM_CARRIES, ip->num_carries);
	if (want(f, ATTR_IS_ASSOCIATIVE, ip->is_associative != XLA__TRI_STATE__TRI_STATE_UNSPECIFIED))
		put_bool(f, ATTR_IS_ASSOCIATIVE, ip->is_associative == XLA__TRI_STATE__TRI_STATE_TRUE);
	if (ip->fusion_kind && ip->fusion_kind[0] && want(f, ATTR_KIND, 1))
		put_word(f, ATTR_KIND, ip->fusion_kind);
	/* collectives */
	replica_groups_in(f);
	pairs_in(f);
	if (want(f, ATTR_CHANNEL_ID, ip->channel_id > 0))
		put_int(f, ATTR_CHANNEL_ID, ip->channel_id);
	if (want(f, ATTR_USE_GLOBAL_DEVICE_IDS, ip->use_global_device_ids))
		put_bool(f, ATTR_USE_GLOBAL_DEVICE_IDS, ip->use_global_device_ids);
	if (op != OP_CUSTOM_CALL && want(f, ATTR_CONSTRAIN_LAYOUT, ip->constrain_layout))
		put_bool(f, ATTR_CONSTRAIN_LAYOUT, ip->constrain_layout);
	if (want(f, ATTR_IS_HOST_TRANSFER, ip->is_host_transfer))
		put_bool(f, ATTR_IS_HOST_TRANSFER, ip->is_host_transfer);
	const char *th = ip->async_execution_thread ? ip->async_execution_thread : "";
	if (want(f, ATTR_ASYNC_EXECUTION_THREAD, th[0] != 0))
		put_string(f, ATTR_ASYNC_EXECUTION_THREAD, th[0] ? th : "main", strlen(th[0] ? th : "main"));
	if (want(f, ATTR_CROSS_PROGRAM_PREFETCH_INDEX,
		 ip->optional_cross_program_prefetch_index_case ==
			 XLA__HLO_INSTRUCTION_PROTO__OPTIONAL_CROSS_PROGRAM_PREFETCH_INDEX_CROSS_PROGRAM_PREFETCH_INDEX ||
			 ip->is_cross_program_prefetch))
		put_int(f, ATTR_CROSS_PROGRAM_PREFETCH_INDEX,
			ip->optional_cross_program_prefetch_index_case ? ip->cross_program_prefetch_index : 0);
	if (want(f, ATTR_INFEED_CONFIG, ip->infeed_config.len > 0))
		put_string(f, ATTR_INFEED_CONFIG, (const char *)ip->infeed_config.data, ip->infeed_config.len);
	if (want(f, ATTR_OUTFEED_CONFIG, ip->outfeed_config.len > 0))
		put_string(f, ATTR_OUTFEED_CONFIG, (const char *)ip->outfeed_config.data, ip->outfeed_config.len);
	if (ip->outfeed_shape && want(f, ATTR_OUTFEED_SHAPE, 1))
		shape_attr_in(f, ATTR_OUTFEED_SHAPE, ip->outfeed_shape);
	custom_call_in(f);
	if (want(f, ATTR_IS_COMPOSITE, ip->is_composite))
		put_bool(f, ATTR_IS_COMPOSITE, ip->is_composite);
	raw_messages_in(f);

	if (f->oom)
		return -1;
	int n = 0;
	for (int i = 0; i < ATTR_COUNT; i++)
		if (f->slot[i])
			out[n++] = *f->slot[i];
	*nout = n;
	return f->bad ? 1 : 0;
}

/* --- attributes -> fields ------------------------------------------------------------- */

static int take(uint64_t *taken, uint32_t field)
{
	uint64_t bit = 1ull << (field % 64);
	if (taken[field / 64] & bit)
		return 0;
	taken[field / 64] |= bit;
	return 1;
}

int fields_taken(const uint64_t *taken, uint32_t field)
{
	return (taken[field / 64] >> (field % 64)) & 1;
}

static int64_t *copy_ints(arena *a, const int64_t *v, size_t n)
{
	if (!n)
		return NULL;
	int64_t *r = arena_array(a, n, sizeof *r);
	if (r)
		memcpy(r, v, n * sizeof *r);
	return r;
}

static void *newmsg(arena *a, const ProtobufCMessageDescriptor *d)
{
	void *p = arena_alloc(a, d->sizeof_message);
	if (p)
		protobuf_c_message_init(d, p);
	return p;
}

#define NEW(a, T, lc) ((T *)newmsg((a), &lc##__descriptor))

/* Sets an int list field; FO_OOM when out of memory. */
static fo_result set_list(arena *a, const int_list *l, size_t *n, int64_t **v)
{
	*n = (size_t)l->n;
	*v = copy_ints(a, l->v, (size_t)l->n);
	return l->n && !*v ? FO_OOM : FO_OK;
}

static fo_result bad(fout *o, const char *fmt, const char *word)
{
	sb_printf(o->err, fmt, word ? word : "");
	return FO_BAD;
}

/* The word of an AK_WORD attribute as an enum value. */
static fo_result word_enum(fout *o, const attr *at, const ProtobufCEnumDescriptor *d, const char *strip,
			   int lower, int *out)
{
	int v = enum_value(d, at->u.s, strip);
	if (v < 0) {
		sb_printf(o->err, "unknown %s '%s' (expects ", attr_name((attr_id)at->id), at->u.s);
		enum_words(o->err, d, strip, lower, 0);
		sb_putc(o->err, ')');
		return FO_BAD;
	}
	*out = v;
	return FO_OK;
}

static Xla__DotDimensionNumbers *dot_msg(fout *o, Xla__HloInstructionProto *ip)
{
	if (o->op == OP_RAGGED_DOT || ip->ragged_dot_dimension_numbers) {
		if (!ip->ragged_dot_dimension_numbers &&
		    !(ip->ragged_dot_dimension_numbers =
			      NEW(o->a, Xla__RaggedDotDimensionNumbers, xla__ragged_dot_dimension_numbers)))
			return NULL;
		Xla__RaggedDotDimensionNumbers *r = ip->ragged_dot_dimension_numbers;
		if (!r->dot_dimension_numbers)
			r->dot_dimension_numbers = NEW(o->a, Xla__DotDimensionNumbers, xla__dot_dimension_numbers);
		return r->dot_dimension_numbers;
	}
	if (!ip->dot_dimension_numbers)
		ip->dot_dimension_numbers = NEW(o->a, Xla__DotDimensionNumbers, xla__dot_dimension_numbers);
	return ip->dot_dimension_numbers;
}

static Xla__PrecisionConfig *precision_msg(fout *o, Xla__HloInstructionProto *ip)
{
	if (!ip->precision_config)
		ip->precision_config = NEW(o->a, Xla__PrecisionConfig, xla__precision_config);
	return ip->precision_config;
}

static Xla__GatherDimensionNumbers *gather_msg(fout *o, Xla__HloInstructionProto *ip)
{
	if (!ip->gather_dimension_numbers)
		ip->gather_dimension_numbers = NEW(o->a, Xla__GatherDimensionNumbers, xla__gather_dimension_numbers);
	return ip->gather_dimension_numbers;
}

static Xla__ScatterDimensionNumbers *scatter_msg(fout *o, Xla__HloInstructionProto *ip)
{
	if (!ip->scatter_dimension_numbers)
		ip->scatter_dimension_numbers =
			NEW(o->a, Xla__ScatterDimensionNumbers, xla__scatter_dimension_numbers);
	return ip->scatter_dimension_numbers;
}

static Xla__TriangularSolveOptions *tso_msg(fout *o, Xla__HloInstructionProto *ip)
{
	if (!ip->triangular_solve_options)
		ip->triangular_solve_options = NEW(o->a, Xla__TriangularSolveOptions, xla__triangular_solve_options);
	return ip->triangular_solve_options;
}

/* A raw value through its parser; errors located in the value. */
typedef int (*raw_parser)(tcur *c, void *out, arena *a);

static fo_result raw_parse(fout *o, const attr *at, int (*fn)(tcur *, void *, arena *), void *dst)
{
	tcur c;
	tc_init(&c, at->u.s, strlen(at->u.s));
	if (fn(&c, dst, o->a) == 0 && !tc_at_end(&c))
		tc_fail(&c, "the end of the value");
	if (c.oom)
		return FO_OOM;
	if (c.bad) {
		o->err_off = c.bad_at;
		sb_printf(o->err, "malformed %s: expects %s", attr_name((attr_id)at->id), c.expect);
		return FO_BAD;
	}
	return FO_OK;
}

static int p_metadata(tcur *c, void *out, arena *a) { return metadata_parse(c, out, a); }
static int p_statistics(tcur *c, void *out, arena *a) { return statistics_parse(c, out, a); }
static int p_accuracy(tcur *c, void *out, arena *a) { return accuracy_parse(c, out, a); }
static int p_replication(tcur *c, void *out, arena *a) { return replication_parse(c, out, a); }
static int p_origin(tcur *c, void *out, arena *a) { return origin_parse(c, out, a); }
static int p_sharding(tcur *c, void *out, arena *a) { return sharding_parse(c, a, out); }
static int p_backend(tcur *c, void *out, arena *a) { return backend_config_parse(c, out, a); }
static int p_mesh_groups(tcur *c, void *out, arena *a) { return mesh_groups_parse(c, a, out); }

typedef struct alias_out {
	Xla__OutputOperandAliasing **v;
	size_t n;
} alias_out;
static int p_aliasing(tcur *c, void *out, arena *a)
{
	alias_out *x = out;
	return aliasing_parse(c, &x->v, &x->n, a);
}

typedef struct domain_out {
	Xla__OpSharding *entry, *exit;
} domain_out;
static int p_domain(tcur *c, void *out, arena *a)
{
	domain_out *x = out;
	return domain_parse(c, &x->entry, &x->exit, a);
}

static fo_result replica_groups_out(fout *o, const attr *at, Xla__HloInstructionProto *ip)
{
	const replica_groups *rg = at->u.rg;
	if (rg->form == RG_LIST) {
		Xla__CollectiveDeviceListProto *l = NEW(o->a, Xla__CollectiveDeviceListProto, xla__collective_device_list_proto);
		if (!l)
			return FO_OOM;
		size_t n = (size_t)rg->list.n;
		if (n) {
			l->replica_groups = arena_array(o->a, n, sizeof *l->replica_groups);
			if (!l->replica_groups)
				return FO_OOM;
		}
		l->n_replica_groups = n;
		for (size_t i = 0; i < n; i++) {
			Xla__ReplicaGroup *g = NEW(o->a, Xla__ReplicaGroup, xla__replica_group);
			if (!g || set_list(o->a, &rg->list.v[i], &g->n_replica_ids, &g->replica_ids) != FO_OK)
				return FO_OOM;
			l->replica_groups[i] = g;
		}
		ip->replica_group_list_case = XLA__HLO_INSTRUCTION_PROTO__REPLICA_GROUP_LIST_COLLECTIVE_DEVICE_LIST;
		ip->collective_device_list = l;
		return FO_OK;
	}
	if (rg->form == RG_IOTA) {
		if (rg->ngroup_dims != 2)
			return bad(o, "replica_groups=[G,S]<=[...] needs two dimensions, groups and group size%s",
				   NULL);
		Xla__IotaReplicaGroupListProto *l = NEW(o->a, Xla__IotaReplicaGroupListProto, xla__iota_replica_group_list_proto);
		if (!l)
			return FO_OOM;
		l->num_replica_groups = rg->group_dims[0];
		l->num_devices_per_group = rg->group_dims[1];
		size_t nr = (size_t)rg->nreshape;
		l->n_iota_reshape_dims = nr;
		l->iota_reshape_dims = copy_ints(o->a, rg->reshape_dims, nr);
		l->n_iota_transpose_perm = nr;
		l->iota_transpose_perm = nr ? arena_array(o->a, nr, sizeof *l->iota_transpose_perm) : NULL;
		if (nr && (!l->iota_reshape_dims || !l->iota_transpose_perm))
			return FO_OOM;
		if (rg->nperm && (size_t)rg->nperm != nr)
			return bad(o, "the permutation T(...) of replica_groups must be as long as the reshape "
				      "dimensions%s", NULL);
		for (size_t i = 0; i < nr; i++) {
			int64_t p = rg->nperm ? rg->perm[i] : (int64_t)i;
			if (p < 0 || (size_t)p >= nr)
				return bad(o, "replica_groups' permutation entries must be below the number of "
					      "reshape dimensions%s", NULL);
			l->iota_transpose_perm[i] = (int32_t)p;
		}
		ip->replica_group_list_case = XLA__HLO_INSTRUCTION_PROTO__REPLICA_GROUP_LIST_IOTA_COLLECTIVE_DEVICE_LIST;
		ip->iota_collective_device_list = l;
		return FO_OK;
	}
	/* the mesh form (none when the message it came from was malformed) */
	if (!rg->raw)
		return bad(o, "replica_groups: a mesh this proto cannot hold%s", NULL);
	attr tmp = *at;
	tmp.u.s = rg->raw;
	Xla__MeshAxesReplicaGroupListProto *m = NULL;
	fo_result r = raw_parse(o, &tmp, p_mesh_groups, &m);
	if (r != FO_OK)
		return r;
	ip->replica_group_list_case = XLA__HLO_INSTRUCTION_PROTO__REPLICA_GROUP_LIST_MESH_AXES_REPLICA_GROUP_LIST;
	ip->mesh_axes_replica_group_list = m;
	return FO_OK;
}

static fo_result string_bytes(fout *o, const attr *at, ProtobufCBinaryData *out)
{
	size_t n;
	char *s = attr_string_value(o->a, at->u.s, &n);
	if (!s)
		return FO_OOM;
	out->data = (uint8_t *)s;
	out->len = n;
	return FO_OK;
}

static fo_result string_text(fout *o, const attr *at, char **out)
{
	size_t n;
	char *s = attr_string_value(o->a, at->u.s, &n);
	if (!s)
		return FO_OOM;
	if (strlen(s) != n || !proto_utf8_valid((const unsigned char *)s, n))
		return bad(o, "%s must be UTF-8 text without NUL bytes", attr_name((attr_id)at->id));
	*out = s;
	return FO_OK;
}

/* --- the handlers attrs.def names ------------------------------------------------------
 *
 * Each writes the value of its rows itself and leaves *into NULL, or sets
 * *into to the message whose field (named as the row's proto field, after
 * any dot) the row's mapping fills. field_out has taken the row's field
 * first (rows of a whole field). */

typedef fo_result (*fo_handler)(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into);

static fo_result fo_slice(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	size_t n = (size_t)at->u.slice.n;
	ip->n_slice_dimensions = n;
	if (!n)
		return FO_OK;
	ip->slice_dimensions = arena_array(o->a, n, sizeof *ip->slice_dimensions);
	if (!ip->slice_dimensions)
		return FO_OOM;
	for (size_t i = 0; i < n; i++) {
		Xla__HloInstructionProto__SliceDimensions *d =
			NEW(o->a, Xla__HloInstructionProto__SliceDimensions, xla__hlo_instruction_proto__slice_dimensions);
		if (!d)
			return FO_OOM;
		d->start = at->u.slice.start[i];
		d->limit = at->u.slice.limit[i];
		d->stride = at->u.slice.stride[i];
		ip->slice_dimensions[i] = d;
	}
	return FO_OK;
}

static fo_result fo_padding(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	Xla__PaddingConfig *pc = NEW(o->a, Xla__PaddingConfig, xla__padding_config);
	if (!pc)
		return FO_OOM;
	size_t n = (size_t)at->u.pad.n;
	pc->n_dimensions = n;
	if (n && !(pc->dimensions = arena_array(o->a, n, sizeof *pc->dimensions)))
		return FO_OOM;
	for (size_t i = 0; i < n; i++) {
		Xla__PaddingConfig__PaddingConfigDimension *d =
			NEW(o->a, Xla__PaddingConfig__PaddingConfigDimension, xla__padding_config__padding_config_dimension);
		if (!d)
			return FO_OOM;
		d->edge_padding_low = at->u.pad.lo[i];
		d->edge_padding_high = at->u.pad.hi[i];
		d->interior_padding = at->u.pad.interior[i];
		pc->dimensions[i] = d;
	}
	ip->padding_config = pc;
	return FO_OK;
}

static fo_result fo_window(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	Xla__Window *w = NEW(o->a, Xla__Window, xla__window);
	if (!w)
		return FO_OOM;
	size_t n = (size_t)at->u.win.n;
	w->n_dimensions = n;
	if (n && !(w->dimensions = arena_array(o->a, n, sizeof *w->dimensions)))
		return FO_OOM;
	for (size_t i = 0; i < n; i++) {
		const window_dim *d = &at->u.win.d[i];
		Xla__WindowDimension *x = NEW(o->a, Xla__WindowDimension, xla__window_dimension);
		if (!x)
			return FO_OOM;
		x->size = d->size;
		x->stride = d->stride;
		x->padding_low = d->pad_lo;
		x->padding_high = d->pad_hi;
		x->window_dilation = d->rhs_dilate;
		x->base_dilation = d->lhs_dilate;
		x->window_reversal = d->reversal != 0;
		w->dimensions[i] = x;
	}
	ip->window = w;
	return FO_OK;
}

static fo_result fo_dim_labels(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	arena *a = o->a;
	const conv_dims *c = at->conv;
	if (!c)
		return bad(o, "dim_labels=%s cannot be read", at->u.s);
	Xla__ConvolutionDimensionNumbers *d = NEW(a, Xla__ConvolutionDimensionNumbers, xla__convolution_dimension_numbers);
	if (!d)
		return FO_OOM;
	size_t n = (size_t)c->nspatial;
	d->input_batch_dimension = c->input_batch;
	d->input_feature_dimension = c->input_feature;
	d->kernel_input_feature_dimension = c->kernel_input_feature;
	d->kernel_output_feature_dimension = c->kernel_output_feature;
	d->output_batch_dimension = c->output_batch;
	d->output_feature_dimension = c->output_feature;
	d->n_input_spatial_dimensions = d->n_kernel_spatial_dimensions = d->n_output_spatial_dimensions = n;
	d->input_spatial_dimensions = copy_ints(a, c->input_spatial, n);
	d->kernel_spatial_dimensions = copy_ints(a, c->kernel_spatial, n);
	d->output_spatial_dimensions = copy_ints(a, c->output_spatial, n);
	if (n && (!d->input_spatial_dimensions || !d->kernel_spatial_dimensions || !d->output_spatial_dimensions))
		return FO_OOM;
	ip->convolution_dimension_numbers = d;
	return FO_OK;
}

/* XLA spells the kinds without their CONVOLUTION_KIND_ prefix. */
static fo_result fo_conv_kind(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	int e;
	fo_result r = word_enum(o, at, &xla__convolution_kind__descriptor, "CONVOLUTION_KIND_", 1, &e);
	if (r == FO_OK)
		ip->conv_kind = (Xla__ConvolutionKind)e;
	return r;
}

/* A ragged dot keeps its dimension numbers inside its
 * ragged_dot_dimension_numbers. */
static fo_result fo_dot(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)at;
	Xla__DotDimensionNumbers *d = dot_msg(o, ip);
	if (!d)
		return FO_OOM;
	*into = &d->base;
	return FO_OK;
}

static fo_result fo_precision(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	Xla__PrecisionConfig *pc = precision_msg(o, ip);
	if (!pc)
		return FO_OOM;
	size_t n = (size_t)at->u.words.n;
	pc->n_operand_precision = n;
	pc->operand_precision = arena_array(o->a, n ? n : 1, sizeof *pc->operand_precision);
	if (!pc->operand_precision)
		return FO_OOM;
	for (size_t i = 0; i < n; i++) {
		int v = enum_value(&xla__precision_config__precision__descriptor, at->u.words.v[i], NULL);
		if (v < 0) {
			if (at->u.words.at)
				o->err_off = at->u.words.at[i].start - at->vat.start;
			return bad(o, "unknown precision '%s' (expects default, high or highest)", at->u.words.v[i]);
		}
		pc->operand_precision[i] = (Xla__PrecisionConfig__Precision)v;
	}
	return FO_OK;
}

/* algorithm= is a dot's PrecisionConfig algorithm (spelled without ALG_),
 * but rng-bit-generator's rng_algorithm: an opcode's choice. */
static fo_result fo_algorithm(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	int e;
	fo_result r;
	if (o->op == OP_RNG_BIT_GENERATOR) {
		r = word_enum(o, at, &xla__random_algorithm__descriptor, NULL, 1, &e);
		if (r == FO_OK)
			ip->rng_algorithm = (Xla__RandomAlgorithm)e;
		return r;
	}
	Xla__PrecisionConfig *pc = precision_msg(o, ip);
	if (!pc)
		return FO_OOM;
	r = word_enum(o, at, &xla__precision_config__algorithm__descriptor, "ALG_", 1, &e);
	if (r == FO_OK)
		pc->algorithm = (Xla__PrecisionConfig__Algorithm)e;
	return r;
}

/* A scatter's index_vector_dim is in its ScatterDimensionNumbers. */
static fo_result fo_index_vector_dim(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)at;
	if (o->op == OP_SCATTER) {
		Xla__ScatterDimensionNumbers *s = scatter_msg(o, ip);
		*into = s ? &s->base : NULL;
	} else {
		Xla__GatherDimensionNumbers *g = gather_msg(o, ip);
		*into = g ? &g->base : NULL;
	}
	return *into ? FO_OK : FO_OOM;
}

/* collective-permute's slice_sizes= is its dynamic_slice_sizes (the field
 * of dynamic_slice_sizes=), nested lists flattened; gather's is the row's
 * gather_slice_sizes. */
static fo_result fo_slice_sizes(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	if (o->op != OP_COLLECTIVE_PERMUTE && o->op != OP_COLLECTIVE_PERMUTE_START) {
		if (at->kind != AK_INTS)
			return FO_NOFIELD;
		*into = &ip->base;
		return FO_OK;
	}
	if (!take(o->taken, attr_proto_field(ATTR_DYNAMIC_SLICE_SIZES)))
		return FO_TAKEN;
	if (at->kind == AK_INTS)
		return set_list(o->a, &at->u.ints, &ip->n_dynamic_slice_sizes, &ip->dynamic_slice_sizes);
	size_t total = 0;
	for (int i = 0; i < at->u.lists.n; i++)
		total += (size_t)at->u.lists.v[i].n;
	ip->n_dynamic_slice_sizes = total;
	ip->dynamic_slice_sizes = total ? arena_array(o->a, total, sizeof(int64_t)) : NULL;
	if (total && !ip->dynamic_slice_sizes)
		return FO_OOM;
	total = 0;
	for (int i = 0; i < at->u.lists.n; i++) {
		if (!at->u.lists.v[i].n)
			continue;
		memcpy(ip->dynamic_slice_sizes + total, at->u.lists.v[i].v, (size_t)at->u.lists.v[i].n * sizeof(int64_t));
		total += (size_t)at->u.lists.v[i].n;
	}
	return FO_OK;
}

/* cholesky's lower= is in its CholeskyOptions. */
static fo_result fo_lower(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)at;
	if (o->op != OP_CHOLESKY) {
		Xla__TriangularSolveOptions *t = tso_msg(o, ip);
		*into = t ? &t->base : NULL;
		return t ? FO_OK : FO_OOM;
	}
	if (!ip->cholesky_options && !(ip->cholesky_options = NEW(o->a, Xla__CholeskyOptions, xla__cholesky_options)))
		return FO_OOM;
	*into = &ip->cholesky_options->base;
	return FO_OK;
}

static fo_result fo_tristate(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)o;
	(void)into;
	ip->is_associative = at->u.i ? XLA__TRI_STATE__TRI_STATE_TRUE : XLA__TRI_STATE__TRI_STATE_FALSE;
	return FO_OK;
}

static fo_result fo_replica_groups(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	return replica_groups_out(o, at, ip);
}

static fo_result fo_source_target_pairs(fout *o, const attr *at, Xla__HloInstructionProto *ip,
					ProtobufCMessage **into)
{
	(void)into;
	size_t n = (size_t)at->u.lists.n;
	ip->n_source_target_pairs = n;
	if (n && !(ip->source_target_pairs = arena_array(o->a, n, sizeof *ip->source_target_pairs)))
		return FO_OOM;
	for (size_t i = 0; i < n; i++) {
		const int_list *l = &at->u.lists.v[i];
		if (l->n != 2) {
			o->err_off = l->at.start >= at->vat.start ? l->at.start - at->vat.start : 0;
			return bad(o, "each source_target_pairs entry is {source,target}%s", NULL);
		}
		Xla__SourceTarget *st = NEW(o->a, Xla__SourceTarget, xla__source_target);
		if (!st)
			return FO_OOM;
		st->source = l->v[0];
		st->target = l->v[1];
		ip->source_target_pairs[i] = st;
	}
	return FO_OK;
}

/* A custom-call's constrain_layout says it has operand_layout_constraints=. */
static fo_result fo_constrain_layout(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)at;
	if (o->op == OP_CUSTOM_CALL)
		return FO_NOFIELD;
	*into = &ip->base;
	return FO_OK;
}

/* XLA leaves the main thread's name out. */
static fo_result fo_async_thread(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	char *s;
	fo_result r = string_text(o, at, &s);
	if (r == FO_OK)
		ip->async_execution_thread = strcmp(s, "main") == 0 ? (char *)"" : s;
	return r;
}

static fo_result fo_outfeed_shape(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	if (!o->hooks || !o->hooks->shape_out)
		return FO_NOFIELD;
	return (ip->outfeed_shape = o->hooks->shape_out(o->hooks->ctx, at->u.shp)) ? FO_OK : FO_OOM;
}

/* Noted: the writer gives a custom-call without one XLA's default. */
static fo_result fo_api_version(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)at;
	o->api_version_set = 1;
	*into = &ip->base;
	return FO_OK;
}

static fo_result fo_layout_constraints(fout *o, const attr *at, Xla__HloInstructionProto *ip,
				       ProtobufCMessage **into)
{
	(void)into;
	if (!o->hooks || !o->hooks->shape_out)
		return FO_NOFIELD;
	size_t n = (size_t)at->u.shapes.n;
	ip->constrain_layout = 1;
	ip->n_operand_shapes_with_layout = n;
	if (n && !(ip->operand_shapes_with_layout = arena_array(o->a, n, sizeof *ip->operand_shapes_with_layout)))
		return FO_OOM;
	for (size_t i = 0; i < n; i++)
		if (!(ip->operand_shapes_with_layout[i] = o->hooks->shape_out(o->hooks->ctx, &at->u.shapes.v[i])))
			return FO_OOM;
	return FO_OK;
}

static fo_result fo_literal(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	if (!o->hooks || !o->hooks->literal_out)
		return FO_NOFIELD;
	ip->literal = o->hooks->literal_out(o->hooks->ctx, at);
	return ip->literal ? FO_OK : FO_BAD;
}

static fo_result fo_aliasing(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	alias_out x = { NULL, 0 };
	fo_result r = raw_parse(o, at, p_aliasing, &x);
	ip->output_operand_aliasing = x.v;
	ip->n_output_operand_aliasing = x.n;
	return r;
}

static fo_result fo_domain(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	domain_out x = { NULL, NULL };
	fo_result r = raw_parse(o, at, p_domain, &x);
	ip->domain_entry_sharding = x.entry;
	ip->domain_exit_sharding = x.exit;
	return r;
}

static fo_result fo_sharding(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	return raw_parse(o, at, p_sharding, &ip->sharding);
}

static fo_result fo_backend_config(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into)
{
	(void)into;
	return raw_parse(o, at, p_backend, &ip->backend_config);
}

/* Messages made empty, then read from the value's text. */
#define FO_MESSAGE(fn, T, lc, member, parser) \
	static fo_result fo_##fn(fout *o, const attr *at, Xla__HloInstructionProto *ip, ProtobufCMessage **into) \
	{ \
		(void)into; \
		T *m = NEW(o->a, T, lc); \
		if (!m) \
			return FO_OOM; \
		ip->member = m; \
		return raw_parse(o, at, parser, m); \
	}
FO_MESSAGE(replication, Xla__ParameterReplication, xla__parameter_replication, parameter_replication, p_replication)
FO_MESSAGE(statistics, Xla__StatisticsViz, xla__statistics_viz, statistics_viz, p_statistics)
FO_MESSAGE(accuracy, Xla__ResultAccuracy, xla__result_accuracy, result_accuracy, p_accuracy)
FO_MESSAGE(origin, Xla__OriginalValueProto, xla__original_value_proto, original_value, p_origin)
FO_MESSAGE(metadata, Xla__OpMetadata, xla__op_metadata, metadata, p_metadata)
#undef FO_MESSAGE

/* --- the table ------------------------------------------------------------------------ */

#define fo_none NULL
static const fo_handler fo_fns[ATTR_COUNT] = {
#define X(E, name, kind, field, pk, fn, pname) [ATTR_##E] = fo_##fn,
#include "ir/attrs.def"
#undef X
};
#undef fo_none

/* The message field `f` of `m`, made when absent; NULL when out of memory. */
static ProtobufCMessage *sub_message(arena *a, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
	ProtobufCMessage **slot = (ProtobufCMessage **)(void *)((char *)m + f->offset);
	if (!*slot)
		*slot = newmsg(a, f->descriptor);
	return *slot;
}

/* Writes the value into field `f` of `m` as the mapping says. */
static fo_result set_field(fout *o, const attr *at, attr_pkind pk, ProtobufCMessage *m,
			   const ProtobufCFieldDescriptor *f)
{
	char *p = (char *)m + f->offset;
	size_t *n = (size_t *)(void *)((char *)m + f->quantifier_offset);
	int e;
	fo_result r;
	switch (pk) {
	case PK_INT:
		if (f->type == PROTOBUF_C_TYPE_INT32) {
			if (at->u.i < INT32_MIN || at->u.i > INT32_MAX)
				return bad(o, "%s must fit in 32 bits", attr_name((attr_id)at->id));
			*(int32_t *)(void *)p = (int32_t)at->u.i;
		} else {
			*(int64_t *)(void *)p = at->u.i;
		}
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			*(uint32_t *)(void *)((char *)m + f->quantifier_offset) = f->id;
		return FO_OK;
	case PK_INT1:
		if (!(*(int64_t **)(void *)p = copy_ints(o->a, &at->u.i, 1)))
			return FO_OOM;
		*n = 1;
		return FO_OK;
	case PK_INTS:
		return set_list(o->a, &at->u.ints, n, (int64_t **)(void *)p);
	case PK_BOOL:
		*(protobuf_c_boolean *)(void *)p = at->u.i != 0;
		return FO_OK;
	case PK_FLOAT:
		*(float *)(void *)p = (float)at->u.f;
		return FO_OK;
	case PK_WORD:
		return (*(char **)(void *)p = arena_strdup(o->a, at->u.s)) ? FO_OK : FO_OOM;
	case PK_TEXT:
		return string_text(o, at, (char **)(void *)p);
	case PK_BYTES:
		return string_bytes(o, at, (ProtobufCBinaryData *)(void *)p);
	case PK_ENUM:
	case PK_ENUM_LC:
		r = word_enum(o, at, f->descriptor, NULL, pk == PK_ENUM_LC, &e);
		if (r == FO_OK)
			*(int *)(void *)p = e;
		return r;
	default:
		return FO_NOFIELD;
	}
}

fo_result field_out(fout *o, const attr *at, Xla__HloInstructionProto *ip)
{
	if (at->id >= ATTR_COUNT)
		return FO_NOFIELD;
	attr_id id = (attr_id)at->id;
	attr_kind want_kind = attr_table_kind(id);
	/* collective-permute's slice_sizes= may be nested lists */
	if (at->kind != want_kind && !(want_kind == AK_INTS && at->kind == AK_INTS_LIST && id == ATTR_SLICE_SIZES))
		return FO_NOFIELD; /* a value of another kind (kept as written) */
	uint32_t field = attr_proto_field(id);
	attr_pkind pk = attr_proto_kind(id);
	fo_handler fn = fo_fns[id];
	/* no field; callees, control predecessors and frontend attributes are
	 * the saver's */
	if (!field || pk == PK_CALLEE || pk == PK_IDS || (!fn && (pk == PK_MSG || pk == PK_MSGS)))
		return FO_NOFIELD;
	/* a field holds one attribute's value (a sub-message, several) */
	const char *leaf = strchr(attr_proto_name(id), '.');
	if (!leaf && !take(o->taken, field))
		return FO_TAKEN;
	ProtobufCMessage *into = NULL;
	const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(ip->base.descriptor, field);
	if (fn) {
		fo_result r = fn(o, at, ip, &into);
		if (r != FO_OK || !into)
			return r;
	} else {
		into = leaf ? sub_message(o->a, &ip->base, f) : &ip->base;
		if (!into)
			return FO_OOM;
	}
	if (leaf)
		f = protobuf_c_message_descriptor_get_field_by_name(into->descriptor, leaf + 1);
	return set_field(o, at, pk, into, f);
}

int fields_defaults(fout *o, Xla__HloInstructionProto *ip, const fields_ops *ops)
{
	arena *a = o->a;
	opcode op = o->op;
	if (op == OP_COMPARE && (!ip->comparison_type || !ip->comparison_type[0]) && ops && ops->nops > 0 &&
	    ops->shapes[0]) {
		const char *t = fields_default_comparison_type(ops->shapes[0]->type);
		if (t)
			ip->comparison_type = (char *)t;
	}
	if (is_dot(op) && !dot_msg(o, ip))
		return -1;
	if (uses_precision(op)) {
		Xla__PrecisionConfig *pc = precision_msg(o, ip);
		if (!pc)
			return -1;
		size_t n = precision_count(op, ops ? (size_t)ops->nops : 0);
		if (!pc->n_operand_precision && n) {
			pc->operand_precision = arena_array(a, n, sizeof *pc->operand_precision);
			if (!pc->operand_precision)
				return -1;
			for (size_t i = 0; i < n; i++)
				pc->operand_precision[i] = XLA__PRECISION_CONFIG__PRECISION__DEFAULT;
			pc->n_operand_precision = n;
		}
	}
	if (op == OP_CONVOLUTION) {
		if (!ip->window && !(ip->window = NEW(a, Xla__Window, xla__window)))
			return -1;
		if (!ip->convolution_dimension_numbers &&
		    !(ip->convolution_dimension_numbers =
			      NEW(a, Xla__ConvolutionDimensionNumbers, xla__convolution_dimension_numbers)))
			return -1;
	}
	if (op == OP_CONVOLUTION || op == OP_CUSTOM_CALL) {
		if (!fields_taken(o->taken, attr_proto_field(ATTR_FEATURE_GROUP_COUNT)))
			ip->feature_group_count = 1;
		if (!fields_taken(o->taken, attr_proto_field(ATTR_BATCH_GROUP_COUNT)))
			ip->batch_group_count = 1;
	}
	if (op == OP_CUSTOM_CALL) {
		if (!ip->custom_call_target)
			ip->custom_call_target = (char *)"";
		if (!o->api_version_set)
			ip->custom_call_api_version = XLA__CUSTOM_CALL_API_VERSION__API_VERSION_ORIGINAL;
	}
	if (op == OP_GATHER && !gather_msg(o, ip))
		return -1;
	if (op == OP_SCATTER && !scatter_msg(o, ip))
		return -1;
	if (op == OP_PAD && !ip->padding_config && !(ip->padding_config = NEW(a, Xla__PaddingConfig, xla__padding_config)))
		return -1;
	if (op == OP_TRIANGULAR_SOLVE && !tso_msg(o, ip))
		return -1;
	if (op == OP_CHOLESKY && !ip->cholesky_options &&
	    !(ip->cholesky_options = NEW(a, Xla__CholeskyOptions, xla__cholesky_options)))
		return -1;
	if (is_collective(op) && ip->replica_group_list_case == XLA__HLO_INSTRUCTION_PROTO__REPLICA_GROUP_LIST__NOT_SET) {
		ip->collective_device_list = NEW(a, Xla__CollectiveDeviceListProto, xla__collective_device_list_proto);
		if (!ip->collective_device_list)
			return -1;
		ip->replica_group_list_case = XLA__HLO_INSTRUCTION_PROTO__REPLICA_GROUP_LIST_COLLECTIVE_DEVICE_LIST;
	}
	return 0;
}

/* --- called computations ------------------------------------------------------------ */

/* How XLA prints each opcode's callees: one callee is to_apply= on the
 * OPF_TO_APPLY rows and calls= elsewhere, except on the four opcodes the
 * switch names, whose callee attributes are their own (condition= body=,
 * select= scatter=, true_computation= false_computation= or
 * branch_computations=, called_computations=): attribute names no other
 * opcode shares, so the switch stays op by op. */
int fields_canon_callees(opcode op, size_t n, int pred, attr_id *ids, size_t *counts)
{
	if (n == 0)
		return 0;
	switch (op) {
	case OP_WHILE:
		if (n != 2)
			break;
		ids[0] = ATTR_CONDITION;
		ids[1] = ATTR_BODY;
		counts[0] = counts[1] = 1;
		return 2;
	case OP_SELECT_AND_SCATTER:
		if (n != 2)
			break;
		ids[0] = ATTR_SELECT;
		ids[1] = ATTR_SCATTER;
		counts[0] = counts[1] = 1;
		return 2;
	case OP_CONDITIONAL:
		if (pred && n == 2) {
			ids[0] = ATTR_TRUE_COMPUTATION;
			ids[1] = ATTR_FALSE_COMPUTATION;
			counts[0] = counts[1] = 1;
			return 2;
		}
		ids[0] = ATTR_BRANCH_COMPUTATIONS;
		counts[0] = n;
		return 1;
	case OP_CUSTOM_CALL:
		ids[0] = ATTR_CALLED_COMPUTATIONS;
		counts[0] = n;
		return 1;
	default:
		if (n != 1)
			break;
		ids[0] = opcode_has(op, OPF_TO_APPLY) ? ATTR_TO_APPLY : ATTR_CALLS;
		counts[0] = 1;
		return 1;
	}
	ids[0] = ATTR_CALLED_COMPUTATIONS;
	counts[0] = n;
	return 1;
}

int fields_is_callee(attr_id id)
{
	return attr_proto_kind(id) == PK_CALLEE;
}
