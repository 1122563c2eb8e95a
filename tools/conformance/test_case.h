// One ONNX backend test directory (model.onnx + test_data_set_*/{input,output}_N.pb): decide
// whether kiln claims it, and run it through parse -> build -> runtime -> compare.
#pragma once

#include <string>
#include <vector>

#include "conformance/model_info.h"
#include "conformance/tensor_compare.h"

namespace kiln::conformance {

enum class Outcome { kPassed, kFailed, kSkipped };

struct CaseResult {
  Outcome outcome = Outcome::kFailed;
  std::string detail;
};

// Skipped (with the reason in `detail`) unless every node's op is in `supportedOps`, every graph
// input and output has a type kiln can represent, the opset is one kiln claims and the test
// (directory name `test`) is not excluded; kPassed here means "claimed".
CaseResult claimTest(const std::string& test, const ModelInfo& info,
                     const std::vector<std::string>& supportedOps);

// How the test data's inputs reach kiln.
enum class InputMode {
  // Inputs kiln needs at build time (onnxConstantInputs: weights, shape operands) are frozen into
  // initializers from each data set, as a user exporting for a static-shape engine would.
  kFreezeBuildTimeInputs,
  // Every input stays a graph input, fed at run time as the test data gives it.
  kAllAtRunTime,
};

// Parses, builds (fast timing, FP32 only) and runs every test_data_set_* of the test in `dir`.
CaseResult runTest(const std::string& dir, const ModelInfo& info, const Tolerance& tol,
                   InputMode mode = InputMode::kFreezeBuildTimeInputs);

}  // namespace kiln::conformance
