// Helpers for the spatial-op tests: run a layer's reference tactic on fp32 buffers and compare.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/cpu/kernel.h"
#include "ops/op_table.h"
#include "ops/op_test_util.h"

namespace kiln::test {

// Runs `tactics`' reference on inputs whose shapes are `dims` (types `types`, fp32 by default),
// with outputs as shape inference gives them; returns the output, empty on failure.
template <class P, class F>
std::vector<float> runReference(LayerType type, F infer, const P& p,
                                std::span<const Tactic> tactics, const std::vector<Dims>& dims,
                                const std::vector<const void*>& data,
                                std::vector<DataType> types = {}, Status* runStatus = nullptr) {
  std::vector<PluginTensorDesc> in;
  for (size_t i = 0; i < dims.size(); ++i)
    in.push_back(desc(dims[i], i < types.size() ? types[i] : DataType::kFLOAT));
  const auto out = inferredOutputs(infer, p, in);
  if (out.size() != 1) return {};
  const auto c = config(type, p, in, out);
  auto k = create(tacticNamed(tactics, "reference"), c);
  if (!k) return {};
  std::vector<float> y(static_cast<size_t>(volume(out[0].dims)), std::nanf(""));
  const Status st = runKernel(*k, data, {y.data()});
  if (runStatus) {
    *runStatus = st;
  } else {
    EXPECT_TRUE(st.isOk()) << st.toString();
  }
  return y;
}

inline void expectNear(const std::vector<float>& got, const std::vector<double>& want, double tol,
                       const std::string& trace) {
  ASSERT_EQ(got.size(), want.size()) << trace;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::fabs(want[i])))
        << "element " << i << ", " << trace;
}

}  // namespace kiln::test
