// Moving test data between ONNX's TensorProto files and kiln engine buffers, and judging outputs
// the way ONNX's backend tests do: |got - want| <= atol + rtol * |want|.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/onnx_parser.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln::conformance {

// A buffer in the engine's dims, type and format.
struct EngineBuffer {
  PluginTensorDesc desc;
  std::vector<uint8_t> data;
};

// Converts test data to what the engine wants: same shape required; element types are converted
// by value (the parser may narrow int64 to int32, for instance) and channels-last is laid out.
Status toEngineBuffer(const OnnxTensor& src, const PluginTensorDesc& want, EngineBuffer& out);

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// Compares an engine output with the expected tensor. Shapes must match exactly; integer and
// bool expectations must match exactly; NaN matches NaN and infinities match by sign. On a
// mismatch, returns false and says where in `detail`; on a match `detail` gets the worst error.
bool compareOutput(const EngineBuffer& got, const OnnxTensor& want, const Tolerance& tol,
                   std::string& detail);

std::string dimsText(const Dims& dims);

}  // namespace kiln::conformance
