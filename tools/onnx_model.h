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

// What --shapes (and trtexec's --minShapes/--optShapes/--maxShapes) say: either one shape per
// input (`fixed`: build for those shapes, or run a dynamic plan at them), or optimization
// profiles (build one plan for ranges).
struct ShapeArgs {
  InputShapes fixed;
  std::vector<OptimizationProfile> profiles;
  // Values of integer inputs (kiln run --input files), for those the model reads as shape
  // operands: OnnxParserOptions::shapeValues.
  std::map<std::string, std::vector<int64_t>> shapeValues;
};

// --shapes NAME:DIMS or NAME:MIN,OPT,MAX (repeatable; DIMS as 4x3x224x224). A name given again
// opens the next profile; an input given one shape beside ranges keeps it in every profile.
// --minShapes/--optShapes/--maxShapes take NAME:DIMS[,NAME:DIMS...] as trtexec does: one
// profile (added after the --shapes ones).
Status shapesFromArgs(const Args& args, ShapeArgs& shapes);

// Parses an ONNX model, for `shapes` where its inputs have symbolic dims (one shape each, or
// profiles), and builds a plan from it (an error when kiln was built without ONNX).
Status buildOnnxPlan(const std::string& modelPath, const BuilderConfig& config,
                     std::vector<uint8_t>& plan, const ShapeArgs& shapes = {});

// Reads an ONNX TensorProto (.pb) file as a host tensor named `name`.
Status readTensorProtoFile(const std::string& path, const std::string& name, HostTensor& tensor);

}  // namespace kiln::cli
