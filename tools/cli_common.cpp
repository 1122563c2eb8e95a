#include "cli_common.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kiln/logger.h"
#include "kiln/plugins.h"
#include "kiln/registry.h"

namespace kiln::cli {

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = options.find(name);
  return it == options.end() ? fallback : it->second;
}

std::vector<std::string> Args::all(const std::string& name) const {
  std::vector<std::string> values;
  auto [begin, end] = options.equal_range(name);
  for (auto it = begin; it != end; ++it) values.push_back(it->second);
  return values;
}

Status parseArgs(int argc, char** argv, int first, const std::vector<std::string>& valueOptions,
                 const std::vector<std::string>& flags, Args& args) {
  auto contains = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      args.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    const bool inlineValue = eq != std::string::npos;
    if (inlineValue) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (contains(flags, name)) {
      if (inlineValue) return invalidArgument("option --" + name + " takes no value");
      args.options.emplace(name, "");
    } else if (contains(valueOptions, name)) {
      if (!inlineValue) {
        if (i + 1 >= argc) return invalidArgument("option --" + name + " needs a value");
        value = argv[++i];
      }
      args.options.emplace(name, value);
    } else {
      return invalidArgument("unknown option --" + name);
    }
  }
  return Status::ok();
}

Status readFile(const std::string& path, std::vector<uint8_t>& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ioError("cannot open '" + path + "'");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return ioError("cannot read '" + path + "'");
  in.seekg(0);
  bytes.resize(static_cast<size_t>(size));
  if (size && !in.read(reinterpret_cast<char*>(bytes.data()), size)) {
    return ioError("cannot read '" + path + "'");
  }
  return Status::ok();
}

Status writeFile(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return ioError("cannot write '" + path + "'");
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) return ioError("cannot write '" + path + "'");
  return Status::ok();
}

Status makeDirectories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return ioError("cannot create directory '" + path + "': " + ec.message());
  return Status::ok();
}

Status setUpPlugins(const Args& args) {
  KILN_RETURN_IF_ERROR(PluginRegistry::global().registerLibrary(*getBuiltinPluginLibrary(),
                                                                getBuiltinPluginLibraryPath()));
  for (const std::string& lib : args.all("plugins")) {
    KILN_RETURN_IF_ERROR(PluginRegistry::global().loadLibrary(lib));
  }
  return Status::ok();
}

Status setUpTraceAndLogging(const Args& args) {
  if (args.has("verbose")) setLogSeverity(Severity::kInfo);
  if (args.has("trace")) KILN_RETURN_IF_ERROR(setTracePath(args.get("trace")));
  return Status::ok();
}

std::string fileSafeName(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

Status builderConfigFromArgs(const Args& args, BuilderConfig& config) {
  config = BuilderConfig();
  const std::string device = args.get("device", "cpu");
  if (device != "cpu" && device != "cuda" && device.rfind("cuda:", 0) != 0) {
    return invalidArgument("--device takes cpu, cuda or cuda:N, got '" + device + "'");
  }
  config.target = device;
  config.builtinHalf = args.has("fp16");
  if (config.builtinHalf && device == "cpu") {
    return invalidArgument("--fp16 applies to CUDA builds (--device cuda)");
  }
  config.verbose = args.has("verbose");
  // Tactic timings reused from (and added to) a file, as TensorRT's timing cache.
  config.timingCachePath = args.get("timing-cache");
  // A progress line on a terminal (never in logs or pipes): the tactic phase is where builds
  // spend their time, so it says how far, how many candidates were timed and about how long is
  // left at the pace so far.
  if (isatty(STDERR_FILENO) && !config.verbose) {
    config.progress = [](const BuildProgress& p) {
      if (std::string(p.phase) == "tactics") {
        const double left = p.done > 0 ? p.elapsedSeconds / p.done * (p.total - p.done) : 0.0;
        std::fprintf(stderr,
                     "\rkiln build: layer %d/%d, %d candidates timed, %.0f s, about %.0f s left   ",
                     p.done, p.total, p.candidatesTimed, p.elapsedSeconds, left);
      } else if (std::string(p.phase) == "plan") {
        std::fprintf(stderr, "\rkiln build: %d candidates timed in %.1f s%40s\n", p.candidatesTimed,
                     p.elapsedSeconds, "");
      }
      return true;
    };
  }
  return Status::ok();
}

}  // namespace kiln::cli
