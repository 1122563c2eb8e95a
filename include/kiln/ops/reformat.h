// Parameters of the built-in Reformat layer: a type and/or format conversion, inserted by the
// builder where neighbours disagree, and ONNX Cast (src/ops/reformat/).
#pragma once

#include "kiln/types.h"

namespace kiln {

struct ReformatParams {
  DataType outputType = DataType::kFLOAT;
  TensorFormat outputFormat = TensorFormat::kLINEAR;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("outputType", p.outputType);
    v("outputFormat", p.outputFormat);
  }
};

}  // namespace kiln
