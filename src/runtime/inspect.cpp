// `kiln inspect`: the plan as JSON (layers, tactics, formats, timings, memory plan, plugins).
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/json.h"
#include "core/param_fields.h"
#include "kiln/runtime.h"
#include "runtime/engine_state.h"
#include "runtime/workspace_placement.h"

namespace kiln {
namespace {

std::string quote(const std::string& s) { return jsonString(s); }

std::string dimsJson(const Dims& d) {
  std::string s = "[";
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? "," : "") + std::to_string(d.d[i]);
  return s + "]";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

const char* kindName(plan::TensorKind k) {
  switch (k) {
    case plan::TensorKind::kINPUT:
      return "input";
    case plan::TensorKind::kOUTPUT:
      return "output";
    case plan::TensorKind::kACTIVATION:
      return "activation";
    case plan::TensorKind::kCONSTANT:
      return "constant";
  }
  return "invalid";
}

std::string tensorJson(const plan::Plan& p, int32_t t) {
  const plan::Tensor& x = p.tensors[t];
  std::string s = "{\"name\":" + quote(x.name) + ",\"dims\":" + dimsJson(x.dims) +
                  ",\"type\":" + quote(dataTypeName(x.type)) +
                  ",\"format\":" + quote(formatName(x.format)) +
                  ",\"kind\":" + quote(kindName(x.kind)) +
                  ",\"bytes\":" + std::to_string(plan::tensorBytes(x.dims, x.type));
  if (x.kind == plan::TensorKind::kACTIVATION)
    s += ",\"arena_offset\":" + std::to_string(x.arenaOffset);
  return s + "}";
}

}  // namespace

Status inspectPlan(const void* data, size_t size, std::string& json) {
  try {
    plan::Plan plan;
    KILN_RETURN_IF_ERROR(plan::readPlan(data, size, plan));
    json = inspectPlan(plan);
    return Status::ok();
  } catch (const std::bad_alloc&) {
    return corruptData("out of memory while reading the plan: its sizes are implausible");
  }
}

std::string inspectPlan(const plan::Plan& p) {
  std::ostringstream o;
  o << "{\n  \"kiln_version\": " << quote(p.kilnVersion) << ",\n  \"target\": " << quote(p.target)
    << ",\n  \"inputs\": [";
  for (size_t i = 0; i < p.inputs.size(); ++i) o << (i ? ", " : "") << tensorJson(p, p.inputs[i]);
  o << "],\n  \"outputs\": [";
  for (size_t i = 0; i < p.outputs.size(); ++i) o << (i ? ", " : "") << tensorJson(p, p.outputs[i]);
  o << "],\n  \"layers\": [";
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const plan::Step& step = p.steps[s];
    o << (s ? "," : "") << "\n    {\"name\": " << quote(step.layerName)
      << ", \"type\": " << quote(layerTypeName(step.type)) << ", \"tactic\": " << quote(step.tactic)
      << ", \"median_ms\": " << number(step.medianMs)
      << ", \"workspace_bytes\": " << step.workspaceBytes
      << ", \"params\": " << param_fields::toJson(step.params);
    if (step.pluginIndex >= 0) o << ", \"plugin\": " << quote(p.plugins[step.pluginIndex].name);
    o << ",\n     \"inputs\": [";
    for (size_t i = 0; i < step.inputs.size(); ++i)
      o << (i ? ", " : "") << tensorJson(p, step.inputs[i]);
    o << "],\n     \"outputs\": [";
    for (size_t i = 0; i < step.outputs.size(); ++i)
      o << (i ? ", " : "") << tensorJson(p, step.outputs[i]);
    o << "],\n     \"candidates\": [";
    for (size_t c = 0; c < step.candidates.size(); ++c) {
      const plan::Candidate& cand = step.candidates[c];
      o << (c ? ", " : "") << "{\"name\": " << quote(cand.name);
      if (cand.rejectedBecause.empty())
        o << ", \"median_ms\": " << number(cand.medianMs);
      else
        o << ", \"rejected\": " << quote(cand.rejectedBecause);
      o << "}";
    }
    o << "]}";
  }
  // A static plan's context: the arena with its built-in steps' workspaces placed in it, and the
  // plugins' separate workspace (as the engine lays them out at load, from the recorded sizes).
  uint64_t contextBytes = p.arenaBytes + p.maxWorkspaceBytes;
  if (p.profiles.empty()) {
    uint64_t plugins = 0;
    for (const plan::Step& s : p.steps)
      if (s.type == LayerType::kPLUGIN) plugins = std::max(plugins, s.workspaceBytes);
    contextBytes = placeWorkspacesInArena(p, builtinStepWorkspaces(p)).arenaBytes + plugins;
  }
  o << "\n  ],\n  \"memory\": {\"planned_activation_bytes\": " << p.arenaBytes
    << ", \"naive_activation_bytes\": " << p.naiveActivationBytes
    << ", \"workspace_bytes\": " << p.maxWorkspaceBytes << ", \"context_bytes\": " << contextBytes
    << ", \"weight_bytes\": ";
  uint64_t weights = 0;
  for (const auto& w : p.weights) weights += w->size();
  o << weights << "},\n  \"plugins\": [";
  for (size_t i = 0; i < p.plugins.size(); ++i) {
    const plan::PluginRecord& r = p.plugins[i];
    o << (i ? ", " : "") << "\n    {\"name\": " << quote(r.name)
      << ", \"version\": " << quote(r.version) << ", \"namespace\": " << quote(r.pluginNamespace)
      << ", \"library\": " << quote(r.libraryName) << ", \"library_hash\": " << quote(r.libraryHash)
      << ", \"serialized_bytes\": " << r.data.size() << "}";
  }
  // Dynamic shapes: per profile, each dynamic input's range and the memory planned at its max.
  o << "\n  ],\n  \"profiles\": [";
  const auto dimsJson = [](const Dims& d) {
    std::string s = "[";
    for (int32_t k = 0; k < d.nbDims; ++k) s += (k ? ", " : "") + std::to_string(d.d[k]);
    return s + "]";
  };
  for (size_t i = 0; i < p.profiles.size(); ++i) {
    const plan::Profile& prof = p.profiles[i];
    o << (i ? "," : "") << "\n    {\"index\": " << i << ", \"inputs\": [";
    for (size_t k = 0; k < prof.inputs.size(); ++k) {
      const plan::ProfileInput& in = prof.inputs[k];
      o << (k ? ", " : "") << "{\"name\": " << quote(p.tensors[in.tensor].name)
        << ", \"min\": " << dimsJson(in.min) << ", \"opt\": " << dimsJson(in.opt)
        << ", \"max\": " << dimsJson(in.max) << "}";
    }
    size_t differing = 0;
    for (size_t s = 0; s < prof.tactics.size() && s < p.steps.size(); ++s)
      differing += prof.tactics[s] != p.steps[s].tactic;
    o << "], \"planned_activation_bytes\": " << prof.arenaBytes
      << ", \"workspace_bytes\": " << prof.workspaceBytes
      << ", \"tactics_other_than_profile_0\": " << differing << "}";
  }
  o << "],\n  \"dimension_rules\": [";
  for (size_t i = 0; i < p.equalities.size(); ++i) {
    const plan::DimEquality& e = p.equalities[i];
    o << (i ? ", " : "") << "{\"name\": " << quote(e.name)
      << ", \"a\": " << quote(p.tensors[e.tensorA].name) << ", \"axis_a\": " << e.axisA
      << ", \"b\": " << quote(p.tensors[e.tensorB].name) << ", \"axis_b\": " << e.axisB << "}";
  }
  // Shape-value inputs: the values the plan was built for, which enqueue checks.
  o << "],\n  \"shape_value_inputs\": [";
  for (size_t i = 0; i < p.shapeValueInputs.size(); ++i) {
    const plan::ShapeValueInput& in = p.shapeValueInputs[i];
    o << (i ? ", " : "") << "{\"name\": " << quote(p.tensors[in.tensor].name) << ", \"values\": [";
    for (size_t k = 0; k < in.values.size(); ++k) o << (k ? ", " : "") << in.values[k];
    o << "]}";
  }
  o << "]\n}\n";
  return o.str();
}

}  // namespace kiln
