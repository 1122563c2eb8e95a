// ONNX models on the command line: parse and build in memory, and TensorProto input files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inference.h"
#include "kiln/builder.h"
#include "kiln/status.h"

namespace kiln::cli {

// Parses an ONNX model and builds a plan from it (an error when kiln was built without ONNX).
Status buildOnnxPlan(const std::string& modelPath, const BuilderConfig& config,
                     std::vector<uint8_t>& plan);

// Reads an ONNX TensorProto (.pb) file as a host tensor named `name`.
Status readTensorProtoFile(const std::string& path, const std::string& name, HostTensor& tensor);

}  // namespace kiln::cli
