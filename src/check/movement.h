/* Helpers shared by the shape rules of the data-movement ops (movement.c)
 * and of gather and scatter (gather.c): messages that join int lists the
 * way XLA's StrJoin does, XLA's type names, and the verifier's
 * mixed-precision rule. */
#ifndef HLOI_CHECK_MOVEMENT_H
#define HLOI_CHECK_MOVEMENT_H

#include <stdint.h>

#include "check/check_internal.h"
#include "util/strbuf.h"

/* Appends v[0..n) separated by sep (XLA's StrJoin). */
void mv_join(strbuf *b, const int64_t *v, int n, const char *sep);
/* Reports the message built in m at `at` (or the out-of-memory state);
 * frees m. Returns 1, for `return mv_report(...)`. */
int mv_report(checker *c, loc at, strbuf *m);
/* XLA's PrimitiveType_Name: the type name in capitals ("F32", "BF16"). */
const char *mv_type_name(char *buf, etype t);
/* The span of `name={...}` of attribute id, else the opcode. */
loc mv_attr_at(const checker *c, const instr *in, attr_id id);
/* The verifier's CheckMixedPrecisionOperands: operands whose floating-point
 * element types differ are refused; reports and returns 1. */
int mv_mixed_precision(checker *c, const instr *in);
/* "Expected array argument for WHAT, but got SHAPE." when operand k is a
 * tuple (XLA's ExpectArray); returns 1 then. */
int mv_expect_array(checker *c, const instr *in, int k, const char *what);
/* The written result as XLA's HloInstruction::ToString prints it, without
 * attributes: `%name = f32[2]{0} opcode(f32[2]{0} %a)`. */
void mv_instr_text(strbuf *b, const instr *in);

#endif
