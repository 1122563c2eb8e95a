// The CPU reference tactic of the row normalisations (LayerNormalization, RMSNormalization,
// GroupNormalization): X is cut into rows of contiguous elements and each row is normalised by its
// op's StoredRow (the op's semantics header, which the CUDA reference runs too). What the three
// tactics would otherwise repeat is here once: the checks of the configuration, the dispatch over
// the float types (fp16 and bf16 taken as they are, through backends/cpu/float_elements.h, so
// that a half network keeps its bytes and the FP32 statistics can be tested on the host) and the
// loop over the rows, on the caller or ("split" tactics) over the CPU thread pool: every row is
// computed the same way either way, so the results are bitwise the same.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/cpu/float_elements.h"
#include "backends/cpu/tactic_checks.h"
#include "backends/cpu/thread_pool.h"

namespace kiln::cpu::row_normalization {

// The layer's params when the configuration is consistent (cpu::validate), every tensor linear
// (rows are contiguous runs of X's row-major order) and every input of X's type; `params` names
// the inputs after X in the type error ("Scale and B").
template <class P>
const P* validate(const KernelConfig& c, const char* layer, int nbInputs, InferFn<P> infer,
                  const char* params, std::string* whyNot) {
  const P* p = cpu::validate<P>(c, layer, nbInputs, infer, whyNot);
  if (!p || !allLinear(c, layer, whyNot)) return nullptr;
  const DataType t = c.inputs[0].type;
  for (const auto& d : c.inputs)
    if (d.type != t) {
      setWhyNot(whyNot, std::string(layer) + ": " + params + " must have X's type (" +
                            dataTypeName(t) + "), got " + dataTypeName(d.type));
      return nullptr;
    }
  return p;
}

// Row::normalize<E>(g, r, xr, scale, bias, yr) over the g.rows rows of g.len elements, E the
// FloatElement of the layer's type; bias is input 2, nullptr when the layer has two inputs.
template <class Row, class Geometry>
class RowKernel final : public Kernel {
 public:
  RowKernel(const char* layer, const Geometry& g, DataType type, bool hasBias, bool split)
      : layer_(layer), g_(g), type_(type), hasBias_(hasBias), split_(split) {}

  Status run(const void* const* in, void* const* out, void*) const override {
    switch (type_) {
      case DataType::kFLOAT:
        return rows<FloatElement<DataType::kFLOAT>>(in, out[0]);
      case DataType::kHALF:
        return rows<FloatElement<DataType::kHALF>>(in, out[0]);
      case DataType::kBF16:
        return rows<FloatElement<DataType::kBF16>>(in, out[0]);
      default:  // refused when the kernel was made
        return internalError(std::string(layer_) + ": unexpected type " + dataTypeName(type_));
    }
  }

 private:
  template <class E>
  Status rows(const void* const* in, void* out) const {
    using S = typename E::S;
    const auto* x = static_cast<const S*>(in[0]);
    const auto* scale = static_cast<const S*>(in[1]);
    const auto* bias = hasBias_ ? static_cast<const S*>(in[2]) : nullptr;
    auto* y = static_cast<S*>(out);
    auto rowsFrom = [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        Row::template normalize<E>(g_, r, x + r * g_.len, scale, bias, y + r * g_.len);
    };
    if (!split_) {
      rowsFrom(0, g_.rows);
      return Status::ok();
    }
    // A few tasks per thread, so that uneven threads even out.
    const int64_t tasks = std::min<int64_t>(g_.rows, 4 * int64_t{cpuThreadCount()});
    parallelFor(tasks, cpuThreadCount(),
                [&](int64_t t, int) { rowsFrom(t * g_.rows / tasks, (t + 1) * g_.rows / tasks); });
    return Status::ok();
  }

  const char* layer_;  // a string literal: the layer's name in messages
  Geometry g_;
  DataType type_;
  bool hasBias_;
  bool split_;
};

// `split`: the rows over the thread pool (a "split" tactic), else on the caller.
template <class Row, class Geometry>
KernelPtr makeKernel(const KernelConfig& c, const char* layer, const Geometry& g,
                     bool split = false) {
  return std::make_unique<RowKernel<Row, Geometry>>(layer, g, c.inputs[0].type,
                                                    c.inputs.size() == 3, split);
}

}  // namespace kiln::cpu::row_normalization
