#include "runtime/plan_validate.h"

#include <cstdint>
#include <set>
#include <string>
#include <variant>

#include "core/param_fields.h"
#include "core/plan_codec.h"

namespace kiln::plan {
namespace {

std::string quoted(const std::string& s) { return quotedName(s); }

std::string tensorRef(const Plan& plan, size_t i) {
  return "tensor " + std::to_string(i) + " (" + quoted(plan.tensors[i].name) + ")";
}

std::string stepRef(const Plan& plan, size_t i) {
  return "step " + std::to_string(i) + " (" + quoted(plan.steps[i].layerName) + ")";
}

Status bad(const char* section, const std::string& what) {
  return corruptData(std::string("section '") + section + "': " + what);
}

bool isPrintable(const std::string& s) {
  for (char c : s)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

// `where` is a callable that names the item; names are only formatted for an error, since
// validation runs on every load.
template <typename Where>
Status checkString(const char* section, const Where& where, const char* field,
                   const std::string& s) {
  if (s.size() > kMaxStringBytes)
    return bad(section, where() + ": " + field + " is " + std::to_string(s.size()) +
                            " bytes long, more than the maximum " +
                            std::to_string(kMaxStringBytes));
  return Status::ok();
}

bool validDataType(DataType t) {
  return static_cast<int32_t>(t) >= 0 && static_cast<int32_t>(t) < kDataTypeCount;
}
bool validFormat(TensorFormat f) {
  return static_cast<int32_t>(f) >= 0 && static_cast<int32_t>(f) < kTensorFormatCount;
}
bool validLayerType(LayerType t) {
  return static_cast<int32_t>(t) >= 0 && static_cast<int32_t>(t) < kLayerTypeCount;
}
template <typename E>
bool inRange(E v, int32_t count) {
  return static_cast<int32_t>(v) >= 0 && static_cast<int32_t>(v) < count;
}

Status checkHeader(const Plan& plan) {
  if (plan.target.empty() || plan.target.size() > kMaxHeaderStringBytes ||
      !isPrintable(plan.target))
    return corruptData("header: the target " + quoted(plan.target) + " must be 1 to " +
                       std::to_string(kMaxHeaderStringBytes) + " printable ASCII characters");
  if (plan.kilnVersion.size() > kMaxHeaderStringBytes || !isPrintable(plan.kilnVersion))
    return corruptData("header: the kiln version " + quoted(plan.kilnVersion) +
                       " must be at most " + std::to_string(kMaxHeaderStringBytes) +
                       " printable ASCII characters");
  return Status::ok();
}

Status checkTensor(const Plan& plan, size_t i) {
  const Tensor& t = plan.tensors[i];
  const auto where = [&] { return tensorRef(plan, i); };
  KILN_RETURN_IF_ERROR(checkString("tensors", where, "name", t.name));
  if (!validDataType(t.type))
    return bad("tensors",
               where() + ": invalid data type " + std::to_string(static_cast<int32_t>(t.type)));
  if (!validFormat(t.format))
    return bad("tensors",
               where() + ": invalid format " + std::to_string(static_cast<int32_t>(t.format)));
  if (!inRange(t.kind, kTensorKindCount))
    return bad("tensors",
               where() + ": invalid kind " + std::to_string(static_cast<int32_t>(t.kind)));
  if (t.dims.nbDims < 0 || t.dims.nbDims > Dims::kMaxDims)
    return bad("tensors", where() + ": rank " + std::to_string(t.dims.nbDims) + " is outside [0, " +
                              std::to_string(Dims::kMaxDims) + "]");
  for (int32_t d = 0; d < t.dims.nbDims; ++d)
    if (t.dims.d[d] < 0)
      return bad("tensors", where() + ": dim " + std::to_string(d) + " is negative (" +
                                std::to_string(t.dims.d[d]) + ")");
  const int64_t bytes = tensorBytes(t.dims, t.type);
  if (bytes < 0) return bad("tensors", where() + ": its byte size overflows 64 bits");
  if (t.format == TensorFormat::kCHANNELS_LAST && t.dims.nbDims != 4)
    return bad("tensors", where() + ": channels-last format needs rank 4, the tensor has rank " +
                              std::to_string(t.dims.nbDims));

  if (t.kind == TensorKind::kCONSTANT) {
    if (t.weightIndex < 0 || static_cast<size_t>(t.weightIndex) >= plan.weights.size())
      return bad("tensors", where() + ": weight index " + std::to_string(t.weightIndex) +
                                " is outside [0, " + std::to_string(plan.weights.size()) + ")");
    const auto& w = plan.weights[t.weightIndex];
    if (w && w->size() != static_cast<uint64_t>(bytes))
      return bad("tensors", where() + ": weights " + std::to_string(t.weightIndex) + " hold " +
                                std::to_string(w->size()) + " bytes, the tensor needs " +
                                std::to_string(bytes));
  } else if (t.weightIndex != -1) {
    return bad("tensors", where() + ": only constants have a weight index (it is " +
                              std::to_string(t.weightIndex) + ", expected -1)");
  }

  if (t.kind == TensorKind::kACTIVATION) {
    if (t.arenaOffset % kArenaAlignment != 0)
      return bad("tensors", where() + ": arena offset " + std::to_string(t.arenaOffset) +
                                " is not a multiple of " + std::to_string(kArenaAlignment));
    if (t.arenaOffset > plan.arenaBytes ||
        static_cast<uint64_t>(bytes) > plan.arenaBytes - t.arenaOffset)
      return bad("tensors", where() + ": arena range [" + std::to_string(t.arenaOffset) + ", +" +
                                std::to_string(bytes) + ") ends outside the arena of " +
                                std::to_string(plan.arenaBytes) + " bytes");
  } else if (t.arenaOffset != 0) {
    return bad("tensors", where() + ": only activations have an arena offset (it is " +
                              std::to_string(t.arenaOffset) + ", expected 0)");
  }
  return Status::ok();
}

// Enum fields must hold one of their values; everything else a layer's parameters must satisfy is
// its op's shape rule, run on every step by validatePlanShapes.
template <typename Where>
Status checkParams(const Step& s, const Where& where) {
  std::string why;
  if (!param_fields::enumsValid(s.params, &why))
    return bad("steps", where() + ": invalid " + layerTypeName(s.type) + " " + why);
  return Status::ok();
}

template <typename Where>
Status checkTensorList(const Plan& plan, const Where& where, const char* what,
                       const std::vector<int32_t>& list) {
  for (size_t k = 0; k < list.size(); ++k)
    if (list[k] < 0 || static_cast<size_t>(list[k]) >= plan.tensors.size())
      return bad("steps", where() + ": " + what + " " + std::to_string(k) + " is tensor index " +
                              std::to_string(list[k]) + ", outside [0, " +
                              std::to_string(plan.tensors.size()) + ")");
  return Status::ok();
}

Status checkSteps(const Plan& plan) {
  // produced[t]: some earlier step wrote tensor t. Steps run in order, so a step may read only
  // inputs, constants and what an earlier step produced, and each tensor has one producer.
  std::vector<bool> produced(plan.tensors.size(), false);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    const auto where = [&] { return stepRef(plan, i); };
    KILN_RETURN_IF_ERROR(checkString("steps", where, "layer name", s.layerName));
    if (!validLayerType(s.type))
      return bad("steps",
                 where() + ": invalid layer type " + std::to_string(static_cast<int32_t>(s.type)));
    const size_t expected = paramsIndexFor(s.type);
    if (s.params.index() != expected)
      return bad("steps", where() + ": a " + layerTypeName(s.type) +
                              " step carries parameters of variant alternative " +
                              std::to_string(s.params.index()) + ", expected " +
                              std::to_string(expected));
    KILN_RETURN_IF_ERROR(checkTensorList(plan, where, "input", s.inputs));
    KILN_RETURN_IF_ERROR(checkTensorList(plan, where, "output", s.outputs));
    KILN_RETURN_IF_ERROR(checkParams(s, where));

    for (int32_t t : s.inputs) {
      const TensorKind kind = plan.tensors[t].kind;
      if (kind != TensorKind::kINPUT && kind != TensorKind::kCONSTANT && !produced[t])
        return bad("steps",
                   where() + " reads " + tensorRef(plan, t) + " before any step has produced it");
    }
    for (int32_t t : s.outputs) {
      const TensorKind kind = plan.tensors[t].kind;
      if (kind != TensorKind::kACTIVATION && kind != TensorKind::kOUTPUT)
        return bad("steps", where() + " writes " + tensorRef(plan, t) +
                                ", which is a network input or a constant");
      if (produced[t])
        return bad("steps", where() + " writes " + tensorRef(plan, t) +
                                ", which an earlier step (or this one) already produced");
      produced[t] = true;
    }

    KILN_RETURN_IF_ERROR(checkString("steps", where, "tactic", s.tactic));
    if (s.type == LayerType::kPLUGIN) {
      if (s.pluginIndex < 0 || static_cast<size_t>(s.pluginIndex) >= plan.plugins.size())
        return bad("steps", where() + ": plugin index " + std::to_string(s.pluginIndex) +
                                " is outside [0, " + std::to_string(plan.plugins.size()) + ")");
      if (s.tactic != "plugin")
        return bad("steps",
                   where() + ": a plugin step's tactic must be 'plugin', not " + quoted(s.tactic));
    } else {
      if (s.pluginIndex != -1)
        return bad("steps", where() + ": a " + layerTypeName(s.type) + " step has plugin index " +
                                std::to_string(s.pluginIndex) + ", expected -1");
      if (s.tactic.empty()) return bad("steps", where() + ": the tactic name is empty");
    }
    if (s.workspaceBytes > plan.maxWorkspaceBytes)
      return bad("steps", where() + ": workspace of " + std::to_string(s.workspaceBytes) +
                              " bytes exceeds the plan's maxWorkspaceBytes " +
                              std::to_string(plan.maxWorkspaceBytes));
    for (size_t c = 0; c < s.candidates.size(); ++c) {
      const auto cw = [&] { return where() + " candidate " + std::to_string(c); };
      KILN_RETURN_IF_ERROR(checkString("steps", cw, "name", s.candidates[c].name));
      KILN_RETURN_IF_ERROR(checkString("steps", cw, "rejection", s.candidates[c].rejectedBecause));
    }
  }

  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    const int32_t t = plan.outputs[k];
    if (t >= 0 && static_cast<size_t>(t) < plan.tensors.size() && !produced[t])
      return bad("io", "output " + std::to_string(k) + ", " + tensorRef(plan, t) +
                           ", is produced by no step");
  }
  return Status::ok();
}

Status checkPlugins(const Plan& plan) {
  for (size_t i = 0; i < plan.plugins.size(); ++i) {
    const PluginRecord& p = plan.plugins[i];
    const auto where = [&] {
      return "plugin record " + std::to_string(i) + " (" + quoted(p.name) + ")";
    };
    if (p.name.empty()) return bad("plugins", where() + ": the plugin name is empty");
    KILN_RETURN_IF_ERROR(checkString("plugins", where, "name", p.name));
    KILN_RETURN_IF_ERROR(checkString("plugins", where, "version", p.version));
    KILN_RETURN_IF_ERROR(checkString("plugins", where, "namespace", p.pluginNamespace));
    KILN_RETURN_IF_ERROR(checkString("plugins", where, "library name", p.libraryName));
    KILN_RETURN_IF_ERROR(checkString("plugins", where, "library hash", p.libraryHash));
  }
  return Status::ok();
}

Status checkBindings(const Plan& plan, const std::vector<int32_t>& list, TensorKind kind,
                     const char* what, std::set<std::string>& names) {
  size_t ofKind = 0;
  for (const Tensor& t : plan.tensors) ofKind += t.kind == kind;
  std::vector<bool> seen(plan.tensors.size(), false);
  for (size_t k = 0; k < list.size(); ++k) {
    const int32_t t = list[k];
    const auto where = [&] { return std::string(what) + " " + std::to_string(k); };
    if (t < 0 || static_cast<size_t>(t) >= plan.tensors.size())
      return bad("io", where() + " is tensor index " + std::to_string(t) + ", outside [0, " +
                           std::to_string(plan.tensors.size()) + ")");
    if (plan.tensors[t].kind != kind)
      return bad("io", where() + ", " + tensorRef(plan, t) + ", is not of kind " + what);
    if (seen[t]) return bad("io", where() + ", " + tensorRef(plan, t) + ", is listed twice");
    seen[t] = true;
    if (plan.tensors[t].name.empty())
      return bad("io", where() + ", tensor " + std::to_string(t) + ", has no name to bind it by");
    // An input or output is bound by a C string (setTensorAddress, getIOTensorName): a name
    // with a NUL inside would be cut there and could never be bound.
    const size_t nul = plan.tensors[t].name.find('\0');
    if (nul != std::string::npos)
      return bad("io", where() + ", tensor " + std::to_string(t) +
                           ", has a NUL byte in its name at offset " + std::to_string(nul));
    if (!names.insert(plan.tensors[t].name).second)
      return bad("io", where() + ", " + tensorRef(plan, t) +
                           ", has the same name as another input or output");
  }
  if (list.size() != ofKind)
    return bad("io", std::to_string(ofKind) + " tensors are of kind " + what + " but " +
                         std::to_string(list.size()) + " are listed as " + what + "s");
  return Status::ok();
}

bool isPlanInput(const Plan& plan, int32_t t) {
  return t >= 0 && static_cast<size_t>(t) < plan.tensors.size() &&
         plan.tensors[t].kind == TensorKind::kINPUT;
}

// Shape-value inputs: each a plan input of an integer type with fixed dims (no profile varies
// it), listed once, holding one value per element, each within its type.
Status checkShapeValueInputs(const Plan& plan) {
  std::vector<bool> seen(plan.tensors.size(), false);
  for (size_t k = 0; k < plan.shapeValueInputs.size(); ++k) {
    const ShapeValueInput& in = plan.shapeValueInputs[k];
    const auto where = [&] { return "shape-value input " + std::to_string(k); };
    if (!isPlanInput(plan, in.tensor))
      return bad("io", where() + " names a tensor that is no plan input");
    const Tensor& t = plan.tensors[in.tensor];
    if (seen[in.tensor])
      return bad("io", where() + ", " + tensorRef(plan, in.tensor) + ", is listed twice");
    seen[in.tensor] = true;
    if (t.type != DataType::kINT32 && t.type != DataType::kINT64)
      return bad("io",
                 where() + ", " + tensorRef(plan, in.tensor) + ", is not of type INT32 or INT64");
    for (const Profile& p : plan.profiles)
      for (const ProfileInput& pi : p.inputs)
        if (pi.tensor == in.tensor)
          return bad("io", where() + ", " + tensorRef(plan, in.tensor) + ", has a profile range");
    if (volume(t.dims) != static_cast<int64_t>(in.values.size()))
      return bad("io", where() + ", " + tensorRef(plan, in.tensor) + ", holds " +
                           std::to_string(in.values.size()) + " values for " +
                           std::to_string(volume(t.dims)) + " elements");
    for (size_t v = 0; v < in.values.size(); ++v)
      if (t.type == DataType::kINT32 && (in.values[v] < INT32_MIN || in.values[v] > INT32_MAX))
        return bad("io", where() + ": value " + std::to_string(v) + " (" +
                             std::to_string(in.values[v]) + ") does not fit INT32");
  }
  return Status::ok();
}

// The profiles' structure: what the runtime indexes by. Whether the layers accept every shape in
// a box is checked when the engine is made (each profile is specialized at its corners).
Status checkProfiles(const Plan& plan) {
  for (size_t k = 0; k < plan.equalities.size(); ++k) {
    const DimEquality& e = plan.equalities[k];
    const auto where = [&] { return "dimension rule " + std::to_string(k); };
    KILN_RETURN_IF_ERROR(checkString("profiles", where, "name", e.name));
    if (!isPlanInput(plan, e.tensorA) || !isPlanInput(plan, e.tensorB))
      return bad("profiles", where() + " names a tensor that is no plan input");
    if (e.axisA < 0 || e.axisA >= plan.tensors[e.tensorA].dims.nbDims || e.axisB < 0 ||
        e.axisB >= plan.tensors[e.tensorB].dims.nbDims)
      return bad("profiles", where() + " names an axis outside its input's rank");
  }
  if (plan.profiles.empty()) {
    if (!plan.equalities.empty())
      return bad("profiles", "dimension rules without an optimization profile");
    return Status::ok();
  }
  for (size_t p = 0; p < plan.profiles.size(); ++p) {
    const Profile& prof = plan.profiles[p];
    const auto where = [&] { return "profile " + std::to_string(p); };
    std::vector<bool> seen(plan.tensors.size(), false);
    for (const ProfileInput& in : prof.inputs) {
      if (!isPlanInput(plan, in.tensor))
        return bad("profiles", where() + " names tensor " + std::to_string(in.tensor) +
                                   ", which is no plan input");
      if (seen[in.tensor])
        return bad("profiles", where() + " lists " + tensorRef(plan, in.tensor) + " twice");
      seen[in.tensor] = true;
      const Dims& d = plan.tensors[in.tensor].dims;
      if (in.min.nbDims != d.nbDims || in.opt.nbDims != d.nbDims || in.max.nbDims != d.nbDims)
        return bad("profiles", where() + ": the ranks given for " + tensorRef(plan, in.tensor) +
                                   " are not its rank");
      for (int32_t a = 0; a < d.nbDims; ++a) {
        if (in.min.d[a] < 0 || in.min.d[a] > in.opt.d[a] || in.opt.d[a] > in.max.d[a])
          return bad("profiles", where() + ": " + tensorRef(plan, in.tensor) + " axis " +
                                     std::to_string(a) + " does not have 0 <= min <= opt <= max");
        if (p == 0 && in.opt.d[a] != d.d[a])
          return bad("profiles", where() + ": the opt shape of " + tensorRef(plan, in.tensor) +
                                     " is not the dims the plan records");
      }
    }
    if (prof.tactics.size() != plan.steps.size())
      return bad("profiles", where() + " has " + std::to_string(prof.tactics.size()) +
                                 " tactics for " + std::to_string(plan.steps.size()) + " steps");
    for (size_t s = 0; s < prof.tactics.size(); ++s)
      KILN_RETURN_IF_ERROR(checkString("profiles", where, "tactic", prof.tactics[s]));
    if (prof.arenaOffsets.size() != plan.tensors.size())
      return bad("profiles", where() + " has " + std::to_string(prof.arenaOffsets.size()) +
                                 " arena offsets for " + std::to_string(plan.tensors.size()) +
                                 " tensors");
    if (prof.arenaBytes > kMaxMemoryBytes || prof.workspaceBytes > kMaxMemoryBytes)
      return bad("profiles", where() + ": its arena or workspace exceeds the limit " +
                                 std::to_string(kMaxMemoryBytes));
  }
  return Status::ok();
}

}  // namespace

Status validatePlan(const Plan& plan) {
  KILN_RETURN_IF_ERROR(checkHeader(plan));
  if (plan.arenaBytes > kMaxMemoryBytes || plan.maxWorkspaceBytes > kMaxMemoryBytes)
    return bad("memory", "arena of " + std::to_string(plan.arenaBytes) + " bytes or workspace of " +
                             std::to_string(plan.maxWorkspaceBytes) + " bytes exceeds the limit " +
                             std::to_string(kMaxMemoryBytes));
  for (size_t i = 0; i < plan.weights.size(); ++i)
    if (!plan.weights[i]) return bad("weights", "weights " + std::to_string(i) + " are null");
  for (size_t i = 0; i < plan.tensors.size(); ++i) KILN_RETURN_IF_ERROR(checkTensor(plan, i));
  KILN_RETURN_IF_ERROR(checkPlugins(plan));
  std::set<std::string> ioNames;
  KILN_RETURN_IF_ERROR(checkBindings(plan, plan.inputs, TensorKind::kINPUT, "input", ioNames));
  KILN_RETURN_IF_ERROR(checkBindings(plan, plan.outputs, TensorKind::kOUTPUT, "output", ioNames));
  KILN_RETURN_IF_ERROR(checkSteps(plan));
  KILN_RETURN_IF_ERROR(checkProfiles(plan));
  KILN_RETURN_IF_ERROR(checkShapeValueInputs(plan));
  return validatePlanShapes(plan);
}

}  // namespace kiln::plan
