// The one configuration rule of Reformat beyond its shape rule (ops::Reformat::infer sees no
// formats), checked by the tactics of both backends (reformat_cpu.cpp, reformat_cuda.cu).
#pragma once

#include <string>

#include "kiln/ops/reformat.h"
#include "kiln/types.h"

namespace kiln::ops::reformat {

// The output tensor is in the format the layer makes; else false with *whyNot saying so.
inline bool checkOutputFormat(const ReformatParams& p, TensorFormat output, std::string* whyNot) {
  if (output == p.outputFormat) return true;
  if (whyNot)
    *whyNot = std::string("reformat: output tensor is ") + formatName(output) +
              " but the layer makes " + formatName(p.outputFormat);
  return false;
}

}  // namespace kiln::ops::reformat
