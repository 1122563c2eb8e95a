// Parameters of the built-in LRN layer (local response normalisation across channels, ONNX LRN;
// src/ops/lrn/).
#pragma once

#include <cstdint>

namespace kiln {

struct LRNParams {
  int32_t size = 1;
  float alpha = 1e-4f;
  float beta = 0.75f;
  float bias = 1.f;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("size", p.size);
    v("alpha", p.alpha);
    v("beta", p.beta);
    v("bias", p.bias);
  }
};

}  // namespace kiln
