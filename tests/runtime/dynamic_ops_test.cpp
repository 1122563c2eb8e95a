// Every op family at run-time shapes on the CPU: each case of dynamic_op_cases.h built once with
// a profile (N in 1..5, S in 2..7) and run at the corners and at random shapes inside, against
// the same layer built statically for each shape.
#include <gtest/gtest.h>

#include "runtime/dynamic_op_cases.h"

namespace kiln::testing::dynamic_ops {
namespace {

class DynamicOps : public ::testing::TestWithParam<Case> {};

TEST_P(DynamicOps, RandomShapesInsideTheProfileMatchStaticPlans) {
  checkCase(GetParam(), "cpu", 3, 1e-5f);
}

INSTANTIATE_TEST_SUITE_P(Cpu, DynamicOps, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace kiln::testing::dynamic_ops
