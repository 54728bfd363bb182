// Generic op forms, multiple results (%x:2, %x#1), a hex-blob and a splat
// constant, complex and i1 constants, and a check that holds.
func.func @main() -> (tensor<3xi32>, tensor<3xf32>) {
  %keys = stablehlo.constant dense<[3, 1, 2]> : tensor<3xi32>
  %vals = stablehlo.constant dense<"0x0000803F0000004000004040"> : tensor<3xf32>
  %0:2 = "stablehlo.sort"(%keys, %vals) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<f32>):
    %lt = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%lt) : (tensor<i1>) -> ()
  }) : (tensor<3xi32>, tensor<3xf32>) -> (tensor<3xi32>, tensor<3xf32>)
  %two = stablehlo.constant dense<2.0> : tensor<3xf32>
  %1 = stablehlo.multiply %0#1, %two : tensor<3xf32>
  %z = stablehlo.constant dense<[(1.0, 2.0), (0.0, -1.0)]> : tensor<2xcomplex<f32>>
  %m = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  check.expect_eq_const %0#0, dense<[1, 2, 3]> : tensor<3xi32>
  check.expect_almost_eq_const %1, dense<[4.0, 6.0, 2.0]> : tensor<3xf32>
  return %0#0, %1 : tensor<3xi32>, tensor<3xf32>
}
