// Models with symbolic input dims (torch.onnx.export's dynamic_axes), built for the shapes
// OnnxParserOptions gives: the shape arithmetic behind them folds as for a static model, and every
// way of giving a wrong shape is refused with input, axis and values named.
#include <gtest/gtest.h>

#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

OnnxParserOptions shapes(std::map<std::string, Dims> s) {
  OnnxParserOptions o;
  o.inputShapes = std::move(s);
  return o;
}

TEST(OnnxInputShapes, ASymbolicBatchIsBuiltForTheShapeGiven) {
  Rng rng;
  for (int64_t batch : {1, 3}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const auto a = rng.values(batch * 4), b = rng.values(batch * 4);
    std::map<std::string, Tensor> out;
    Status s = run(sharedBatchModel(), {{"a", a}, {"b", b}}, out, nullptr,
                   shapes({{"a", makeDims({batch, 4})}, {"b", makeDims({batch, 4})}}));
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(out["y"].dims, makeDims({batch, 2, 2}));
    std::vector<float> want;
    for (size_t k = 0; k < a.size(); ++k) want.push_back(a[k] + b[k]);
    expectNear(out["y"].v, want, 0.f, rng.seed);
  }
}

TEST(OnnxInputShapes, WithoutAShapeTheErrorSaysWhatToGive) {
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(sharedBatchModel(), net);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  for (const char* part : {"graph input 'a'", "symbolic or unknown dim 0 ('batch')", "--shapes",
                           "--input", "OnnxParserOptions::inputShapes"})
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.toString();
}

TEST(OnnxInputShapes, WrongShapesAreRefusedWithInputAxisAndValues) {
  struct Case {
    std::map<std::string, Dims> given;
    std::string message;
  };
  const Case cases[] = {
      {{{"a", makeDims({2, 4})}, {"b", makeDims({3, 4})}},
       "graph input 'b' axis 0 and graph input 'a' axis 0 are both 'batch' in the model, but the "
       "shapes given make them 3 and 2"},
      {{{"a", makeDims({2, 5})}, {"b", makeDims({2, 4})}},
       "graph input 'a' axis 1 is fixed at 4 in the model, but the shape given, 2x5, has 5 there"},
      {{{"a", makeDims({2, 4, 1})}, {"b", makeDims({2, 4})}},
       "graph input 'a': the shape given, 2x4x1, has rank 3 but the model's has rank 2"},
      {{{"a", makeDims({2, 4})}, {"b", makeDims({2, 4})}, {"c", makeDims({1})}},
       "a shape is given for 'c', which is not a graph input of the model (its inputs: 'a', 'b')"},
  };
  for (const Case& c : cases) {
    std::unique_ptr<INetworkDefinition> net;
    Status s = parse(sharedBatchModel(), net, shapes(c.given));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.toString();
  }
}

TEST(OnnxInputShapes, AStaticModelTakesItsOwnShapeAndRefusesAnother) {
  Model m(13);
  m.input("x", {2, 3});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  std::unique_ptr<INetworkDefinition> net;
  EXPECT_TRUE(parse(m, net, shapes({{"x", makeDims({2, 3})}})).isOk());
  Status s = parse(m, net, shapes({{"x", makeDims({4, 3})}}));
  EXPECT_NE(s.message().find("axis 0 is fixed at 2"), std::string::npos) << s.toString();
}

}  // namespace
}  // namespace kiln::testing
