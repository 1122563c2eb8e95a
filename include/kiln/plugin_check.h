// The plugin conformance harness: drives one plugin through everything kiln does with it and
// reports, row by row, whether the plugin keeps its side of the contract (DESIGN.md §2).
//
// For each device target (the CPU always; "cuda:N" when kiln has CUDA and a GPU is present) and
// each type/format combination the plugin accepts (asked position by position through
// supportsFormatCombination, as the builder does, then forced one at a time through
// BuilderConfig::pluginCombination), it:
//   builds a one-layer network around the plugin -> plan bytes; saves the plan to a file, loads it
//   back; re-checks the serialize round trip (guarantee 6) of every plugin record; runs several
//   execution contexts concurrently (one thread each on the CPU, one stream each on CUDA), many
//   times, and requires identical outputs; on CUDA, captures one enqueue in a CUDA graph and
//   requires its replay to equal a direct enqueue;
// with a profile (PluginCheckSpec::profileMin/profileMax), it also builds the plugin for a range
// of shapes and runs one context through min, opt, max and random shapes between, each against a
// static plan of that shape (the dynamic form, DESIGN.md §7);
// then compares every combination with the FP32/linear one (tolerance by the narrowest type),
// the CUDA outputs with the CPU ones, and everything with the reference when one is given; tries
// each input with a zero dimension (a clean build and run, or a clean error: never a crash); and
// checks the lifecycle trace of the whole run against guarantees 1-9.
//
// Typical use from a plugin author's test:
//
//   kiln::PluginCheckSpec spec;
//   spec.name = "ScaleBias";
//   spec.fields = {kiln::PluginCheckField::f32("scale", 2.0f)};
//   spec.inputs = {kiln::PluginCheckInput::random(kiln::makeDims({2, 3, 4, 5}))};
//   kiln::PluginCheckReport report = kiln::runPluginCheck(spec);
//   report.print(std::cout);
//   EXPECT_TRUE(report.allPassed());
//
// The creator must be registered (PluginRegistry::global(), e.g. through loadLibrary()) before
// the call. The lifecycle trace is process-wide: runPluginCheck() points it at its own file for
// the run (PluginCheckSpec::tracePath, or a temporary file) and turns it off afterwards, so do not
// run two checks, or a check and other traced work, at the same time.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <random>
#include <string>
#include <vector>

#include "kiln/plugin.h"
#include "kiln/types.h"

namespace kiln {

// One creator field, owning its value (PluginField only points at one).
struct PluginCheckField {
  std::string name;
  PluginFieldType type = PluginFieldType::kINT32;
  std::vector<uint8_t> data;  // `length` elements of `type`, native byte order
  int32_t length = 0;

  static PluginCheckField i32(const std::string& name, int32_t value);
  static PluginCheckField i64(const std::string& name, int64_t value);
  static PluginCheckField f32(const std::string& name, float value);
  static PluginCheckField f64(const std::string& name, double value);
  static PluginCheckField str(const std::string& name, const std::string& value);
  static PluginCheckField i32s(const std::string& name, const std::vector<int32_t>& values);
  static PluginCheckField f32s(const std::string& name, const std::vector<float>& values);
};

// Parses "k=v" as the field `k` that `creator` lists in getFieldNames(), in that field's type:
// integers and floats (comma-separated when the field has several elements), strings as given,
// dims as "2x3x4". A name the creator does not list is an error naming the fields it does.
bool parsePluginCheckField(IPluginCreator& creator, const std::string& assignment,
                           PluginCheckField& field, std::string& error);

// A host tensor the harness hands to a reference: values widened to double, linear layout.
struct PluginCheckTensor {
  Dims dims;
  DataType type = DataType::kFLOAT;
  std::vector<double> values;
};

// One network input of the plugin: its declared dims and type and how its data is made. Inputs
// are fed in their declared type and linear format; the builder reformats them into whatever
// combination is being checked.
struct PluginCheckInput {
  Dims dims;
  DataType type = DataType::kFLOAT;
  // Random values, uniform in [low, high) for float types and in [low, high) rounded down for
  // integer types (so an index input into N things is {0, N}). Fresh each run unless `seed` in
  // the spec is set.
  double low = -1.0;
  double high = 1.0;
  // Fixed values (volume(dims) of them, in `type`'s range); when set they replace the generator.
  std::vector<double> values;

  static PluginCheckInput random(const Dims& dims, DataType type = DataType::kFLOAT,
                                 double low = -1.0, double high = 1.0);
  static PluginCheckInput fixed(const Dims& dims, DataType type, std::vector<double> values);
};

// Agreement: |got - want| <= abs + rel * |want| element by element (NaN equals only NaN).
struct PluginCheckTolerance {
  double abs = 0;
  double rel = 0;
};

// Computes the expected outputs (one vector of doubles per plugin output, linear layout) from the
// inputs. Returns false with `error` set when it cannot.
using PluginCheckReference =
    std::function<bool(const std::vector<PluginCheckTensor>& inputs,
                       std::vector<std::vector<double>>& outputs, std::string& error)>;

struct PluginCheckSpec {
  // The plugin, as registered: name, version and namespace.
  std::string name;
  std::string version = "1";
  std::string pluginNamespace;
  std::vector<PluginCheckField> fields;
  std::vector<PluginCheckInput> inputs;

  // Targets to check: "cpu", "cuda:N". A CUDA target is reported "skipped" (not failed) where
  // kiln was built without CUDA or no GPU is visible.
  std::vector<std::string> devices{"cpu", "cuda:0"};
  // Execution contexts run at once per (device, combination); each on its own thread (CPU) or
  // stream (CUDA), enqueuing `iterations` times. At least 1; 3 or more is the point.
  int contexts = 3;
  int iterations = 4;
  // Check at most this many type/format combinations per device (the FP32/linear one first).
  int maxCombinations = 32;
  // Try each input with its first dimension 0.
  bool checkEmptyTensors = true;

  // The dynamic form: per input, the min and max of an optimization profile (each input's `dims`
  // is its opt). Empty: static shapes only. Axes whose min and max differ become -1 in the
  // network; axes given the same name in `profileDimNames` (per input, per axis; "" for none)
  // must be equal and take one value in every run. Per device, the harness builds one plan with
  // that profile and runs one execution context through min, opt, max and `profileRandomShapes`
  // random shapes between (shape changes the plugin hears through onShapeChange), each on fresh
  // inputs and compared with a plan built for that shape alone, in the FP32/linear combination.
  std::vector<Dims> profileMin;
  std::vector<Dims> profileMax;
  std::vector<std::vector<std::string>> profileDimNames;
  int profileRandomShapes = 3;

  // Optional reference; its tolerance applies to FP32 combinations, the type tolerances below
  // are added for reduced-precision ones.
  PluginCheckReference reference;
  PluginCheckTolerance referenceTolerance{1e-5, 1e-5};
  // Agreement between combinations (with the FP32/linear one) and between devices, by the
  // narrowest float type in the combination.
  PluginCheckTolerance fp32Tolerance{1e-5, 1e-5};
  PluginCheckTolerance fp16Tolerance{3e-2, 1e-2};
  PluginCheckTolerance bf16Tolerance{2e-1, 5e-2};

  // Seed for the input data (0: a fresh random seed, printed in the report).
  uint64_t seed = 0;
  // Where the lifecycle trace of the run goes ("": a temporary file, removed afterwards) and the
  // folder for the saved plans ("": the system's temporary folder).
  std::string tracePath;
  std::string workDir;
};

enum class PluginCheckOutcome { kPass, kFail, kSkip };
const char* pluginCheckOutcomeName(PluginCheckOutcome outcome);  // "pass", "FAIL", "skip"

struct PluginCheckRow {
  std::string check;        // "build", "save/load", "round trip", "contexts agree", ...
  std::string device;       // "cpu", "cuda:0", or "" for checks about the plugin as a whole
  std::string combination;  // "fp32/linear, fp32/linear -> fp32/linear", or ""
  PluginCheckOutcome outcome = PluginCheckOutcome::kPass;
  std::string detail;
};

struct PluginCheckReport {
  std::vector<PluginCheckRow> rows;
  uint64_t seed = 0;

  // No row failed and at least one passed.
  bool allPassed() const;
  int count(PluginCheckOutcome outcome) const;
  // Rows of one check (and device, when given), for tests.
  std::vector<const PluginCheckRow*> find(const std::string& check,
                                          const std::string& device = "") const;
  // The table, then a summary line ("plugin check: 41 passed, 0 failed, 6 skipped").
  void print(std::ostream& out) const;
};

PluginCheckReport runPluginCheck(const PluginCheckSpec& spec);

}  // namespace kiln
