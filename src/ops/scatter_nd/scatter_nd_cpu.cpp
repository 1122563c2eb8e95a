// ScatterND on the CPU. One tactic: "reference". Every index tuple is checked before anything is
// written, so a bad index fails run() naming it, with nothing written out of bounds. Then Data is
// copied to the output and the tuples apply in order (scatter_nd_semantics.h, as on CUDA): with
// no reduction the slice's bytes are copied (any type), with one the elements combine in fp32,
// int32 or int64.
#include <cstring>
#include <string>

#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/scatter_nd/scatter_nd_semantics.h"

namespace kiln::cpu {
namespace {

namespace sn = ops::scatter_nd;

template <class I>
Status checkIndices(const sn::Geometry& g, const I* indices) {
  for (int64_t t = 0; t < g.tuples; ++t) {
    int32_t axis = 0;
    if (sn::sliceStart(g, indices, t, &axis) < 0) {
      const int64_t v = static_cast<int64_t>(indices[t * g.k + axis]);
      return invalidArgument("scatter_nd: index " + std::to_string(v) + " of tuple " +
                             std::to_string(t) + " on axis " + std::to_string(axis) +
                             " is outside [" + std::to_string(-g.dims[axis]) + ", " +
                             std::to_string(g.dims[axis]) + ")");
    }
  }
  return Status::ok();
}

template <class T, class I>
void combineSlices(const sn::Geometry& g, const I* indices, const T* updates, T* out) {
  int32_t axis = 0;
  for (int64_t t = 0; t < g.tuples; ++t) {
    T* slice = out + sn::sliceStart(g, indices, t, &axis);
    const T* from = updates + t * g.sliceSize;
    for (int64_t e = 0; e < g.sliceSize; ++e)
      slice[e] = sn::combine(g.reduction, slice[e], from[e]);
  }
}

class ScatterNDKernel final : public Kernel {
 public:
  ScatterNDKernel(const sn::Geometry& g, DataType type, bool wide)
      : g_(g), type_(type), wide_(wide) {}

  Status run(const void* const* in, void* const* out, void*) const override {
    return wide_ ? runWith(static_cast<const int64_t*>(in[1]), in, out[0])
                 : runWith(static_cast<const int32_t*>(in[1]), in, out[0]);
  }

 private:
  template <class I>
  Status runWith(const I* indices, const void* const* in, void* out) const {
    KILN_RETURN_IF_ERROR(checkIndices(g_, indices));
    const size_t elem = dataTypeSize(type_);
    if (g_.count > 0) std::memcpy(out, in[0], static_cast<size_t>(g_.count) * elem);
    if (g_.reduction == ScatterReduction::kNONE) {
      int32_t axis = 0;
      const size_t sliceBytes = static_cast<size_t>(g_.sliceSize) * elem;
      for (int64_t t = 0; t < g_.tuples && sliceBytes; ++t)
        std::memcpy(static_cast<uint8_t*>(out) + sn::sliceStart(g_, indices, t, &axis) * elem,
                    static_cast<const uint8_t*>(in[2]) + t * static_cast<int64_t>(sliceBytes),
                    sliceBytes);
      return Status::ok();
    }
    switch (type_) {
      case DataType::kFLOAT:
        combineSlices(g_, indices, static_cast<const float*>(in[2]), static_cast<float*>(out));
        break;
      case DataType::kINT32:
        combineSlices(g_, indices, static_cast<const int32_t*>(in[2]), static_cast<int32_t*>(out));
        break;
      case DataType::kINT64:
        combineSlices(g_, indices, static_cast<const int64_t*>(in[2]), static_cast<int64_t*>(out));
        break;
      default:  // refused when the kernel was made
        return internalError(std::string("scatter_nd: no reduction for ") + dataTypeName(type_));
    }
    return Status::ok();
  }

  sn::Geometry g_;
  DataType type_;
  bool wide_;  // int64 indices
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const auto* p = validate<ScatterNDParams>(c, "scatter_nd", 3, &ops::ScatterND::infer, whyNot);
  if (!p || !allLinear(c, "scatter_nd", whyNot)) return nullptr;
  const DataType t = c.inputs[0].type;
  if (p->reduction != ScatterReduction::kNONE && t != DataType::kFLOAT && t != DataType::kINT32 &&
      t != DataType::kINT64) {
    setWhyNot(whyNot, std::string("scatter_nd: the CPU combines fp32, int32 or int64, got ") +
                          dataTypeName(t));
    return nullptr;
  }
  return std::make_unique<ScatterNDKernel>(
      sn::geometryOf(c.inputs[0].dims, c.inputs[1].dims, p->reduction), t,
      c.inputs[1].type == DataType::kINT64);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::ScatterND::cpuTactics() { return cpu::kTactics; }
