// GroupNormalization on the CPU, one tactic: "reference", row (sample and group) by row, linear
// tensors of fp32, fp16 or bf16 (X, Scale, B and Y of one type; fp16 and bf16 convert through
// backends/cpu/float_elements.h). The arithmetic, FP32 and two-pass whatever the storage, is
// group_normalization_semantics.h, which the CUDA kernels run too. The 16-bit types are taken
// here, as LayerNormalization's are, so that a half network keeps its bytes and the FP32
// statistics can be tested on the host.
#include <cstdint>
#include <string>

#include "backends/cpu/float_elements.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/group_normalization/group_normalization_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

namespace gn = ops::group_normalization;

using Geometry = gn::GroupGeometry;

template <DataType T>
void normalizeRows(const Geometry& g, const void* const* in, void* out) {
  using E = FloatElement<T>;
  using S = typename E::S;
  const auto* x = static_cast<const S*>(in[0]);
  const auto* scale = static_cast<const S*>(in[1]);
  const auto* bias = static_cast<const S*>(in[2]);
  auto* y = static_cast<S*>(out);
  for (int64_t r = 0; r < g.rows; ++r) {
    const S* xr = x + r * g.len;
    S* yr = y + r * g.len;
    gn::normalizeRow(
        g, r, [xr](int64_t j) { return E::toFloat(xr[j]); },
        [scale](int64_t c) { return E::toFloat(scale[c]); },
        [bias](int64_t c) { return E::toFloat(bias[c]); },
        [yr](int64_t j, float v) { yr[j] = E::fromFloat(v); });
  }
}

class GroupNormKernel final : public Kernel {
 public:
  GroupNormKernel(const Geometry& g, DataType type) : g_(g), type_(type) {}

  Status run(const void* const* in, void* const* out, void*) const override {
    switch (type_) {
      case DataType::kFLOAT:
        normalizeRows<DataType::kFLOAT>(g_, in, out[0]);
        break;
      case DataType::kHALF:
        normalizeRows<DataType::kHALF>(g_, in, out[0]);
        break;
      case DataType::kBF16:
        normalizeRows<DataType::kBF16>(g_, in, out[0]);
        break;
      default:  // refused when the kernel was made
        return internalError(std::string("group_normalization: unexpected type ") +
                             dataTypeName(type_));
    }
    return Status::ok();
  }

 private:
  Geometry g_;
  DataType type_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const auto* p = validate<GroupNormalizationParams>(c, "group_normalization", 3,
                                                     &ops::GroupNormalization::infer, whyNot);
  if (!p || !allLinear(c, "group_normalization", whyNot)) return nullptr;
  const DataType t = c.inputs[0].type;
  for (const auto& d : c.inputs)
    if (d.type != t) {
      setWhyNot(whyNot, std::string("group_normalization: Scale and B must have X's type (") +
                            dataTypeName(t) + "), got " + dataTypeName(d.type));
      return nullptr;
    }
  return std::make_unique<GroupNormKernel>(
      gn::groupGeometry(p->numGroups, p->epsilon, c.inputs[0].dims), t);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::GroupNormalization::cpuTactics() { return cpu::kTactics; }
