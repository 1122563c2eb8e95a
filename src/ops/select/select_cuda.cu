// Select on CUDA (ONNX Where): out = condition ? x : y, all three broadcast by
// select_semantics.h (shared with the CPU kernel). One tactic: "reference", for every data type
// (one kernel per element size), linear tensors only. Any non-zero condition byte is true.
#include "backends/cuda/element_size.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/layer_checks.h"
#include "ops/op.h"
#include "ops/select/select_semantics.h"

namespace kiln::cuda {
namespace {

struct SelectLayout {
  int32_t rank = 0;
  int64_t outDims[Dims::kMaxDims] = {};
  int64_t strides[3][Dims::kMaxDims] = {};  // per input, aligned to the output; 0 where broadcast
};

template <class T>
struct SelectOp {
  const uint8_t* cond;
  const T* x;
  const T* y;
  T* out;
  SelectLayout l;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t rem = i, oc = 0, ox = 0, oy = 0;
    for (int32_t k = l.rank - 1; k >= 0; --k) {
      const int64_t j = rem % l.outDims[k];
      rem /= l.outDims[k];
      oc += j * l.strides[0][k];
      ox += j * l.strides[1][k];
      oy += j * l.strides[2][k];
    }
    out[i] = cond[oc] != 0 ? x[ox] : y[oy];
  }
};

class SelectKernel final : public Kernel {
 public:
  SelectKernel(SelectLayout l, int64_t count, size_t elemSize)
      : l_(l), count_(count), elemSize_(elemSize) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    return bySize(elemSize_, [&](auto u) {
      using U = decltype(u);
      return launchElements(
          SelectOp<U>{static_cast<const uint8_t*>(in[0]), static_cast<const U*>(in[1]),
                      static_cast<const U*>(in[2]), static_cast<U*>(out[0]), l_},
          count_, ctx, "select");
    });
  }

 private:
  SelectLayout l_;
  int64_t count_;
  size_t elemSize_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const SelectParams* p = validate<SelectParams>(c, "select", 3, true, whyNot);
  if (!p) return nullptr;
  const Dims& out = c.outputs[0].dims;
  SelectLayout l;
  l.rank = out.nbDims;
  for (int32_t i = 0; i < out.nbDims; ++i) l.outDims[i] = out.d[i];
  for (size_t t = 0; t < 3; ++t)
    ops::select::broadcastStrides(c.inputs[t].dims, out.nbDims, l.strides[t]);
  return std::make_unique<SelectKernel>(l, volume(out), dataTypeSize(c.outputs[0].type));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Select::cudaTactics() { return cuda::kTactics; }
