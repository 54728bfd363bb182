/* The IR both front ends build and the checker and engines read: a module of
 * computations of instructions, all in the module's arena.
 *
 * The parser fills in what was written (names, operand names, declared
 * shapes, attributes, locations). The checker then resolves names, infers
 * and verifies shapes, and fills the fields marked "checker".
 */
#ifndef HLOI_IR_IR_H
#define HLOI_IR_IR_H

#include <stdint.h>

#include "core/literal.h"
#include "core/shape.h"
#include "hloi.h"
#include "ir/attrs.h"
#include "util/arena.h"
#include "util/diag.h"

typedef enum opcode {
#define X(E, text, arity, cat, infer, ev, flags, types) OP_##E,
#include "ir/opcodes.def"
#undef X
	OP_COUNT
} opcode;

typedef enum op_category { OPC_BINARY, OPC_COMPARE, OPC_UNARY, OPC_DATA, OPC_SHAPE, OPC_OTHER } op_category;

const char *opcode_name(opcode op);
/* OP_COUNT when the word is not an opcode. */
opcode opcode_from_name(const char *s, size_t len);
int opcode_arity(opcode op);             /* -1: any number */
op_category opcode_category(opcode op);
/* Whether its category is an elementwise one (unary, binary, compare). */
int opcode_is_elementwise_category(opcode op);
/* Whether the engines evaluate it (its eval column is not `none`). */
int opcode_is_evaluated(opcode op);

/* The facts of the `flags` column (ir/opcodes.def says what each means). */
enum {
	OPF_ELEMENTWISE = 1u << 0,
	OPF_FOLLOWS_SIZES = 1u << 1,
	OPF_ON_SIZES = 1u << 2,
	OPF_PASSES_SIZES = 1u << 3,
	OPF_TAKES_UNBOUNDED = 1u << 4,
	OPF_BUFFERS = 1u << 5,
	OPF_SIDE_EFFECT = 1u << 6,
	OPF_TILED = 1u << 7,
	OPF_OWN_ASYNC = 1u << 8,
	OPF_SHAPE_REQUIRED = 1u << 9,
	OPF_MIXED = 1u << 10,
	OPF_ARITHMETIC = 1u << 11,
	OPF_PRED_RESULT = 1u << 12,
	OPF_PART_RESULT = 1u << 13,
	OPF_DIMENSIONS = 1u << 14,
	OPF_COLLECTIVE = 1u << 15,
	OPF_TO_APPLY = 1u << 16,
	OPF_TRANSCENDENTAL = 1u << 17,
};
#define OPF_EW (OPF_ELEMENTWISE | OPF_FOLLOWS_SIZES | OPF_TILED | OPF_MIXED)
unsigned opcode_flags(opcode op);  /* 0 for OP_COUNT */
/* Whether op has every flag of f. */
int opcode_has(opcode op, unsigned f);

/* The `types` column: element kinds as bits (TK_*), and the families of
 * XLA's messages for a kind an elementwise op does not take (their texts
 * are the checker's, check/elementwise.c). */
#define TK_PRED (1u << KIND_PRED)
#define TK_SINT (1u << KIND_SINT)
#define TK_UINT (1u << KIND_UINT)
#define TK_FLOAT (1u << KIND_FLOAT)
#define TK_COMPLEX (1u << KIND_COMPLEX)
#define TK_INT (TK_SINT | TK_UINT)
#define TK_NUMBER (TK_INT | TK_FLOAT | TK_COMPLEX)
#define TK_ALL (TK_PRED | TK_NUMBER)
typedef enum type_message {
	TM_NONE,                /* no gate (TG_NONE), or every kind taken */
	TM_FLOATING,            /* "... to be floating for <op> operation ..." */
	TM_FLOATING_OR_COMPLEX, /* "... to be floating or complex for <op> ..." */
	TM_NUMBER,              /* "... integral, floating or complex for <op> ..." */
	TM_SIGNED,              /* "... signed or complex for <op> ..." */
	TM_CLZ,                 /* "... integral ... to Clz operation ..." */
	TM_POPCNT,              /* "... integral ... to PopulationCount ..." */
	TM_NOT,                 /* "... pred or an integral ... to Not ..." */
	TM_IS_FINITE,           /* "... floating point for IsFinite ..." */
	TM_LOGICAL,             /* "... pred or integral ... and/or/xor ..." */
	TM_INTEGRAL,            /* "Expected integral type for operation <op> ..." */
	TM_FLOATING_POINT,      /* "Expected floating-point type for operation <op> ..." */
	TM_COMPLEX_COMPOSE,     /* "... floating for complex compose operation ..." */
} type_message;
typedef struct op_types {
	unsigned takes;         /* TK_* XLA's shape inference accepts (0: no gate) */
	type_message message;   /* for a kind outside takes */
	unsigned evaluates;     /* TK_* the engines compute */
} op_types;
const op_types *opcode_types(opcode op);
/* The bit of element kind k, to test against op_types' sets. */
#define TK_OF(k) (1u << (k))

typedef enum cmp_direction { CMP_NONE = 0, CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } cmp_direction;
typedef enum cmp_type { CMPT_NONE = 0, CMPT_FLOAT, CMPT_TOTALORDER, CMPT_SIGNED, CMPT_UNSIGNED } cmp_type;
const char *cmp_direction_name(cmp_direction d);   /* "EQ" */
cmp_direction cmp_direction_from_name(const char *s, size_t len); /* CMP_NONE if unknown */
const char *cmp_type_name(cmp_type t);             /* "FLOAT" */
cmp_type cmp_type_from_name(const char *s, size_t len);           /* CMPT_NONE if unknown */

/* An attribute hloi keeps as written at the module level (header
 * attributes): `name=value`, value being its exact source text. */
typedef struct raw_attr {
	const char *name;
	const char *value;
	loc at;
} raw_attr;

typedef struct instr instr;
typedef struct computation computation;

typedef struct operand {
	const char *name;      /* without `%` */
	loc at;
	int has_shape;         /* written as `f32[2]{0} %a` */
	shape *declared;       /* that shape (module arena), or NULL */
	instr *def;            /* checker: the defining instruction */
	/* checker: operand dimension j feeds result dimension out_dim[j]
	 * (binary ops, compare and broadcast; a size-1 operand dimension
	 * against a larger result dimension is stretched). */
	int8_t out_dim[HLOI_MAX_RANK];
} operand;

struct instr {
	opcode op;
	const char *name;      /* without `%` */
	loc at;                /* the whole instruction */
	loc name_at, op_at;
	int is_root;           /* written ROOT */
	int has_shape;         /* the result shape was written */
	const shape *shape;    /* as written (has_layout says if a layout was), interned
				* (module_intern_shape); shape_none when not written */
	int nops;
	operand *ops;

	int64_t parameter_number;        /* parameter(N) */
	loc parameter_at;
	lit_node *literal;               /* constant(...) */

	/* attributes, in written order (ir/attrs.h) */
	int nattrs;
	attr *attrs;
	/* XLA's async sugar: written `<op>-start`, `<op>-update`, `<op>-done`
	 * (op is an async-start/-update/-done, async_op the opcode it wraps).
	 * A sugared async-start calls a computation of parameters and one
	 * instruction (async_wrapped) holding the wrapped op's attributes,
	 * as XLA's parser builds it; its `calls` attribute is that
	 * computation's name and is not printed. (Read from a proto, the
	 * update and done of such a start point at that instruction too, and
	 * their `calls` is not printed either.) */
	int async_sugar;
	opcode async_op;
	instr *async_wrapped;
	/* Read from a proto: the message's fields the IR does not model (and
	 * unknown ones), as wire bytes in the module arena; the proto writer
	 * merges them back. NULL when not read from a proto. */
	const uint8_t *pb_rest;
	size_t pb_rest_len;

	/* checker */
	int position;          /* index in its computation */
	etype mixed_type;      /* checker, allow_mixed_precision: the inferred float
				* type where the declared one differs, else ET_INVALID */
	const shape *mixed_tuple; /* the same for a tuple result: the inferred
				* tuple (interned) where declared elements' float
				* types differ, else NULL */
	const shape *result;   /* inferred shape, with its layout, interned; shape_none
				* before the check */
	int ncalled;           /* the computations it calls, in XLA's order */
	computation **called;  /* (to_apply, calls, condition, body, branches, ...) */
	computation *callee;   /* called[0], or NULL */
	hloi_literal *value;   /* constants: the converted literal (owned by the module) */
};

struct computation {
	const char *name;
	loc name_at;
	int is_entry;          /* written ENTRY */
	int ninstrs;
	instr **instrs;        /* source order */
	instr *root;           /* the ROOT instruction, else the last */
	/* optional signature `(p: f32[2]) -> f32[2]` */
	int has_signature;
	int nsig_params;
	const char **sig_names;
	shape *sig_shapes;
	shape sig_result;
	loc sig_at;
	/* `execution_thread="name"` after the closing brace; NULL: the main
	 * thread */
	const char *execution_thread;
	int execution_thread_seen; /* parser: the attribute was written */
	const uint8_t *pb_rest;  /* as instr's */
	size_t pb_rest_len;
	int async_wrapped;     /* called by a sugared async-start (printed as its attributes) */
	/* checker */
	int nparams;
	instr **params;        /* by parameter number */
	/* checker, a run sized from its inputs (check_module_sized): a
	 * computation whose parameters declare `?` runs as a copy of it per
	 * distinct signature of sizes its call sites give (sized_from the
	 * original, sized_args its parameters' shapes, interned); the
	 * original keeps its copies in sized_copies, linked by next_sized */
	computation *sized_from;
	const shape **sized_args;
	computation *sized_copies, *next_sized;
	int sized_epoch;       /* the sized check that last checked the copy */
	int sized_state;       /* then: 1 being checked, 2 usable, 3 errors */
};

typedef struct alias_entry {
	int n_output_index;
	int64_t output_index[HLOI_MAX_RANK];
	int64_t parameter_number;
	int n_parameter_index;
	int64_t parameter_index[HLOI_MAX_RANK];
	int must_alias;
	loc at;
} alias_entry;

/* An attribute the parser skipped with a warning (kept for --strict). */
typedef struct unknown_attr {
	const char *name;
	loc at;
	int header;            /* a module header attribute */
	struct unknown_attr *next;
} unknown_attr;

struct hloi_module {
	arena arena;
	int src;               /* source id in the context that parsed it */
	const char *name;
	int has_header;        /* written `HloModule name` */
	int ncomps;
	computation **comps;   /* source order */
	computation *entry;    /* the ENTRY computation, else the last */
	hloi_broadcast_mode broadcast_mode;  /* header broadcast_mode=, else DEFAULT */
	loc broadcast_mode_at;
	int nalias;
	alias_entry *alias;    /* header input_output_alias={...} */
	loc alias_at;
	int nheader_attrs;
	raw_attr *header_attrs;  /* other header attributes, kept verbatim */
	/* XLA's stack frame tables after the header (`FileNames` ...
	 * `StackFrames`), as written (trimmed); NULL when absent. */
	const char *stack_frames;
	int checked;           /* checker: check_module succeeded */
	uint64_t constant_bytes;  /* checker: the buffers of every constant's value */
	int64_t replicas, partitions; /* checker: the participants a run simulates */
	int participant_dependent;    /* checker: a collective or an id is evaluated */
	hloi_broadcast_mode checked_mode;
	/* checker: a value has a `?` dimension, so a run first sizes the
	 * entry's parameters from its inputs (check_module_sized) with the
	 * options of the last check */
	int unbounded;
	hloi_check_options check_opts;
	int64_t unbounded_size;  /* random inputs' size of a `?` (0: HLOI_UNBOUNDED_SIZE_DEFAULT) */
	int check_epoch;       /* checker: counts the checks, for the sized copies' state */
	int nvalues;           /* checker: constants converted, owned here */
	hloi_literal **values;
	const char *filename;  /* for diagnostics without a source location */
	/* freed arrays an engine's run kept for the next run of the module
	 * (eval/base/values.c): a tuple owning them, taken and given back
	 * atomically (runs may overlap); NULL when none */
	_Atomic(hloi_literal *) kept;
	int nsnapshot_args;    /* HloSnapshot arguments (owned here) */
	hloi_literal **snapshot_args;
	int nunknown;          /* attributes skipped as unknown, source order */
	unknown_attr *unknown;
	const uint8_t *pb_rest;  /* as instr's */
	size_t pb_rest_len;
	/* the instructions' shapes, interned (module_intern_shape): an
	 * open-addressing set, hloi_malloc'd; the shapes are in the arena */
	const shape **shape_tab;
	size_t shape_tab_cap, shape_tab_n;
};
typedef struct hloi_module module;

/* An empty module with its arena. */
hloi_status module_create(module **out);
/* Frees the arena and the converted constants. */
void module_destroy(module *m);
/* A zeroed instruction in arena `a` whose shape and result are shape_none;
 * NULL when out of memory. */
instr *instr_new(arena *a);

/* The module's copy of `s` (deep: tuple elements too), one per distinct
 * shape (shape_identical), immutable and alive as long as the module; NULL
 * when out of memory. A large program has few distinct shapes, so an
 * instruction holds a pointer, not a shape. */
const shape *module_intern_shape(module *m, const shape *s);

/* Finds a computation by name, or NULL. */
computation *module_find_computation(const module *m, const char *name);

/* XLA's printer writes an async-start whose computation is parameters and
 * one instruction as `<op>-start` (and its update and done likewise):
 * marks such instructions of a module read from a proto as sugared
 * (instr.async_sugar), except those wrapping an opcode that has async forms
 * of its own, which the sugar would read back as those. */
void module_mark_async_sugar(module *m);
/* Whether an async-start's or async-update's shape `s` leaves its result
 * to be filled in later in the chain: written `()` where the called
 * computation's result `root` is not (XLA's `call-start()` of the newer
 * syntax, whose updates bring the operands). */
int async_result_pending(const shape *s, const shape *root);
/* Whether `<op>-start` may stand for an async-start wrapping `op`. */
int opcode_async_wrappable(opcode op);

/* --- attribute lookups (NULL / 0 when the instruction has no such
 * attribute, or one of another kind) ---------------------------------------- */
const attr *instr_attr(const instr *in, attr_id id);
const int_list *instr_ints(const instr *in, attr_id id);
/* AK_INT / AK_BOOL: 1 and *out set when present. */
int instr_int(const instr *in, attr_id id, int64_t *out);
/* The operand dimension each dimension of dot's result comes from: the
 * batch dimensions (lhs_batch_dims' order), then lhs's and rhs's other
 * non-contracting ones, in order. Fills from_op[r] (0 lhs, 1 rhs) and
 * from_dim[r]; returns the result's rank. */
int dot_result_sources(const instr *in, int lhs_rank, int rhs_rank, int *from_op, int *from_dim);
/* Whether `in` on `<=N` operands is computed on the elements within their
 * sizes (the OPF_ON_SIZES rows: concatenate, pad, reverse, sort,
 * reduce-window, convolution, select-and-scatter; and a reduce of several
 * inputs; eval/kernels/dynamic.c): such an op takes and makes `<=N` values. */
int opcode_dynamic_on_sizes(const instr *in);

/* whether list l (NULL: empty) holds v */
int int_list_has(const int_list *l, int64_t v);
/* The dimension each dimension r of gather's result takes its size from:
 * from_op[r] 0 and from_dim[r] the operand dimension its offset dimension
 * takes whole (slice size operand_dims[d]), 1 and the indices' batch
 * dimension, or from_op[r] -1 (an offset dimension sliced in part). */
int gather_result_sources(const instr *in, const int64_t *operand_dims, int operand_rank, int indices_rank,
			  int result_rank, int *from_op, int *from_dim);
/* AK_BOOL: the value, or `dflt` when absent. */
int instr_bool(const instr *in, attr_id id, int dflt);
/* AK_WORD / AK_STRING / AK_RAW / AK_COMP text, or NULL. */
const char *instr_text(const instr *in, attr_id id);
/* --- custom-call targets: the built-in ones of ir/custom_calls.def, then
 * the embedder's (hloi_custom_call_register) ------------------------------- */
typedef enum cc_target {
#define X(E, name, rule, type) E,
#include "ir/custom_calls.def"
#undef X
	CC_COUNT
} cc_target;
/* The target's name without the quotes it may be written with: *len bytes
 * from the returned pointer. */
const char *custom_call_unquote(const char *target, size_t *len);
/* The built-in target named `target` (quotes allowed), or -1. */
int custom_call_builtin(const char *target);
/* The element type a built-in LAPACK target works in (ET_INVALID for the
 * others). */
etype custom_call_builtin_type(cc_target id);
/* Whether `target` is one of the annotations evaluated as the identity of
 * their one operand (Sharding, SPMDFullToShardShape, SPMDShardToFullShape,
 * MoveToHost, MoveToDevice). */
int custom_call_is_identity(const char *target);
/* The embedder's registration of `target` (quotes allowed), or NULL. The
 * pointer lives until a target is unregistered. */
const hloi_custom_call *custom_call_user(const char *target);
/* Whether the (checked) custom-call `in` has a first called computation
 * whose parameters take its operands and whose root gives its declared
 * result: an unknown target is then evaluated by calling it. */
int custom_call_runs_callee(const instr *in);
/* The integer `key = N` of a backend_config written as an attribute
 * dictionary (`{uplo = 76 : ui8}`, how JAX's FFI targets get theirs): 1 and
 * *out set when present. */
int custom_call_config_int(const char *config, const char *key, int64_t *out);
/* The boolean `key = true` or `key = false` of such a backend_config: 1
 * and *out set when present. */
int custom_call_config_bool(const char *config, const char *key, int *out);
/* Whether a module header attribute is one hloi reads (XLA's own and
 * broadcast_mode); others are kept as written but mean nothing to hloi. */
int header_attr_known(const char *name);
/* compare's direction= and type= decoded (CMP_NONE / CMPT_NONE if absent). */
cmp_direction instr_direction(const instr *in);
cmp_type instr_comparison_type(const instr *in);
/* Sets (adds or replaces) int list attribute `id` of `in` with n values
 * copied into arena `a`; -1 when out of memory. */
int instr_set_ints(arena *a, instr *in, attr_id id, const int64_t *v, int n);
/* Sets (or adds) an integer attribute; -1 when out of memory. */
int instr_set_int(arena *a, instr *in, attr_id id, int64_t v);
void instr_remove_attr(instr *in, attr_id id);
/* Where to point a diagnostic about attribute `id` (its value, else the
 * instruction). */
loc instr_attr_loc(const instr *in, attr_id id);
/* The j-th computation attribute `id` names (to_apply, condition, body,
 * branch_computations, ...) once the checker has resolved them, or NULL. */
computation *instr_called(const instr *in, attr_id id, int j);
/* Its slot in in->called (to put a sized copy there), or NULL. */
computation **instr_called_slot(const instr *in, attr_id id, int j);

#endif
