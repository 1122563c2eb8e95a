// Reads and validates a plan file.
//
// Byte layout, format version 5. Everything is little-endian; integers are fixed width; enums
// are u32; bools are one byte, 0 or 1; floats are their IEEE bits (f32, f64); a string is a u32
// length and that many bytes (at most 64 KiB; 256 for the two header strings); dims are an i32
// rank in [0, 8] and that many i64.
//
//   "KILNPLAN"                 8 bytes of magic
//   u32     format version     8 (plan::kFormatVersion; older plans are refused: rebuild)
//   string  kiln version       printable ASCII
//   string  target            "cpu", "cuda:sm_90": non-empty printable ASCII
//   seven sections, each once and in this order: u32 tag, u64 length, `length` bytes
//     1 tensors   u32 count; per tensor: string name, dims, u32 DataType, u32 TensorFormat,
//                 u32 TensorKind, i32 weightIndex, u64 arenaOffset
//     2 steps     u32 count; per step: string layerName, u32 LayerType, parameters (below),
//                 u32 count + i32 tensor index per input, the same for outputs, string tactic,
//                 f64 medianMs, u64 workspaceBytes, i32 pluginIndex,
//                 u32 count + per candidate: string name, f64 medianMs, string rejectedBecause
//     3 weights   u32 count; per weight: u64 length + bytes
//     4 plugins   u32 count; per record: string name, string version, string namespace,
//                 u64 length + the plugin's serialize() bytes, string libraryName,
//                 string libraryHash
//     5 io        u32 count + i32 tensor index per input (binding order); the same for outputs
//     6 memory    u64 arenaBytes, u64 naiveActivationBytes, u64 maxWorkspaceBytes
//     7 profiles  u32 count + per named-dimension rule: i32 tensorA, i32 axisA, i32 tensorB,
//                 i32 axisB, string name; u32 count + per optimization profile: u32 count + per
//                 input: i32 tensor, dims min, dims opt, dims max; u32 count + string tactic per
//                 step; u32 count + u64 arena offset per tensor; u64 arenaBytes,
//                 u64 workspaceBytes. Both counts are 0 in a plan without dynamic inputs.
//   u64     CRC-64/XZ of every byte before it (core/checksum.h)
//
// Parameters of a step: the fields of its op's parameter struct, in the order of the struct's
// field list (the `fields` visitor in kiln/ops/<op>.h; core/param_fields.h encodes them): i32,
// u32, i64, f32 and bool as above, enums as u32, dims as above, arrays element by element.
// Constants and plugins have none.
//
// Order of checks: magic, format version (so a newer file gets "rebuild", not "corrupted"), the
// section frame (so a short file gets "truncated"), the checksum, then every field as it is read
// (counts against the bytes left before anything is allocated, enums, bools, ranks) and finally
// validatePlan (core/plan_validate.h): indices, sizes, offsets, data flow and shapes.
#include <cstring>
#include <string>

#include "core/byte_io.h"
#include "core/checksum.h"
#include "core/plan.h"
#include "core/plan_codec.h"
#include "core/version.h"
#include "runtime/plan_validate.h"

namespace kiln::plan {
namespace {

// Smallest encodings, to bound element counts by the bytes that remain.
constexpr size_t kMinTensorBytes = 4 + 4 + 4 + 4 + 4 + 4 + 8;
constexpr size_t kMinStepBytes = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 4;
constexpr size_t kMinCandidateBytes = 4 + 8 + 4;
constexpr size_t kMinWeightBytes = 8;
constexpr size_t kMinPluginBytes = 4 + 4 + 4 + 8 + 4 + 4;
constexpr size_t kIndexBytes = 4;

Status endOfSection(const ByteReader& r) {
  if (r.atEnd()) return Status::ok();
  return r.errorAt(r.offset(),
                   std::to_string(r.remaining()) + " unexpected bytes at the end of the section");
}

Status readIndexList(ByteReader& r, std::vector<int32_t>& list, const char* countField,
                     const char* field) {
  uint32_t n = 0;
  KILN_RETURN_IF_ERROR(r.count(n, kIndexBytes, countField));
  list.resize(n);
  for (int32_t& v : list) KILN_RETURN_IF_ERROR(r.i32(v, field));
  return Status::ok();
}

// A section's list: its count (refused unless every item could take minItemBytes), then each
// item, read by readItem with the reader's context naming it ("tensor 3").
template <class T, class ReadItem>
Status readItems(ByteReader& r, std::vector<T>& items, size_t minItemBytes, const char* countField,
                 const char* item, ReadItem&& readItem) {
  uint32_t n = 0;
  KILN_RETURN_IF_ERROR(r.count(n, minItemBytes, countField));
  items.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    r.setItem(item, i);
    KILN_RETURN_IF_ERROR(readItem(items[i]));
  }
  return Status::ok();
}

Status readTensors(ByteReader& r, Plan& plan) {
  KILN_RETURN_IF_ERROR(
      readItems(r, plan.tensors, kMinTensorBytes, "tensor count", "tensor", [&](Tensor& t) {
        KILN_RETURN_IF_ERROR(r.string(t.name, kMaxStringBytes, "name"));
        KILN_RETURN_IF_ERROR(readDims(r, t.dims, "dims"));
        KILN_RETURN_IF_ERROR(r.enumValue(t.type, kDataTypeCount, "data type"));
        KILN_RETURN_IF_ERROR(r.enumValue(t.format, kTensorFormatCount, "format"));
        KILN_RETURN_IF_ERROR(r.enumValue(t.kind, kTensorKindCount, "tensor kind"));
        KILN_RETURN_IF_ERROR(r.i32(t.weightIndex, "weight index"));
        return r.u64(t.arenaOffset, "arena offset");
      }));
  return endOfSection(r);
}

Status readCandidates(ByteReader& r, Step& s) {
  uint32_t n = 0;
  KILN_RETURN_IF_ERROR(r.count(n, kMinCandidateBytes, "candidate count"));
  s.candidates.resize(n);
  for (Candidate& c : s.candidates) {
    KILN_RETURN_IF_ERROR(r.string(c.name, kMaxStringBytes, "candidate name"));
    KILN_RETURN_IF_ERROR(r.f64(c.medianMs, "candidate time"));
    KILN_RETURN_IF_ERROR(r.string(c.rejectedBecause, kMaxStringBytes, "candidate rejection"));
  }
  return Status::ok();
}

Status readSteps(ByteReader& r, Plan& plan) {
  KILN_RETURN_IF_ERROR(readItems(r, plan.steps, kMinStepBytes, "step count", "step", [&](Step& s) {
    KILN_RETURN_IF_ERROR(r.string(s.layerName, kMaxStringBytes, "layer name"));
    KILN_RETURN_IF_ERROR(r.enumValue(s.type, kLayerTypeCount, "layer type"));
    KILN_RETURN_IF_ERROR(readLayerParams(r, s.type, s.params));
    KILN_RETURN_IF_ERROR(readIndexList(r, s.inputs, "input count", "input tensor index"));
    KILN_RETURN_IF_ERROR(readIndexList(r, s.outputs, "output count", "output tensor index"));
    KILN_RETURN_IF_ERROR(r.string(s.tactic, kMaxStringBytes, "tactic"));
    KILN_RETURN_IF_ERROR(r.f64(s.medianMs, "time"));
    KILN_RETURN_IF_ERROR(r.u64(s.workspaceBytes, "workspace size"));
    KILN_RETURN_IF_ERROR(r.i32(s.pluginIndex, "plugin index"));
    return readCandidates(r, s);
  }));
  return endOfSection(r);
}

Status readWeights(ByteReader& r, Plan& plan) {
  using Bytes = std::shared_ptr<const std::vector<uint8_t>>;
  KILN_RETURN_IF_ERROR(
      readItems(r, plan.weights, kMinWeightBytes, "weights count", "weights", [&](Bytes& w) {
        std::vector<uint8_t> bytes;
        KILN_RETURN_IF_ERROR(r.blob(bytes, "bytes"));
        w = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
        return Status::ok();
      }));
  return endOfSection(r);
}

Status readPlugins(ByteReader& r, Plan& plan) {
  KILN_RETURN_IF_ERROR(
      readItems(r, plan.plugins, kMinPluginBytes, "plugin record count", "plugin record",
                [&](PluginRecord& p) {
                  KILN_RETURN_IF_ERROR(r.string(p.name, kMaxStringBytes, "name"));
                  KILN_RETURN_IF_ERROR(r.string(p.version, kMaxStringBytes, "version"));
                  KILN_RETURN_IF_ERROR(r.string(p.pluginNamespace, kMaxStringBytes, "namespace"));
                  KILN_RETURN_IF_ERROR(r.blob(p.data, "serialized data"));
                  KILN_RETURN_IF_ERROR(r.string(p.libraryName, kMaxStringBytes, "library name"));
                  return r.string(p.libraryHash, kMaxStringBytes, "library hash");
                }));
  return endOfSection(r);
}

Status readIo(ByteReader& r, Plan& plan) {
  KILN_RETURN_IF_ERROR(readIndexList(r, plan.inputs, "input count", "input tensor index"));
  KILN_RETURN_IF_ERROR(readIndexList(r, plan.outputs, "output count", "output tensor index"));
  KILN_RETURN_IF_ERROR(readItems(r, plan.shapeValueInputs, 4 + 4, "shape-value input count",
                                 "shape-value input", [&](ShapeValueInput& in) {
                                   KILN_RETURN_IF_ERROR(r.i32(in.tensor, "tensor"));
                                   return readItems(
                                       r, in.values, 8, "shape value count", "shape value",
                                       [&](int64_t& v) { return r.i64(v, "shape value"); });
                                 }));
  return endOfSection(r);
}

Status readMemory(ByteReader& r, Plan& plan) {
  KILN_RETURN_IF_ERROR(r.u64(plan.arenaBytes, "arena size"));
  KILN_RETURN_IF_ERROR(r.u64(plan.naiveActivationBytes, "naive activation size"));
  KILN_RETURN_IF_ERROR(r.u64(plan.maxWorkspaceBytes, "workspace size"));
  return endOfSection(r);
}

Status readProfiles(ByteReader& r, Plan& plan) {
  KILN_RETURN_IF_ERROR(readItems(r, plan.equalities, 4 * 4 + 4, "dimension rule count",
                                 "dimension rule", [&](DimEquality& e) {
                                   KILN_RETURN_IF_ERROR(r.i32(e.tensorA, "tensor"));
                                   KILN_RETURN_IF_ERROR(r.i32(e.axisA, "axis"));
                                   KILN_RETURN_IF_ERROR(r.i32(e.tensorB, "tensor"));
                                   KILN_RETURN_IF_ERROR(r.i32(e.axisB, "axis"));
                                   return r.string(e.name, kMaxStringBytes, "name");
                                 }));
  KILN_RETURN_IF_ERROR(
      readItems(r, plan.profiles, 4 + 4 + 4 + 8 + 8, "profile count", "profile", [&](Profile& p) {
        KILN_RETURN_IF_ERROR(readItems(r, p.inputs, 4 + 3 * 4, "input count", "profile input",
                                       [&](ProfileInput& in) {
                                         KILN_RETURN_IF_ERROR(r.i32(in.tensor, "tensor"));
                                         KILN_RETURN_IF_ERROR(readDims(r, in.min, "min"));
                                         KILN_RETURN_IF_ERROR(readDims(r, in.opt, "opt"));
                                         return readDims(r, in.max, "max");
                                       }));
        KILN_RETURN_IF_ERROR(
            readItems(r, p.tactics, 4, "tactic count", "tactic",
                      [&](std::string& t) { return r.string(t, kMaxStringBytes, "tactic"); }));
        KILN_RETURN_IF_ERROR(readItems(r, p.arenaOffsets, 8, "offset count", "arena offset",
                                       [&](uint64_t& o) { return r.u64(o, "offset"); }));
        KILN_RETURN_IF_ERROR(r.u64(p.arenaBytes, "arena size"));
        return r.u64(p.workspaceBytes, "workspace size");
      }));
  return endOfSection(r);
}

using SectionParser = Status (*)(ByteReader&, Plan&);
constexpr SectionParser kParsers[kSectionCount] = {
    readTensors, readSteps, readWeights, readPlugins, readIo, readMemory, readProfiles};

// Splits the bytes after the header into the six sections, checking their tags, their order and
// that their lengths fit, and leaves `r` at the checksum.
Status readFrame(ByteReader& r, ByteReader (&sections)[kSectionCount]) {
  for (uint32_t k = 0; k < kSectionCount; ++k) {
    const uint32_t expected = k + 1;
    const size_t at = r.offset();
    r.setItem(nullptr, -1);
    r.setSection(nullptr);
    uint32_t tag = 0;
    uint64_t length = 0;
    KILN_RETURN_IF_ERROR(r.u32(tag, "a section tag"));
    if (tag == 0 || tag > kSectionCount)
      return r.errorAt(at, "unknown section tag " + std::to_string(tag) + " (format version " +
                               std::to_string(kFormatVersion) + " has tags 1 to " +
                               std::to_string(kSectionCount) + ")");
    if (tag != expected)
      return r.errorAt(at, std::string("section '") + sectionName(tag) + "' where section '" +
                               sectionName(expected) +
                               "' was expected (each section appears once, in order)");
    r.setSection(sectionName(tag));
    KILN_RETURN_IF_ERROR(r.u64(length, "the section length"));
    // The checksum follows the last section, so no section may reach into its 8 bytes.
    const size_t available = r.remaining() >= kChecksumBytes ? r.remaining() - kChecksumBytes : 0;
    if (length > available)
      return corruptData("truncated at byte " + std::to_string(r.offset() + r.remaining()) +
                         " while reading section '" + sectionName(tag) + "': it declares " +
                         std::to_string(length) + " bytes at byte " + std::to_string(at) +
                         " but only " + std::to_string(available) +
                         " follow before the 8-byte checksum");
    KILN_RETURN_IF_ERROR(r.sub(static_cast<size_t>(length), sections[k], "the section"));
  }
  r.setSection(nullptr);
  if (r.remaining() > kChecksumBytes)
    return r.errorAt(r.offset(), std::to_string(r.remaining() - kChecksumBytes) +
                                     " unexpected bytes after the last section");
  return Status::ok();
}

Status parse(const uint8_t* p, size_t size, Plan& plan, bool verifyChecksum) {
  ByteReader r(p, size);
  r.setSection("header");
  uint64_t magic = 0;  // checked by the caller
  KILN_RETURN_IF_ERROR(r.u64(magic, "the magic"));
  uint32_t version = 0;
  KILN_RETURN_IF_ERROR(r.u32(version, "the format version"));
  if (version < kFormatVersion)
    return unsupported("the plan was built by an older kiln (plan format version " +
                       std::to_string(version) + "; this kiln " + kilnVersion() +
                       " reads version " + std::to_string(kFormatVersion) +
                       "): rebuild the plan with this kiln");
  if (version != kFormatVersion)
    return unsupported("the plan has format version " + std::to_string(version) +
                       " but this kiln (" + kilnVersion() + ") reads format version " +
                       std::to_string(kFormatVersion) + ": rebuild the plan with this kiln");
  KILN_RETURN_IF_ERROR(r.string(plan.kilnVersion, kMaxHeaderStringBytes, "the kiln version"));
  KILN_RETURN_IF_ERROR(r.string(plan.target, kMaxHeaderStringBytes, "the target"));

  ByteReader sections[kSectionCount] = {{p, 0}, {p, 0}, {p, 0}, {p, 0}, {p, 0}, {p, 0}, {p, 0}};
  KILN_RETURN_IF_ERROR(readFrame(r, sections));

  uint64_t stored = 0;
  KILN_RETURN_IF_ERROR(r.u64(stored, "the checksum"));
  if (verifyChecksum) {
    const uint64_t computed = crc64(p, size - kChecksumBytes);
    if (stored != computed)
      return corruptData("corrupted: checksum mismatch (the file says " + std::to_string(stored) +
                         ", its bytes give " + std::to_string(computed) + ")");
  }

  for (uint32_t k = 0; k < kSectionCount; ++k) {
    sections[k].setSection(sectionName(k + 1));
    KILN_RETURN_IF_ERROR(kParsers[k](sections[k], plan));
  }
  return validatePlan(plan);
}

}  // namespace

Status readPlan(const void* data, size_t size, Plan& plan, bool verifyChecksum) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (size < kMagicBytes || p == nullptr || std::memcmp(p, kMagic, kMagicBytes) != 0) {
    if (p != nullptr && size < kMagicBytes && size > 0 && std::memcmp(p, kMagic, size) == 0)
      return corruptData("truncated at byte " + std::to_string(size) +
                         " while reading the magic: the plan file is corrupted or truncated; "
                         "rebuild it");
    return corruptData(
        "not a kiln plan: the data does not start with \"KILNPLAN\" (is it the right file?)");
  }
  Plan parsed;
  const Status s = parse(p, size, parsed, verifyChecksum);
  if (!s.isOk()) {
    if (s.code() != StatusCode::kCorruptData) return s;
    return corruptData("invalid kiln plan: " + s.message() +
                       ". The plan file is corrupted or truncated; rebuild it");
  }
  plan = std::move(parsed);
  return Status::ok();
}

}  // namespace kiln::plan
