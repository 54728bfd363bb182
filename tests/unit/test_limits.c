/* Bad-input classes a golden file cannot express (ecosystem.md §4.2): very
 * long tokens and lines, deep nesting through the literal API, and huge
 * shapes given as text with few values. */
#include <stdlib.h>
#include <string.h>

#include "hloi.h"
#include "unit.h"

/* A program whose operand name is a 4 MiB identifier that does not exist:
 * a located error (column just after `add(`), not a crash. */
static void test_long_token(void)
{
	const char *head = "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT r = f32[] add(x, ";
	const char *tail = ")\n}\n";
	size_t n = (size_t)4 << 20;
	size_t len = strlen(head) + n + strlen(tail);
	char *text = malloc(len + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	strcpy(text, head);
	memset(text + strlen(head), 'y', n);
	strcpy(text + strlen(head) + n, tail);

	hloi_context *ctx = NULL;
	hloi_module *m = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	hloi_status st = hloi_module_parse(&m, ctx, "long.hlo", text, len);
	if (st == HLOI_OK)
		st = hloi_module_check(m, ctx, NULL);
	CU_ASSERT_EQUAL(st, HLOI_ETYPE);
	const char *msg = hloi_context_last_error(ctx);
	CU_ASSERT_PTR_NOT_NULL(msg);
	if (msg)
		CU_ASSERT_EQUAL(strncmp(msg, "instruction does not exist: yyyy", 32), 0);
	hloi_module_free(m);
	hloi_context_free(ctx);
	free(text);
}

/* 10^5 nested braces and parentheses in literal text: a parse error. */
static void test_deep_literal_text(void)
{
	size_t n = 100000;
	char *text = malloc(2 * n + 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	for (int kind = 0; kind < 2; kind++) {
		size_t len = 0;
		if (kind == 0) {
			memcpy(text, "f32[1] ", 7);
			len = 7;
		}
		for (size_t i = 0; i < n; i++)
			text[len++] = kind == 0 ? '{' : '(';
		text[len++] = '1';
		for (size_t i = 0; i < n; i++)
			text[len++] = kind == 0 ? '}' : ')';
		hloi_context *ctx = NULL;
		hloi_literal **lits = NULL;
		size_t count = 0;
		CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
		CU_ASSERT_EQUAL(hloi_literal_parse_list(&lits, &count, ctx, "deep", text, len), HLOI_EPARSE);
		CU_ASSERT_PTR_NULL(lits);
		CU_ASSERT_TRUE(hloi_context_error_count(ctx) > 0);
		hloi_context_free(ctx);
	}
	free(text);
}

/* A literal whose shape is huge but whose text has a few values is an
 * error found without allocating the buffer (it would be 291 GB). */
static void test_huge_literal_few_values(void)
{
	const char *text = "f32[24294967296,3] {{1,2,3},{4,5,6}}";
	hloi_context *ctx = NULL;
	hloi_literal **lits = NULL;
	size_t count = 0;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_literal_parse_list(&lits, &count, ctx, "huge", text, strlen(text)), HLOI_EPARSE);
	const char *msg = hloi_context_last_error(ctx);
	CU_ASSERT_PTR_NOT_NULL(msg);
	if (msg)
		CU_ASSERT_STRING_EQUAL(msg, "expects 24294967296 elements in the []th element, but sees 2");
	hloi_context_free(ctx);

	/* A scalar value for a huge array shape (found by fuzzing). */
	text = "s32[2,344444444444444444] 7";
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_literal_parse_list(&lits, &count, ctx, "huge", text, strlen(text)), HLOI_EPARSE);
	msg = hloi_context_last_error(ctx);
	CU_ASSERT_PTR_NOT_NULL(msg);
	if (msg)
		CU_ASSERT_STRING_EQUAL(msg, "expects nested array in rank 2, but sees 0");
	hloi_context_free(ctx);
}

/* A layout entry may be written negative: the layout is invalid (not a
 * confusing parse error about `{`). */
static void test_negative_layout_entry(void)
{
	hloi_context *ctx = NULL;
	hloi_shape *s = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	hloi_status st = hloi_shape_parse(&s, ctx, "shape", "f32[2,3]{-1,0}");
	CU_ASSERT_EQUAL(st, HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(s);
	const char *msg = hloi_context_last_error(ctx);
	CU_ASSERT_PTR_NOT_NULL(msg);
	if (msg)
		CU_ASSERT_PTR_NOT_NULL(strstr(msg, "out-of-bounds value: {-1,0}"));
	hloi_shape_free(s);
	hloi_context_free(ctx);
}

static const unit_test limit_tests[] = {
	{ "long_token", test_long_token },
	{ "deep_literal_text", test_deep_literal_text },
	{ "huge_literal_few_values", test_huge_literal_few_values },
	{ "negative_layout_entry", test_negative_layout_entry },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "limits", limit_tests },
	{ NULL, NULL },
};
