/* Unit tests for the StableHLO reader (src/mlir/): the HLO text it writes
 * for types, dense constants and op forms, and where its errors point. */
#include <stdio.h>
#include <string.h>

#include "hloi.h"
#include "mlir/mlir.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/strbuf.h"
#include "unit.h"

/* Lowers `text`; returns the HLO text (hloi_malloc'd) or NULL, and the
 * first error's line:col in *where. */
static char *lower(const char *text, char *where, size_t nwhere)
{
	hloi_context *ctx = NULL;
	if (hloi_context_new(&ctx) != HLOI_OK)
		return NULL;
	int src = diag_add_source(ctx, "t.mlir", text, strlen(text));
	const source *s = diag_source(ctx, src);
	strbuf hlo = { 0 };
	size_t *offs = NULL, noffs = 0;
	char *out = NULL;
	where[0] = 0;
	if (mlir_to_hlo(&hlo, &offs, &noffs, ctx, src, s->text, s->len) == HLOI_OK) {
		out = sb_take(&hlo);
		hloi_free(offs);
	} else if (ctx->ndiags > 0) {
		size_t line, col;
		diag_line_col(s, ctx->diags[0].at.start, &line, &col);
		snprintf(where, nwhere, "%zu:%zu %s", line, col, ctx->diags[0].message);
	}
	hloi_context_free(ctx);
	return out;
}

static void expect_has(const char *mlir, const char *want)
{
	char where[256];
	char *h = lower(mlir, where, sizeof where);
	CU_ASSERT_PTR_NOT_NULL(h);
	if (!h) {
		fprintf(stderr, "error: %s\n", where);
		return;
	}
	if (!strstr(h, want))
		fprintf(stderr, "missing '%s' in:\n%s\n", want, h);
	CU_ASSERT_PTR_NOT_NULL(strstr(h, want));
	hloi_free(h);
}

static void expect_error(const char *mlir, const char *want)
{
	char where[256];
	char *h = lower(mlir, where, sizeof where);
	CU_ASSERT_PTR_NULL(h);
	hloi_free(h);
	if (!strstr(where, want))
		fprintf(stderr, "got '%s', want '%s'\n", where, want);
	CU_ASSERT_PTR_NOT_NULL(strstr(where, want));
}

static void test_types(void)
{
	expect_has("func.func @main(%a: tensor<2x?xf32, #stablehlo.bounds<?, 8>>) -> tensor<2x?xf32, "
		   "#stablehlo.bounds<?, 8>> {\n  return %a : tensor<2x?xf32, #stablehlo.bounds<?, 8>>\n}\n",
		   "f32[2,<=8] parameter(0)");
	expect_has("func.func @main(%a: tensor<3xcomplex<f64>>, %b: tensor<ui4>, %c: tensor<1x0xbf16>, "
		   "%d: !stablehlo.token, %e: tensor<i1>) -> tensor<i1> {\n  return %e : tensor<i1>\n}\n",
		   "c128[3] parameter(0)");
	expect_has("func.func @main(%b: tensor<ui4>) -> tensor<ui4> {\n  return %b : tensor<ui4>\n}\n",
		   "ROOT parameter.0 = u4[] parameter(0)");
	expect_has("func.func @main(%d: !stablehlo.token) -> !stablehlo.token {\n  return %d : !stablehlo.token\n}\n",
		   "token[] parameter(0)");
}

static void test_dense(void)
{
	/* a hex blob: 1.0f, 2.0f little-endian */
	expect_has("func.func @main() -> tensor<2xf32> {\n  %0 = stablehlo.constant dense<\"0x0000803F00000040\"> : "
		   "tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n",
		   "constant({1, 2})");
	/* a splat: a scalar constant broadcast */
	expect_has("func.func @main() -> tensor<2x3xi8> {\n  %0 = stablehlo.constant dense<-3> : tensor<2x3xi8>\n"
		   "  return %0 : tensor<2x3xi8>\n}\n",
		   "s8[] constant(-3)");
	/* MLIR's hex float: NaN */
	expect_has("func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<0x7FC00000> : tensor<f32>\n"
		   "  return %0 : tensor<f32>\n}\n",
		   "constant(nan)");
	/* nested lists, complex, booleans */
	expect_has("func.func @main() -> tensor<2x1xcomplex<f32>> {\n  %0 = stablehlo.constant dense<[[(1.5, -2.0)], "
		   "[(0.0, 1.0)]]> : tensor<2x1xcomplex<f32>>\n  return %0 : tensor<2x1xcomplex<f32>>\n}\n",
		   "constant({{(1.5, -2.0)}, {(0.0, 1.0)}})");
	expect_has("func.func @main() -> tensor<2xi1> {\n  %0 = stablehlo.constant dense<[true, false]> : tensor<2xi1>\n"
		   "  return %0 : tensor<2xi1>\n}\n",
		   "constant({true, false})");
}

static void test_ops(void)
{
	/* pretty and generic compare, one result of two */
	expect_has("func.func @main(%a: tensor<2xf32>) -> tensor<2xi1> {\n"
		   "  %0 = stablehlo.compare  LT, %a, %a,  TOTALORDER : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n"
		   "  return %0 : tensor<2xi1>\n}\n",
		   "compare(parameter.0, parameter.0), direction=LT, type=TOTALORDER");
	expect_has("func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
		   "  %0 = \"stablehlo.transpose\"(%a) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
		   "  return %0 : tensor<3x2xf32>\n}\n",
		   "transpose(parameter.0), dimensions={1,0}");
	expect_has("func.func @main(%a: tensor<4xf32>) -> tensor<2xf32> {\n"
		   "  %0 = stablehlo.slice %a [1:4:2] : (tensor<4xf32>) -> tensor<2xf32>\n"
		   "  return %0 : tensor<2xf32>\n}\n",
		   "slice={[1:4:2]}");
	/* convolution: dim_labels, and the window sized by the kernel */
	expect_has("func.func @main(%a: tensor<1x4x4x2xf32>, %k: tensor<3x2x2x5xf32>) -> tensor<1x2x3x5xf32> {\n"
		   "  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
		   "window = {stride = [2, 1], pad = [[0, 0], [0, 0]], reverse = [false, true]} "
		   "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
		   "(tensor<1x4x4x2xf32>, tensor<3x2x2x5xf32>) -> tensor<1x2x3x5xf32>\n"
		   "  return %0 : tensor<1x2x3x5xf32>\n}\n",
		   "window={size=3x2 stride=2x1 pad=0_0x0_0 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x1}, "
		   "dim_labels=b01f_01io->b01f");
	/* several results: a tuple, then its elements */
	expect_has("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
		   "  %0:2 = stablehlo.optimization_barrier %a, %a : tensor<f32>, tensor<f32>\n"
		   "  return %0#1 : tensor<f32>\n}\n",
		   "get-tuple-element(opt-barrier.");
}

static void test_errors(void)
{
	expect_error("func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n",
		     "3:1 unexpected end of file");
	expect_error("func.func @main() -> tensor<f32> {\n  %0 = stablehlo.bogus_op : tensor<f32>\n"
		     "  return %0 : tensor<f32>\n}\n",
		     "2:8 unsupported op 'stablehlo.bogus_op'");
	expect_error("func.func @main() -> tensor<f32> {\n  return %nope : tensor<f32>\n}\n",
		     "2:10 use of undefined value '%nope'");
	expect_error("func.func @main() -> tensor<2xf32> {\n  %0 = stablehlo.constant dense<\"0x0000\"> : tensor<2xf32>\n"
		     "  return %0 : tensor<2xf32>\n}\n",
		     "hex blob holds 2 bytes");
	expect_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
		     "  %0 = stablehlo.abs %a {frobnicate = 3} : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n",
		     "2:26 unsupported: attribute 'frobnicate'");
}

static const unit_test mlir_tests[] = {
	{ "types", test_types },
	{ "dense", test_dense },
	{ "ops", test_ops },
	{ "errors", test_errors },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "mlir", mlir_tests },
	{ NULL, NULL },
};
