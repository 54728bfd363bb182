// The StableHLO `jax.jit(lambda x, w: jnp.tanh(x @ w).sum(axis=1)).lower(x, w)
// .as_text()` prints for x: f32[2,3], w: f32[3,2] (written here in that form:
// module attributes, a public main with argument and result attributes, a
// private function called from it, loc(...) trailers, reduce's pretty form).
#loc1 = loc("x")
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> {mhlo.layout_mode = "default"} loc("x"), %arg1: tensor<3x2xf32> loc("w")) -> (tensor<2xf32> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32> loc(#loc1)
    %1 = call @act(%0) : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
    return %2 : tensor<2xf32>
  }
  func.func private @act(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<2x2xf32>
    return %0 : tensor<2x2xf32>
  }
}
