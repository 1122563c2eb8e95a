// runPluginCheck(): the plugin conformance harness (see include/kiln/plugin_check.h).
//
// Decisions worth knowing:
// - The network around the plugin is the plugin alone: inputs "input0.." in their declared types
//   feed it, its outputs are the network outputs "output0..". The builder reformats around the
//   plugin, so the harness always feeds and reads the declared types, linear.
// - Combinations are enumerated on the harness's own definition object (made through kiln, so
//   traced) exactly as the builder does: float positions may be fp32/fp16/bf16, rank-4 ones
//   linear or channels-last, other positions keep their type; each accepted one is then forced
//   with BuilderConfig::pluginCombination.
// - "contexts agree" is bitwise: a plugin whose output depends on which context or which run
//   computed it is broken, whatever the tolerance.
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <ostream>
#include <random>
#include <sstream>
#include <thread>

#include "core/enum_names.h"
#include "core/plan.h"
#include "kiln/builder.h"
#include "kiln/float16.h"
#include "kiln/logger.h"
#include "kiln/network.h"
#include "kiln/registry.h"
#include "plugin/format_search.h"
#include "plugin/plugin_object.h"
#include "plugin/trace_checker.h"
#include "plugin_check/check_internal.h"

namespace kiln {
namespace {

using check::HostTensor;
using check::RunOutputs;

using Combination = std::vector<std::pair<DataType, TensorFormat>>;

std::string dimsString(const Dims& d) {
  std::string s;
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? "x" : "") + std::to_string(d.d[i]);
  return s.empty() ? "scalar" : s;
}

std::string comboLabel(const Combination& c, size_t nbInputs) {
  std::string s;
  for (size_t i = 0; i < c.size(); ++i) {
    s += i == nbInputs ? " -> " : (i ? ", " : "");
    s += std::string(dataTypeName(c[i].first)) + "/" + formatName(c[i].second);
  }
  return s;
}

// The narrowest float type in a combination (fp32 if none is reduced).
DataType narrowest(const Combination& c) {
  DataType t = DataType::kFLOAT;
  for (const auto& e : c) {
    if (e.first == DataType::kBF16) return DataType::kBF16;
    if (e.first == DataType::kHALF) t = DataType::kHALF;
  }
  return t;
}

// ---- values <-> bytes -----------------------------------------------------------------------

std::vector<double> toValues(const std::vector<uint8_t>& bytes, DataType t) {
  const size_t size = dataTypeSize(t);
  std::vector<double> v(size ? bytes.size() / size : 0);
  for (size_t i = 0; i < v.size(); ++i) v[i] = readElement(bytes.data(), t, int64_t(i));
  return v;
}

// Compares element by element; false with `detail` naming the worst element.
bool agree(const std::vector<double>& got, const std::vector<double>& want,
           const PluginCheckTolerance& tol, std::string& detail) {
  if (got.size() != want.size()) {
    detail = std::to_string(got.size()) + " values where " + std::to_string(want.size()) +
             " were expected";
    return false;
  }
  double worst = 0, worstErr = 0;
  size_t worstAt = 0, bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    double excess;
    if (std::isnan(w) || std::isnan(g)) {
      excess = std::isnan(w) && std::isnan(g) ? 0 : INFINITY;
    } else if (std::isinf(w) || std::isinf(g)) {
      excess = g == w ? 0 : INFINITY;
    } else {
      excess = std::fabs(g - w) - (tol.abs + tol.rel * std::fabs(w));
    }
    if (excess > 0) {
      ++bad;
      if (excess > worst || bad == 1) {
        worst = excess;
        worstAt = i;
        worstErr = std::fabs(g - w);
      }
    }
  }
  std::ostringstream s;
  s << std::setprecision(7);
  if (bad) {
    s << bad << " of " << got.size() << " values differ; worst at " << worstAt << ": got "
      << got[worstAt] << ", expected " << want[worstAt] << " (|diff| " << worstErr
      << ", tolerance abs " << tol.abs << " + rel " << tol.rel << ")";
    detail = s.str();
    return false;
  }
  s << got.size() << " values within abs " << tol.abs << " + rel " << tol.rel;
  detail = s.str();
  return true;
}

std::string tempPath(const std::string& dir, const std::string& stem, const std::string& ext) {
  static std::atomic<int> counter{0};
  std::filesystem::path base =
      dir.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(dir);
  return (base / (stem + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ext))
      .string();
}

// ---- one run ------------------------------------------------------------------------------

struct Result {  // the outputs of one (device, combination)
  std::string device;
  Combination combination;
  std::vector<std::vector<uint8_t>> outputs;  // context 0, iteration 0
};

class Checker {
 public:
  Checker(const PluginCheckSpec& spec, PluginCheckReport& report) : spec_(spec), report_(report) {}

  void run();

 private:
  void row(const std::string& check, const std::string& device, const std::string& combo,
           PluginCheckOutcome outcome, const std::string& detail) {
    report_.rows.push_back({check, device, combo, outcome, detail});
  }
  void pass(const std::string& c, const std::string& d, const std::string& k,
            const std::string& detail = "") {
    row(c, d, k, PluginCheckOutcome::kPass, detail);
  }
  void fail(const std::string& c, const std::string& d, const std::string& k,
            const std::string& detail) {
    row(c, d, k, PluginCheckOutcome::kFail, detail);
  }
  void skip(const std::string& c, const std::string& d, const std::string& k,
            const std::string& detail) {
    row(c, d, k, PluginCheckOutcome::kSkip, detail);
  }

  void makeInputs();
  // Inputs at `dims` from each input's generator (fixed values only fit the declared dims).
  std::vector<HostTensor> randomInputsAt(const std::vector<Dims>& dims, std::mt19937_64& rng) const;
  // `names`: per input, per axis, a dimension name ("" none), for dynamic axes.
  Status buildNetwork(const std::vector<Dims>& inputDims, std::unique_ptr<INetworkDefinition>& net,
                      std::vector<HostTensor>* outputShapes,
                      const std::vector<std::vector<std::string>>* names = nullptr);
  // The dynamic form on one device (PluginCheckSpec::profileMin/profileMax).
  void checkProfile(const std::string& device, const Combination& combination);
  Status enumerate(DeviceKind device, std::vector<Combination>& out, std::string& note);
  Status buildPlan(const INetworkDefinition& net, const std::string& target,
                   const Combination& combination, std::vector<uint8_t>& plan);
  void checkDevice(const std::string& device);
  // Runs one combination; returns false if nothing could be run (the result is then absent).
  bool checkCombination(const std::string& device, bool cuda, const INetworkDefinition& net,
                        const Combination& combination, Result& result);
  void checkRoundTrip(const std::string& device, const std::string& label,
                      const std::vector<uint8_t>& plan);
  void checkEmpty(const std::string& device, bool cuda);
  void compareAll();
  void checkTrace(const std::string& path);

  const PluginCheckSpec& spec_;
  PluginCheckReport& report_;
  IPluginCreator* creator_ = nullptr;
  PluginFieldCollection fields_;
  std::vector<PluginField> fieldArray_;
  std::vector<HostTensor> inputs_;
  std::vector<HostTensor> outputShapes_;
  std::vector<PluginCheckTensor> referenceInputs_;
  // referenceInputs_ as combination `c` feeds them: floats rounded to its input types.
  std::vector<PluginCheckTensor> roundedInputs(const Combination& c) const;
  std::vector<Result> results_;
};

void Checker::makeInputs() {
  std::mt19937_64 rng(report_.seed);
  std::vector<Dims> dims;
  for (const PluginCheckInput& in : spec_.inputs) dims.push_back(in.dims);
  inputs_ = randomInputsAt(dims, rng);
  // The reference sees exactly what the plugin sees (values rounded to the declared type).
  for (const HostTensor& t : inputs_)
    referenceInputs_.push_back({t.dims, t.type, toValues(t.bytes, t.type)});
}

std::vector<HostTensor> Checker::randomInputsAt(const std::vector<Dims>& dims,
                                                std::mt19937_64& rng) const {
  std::vector<HostTensor> out;
  for (size_t i = 0; i < spec_.inputs.size(); ++i) {
    const PluginCheckInput& in = spec_.inputs[i];
    HostTensor t;
    t.name = "input" + std::to_string(i);
    t.dims = dims[i];
    t.type = in.type;
    const int64_t n = std::max<int64_t>(volume(dims[i]), 0);
    const bool fixed = dims[i] == in.dims && in.values.size() == static_cast<size_t>(n);
    t.bytes.resize(static_cast<size_t>(n) * dataTypeSize(in.type));
    for (int64_t k = 0; k < n; ++k) {
      double v = 0;
      if (fixed) {
        v = in.values[static_cast<size_t>(k)];
      } else if (isFloatType(in.type)) {
        v = std::uniform_real_distribution<double>(in.low, in.high)(rng);
      } else {
        v = std::floor(std::uniform_real_distribution<double>(in.low, in.high)(rng));
        v = std::min(v, std::max(in.low, std::ceil(in.high) - 1));
      }
      writeElement(t.bytes.data(), in.type, k, v);
    }
    out.push_back(std::move(t));
  }
  return out;
}

Status Checker::buildNetwork(const std::vector<Dims>& inputDims,
                             std::unique_ptr<INetworkDefinition>& net,
                             std::vector<HostTensor>* outputShapes,
                             const std::vector<std::vector<std::string>>* names) {
  net = createNetwork();
  std::vector<ITensor*> ins;
  for (size_t i = 0; i < inputDims.size(); ++i) {
    ITensor* t =
        net->addInput(("input" + std::to_string(i)).c_str(), spec_.inputs[i].type, inputDims[i]);
    if (!t) return net->getLastError();
    for (int32_t k = 0; names && i < names->size() && k < static_cast<int32_t>((*names)[i].size());
         ++k) {
      const std::string& name = (*names)[i][static_cast<size_t>(k)];
      if (!name.empty() && inputDims[i].d[k] < 0 && !t->setDimensionName(k, name.c_str()))
        return net->getLastError();
    }
    ins.push_back(t);
  }
  PluginSpec ps;
  ps.name = spec_.name.c_str();
  ps.version = spec_.version.c_str();
  ps.pluginNamespace = spec_.pluginNamespace.c_str();
  ps.fields = fields_;
  ILayer* layer = net->addPlugin(ins.data(), static_cast<int32_t>(ins.size()), ps);
  if (!layer) {
    Status s = net->getLastError();
    return s ? internalError("addPlugin failed without a reason") : s;
  }
  layer->setName("plugin_under_check");
  for (int32_t o = 0; o < layer->getNbOutputs(); ++o) {
    ITensor* t = layer->getOutput(o);
    t->setName(("output" + std::to_string(o)).c_str());
    KILN_RETURN_IF_ERROR(net->markOutput(*t));
    if (outputShapes) outputShapes->push_back({t->getName(), t->getDimensions(), t->getType(), {}});
  }
  return Status::ok();
}

Status Checker::enumerate(DeviceKind device, std::vector<Combination>& out, std::string& note) {
  std::shared_ptr<PluginObject> definition;
  {
    PhaseScope phase(TracePhase::kParse);
    KILN_RETURN_IF_ERROR(PluginObject::create(*creator_, spec_.pluginNamespace,
                                              "plugin_check_formats", fields_, definition));
  }
  PhaseScope phase(TracePhase::kBuild);
  std::vector<PluginTensorDesc> shapes;
  for (const HostTensor& t : inputs_)
    shapes.push_back({t.dims, t.type, TensorFormat::kLINEAR, device});
  for (const HostTensor& t : outputShapes_)
    shapes.push_back({t.dims, t.type, TensorFormat::kLINEAR, device});
  std::vector<std::vector<PluginTensorDesc>> options;
  for (const PluginTensorDesc& d : shapes) options.push_back(formatOptions(d, true));
  size_t total = 0;
  searchFormatCombinations(
      *definition, options, static_cast<int32_t>(inputs_.size()),
      [&](const std::vector<PluginTensorDesc>& descs) {
        ++total;  // all are counted; the first maxCombinations are checked
        if (out.size() < static_cast<size_t>(std::max(spec_.maxCombinations, 1))) {
          Combination c;
          for (const auto& d : descs) c.push_back({d.type, d.format});
          out.push_back(std::move(c));
        }
        return true;
      });
  // The FP32/linear combination (the baseline of every comparison) first.
  std::stable_sort(out.begin(), out.end(), [](const Combination& a, const Combination& b) {
    auto score = [](const Combination& c) {
      int s = 0;
      for (const auto& e : c)
        s += (e.first != DataType::kFLOAT && isFloatType(e.first)) * 2 +
             (e.second != TensorFormat::kLINEAR);
      return s;
    };
    return score(a) < score(b);
  });
  note = std::to_string(total) + " accepted" +
         (total > out.size() ? ", checking the first " + std::to_string(out.size()) : "");
  {
    PhaseScope teardown(TracePhase::kTeardown);
    definition.reset();
  }
  return Status::ok();
}

Status Checker::buildPlan(const INetworkDefinition& net, const std::string& target,
                          const Combination& combination, std::vector<uint8_t>& plan) {
  BuilderConfig config;
  config.target = target;
  config.warmupRuns = 0;
  config.timingRuns = 1;
  config.pluginCombination = combination;
  return createBuilder()->buildSerializedNetwork(net, config, plan);
}

void Checker::checkRoundTrip(const std::string& device, const std::string& label,
                             const std::vector<uint8_t>& bytes) {
  plan::Plan plan;
  Status s = plan::readPlan(bytes.data(), bytes.size(), plan);
  if (!s) {
    fail("round trip", device, label, "the plan does not read back: " + s.toString());
    return;
  }
  if (plan.plugins.empty()) {
    fail("round trip", device, label, "the plan holds no plugin record");
    return;
  }
  for (const plan::PluginRecord& r : plan.plugins) {
    IPluginCreator* creator = PluginRegistry::global().getCreator(r.name.c_str(), r.version.c_str(),
                                                                  r.pluginNamespace.c_str());
    if (!creator) {
      fail("round trip", device, label, "no creator for the plan's record of " + r.name);
      continue;
    }
    std::shared_ptr<PluginObject> engineObject, contextObject;
    std::string detail;
    bool ok = true;
    {
      // deserialize() itself re-serializes and compares byte for byte (guarantee 6).
      PhaseScope phase(TracePhase::kDeserialize);
      s = PluginObject::deserialize(*creator, r.pluginNamespace, "plugin_check_round_trip",
                                    r.data.data(), r.data.size(), engineObject);
    }
    if (!s) {
      ok = false;
      detail = s.toString();
    } else {
      PhaseScope phase(TracePhase::kContext);
      std::vector<uint8_t> again;
      s = engineObject->clone(contextObject);
      if (s) s = contextObject->serialize(again);
      if (!s) {
        ok = false;
        detail = s.toString();
      } else if (again != r.data) {
        ok = false;
        detail = "a clone of the deserialized object serializes " + std::to_string(again.size()) +
                 " bytes that differ from the " + std::to_string(r.data.size()) +
                 " it was made from";
      } else {
        detail = std::to_string(r.data.size()) +
                 " bytes: deserialize -> serialize and clone -> serialize give them back";
      }
    }
    {
      PhaseScope phase(TracePhase::kTeardown);
      contextObject.reset();
      engineObject.reset();
    }
    if (ok)
      pass("round trip", device, label, detail);
    else
      fail("round trip", device, label, detail);
  }
}

bool Checker::checkCombination(const std::string& device, bool cuda, const INetworkDefinition& net,
                               const Combination& combination, Result& result) {
  const std::string label = comboLabel(combination, inputs_.size());
  std::vector<uint8_t> plan;
  Status s = buildPlan(net, device, combination, plan);
  if (!s) {
    // A CUDA build that kiln cannot do yet is not the plugin's failure.
    if (cuda && s.code() == StatusCode::kUnsupported &&
        s.message().find("target") != std::string::npos) {
      skip("build", device, label, s.toString());
    } else {
      fail("build", device, label, s.toString());
    }
    return false;
  }
  pass("build", device, label, std::to_string(plan.size()) + " plan bytes");

  // Save to a file and load back: the engine comes only from the file's bytes.
  const std::string path = tempPath(spec_.workDir, "kiln_plugin_check", ".plan");
  std::vector<uint8_t> loaded;
  {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(plan.data()), static_cast<std::streamsize>(plan.size()));
    f.close();
    std::ifstream in(path, std::ios::binary);
    loaded.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::remove(path.c_str());
  std::unique_ptr<IEngine> engine;
  s = loaded == plan ? Status::ok()
                     : ioError("the plan file read back differs from what was written");
  if (s) s = createRuntime()->deserializeEngine(loaded.data(), loaded.size(), engine);
  if (!s) {
    fail("save/load", device, label, s.toString());
    return false;
  }
  pass("save/load", device, label, "loaded from " + std::to_string(loaded.size()) + " bytes");

  checkRoundTrip(device, label, plan);

  // The engine's I/O must be what the network declared (linear).
  for (const HostTensor& t : inputs_) {
    const PluginTensorDesc d = engine->getTensorDesc(t.name.c_str());
    if (d.dims != t.dims || d.type != t.type || d.format != TensorFormat::kLINEAR) {
      fail("engine I/O", device, label,
           t.name + " is " + dimsString(d.dims) + " " + dataTypeName(d.type) + "/" +
               formatName(d.format) + ", the network declared " + dimsString(t.dims) + " " +
               dataTypeName(t.type) + "/linear");
      return false;
    }
  }

  const int contexts = std::max(spec_.contexts, 1);
  const int iterations = std::max(spec_.iterations, 1);
  std::vector<RunOutputs> outs;
  s = check::runContexts(*engine, inputs_, outputShapes_, contexts, iterations, outs);
  const std::string what = std::to_string(contexts) + " contexts x " + std::to_string(iterations) +
                           " enqueues, each on its own " + (cuda ? "thread and stream" : "thread");
  if (!s) {
    fail("concurrent enqueue", device, label, what + ": " + s.toString());
    return false;
  }
  pass("concurrent enqueue", device, label, what);
  std::string disagreement;
  for (int c = 0; c < contexts && disagreement.empty(); ++c)
    for (int i = 0; i < iterations && disagreement.empty(); ++i)
      for (size_t o = 0; o < outputShapes_.size() && disagreement.empty(); ++o)
        if (outs[c][i][o] != outs[0][0][o]) {
          const auto& a = outs[0][0][o];
          const auto& b = outs[c][i][o];
          size_t at = 0;
          while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
          disagreement = "context " + std::to_string(c) + " run " + std::to_string(i) + " output " +
                         std::to_string(o) + " differs from context 0 run 0 (first at byte " +
                         std::to_string(at) + ")";
        }
  if (disagreement.empty())
    pass("contexts agree", device, label, "bitwise, over all contexts and runs");
  else
    fail("contexts agree", device, label, disagreement);

  if (cuda) {
    std::vector<std::vector<uint8_t>> direct, graph;
    s = check::runGraph(*engine, inputs_, outputShapes_, direct, graph);
    if (!s)
      fail("CUDA graph", device, label, s.toString());
    else if (direct != graph)
      fail("CUDA graph", device, label,
           "the replayed graph's outputs differ from a direct enqueue");
    else
      pass("CUDA graph", device, label, "captured one enqueue; two replays equal a direct enqueue");
  }
  result.device = device;
  result.combination = combination;
  result.outputs = outs[0][0];
  return true;
}

void Checker::checkEmpty(const std::string& device, bool cuda) {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Dims& dims = inputs_[i].dims;
    if (dims.nbDims < 1 || dims.d[0] == 0) continue;
    std::vector<Dims> inputDims;
    for (const HostTensor& t : inputs_) inputDims.push_back(t.dims);
    inputDims[i].d[0] = 0;
    const std::string what = "input" + std::to_string(i) + " as " + dimsString(inputDims[i]);
    std::unique_ptr<INetworkDefinition> net;
    std::vector<HostTensor> outs;
    std::vector<uint8_t> plan;
    std::unique_ptr<IEngine> engine;
    Status s = buildNetwork(inputDims, net, &outs);
    std::string stage = "network";
    if (s) {
      stage = "build";
      BuilderConfig config;
      config.target = device;
      config.warmupRuns = 0;
      config.timingRuns = 1;
      s = createBuilder()->buildSerializedNetwork(*net, config, plan);
    }
    if (s) {
      stage = "load";
      s = createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
    }
    if (s) {
      stage = "run";
      std::vector<HostTensor> ins = inputs_;
      ins[i].dims = inputDims[i];
      ins[i].bytes.clear();
      std::vector<RunOutputs> results;
      s = check::runContexts(*engine, ins, outs, 1, 1, results);
    }
    if (cuda && !s && stage == "build" && s.code() == StatusCode::kUnsupported &&
        s.message().find("target") != std::string::npos) {
      skip("empty tensor", device, "", what + ": " + s.toString());
    } else if (s) {
      std::string shapes;
      for (const HostTensor& t : outs) shapes += (shapes.empty() ? "" : ", ") + dimsString(t.dims);
      pass("empty tensor", device, "", what + ": built and ran cleanly, outputs " + shapes);
    } else {
      pass("empty tensor", device, "",
           what + ": refused cleanly at " + stage + ": " + s.toString());
    }
  }
}

void Checker::checkProfile(const std::string& device, const Combination& combination) {
  const size_t nbIn = inputs_.size();
  const std::string label = comboLabel(combination, nbIn);
  if (spec_.profileMin.size() != nbIn || spec_.profileMax.size() != nbIn) {
    fail("profile", device, label,
         "profileMin and profileMax need one entry per input (" + std::to_string(nbIn) + ")");
    return;
  }
  // Declared dims: -1 where min and max differ. Named axes share one range (the intersection).
  std::vector<Dims> declared, lo = spec_.profileMin, hi = spec_.profileMax;
  const auto nameOf = [&](size_t i, int32_t k) -> std::string {
    if (i >= spec_.profileDimNames.size() ||
        static_cast<size_t>(k) >= spec_.profileDimNames[i].size())
      return "";
    return spec_.profileDimNames[i][static_cast<size_t>(k)];
  };
  std::map<std::string, std::pair<int64_t, int64_t>> named;
  for (size_t i = 0; i < nbIn; ++i) {
    const Dims& opt = inputs_[i].dims;
    if (lo[i].nbDims != opt.nbDims || hi[i].nbDims != opt.nbDims) {
      fail("profile", device, label,
           "input" + std::to_string(i) + ": min, opt and max ranks differ");
      return;
    }
    Dims d = opt;
    for (int32_t k = 0; k < opt.nbDims; ++k) {
      if (lo[i].d[k] > opt.d[k] || opt.d[k] > hi[i].d[k]) {
        fail("profile", device, label,
             "input" + std::to_string(i) + " axis " + std::to_string(k) +
                 ": min <= opt <= max does not hold");
        return;
      }
      if (lo[i].d[k] != hi[i].d[k]) d.d[k] = -1;
      const std::string name = nameOf(i, k);
      if (!name.empty() && d.d[k] < 0) {
        auto [it, first] = named.emplace(name, std::make_pair(lo[i].d[k], hi[i].d[k]));
        it->second.first = std::max(it->second.first, lo[i].d[k]);
        it->second.second = std::min(it->second.second, hi[i].d[k]);
      }
    }
    declared.push_back(d);
  }
  std::unique_ptr<INetworkDefinition> net;
  Status s = buildNetwork(declared, net, nullptr, &spec_.profileDimNames);
  OptimizationProfile profile;
  for (size_t i = 0; s && i < nbIn; ++i) {
    const std::string name = "input" + std::to_string(i);
    profile.setDimensions(name.c_str(), OptProfileSelector::kMIN, lo[i]);
    profile.setDimensions(name.c_str(), OptProfileSelector::kOPT, inputs_[i].dims);
    profile.setDimensions(name.c_str(), OptProfileSelector::kMAX, hi[i]);
  }
  std::vector<uint8_t> plan;
  std::unique_ptr<IEngine> engine;
  if (s) {
    BuilderConfig config;
    config.target = device;
    config.warmupRuns = 0;
    config.timingRuns = 1;
    config.pluginCombination = combination;
    config.profiles.push_back(profile);
    s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  }
  if (s) s = createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
  if (!s) {
    fail("profile build", device, label, s.toString());
    return;
  }
  std::string range;
  for (size_t i = 0; i < nbIn; ++i)
    range += (i ? ", " : "") + dimsString(lo[i]) + ".." + dimsString(hi[i]);
  pass("profile build", device, label, "one plan for " + range);

  // The shapes: min, opt, max, then random ones (named axes drawn once per shape).
  std::mt19937_64 rng(report_.seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<std::vector<Dims>> shapes = {lo, {}, hi};
  for (const HostTensor& t : inputs_) shapes[1].push_back(t.dims);
  for (int r = 0; r < std::max(spec_.profileRandomShapes, 0); ++r) {
    std::map<std::string, int64_t> drawn;
    for (const auto& [name, bounds] : named)
      drawn[name] = std::uniform_int_distribution<int64_t>(bounds.first, bounds.second)(rng);
    std::vector<Dims> shape = declared;
    for (size_t i = 0; i < nbIn; ++i)
      for (int32_t k = 0; k < shape[i].nbDims; ++k) {
        if (shape[i].d[k] >= 0) continue;
        const std::string name = nameOf(i, k);
        shape[i].d[k] = !name.empty()
                            ? drawn[name]
                            : std::uniform_int_distribution<int64_t>(lo[i].d[k], hi[i].d[k])(rng);
      }
    shapes.push_back(shape);
  }
  // Named axes must agree at min and max too: those corners use the narrowed range.
  for (auto* corner : {&shapes[0], &shapes[2]})
    for (size_t i = 0; i < nbIn; ++i)
      for (int32_t k = 0; k < (*corner)[i].nbDims; ++k) {
        const std::string name = nameOf(i, k);
        if (name.empty() || declared[i].d[k] >= 0) continue;
        (*corner)[i].d[k] = corner == &shapes[0] ? named[name].first : named[name].second;
      }

  // The static plan of each shape, and that shape's inputs and output shapes.
  std::vector<std::vector<HostTensor>> ins, outs;
  std::vector<std::vector<std::vector<uint8_t>>> want;
  std::vector<std::string> what;
  for (const auto& shape : shapes) {
    std::string text;
    for (size_t i = 0; i < nbIn; ++i) text += (i ? ", " : "") + dimsString(shape[i]);
    what.push_back(text);
    std::unique_ptr<INetworkDefinition> fixed;
    std::vector<HostTensor> outShapes;
    std::vector<uint8_t> staticPlan;
    std::unique_ptr<IEngine> staticEngine;
    s = buildNetwork(shape, fixed, &outShapes);
    if (s) s = buildPlan(*fixed, device, combination, staticPlan);
    if (s)
      s = createRuntime()->deserializeEngine(staticPlan.data(), staticPlan.size(), staticEngine);
    ins.push_back(randomInputsAt(shape, rng));
    std::vector<RunOutputs> result;
    if (s) s = check::runContexts(*staticEngine, ins.back(), outShapes, 1, 1, result);
    if (!s) {
      fail("profile shapes", device, label, "the static plan at " + text + ": " + s.toString());
      return;
    }
    outs.push_back(outShapes);
    want.push_back(result[0][0]);
  }
  std::vector<std::vector<std::vector<uint8_t>>> got;
  s = check::runShapes(*engine, ins, outs, got);
  if (!s) {
    fail("profile shapes", device, label, s.toString());
    return;
  }
  const DataType narrow = narrowest(combination);
  const PluginCheckTolerance tol = narrow == DataType::kBF16   ? spec_.bf16Tolerance
                                   : narrow == DataType::kHALF ? spec_.fp16Tolerance
                                                               : spec_.fp32Tolerance;
  for (size_t k = 0; k < shapes.size(); ++k) {
    const char* kind = k == 0 ? "min" : k == 1 ? "opt" : k == 2 ? "max" : "random";
    std::string detail, bad;
    for (size_t o = 0; o < outs[k].size() && bad.empty(); ++o) {
      std::string d;
      const DataType t = outs[k][o].type;
      if (!agree(toValues(got[k][o], t), toValues(want[k][o], t), tol, d))
        bad = "output " + std::to_string(o) + ": " + d;
      detail += (detail.empty() ? "" : "; ") + d;
    }
    const std::string at = std::string(kind) + " " + what[k];
    if (bad.empty())
      pass("profile shapes", device, label, at + ": equals the static plan (" + detail + ")");
    else
      fail("profile shapes", device, label, at + ": differs from the static plan, " + bad);
  }
  // A shape outside the profile is refused before anything runs.
  std::unique_ptr<IExecutionContext> ctx;
  s = engine->createExecutionContext(ctx);
  Dims beyond = hi[0];
  bool dynamicAxis = false;
  for (int32_t k = 0; k < beyond.nbDims && !dynamicAxis; ++k)
    if (declared[0].d[k] < 0) {
      ++beyond.d[k];
      dynamicAxis = true;
    }
  if (s && dynamicAxis) {
    s = ctx->setInputShape("input0", beyond);
    if (s)
      fail("profile bounds", device, label,
           "input0 " + dimsString(beyond) + " lies outside the profile but was accepted");
    else
      pass("profile bounds", device, label,
           "input0 " + dimsString(beyond) + " refused: " + s.message());
  }
}

void Checker::checkDevice(const std::string& device) {
  bool cuda = false;
  int ordinal = -1;
  if (device == "cpu") {
  } else if (device.rfind("cuda", 0) == 0) {
    cuda = true;
    ordinal = 0;
    if (device.size() > 4) {
      try {
        size_t used = 0;
        if (device[4] != ':') throw 0;
        ordinal = std::stoi(device.substr(5), &used);
        if (used != device.size() - 5 || ordinal < 0) throw 0;
      } catch (...) {
        fail("device", device, "", "not a device: write cpu or cuda:N");
        return;
      }
    }
    std::string why;
    if (!check::deviceAvailable(DeviceKind::kCUDA, ordinal, why)) {
      skip("device", device, "", why);
      return;
    }
  } else {
    fail("device", device, "", "not a device: write cpu or cuda:N");
    return;
  }
  const std::string target = cuda ? "cuda:" + std::to_string(ordinal) : "cpu";

  std::vector<Combination> combinations;
  std::string note;
  Status s = enumerate(cuda ? DeviceKind::kCUDA : DeviceKind::kCPU, combinations, note);
  if (!s) {
    fail("combinations", target, "", s.toString());
    return;
  }
  if (combinations.empty()) {
    (cuda ? static_cast<void>(skip("combinations", target, "",
                                   "supportsFormatCombination accepts no combination on CUDA "
                                   "tensors: the plugin has no CUDA path"))
          : fail("combinations", target, "",
                 "supportsFormatCombination accepts no type/format combination"));
    return;
  }
  pass("combinations", target, "", note);

  std::unique_ptr<INetworkDefinition> net;
  std::vector<Dims> dims;
  for (const HostTensor& t : inputs_) dims.push_back(t.dims);
  s = buildNetwork(dims, net, nullptr);
  if (!s) {
    fail("network", target, "", s.toString());
    return;
  }
  for (const Combination& c : combinations) {
    Result r;
    if (checkCombination(target, cuda, *net, c, r)) results_.push_back(std::move(r));
  }
  net.reset();
  if (!spec_.profileMin.empty()) checkProfile(target, combinations.front());
  if (spec_.checkEmptyTensors) checkEmpty(target, cuda);
}

void Checker::compareAll() {
  auto tolFor = [&](DataType t) {
    return t == DataType::kBF16   ? spec_.bf16Tolerance
           : t == DataType::kHALF ? spec_.fp16Tolerance
                                  : spec_.fp32Tolerance;
  };
  auto outputsAgree = [&](const Result& a, const Result& b, const PluginCheckTolerance& tol,
                          std::string& detail) {
    for (size_t o = 0; o < outputShapes_.size(); ++o) {
      const DataType t = outputShapes_[o].type;
      std::string d;
      if (!agree(toValues(a.outputs[o], t), toValues(b.outputs[o], t), tol, d)) {
        detail = "output " + std::to_string(o) + ": " + d;
        return false;
      }
      detail += (detail.empty() ? "" : "; ") + d;
    }
    return true;
  };
  const size_t nbIn = inputs_.size();
  // The types a combination feeds the plugin, as a key.
  auto inputTypes = [&](const Combination& c) {
    std::string key;
    for (size_t i = 0; i < nbIn; ++i) key += std::string(dataTypeName(c[i].first)) + ",";
    return key;
  };
  // Across formats and types, per device: each combination against that device's first one
  // with the same input types (FP32/linear where the plugin accepts it). Combinations fed other
  // input types see other (rounded) values: each is held to the reference on those values below.
  std::map<std::string, const Result*> baseline;
  for (const Result& r : results_) {
    auto [it, first] = baseline.try_emplace(r.device + "|" + inputTypes(r.combination), &r);
    if (first) continue;
    const Result& b = *it->second;
    const DataType t = narrowest(r.combination) == DataType::kFLOAT ? narrowest(b.combination)
                                                                    : narrowest(r.combination);
    std::string detail;
    const bool ok = outputsAgree(r, b, tolFor(t), detail);
    const std::string msg = "vs " + comboLabel(b.combination, nbIn) + ": " + detail;
    ok ? pass("formats agree", r.device, comboLabel(r.combination, nbIn), msg)
       : fail("formats agree", r.device, comboLabel(r.combination, nbIn), msg);
  }
  // Across devices: every non-CPU result against the CPU's result for the same combination, or
  // the CPU's baseline.
  for (const Result& r : results_) {
    if (r.device == "cpu") continue;
    const Result* cpu = nullptr;
    for (const Result& c : results_)
      if (c.device == "cpu" && c.combination == r.combination) cpu = &c;
    for (const Result& c : results_)
      if (!cpu && c.device == "cpu" && inputTypes(c.combination) == inputTypes(r.combination))
        cpu = &c;
    if (!cpu) {
      skip("devices agree", r.device, comboLabel(r.combination, nbIn), "no CPU result to compare");
      continue;
    }
    DataType t = narrowest(r.combination);
    if (t == DataType::kFLOAT) t = narrowest(cpu->combination);
    PluginCheckTolerance tol = tolFor(t);
    std::string detail;
    const bool ok = outputsAgree(r, *cpu, tol, detail);
    const std::string msg = "vs cpu " + comboLabel(cpu->combination, nbIn) + ": " + detail;
    ok ? pass("devices agree", r.device, comboLabel(r.combination, nbIn), msg)
       : fail("devices agree", r.device, comboLabel(r.combination, nbIn), msg);
  }
  // Against the reference, computed on the inputs as each combination feeds them to the plugin:
  // float inputs rounded to the combination's types (an fp16 or bf16 box can move a nearest
  // sample to the next pixel, so the reference on fp32 inputs is not what that combination
  // computes). One reference per distinct set of input types.
  if (!spec_.reference) return;
  std::map<std::string, std::vector<std::vector<double>>> expectedFor;
  for (const Result& r : results_) {
    const std::string key = inputTypes(r.combination);
    auto it = expectedFor.find(key);
    if (it == expectedFor.end()) {
      std::vector<std::vector<double>> expected;
      std::string error;
      bool ok = false;
      try {
        ok = spec_.reference(roundedInputs(r.combination), expected, error);
      } catch (const std::exception& e) {
        error = std::string("the reference threw: ") + e.what();
      }
      if (!ok || expected.size() != outputShapes_.size()) {
        fail("reference", "", "",
             ok ? "the reference gave " + std::to_string(expected.size()) +
                      " outputs, the plugin has " + std::to_string(outputShapes_.size())
                : "the reference failed: " + error);
        return;
      }
      it = expectedFor.emplace(key, std::move(expected)).first;
    }
    const std::vector<std::vector<double>>& expected = it->second;
    PluginCheckTolerance tol = spec_.referenceTolerance;
    const DataType t = narrowest(r.combination);
    if (t != DataType::kFLOAT) {
      tol.abs += tolFor(t).abs;
      tol.rel += tolFor(t).rel;
    }
    std::string detail, all;
    bool good = true;
    for (size_t o = 0; o < outputShapes_.size() && good; ++o) {
      good = agree(toValues(r.outputs[o], outputShapes_[o].type), expected[o], tol, detail);
      all += (all.empty() ? "" : "; ") + ("output " + std::to_string(o) + ": " + detail);
    }
    good ? pass("reference", r.device, comboLabel(r.combination, nbIn), all)
         : fail("reference", r.device, comboLabel(r.combination, nbIn), all);
  }
}

std::vector<PluginCheckTensor> Checker::roundedInputs(const Combination& c) const {
  std::vector<PluginCheckTensor> in = referenceInputs_;
  for (size_t i = 0; i < in.size() && i < c.size(); ++i) {
    const DataType t = c[i].first;
    if (!isFloatType(in[i].type) || !isFloatType(t) || t == in[i].type) continue;
    uint8_t bytes[8];
    for (double& v : in[i].values) {
      writeElement(bytes, t, 0, v);
      v = readElement(bytes, t, 0);
    }
  }
  return in;
}

void Checker::checkTrace(const std::string& path) {
  std::vector<std::string> lines;
  std::vector<TraceViolation> violations;
  Status s = readTraceFile(path, lines);
  if (s) s = ::kiln::checkTrace(lines, violations);
  if (!s) {
    fail("trace", "", "", "the lifecycle trace cannot be checked: " + s.toString());
    return;
  }
  if (lines.empty()) {
    fail("trace", "", "", "the lifecycle trace is empty (was tracing taken over by someone else?)");
    return;
  }
  static const char* const kWhat[] = {"",
                                      "destroy() exactly once, last",
                                      "initialize() at most once; terminate() iff it succeeded",
                                      "context objects never initialized",
                                      "configure before use; deserialized objects never configured",
                                      "enqueue only while attached",
                                      "serialize round trip",
                                      "namespace set first, kept by clones",
                                      "failures keep 1-2",
                                      "context objects hear each shape change before enqueue"};
  for (int g = 1; g <= 9; ++g) {
    std::string detail;
    int n = 0;
    for (const TraceViolation& v : violations) {
      if (v.guarantee != g) continue;
      if (n++ < 3) detail += (detail.empty() ? "" : "; ") + formatTraceViolation(v);
    }
    const std::string check = "guarantee " + std::to_string(g);
    if (n)
      fail(check, "", "", std::to_string(n) + " violation(s): " + detail);
    else
      pass(check, "", "",
           std::string(kWhat[g]) + " (" + std::to_string(lines.size()) + " trace events)");
  }
}

void Checker::run() {
  // The trace of the whole run, checked at the end.
  const bool ownTrace = spec_.tracePath.empty();
  const std::string tracePath =
      ownTrace ? tempPath(spec_.workDir, "kiln_plugin_check_trace", ".jsonl") : spec_.tracePath;
  Status s = setTracePath(tracePath);
  if (!s) {
    fail("trace", "", "", s.toString());
    return;
  }

  const std::string id =
      spec_.name + " version " + spec_.version + " namespace '" + spec_.pluginNamespace + "'";
  creator_ = PluginRegistry::global().getCreator(spec_.name.c_str(), spec_.version.c_str(),
                                                 spec_.pluginNamespace.c_str());
  if (!creator_) {
    fail("creator found", "", "", "no creator registered for " + id);
    setTracePath("").isOk();
    if (ownTrace) std::remove(tracePath.c_str());
    return;
  }
  pass("creator found", "", "", id);

  for (const PluginCheckField& f : spec_.fields)
    fieldArray_.push_back({f.name.c_str(), f.data.data(), f.type, f.length});
  fields_ = {static_cast<int32_t>(fieldArray_.size()), fieldArray_.data()};
  makeInputs();

  // Fields, and the plugin's shape functions, through a network.
  bool usable = false;
  {
    std::unique_ptr<INetworkDefinition> net;
    std::vector<Dims> dims;
    for (const HostTensor& t : inputs_) dims.push_back(t.dims);
    s = buildNetwork(dims, net, &outputShapes_);
    if (s) {
      std::string shapes;
      for (const HostTensor& t : outputShapes_)
        shapes += (shapes.empty() ? "" : ", ") + dimsString(t.dims) + " " + dataTypeName(t.type);
      pass("fields accepted", "", "",
           std::to_string(spec_.fields.size()) + " field(s); outputs " + shapes);
      usable = true;
    } else {
      fail("fields accepted", "", "", s.toString());
    }
  }
  if (usable) {
    for (const std::string& device : spec_.devices) checkDevice(device);
    compareAll();
  }

  flushTrace();
  setTracePath("").isOk();
  checkTrace(tracePath);
  if (ownTrace) std::remove(tracePath.c_str());
}

}  // namespace

const char* pluginCheckOutcomeName(PluginCheckOutcome outcome) {
  static constexpr const char* kNames[] = {"pass", "FAIL", "skip"};
  return enumName(outcome, kNames, "?");
}

PluginCheckInput PluginCheckInput::random(const Dims& dims, DataType type, double low,
                                          double high) {
  PluginCheckInput in;
  in.dims = dims;
  in.type = type;
  in.low = low;
  in.high = high;
  return in;
}

PluginCheckInput PluginCheckInput::fixed(const Dims& dims, DataType type,
                                         std::vector<double> values) {
  PluginCheckInput in;
  in.dims = dims;
  in.type = type;
  in.values = std::move(values);
  return in;
}

bool PluginCheckReport::allPassed() const {
  return count(PluginCheckOutcome::kFail) == 0 && count(PluginCheckOutcome::kPass) > 0;
}

int PluginCheckReport::count(PluginCheckOutcome outcome) const {
  return static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [&](const auto& r) { return r.outcome == outcome; }));
}

std::vector<const PluginCheckRow*> PluginCheckReport::find(const std::string& check,
                                                           const std::string& device) const {
  std::vector<const PluginCheckRow*> found;
  for (const PluginCheckRow& r : rows)
    if (r.check == check && (device.empty() || r.device == device)) found.push_back(&r);
  return found;
}

void PluginCheckReport::print(std::ostream& out) const {
  size_t wc = 5, wd = 6, wk = 11;
  for (const PluginCheckRow& r : rows) {
    wc = std::max(wc, r.check.size());
    wd = std::max(wd, r.device.size());
    wk = std::max(wk, r.combination.size());
  }
  auto line = [&](const std::string& result, const std::string& c, const std::string& d,
                  const std::string& k, const std::string& detail) {
    out << std::left << std::setw(7) << result << std::setw(wc + 2) << c << std::setw(wd + 2) << d
        << std::setw(wk + 2) << k << detail << "\n";
  };
  line("result", "check", "device", "combination", "detail");
  line("------", std::string(wc, '-'), std::string(wd, '-'), std::string(wk, '-'), "------");
  for (const PluginCheckRow& r : rows)
    line(pluginCheckOutcomeName(r.outcome), r.check, r.device.empty() ? "-" : r.device,
         r.combination.empty() ? "-" : r.combination, r.detail);
  out << "plugin check: " << count(PluginCheckOutcome::kPass) << " passed, "
      << count(PluginCheckOutcome::kFail) << " failed, " << count(PluginCheckOutcome::kSkip)
      << " skipped (input seed " << seed << "): " << (allPassed() ? "PASS" : "FAIL") << "\n";
}

PluginCheckReport runPluginCheck(const PluginCheckSpec& spec) {
  PluginCheckReport report;
  report.seed =
      spec.seed
          ? spec.seed
          : (static_cast<uint64_t>(std::random_device{}()) << 32) ^
                static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  if (spec.inputs.empty()) {
    report.rows.push_back({"spec", "", "", PluginCheckOutcome::kFail,
                           "no inputs given: the harness needs the plugin's input shapes"});
    return report;
  }
  Checker(spec, report).run();
  return report;
}

}  // namespace kiln
