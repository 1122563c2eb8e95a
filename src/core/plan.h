// The plan file's content as a C++ structure. The builder fills one and writes it
// (src/builder/plan_writer.cpp); the runtime reads and validates one (src/runtime/plan_reader.cpp).
// Byte layout: DESIGN.md §3 and the comment at the top of plan_reader.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/layer_params.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln::plan {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'P', 'L', 'A', 'N'};
// 2: parameters encoded from the op field lists (kiln/ops/<op>.h).
// 3: Convolution's epilogue fields (residual, activation), Attention's zeroNanRows.
// 4: the profiles section (optimization profiles, named-dimension rules).
// 5: Shuffle's reshapeDimsOf (reshape dims taken from a second input). Plans of older versions
//    are refused.
// 6: shape-value inputs (the values an INT32/INT64 input was built for) in the I/O section.
// 7: the Range and Shape layers; Slice's outputDimsOf and beforeEnd, Expand's shapeDimsOf (dims
//    from a second input).
// 8: Slice's startFromEnd (x[-2:] over a dynamic axis).
// 9: Attention's head views (viewed, viewAxis, viewInner, viewSize, viewSlot, outputOrder,
//    outputMerged).
constexpr uint32_t kFormatVersion = 9;

enum class TensorKind : uint8_t {
  kINPUT = 0,
  kOUTPUT = 1,      // a network output (the caller's buffer)
  kACTIVATION = 2,  // lives in the context arena at arenaOffset
  kCONSTANT = 3,    // lives in weights[weightIndex], owned by the engine
};

struct Tensor {
  std::string name;
  Dims dims;
  DataType type = DataType::kFLOAT;
  TensorFormat format = TensorFormat::kLINEAR;
  TensorKind kind = TensorKind::kACTIVATION;
  int32_t weightIndex = -1;  // constants only
  uint64_t arenaOffset = 0;  // activations only
};

// One candidate the builder considered for a step, for `kiln inspect` and verbose logs.
struct Candidate {
  std::string name;      // tactic name, or a format/type combination for plugins
  double medianMs = -1;  // -1 when rejected
  std::string rejectedBecause;
};

struct Step {
  std::string layerName;
  LayerType type = LayerType::kCONSTANT;
  LayerParams params;  // monostate for plugins
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::string tactic;  // the CPU tactic name; "plugin" for plugin steps
  double medianMs = 0;
  uint64_t workspaceBytes = 0;
  int32_t pluginIndex = -1;  // plugin steps only
  std::vector<Candidate> candidates;
};

struct PluginRecord {
  std::string name;
  std::string version;
  std::string pluginNamespace;
  std::vector<uint8_t> data;  // what serialize() wrote
  std::string libraryName;    // "" when registered in code
  std::string libraryHash;
};

// One plan input's range in an optimization profile (inputs it does not list are fixed at their
// tensor's dims).
struct ProfileInput {
  int32_t tensor = -1;  // a plan input
  Dims min, opt, max;
};

// What a plan holds per optimization profile. The plan's tensors record dims at profile 0's opt
// and its steps profile 0's tactics; every shape inside a profile's box is re-derived from its
// inputs by the ops' shape rules when a context's input shapes are set.
struct Profile {
  std::vector<ProfileInput> inputs;
  std::vector<std::string> tactics;    // per step: chosen at opt, accepting min and max too
  std::vector<uint64_t> arenaOffsets;  // per tensor (activations), planned at max
  uint64_t arenaBytes = 0;
  uint64_t workspaceBytes = 0;  // the largest step's at the box's corners
};

// A shape-value input (ITensor::setShapeValues): the values the plan was built for, which the
// runtime reads from the caller's host memory and compares before every enqueue.
struct ShapeValueInput {
  int32_t tensor = -1;  // a plan input of type kINT32 or kINT64 with fixed dims
  std::vector<int64_t> values;
};

// Two input dims that must be equal at run time (they share an ONNX dim_param name).
struct DimEquality {
  int32_t tensorA = -1, axisA = -1, tensorB = -1, axisB = -1;
  std::string name;
};

struct Plan {
  std::string kilnVersion;
  std::string target;  // "cpu", "cuda:sm_90"
  std::vector<Tensor> tensors;
  std::vector<Step> steps;  // in execution order
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> weights;
  std::vector<PluginRecord> plugins;
  std::vector<int32_t> inputs;  // tensor indices, in binding order
  std::vector<int32_t> outputs;
  std::vector<ShapeValueInput> shapeValueInputs;
  uint64_t arenaBytes = 0;            // the context arena, as planned
  uint64_t naiveActivationBytes = 0;  // sum of all activation sizes (no reuse), for inspect
  uint64_t maxWorkspaceBytes = 0;     // the largest step workspace; one buffer per context
  // Empty for a plan without dynamic inputs.
  std::vector<Profile> profiles;
  std::vector<DimEquality> equalities;
};

// The shape-value input record of tensor `t`, or nullptr when it is none.
const ShapeValueInput* findShapeValueInput(const Plan& plan, int32_t t);

// Bytes a tensor occupies (all supported formats are dense); -1 if its dims are invalid.
int64_t tensorBytes(const Dims& dims, DataType type);

// Builder side: the plan as bytes.
Status writePlan(const Plan& plan, std::vector<uint8_t>& bytes);

// Runtime side: parses and validates everything (lengths, counts, enums, indices, sizes, offsets,
// checksum) before returning; never reads outside [data, data + size).
// `verifyChecksum` is false only for fuzzing the structural checks behind it.
Status readPlan(const void* data, size_t size, Plan& plan, bool verifyChecksum = true);

}  // namespace kiln::plan
