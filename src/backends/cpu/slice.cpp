// Slice on the CPU: output element j of axis i reads input element start[i] + j*step[i]. One
// tactic: "reference", for every data type (it moves elements). Inference has proved every read
// index inside the input, so the tables below are in range.
#include "backends/cpu/axis_map.h"
#include "backends/cpu/light_kernel_util.h"

namespace kiln::cpu {
namespace {

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(AxisMap map) : map_(std::move(map)) {}
  Status run(const void* const* in, void* const* out, void*) const override {
    map_.run(in[0], out[0]);
    return Status::ok();
  }

 private:
  AxisMap map_;
};

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  const SliceParams* p = light::validate<SliceParams>(c, "slice", 1, &inferSlice, whyNot);
  if (!p || !light::allLinear(c, "slice", whyNot)) return nullptr;
  const Dims& out = c.outputs[0].dims;
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(out.nbDims));
  for (int32_t i = 0; i < out.nbDims; ++i) {
    auto& t = tables[static_cast<size_t>(i)];
    t.resize(static_cast<size_t>(out.d[i]));
    for (int64_t j = 0; j < out.d[i]; ++j)
      t[static_cast<size_t>(j)] = p->starts.d[i] + j * p->steps.d[i];
  }
  return std::make_unique<SliceKernel>(
      AxisMap(c.inputs[0].dims, out, std::move(tables), dataTypeSize(c.inputs[0].type)));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace

std::span<const Tactic> sliceTactics() { return kTactics; }

}  // namespace kiln::cpu
