#include "bench_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace kiln::cli {
namespace {

// Whole numbers only: "12", not "12x", "1e3" or "-1" where the minimum is 1.
Status wholeNumber(const Args& args, const std::string& name, int64_t min, int64_t max,
                   int64_t& value) {
  if (!args.has(name)) return Status::ok();
  const std::string text = args.get(name);
  const std::string range = " from " + std::to_string(min) + " to " + std::to_string(max);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < min || v > max)
    return invalidArgument("--" + name + " takes a whole number" + range + ", got '" + text + "'");
  value = v;
  return Status::ok();
}

Status number(const Args& args, const std::string& name, double min, double max, double& value) {
  if (!args.has(name)) return Status::ok();
  const std::string text = args.get(name);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v < min || v > max)
    return invalidArgument("--" + name + " takes a number from " + std::to_string(int64_t(min)) +
                           " to " + std::to_string(int64_t(max)) + ", got '" + text + "'");
  value = v;
  return Status::ok();
}

}  // namespace

const std::vector<std::string>& benchValueOptions() {
  static const std::vector<std::string> names = {
      "onnx",      "device",       "warmup-ms", "iterations",   "duration",
      "streams",   "profile-runs", "json",      "chrome-trace", "batch-items",
      "seed",      "plugins",      "trace",     "shapes",       "shape-values",
      "minShapes", "optShapes",    "maxShapes", "timing-cache"};
  return names;
}

const std::vector<std::string>& benchFlags() {
  static const std::vector<std::string> names = {
      "fp16", "cuda-graph", "engine-graphs", "layer-by-layer", "profile", "no-progress", "verbose"};
  return names;
}

Status benchOptionsFromArgs(const Args& args, BenchOptions& options) {
  options = BenchOptions();
  int64_t streams = options.streams, profileRuns = options.profileRuns, seed = 0;
  KILN_RETURN_IF_ERROR(number(args, "warmup-ms", 0, 3600e3, options.warmupMs));
  KILN_RETURN_IF_ERROR(wholeNumber(args, "iterations", 1, 1000000000, options.iterations));
  KILN_RETURN_IF_ERROR(number(args, "duration", 0, 86400, options.durationS));
  KILN_RETURN_IF_ERROR(wholeNumber(args, "streams", 1, 64, streams));
  KILN_RETURN_IF_ERROR(wholeNumber(args, "profile-runs", 1, 100000, profileRuns));
  KILN_RETURN_IF_ERROR(wholeNumber(args, "batch-items", 1, 1000000000, options.batchItems));
  KILN_RETURN_IF_ERROR(wholeNumber(args, "seed", 0, 0xFFFFFFFFll, seed));
  options.streams = static_cast<int>(streams);
  options.profileRuns = static_cast<int>(profileRuns);
  options.seedGiven = args.has("seed");
  options.seed = static_cast<unsigned>(seed);
  options.cudaGraph = args.has("cuda-graph");
  options.engineGraphs = args.has("engine-graphs");
  options.layerByLayer = args.has("layer-by-layer");
  if (options.cudaGraph && options.engineGraphs)
    return invalidArgument(
        "--cuda-graph and --engine-graphs are two ways to replay graphs: pick one");
  if (options.layerByLayer && (options.cudaGraph || options.engineGraphs))
    return invalidArgument(std::string("--layer-by-layer runs without CUDA graphs; ") +
                           (options.cudaGraph ? "--cuda-graph" : "--engine-graphs") +
                           " replays them: pick one");
  options.jsonPath = args.get("json");
  options.chromeTracePath = args.get("chrome-trace");
  options.profile = args.has("profile") || args.has("chrome-trace") || args.has("profile-runs");
  options.progress = !args.has("no-progress");
  if (args.has("json") && options.jsonPath.empty())
    return invalidArgument("--json takes a file name");
  if (args.has("chrome-trace") && options.chromeTracePath.empty())
    return invalidArgument("--chrome-trace takes a file name");
  return Status::ok();
}

}  // namespace kiln::cli
