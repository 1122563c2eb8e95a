// Shuffle on the CPU (TensorRT's IShuffleLayer): first transpose, reshape, second transpose.
// One tactic: "reference". It moves bytes, so it serves every data type. A reshape moves no data
// in the linear format, so the work is at most two permuted copies: when both transposes really
// permute, the first goes to the workspace and the second reads it back.
#include <cstring>

#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

// One permuted copy: out dim i is in dim perm[i]. Dims are the input's, row-major.
struct Permute {
  Dims inDims;
  int32_t perm[Dims::kMaxDims] = {};
};

bool isIdentity(const int32_t* perm, int32_t rank) {
  for (int32_t i = 0; i < rank; ++i)
    if (perm[i] != i) return false;
  return true;
}

template <class T>
void permuteRows(const T* in, T* out, const Dims& outDims, const int64_t* inStrides) {
  const int32_t r = outDims.nbDims;
  const int64_t vol = volume(outDims);
  if (vol == 0) return;
  const int64_t n = outDims.d[r - 1];
  const int64_t s = inStrides[r - 1];
  int64_t coord[Dims::kMaxDims] = {};
  int64_t off = 0;
  for (int64_t row = 0; row < vol / n; ++row) {
    const T* src = in + off;
    for (int64_t i = 0; i < n; ++i) out[i] = src[i * s];
    out += n;
    for (int32_t k = r - 2; k >= 0; --k) {
      off += inStrides[k];
      if (++coord[k] < outDims.d[k]) break;
      off -= inStrides[k] * outDims.d[k];
      coord[k] = 0;
    }
  }
}

// Elements of 1, 2, 4 or 8 bytes, copied as unsigned integers of that width.
void permuteCopy(const Permute& p, size_t elemSize, const void* in, void* out) {
  const int32_t r = p.inDims.nbDims;
  int64_t own[Dims::kMaxDims] = {};
  rowMajorStrides(p.inDims, own);
  Dims outDims;
  outDims.nbDims = r;
  int64_t strides[Dims::kMaxDims] = {};
  for (int32_t i = 0; i < r; ++i) {
    outDims.d[i] = p.inDims.d[p.perm[i]];
    strides[i] = own[p.perm[i]];
  }
  switch (elemSize) {
    case 1:
      permuteRows(static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), outDims, strides);
      break;
    case 2:
      permuteRows(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(out), outDims, strides);
      break;
    case 4:
      permuteRows(static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out), outDims, strides);
      break;
    default:
      permuteRows(static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), outDims, strides);
      break;
  }
}

class ShuffleKernel final : public Kernel {
 public:
  ShuffleKernel(size_t elemSize, int64_t bytes, bool first, Permute p1, bool second, Permute p2)
      : elemSize_(elemSize), bytes_(bytes), first_(first), p1_(p1), second_(second), p2_(p2) {}

  size_t workspaceSize() const override {
    return first_ && second_ ? static_cast<size_t>(bytes_) : 0;
  }

  Status run(const void* const* in, void* const* out, void* workspace) const override {
    if (bytes_ == 0) return Status::ok();
    if (first_ && second_) {
      permuteCopy(p1_, elemSize_, in[0], workspace);
      permuteCopy(p2_, elemSize_, workspace, out[0]);
    } else if (first_) {
      permuteCopy(p1_, elemSize_, in[0], out[0]);
    } else if (second_) {
      permuteCopy(p2_, elemSize_, in[0], out[0]);
    } else if (in[0] != out[0]) {
      std::memcpy(out[0], in[0], static_cast<size_t>(bytes_));
    }
    return Status::ok();
  }

 private:
  size_t elemSize_;
  int64_t bytes_;
  bool first_;
  Permute p1_;
  bool second_;
  Permute p2_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ShuffleParams* p = validate<ShuffleParams>(c, "shuffle", 1, &ops::Shuffle::infer, whyNot);
  if (!p || !allLinear(c, "shuffle", whyNot)) return nullptr;
  const size_t elemSize = dataTypeSize(c.inputs[0].type);
  const Dims& inDims = c.inputs[0].dims;
  // Dims before the second transpose: the output dims permuted back. Inference has checked that
  // both permutations are valid for their ranks.
  Permute p1, p2;
  p1.inDims = inDims;
  const bool first = p->hasFirstTranspose && !isIdentity(p->firstTranspose, inDims.nbDims);
  if (first) std::memcpy(p1.perm, p->firstTranspose, sizeof p1.perm);
  const Dims& outDims = c.outputs[0].dims;
  const bool second = p->hasSecondTranspose && !isIdentity(p->secondTranspose, outDims.nbDims);
  if (second) {
    std::memcpy(p2.perm, p->secondTranspose, sizeof p2.perm);
    p2.inDims.nbDims = outDims.nbDims;
    for (int32_t i = 0; i < outDims.nbDims; ++i) p2.inDims.d[p2.perm[i]] = outDims.d[i];
  }
  const int64_t bytes = volume(inDims) * static_cast<int64_t>(elemSize);
  return std::make_unique<ShuffleKernel>(elemSize, bytes, first, p1, second, p2);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace

}  // namespace kiln::cpu

namespace kiln::ops {

std::span<const Tactic> Shuffle::cpuTactics() { return cpu::kTactics; }

}  // namespace kiln::ops
