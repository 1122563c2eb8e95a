// ONNX Einsum, lowered at import to shuffles, matrix products and sums, through parse -> build ->
// run against a plain einsum written here (the ONNX node tests for Einsum are float64, a type
// kiln does not have, so the conformance runner skips them): the contractions transformers export
// (attention's "bhid,bhjd->bhij" and "bhij,bhjd->bhid", batched "bij,bjk->bik"), a transpose, sums,
// an inner and an outer product, the implicit output form and three operands; and the refusals,
// each naming the equation.
#include <map>

#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

// einsum by its definition: every combination of the letters' values, in double.
std::vector<float> einsum(const std::vector<std::string>& ops, const std::string& out,
                          const std::vector<std::vector<int64_t>>& shapes,
                          const std::vector<std::vector<float>>& data) {
  std::map<char, int64_t> size;
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t k = 0; k < ops[i].size(); ++k) size[ops[i][k]] = shapes[i][k];
  std::string letters;
  for (const auto& [c, s] : size) letters += c;
  int64_t outCount = 1;
  for (char c : out) outCount *= size[c];
  std::vector<double> y(size_t(outCount), 0.0);
  std::map<char, int64_t> at;
  for (char c : letters) at[c] = 0;
  auto flat = [&](const std::string& term) {
    int64_t f = 0;
    for (char c : term) f = f * size[c] + at[c];
    return f;
  };
  while (true) {
    double v = 1;
    for (size_t i = 0; i < ops.size(); ++i) v *= data[i][size_t(flat(ops[i]))];
    y[size_t(flat(out))] += v;
    size_t k = letters.size();
    while (k > 0 && ++at[letters[k - 1]] == size[letters[k - 1]]) at[letters[--k]] = 0;
    if (k == 0) break;
  }
  return {y.begin(), y.end()};
}

struct Case {
  std::string equation;
  std::vector<std::string> ops;  // the operands' letters
  std::string out;               // the output's letters
  std::vector<std::vector<int64_t>> shapes;
};

TEST(OnnxEinsum, ContractionsMatchTheDefinition) {
  Rng rng;
  const Case cases[] = {
      {"bhid,bhjd->bhij", {"bhid", "bhjd"}, "bhij", {{2, 3, 4, 5}, {2, 3, 6, 5}}},
      {"bhij,bhjd->bhid", {"bhij", "bhjd"}, "bhid", {{2, 3, 4, 6}, {2, 3, 6, 5}}},
      {"bij, bjk -> bik", {"bij", "bjk"}, "bik", {{3, 2, 4}, {3, 4, 5}}},
      {"ij->ji", {"ij"}, "ji", {{3, 4}}},
      {"ij->i", {"ij"}, "i", {{3, 4}}},
      {"ij->", {"ij"}, "", {{3, 4}}},
      {"i,i", {"i", "i"}, "", {{7}, {7}}},
      {"i,j->ij", {"i", "j"}, "ij", {{3}, {4}}},
      {"ij,jk", {"ij", "jk"}, "ik", {{2, 3}, {3, 4}}},  // implicit: the once-only letters
      {"bn,anm,bm->ba", {"bn", "anm", "bm"}, "ba", {{2, 3}, {4, 3, 5}, {2, 5}}},
      {"bij,bkj->bki", {"bij", "bkj"}, "bki", {{2, 3, 4}, {2, 5, 4}}},
      {"ij,k->ij", {"ij", "k"}, "ij", {{2, 3}, {4}}},  // k summed away first
      {"ij->ij", {"ij"}, "ij", {{2, 3}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.equation);
    Model m(12);
    std::vector<std::string> names;
    std::map<std::string, std::vector<float>> feeds;
    std::vector<std::vector<float>> data;
    for (size_t i = 0; i < c.ops.size(); ++i) {
      names.push_back("x" + std::to_string(i));
      m.input(names.back(), c.shapes[i]);
      int64_t count = 1;
      for (int64_t d : c.shapes[i]) count *= d;
      data.push_back(rng.values(count));
      feeds[names.back()] = data.back();
    }
    attrString(m.node("Einsum", names, {"y"}), "equation", c.equation);
    m.output("y");
    std::map<std::string, Tensor> out;
    const Status s = run(m, feeds, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(out["y"].dims.nbDims, int32_t(c.out.size()));
    expectNear(out["y"].v, einsum(c.ops, c.out, c.shapes, data), 1e-5f, rng.seed);
  }
}

TEST(OnnxEinsum, RefusalsNameTheEquation) {
  struct Bad {
    std::string equation;
    std::vector<std::vector<int64_t>> shapes;
    const char* message;
    StatusCode code;
  };
  const Bad cases[] = {
      {"ii->i", {{3, 3}}, "letter 'i' repeats in operand 0 (a diagonal)", StatusCode::kUnsupported},
      {"...ij->...ji", {{2, 3}}, "ellipsis", StatusCode::kUnsupported},
      {"ij,jk->ik",
       {{2, 3}, {4, 5}},
       "letter 'j' is 3 in one operand and 4 in operand 1",
       StatusCode::kInvalidArgument},
      {"ijk->ij",
       {{2, 3}},
       "operand 0 'ijk' has 3 letters but input 0 is [2,3]",
       StatusCode::kInvalidArgument},
      {"ij->iq", {{2, 3}}, "output letter 'q' is in no operand", StatusCode::kInvalidArgument},
      {"ij,jk->ik", {{2, 3}}, "2 operands for 1 inputs", StatusCode::kInvalidArgument},
  };
  for (const Bad& b : cases) {
    Model m(12);
    std::vector<std::string> names;
    for (size_t i = 0; i < b.shapes.size(); ++i) {
      names.push_back("x" + std::to_string(i));
      m.input(names.back(), b.shapes[i]);
    }
    attrString(m.node("Einsum", names, {"y"}), "equation", b.equation);
    m.output("y");
    std::unique_ptr<INetworkDefinition> net;
    const Status s = parse(m, net);
    EXPECT_EQ(s.code(), b.code) << s.toString();
    EXPECT_NE(s.message().find("equation '" + b.equation.substr(0, 3)), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find(b.message), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace kiln::testing
