// Pieces of the plan file's byte layout shared by the writer (builder) and the reader (runtime):
// section tags, size limits, and the field-by-field encoding of dims and layer parameters.
// The whole layout is described at the top of src/runtime/plan_reader.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/byte_io.h"
#include "core/layer_params.h"
#include "core/param_fields.h"
#include "kiln/status.h"

namespace kiln::plan {

// The format has exactly these sections, each once, in this order.
enum class SectionTag : uint32_t {
  kTENSORS = 1,
  kSTEPS = 2,
  kWEIGHTS = 3,
  kPLUGINS = 4,
  kIO = 5,
  kMEMORY = 6,
  kPROFILES = 7,
};
constexpr uint32_t kSectionCount = 7;
// "tensors", "steps", ...; "unknown" for other values.
const char* sectionName(uint32_t tag);

constexpr size_t kMagicBytes = 8;
constexpr size_t kChecksumBytes = 8;
constexpr size_t kSectionHeaderBytes = 4 + 8;  // u32 tag, u64 length
// Names, tactic names, messages, plugin metadata.
constexpr size_t kMaxStringBytes = 64 * 1024;
// The kiln version and the target string.
constexpr size_t kMaxHeaderStringBytes = 256;
// Activation offsets in the context arena are multiples of this (the memory planner's alignment).
constexpr uint64_t kArenaAlignment = 64;
// Arena and workspace sizes above this are refused as corrupt rather than attempted (256 TiB).
constexpr uint64_t kMaxMemoryBytes = uint64_t{1} << 48;

constexpr int32_t kTensorKindCount = 4;

// A name from the file for an error message: quoted, at most 80 characters, anything but
// printable ASCII shown as '?' (names are untrusted bytes).
std::string quotedName(const std::string& s);

// Dims: i32 nbDims in [0, 8], then nbDims i64 (core/param_fields.h).
using param_fields::readDims;
using param_fields::writeDims;

// Parameters, field by field in the order of their struct's field list (kiln/ops/<op>.h). Writing
// fails if the variant alternative does not match the type; reading checks every enum and bool.
Status writeLayerParams(ByteWriter& w, LayerType type, const LayerParams& params);
Status readLayerParams(ByteReader& r, LayerType type, LayerParams& params);

}  // namespace kiln::plan
