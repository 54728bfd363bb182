/* Internal interface between the HLO text grammar (grammar/hlo.l, hlo.y) and
 * its driver (src/text/parse.c): the parser state the lexer and the actions
 * share, token values, and the helpers the grammar actions call. */
#ifndef HLOI_TEXT_PARSE_INT_H
#define HLOI_TEXT_PARSE_INT_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "core/literal.h"
#include "core/shape.h"
#include "ir/ir.h"
#include "util/arena.h"
#include "util/diag.h"

/* Brackets deeper than this are refused by the lexer, which bounds bison's
 * stack and every recursion over parsed trees (literals, tuple shapes). */
#define PARSE_MAX_DEPTH 1000
/* Flex holds at most a handful of blocks at a time (scanner, buffer stack,
 * buffer, its text). */
#define PARSE_FLEX_BLOCKS 16

/* The value of a token: spans are byte offsets into the source text. */
typedef struct tokval {
	size_t s, e;     /* the token's text (names without `%`, `:` or `=`) */
	size_t vs, ve;   /* RAWATTR: the value's text */
	uint64_t u;      /* INT: magnitude; TYPE: the etype */
	int neg;         /* INT: written with a minus sign */
	int ovf;         /* INT: does not fit in 64 bits */
} tokval;

/* Singly linked list in the arena (counts first so arrays are sized once). */
typedef struct pnode {
	struct pnode *next;
	void *p;
	int64_t i;
	loc at;
	int kind;
	tokval tok;
	shape *shp;      /* an OPERAND_NESTED `name#i` operand's written shape */
} pnode;

/* pnode.kind of an operand that is a nested instruction (p: its name). */
#define OPERAND_NESTED 'N'

typedef struct plist {
	pnode *head, *tail;
	int n;
} plist;

/* The light list for long lists of pointers (instructions, literal items). */
typedef struct lnode {
	struct lnode *next;
	void *p;
} lnode;

typedef struct llist {
	lnode *head, *tail;
	int n;
} llist;

/* A computation's instructions in source order (an arena array), with its
 * first ROOT and how many were written ROOT. */
typedef struct ivec {
	instr **v;
	int n;
	int nroots;
	instr *root;
} ivec;

/* A `{...}` of layout items: `T(8,128)(2,1)`, `pad(3,5)`, ... */
typedef struct layout_item {
	tokval name;     /* IDENT, or s == e for `*(...)` / `#(...)` */
	int sym;         /* '*' or '#' when not a word */
	loc at;
	plist groups;    /* of plist* (p), each a list of group items */
} layout_item;

/* One attribute as the lexer captured it: its name and its value's text. */
typedef struct attr_item {
	tokval name;     /* the name; vs, ve: the value's span */
	loc at;          /* from the name to the end of the value */
} attr_item;

/* `name(args)`: the part after the result shape. */
enum opcall_kind { OC_PARAMETER, OC_CONSTANT, OC_GENERIC };
typedef struct opcall {
	int kind;
	tokval op;
	loc op_at;
	loc call_at;     /* from the opcode to `)` */
	tokval num;      /* parameter number */
	loc num_at;
	lit_node *lit;
	plist operands;  /* nodes: tok = name, p = written shape* or NULL */
} opcall;

/* `(p: f32[2]) -> f32[2]` */
typedef struct sigval {
	plist params;    /* nodes: tok = label, p = shape* */
	shape *result;
	loc at;
} sigval;

/* A large program's text makes a list node, a call and an attribute item
 * per instruction; p_recycle gives them back to p_alloc once the
 * instruction is built, so parsing holds only what the IR keeps. */
#define P_FREE_CLASSES 17

typedef struct pstate {
	hloi_context *ctx;
	int src;
	const char *text;
	size_t len;
	arena *a;
	module *m;            /* module mode */
	int start_token;      /* injected before the first real token */
	int literal_mode;     /* `{` after a shape may start its value */

	/* lexer */
	size_t pos;           /* offset of the next byte */
	size_t feed;          /* offset of the next byte flex has not read */
	int prev_tok;         /* kind of the previous token */
	int before_tok;       /* and of the one before it */
	int bol;              /* a newline was passed since the previous token */
	int last_bol;         /* the previous token started a line */
	int depth;            /* open brackets */
	size_t bad_end;       /* end of the last invalid character reported */
	size_t attr_start, attr_name_end, val_start, val_end;
	int vdepth, vseen;
	int vgap;             /* the value may go on after one blank (literal=) */
	int vmesh;            /* replica_groups=mesh[...][, device_ids=(...)] {...}: the
			       * value goes on over a blank before '{' and a ', device_ids=' */
	int skip;             /* error recovery: drop tokens up to a line start */
	int fatal;            /* the lexer stopped; no syntax error to add */
	int nsyntax;          /* syntax errors reported */
	int oom;
	jmp_buf jmp;          /* flex's fatal errors land here */
	void *flex_live[PARSE_FLEX_BLOCKS]; /* flex's live allocations */
	int nflex;

	/* results */
	int entry_seen;
	llist comps;          /* of computation* */
	char **comp_names;    /* hash set of their names (hloi_malloc'd) */
	size_t comp_names_cap, comp_names_n;
	llist lits;           /* literal mode: the values */
	llist lit_shapes;     /* and their shapes */
	shape *shape_out;
	llist shape_list;     /* P_SUB_SHAPES: the shapes */
	ivec sub_instrs;      /* P_SUB_COMPUTATION: the instructions */
	ivec cur;             /* the computation being parsed: its instructions so
				* far, in a growing buffer (hloi_malloc'd, freed by
				* hlo_text_run) that p_take_instrs copies out */
	int cur_cap;
	int sub_depth;        /* parsers this one is nested in (values parsed in place) */
	int nhoisted;         /* nested instructions named so far in this computation */
	llist hoisted;        /* nested operand instructions waiting for their user */
	llist gtes;           /* get-tuple-elements made for `name#i` in this computation */
	llist gte_keys;       /* and what each stands for (`name#i#j`) */
	shape *free_shapes;   /* temporary shapes to reuse (linked through .tuple) */
	void *free_small[P_FREE_CLASSES]; /* p_recycle'd blocks by 16-byte size class */
} pstate;

/* Runs the scanner and the parser over st->text from st->pos to st->len
 * (grammar/hlo.l). Returns bison's result: 0 accepted, 1 syntax errors,
 * 2 out of memory. */
int hlo_text_run(pstate *st);

/* Values parsed by another entry point of the grammar, in place: a child
 * parser over text[s, e) of the same source, arena, module and diagnostics.
 * Returns 0 with *out (hloi_free it) when the value parsed, 1 when it had
 * errors (reported), -1 when out of memory. */
enum { P_SUB_SHAPE, P_SUB_SHAPES, P_SUB_LITERAL, P_SUB_COMPUTATION };
int p_subparse(pstate *st, int what, size_t s, size_t e, pstate **out);

/* --- attribute values (text/attr_text.c) -------------------------------------- */

/* A cursor over a value's text; errors read "malformed <what>: expects ...". */
typedef struct vcur {
	pstate *st;
	size_t p, end;
	int bad;
	const char *what;
} vcur;
void vc_init(vcur *c, pstate *st, size_t s, size_t e, const char *what);
void vc_skip(vcur *c);
void vc_fail(vcur *c, const char *what);
int vc_peek(vcur *c);          /* the next non-blank byte, or -1 */
int vc_eat(vcur *c, char ch);
void vc_expect(vcur *c, char ch);
int64_t vc_int(vcur *c);
int vc_word(vcur *c, size_t *s, size_t *e);

/* Parses the value text[vs, ve) of attribute `a` (a->id set; `name` its
 * written name) of instruction `instr_name`. 0 when fine, 1 after a
 * reported error, -1 when out of memory. */
int p_attr_value(pstate *st, attr *a, const char *name, const char *instr_name, size_t vs, size_t ve);

/* --- helpers for the grammar actions (src/text/parse.c) ------------------- */

void *p_alloc(pstate *st, size_t n);
char *p_text(pstate *st, size_t s, size_t e);
int p_push(pstate *st, plist *l, pnode **out);
int p_lpush(pstate *st, llist *l, void *p);
/* A zeroed shape from the free list or the arena; p_shape_free gives a
 * temporary back once its value has been copied out. */
/* A new instruction (instr_new); NULL with st->oom set. */
/* Gives a block of p_alloc(st, n) back for reuse (blocks over 256 bytes
 * stay in the arena); the caller holds no pointer into it any more. */
void p_recycle(pstate *st, void *p, size_t n);
/* Recycles every node of a list and empties it. */
void p_recycle_list(pstate *st, plist *l);
instr *p_instr_new(pstate *st);
/* The module's interned copy of s (shape_none with st->oom set when out of
 * memory). */
const shape *p_intern(pstate *st, const shape *s);
shape *p_shape_new(pstate *st);
void p_shape_free(pstate *st, shape *s);
/* The INT token as int64; reports an error and returns nonzero when out of range. */
int p_int64(pstate *st, const tokval *t, loc at, int64_t *out);

/* Each returns 0, or -1 when out of memory (st->oom set). */
int p_dim(pstate *st, shape **sp, const tokval *t, loc at, int kind);
int p_array_shape(pstate *st, shape **out, shape *dims, etype t, loc at);
int p_tuple_shape(pstate *st, shape **out, const llist *elems);
/* `b(s)`: marks the array shape s a buffer (an error for any other shape). */
void p_buffer_shape(pstate *st, shape *s, loc at);
int p_layout(pstate *st, shape *s, const plist *m2m, const llist *items, loc at);
int p_lit_scalar(pstate *st, lit_node **out, int kind, loc at);
int p_lit_list(pstate *st, lit_node **out, int kind, const llist *items, loc at);
int p_instr(pstate *st, instr **out, int is_root, const tokval *name, loc name_at,
	    shape *sh, opcall *oc, const llist *attrs, loc at);
/* A nested instruction written as an operand (`add(f32[] constant(1), x)`):
 * made an instruction of its own, queued on st->hoisted, and *out is an
 * operand node naming it. */
int p_nested(pstate *st, pnode **out, shape *sh, opcall *oc, loc at);
/* The compact tuple-element operand `name#i#j` (`indices` of INT tokens):
 * as XLA's parser, a get-tuple-element per index not yet made in this
 * computation (named `name_i`, `name_i_j`), queued on st->hoisted; *out
 * names the last one, with the written shape `sh` (or NULL). */
int p_gte_operand(pstate *st, pnode **out, shape *sh, const tokval *name, const plist *indices, loc at);
/* Appends `in` to the instructions of the computation being parsed
 * (st->cur); -1 when out of memory. */
int p_push_instr(pstate *st, instr *in);
/* The computation's instructions so far, copied into the arena, and
 * st->cur emptied for the next one; -1 when out of memory. */
int p_take_instrs(pstate *st, ivec *out);
/* Renames the get-tuple-elements p_gte_operand made whose names other
 * instructions of the computation (`instrs`) have; -1 when out of memory. */
int p_uniquify_gtes(pstate *st, const ivec *instrs);
/* Builds the computation of the instructions parsed since the last one. */
int p_computation(pstate *st, int is_entry, loc entry_at, const tokval *name, loc name_at,
		  sigval *sig);
/* A computation written in place (an attribute's value) named `name`. */
/* The attributes after a computation's `}` (execution_thread=), for the
 * computation just built; others are skipped with a warning. */
int p_computation_attrs(pstate *st, const plist *attrs);
/* Keeps the text of the stack frame tables (span `at`, empty when none). */
int p_stack_frames(pstate *st, loc at);
int p_computation_named(pstate *st, const char *name, loc at, const ivec *instrs);
int p_header(pstate *st, const tokval *name, const plist *attrs);
int p_literal_entry(pstate *st, shape *s, lit_node *lit);

#endif
