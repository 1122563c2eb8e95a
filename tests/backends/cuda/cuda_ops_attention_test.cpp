// The op harness's Attention cases: every CUDA tactic (flash_mma, unfused_cublas, reference)
// against the CPU reference, in fp32, fp16 and bf16. Small problems run emulated in CI too (the
// reference kernel's index rules); the sweep the fused kernel is held to (head sizes 32 to 128,
// sequence lengths 1 to 1024, lengths that are not a multiple of its 64-row and 64-key tiles,
// with and without masks, K transposed or not, K and V shared across heads) runs on the device.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/cuda/cuda_ops_test_util.h"
#include "ops/op_table.h"

namespace kiln::testing {
namespace {

struct Problem {
  std::vector<int64_t> batch;  // Q's and the output's batch dims
  int64_t sq, sk, d, dv;
  bool keyTransposed = false;
  // Mask dims, aligned right with [batch..., Sq, Sk]; empty: no mask.
  std::vector<int64_t> mask;
  // K's and V's batch dims when they differ from Q's (shared across heads).
  std::vector<int64_t> kvBatch;
  bool zeroNanRows = false;  // the softmax's NaN guard (kiln/ops/attention.h)
};

Dims dimsOf(std::vector<int64_t> lead, std::initializer_list<int64_t> last) {
  lead.insert(lead.end(), last);
  Dims d;
  d.nbDims = static_cast<int32_t>(lead.size());
  for (size_t i = 0; i < lead.size(); ++i) d.d[i] = lead[i];
  return d;
}

OpCase attention(const Problem& p, bool emulate) {
  const std::vector<int64_t>& kv = p.kvBatch.empty() ? p.batch : p.kvBatch;
  OpCase c;
  std::string b;
  for (int64_t x : p.batch) b += std::to_string(x) + "x";
  c.name = "attention_" + b + "q" + std::to_string(p.sq) + "_k" + std::to_string(p.sk) + "_d" +
           std::to_string(p.d) + (p.dv != p.d ? "_dv" + std::to_string(p.dv) : "") +
           (p.keyTransposed ? "_kt" : "") + (p.mask.empty() ? "" : "_mask") +
           (p.kvBatch.empty() ? "" : "_sharedkv") + (p.zeroNanRows ? "_zeronan" : "");
  for (int64_t x : p.mask) c.name += "_" + std::to_string(x);
  c.type = LayerType::kATTENTION;
  AttentionParams params;
  params.scale = 1.f / std::sqrt(static_cast<float>(p.d));
  params.keyTransposed = p.keyTransposed;
  params.zeroNanRows = p.zeroNanRows;
  c.params = params;
  OpInput q{dimsOf(p.batch, {p.sq, p.d})};
  OpInput k{p.keyTransposed ? dimsOf(kv, {p.d, p.sk}) : dimsOf(kv, {p.sk, p.d})};
  OpInput v{dimsOf(kv, {p.sk, p.dv})};
  q.floatLo = k.floatLo = -2.f;
  q.floatHi = k.floatHi = 2.f;
  // An infinite value of V times a probability that underflows is NaN or infinite depending on
  // where the probability is rounded (fp16 on tensor cores): no two correct kernels need agree,
  // so V's special values stay out of the edge pass. Q, K and the mask keep theirs: they test
  // the softmax's rules (NaN rows, -inf keys, rows masked out entirely).
  v.edgeValues = false;
  c.inputs = {q, k, v};
  if (!p.mask.empty()) {
    OpInput m;
    m.dims.nbDims = static_cast<int32_t>(p.mask.size());
    for (size_t i = 0; i < p.mask.size(); ++i) m.dims.d[i] = p.mask[i];
    m.floatLo = -4.f;
    m.floatHi = 1.f;
    c.inputs.push_back(m);
  }
  c.floatTypes = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};
  c.fp32Rel = c.fp32Abs = 1e-4f;  // cuBLAS's summation order over up to 1024 keys
  c.emulate = emulate;
  return c;
}

std::vector<OpCase> attentionCases() {
  std::vector<OpCase> cases;
  // Small: emulated in CI as well.
  cases.push_back(attention({{2, 3}, 5, 7, 8, 8}, true));
  cases.push_back(attention({{2, 3}, 5, 7, 8, 8, true}, true));
  cases.push_back(attention({{2, 3}, 5, 7, 8, 12, false, {5, 7}}, true));
  cases.push_back(attention({{2, 3}, 4, 6, 8, 8, false, {2, 1, 1, 6}}, true));
  cases.push_back(attention({{2, 3}, 4, 6, 8, 8, true, {2, 3, 4, 6}}, true));
  cases.push_back(attention({{2, 3}, 4, 6, 8, 8, false, {6}, {2, 1}}, true));
  cases.push_back(attention({{6}, 1, 1, 4, 4}, true));
  cases.push_back(attention({{}, 3, 9, 16, 16, false, {3, 1}}, true));
  // The NaN guard of PyTorch's scaled_dot_product_attention export (the edge pass's masks give
  // rows with NaN and -inf scores): unfused_cublas and the reference take it.
  cases.push_back(attention({{2, 3}, 4, 6, 8, 8, false, {2, 1, 1, 6}, {}, true}, true));
  cases.push_back(attention({{}, 5, 9, 16, 16, true, {5, 9}, {}, true}, true));
  cases.push_back(attention({{2, 12}, 128, 128, 64, 64, false, {2, 1, 1, 128}, {}, true}, false));
  // The fused kernel's sweep, on the device.
  for (int64_t d : {32, 40, 64, 80, 96, 128}) {
    cases.push_back(attention({{2, 2}, 1, 1, d, d}, false));
    cases.push_back(attention({{2, 2}, 7, 65, d, d, false, {7, 65}}, false));
    cases.push_back(attention({{1, 3}, 130, 200, d, d, d == 64, {1, 1, 1, 200}}, false));
    cases.push_back(attention({{2}, 64, 64, d, d, false, {}, {1}}, false));
  }
  cases.push_back(attention({{1, 2}, 1024, 1024, 64, 64, false, {1024, 1024}}, false));
  cases.push_back(attention({{1, 1}, 1024, 1024, 128, 128}, false));
  cases.push_back(attention({{1, 2}, 1000, 1000, 128, 128, true, {1000, 1000}}, false));
  cases.push_back(attention({{12}, 197, 197, 64, 64}, false));
  return cases;
}

}  // namespace

KILN_CUDA_OP_CASES(Attention, attentionCases);

namespace {

// The tactic a configuration would get, or why none of that name accepts it.
std::string accepts(const OpCase& c, DataType t, const char* tactic) {
  KernelConfig config;
  config.type = c.type;
  config.params = c.params;
  std::vector<TensorShape> shapes, outs;
  for (const OpInput& in : c.inputs) {
    config.inputs.push_back({in.dims, t, TensorFormat::kLINEAR, DeviceKind::kCUDA});
    config.constantInputs.push_back(nullptr);
    shapes.push_back({in.dims, t});
  }
  const Status s = inferLayerOutputs(c.type, c.params, shapes, outs);
  if (!s) return s.message();
  config.outputs.push_back({outs[0].dims, t, TensorFormat::kLINEAR, DeviceKind::kCUDA});
  for (const Tactic& tt : ops::cudaTactics(c.type)) {
    if (std::string(tt.name) != tactic) continue;
    std::string why;
    return tt.create(config, &why) ? "" : why;
  }
  return std::string("no tactic named ") + tactic;
}

}  // namespace

// The harness passes as long as any tactic runs, so a fused kernel that declined everything
// would go unnoticed there: its acceptance is checked here (kernel creation needs no GPU).
TEST(AttentionTactics, FlashAcceptsTransformerShapes) {
  for (int64_t d : {32, 40, 64, 80, 96, 128}) {
    const OpCase c = attention({{2, 12}, 197, 197, d, d, false, {2, 1, 1, 197}}, false);
    for (DataType t : {DataType::kHALF, DataType::kBF16})
      EXPECT_EQ(accepts(c, t, "flash_mma"), "") << c.name << " " << dataTypeName(t);
    EXPECT_NE(accepts(c, DataType::kFLOAT, "flash_mma"), "") << "flash_mma is fp16/bf16 only";
    EXPECT_EQ(accepts(c, DataType::kFLOAT, "unfused_cublas"), "") << c.name;
    EXPECT_EQ(accepts(c, DataType::kHALF, "unfused_cublas"), "") << c.name;
  }
  const OpCase big = attention({{2}, 5, 5, 160, 160}, false);
  EXPECT_NE(accepts(big, DataType::kHALF, "flash_mma").find("up to 128"), std::string::npos);
  const OpCase kt = attention({{2, 3}, 9, 10, 64, 64, true, {9, 10}}, false);
  EXPECT_EQ(accepts(kt, DataType::kHALF, "flash_mma"), "");
  EXPECT_EQ(accepts(kt, DataType::kFLOAT, "unfused_cublas"), "");
  // K shared by the heads of one batch index but not across batch indices: no single stride.
  const OpCase mixed = attention({{2, 3}, 4, 6, 8, 8, false, {}, {2, 1}}, false);
  EXPECT_NE(accepts(mixed, DataType::kFLOAT, "unfused_cublas"), "");
  EXPECT_EQ(accepts(mixed, DataType::kHALF, "flash_mma"), "");
}

}  // namespace kiln::testing
