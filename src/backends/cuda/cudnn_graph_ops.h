// Building blocks of cuDNN's graph (backend) API that kiln's graph tactics share: convolution's
// "cudnn_graph" tactics (cudnn_graph_convolution.cpp) and Linear's "cudnn_graph_fused"
// (ops/linear/linear_cudnn.cpp).
//
// Decisions:
// - An epilogue y = act(main + bias + residual) is a chain of pointwise operations after the main
//   operation, on virtual FP32 tensors, y the only one written: cuDNN's runtime fusion compiles the
//   whole graph into one kernel when the plan is made, and the epilogue is computed in FP32 and
//   rounded once, as kiln's own epilogue kernels do.
// - Plans: of the heuristic's (mode A) engine configurations, in its order, those that finalize,
//   whose numerics kiln allows (never nondeterministic, never a reduced-precision reduction, never
//   TF32 or down-converted inputs for FP32) and whose workspace fits, the one of the tactic's rank.
// Include only from .cpp files (cudnn.h).
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "backends/cuda/non_copyable.h"
#include "kiln/ops/activation.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln::cuda::cudnn_graph {

// Whether the runtime-fused tactics ("cudnn_graph_fused" of Convolution and Linear) are offered:
// yes unless the environment sets KILN_CUDNN_FUSION=0, to tell a wrong result of theirs from
// others' (as KILN_IN_PLACE=0 does for in-place residuals).
bool runtimeFusionEnabled();

// Every tensor a plan reads or writes is 16-byte aligned: the builder places every one so.
constexpr int64_t kAlignment = 16;
constexpr int64_t kMaxWorkspace = int64_t{512} << 20;

// One backend descriptor, destroyed with its owner.
class Descriptor : NonCopyable {
 public:
  ~Descriptor();
  Status create(cudnnBackendDescriptorType_t type);
  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t* address() { return &d_; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

Status setAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                    cudnnBackendAttributeType_t type, int64_t count, const void* values);
template <class T>
Status set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
           cudnnBackendAttributeType_t type, const T* values, int64_t count = 1) {
  return setAttribute(d, name, type, count, values);
}

// A finalized tensor descriptor; a virtual one lives only inside the fused kernel.
Status makeTensor(Descriptor& t, cudnnDataType_t type, int64_t uid,
                  std::initializer_list<int64_t> dims, std::initializer_list<int64_t> strides,
                  bool isVirtual = false);

// True when cuDNN has a pointwise mode computing `activation` with kiln's alpha/beta
// (activation_semantics.h): ReLU, leaky ReLU, clip, sigmoid, tanh, GELU, tanh GELU.
bool hasPointwiseActivation(ActivationType activation, float alpha, float beta);

// The epilogue's operations and the tensors it adds, kept alive until the graph is finalized.
struct Epilogue {
  Epilogue(bool bias, bool residual, bool activation, ActivationType type, float alpha, float beta)
      : bias(bias),
        residual(residual),
        activation(activation),
        type(type),
        alpha(alpha),
        beta(beta) {}
  bool bias = false, residual = false, activation = false;
  ActivationType type = ActivationType::kRELU;
  float alpha = 0.f, beta = 0.f;
  Descriptor biasTensor, residualTensor, virtuals[2], modes[3], ops[3];
  int count = 0;
};

// Appends to `ops` the epilogue e from `main` (the main operation's virtual FP32 output) to `y`:
// bias (tensor `biasDims`/`biasStrides` with uid `biasUid`), residual (y's shape, `residualUid`),
// then the activation; the intermediates are virtual FP32 tensors of y's shape with uids from
// `firstVirtualUid`. y's dims and strides are given again for them.
Status appendEpilogue(Epilogue& e, cudnnDataType_t ioType, Descriptor& main, Descriptor& y,
                      std::initializer_list<int64_t> yDims, std::initializer_list<int64_t> yStrides,
                      std::initializer_list<int64_t> biasDims,
                      std::initializer_list<int64_t> biasStrides, int64_t biasUid,
                      int64_t residualUid, int64_t firstVirtualUid,
                      std::vector<cudnnBackendDescriptor_t>& ops);

// Finalizes the operation graph of `ops` and the plan of the usable engine configuration of rank
// `rank` (the header's rules for `type`); unsupported() says why none.
Status makePlan(cudnnHandle_t handle, const std::vector<cudnnBackendDescriptor_t>& ops,
                DataType type, int rank, Descriptor& plan, size_t& workspace);

// Runs `plan` on `handle` with the tensors' pointers by uid (at most 8); refuses an unaligned
// pointer. The variant pack of the same pointers, ids and workspace made last on this thread is
// used again; one plan may run from several contexts at once, each with its own packs.
Status execute(cudnnHandle_t handle, const Descriptor& plan, const int64_t* uids,
               void* const* pointers, int64_t count, void* workspace, const char* tactic);

}  // namespace kiln::cuda::cudnn_graph
