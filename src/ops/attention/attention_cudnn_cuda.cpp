// Attention's "cudnn_sdpa" tactic: cuDNN's fused scaled dot-product attention, one operation of
// its graph API (CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, cuDNN 9.x), whose Hopper engines
// are written with the warp-group MMA and TMA that kiln's own flash_mma (mma.sync, cp.async) does
// not use. The builder times it beside flash_mma and keeps the faster, as it does every tactic.
//
// Decisions:
// - Q, K, V and O are described to cuDNN as [B, H, S, D] with the geometry's strides
//   (attention_semantics.h), so head views (a packed projection's slots, the sequence outermost)
//   reach it as they are, never copied. K transposed ([D, Sk] rows) is a stride too; whether
//   cuDNN takes a layout is its engines' answer, and a refusal is this tactic declining.
// - What it does not take: a mask and zeroNanRows (the layer's NaN-row rules are kiln's, not
//   cuDNN's), batch dims that broadcast or number more than two, FP32 (cuDNN's attention is
//   FP16/BF16), empty shapes.
// - The scale is a by-value FP32 scalar of the operation, held by the kernel.
// - Numerics: FP32 scores and softmax statistics, the probabilities rounded to the storage type
//   for the product with V, as flash_mma does (kiln/ops/attention.h); the harness compares it with
//   the FP32 reference like every other tactic.
// - A call whose buffers are not 16-byte aligned (a user's binding) runs the fallback kernel
//   (attention_cuda.h), as Linear's cuDNN tactic runs cuBLASLt.
// - KILN_CUDNN_SDPA=0 in the environment turns the tactic off, to tell a wrong result of its
//   from others'.
#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn_convolution.h"  // withCudnnQueryHandle
#include "backends/cuda/cudnn_graph_ops.h"
#include "backends/cuda/device.h"
#include "backends/cuda/float_layer_checks.h"
#include "backends/cuda/library_handles.h"
#include "ops/attention/attention_cuda.h"
#include "ops/attention/attention_semantics.h"

namespace kiln::cuda::attention {
namespace {

namespace at = ops::attention;
using cudnn_graph::Descriptor;
using cudnn_graph::set;

constexpr const char* kName = "cudnn_sdpa";

enum Uid : int64_t { kQ = 1, kK = 2, kV = 3, kO = 4, kScale = 5 };

bool sdpaEnabled() {
  const char* v = std::getenv("KILN_CUDNN_SDPA");
  return !(v && std::strcmp(v, "0") == 0);
}

// One of Q, K, V, O as cuDNN sees it: [B, H, S, D] and the strides of each, in elements.
struct Operand {
  int64_t dims[4];
  int64_t strides[4];
};

// The strides of a batch axis of size 1 are never read; cuDNN still wants them positive.
int64_t strideOf(int64_t size, int64_t stride, int64_t extent) {
  return size == 1 ? extent : stride;
}

Status makeOperand(Descriptor& t, cudnnDataType_t type, int64_t uid, const Operand& o) {
  return cudnn_graph::makeTensor(t, type, uid, {o.dims[0], o.dims[1], o.dims[2], o.dims[3]},
                                 {o.strides[0], o.strides[1], o.strides[2], o.strides[3]});
}

// A by-value FP32 scalar [1, 1, 1, 1].
Status makeScalar(Descriptor& t, int64_t uid) {
  KILN_RETURN_IF_ERROR(t.create(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
  const cudnnDataType_t type = CUDNN_DATA_FLOAT;
  const int64_t ones[4] = {1, 1, 1, 1};
  const int64_t alignment = 4;
  const bool byValue = true;
  KILN_RETURN_IF_ERROR(set(t.get(), CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type));
  KILN_RETURN_IF_ERROR(set(t.get(), CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, ones, 4));
  KILN_RETURN_IF_ERROR(set(t.get(), CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, ones, 4));
  KILN_RETURN_IF_ERROR(set(t.get(), CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid));
  KILN_RETURN_IF_ERROR(
      set(t.get(), CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment));
  KILN_RETURN_IF_ERROR(set(t.get(), CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, &byValue));
  KILN_CUDNN_CHECK(cudnnBackendFinalize(t.get()));
  return Status::ok();
}

class CudnnSdpa final : public Kernel {
 public:
  CudnnSdpa(const at::Geometry& g, DataType type, const Operand (&operands)[4],
            std::unique_ptr<Kernel> unaligned)
      : g_(g), type_(type), unaligned_(std::move(unaligned)), scale_(g.scale) {
    std::copy(operands, operands + 4, operands_);
  }

  Status init() {
    return withCudnnQueryHandle([&](void* hv) -> Status {
      cudnnHandle_t h = static_cast<cudnnHandle_t>(hv);
      const cudnnDataType_t t = type_ == DataType::kBF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
      Descriptor q, k, v, o, scale, op;
      KILN_RETURN_IF_ERROR(makeOperand(q, t, kQ, operands_[0]));
      KILN_RETURN_IF_ERROR(makeOperand(k, t, kK, operands_[1]));
      KILN_RETURN_IF_ERROR(makeOperand(v, t, kV, operands_[2]));
      KILN_RETURN_IF_ERROR(makeOperand(o, t, kO, operands_[3]));
      KILN_RETURN_IF_ERROR(makeScalar(scale, kScale));
      const cudnnBackendAttributeType_t desc = CUDNN_TYPE_BACKEND_DESCRIPTOR;
      KILN_RETURN_IF_ERROR(op.create(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR));
      KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, desc, q.address()));
      KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, desc, k.address()));
      KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, desc, v.address()));
      KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, desc, o.address()));
      KILN_RETURN_IF_ERROR(
          set(op.get(), CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, desc, scale.address()));
      KILN_CUDNN_CHECK(cudnnBackendFinalize(op.get()));
      const std::vector<cudnnBackendDescriptor_t> ops = {op.get()};
      return cudnn_graph::makePlan(h, ops, type_, 0, plan_, workspace_);
    });
  }

  size_t workspaceSize() const override {
    return std::max(workspace_, unaligned_->workspaceSize());
  }
  bool usesLibraries() const override { return true; }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (ctx.emulate) return unsupported("attention cudnn_sdpa: cuDNN needs a GPU");
    const size_t e = 2;  // FP16 and BF16
    int64_t uids[5] = {kQ, kK, kV, kO, kScale};
    void* pointers[5] = {const_cast<char*>(static_cast<const char*>(in[0])) + g_.qBase * e,
                         const_cast<char*>(static_cast<const char*>(in[1])) + g_.kBase * e,
                         const_cast<char*>(static_cast<const char*>(in[2])) + g_.vBase * e, out[0],
                         const_cast<float*>(&scale_)};
    for (int i = 0; i < 4; ++i)
      if (reinterpret_cast<uintptr_t>(pointers[i]) % cudnn_graph::kAlignment != 0)
        return unaligned_->run(in, out, workspace, ctx);
    void* hv = nullptr;
    KILN_RETURN_IF_ERROR(ctx.libraries->cudnn(ctx.stream, hv));
    return cudnn_graph::execute(static_cast<cudnnHandle_t>(hv), plan_, uids, pointers, 5, workspace,
                                kName);
  }

 private:
  at::Geometry g_;
  DataType type_;
  Operand operands_[4];
  std::unique_ptr<Kernel> unaligned_;
  // Read by cuDNN through the variant pack (by value), which execute() checks for 16-byte
  // alignment like every pointer in it.
  alignas(16) float scale_;
  Descriptor plan_;
  size_t workspace_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> createCudnnSdpa(const KernelConfig& c, std::string* whyNot) {
  auto decline = [&](const std::string& why) {
    if (whyNot) *whyNot = std::string(kName) + ": " + why;
    return nullptr;
  };
  const auto* p = validateFloatLayer<AttentionParams>(c, LayerType::kATTENTION, "attention", kName,
                                                      false, whyNot);
  if (!p) return nullptr;
  const DataType type = c.inputs[0].type;
  if (type != DataType::kHALF && type != DataType::kBF16) return decline("fp16 and bf16 only");
  if (c.inputs.size() == 4) return decline("no mask (the layer's mask rules are kiln's)");
  if (p->zeroNanRows) return decline("no zeroNanRows (the layer's NaN-row rule is kiln's)");
  const at::Geometry g = at::geometryOf(*p, c.inputs[0].dims, c.inputs[1].dims, c.inputs[2].dims,
                                        nullptr, c.outputs[0].dims);
  if (g.batchRank > 2) return decline("at most two batch dims (batch and heads)");
  if (g.count == 0 || g.sq == 0 || g.sk == 0 || g.d == 0 || g.dv == 0)
    return decline("an empty attention");
  // Batch axes as [B, H]: a missing one is 1.
  const int32_t first = 2 - g.batchRank;
  int64_t batch[2] = {1, 1};
  const int64_t* batchStrides[4] = {g.qStride, g.kStride, g.vStride, g.yStride};
  Operand operands[4];
  const int64_t seq[4] = {g.sq, g.sk, g.sk, g.sq};
  const int64_t depth[4] = {g.d, g.d, g.dv, g.dv};
  // Along S and along D: K transposed holds its keys as columns of [D, Sk].
  const int64_t rowStride[4] = {g.qRow, g.keyTransposed ? 1 : g.kRow, g.vRow, g.yRow};
  const int64_t depthStride[4] = {1, g.keyTransposed ? g.sk : 1, 1, 1};
  for (int32_t i = 0; i < g.batchRank; ++i) batch[first + i] = g.batch[i];
  for (int r = 0; r < 4; ++r) {
    Operand& o = operands[r];
    o.dims[0] = batch[0];
    o.dims[1] = batch[1];
    o.dims[2] = seq[r];
    o.dims[3] = depth[r];
    o.strides[2] = rowStride[r];
    o.strides[3] = depthStride[r];
    const int64_t matrix = std::max(seq[r] * rowStride[r], depth[r] * depthStride[r]);
    o.strides[0] = o.strides[1] = matrix;
    for (int32_t i = 0; i < g.batchRank; ++i) {
      const int64_t stride = batchStrides[r][i];
      if (stride == 0 && g.batch[i] > 1) return decline("batch dims that broadcast");
      o.strides[first + i] = strideOf(g.batch[i], stride, matrix);
    }
    for (int a = 0; a < 4; ++a)
      if (o.strides[a] != 1 && o.strides[a] % 8 != 0)
        return decline("a stride of " + std::to_string(o.strides[a]) +
                       " elements, not a multiple of 16 bytes");
  }
  for (int64_t base : {g.qBase, g.kBase, g.vBase})
    if (base % 8 != 0) return decline("a head view that starts off a 16-byte boundary");
  if (!sdpaEnabled()) return decline("turned off by KILN_CUDNN_SDPA=0");
  if (deviceCount() == 0) return decline("no CUDA GPU to make a plan on: " + noDeviceReason());
  std::unique_ptr<Kernel> unaligned = createUnalignedFallback(c, whyNot);
  if (!unaligned) return nullptr;
  auto kernel = std::make_unique<CudnnSdpa>(g, type, operands, std::move(unaligned));
  const Status s = kernel->init();
  if (!s) return decline(s.message());
  return kernel;
}

}  // namespace kiln::cuda::attention
