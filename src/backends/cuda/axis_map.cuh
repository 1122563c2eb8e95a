// The engine of the CUDA element movers whose every output element reads one input element
// found axis by axis: shuffle, slice, padding, tile and expand (the CPU's counterpart is
// backends/cpu/axis_map.h). Output element i is decoded into row-major coordinates; each axis
// turns its coordinate j into an input coordinate by the op's rule, or, for a rule that pads,
// -1: the element is the fill value. Axes are built and checked when the kernel is made, so
// every input offset is inside the input.
//
// A rule is a small struct with
//   static constexpr bool kPads;  // whether it may return -1
//   __host__ __device__ int64_t operator()(const MapAxis& axis, int64_t j) const;
// usually calling the op's semantics header (src/ops/<op>/<op>_semantics.h), which the CPU's
// tables are built from too.
#pragma once

#include <cstring>

#include "backends/cuda/element_size.cuh"
#include "backends/cuda/elements.cuh"

namespace kiln::cuda {

struct MapAxis {
  int64_t outDim = 1;
  int64_t inDim = 1;
  int64_t inStride = 0;  // elements
  int64_t start = 0;     // slice: input coordinate start + j * step
  int64_t step = 1;
  int64_t before = 0;  // padding: input coordinate j - before
};

struct AxisMap {
  int32_t rank = 0;
  MapAxis axes[Dims::kMaxDims];
  uint64_t fill = 0;  // padding value, low bytes
  int64_t count = 0;  // output elements
};

// The rule of a plain copy along an axis: output coordinate j reads input coordinate j.
struct SameCoordinate {
  static constexpr bool kPads = false;
  __host__ __device__ int64_t operator()(const MapAxis&, int64_t j) const { return j; }
};

template <class T, class Rule>
struct MapOp {
  const T* in;
  T* out;
  AxisMap m;
  T fill;
  Rule rule;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t rem = i, off = 0;
    bool pad = false;
    for (int32_t k = m.rank - 1; k >= 0; --k) {
      const MapAxis& a = m.axes[k];
      const int64_t j = rem % a.outDim;
      rem /= a.outDim;
      int64_t s = rule(a, j);
      if constexpr (Rule::kPads) {
        if (s < 0) {
          pad = true;
          s = 0;
        }
      }
      off += s * a.inStride;
    }
    out[i] = pad ? fill : in[off];
  }
};

template <class Rule>
Status runMap(const AxisMap& m, const Rule& rule, size_t elemSize, const void* in, void* out,
              const RunContext& ctx, const char* name) {
  return bySize(elemSize, [&](auto u) {
    using U = decltype(u);
    U fill;
    std::memcpy(&fill, &m.fill, sizeof fill);  // little-endian: the low bytes hold the value
    return launchElements(
        MapOp<U, Rule>{static_cast<const U*>(in), static_cast<U*>(out), m, fill, rule}, m.count,
        ctx, name);
  });
}

inline void rowMajorStrides(const Dims& d, int64_t* strides) {
  int64_t s = 1;
  for (int32_t i = d.nbDims - 1; i >= 0; --i) {
    strides[i] = s;
    s *= d.d[i];
  }
}

// A map with one axis per output dim and the input strides of `in` (same rank), every axis a
// plain copy (start 0, step 1, no padding); callers then set what their rule reads.
inline AxisMap identityMap(const Dims& in, const Dims& out) {
  AxisMap m;
  m.rank = out.nbDims;
  int64_t strides[Dims::kMaxDims] = {};
  rowMajorStrides(in, strides);
  for (int32_t k = 0; k < out.nbDims; ++k) {
    m.axes[k].outDim = out.d[k];
    m.axes[k].inDim = in.d[k];
    m.axes[k].inStride = strides[k];
  }
  m.count = volume(out);
  return m;
}

// The kernel of a mover that is one axis map: one input, one output.
template <class Rule>
class MapKernel final : public Kernel {
 public:
  MapKernel(AxisMap m, Rule rule, size_t elemSize, const char* name)
      : m_(m), rule_(rule), elemSize_(elemSize), name_(name) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    return runMap(m_, rule_, elemSize_, in[0], out[0], ctx, name_);
  }

 private:
  AxisMap m_;
  Rule rule_;
  size_t elemSize_;
  const char* name_;
};

// A MapKernel with the (stateless) Rule over elements of `type`; `name` names its launch.
template <class Rule>
KernelPtr makeMapKernel(const AxisMap& m, DataType type, const char* name) {
  return std::make_unique<MapKernel<Rule>>(m, Rule{}, dataTypeSize(type), name);
}

}  // namespace kiln::cuda
