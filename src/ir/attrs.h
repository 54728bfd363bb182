/* Instruction attributes (`name=value` after an instruction's operands),
 * typed by their kind in ir/attrs.def. The text front end parses them
 * (text/attr_text.c), the proto front end builds them from XLA's fields
 * (proto/load.c), the checker and engines read them through the accessors
 * below, and the printers write them back in XLA's syntax.
 *
 * An instruction keeps its attributes in a small array (written order);
 * every pointer inside a value points into the module's arena.
 */
#ifndef HLOI_IR_ATTRS_H
#define HLOI_IR_ATTRS_H

#include <stdint.h>

#include "core/literal.h"
#include "core/shape.h"
#include "util/arena.h"
#include "util/diag.h"

typedef enum attr_id {
#define X(E, name, kind, field, pk, fn, pname) ATTR_##E,
#include "ir/attrs.def"
#undef X
	ATTR_COUNT
} attr_id;

typedef enum attr_kind {
	AK_INT,
	AK_BOOL,
	AK_FLOAT,
	AK_STRING,
	AK_WORD,
	AK_INTS,
	AK_INTS_LIST,
	AK_COMP,
	AK_COMPS,
	AK_NAMES,
	AK_WINDOW,
	AK_DIM_LABELS,
	AK_SLICE,
	AK_PADDING,
	AK_PRECISION,
	AK_SHAPE,
	AK_SHAPES,
	AK_LITERAL,
	AK_REPLICA_GROUPS,
	AK_SPARSITY,
	AK_RAW
} attr_kind;

/* How an attribute maps to its HloInstructionProto field (attrs.def's
 * `mapping` column, documented there). */
typedef enum attr_pkind {
	PK_NONE,
	PK_INT,
	PK_INT1,
	PK_INTS,
	PK_BOOL,
	PK_FLOAT,
	PK_WORD,
	PK_TEXT,
	PK_BYTES,
	PK_ENUM,
	PK_ENUM_LC,
	PK_ENUMS,
	PK_MSG,
	PK_MSGS,
	PK_CALLEE,
	PK_IDS
} attr_pkind;

/* `{1,2}` */
typedef struct int_list {
	int present;
	int n;
	int64_t *v;
	loc at;        /* the whole value */
} int_list;

/* `{{0,1},{2}}` */
typedef struct ints_list {
	int n;
	int_list *v;
} ints_list;

/* Words or names: `{a, b}` (computations, instructions, precisions). */
typedef struct word_list {
	int n;
	const char **v;
	loc *at;       /* each word */
} word_list;

/* XLA's WindowDimension; `window={size=2x2 stride=1x2 pad=0_1x1_1
 * lhs_dilate=1x1 rhs_dilate=2x1 rhs_reversal=0x1}`. */
typedef struct window_dim {
	int64_t size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate;
	int reversal;
} window_dim;

typedef struct window {
	int n;
	window_dim *d;
} window;

/* XLA's ConvolutionDimensionNumbers (`dim_labels=b01f_01io->b01f`). */
typedef struct conv_dims {
	int nspatial;
	int64_t input_batch, input_feature, input_spatial[HLOI_MAX_RANK];
	int64_t kernel_input_feature, kernel_output_feature, kernel_spatial[HLOI_MAX_RANK];
	int64_t output_batch, output_feature, output_spatial[HLOI_MAX_RANK];
} conv_dims;

/* `slice={[start:limit:stride], ...}` */
typedef struct slice_dims {
	int n;
	int64_t *start, *limit, *stride;
} slice_dims;

/* `padding=lo_hi_interior x ...` (XLA's PaddingConfig) */
typedef struct pad_dims {
	int n;
	int64_t *lo, *hi, *interior;
} pad_dims;

/* replica_groups: explicit `{{0,1},{2,3}}`, XLA's iota form
 * `[G,S]<=[d0,d1,...]T(p0,p1,...)` (G groups of S devices: iota over
 * reshape_dims, transposed by perm, reshaped to [G,S]), or a form hloi
 * keeps as written. */
typedef enum rg_form { RG_LIST, RG_IOTA, RG_RAW } rg_form;
typedef struct replica_groups {
	rg_form form;
	ints_list list;                  /* RG_LIST */
	int ngroup_dims;                 /* RG_IOTA: [G,S] */
	int64_t *group_dims;
	int nreshape;                    /* <=[d0,...] */
	int64_t *reshape_dims;
	int nperm;                       /* T(p0,...); 0 when absent */
	int64_t *perm;
	const char *raw;                 /* RG_RAW */
} replica_groups;

/* `literal=f32[2] {1, 2}` (custom-call) */
typedef struct attr_literal {
	shape *shp;
	lit_node *tree;                  /* from text */
	hloi_literal *value;             /* checker / proto: the typed value (module-owned) */
} attr_literal;

/* XLA's SparsityConfig on a convolution (`sparsity_config={lhs={sparsity=
 * 1x4 dimension=0 stride=1} rhs={...}}`): for each operand that is given as
 * a (values, metadata) tuple, or as values with the metadata the
 * convolution's operand `idx` (XLA's newer form), nnz values kept per block
 * of `block` positions along `dim`, the blocks `stride` apart (README,
 * Sparse convolution). */
typedef struct sparsity_side {
	int present;
	int64_t nnz, block, dim, stride;
	int64_t idx;                     /* the metadata operand; -1: none (a tuple operand) */
} sparsity_side;

typedef struct sparsity_config {
	sparsity_side side[2];           /* 0 lhs, 1 rhs */
} sparsity_config;

typedef struct shape_list {
	int n;
	shape *v;
} shape_list;

typedef struct attr {
	uint16_t id;       /* attr_id; ATTR_COUNT for an attribute hloi does not know */
	uint8_t kind;      /* attr_kind of the value (AK_INTS_LIST for a nested AK_INTS) */
	loc at;            /* name through value */
	loc vat;           /* the value */
	union {
		int64_t i;            /* AK_INT, AK_BOOL */
		double f;             /* AK_FLOAT */
		const char *s;        /* AK_STRING (quotes included), AK_WORD, AK_RAW, AK_COMP (name), AK_DIM_LABELS (as written) */
		int_list ints;        /* AK_INTS */
		ints_list lists;      /* AK_INTS_LIST */
		word_list words;      /* AK_COMPS, AK_NAMES, AK_PRECISION */
		window win;           /* AK_WINDOW */
		slice_dims slice;     /* AK_SLICE */
		pad_dims pad;         /* AK_PADDING */
		shape *shp;           /* AK_SHAPE */
		shape_list shapes;    /* AK_SHAPES */
		attr_literal lit;     /* AK_LITERAL */
		replica_groups *rg;   /* AK_REPLICA_GROUPS */
		sparsity_config *sp;  /* AK_SPARSITY */
	} u;
	conv_dims *conv;           /* AK_DIM_LABELS: the parsed labels */
	const char *uname;         /* id ATTR_COUNT: its name (the value is AK_RAW) */
} attr;

/* Where word j of a word list (AK_COMPS, AK_NAMES, AK_PRECISION) was
 * written; the value's place when the words carry none (read from a proto). */
static inline loc attr_word_loc(const attr *a, int j)
{
	return a->u.words.at ? a->u.words.at[j] : a->vat;
}

/* The attribute's text name ("dimensions"). */
const char *attr_name(attr_id id);
/* The name of `a` (its table name, or the name written for an unknown one). */
const char *attr_text_name(const attr *a);
/* The kind its table row declares. */
attr_kind attr_table_kind(attr_id id);
/* The HloInstructionProto field number its value goes in (0: none), the
 * field's name (`message.field` for one field of a sub-message; "" for
 * none) and how it maps (attrs.def). */
uint32_t attr_proto_field(attr_id id);
const char *attr_proto_name(attr_id id);
attr_pkind attr_proto_kind(attr_id id);
/* ATTR_COUNT when `name` (len bytes) is no attribute hloi knows. */
attr_id attr_from_name(const char *name, size_t len);

/* Unescaped contents of an AK_STRING value (`"a\"b"` -> `a"b`) in `a`;
 * NULL when out of memory. Never fails on a value the parser accepted. */
char *attr_string_value(arena *a, const char *quoted, size_t *len);

/* Where the attribute goes when printed (ascending; attrs.def's order). */
int attr_order_key(const attr *a);

/* Whether two parsed conv_dims agree. */
int conv_dims_equal(const conv_dims *a, const conv_dims *b);

#endif
