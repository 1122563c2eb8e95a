// Padding on the CPU (ONNX Pad), one tactic: "reference", for every data type. Modes: constant
// (the value converted to the tensor's type), reflect (mirror without repeating the edge, as
// numpy's "reflect") and edge (repeat the border element).
#include <cmath>
#include <limits>

#include "backends/cpu/axis_map.h"
#include "backends/cpu/tactic_checks.h"
#include "kiln/float16.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

// An integer cast that saturates (and maps NaN to 0) instead of overflowing.
template <class I>
I saturate(float v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<float>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<float>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);  // truncates toward zero, as a C cast does
}

// The constant value in the tensor's type, as the low bytes of a uint64.
uint64_t fillBits(float value, DataType type) {
  uint64_t bits = 0;
  auto put = [&](auto v) { std::memcpy(&bits, &v, sizeof v); };
  switch (type) {
    case DataType::kFLOAT:
      put(value);
      break;
    case DataType::kHALF:
      put(floatToHalf(value));
      break;
    case DataType::kBF16:
      put(floatToBf16(value));
      break;
    case DataType::kINT8:
      put(saturate<int8_t>(value));
      break;
    case DataType::kINT32:
      put(saturate<int32_t>(value));
      break;
    case DataType::kINT64:
      put(saturate<int64_t>(value));
      break;
    case DataType::kBOOL:
      put(static_cast<uint8_t>(value != 0.f));
      break;
  }
  return bits;
}

// Input index for output coordinate j of an axis with `before` pads and n input elements.
int64_t source(PaddingMode mode, int64_t j, int64_t before, int64_t n) {
  int64_t i = j - before;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PaddingMode::kREFLECT:  // inference keeps the pads below n, so one reflection lands inside
      return i < 0 ? -i : 2 * (n - 1) - i;
    case PaddingMode::kEDGE:
      return i < 0 ? 0 : n - 1;
    default:
      return -1;
  }
}

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const PaddingParams* p = validate<PaddingParams>(c, "padding", 1, &ops::Padding::infer, whyNot);
  if (!p || !allLinear(c, "padding", whyNot)) return nullptr;
  const Dims& in = c.inputs[0].dims;
  const Dims& out = c.outputs[0].dims;
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(out.nbDims));
  for (int32_t i = 0; i < out.nbDims; ++i) {
    auto& t = tables[static_cast<size_t>(i)];
    t.resize(static_cast<size_t>(out.d[i]));
    for (int64_t j = 0; j < out.d[i]; ++j)
      t[static_cast<size_t>(j)] = source(p->mode, j, p->before[i], in.d[i]);
  }
  const DataType type = c.inputs[0].type;
  return std::make_unique<AxisMapKernel>(
      AxisMap(in, out, std::move(tables), dataTypeSize(type), fillBits(p->value, type)));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace

}  // namespace kiln::cpu

namespace kiln::ops {

std::span<const Tactic> Padding::cpuTactics() { return cpu::kTactics; }

}  // namespace kiln::ops
