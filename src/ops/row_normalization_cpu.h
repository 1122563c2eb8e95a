// The CPU reference tactic of the row normalisations (LayerNormalization, RMSNormalization,
// GroupNormalization): X is cut into rows of contiguous elements and each row is normalised by its
// op's StoredRow (the op's semantics header, which the CUDA reference runs too). What the three
// tactics would otherwise repeat is here once: the checks of the configuration, the dispatch over
// the float types (fp16 and bf16 taken as they are, through backends/cpu/float_elements.h, so
// that a half network keeps its bytes and the FP32 statistics can be tested on the host) and the
// loop over the rows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/cpu/float_elements.h"
#include "backends/cpu/tactic_checks.h"

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
  RowKernel(const char* layer, const Geometry& g, DataType type, bool hasBias)
      : layer_(layer), g_(g), type_(type), hasBias_(hasBias) {}

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
    for (int64_t r = 0; r < g_.rows; ++r)
      Row::template normalize<E>(g_, r, x + r * g_.len, scale, bias, y + r * g_.len);
    return Status::ok();
  }

  const char* layer_;  // a string literal: the layer's name in messages
  Geometry g_;
  DataType type_;
  bool hasBias_;
};

template <class Row, class Geometry>
KernelPtr makeKernel(const KernelConfig& c, const char* layer, const Geometry& g) {
  return std::make_unique<RowKernel<Row, Geometry>>(layer, g, c.inputs[0].type,
                                                    c.inputs.size() == 3);
}

}  // namespace kiln::cpu::row_normalization
