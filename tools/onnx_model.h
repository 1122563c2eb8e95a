// ONNX models on the command line: parse and build in memory, and TensorProto input files.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "inference.h"
#include "kiln/builder.h"
#include "kiln/status.h"

namespace kiln::cli {

// Shapes for the graph inputs of a model with symbolic dims, by input name (OnnxParserOptions).
using InputShapes = std::map<std::string, Dims>;

// --shapes NAME:DIMS (repeatable; DIMS as 4x3x224x224): the shapes to build an ONNX model for.
// A range (NAME:MIN,OPT,MAX, an optimization profile) is refused: profiles are not built yet.
Status shapesFromArgs(const Args& args, InputShapes& shapes);

// Parses an ONNX model, for `shapes` where its inputs have symbolic dims, and builds a plan from
// it (an error when kiln was built without ONNX).
Status buildOnnxPlan(const std::string& modelPath, const BuilderConfig& config,
                     std::vector<uint8_t>& plan, const InputShapes& shapes = {});

// Reads an ONNX TensorProto (.pb) file as a host tensor named `name`.
Status readTensorProtoFile(const std::string& path, const std::string& name, HostTensor& tensor);

}  // namespace kiln::cli
