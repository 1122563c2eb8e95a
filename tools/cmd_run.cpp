// kiln run PLAN: load a plan, run it on N contexts, write the outputs.
#include <cstdio>
#include <random>

#include "cli_common.h"
#include "commands.h"
#include "core/npy.h"
#include "inference.h"
#include "kiln/registry.h"
#include "onnx_model.h"

namespace kiln::cli {

int fail(const char* context, const Status& status) {
  std::fprintf(stderr, "kiln %s: %s\n", context, status.toString().c_str());
  flushTrace();
  return 1;
}

namespace {

Status parseInputs(const Args& args, std::map<std::string, HostTensor>& given) {
  for (const std::string& spec : args.all("input")) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return invalidArgument("--input expects NAME=FILE.npy or NAME=FILE.pb, got '" + spec + "'");
    }
    HostTensor t;
    t.name = spec.substr(0, eq);
    const std::string path = spec.substr(eq + 1);
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".pb") == 0) {
      KILN_RETURN_IF_ERROR(
          readTensorProtoFile(path, t.name, t).withContext("input '" + t.name + "'"));
      given[t.name] = std::move(t);
      continue;
    }
    npy::NpyArray array;
    KILN_RETURN_IF_ERROR(
        npy::readNpy(spec.substr(eq + 1), array).withContext("input '" + t.name + "'"));
    t.desc.dims = array.dims;
    t.desc.type = array.type;
    t.data = std::move(array.data);
    given[t.name] = std::move(t);
  }
  return Status::ok();
}

Status run(const Args& args) {
  KILN_RETURN_IF_ERROR(setUpTraceAndLogging(args));
  KILN_RETURN_IF_ERROR(setUpPlugins(args));
  std::map<std::string, HostTensor> given;
  KILN_RETURN_IF_ERROR(parseInputs(args, given));
  // A model with symbolic input dims is built for the shapes of the inputs given.
  std::map<std::string, Dims> givenShapes;
  for (const auto& [name, t] : given) givenShapes[name] = t.desc.dims;
  std::vector<uint8_t> bytes;
  std::string source;
  KILN_RETURN_IF_ERROR(
      planFromArgs(args, "usage: kiln run PLAN [options], or kiln run --onnx MODEL [options]",
                   bytes, source, givenShapes, integerValues(given)));
  int contexts = 1, runs = 1;
  unsigned seed = std::random_device{}();
  try {
    contexts = std::stoi(args.get("contexts", "1"));
    runs = std::stoi(args.get("runs", "1"));
    if (args.has("seed")) seed = static_cast<unsigned>(std::stoul(args.get("seed")));
  } catch (...) {
    return invalidArgument("--contexts, --runs and --seed take whole numbers");
  }
  if (contexts < 1 || contexts > 256 || runs < 1) {
    return invalidArgument("--contexts must be 1..256 and --runs at least 1");
  }
  std::vector<HostTensor> outputs;
  CudaGraphStats graphStats;
  {
    auto runtime = createRuntime();
    std::unique_ptr<IEngine> engine;
    KILN_RETURN_IF_ERROR(runtime->deserializeEngine(bytes.data(), bytes.size(), engine)
                             .withContext("loading plan '" + source + "'"));
    std::vector<HostTensor> inputs;
    ShapeArgs shapes;
    KILN_RETURN_IF_ERROR(shapesFromArgs(args, shapes));
    KILN_RETURN_IF_ERROR(prepareInputs(*engine, std::move(given), seed, inputs, shapes.fixed));
    KILN_RETURN_IF_ERROR(
        runContexts(*engine, inputs, contexts, runs, outputs, args.has("cuda-graph"), &graphStats));
  }
  std::string graphText;
  if (args.has("cuda-graph"))
    graphText = " with CUDA graphs (context 0: " + std::to_string(graphStats.captured) +
                " captured, " + std::to_string(graphStats.replayed) + " replayed, " +
                std::to_string(graphStats.direct) + " layer by layer)";
  std::printf("ran %d context(s) x %d run(s)%s: outputs %s\n", contexts, runs, graphText.c_str(),
              contexts > 1 ? "agree bit for bit" : "computed");
  const std::string dir = args.get("output-dir");
  if (!dir.empty()) KILN_RETURN_IF_ERROR(makeDirectories(dir));
  for (const HostTensor& t : outputs) {
    const std::vector<float> v = asFloats(t);
    std::printf("  %s %s [", t.name.c_str(), dataTypeName(t.desc.type));
    for (int32_t i = 0; i < t.desc.dims.nbDims; ++i) {
      std::printf("%s%lld", i ? "," : "", static_cast<long long>(t.desc.dims.d[i]));
    }
    std::printf("]\n");
    // Small outputs (class scores, a few boxes) are worth reading on the terminal.
    if (isFloatType(t.desc.type) && !v.empty() && v.size() <= 64 && t.desc.dims.nbDims >= 1) {
      const size_t row = static_cast<size_t>(t.desc.dims.d[t.desc.dims.nbDims - 1]);
      for (size_t i = 0; i < v.size(); ++i) {
        std::printf("%s%8.4f%s", i % row == 0 ? "    " : " ", v[i], (i + 1) % row == 0 ? "\n" : "");
      }
    }
    if (!dir.empty()) {
      npy::NpyArray array{t.desc.type, t.desc.dims, t.data};
      const std::string path = dir + "/" + fileSafeName(t.name) + ".npy";
      KILN_RETURN_IF_ERROR(npy::writeNpy(path, array));
      std::printf("    wrote %s\n", path.c_str());
    }
  }
  flushTrace();
  return Status::ok();
}

}  // namespace

int runCommand(int argc, char** argv) {
  Args args;
  Status s = parseArgs(
      argc, argv, 2,
      {"input", "output-dir", "contexts", "runs", "seed", "plugins", "trace", "onnx", "device",
       "shapes", "shape-values", "minShapes", "optShapes", "maxShapes", "timing-cache"},
      {"verbose", "fp16", "cuda-graph"}, args);
  if (s) s = run(args);
  return s ? 0 : fail("run", s);
}

}  // namespace kiln::cli
