// Helpers for the shape-inference tests of the light layers.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "ops/op_table.h"

namespace kiln {

inline TensorShape shape(std::initializer_list<int64_t> d, DataType t = DataType::kFLOAT) {
  return {makeDims(d), t};
}

// Runs `infer`, expects success and returns the single output.
template <class P, class F>
TensorShape inferOk(F infer, const P& p, std::vector<TensorShape> in) {
  std::vector<TensorShape> out;
  const Status st = infer(p, in, out);
  EXPECT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? TensorShape{} : out[0];
}

// Runs `infer`, expects a failure whose message contains `fragment`.
template <class P, class F>
void inferFails(F infer, const P& p, std::vector<TensorShape> in, const std::string& fragment) {
  std::vector<TensorShape> out;
  const Status st = infer(p, in, out);
  ASSERT_FALSE(st.isOk()) << "expected a failure mentioning '" << fragment << "'";
  EXPECT_NE(st.message().find(fragment), std::string::npos)
      << "message '" << st.message() << "' lacks '" << fragment << "'";
}

}  // namespace kiln
