#include "conformance/test_case.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "core/integer_values.h"
#include "kiln/builder.h"
#include "kiln/network.h"
#include "kiln/onnx_parser.h"
#include "kiln/runtime.h"

namespace kiln::conformance {
namespace fs = std::filesystem;
namespace {

// Graph inputs that kiln needs at build time: kiln's shapes are static and weights are constants,
// so some operands must be known when the network is built (TensorRT needs the same of a
// static-shape network). The ONNX node tests feed them as graph inputs; the runner freezes such
// an input into an initializer holding that data set's tensor, as a user exporting for a
// static-shape engine would, and builds once per data set. Which inputs they are, each op's
// importer says (onnxConstantInputs).
bool mustBeConstant(const ModelIo& input) {
  for (const auto& [op, slot] : input.consumers) {
    const std::vector<int32_t>& slots = onnxConstantInputs(op);
    if (std::find(slots.begin(), slots.end(), slot) != slots.end()) return true;
  }
  return false;
}

// The N files name_0.pb, name_1.pb, ... present in `dir`, in order.
std::vector<std::string> numberedFiles(const fs::path& dir, const std::string& stem) {
  std::vector<std::string> files;
  for (int k = 0;; ++k) {
    fs::path p = dir / (stem + "_" + std::to_string(k) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p.string());
  }
  return files;
}

Status runDataSet(IEngine& engine, const fs::path& set, const ModelInfo& info,
                  const std::vector<bool>& frozen, const Tolerance& tol, std::string& summary) {
  const std::vector<std::string> inFiles = numberedFiles(set, "input");
  const std::vector<std::string> outFiles = numberedFiles(set, "output");
  if (inFiles.size() != info.inputs.size() || outFiles.size() != info.outputs.size()) {
    return invalidArgument(std::to_string(inFiles.size()) + " input and " +
                           std::to_string(outFiles.size()) + " output files for a model with " +
                           std::to_string(info.inputs.size()) + " inputs and " +
                           std::to_string(info.outputs.size()) + " outputs");
  }
  std::unique_ptr<IExecutionContext> context;
  KILN_RETURN_IF_ERROR(engine.createExecutionContext(context));
  // Buffers by engine tensor name; every engine I/O tensor must be bound by the test data.
  std::map<std::string, EngineBuffer> buffers;
  for (size_t k = 0; k < inFiles.size(); ++k) {
    if (frozen[k]) continue;
    const std::string& name = info.inputs[k].name;
    OnnxTensor tensor;
    KILN_RETURN_IF_ERROR(readOnnxTensorFile(inFiles[k], tensor));
    if (engine.getTensorIOMode(name.c_str()) != TensorIOMode::kINPUT ||
        engine.getTensorDesc(name.c_str()).dims.nbDims < 0) {
      return notFound("the engine has no input '" + name + "'");
    }
    KILN_RETURN_IF_ERROR(toEngineBuffer(tensor, engine.getTensorDesc(name.c_str()), buffers[name]));
  }
  std::vector<OnnxTensor> expected(outFiles.size());
  for (size_t k = 0; k < outFiles.size(); ++k) {
    const std::string& name = info.outputs[k].name;
    KILN_RETURN_IF_ERROR(readOnnxTensorFile(outFiles[k], expected[k]));
    const PluginTensorDesc desc = engine.getTensorDesc(name.c_str());
    if (desc.dims.nbDims < 0 || engine.getTensorIOMode(name.c_str()) != TensorIOMode::kOUTPUT) {
      return notFound("the engine has no output '" + name + "'");
    }
    EngineBuffer& out = buffers[name];
    out.desc = desc;
    const int64_t n = volume(desc.dims);
    out.data.assign(static_cast<size_t>(std::max<int64_t>(n, 0)) * dataTypeSize(desc.type), 0xCD);
  }
  for (int32_t i = 0; i < engine.getNbIOTensors(); ++i) {
    const char* name = engine.getIOTensorName(i);
    auto it = buffers.find(name);
    if (it == buffers.end()) {
      return notFound(std::string("engine tensor '") + name + "' is not a graph input or output");
    }
    KILN_RETURN_IF_ERROR(context->setTensorAddress(name, it->second.data.data()));
  }
  KILN_RETURN_IF_ERROR(context->enqueue(nullptr));
  for (size_t k = 0; k < expected.size(); ++k) {
    const std::string& name = info.outputs[k].name;
    std::string detail;
    if (!compareOutput(buffers[name], expected[k], tol, detail)) {
      return invalidArgument("output '" + name + "': " + detail);
    }
    summary += (summary.empty() ? "" : "; ") + name + ": " + detail;
  }
  return Status::ok();
}

}  // namespace

// The opsets kiln's parser claims (issue 3); a model importing another default-domain opset is
// skipped, not failed. Widen together with the parser.
constexpr int64_t kMinClaimedOpset = 1;
constexpr int64_t kMaxClaimedOpset = 21;

// Test variants kiln does not claim although their op is claimed, and why. Matched as prefixes
// of the test directory name.
struct Exclusion {
  const char* prefix;
  const char* reason;
};
constexpr Exclusion kExclusions[] = {
    {"test_training_dropout", "training-mode Dropout is random; kiln is an inference engine"},
    {"test_batchnorm_epsilon_training_mode", "training-mode BatchNormalization (batch statistics)"},
    {"test_batchnorm_example_training_mode", "training-mode BatchNormalization (batch statistics)"},
};

CaseResult claimTest(const std::string& test, const ModelInfo& info,
                     const std::vector<std::string>& supportedOps) {
  const std::set<std::string> supported(supportedOps.begin(), supportedOps.end());
  std::set<std::string> missing;
  for (const std::string& op : info.nodeOps) {
    if (!supported.count(op)) missing.insert(op);
  }
  CaseResult result;
  result.outcome = Outcome::kSkipped;
  if (!missing.empty()) {
    result.detail = "ops not claimed:";
    for (const std::string& op : missing) result.detail += " " + op;
    return result;
  }
  if (info.nodeOps.empty()) {
    result.detail = "no nodes";
    return result;
  }
  if (info.opset < kMinClaimedOpset || info.opset > kMaxClaimedOpset) {
    result.detail = "opset " + std::to_string(info.opset) + " (kiln claims opsets " +
                    std::to_string(kMinClaimedOpset) + " to " + std::to_string(kMaxClaimedOpset) +
                    ")";
    return result;
  }
  for (const Exclusion& e : kExclusions) {
    if (test.rfind(e.prefix, 0) == 0) {
      result.detail = std::string("not claimed: ") + e.reason;
      return result;
    }
  }
  auto checkIo = [&](const std::vector<ModelIo>& ios, const char* what) {
    for (const ModelIo& io : ios) {
      if (!isKilnElemType(io.elemType)) {
        result.detail = std::string(what) + " '" + io.name + "' is " + elemTypeName(io.elemType) +
                        ", which kiln has no type for";
        return false;
      }
    }
    return true;
  };
  if (!checkIo(info.inputs, "input") || !checkIo(info.outputs, "output")) return result;
  result.outcome = Outcome::kPassed;
  return result;
}

namespace {

// onnx::TensorProto::INT32 and INT64 (ModelIo::elemType's values).
constexpr int32_t kOnnxInt32 = 6, kOnnxInt64 = 7;

// The elements of an integer ONNX tensor, as int64.
Status integerValues(const OnnxTensor& t, std::vector<int64_t>& values) {
  const int64_t n = volume(t.dims);
  const size_t size = dataTypeSize(t.type);
  if (n < 0 || (t.type != DataType::kINT32 && t.type != DataType::kINT64) ||
      t.data.size() != static_cast<size_t>(n) * size)
    return invalidArgument("'" + t.name + "' is no INT32/INT64 tensor of its shape");
  values = kiln::integerValues(t.data.data(), t.type, static_cast<size_t>(n));
  return Status::ok();
}

// Parses (the file, or the model with `frozen` inputs taken from `set`; `valued` inputs built
// for `set`'s values as shape-value inputs), builds and loads.
Status buildEngine(const fs::path& dir, const fs::path& set, const ModelInfo& info,
                   const std::vector<bool>& frozen, const std::vector<bool>& valued,
                   std::unique_ptr<IEngine>& engine) {
  const std::string modelPath = (dir / "model.onnx").string();
  std::unique_ptr<INetworkDefinition> network = createNetwork();
  std::vector<std::pair<std::string, std::string>> constants;
  OnnxParserOptions options;
  for (size_t k = 0; k < info.inputs.size(); ++k) {
    const std::string file = (set / ("input_" + std::to_string(k) + ".pb")).string();
    if (frozen[k]) constants.emplace_back(info.inputs[k].name, file);
    if (valued[k]) {
      OnnxTensor t;
      KILN_RETURN_IF_ERROR(readOnnxTensorFile(file, t));
      KILN_RETURN_IF_ERROR(integerValues(t, options.shapeValues[info.inputs[k].name]));
    }
  }
  if (constants.empty()) {
    KILN_RETURN_IF_ERROR(parseOnnxFile(modelPath, *network, options).withContext("parse"));
  } else {
    std::string bytes, error;
    if (!freezeInputs(modelPath, constants, bytes, error)) return invalidArgument(error);
    KILN_RETURN_IF_ERROR(parseOnnxBytes(bytes.data(), bytes.size(), modelPath, *network, options)
                             .withContext("parse"));
  }
  BuilderConfig config;
  // Conformance is about semantics: FP32 everywhere, and one timing run is enough.
  config.allowHalf = false;
  config.warmupRuns = 0;
  config.timingRuns = 1;
  std::vector<uint8_t> plan;
  KILN_RETURN_IF_ERROR(
      createBuilder()->buildSerializedNetwork(*network, config, plan).withContext("build"));
  return createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).withContext("load");
}

}  // namespace

CaseResult runTest(const std::string& dirName, const ModelInfo& info, const Tolerance& tol,
                   InputMode mode) {
  const fs::path dir(dirName);
  CaseResult result;
  result.outcome = Outcome::kFailed;
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(entry.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) {
    result.detail = "no test_data_set_* directory";
    return result;
  }
  // Frozen: made an initializer. Valued (all inputs at run time): an integer shape operand, built
  // for the data set's values as a shape-value input and fed at run time like every input.
  std::vector<bool> frozen(info.inputs.size()), valued(info.inputs.size());
  std::string frozenNames, valuedNames;
  for (size_t k = 0; k < info.inputs.size(); ++k) {
    const bool buildTime = mustBeConstant(info.inputs[k]);
    frozen[k] = mode == InputMode::kFreezeBuildTimeInputs && buildTime;
    valued[k] = mode == InputMode::kAllAtRunTime && buildTime &&
                (info.inputs[k].elemType == kOnnxInt32 || info.inputs[k].elemType == kOnnxInt64);
    if (frozen[k]) frozenNames += (frozenNames.empty() ? "" : ",") + info.inputs[k].name;
    if (valued[k]) valuedNames += (valuedNames.empty() ? "" : ",") + info.inputs[k].name;
  }
  if (!valuedNames.empty()) frozenNames = "shape values of " + valuedNames;
  std::string summary;
  std::unique_ptr<IEngine> engine;
  for (const fs::path& set : sets) {
    Status s;
    if (!engine || !frozenNames.empty()) s = buildEngine(dir, set, info, frozen, valued, engine);
    if (s) s = runDataSet(*engine, set, info, frozen, tol, summary);
    if (!s) {
      result.detail = (frozenNames.empty() ? "" : "(frozen " + frozenNames + ") ") +
                      set.filename().string() + ": " + s.toString();
      // kiln claims an op, not every variant of it: a model that uses an attribute value, type or
      // rank the parser or the CPU backend says it does not support (kUnsupported, with the
      // reason) is listed as skipped, with that reason. Every other error is a failure.
      if (s.code() == StatusCode::kUnsupported) {
        result.outcome = Outcome::kSkipped;
        result.detail = "unsupported variant: " + result.detail;
      }
      return result;
    }
  }
  result.outcome = Outcome::kPassed;
  result.detail = (frozenNames.empty() ? "" : "frozen " + frozenNames + "; ") + summary;
  return result;
}

}  // namespace kiln::conformance
