// Trilu on the CPU, one tactic: "reference", for every data type (it keeps or zeroes elements,
// never computes with them; zero is the all-zero bit pattern in every type). Which elements it
// keeps is trilu_semantics.h, shared with the CUDA kernel.
#include <cstring>

#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/trilu/trilu_semantics.h"

namespace kiln::cpu {
namespace {

class TriluKernel final : public Kernel {
 public:
  // The input seen as `matrices` of [rows, cols] elements of `elemSize` bytes.
  TriluKernel(const TriluParams& p, int64_t matrices, int64_t rows, int64_t cols, size_t elemSize)
      : p_(p), matrices_(matrices), rows_(rows), cols_(cols), elemSize_(elemSize) {}

  Status run(const void* const* in, void* const* out, void*) const override {
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    for (int64_t m = 0; m < matrices_; ++m)
      for (int64_t i = 0; i < rows_; ++i)
        for (int64_t j = 0; j < cols_; ++j) {
          const size_t at = static_cast<size_t>((m * rows_ + i) * cols_ + j) * elemSize_;
          if (ops::trilu::keeps(p_.upper, p_.k, i, j))
            std::memcpy(y + at, x + at, elemSize_);
          else
            std::memset(y + at, 0, elemSize_);
        }
    return Status::ok();
  }

 private:
  TriluParams p_;
  int64_t matrices_, rows_, cols_;
  size_t elemSize_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const TriluParams* p = validate<TriluParams>(c, "trilu", 1, &ops::Trilu::infer, whyNot);
  if (!p || !allLinear(c, "trilu", whyNot)) return nullptr;
  const Dims& d = c.inputs[0].dims;
  const int64_t rows = d.d[d.nbDims - 2], cols = d.d[d.nbDims - 1];
  const int64_t matrices = rows * cols == 0 ? 0 : volume(d) / (rows * cols);
  return std::make_unique<TriluKernel>(*p, matrices, rows, cols, dataTypeSize(c.inputs[0].type));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Trilu::cpuTactics() { return cpu::kTactics; }
