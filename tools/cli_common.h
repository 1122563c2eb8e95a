// Shared pieces of the `kiln` command line: argument handling, files, plugin libraries, tracing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/builder.h"
#include "kiln/status.h"

namespace kiln::cli {

// Parsed arguments: positionals in order, options by name (repeatable ones keep every value).
struct Args {
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> options;
  bool has(const std::string& name) const { return options.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> all(const std::string& name) const;
};

// `valueOptions` take a value (--name VALUE or --name=VALUE); `flags` take none. Anything else
// starting with "--" is an error.
Status parseArgs(int argc, char** argv, int first, const std::vector<std::string>& valueOptions,
                 const std::vector<std::string>& flags, Args& args);

Status readFile(const std::string& path, std::vector<uint8_t>& bytes);
Status writeFile(const std::string& path, const void* data, size_t size);
Status makeDirectories(const std::string& path);

// Registers kiln's own plugin library (linked into the command line) and loads each --plugins LIB.
Status setUpPlugins(const Args& args);
// --trace PATH (or KILN_TRACE) turns the lifecycle trace on; --verbose raises the log level.
Status setUpTraceAndLogging(const Args& args);

// The builder settings the command line controls: --device cpu|cuda|cuda:N (default cpu),
// --fp16 (CUDA built-in layers in FP16 where they have a kernel), --verbose.
Status builderConfigFromArgs(const Args& args, BuilderConfig& config);

// A tensor name made safe as a file name: characters outside [A-Za-z0-9._-] become '_'.
std::string fileSafeName(const std::string& name);

}  // namespace kiln::cli
