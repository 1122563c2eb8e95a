// Writes a Plan in the byte layout documented at the top of src/runtime/plan_reader.cpp.
#include "builder/plan_writer.h"

#include <limits>
#include <string>

#include "core/byte_io.h"
#include "core/checksum.h"
#include "core/plan_codec.h"
#include "runtime/plan_validate.h"

namespace kiln::plan {
namespace detail {
namespace {

// A list's length as a u32, refused when the list is too long for the plan format.
Status writeCount(ByteWriter& w, size_t n, const char* what) {
  if (n > std::numeric_limits<uint32_t>::max())
    return invalidArgument(std::string("writePlan: too many ") + what + " (" + std::to_string(n) +
                           ") for the plan format");
  w.u32(static_cast<uint32_t>(n));
  return Status::ok();
}

Status writeString(ByteWriter& w, const std::string& s, size_t maxBytes, const char* what) {
  if (s.size() > maxBytes)
    return invalidArgument(std::string("writePlan: ") + what + " is " + std::to_string(s.size()) +
                           " bytes long, the plan format allows " + std::to_string(maxBytes));
  w.string(s);
  return Status::ok();
}

Status writeIndexList(ByteWriter& w, const std::vector<int32_t>& list, const char* what) {
  KILN_RETURN_IF_ERROR(writeCount(w, list.size(), what));
  for (int32_t v : list) w.i32(v);
  return Status::ok();
}

Status writeTensors(ByteWriter& w, const Plan& plan) {
  KILN_RETURN_IF_ERROR(writeCount(w, plan.tensors.size(), "tensors"));
  for (const Tensor& t : plan.tensors) {
    KILN_RETURN_IF_ERROR(writeString(w, t.name, kMaxStringBytes, "a tensor name"));
    writeDims(w, t.dims);
    w.u32(static_cast<uint32_t>(t.type));
    w.u32(static_cast<uint32_t>(t.format));
    w.u32(static_cast<uint32_t>(t.kind));
    w.i32(t.weightIndex);
    w.u64(t.arenaOffset);
  }
  return Status::ok();
}

Status writeSteps(ByteWriter& w, const Plan& plan) {
  KILN_RETURN_IF_ERROR(writeCount(w, plan.steps.size(), "steps"));
  for (const Step& s : plan.steps) {
    KILN_RETURN_IF_ERROR(writeString(w, s.layerName, kMaxStringBytes, "a layer name"));
    w.u32(static_cast<uint32_t>(s.type));
    KILN_RETURN_IF_ERROR(
        writeLayerParams(w, s.type, s.params).withContext("writePlan: step '" + s.layerName + "'"));
    KILN_RETURN_IF_ERROR(writeIndexList(w, s.inputs, "step inputs"));
    KILN_RETURN_IF_ERROR(writeIndexList(w, s.outputs, "step outputs"));
    KILN_RETURN_IF_ERROR(writeString(w, s.tactic, kMaxStringBytes, "a tactic name"));
    w.f64(s.medianMs);
    w.u64(s.workspaceBytes);
    w.i32(s.pluginIndex);
    KILN_RETURN_IF_ERROR(writeCount(w, s.candidates.size(), "candidates"));
    for (const Candidate& c : s.candidates) {
      KILN_RETURN_IF_ERROR(writeString(w, c.name, kMaxStringBytes, "a candidate name"));
      w.f64(c.medianMs);
      KILN_RETURN_IF_ERROR(
          writeString(w, c.rejectedBecause, kMaxStringBytes, "a candidate's rejection"));
    }
  }
  return Status::ok();
}

Status writeWeights(ByteWriter& w, const Plan& plan) {
  KILN_RETURN_IF_ERROR(writeCount(w, plan.weights.size(), "weights"));
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    if (!plan.weights[i])
      return invalidArgument("writePlan: weights " + std::to_string(i) + " are null");
    w.blob(plan.weights[i]->data(), plan.weights[i]->size());
  }
  return Status::ok();
}

Status writePlugins(ByteWriter& w, const Plan& plan) {
  KILN_RETURN_IF_ERROR(writeCount(w, plan.plugins.size(), "plugin records"));
  for (const PluginRecord& p : plan.plugins) {
    KILN_RETURN_IF_ERROR(writeString(w, p.name, kMaxStringBytes, "a plugin name"));
    KILN_RETURN_IF_ERROR(writeString(w, p.version, kMaxStringBytes, "a plugin version"));
    KILN_RETURN_IF_ERROR(writeString(w, p.pluginNamespace, kMaxStringBytes, "a plugin namespace"));
    w.blob(p.data.data(), p.data.size());
    KILN_RETURN_IF_ERROR(writeString(w, p.libraryName, kMaxStringBytes, "a plugin library name"));
    KILN_RETURN_IF_ERROR(writeString(w, p.libraryHash, kMaxStringBytes, "a plugin library hash"));
  }
  return Status::ok();
}

Status writeIo(ByteWriter& w, const Plan& plan) {
  KILN_RETURN_IF_ERROR(writeIndexList(w, plan.inputs, "inputs"));
  KILN_RETURN_IF_ERROR(writeIndexList(w, plan.outputs, "outputs"));
  KILN_RETURN_IF_ERROR(writeCount(w, plan.shapeValueInputs.size(), "shape-value inputs"));
  for (const ShapeValueInput& in : plan.shapeValueInputs) {
    w.i32(in.tensor);
    KILN_RETURN_IF_ERROR(writeCount(w, in.values.size(), "shape values"));
    for (int64_t v : in.values) w.i64(v);
  }
  return Status::ok();
}

Status writeMemory(ByteWriter& w, const Plan& plan) {
  w.u64(plan.arenaBytes);
  w.u64(plan.naiveActivationBytes);
  w.u64(plan.maxWorkspaceBytes);
  return Status::ok();
}

Status writeProfiles(ByteWriter& w, const Plan& plan) {
  KILN_RETURN_IF_ERROR(writeCount(w, plan.equalities.size(), "dimension rules"));
  for (const DimEquality& e : plan.equalities) {
    w.i32(e.tensorA);
    w.i32(e.axisA);
    w.i32(e.tensorB);
    w.i32(e.axisB);
    KILN_RETURN_IF_ERROR(writeString(w, e.name, kMaxStringBytes, "a dimension name"));
  }
  KILN_RETURN_IF_ERROR(writeCount(w, plan.profiles.size(), "profiles"));
  for (const Profile& p : plan.profiles) {
    KILN_RETURN_IF_ERROR(writeCount(w, p.inputs.size(), "profile inputs"));
    for (const ProfileInput& in : p.inputs) {
      w.i32(in.tensor);
      writeDims(w, in.min);
      writeDims(w, in.opt);
      writeDims(w, in.max);
    }
    KILN_RETURN_IF_ERROR(writeCount(w, p.tactics.size(), "profile tactics"));
    for (const std::string& t : p.tactics)
      KILN_RETURN_IF_ERROR(writeString(w, t, kMaxStringBytes, "a tactic name"));
    KILN_RETURN_IF_ERROR(writeCount(w, p.arenaOffsets.size(), "profile arena offsets"));
    for (uint64_t o : p.arenaOffsets) w.u64(o);
    w.u64(p.arenaBytes);
    w.u64(p.workspaceBytes);
  }
  return Status::ok();
}

template <typename F>
Status section(ByteWriter& w, SectionTag tag, const Plan& plan, F&& body) {
  const size_t start = w.beginSection(static_cast<uint32_t>(tag));
  KILN_RETURN_IF_ERROR(body(w, plan));
  w.endSection(start);
  return Status::ok();
}

}  // namespace

Status writePlanUnvalidated(const Plan& plan, std::vector<uint8_t>& bytes) {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.raw(kMagic, sizeof(kMagic));
  w.u32(kFormatVersion);
  KILN_RETURN_IF_ERROR(writeString(w, plan.kilnVersion, kMaxHeaderStringBytes, "the kiln version"));
  KILN_RETURN_IF_ERROR(writeString(w, plan.target, kMaxHeaderStringBytes, "the target"));
  KILN_RETURN_IF_ERROR(section(w, SectionTag::kTENSORS, plan, writeTensors));
  KILN_RETURN_IF_ERROR(section(w, SectionTag::kSTEPS, plan, writeSteps));
  KILN_RETURN_IF_ERROR(section(w, SectionTag::kWEIGHTS, plan, writeWeights));
  KILN_RETURN_IF_ERROR(section(w, SectionTag::kPLUGINS, plan, writePlugins));
  KILN_RETURN_IF_ERROR(section(w, SectionTag::kIO, plan, writeIo));
  KILN_RETURN_IF_ERROR(section(w, SectionTag::kMEMORY, plan, writeMemory));
  KILN_RETURN_IF_ERROR(section(w, SectionTag::kPROFILES, plan, writeProfiles));
  w.u64(crc64(out.data(), out.size()));
  bytes = std::move(out);
  return Status::ok();
}

}  // namespace detail

Status writePlan(const Plan& plan, std::vector<uint8_t>& bytes) {
  // A plan the reader would refuse is a builder bug: catch it here, where it is made.
  const Status valid = validatePlan(plan);
  if (!valid.isOk())
    return internalError("writePlan: the builder made an invalid plan: " + valid.message());
  return detail::writePlanUnvalidated(plan, bytes);
}

}  // namespace kiln::plan
