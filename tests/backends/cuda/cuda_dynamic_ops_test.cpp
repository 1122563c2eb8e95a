// Every op family at run-time shapes on the GPU (label gpu): the cases of
// tests/runtime/dynamic_op_cases.h built once for cuda:0 with a profile (N in 1..5, S in 2..7),
// run at the corners and at random shapes inside, each against a static CPU plan of that shape.
#include <gtest/gtest.h>

#include "backends/cuda/cuda_test_util.h"
#include "runtime/dynamic_op_cases.h"

namespace kiln::testing::dynamic_ops {
namespace {

class CudaDynamicOps : public ::testing::TestWithParam<Case> {};

TEST_P(CudaDynamicOps, RandomShapesInsideTheProfileMatchTheCpu) {
  KILN_SKIP_WITHOUT_GPU();
  // FP32 on both sides; cuBLAS, cuDNN and the reductions order their sums differently.
  checkCase(GetParam(), "cuda:0", 3, 1e-4f);
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaDynamicOps, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace kiln::testing::dynamic_ops
