// The op harness's Linear cases: every CUDA tactic (cublaslt_epilogue, cublaslt_tanh_gelu_epilogue,
// cublaslt_bias_then_activation, the L2-chunked ones, cudnn_graph_fused, reference) against the CPU
// reference, in fp32, fp16 and bf16 (see cuda_ops_test_util.h for the two modes). Odd M, N and K,
// batch dims, with and without bias, residual and activation, W transposed or not; the activations
// of both cuBLASLt tactics (none, ReLU, the tanh GELU in the epilogue; the erf GELU, LeakyReLU,
// Sigmoid, Clip after it). Small problems run emulated in CI too (the reference kernel's index
// rules); transformer-sized ones run on the device only, one of them larger than half the L2 (the
// L2-chunked tactics).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cuda/cuda_ops_test_util.h"
#include "ops/op_table.h"

namespace kiln::testing {
namespace {

struct Problem {
  std::vector<int64_t> batch;  // X's leading dims before M
  int64_t m, k, n;
  bool transposeW = false, bias = true, residual = false;
  bool hasActivation = false;
  ActivationType activation = ActivationType::kRELU;
  float alpha = 0.f, beta = 0.f;
};

Dims dimsOf(std::vector<int64_t> lead, std::initializer_list<int64_t> last) {
  lead.insert(lead.end(), last);
  Dims d;
  d.nbDims = static_cast<int32_t>(lead.size());
  for (size_t i = 0; i < lead.size(); ++i) d.d[i] = lead[i];
  return d;
}

Problem act(Problem p, ActivationType t, float alpha = 0.f, float beta = 0.f) {
  p.hasActivation = true;
  p.activation = t;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

OpCase linear(const Problem& p, bool emulate = true) {
  LinearParams params;
  params.transposeW = p.transposeW;
  params.hasBias = p.bias;
  params.hasResidual = p.residual;
  params.hasActivation = p.hasActivation;
  params.activation = p.activation;
  params.activationAlpha = p.alpha;
  params.activationBeta = p.beta;
  OpCase c;
  std::string b;
  for (int64_t x : p.batch) b += std::to_string(x) + "x";
  c.name = "linear_" + b + std::to_string(p.m) + "x" + std::to_string(p.k) + "_n" +
           std::to_string(p.n) + (p.transposeW ? "_wt" : "") + (p.bias ? "_bias" : "") +
           (p.residual ? "_residual" : "") +
           (p.hasActivation ? "_act" + std::to_string(static_cast<int>(p.activation)) : "");
  c.type = LayerType::kLINEAR;
  c.params = params;
  OpInput x{dimsOf(p.batch, {p.m, p.k})};
  OpInput w{p.transposeW ? makeDims({p.n, p.k}) : makeDims({p.k, p.n})};
  w.constant = true;
  c.inputs = {x, w};
  if (p.bias) {
    OpInput bias{makeDims({p.n})};
    bias.constant = true;
    c.inputs.push_back(bias);
  }
  if (p.residual) c.inputs.push_back(OpInput{dimsOf(p.batch, {p.m, p.n})});
  c.floatTypes = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};
  c.fp32Rel = c.fp32Abs = 1e-4f;  // cuBLASLt's summation order (split-K) over k up to 3072
  c.emulate = emulate;
  return c;
}

std::vector<OpCase> linearCases() {
  using A = ActivationType;
  std::vector<OpCase> cases;
  // Small: emulated in CI as well.
  const Problem plain{{}, 7, 13, 9};
  cases.push_back(linear({{}, 7, 13, 9, false, false}));
  cases.push_back(linear(plain));
  cases.push_back(linear({{2, 3}, 5, 11, 6, true, true, true}));
  cases.push_back(linear({{3}, 1, 1, 1, false, false, true}));
  for (A t : {A::kRELU, A::kGELU_TANH, A::kGELU, A::kSIGMOID, A::kTANH, A::kSILU}) {
    cases.push_back(linear(act({{2}, 9, 17, 10, true, true, false}, t)));
    cases.push_back(linear(act({{}, 6, 5, 7, false, false, true}, t)));
  }
  cases.push_back(linear(act({{}, 8, 12, 5, false, true, true}, A::kLEAKY_RELU, 0.1f)));
  cases.push_back(linear(act({{}, 8, 12, 5, true, true}, A::kCLIP, 0.f, 6.f)));
  // Transformer-sized (ViT-B/16's MLP, BERT's), and sizes off every tile: device only.
  cases.push_back(linear(act({{2}, 197, 768, 3072, true, true}, A::kGELU), false));
  cases.push_back(linear(act({{2}, 197, 768, 3072, true, true}, A::kGELU_TANH), false));
  cases.push_back(linear({{2}, 197, 3072, 768, true, true, true}, false));
  cases.push_back(linear(act({{}, 513, 257, 129, false, true, true}, A::kRELU), false));
  cases.push_back(linear({{4}, 33, 1000, 31, false, false, true}, false));
  // Y larger than half the L2 cache (27 MB in FP16, 54 MB in FP32), in a shorter last chunk: the
  // L2-chunked tactics, residual and bias at each chunk's rows.
  cases.push_back(linear(act({{2}, 2201, 40, 3072, true, true, true}, A::kGELU), false));
  return cases;
}

}  // namespace

KILN_CUDA_OP_CASES(Linear, linearCases);

namespace {

// Why the tactic named `tactic` declines the configuration ("" when it accepts it).
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
  const Tactic* found = ops::findTactic(ops::cudaTactics(c.type), tactic);
  if (!found) return std::string("no tactic named ") + tactic;
  std::string why;
  return found->create(config, &why) ? "" : why;
}

}  // namespace

// Which activations each cuBLASLt tactic takes, and why not the others. No GPU needed (the
// refusals come before cuBLASLt is asked), so it runs with the emulated cases.
TEST(LinearTactics, EmulatedRefusalsSayWhy) {
  using A = ActivationType;
  const Problem p{{}, 8, 16, 8};
  const std::string erf = accepts(linear(act(p, A::kGELU)), DataType::kFLOAT, "cublaslt_epilogue");
  EXPECT_NE(erf.find("tanh approximation"), std::string::npos) << erf;
  const std::string sigmoid =
      accepts(linear(act(p, A::kSIGMOID)), DataType::kFLOAT, "cublaslt_epilogue");
  EXPECT_NE(sigmoid.find("ReLU and the tanh GELU only"), std::string::npos) << sigmoid;
  const std::string none = accepts(linear(p), DataType::kFLOAT, "cublaslt_bias_then_activation");
  EXPECT_NE(none.find("no activation"), std::string::npos) << none;
  const std::string empty = accepts(linear({{}, 8, 0, 8}), DataType::kFLOAT, "cublaslt_epilogue");
  EXPECT_NE(empty.find("empty product"), std::string::npos) << empty;
}

// The harness passes as long as any tactic runs, so a cuBLASLt tactic that declined everything
// would go unnoticed there: on a GPU it must accept every case it is meant for.
TEST(LinearTactics, DeviceCublasLtAcceptsItsCases) {
  const std::string why = deviceSkipReason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;
  for (const OpCase& c : linearCases()) {
    const auto& p = std::get<LinearParams>(c.params);
    const bool inEpilogue = !p.hasActivation || p.activation == ActivationType::kRELU ||
                            p.activation == ActivationType::kGELU_TANH;
    for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
      if (inEpilogue)
        EXPECT_EQ(accepts(c, t, "cublaslt_epilogue"), "") << c.name << " " << dataTypeName(t);
      if (p.hasActivation)
        EXPECT_EQ(accepts(c, t, "cublaslt_bias_then_activation"), "")
            << c.name << " " << dataTypeName(t);
    }
  }
}

// cublaslt_tanh_gelu_epilogue: the erf GELU in cuBLASLt's tanh-form epilogue, in FP16 and BF16
// only, and not with KILN_EXACT_GELU=1; said before cuBLASLt is asked (so in CI). On a GPU it takes
// ViT-B/16's MLP product, and the harness checks it against the CPU's erf GELU at FP16's tolerance.
TEST(LinearTactics, EmulatedTanhGeluRefusalsSayWhy) {
  using A = ActivationType;
  const Problem p{{}, 8, 16, 8, true, true};
  const char* kTactic = "cublaslt_tanh_gelu_epilogue";
  const std::string fp32 = accepts(linear(act(p, A::kGELU)), DataType::kFLOAT, kTactic);
  EXPECT_NE(fp32.find("FP32 results keep the erf GELU"), std::string::npos) << fp32;
  for (const OpCase& c : {linear(p), linear(act(p, A::kRELU)), linear(act(p, A::kGELU_TANH))}) {
    const std::string why = accepts(c, DataType::kHALF, kTactic);
    EXPECT_NE(why.find("only for the erf GELU"), std::string::npos) << c.name << ": " << why;
  }
  const char* before = std::getenv("KILN_EXACT_GELU");
  const std::string saved = before ? before : "";
  setenv("KILN_EXACT_GELU", "1", 1);
  const std::string off =
      accepts(linear(act(p, A::kGELU)), DataType::kBF16, "cublaslt_tanh_gelu_epilogue_3");
  if (before)
    setenv("KILN_EXACT_GELU", saved.c_str(), 1);
  else
    unsetenv("KILN_EXACT_GELU");
  EXPECT_NE(off.find("KILN_EXACT_GELU=1"), std::string::npos) << off;
}

TEST(LinearTactics, DeviceTanhGeluTakesTheErfGeluMlpInReducedPrecision) {
  const std::string why = deviceSkipReason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;
  const char* exact = std::getenv("KILN_EXACT_GELU");
  if (exact && std::string(exact) == "1") GTEST_SKIP() << "KILN_EXACT_GELU=1 turns it off";
  const OpCase mlp = linear(act({{2}, 197, 768, 3072, true, true}, ActivationType::kGELU), false);
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    EXPECT_EQ(accepts(mlp, t, "cublaslt_tanh_gelu_epilogue"), "") << dataTypeName(t);
}

// The L2-chunked tactics (cublaslt_l2half_/l2quarter_chunks_then_activation): decline, saying why,
// where the activation is in cuBLASLt's epilogue (in CI) or Y fits half the L2 (on a GPU); takes
// the product larger than that, which the harness then checks chunk by chunk against the CPU.
bool l2ChunksOn() {
  const char* off = std::getenv("KILN_L2_CHUNKS");
  return !(off && std::string(off) == "0");
}

TEST(LinearTactics, EmulatedL2ChunksRefusalsSayWhy) {
  using A = ActivationType;
  const Problem p{{}, 8, 16, 8, true, true};
  for (const char* tactic :
       {"cublaslt_l2half_chunks_then_activation", "cublaslt_l2quarter_chunks_then_activation_1"})
    for (const OpCase& c : {linear(p), linear(act(p, A::kRELU)), linear(act(p, A::kGELU_TANH))}) {
      const std::string why = accepts(c, DataType::kHALF, tactic);
      EXPECT_NE(why.find("no activation pass"), std::string::npos) << c.name << ": " << why;
      if (!l2ChunksOn()) {
        const std::string off = accepts(linear(act(p, A::kGELU)), DataType::kHALF, tactic);
        EXPECT_NE(off.find("KILN_L2_CHUNKS=0"), std::string::npos) << off;
      }
    }
}

TEST(LinearTactics, DeviceL2ChunksTakeOnlyOutputsLargerThanHalfTheL2) {
  const std::string why = deviceSkipReason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;
  if (!l2ChunksOn()) GTEST_SKIP() << "KILN_L2_CHUNKS=0 turns the L2-chunked tactics off";
  using A = ActivationType;
  const OpCase small = linear(act({{2}, 197, 768, 3072, true, true}, A::kGELU), false);
  const OpCase large = linear(act({{2}, 2201, 40, 3072, true, true, true}, A::kGELU), false);
  for (const char* tactic :
       {"cublaslt_l2half_chunks_then_activation", "cublaslt_l2quarter_chunks_then_activation"}) {
    EXPECT_NE(accepts(small, DataType::kHALF, tactic).find("fits"), std::string::npos) << tactic;
    for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16})
      EXPECT_EQ(accepts(large, t, tactic), "") << tactic << " " << dataTypeName(t);
  }
}

// cudnn_graph_fused (the product and its epilogue as one cuDNN graph): FP16 only and only with an
// epilogue, said before cuDNN is asked (so in CI); on a GPU it takes ViT-B/16's MLP product with
// the erf GELU, which cuBLASLt's epilogue cannot, and the harness checks its results.
TEST(LinearTactics, EmulatedFusedCudnnGraphRefusalsSayWhy) {
  using A = ActivationType;
  const Problem p{{}, 8, 16, 8, true, true};
  const std::string fp32 = accepts(linear(act(p, A::kGELU)), DataType::kFLOAT, "cudnn_graph_fused");
  EXPECT_NE(fp32.find("fp16 only"), std::string::npos) << fp32;
  const std::string none =
      accepts(linear({{}, 8, 16, 8, false, false}), DataType::kHALF, "cudnn_graph_fused");
  EXPECT_NE(none.find("no epilogue"), std::string::npos) << none;
  const std::string swish =
      accepts(linear(act(p, A::kHARD_SWISH)), DataType::kHALF, "cudnn_graph_fused");
  EXPECT_NE(swish.find("no pointwise mode"), std::string::npos) << swish;
}

TEST(LinearTactics, DeviceFusedCudnnGraphTakesTheErfGeluMlp) {
  const std::string why = deviceSkipReason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;
  using A = ActivationType;
  const OpCase mlp = linear(act({{2}, 197, 768, 3072, true, true}, A::kGELU), false);
  EXPECT_EQ(accepts(mlp, DataType::kHALF, "cudnn_graph_fused"), "");
}

}  // namespace kiln::testing
