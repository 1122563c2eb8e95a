#include "inference.h"
#include "core/integer_values.h"

#include <cstring>
#include <random>
#include <thread>

#include "core/random_fill.h"
#include "core/tensor_shape.h"
#include "kiln/float16.h"
#include "onnx_model.h"

namespace kiln::cli {
namespace {

size_t byteSize(const PluginTensorDesc& d) {
  const int64_t n = volume(d.dims);
  return n < 0 ? 0 : static_cast<size_t>(n) * dataTypeSize(d.type);
}

std::string dimsText(const Dims& d) {
  std::string s = "[";
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? "," : "") + std::to_string(d.d[i]);
  return s + "]";
}

}  // namespace

std::map<std::string, std::vector<int64_t>> integerValues(
    const std::map<std::string, HostTensor>& given) {
  std::map<std::string, std::vector<int64_t>> values;
  for (const auto& [name, t] : given) {
    if (t.desc.type != DataType::kINT32 && t.desc.type != DataType::kINT64) continue;
    values[name] =
        kiln::integerValues(t.data.data(), t.desc.type, t.data.size() / dataTypeSize(t.desc.type));
  }
  return values;
}

Status planFromArgs(const Args& args, const std::string& usage, std::vector<uint8_t>& plan,
                    std::string& source, const std::map<std::string, Dims>& givenShapes,
                    const std::map<std::string, std::vector<int64_t>>& givenValues) {
  const bool onnx = args.has("onnx");
  if (args.positional.size() != (onnx ? 0u : 1u)) return invalidArgument(usage);
  source = onnx ? args.get("onnx") : args.positional[0];
  if (onnx) {
    BuilderConfig config;
    KILN_RETURN_IF_ERROR(builderConfigFromArgs(args, config));
    ShapeArgs shapes;
    KILN_RETURN_IF_ERROR(shapesFromArgs(args, shapes));
    // With profiles the plan serves a range and the --input files are run-time shapes in it;
    // without, the model is built for the files' shapes, as onnxruntime would run it.
    if (shapes.profiles.empty()) {
      for (const auto& [name, dims] : givenShapes) {
        auto [it, added] = shapes.fixed.emplace(name, dims);
        if (!added && it->second != dims)
          return invalidArgument("input '" + name + "': --shapes says " + dimsText(it->second) +
                                 " but its --input file holds " + dimsText(dims));
      }
    }
    for (const auto& [name, values] : givenValues) {
      auto [it, added] = shapes.shapeValues.emplace(name, values);
      if (!added && it->second != values)
        return invalidArgument("input '" + name +
                               "': --shape-values and its --input file give different values");
    }
    return buildOnnxPlan(source, config, plan, shapes);
  }
  if (args.has("device") || args.has("fp16"))
    return invalidArgument(
        "--device and --fp16 choose how --onnx builds; a plan runs where it was built for");
  ShapeArgs shapes;
  KILN_RETURN_IF_ERROR(shapesFromArgs(args, shapes));
  if (!shapes.profiles.empty())
    return invalidArgument(
        "--shapes ranges (MIN,OPT,MAX) are for building; with a plan, --shapes NAME:DIMS sets the "
        "shape of a dynamic input for the run");
  if (!shapes.shapeValues.empty())
    return invalidArgument(
        "--shape-values is for building (--onnx); a plan holds the values it was built for "
        "(kiln inspect lists them)");
  return readFile(source, plan);
}

namespace {

// A dynamic input's run-time shape: from its --input file, else --shapes, else the opt shape of
// profile 0 (trtexec's default). Fixed dims must agree.
Status runShape(const IEngine& engine, const std::string& name, const Dims& declared,
                const Dims* given, const InputShapes& runShapes, Dims& out) {
  auto it = runShapes.find(name);
  if (given) {
    out = *given;
  } else if (it != runShapes.end()) {
    out = it->second;
  } else {
    out = engine.getProfileShape(name.c_str(), 0, OptProfileSelector::kOPT);
  }
  bool fits = out.nbDims == declared.nbDims;
  for (int32_t k = 0; fits && k < out.nbDims; ++k)
    fits = declared.d[k] < 0 || declared.d[k] == out.d[k];
  if (!fits)
    return invalidArgument("input '" + name + "' has shape " + dimsText(out) +
                           " but the plan expects " + dimsText(declared) + " (-1: any)");
  return Status::ok();
}

}  // namespace

Status prepareInputs(const IEngine& engine, std::map<std::string, HostTensor> given, unsigned seed,
                     std::vector<HostTensor>& inputs, const InputShapes& runShapes) {
  std::mt19937 rng(seed);
  inputs.clear();
  for (int32_t i = 0; i < engine.getNbIOTensors(); ++i) {
    const char* name = engine.getIOTensorName(i);
    if (engine.getTensorIOMode(name) != TensorIOMode::kINPUT) continue;
    HostTensor t;
    t.name = name;
    t.desc = engine.getTensorDesc(name);
    auto it = given.find(name);
    if (hasDynamicDim(t.desc.dims)) {
      t.dynamic = true;
      KILN_RETURN_IF_ERROR(runShape(engine, t.name, t.desc.dims,
                                    it == given.end() ? nullptr : &it->second.desc.dims, runShapes,
                                    t.desc.dims));
    } else if (runShapes.count(t.name) && runShapes.at(t.name) != t.desc.dims) {
      return invalidArgument("--shapes gives input '" + t.name + "' " +
                             dimsText(runShapes.at(t.name)) + ", but the plan fixes it at " +
                             dimsText(t.desc.dims));
    }
    t.data.resize(byteSize(t.desc));
    if (it == given.end() && engine.isShapeValueInput(name)) {
      const std::vector<int64_t> values = engine.getShapeValues(name);
      for (size_t k = 0; k < values.size(); ++k)
        setIntegerAt(t.data.data(), t.desc.type, k, values[k]);
    } else if (it == given.end()) {
      // Floats are random; integer inputs are zeros, because they are usually indices (box or
      // batch indices, gather indices) and 0 is valid for any index range.
      if (t.desc.type == DataType::kFLOAT || t.desc.type == DataType::kHALF ||
          t.desc.type == DataType::kBF16) {
        fillRandom(t.data.data(), t.desc.type, volume(t.desc.dims), rng);
      }
    } else {
      const HostTensor& g = it->second;
      if (g.desc.dims != t.desc.dims) {
        return invalidArgument("input '" + t.name + "' has shape " + dimsText(g.desc.dims) +
                               " but the plan expects " + dimsText(t.desc.dims));
      }
      const int64_t n = volume(t.desc.dims);
      if (g.desc.type == t.desc.type) {
        t.data = g.data;
      } else if (g.desc.type == DataType::kFLOAT &&
                 (t.desc.type == DataType::kHALF || t.desc.type == DataType::kBF16)) {
        const float* src = reinterpret_cast<const float*>(g.data.data());
        uint16_t* dst = reinterpret_cast<uint16_t*>(t.data.data());
        for (int64_t k = 0; k < n; ++k) {
          dst[k] = t.desc.type == DataType::kHALF ? floatToHalf(src[k]) : floatToBf16(src[k]);
        }
      } else {
        return invalidArgument("input '" + t.name + "' is " + dataTypeName(g.desc.type) +
                               " but the plan expects " + dataTypeName(t.desc.type));
      }
      given.erase(it);
    }
    inputs.push_back(std::move(t));
  }
  if (!given.empty()) {
    return notFound("the plan has no input called '" + given.begin()->first + "'");
  }
  return Status::ok();
}

namespace {

// The outputs at the context's shapes (a dynamic plan's depend on the inputs' set).
std::vector<HostTensor> outputTensors(const IEngine& engine, const IExecutionContext& context) {
  std::vector<HostTensor> outputs;
  for (int32_t i = 0; i < engine.getNbIOTensors(); ++i) {
    const char* name = engine.getIOTensorName(i);
    if (engine.getTensorIOMode(name) != TensorIOMode::kOUTPUT) continue;
    HostTensor t;
    t.name = name;
    t.desc = engine.getTensorDesc(name);
    t.desc.dims = context.getTensorShape(name);
    t.data.assign(byteSize(t.desc), 0);
    outputs.push_back(std::move(t));
  }
  return outputs;
}

}  // namespace

Status bindContext(IEngine& engine, const std::vector<HostTensor>& inputs, BoundContext& bound) {
  const IDevice& device = engine.getDevice();
  KILN_RETURN_IF_ERROR(engine.createExecutionContext(bound.context));
  KILN_RETURN_IF_ERROR(device.createStream(bound.stream));
  bound.in.resize(inputs.size());
  bound.hostInputs.reserve(inputs.size());  // their data() is bound: no reallocation
  for (const HostTensor& t : inputs)
    if (t.dynamic) KILN_RETURN_IF_ERROR(bound.context->setInputShape(t.name.c_str(), t.desc.dims));
  std::vector<std::string> missing;
  KILN_RETURN_IF_ERROR(bound.context->inferShapes(missing));
  if (!missing.empty()) return invalidArgument("no shape for dynamic input '" + missing[0] + "'");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string what = "input " + inputs[i].name;
    if (engine.isShapeValueInput(inputs[i].name.c_str())) {
      bound.hostInputs.push_back(inputs[i].data);
      if (!inputs[i].data.empty())  // an empty input needs no address
        KILN_RETURN_IF_ERROR(bound.context->setTensorAddress(inputs[i].name.c_str(),
                                                             bound.hostInputs.back().data()));
      continue;
    }
    KILN_RETURN_IF_ERROR(device.allocate(inputs[i].data.size(), what.c_str(), bound.in[i]));
    KILN_RETURN_IF_ERROR(
        device.copyFromHost(bound.in[i]->data(), inputs[i].data.data(), inputs[i].data.size()));
    KILN_RETURN_IF_ERROR(
        bound.context->setTensorAddress(inputs[i].name.c_str(), bound.in[i]->data()));
  }
  bound.outputs = outputTensors(engine, *bound.context);
  bound.out.resize(bound.outputs.size());
  for (size_t o = 0; o < bound.outputs.size(); ++o) {
    HostTensor& t = bound.outputs[o];
    const std::string what = "output " + t.name;
    KILN_RETURN_IF_ERROR(device.allocate(t.data.size(), what.c_str(), bound.out[o]));
    // Poisoned (NaN bytes), so an output element the engine never writes cannot pass.
    KILN_RETURN_IF_ERROR(
        device.fill(bound.out[o]->data(), 0xFF, t.data.size(), bound.stream->get()));
    KILN_RETURN_IF_ERROR(bound.context->setTensorAddress(t.name.c_str(), bound.out[o]->data()));
  }
  return bound.stream->synchronize();
}

Status readOutputs(const IEngine& engine, BoundContext& bound) {
  for (size_t o = 0; o < bound.outputs.size(); ++o) {
    KILN_RETURN_IF_ERROR(engine.getDevice().copyToHost(
        bound.outputs[o].data.data(), bound.out[o]->data(), bound.outputs[o].data.size()));
  }
  return Status::ok();
}

namespace {

// Each context runs on its own thread; host data goes in before and comes back after, outside
// the enqueues. With `graph`, each context keeps CUDA graphs (setCudaGraphs): its first enqueue
// runs layer by layer, the second captures, the rest replay; `graphStats` gets context 0's count.
Status runOnDevice(IEngine& engine, const std::vector<HostTensor>& inputs, int contexts,
                   int iterations, bool graph, std::vector<std::vector<HostTensor>>& all,
                   CudaGraphStats* graphStats) {
  struct Run : BoundContext {
    Status status;
  };
  std::vector<Run> runs(contexts);
  for (Run& run : runs) {
    KILN_RETURN_IF_ERROR(bindContext(engine, inputs, run));
    if (graph) KILN_RETURN_IF_ERROR(run.context->setCudaGraphs(true));
  }
  std::vector<std::thread> threads;
  for (Run& run : runs) {
    threads.emplace_back([&run, iterations] {
      const Stream stream = run.stream->get();
      for (int k = 0; k < iterations && run.status.isOk(); ++k)
        run.status = run.context->enqueue(stream);
      if (run.status) run.status = run.stream->synchronize();
    });
  }
  for (std::thread& t : threads) t.join();
  for (int c = 0; c < contexts; ++c) {
    Run& run = runs[c];
    if (!run.status) return run.status.withContext("context " + std::to_string(c));
    KILN_RETURN_IF_ERROR(readOutputs(engine, run));
    all.push_back(std::move(run.outputs));
  }
  if (graphStats && graph) *graphStats = runs[0].context->getCudaGraphStats();
  return Status::ok();
}

}  // namespace

Status runContexts(IEngine& engine, const std::vector<HostTensor>& inputs, int contexts,
                   int iterations, std::vector<HostTensor>& outputs, bool cudaGraph,
                   CudaGraphStats* graphStats) {
  if (contexts < 1 || iterations < 1) return invalidArgument("contexts and runs must be >= 1");
  std::vector<std::vector<HostTensor>> all;  // per context, its outputs
  if (cudaGraph && engine.getDevice().getKind() != DeviceKind::kCUDA)
    return invalidArgument("--cuda-graph needs a CUDA plan (--device cuda)");
  KILN_RETURN_IF_ERROR(
      runOnDevice(engine, inputs, contexts, iterations, cudaGraph, all, graphStats));
  for (int c = 1; c < contexts; ++c) {
    for (size_t o = 0; o < all[0].size(); ++o) {
      if (all[c][o].data != all[0][o].data) {
        return internalError("contexts 0 and " + std::to_string(c) + " disagree on output '" +
                             all[0][o].name + "'");
      }
    }
  }
  outputs = std::move(all[0]);
  return Status::ok();
}

std::vector<float> asFloats(const HostTensor& t) {
  const int64_t n = volume(t.desc.dims);
  std::vector<float> v(n > 0 ? static_cast<size_t>(n) : 0);
  if (!isFloatType(t.desc.type)) return v;
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = static_cast<float>(readElement(t.data.data(), t.desc.type, int64_t(k)));
  return v;
}

}  // namespace kiln::cli
