// Linear's "cudnn_graph_fused" tactics: the product and its whole epilogue as one cuDNN operation
// graph, a matmul then pointwise operations (backends/cuda/cudnn_graph_ops.h), which cuDNN's
// runtime fusion compiles into one kernel when the plan is made.
//
// Why beside cuBLASLt: cuBLASLt's GELU epilogue is the tanh approximation, so an exported
// nn.GELU() (the erf form, ONNX Gelu "none", kiln's kGELU) runs as cuBLASLt's bias epilogue and
// then a pass of kiln's activation kernel over the output (cublaslt_bias_then_activation): in a
// ViT-B/16 at batch 64 that pass reads and writes 77.5 MB per block. cuDNN's pointwise GELU_FWD is
// the erf form, so here the GELU runs in the product's epilogue. The builder times this beside the
// cuBLASLt tactics and keeps the faster.
//
// Decisions: FP16 only (FP32 engines are TF32, which kiln refuses; BF16 not yet measured); X
// [rows, k] and Y [rows, n] row-major, W [k, n] or, with transposeW, [n, k], all as one batch of
// cuDNN's 3-D matmul; only a product with some epilogue whose activation cuDNN has (without one,
// cuBLASLt alone is the product). Ranks 0 and 1: the heuristic's first two usable engines.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn_convolution.h"  // withCudnnQueryHandle
#include "backends/cuda/cudnn_graph_ops.h"
#include "backends/cuda/device.h"
#include "backends/cuda/library_handles.h"
#include "ops/linear/linear_cuda.h"

namespace kiln::cuda {
namespace {

using cudnn_graph::Descriptor;
using cudnn_graph::set;

enum Uid : int64_t { kX = 1, kW = 2, kY = 3, kBias = 4, kResidual = 5, kProduct = 6, kVirtual = 7 };

class GraphLinear final : public Kernel {
 public:
  // `unaligned`: cuBLASLt's kernel of the same layer, for a call whose buffers are not all 16-byte
  // aligned (a user's binding may be anywhere; the plan is made for aligned ones).
  GraphLinear(const LinearGeometry& g, int rank, const char* tactic,
              std::unique_ptr<Kernel> unaligned)
      : g_(g), rank_(rank), tactic_(tactic), unaligned_(std::move(unaligned)) {}

  Status init() {
    return withCudnnQueryHandle([&](void* hv) -> Status {
      cudnnHandle_t h = static_cast<cudnnHandle_t>(hv);
      const cudnnDataType_t t = CUDNN_DATA_HALF;
      const int64_t rows = g_.rows, k = g_.k, n = g_.n;
      Descriptor x, w, y, product, matmul, op;
      KILN_RETURN_IF_ERROR(cudnn_graph::makeTensor(x, t, kX, {1, rows, k}, {rows * k, k, 1}));
      if (g_.p.transposeW)
        KILN_RETURN_IF_ERROR(cudnn_graph::makeTensor(w, t, kW, {1, k, n}, {k * n, 1, k}));
      else
        KILN_RETURN_IF_ERROR(cudnn_graph::makeTensor(w, t, kW, {1, k, n}, {k * n, n, 1}));
      KILN_RETURN_IF_ERROR(cudnn_graph::makeTensor(y, t, kY, {1, rows, n}, {rows * n, n, 1}));
      KILN_RETURN_IF_ERROR(cudnn_graph::makeTensor(product, CUDNN_DATA_FLOAT, kProduct,
                                                   {1, rows, n}, {rows * n, n, 1}, true));

      const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
      KILN_RETURN_IF_ERROR(matmul.create(CUDNN_BACKEND_MATMUL_DESCRIPTOR));
      KILN_RETURN_IF_ERROR(
          set(matmul.get(), CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute));
      KILN_CUDNN_CHECK(cudnnBackendFinalize(matmul.get()));
      const cudnnBackendAttributeType_t desc = CUDNN_TYPE_BACKEND_DESCRIPTOR;
      KILN_RETURN_IF_ERROR(op.create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR));
      KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_MATMUL_ADESC, desc, x.address()));
      KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_MATMUL_BDESC, desc, w.address()));
      KILN_RETURN_IF_ERROR(
          set(op.get(), CUDNN_ATTR_OPERATION_MATMUL_CDESC, desc, product.address()));
      KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_MATMUL_DESC, desc, matmul.address()));
      KILN_CUDNN_CHECK(cudnnBackendFinalize(op.get()));

      std::vector<cudnnBackendDescriptor_t> ops = {op.get()};
      cudnn_graph::Epilogue epilogue(g_.p.hasBias, g_.p.hasResidual, g_.p.hasActivation,
                                     g_.p.activation, g_.p.activationAlpha, g_.p.activationBeta);
      KILN_RETURN_IF_ERROR(cudnn_graph::appendEpilogue(epilogue, t, product, y, {1, rows, n},
                                                       {rows * n, n, 1}, {1, 1, n}, {n, n, 1},
                                                       kBias, kResidual, kVirtual, ops));
      return cudnn_graph::makePlan(h, ops, DataType::kHALF, rank_, plan_, workspace_);
    });
  }

  size_t workspaceSize() const override {
    return std::max(workspace_, unaligned_->workspaceSize());
  }
  bool usesLibraries() const override { return true; }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (ctx.emulate) return unsupported("cuDNN needs a GPU");
    int64_t uids[5] = {kX, kW, kY};
    void* pointers[5] = {const_cast<void*>(in[0]), const_cast<void*>(in[1]), out[0]};
    int64_t count = 3, slot = 2;
    if (g_.p.hasBias) {
      uids[count] = kBias;
      pointers[count++] = const_cast<void*>(in[slot++]);
    }
    if (g_.p.hasResidual) {
      uids[count] = kResidual;
      pointers[count++] = const_cast<void*>(in[slot]);
    }
    for (int64_t i = 0; i < count; ++i)
      if (reinterpret_cast<uintptr_t>(pointers[i]) % cudnn_graph::kAlignment != 0)
        return unaligned_->run(in, out, workspace, ctx);
    void* hv = nullptr;
    KILN_RETURN_IF_ERROR(ctx.libraries->cudnn(ctx.stream, hv));
    return cudnn_graph::execute(static_cast<cudnnHandle_t>(hv), plan_, uids, pointers, count,
                                workspace, tactic_);
  }

 private:
  LinearGeometry g_;
  int rank_;
  const char* tactic_;
  std::unique_ptr<Kernel> unaligned_;
  Descriptor plan_;
  size_t workspace_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> createLinearCudnnGraph(const KernelConfig& c, int rank, const char* tactic,
                                               std::string* whyNot) {
  LinearGeometry g;
  if (!readLinear(c, tactic, &g, whyNot)) return nullptr;
  auto decline = [&](const std::string& why) {
    if (whyNot) *whyNot = std::string(tactic) + ": " + why;
    return nullptr;
  };
  if (g.type != DataType::kHALF) return decline("fp16 only");
  if (!g.p.hasBias && !g.p.hasResidual && !g.p.hasActivation)
    return decline("no epilogue to fuse (the cuBLASLt tactics take a plain product)");
  if (g.p.hasActivation &&
      !cudnn_graph::hasPointwiseActivation(g.p.activation, g.p.activationAlpha, g.p.activationBeta))
    return decline("cuDNN has no pointwise mode for activation " +
                   std::to_string(static_cast<int32_t>(g.p.activation)));
  if (g.rows == 0 || g.n == 0 || g.k == 0) return decline("an empty product");
  if (!cudnn_graph::runtimeFusionEnabled()) return decline("turned off by KILN_CUDNN_FUSION=0");
  if (deviceCount() == 0) return decline("no CUDA GPU to make a plan on: " + noDeviceReason());
  std::unique_ptr<Kernel> unaligned = createLinearCublasLt(g, tactic, whyNot);
  if (!unaligned) return nullptr;
  auto kernel = std::make_unique<GraphLinear>(g, rank, tactic, std::move(unaligned));
  const Status s = kernel->init();
  if (!s) return decline(s.message());
  return kernel;
}

}  // namespace kiln::cuda
