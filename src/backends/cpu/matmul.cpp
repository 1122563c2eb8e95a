// CPU matrix products: MatrixMultiply (batched numpy matmul) and Gemm (ONNX Gemm), each as
// sgemm and as the plain reference. fp32 linear only; the builder reformats around them.
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/sgemm.h"
#include "core/shape_inference.h"

namespace kiln::cpu {
namespace {

const void* constantInput(const KernelConfig& config, size_t i) {
  return i < config.constantInputs.size() ? config.constantInputs[i] : nullptr;
}

// Checks tensor types and re-infers the output shape, so a corrupted plan cannot steer run() out
// of bounds. `infer` is the layer's shape function.
template <typename Params, typename Infer>
const Params* validate(const KernelConfig& config, LayerType type, const char* layer,
                       const char* tactic, Infer infer, std::string* whyNot) {
  const auto* p = std::get_if<Params>(&config.params);
  if (!p || config.type != type) {
    *whyNot = std::string(tactic) + ": not a " + layer + " configuration";
    return nullptr;
  }
  if (config.outputs.size() != 1) {
    *whyNot = std::string(tactic) + ": " + layer + " has 1 output, config has " +
              std::to_string(config.outputs.size());
    return nullptr;
  }
  std::vector<TensorShape> in;
  for (size_t i = 0; i <= config.inputs.size(); ++i) {
    const bool isOutput = i == config.inputs.size();
    const PluginTensorDesc& d = isOutput ? config.outputs[0] : config.inputs[i];
    if (d.type != DataType::kFLOAT || d.format != TensorFormat::kLINEAR ||
        d.device != DeviceKind::kCPU) {
      *whyNot = (isOutput ? std::string("output 0") : "input " + std::to_string(i)) + " is " +
                dataTypeName(d.type) + " " + formatName(d.format) + "; " + tactic +
                " supports fp32 linear CPU tensors only";
      return nullptr;
    }
    if (!isOutput) in.push_back({d.dims, d.type});
  }
  std::vector<TensorShape> out;
  Status s = infer(*p, in, out);
  if (!s.isOk()) {
    *whyNot = std::string(tactic) + ": " + s.message();
    return nullptr;
  }
  if (out[0].dims != config.outputs[0].dims) {
    *whyNot = std::string(tactic) + ": output dims in the configuration disagree with the inputs";
    return nullptr;
  }
  return p;
}

// A batch of independent products C_b = op(A_{a(b)}) op(B_{b(b)}), C_b consecutive [m, n]
// blocks of the output; a(b), b(b) index the stored matrices of A and B after broadcasting.
struct ProductPlan {
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  int64_t lda = 0, ldb = 0;
  int64_t aMatrices = 1, bMatrices = 1;  // stored matrices in each input
  std::vector<int64_t> aIndex, bIndex;   // per product
};

// Stored matrix of x for each output batch index, numpy broadcasting of the leading dims.
std::vector<int64_t> broadcastIndex(const Dims& out, const Dims& x) {
  const int32_t batch = out.nbDims - 2, xBatch = x.nbDims - 2;
  int64_t count = 1;
  for (int32_t i = 0; i < batch; ++i) count *= out.d[i];
  std::vector<int64_t> index(static_cast<size_t>(count));
  for (int64_t b = 0; b < count; ++b) {
    int64_t rest = b, stride = 1, at = 0;
    for (int32_t i = batch - 1; i >= 0; --i) {
      const int64_t coord = rest % out.d[i];
      rest /= out.d[i];
      const int32_t xi = i - (batch - xBatch);
      if (xi < 0) continue;
      if (x.d[xi] != 1) at += coord * stride;
      stride *= x.d[xi];
    }
    index[static_cast<size_t>(b)] = at;
  }
  return index;
}

int64_t matrixCount(const Dims& x) {
  int64_t c = 1;
  for (int32_t i = 0; i + 2 < x.nbDims; ++i) c *= x.d[i];
  return c;
}

ProductPlan planMatmul(const KernelConfig& config, const MatrixMultiplyParams& p) {
  const Dims& a = config.inputs[0].dims;
  const Dims& b = config.inputs[1].dims;
  const Dims& y = config.outputs[0].dims;
  ProductPlan plan;
  plan.transA = p.transposeA;
  plan.transB = p.transposeB;
  plan.m = y.d[y.nbDims - 2];
  plan.n = y.d[y.nbDims - 1];
  plan.k = p.transposeA ? a.d[a.nbDims - 2] : a.d[a.nbDims - 1];
  plan.lda = a.d[a.nbDims - 1];
  plan.ldb = b.d[b.nbDims - 1];
  plan.aMatrices = matrixCount(a);
  plan.bMatrices = matrixCount(b);
  plan.aIndex = broadcastIndex(y, a);
  plan.bIndex = broadcastIndex(y, b);
  // One shared B and a stack of untransposed A matrices, one per output: the stack is one tall
  // [batch*m, k] matrix, and a single large product beats many small ones.
  const int64_t products = static_cast<int64_t>(plan.aIndex.size());
  if (plan.bMatrices == 1 && !plan.transA && plan.aMatrices == products && products > 1) {
    plan.m *= products;
    plan.aMatrices = 1;
    plan.aIndex.assign(1, 0);
    plan.bIndex.assign(1, 0);
  }
  return plan;
}

// Plain loops with double accumulation.
class MatmulReference final : public Kernel {
 public:
  explicit MatmulReference(ProductPlan plan) : plan_(std::move(plan)) {}

  Status run(const void* const* inputs, void* const* outputs, void*) const override {
    const auto* a = static_cast<const float*>(inputs[0]);
    const auto* b = static_cast<const float*>(inputs[1]);
    auto* y = static_cast<float*>(outputs[0]);
    const ProductPlan& q = plan_;
    for (size_t t = 0; t < q.aIndex.size(); ++t) {
      const float* at = a + q.aIndex[t] * q.m * q.k;
      const float* bt = b + q.bIndex[t] * q.k * q.n;
      float* yt = y + static_cast<int64_t>(t) * q.m * q.n;
      for (int64_t i = 0; i < q.m; ++i)
        for (int64_t j = 0; j < q.n; ++j) {
          double sum = 0.0;
          for (int64_t p = 0; p < q.k; ++p) {
            const float av = q.transA ? at[p * q.lda + i] : at[i * q.lda + p];
            const float bv = q.transB ? bt[j * q.ldb + p] : bt[p * q.ldb + j];
            sum += static_cast<double>(av) * bv;
          }
          yt[i * q.n + j] = static_cast<float>(sum);
        }
    }
    return Status::ok();
  }

 private:
  ProductPlan plan_;
};

// One sgemm per product; constant operands are packed once, per stored matrix.
class MatmulSgemm final : public Kernel {
 public:
  MatmulSgemm(ProductPlan plan, const void* constA, const void* constB) : plan_(std::move(plan)) {
    const ProductPlan& q = plan_;
    if (constA)
      for (int64_t i = 0; i < q.aMatrices; ++i)
        packedA_.push_back(PackedMatrix::packA(
            q.m, q.k, {static_cast<const float*>(constA) + i * q.m * q.k, q.lda, q.transA}));
    if (constB)
      for (int64_t i = 0; i < q.bMatrices; ++i)
        packedB_.push_back(PackedMatrix::packB(
            q.k, q.n, {static_cast<const float*>(constB) + i * q.k * q.n, q.ldb, q.transB}));
  }

  size_t workspaceSize() const override { return sgemmWorkspaceSize(plan_.m, plan_.n, plan_.k); }

  Status run(const void* const* inputs, void* const* outputs, void* workspace) const override {
    const auto* a = static_cast<const float*>(inputs[0]);
    const auto* b = static_cast<const float*>(inputs[1]);
    auto* y = static_cast<float*>(outputs[0]);
    const ProductPlan& q = plan_;
    for (size_t t = 0; t < q.aIndex.size(); ++t) {
      GemmOperand ga, gb;
      const int64_t ia = q.aIndex[t], ib = q.bIndex[t];
      if (!packedA_.empty()) {
        ga.packed = &packedA_[static_cast<size_t>(ia)];
      } else {
        ga.raw = {a + ia * q.m * q.k, q.lda, q.transA};
      }
      if (!packedB_.empty()) {
        gb.packed = &packedB_[static_cast<size_t>(ib)];
      } else {
        gb.raw = {b + ib * q.k * q.n, q.ldb, q.transB};
      }
      sgemm(q.m, q.n, q.k, 1.f, ga, gb, 0.f, y + static_cast<int64_t>(t) * q.m * q.n, q.n,
            workspace);
    }
    return Status::ok();
  }

 private:
  ProductPlan plan_;
  std::vector<PackedMatrix> packedA_, packedB_;
};

std::unique_ptr<Kernel> createMatmulSgemm(const KernelConfig& config, std::string* whyNot) {
  const auto* p = validate<MatrixMultiplyParams>(
      config, LayerType::kMATRIX_MULTIPLY, "matrix multiply", "sgemm", inferMatrixMultiply, whyNot);
  if (!p) return nullptr;
  return std::make_unique<MatmulSgemm>(planMatmul(config, *p), constantInput(config, 0),
                                       constantInput(config, 1));
}

std::unique_ptr<Kernel> createMatmulReference(const KernelConfig& config, std::string* whyNot) {
  const auto* p =
      validate<MatrixMultiplyParams>(config, LayerType::kMATRIX_MULTIPLY, "matrix multiply",
                                     "reference", inferMatrixMultiply, whyNot);
  if (!p) return nullptr;
  return std::make_unique<MatmulReference>(planMatmul(config, *p));
}

// ONNX Gemm: Y = alpha * op(A) op(B) + beta * C, C broadcast to [m, n].
struct GemmGeometry {
  GemmParams p;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0;
  bool hasC = false;
  int64_t cRows = 1, cCols = 1;  // C's extent after aligning it right to [m, n]

  float cAt(const float* c, int64_t i, int64_t j) const {
    return c[(cRows == 1 ? 0 : i) * cCols + (cCols == 1 ? 0 : j)];
  }
};

GemmGeometry gemmGeometry(const KernelConfig& config, const GemmParams& p) {
  GemmGeometry g;
  g.p = p;
  const Dims& a = config.inputs[0].dims;
  const Dims& b = config.inputs[1].dims;
  g.m = config.outputs[0].dims.d[0];
  g.n = config.outputs[0].dims.d[1];
  g.k = p.transposeA ? a.d[0] : a.d[1];
  g.lda = a.d[1];
  g.ldb = b.d[1];
  g.hasC = config.inputs.size() == 3;
  if (g.hasC) {
    const Dims& c = config.inputs[2].dims;
    g.cRows = c.nbDims == 2 ? c.d[0] : 1;
    g.cCols = c.nbDims >= 1 ? c.d[c.nbDims - 1] : 1;
  }
  return g;
}

class GemmReference final : public Kernel {
 public:
  explicit GemmReference(const GemmGeometry& g) : g_(g) {}

  Status run(const void* const* inputs, void* const* outputs, void*) const override {
    const auto* a = static_cast<const float*>(inputs[0]);
    const auto* b = static_cast<const float*>(inputs[1]);
    const auto* c = g_.hasC ? static_cast<const float*>(inputs[2]) : nullptr;
    auto* y = static_cast<float*>(outputs[0]);
    const GemmParams& p = g_.p;
    for (int64_t i = 0; i < g_.m; ++i)
      for (int64_t j = 0; j < g_.n; ++j) {
        double sum = 0.0;
        for (int64_t q = 0; q < g_.k; ++q) {
          const float av = p.transposeA ? a[q * g_.lda + i] : a[i * g_.lda + q];
          const float bv = p.transposeB ? b[j * g_.ldb + q] : b[q * g_.ldb + j];
          sum += static_cast<double>(av) * bv;
        }
        double v = static_cast<double>(p.alpha) * sum;
        if (c) v += static_cast<double>(p.beta) * g_.cAt(c, i, j);
        y[i * g_.n + j] = static_cast<float>(v);
      }
    return Status::ok();
  }

 private:
  GemmGeometry g_;
};

// Y starts as beta * C (broadcast), then sgemm adds alpha * op(A) op(B). Computing beta * C
// first keeps ONNX's semantics exactly, even for beta 0 with non-finite C.
class GemmSgemm final : public Kernel {
 public:
  GemmSgemm(const GemmGeometry& g, const void* constA, const void* constB) : g_(g) {
    const GemmParams& p = g_.p;
    if (constA)
      packedA_ = PackedMatrix::packA(g_.m, g_.k,
                                     {static_cast<const float*>(constA), g_.lda, p.transposeA});
    if (constB)
      packedB_ = PackedMatrix::packB(g_.k, g_.n,
                                     {static_cast<const float*>(constB), g_.ldb, p.transposeB});
    hasPackedA_ = constA != nullptr;
    hasPackedB_ = constB != nullptr;
  }

  size_t workspaceSize() const override { return sgemmWorkspaceSize(g_.m, g_.n, g_.k); }

  Status run(const void* const* inputs, void* const* outputs, void* workspace) const override {
    const auto* c = g_.hasC ? static_cast<const float*>(inputs[2]) : nullptr;
    auto* y = static_cast<float*>(outputs[0]);
    const GemmParams& p = g_.p;
    if (c) {
      for (int64_t i = 0; i < g_.m; ++i)
        for (int64_t j = 0; j < g_.n; ++j) y[i * g_.n + j] = p.beta * g_.cAt(c, i, j);
    }
    GemmOperand ga, gb;
    if (hasPackedA_) {
      ga.packed = &packedA_;
    } else {
      ga.raw = {static_cast<const float*>(inputs[0]), g_.lda, p.transposeA};
    }
    if (hasPackedB_) {
      gb.packed = &packedB_;
    } else {
      gb.raw = {static_cast<const float*>(inputs[1]), g_.ldb, p.transposeB};
    }
    sgemm(g_.m, g_.n, g_.k, p.alpha, ga, gb, c ? 1.f : 0.f, y, g_.n, workspace);
    return Status::ok();
  }

 private:
  GemmGeometry g_;
  PackedMatrix packedA_, packedB_;
  bool hasPackedA_ = false, hasPackedB_ = false;
};

std::unique_ptr<Kernel> createGemmSgemm(const KernelConfig& config, std::string* whyNot) {
  const auto* p =
      validate<GemmParams>(config, LayerType::kGEMM, "gemm", "sgemm", inferGemm, whyNot);
  if (!p) return nullptr;
  return std::make_unique<GemmSgemm>(gemmGeometry(config, *p), constantInput(config, 0),
                                     constantInput(config, 1));
}

std::unique_ptr<Kernel> createGemmReference(const KernelConfig& config, std::string* whyNot) {
  const auto* p =
      validate<GemmParams>(config, LayerType::kGEMM, "gemm", "reference", inferGemm, whyNot);
  if (!p) return nullptr;
  return std::make_unique<GemmReference>(gemmGeometry(config, *p));
}

constexpr Tactic kMatrixMultiplyTactics[] = {
    {"sgemm", createMatmulSgemm},
    {"reference", createMatmulReference},
};

constexpr Tactic kGemmTactics[] = {
    {"sgemm", createGemmSgemm},
    {"reference", createGemmReference},
};

}  // namespace

std::span<const Tactic> matrixMultiplyTactics() { return kMatrixMultiplyTactics; }
std::span<const Tactic> gemmTactics() { return kGemmTactics; }

}  // namespace kiln::cpu
