// Shuffle on the CPU (TensorRT's IShuffleLayer): first transpose, reshape, second transpose.
// One tactic: "reference". It moves bytes, so it serves every data type. Which copies it makes, and
// the index mapping of each, is shuffle_semantics.h (shared with the CUDA kernel).
#include <cstring>

#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/shuffle/shuffle_semantics.h"

namespace kiln::cpu {
namespace {

// One permuted copy (ops::shuffle::Permutation): the output row by row, strided reads.
template <class T>
void permuteRows(const T* in, T* out, const ops::shuffle::Permutation& p) {
  const int32_t r = p.rank;
  int64_t vol = 1;
  for (int32_t i = 0; i < r; ++i) vol *= p.outDims[i];
  if (vol == 0) return;
  const int64_t n = p.outDims[r - 1];
  const int64_t s = p.inStrides[r - 1];
  int64_t coord[Dims::kMaxDims] = {};
  int64_t off = 0;
  for (int64_t row = 0; row < vol / n; ++row) {
    const T* src = in + off;
    for (int64_t i = 0; i < n; ++i) out[i] = src[i * s];
    out += n;
    for (int32_t k = r - 2; k >= 0; --k) {
      off += p.inStrides[k];
      if (++coord[k] < p.outDims[k]) break;
      off -= p.inStrides[k] * p.outDims[k];
      coord[k] = 0;
    }
  }
}

// Elements of 1, 2, 4 or 8 bytes, copied as unsigned integers of that width.
void permuteCopy(const ops::shuffle::Permutation& p, size_t elemSize, const void* in, void* out) {
  switch (elemSize) {
    case 1:
      permuteRows(static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), p);
      break;
    case 2:
      permuteRows(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(out), p);
      break;
    case 4:
      permuteRows(static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out), p);
      break;
    default:
      permuteRows(static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), p);
      break;
  }
}

class ShuffleKernel final : public Kernel {
 public:
  explicit ShuffleKernel(const ops::shuffle::Plan& plan) : s_(plan) {}

  size_t workspaceSize() const override { return static_cast<size_t>(s_.workspaceBytes()); }

  Status run(const void* const* in, void* const* out, void* workspace) const override {
    if (s_.bytes == 0) return Status::ok();
    const auto e = static_cast<size_t>(s_.elemSize);
    if (s_.first && s_.second) {
      permuteCopy(s_.p1, e, in[0], workspace);
      permuteCopy(s_.p2, e, workspace, out[0]);
    } else if (s_.first) {
      permuteCopy(s_.p1, e, in[0], out[0]);
    } else if (s_.second) {
      permuteCopy(s_.p2, e, in[0], out[0]);
    } else if (in[0] != out[0]) {
      std::memcpy(out[0], in[0], static_cast<size_t>(s_.bytes));
    }
    return Status::ok();
  }

 private:
  ops::shuffle::Plan s_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ShuffleParams* p = validate<ShuffleParams>(c, "shuffle", -1, &ops::Shuffle::infer, whyNot);
  if (!p || !allLinear(c, "shuffle", whyNot)) return nullptr;
  return std::make_unique<ShuffleKernel>(
      ops::shuffle::plan(*p, c.inputs[0].dims, c.outputs[0].dims, dataTypeSize(c.inputs[0].type)));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Shuffle::cpuTactics() { return cpu::kTactics; }
