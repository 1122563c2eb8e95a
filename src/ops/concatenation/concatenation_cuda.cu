// Concatenation on CUDA, linear tensors only, every data type. Seen as [outer, axis_i * inner],
// input i contributes one contiguous block per outer index at column offset colOffset_i of the
// output row. Three tactics: "vectorized" (a 16-byte copy kernel per input, where every run is
// whole vectors), "copy2d" (one strided copy-engine transfer per input) and "reference" (a
// per-element kernel per input, one kernel per element size).
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cuda/element_size.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/layer_checks.h"
#include "backends/cuda/vector_access.cuh"
#include "ops/op.h"

namespace kiln::cuda {
namespace {

struct ConcatPart {
  int64_t blockElems = 0;  // axis_i * inner
  int64_t colOffset = 0;   // elements before this input in an output row
};

template <class T>
struct ConcatOp {
  const T* in;
  T* out;
  int64_t blockElems, rowElems, colOffset;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t o = i / blockElems, r = i - o * blockElems;
    out[o * rowElems + colOffset + r] = in[i];
  }
};

struct ConcatLayout {
  int64_t outer = 0, rowElems = 0;
  size_t elemSize = 0;
  std::vector<ConcatPart> parts;
};

ConcatLayout concatLayout(const KernelConfig& c, const ConcatenationParams& p) {
  ConcatLayout l;
  const Dims& d = c.outputs[0].dims;
  const int32_t axis = p.axis < 0 ? p.axis + d.nbDims : p.axis;  // validated by inference
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < axis; ++i) outer *= d.d[i];
  for (int32_t i = axis + 1; i < d.nbDims; ++i) inner *= d.d[i];
  l.outer = outer;
  l.rowElems = d.d[axis] * inner;
  l.elemSize = dataTypeSize(c.outputs[0].type);
  int64_t col = 0;
  for (const auto& x : c.inputs) {
    ConcatPart part;
    part.blockElems = x.dims.d[axis] * inner;
    part.colOffset = col;
    col += part.blockElems;
    l.parts.push_back(part);
  }
  return l;
}

// One kernel per input. The reference copies element by element; the vectorized tactic copies
// 16-byte vectors on the SMs, each thread one vector of an output row's run. Why beside copy2d: a
// device-to-device cudaMemcpy2DAsync ran ViT-B/16 b64's class-token concatenation (19 MB) at about
// 1.25 TB/s on the H200. It needs every run and offset in whole vectors (checked at creation);
// where a binding is not 16-byte aligned it copies element by element too.
class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(ConcatLayout l, bool vectorized) : l_(std::move(l)), vectorized_(vectorized) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    const auto vectors = [this](int64_t elems) {
      return elems * static_cast<int64_t>(l_.elemSize) / 16;
    };
    for (size_t k = 0; k < l_.parts.size(); ++k) {
      const ConcatPart& part = l_.parts[k];
      if (part.blockElems == 0 || l_.outer == 0) continue;
      Status s;
      if (vectorized_ && isAligned(in[k]) && isAligned(out[0])) {
        s = launchElements(ConcatOp<uint4>{static_cast<const uint4*>(in[k]),
                                           static_cast<uint4*>(out[0]), vectors(part.blockElems),
                                           vectors(l_.rowElems), vectors(part.colOffset)},
                           l_.outer * vectors(part.blockElems), ctx, "concatenation_vectorized");
      } else {
        s = bySize(l_.elemSize, [&](auto u) {
          using U = decltype(u);
          return launchElements(ConcatOp<U>{static_cast<const U*>(in[k]), static_cast<U*>(out[0]),
                                            part.blockElems, l_.rowElems, part.colOffset},
                                l_.outer * part.blockElems, ctx, "concatenation");
        });
      }
      if (!s) return s;
    }
    return Status::ok();
  }

 private:
  ConcatLayout l_;
  bool vectorized_;
};

// The faster concatenation: one cudaMemcpy2DAsync per input (a strided copy engine transfer;
// capturable as a memcpy node). Under emulation the same 2-D copy runs on the host.
class ConcatCopy2DKernel final : public Kernel {
 public:
  explicit ConcatCopy2DKernel(ConcatLayout l) : l_(std::move(l)) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    const size_t e = l_.elemSize;
    const size_t dpitch = static_cast<size_t>(l_.rowElems) * e;
    for (size_t k = 0; k < l_.parts.size(); ++k) {
      const ConcatPart& part = l_.parts[k];
      if (part.blockElems == 0 || l_.outer == 0) continue;
      const size_t width = static_cast<size_t>(part.blockElems) * e;
      auto* dst = static_cast<uint8_t*>(out[0]) + static_cast<size_t>(part.colOffset) * e;
      const auto* src = static_cast<const uint8_t*>(in[k]);
      if (ctx.emulate) {
        for (int64_t r = 0; r < l_.outer; ++r)
          std::memcpy(dst + static_cast<size_t>(r) * dpitch, src + static_cast<size_t>(r) * width,
                      width);
      } else {
        KILN_CUDA_CHECK(cudaMemcpy2DAsync(dst, dpitch, src, width, width,
                                          static_cast<size_t>(l_.outer), cudaMemcpyDeviceToDevice,
                                          static_cast<cudaStream_t>(ctx.stream)));
      }
    }
    return Status::ok();
  }

 private:
  ConcatLayout l_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ConcatenationParams* p =
      validate<ConcatenationParams>(c, "concatenation", -1, true, whyNot);
  if (!p) return nullptr;
  return std::make_unique<ConcatKernel>(concatLayout(c, *p), false);
}

KernelPtr createCopy2D(const KernelConfig& c, std::string* whyNot) {
  const ConcatenationParams* p =
      validate<ConcatenationParams>(c, "concatenation", -1, true, whyNot);
  if (!p) return nullptr;
  ConcatLayout l = concatLayout(c, *p);
  // cudaMemcpy2D refuses pitches above the device's memPitch (2^31 - 1 on current GPUs).
  const int64_t limit = std::numeric_limits<int32_t>::max();
  if (l.rowElems * static_cast<int64_t>(l.elemSize) > limit) {
    setWhyNot(whyNot, "concatenation: output rows of " +
                          std::to_string(l.rowElems * static_cast<int64_t>(l.elemSize)) +
                          " bytes exceed cudaMemcpy2D's pitch limit");
    return nullptr;
  }
  return std::make_unique<ConcatCopy2DKernel>(std::move(l));
}

KernelPtr createVectorized(const KernelConfig& c, std::string* whyNot) {
  const ConcatenationParams* p =
      validate<ConcatenationParams>(c, "concatenation", -1, true, whyNot);
  if (!p) return nullptr;
  ConcatLayout l = concatLayout(c, *p);
  const auto whole = [&l](int64_t elems) {
    return elems * static_cast<int64_t>(l.elemSize) % 16 == 0;
  };
  bool fits = whole(l.rowElems);
  for (const ConcatPart& part : l.parts) fits = fits && whole(part.blockElems);
  if (!fits) {
    setWhyNot(whyNot,
              "concatenation vectorized: every input's run in an output row must be a whole "
              "number of 16-byte vectors (copy2d and reference take the others)");
    return nullptr;
  }
  return std::make_unique<ConcatKernel>(std::move(l), true);
}

// Fastest first, kiln's per-element reference last.
constexpr Tactic kTactics[] = {
    {"vectorized", &createVectorized}, {"copy2d", &createCopy2D}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Concatenation::cudaTactics() { return cuda::kTactics; }
