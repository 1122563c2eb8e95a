// The op harness's Attention cases: every CUDA tactic (flash_mma, unfused_cublas, reference)
// against the CPU reference, in fp32, fp16 and bf16. Small problems run emulated in CI too (the
// reference kernel's index rules); the sweep the fused kernel is held to (head sizes 32 to 128,
// sequence lengths 1 to 1024, lengths that are not a multiple of its 64-row and 64-key tiles,
// with and without masks, K transposed or not, K and V shared across heads, head views of packed
// projections) runs on the device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/cuda/cuda_ops_test_util.h"
#include "backends/cuda/device.h"
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

// Head views (kiln/ops/attention.h, `viewed`): Q, K and V read where they lie in packed
// projections, O written in another order, as the attention_layout pass makes them.
struct ViewProblem {
  int form;  // 0: torch's [S, B, 3 H D] packed projections, O as [S, B, H D]; 1: Hugging Face's
             // [B, S, H D] each, O as [B, S, H D]; 2: torch's with a mask merged as [B H, Sq, Sk]
  int64_t b, h, sq, sk, d;
};

void setRole(AttentionParams& p, int input, int role, int32_t axis, int64_t inner, int64_t size) {
  const int at = input * AttentionParams::kRoles + role;
  p.viewAxis[at] = axis;
  p.viewInner[at] = inner;
  p.viewSize[at] = size;
}

OpCase viewedAttention(const ViewProblem& v, bool emulate) {
  using R = AttentionParams::Role;
  OpCase c;
  c.name = std::string("attention_viewed_") + (v.form == 1 ? "bshd" : "packed") +
           (v.form == 2 ? "_merged_mask" : "") + "_b" + std::to_string(v.b) + "_h" +
           std::to_string(v.h) + "_q" + std::to_string(v.sq) + "_k" + std::to_string(v.sk) + "_d" +
           std::to_string(v.d);
  c.type = LayerType::kATTENTION;
  AttentionParams p;
  p.scale = 1.f / std::sqrt(static_cast<float>(v.d));
  p.viewed = true;
  const int64_t e = v.h * v.d;
  for (int i = 0; i < 3; ++i) {
    const int64_t s = i == 0 ? v.sq : v.sk;
    OpInput x;
    if (v.form == 1) {  // [B, S, H D]
      x.dims = Dims{3, {v.b, s, e}};
      setRole(p, i, R::kBatch, 0, 1, 0);
      setRole(p, i, R::kSequence, 1, 1, 0);
    } else {  // [S, B, 3 H D], input i in slot i
      x.dims = Dims{3, {s, v.b, 3 * e}};
      setRole(p, i, R::kSequence, 0, 1, 0);
      setRole(p, i, R::kBatch, 1, 1, 0);
      setRole(p, i, R::kSlot, 2, e, 0);
      p.viewSlot[i] = i;
    }
    setRole(p, i, R::kHeads, 2, v.d, v.h);
    setRole(p, i, R::kHeadSize, 2, 1, v.d);
    x.floatLo = -2.f;
    x.floatHi = 2.f;
    x.edgeValues = i != 2;  // V's special values stay out, as in attention() above
    c.inputs.push_back(x);
  }
  const int32_t order[2][4] = {{R::kSequence, R::kBatch, R::kHeads, R::kHeadSize},
                               {R::kBatch, R::kSequence, R::kHeads, R::kHeadSize}};
  for (int i = 0; i < 4; ++i) p.outputOrder[i] = order[v.form == 1][i];
  p.outputMerged[3] = true;  // [.., H D]
  if (v.form == 2) {
    OpInput m;
    m.dims = Dims{3, {v.b * v.h, v.sq, v.sk}};
    m.floatLo = -4.f;
    m.floatHi = 1.f;
    c.inputs.push_back(m);
  } else if (v.form == 1) {
    OpInput m;  // a padding mask
    m.dims = Dims{4, {v.b, 1, 1, v.sk}};
    m.floatLo = -4.f;
    m.floatHi = 1.f;
    c.inputs.push_back(m);
  }
  c.params = p;
  c.floatTypes = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};
  c.fp32Rel = c.fp32Abs = 1e-4f;
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
  // rows with NaN and -inf scores): every tactic takes it.
  cases.push_back(attention({{2, 3}, 4, 6, 8, 8, false, {2, 1, 1, 6}, {}, true}, true));
  cases.push_back(attention({{}, 5, 9, 16, 16, true, {5, 9}, {}, true}, true));
  cases.push_back(attention({{2, 12}, 128, 128, 64, 64, false, {2, 1, 1, 128}, {}, true}, false));
  // flash_mma takes the guard too: partial tiles, a full mask, the unvectorized head size 40.
  cases.push_back(attention({{2, 3}, 70, 130, 64, 64, false, {2, 3, 70, 130}, {}, true}, false));
  cases.push_back(attention({{1, 2}, 33, 65, 40, 40, true, {33, 65}, {}, true}, false));
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
  // Head views: small ones emulated in CI, the kernels' row and batch strides on the device
  // (head size 40 takes flash_mma's unvectorized loads, 64 and 128 its cp.async rows).
  for (int form : {0, 1, 2}) {
    cases.push_back(viewedAttention({form, 2, 3, 5, 7, 8}, true));
    cases.push_back(viewedAttention({form, 2, 3, 1, 1, 8}, true));
    for (int64_t d : {40, 64, 128})
      cases.push_back(viewedAttention({form, 3, 4, 70, 130, d}, false));
  }
  cases.push_back(viewedAttention({0, 4, 12, 197, 197, 64}, false));
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
  // K shared by the heads of one batch index but not across batch indices: no single stride, so
  // cuBLAS's pointer-array batch reads it.
  const OpCase mixed = attention({{2, 3}, 4, 6, 8, 8, false, {}, {2, 1}}, false);
  EXPECT_EQ(accepts(mixed, DataType::kFLOAT, "unfused_cublas"), "");
  EXPECT_EQ(accepts(mixed, DataType::kHALF, "flash_mma"), "");
  // The NaN guard of torch's scaled_dot_product_attention export, in both block sizes.
  const OpCase guarded =
      attention({{2, 12}, 128, 128, 64, 64, false, {2, 1, 1, 128}, {}, true}, false);
  EXPECT_EQ(accepts(guarded, DataType::kHALF, "flash_mma"), "");
  EXPECT_EQ(accepts(guarded, DataType::kHALF, "flash_mma_8w"), "");
  EXPECT_EQ(accepts(guarded, DataType::kHALF, "flash_mma_8w_resident"), "");
  // The resident form holds up to 256 keys in shared memory; longer sequences are refused.
  const OpCase longer = attention({{1, 2}, 64, 257, 64, 64}, false);
  EXPECT_NE(accepts(longer, DataType::kHALF, "flash_mma_8w_resident").find("up to 256 keys"),
            std::string::npos);
  EXPECT_EQ(accepts(longer, DataType::kHALF, "flash_mma_8w"), "");
  // Head views: both fast tactics take them.
  for (int form : {0, 1, 2}) {
    const OpCase viewed = viewedAttention({form, 4, 12, 197, 197, 64}, false);
    EXPECT_EQ(accepts(viewed, DataType::kHALF, "flash_mma"), "") << viewed.name;
    EXPECT_EQ(accepts(viewed, DataType::kHALF, "flash_mma_8w"), "") << viewed.name;
    EXPECT_EQ(accepts(viewed, DataType::kHALF, "flash_mma_8w_resident"), "") << viewed.name;
    EXPECT_EQ(accepts(viewed, DataType::kFLOAT, "unfused_cublas"), "") << viewed.name;
  }
}

// cuDNN's fused attention: what it declines is said, whatever the machine; on a GPU, whether the
// cuDNN there takes ViT's and BERT's shapes is the library's answer, printed for the run's record
// (the harness then holds every case it takes to the CPU reference).
TEST(AttentionTactics, CudnnSdpaSaysWhyItDeclines) {
  const OpCase masked = attention({{2, 12}, 128, 128, 64, 64, false, {2, 1, 1, 128}}, false);
  EXPECT_NE(accepts(masked, DataType::kHALF, "cudnn_sdpa").find("no mask"), std::string::npos);
  const OpCase plain = attention({{2, 12}, 197, 197, 64, 64}, false);
  EXPECT_NE(accepts(plain, DataType::kFLOAT, "cudnn_sdpa").find("fp16 and bf16 only"),
            std::string::npos);
  const OpCase broadcast = attention({{2, 3}, 4, 6, 8, 8, false, {}, {2, 1}}, false);
  EXPECT_NE(accepts(broadcast, DataType::kHALF, "cudnn_sdpa").find("broadcast"), std::string::npos);
  const OpCase odd = attention({{2, 3}, 4, 6, 12, 12}, false);
  EXPECT_NE(accepts(odd, DataType::kHALF, "cudnn_sdpa").find("not a multiple of 16 bytes"),
            std::string::npos);
  for (const OpCase& c : {plain, attention({{32, 12}, 128, 128, 64, 64}, false),
                          viewedAttention({0, 4, 12, 197, 197, 64}, false)}) {
    for (DataType t : {DataType::kHALF, DataType::kBF16}) {
      const std::string why = accepts(c, t, "cudnn_sdpa");
      if (cuda::deviceCount() == 0) EXPECT_NE(why.find("no CUDA GPU"), std::string::npos) << why;
      std::printf("cudnn_sdpa %s %s: %s\n", c.name.c_str(), dataTypeName(t),
                  why.empty() ? "taken" : why.c_str());
    }
  }
}

}  // namespace kiln::testing
