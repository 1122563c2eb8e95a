// Elementwise binary ops on the CPU. Three tactics, fastest first:
//   same_shape       both inputs have the output's volume: no broadcasting, one tight loop
//   scalar_broadcast one input has volume 1 and the other the output's volume
//   reference        numpy broadcasting by index arithmetic, any rank <= 8
// All three apply the same scalar function, so they agree bit for bit, and it is the one the
// CUDA kernels apply too: elementwise_semantics.h holds the rules (max/min propagate NaN, integer
// add/sub/mul wrap, integer x / 0 is 0 and MIN / -1 wraps, comparisons write bool and are false on
// NaN, equal on bool, prelu and pow on fp32 only). This backend takes fp32, int32 and int64 (and
// bool for equal).
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>

#include "backends/cpu/tactic_checks.h"
#include "core/element_types.h"
#include "ops/elementwise/elementwise_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

using ops::elementwise::apply;
using ops::elementwise::OutputOf;

// The loops for one (type, op). Pointers are untyped so that kernels need not be templates.
struct BinaryLoops {
  void (*same)(const void* a, const void* b, void* out, int64_t n);
  void (*scalarA)(const void* a, const void* b, void* out, int64_t n);  // a[0] op b[i]
  void (*scalarB)(const void* a, const void* b, void* out, int64_t n);  // a[i] op b[0]
  // out[i] = a[i * sa] op b[i * sb], strides in elements.
  void (*strided)(const void* a, int64_t sa, const void* b, int64_t sb, void* out, int64_t n);
};

template <class T, ElementwiseOp kOp>
struct Loops {
  using O = OutputOf<kOp, T>;
  static void same(const void* a, const void* b, void* out, int64_t n) {
    const T* pa = static_cast<const T*>(a);
    const T* pb = static_cast<const T*>(b);
    O* po = static_cast<O*>(out);
    for (int64_t i = 0; i < n; ++i) po[i] = apply<kOp>(pa[i], pb[i]);
  }
  static void scalarA(const void* a, const void* b, void* out, int64_t n) {
    const T s = *static_cast<const T*>(a);
    const T* pb = static_cast<const T*>(b);
    O* po = static_cast<O*>(out);
    for (int64_t i = 0; i < n; ++i) po[i] = apply<kOp>(s, pb[i]);
  }
  static void scalarB(const void* a, const void* b, void* out, int64_t n) {
    const T* pa = static_cast<const T*>(a);
    const T s = *static_cast<const T*>(b);
    O* po = static_cast<O*>(out);
    for (int64_t i = 0; i < n; ++i) po[i] = apply<kOp>(pa[i], s);
  }
  static void strided(const void* a, int64_t sa, const void* b, int64_t sb, void* out, int64_t n) {
    const T* pa = static_cast<const T*>(a);
    const T* pb = static_cast<const T*>(b);
    O* po = static_cast<O*>(out);
    for (int64_t i = 0; i < n; ++i) po[i] = apply<kOp>(pa[i * sa], pb[i * sb]);
  }
  static constexpr BinaryLoops kLoops{&same, &scalarA, &scalarB, &strided};
};

// The loops of op kOp on T, or nullptr where the op is not defined on T: bool has equal only,
// pow and prelu need a floating-point T, mod an integer one.
template <class T, ElementwiseOp kOp>
constexpr const BinaryLoops* loopsIfDefined() {
  constexpr bool kBool = std::is_same_v<T, uint8_t>;
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kDefined =
      kFloat ? !ops::elementwise::isIntegerOnly(kOp) : !ops::elementwise::isFloatOnly(kOp);
  if constexpr (kBool ? ops::elementwise::isDefinedOnBool(kOp)
                      : kDefined && !ops::elementwise::isLogical(kOp))
    return &Loops<T, kOp>::kLoops;
  else
    return nullptr;
}

// Every op's loops on T, indexed by the op's value.
template <class T, int... kOps>
constexpr std::array<const BinaryLoops*, sizeof...(kOps)> loopTable(
    std::integer_sequence<int, kOps...>) {
  return {loopsIfDefined<T, static_cast<ElementwiseOp>(kOps)>()...};
}

template <class T>
const BinaryLoops* loopsForOp(ElementwiseOp op) {
  static constexpr auto kTable =
      loopTable<T>(std::make_integer_sequence<int, enumCount(ElementwiseOp{})>());
  const auto i = static_cast<size_t>(op);
  return i < kTable.size() ? kTable[i] : nullptr;
}

// What every elementwise tactic checks: a consistent configuration the backend has loops for.
struct Checked {
  const ElementwiseParams* params = nullptr;
  const BinaryLoops* loops = nullptr;
  size_t elemSize = 0;     // of the inputs
  size_t outElemSize = 0;  // of the output (1 for comparisons)
  int64_t volA = 0, volB = 0, volOut = 0;
};

bool check(const KernelConfig& c, std::string* whyNot, Checked* out) {
  out->params = validate<ElementwiseParams>(c, "elementwise", 2, &ops::Elementwise::infer, whyNot);
  if (!out->params || !allLinear(c, "elementwise", whyNot)) return false;
  const DataType t = c.inputs[0].type;
  using CpuTypes =
      ElementTypes<Stored<DataType::kFLOAT, float>, Stored<DataType::kINT32, int32_t>,
                   Stored<DataType::kINT64, int64_t>, Stored<DataType::kBOOL, uint8_t>>;
  if (!CpuTypes::dispatch(
          t, [&](auto tag) { out->loops = loopsForOp<decltype(tag)>(out->params->op); })) {
    setWhyNot(whyNot, std::string("elementwise: the CPU backend supports fp32, int32, "
                                  "int64 (and bool for equal and the logical ops), got ") +
                          dataTypeName(t));
    return false;
  }
  if (!out->loops) {
    setWhyNot(whyNot, std::string("elementwise: ") + ops::elementwise::opName(out->params->op) +
                          " is not defined on " + dataTypeName(t));
    return false;
  }
  out->elemSize = dataTypeSize(t);
  out->outElemSize = dataTypeSize(c.outputs[0].type);
  out->volA = volume(c.inputs[0].dims);
  out->volB = volume(c.inputs[1].dims);
  out->volOut = volume(c.outputs[0].dims);
  return true;
}

class SameShapeKernel final : public Kernel {
 public:
  SameShapeKernel(const BinaryLoops* loops, int64_t n) : loops_(loops), n_(n) {}
  Status run(const void* const* in, void* const* out, void*) const override {
    loops_->same(in[0], in[1], out[0], n_);
    return Status::ok();
  }

 private:
  const BinaryLoops* loops_;
  int64_t n_;
};

KernelPtr createSameShape(const KernelConfig& c, std::string* whyNot) {
  Checked k;
  if (!check(c, whyNot, &k)) return nullptr;
  if (k.volA != k.volOut || k.volB != k.volOut) {
    setWhyNot(whyNot, "same_shape: the inputs broadcast (" + dimsString(c.inputs[0].dims) +
                          " and " + dimsString(c.inputs[1].dims) + ")");
    return nullptr;
  }
  return std::make_unique<SameShapeKernel>(k.loops, k.volOut);
}

class ScalarKernel final : public Kernel {
 public:
  ScalarKernel(const BinaryLoops* loops, bool scalarIsA, int64_t n)
      : loops_(loops), scalarIsA_(scalarIsA), n_(n) {}
  Status run(const void* const* in, void* const* out, void*) const override {
    if (n_ == 0) return Status::ok();
    (scalarIsA_ ? loops_->scalarA : loops_->scalarB)(in[0], in[1], out[0], n_);
    return Status::ok();
  }

 private:
  const BinaryLoops* loops_;
  bool scalarIsA_;
  int64_t n_;
};

KernelPtr createScalar(const KernelConfig& c, std::string* whyNot) {
  Checked k;
  if (!check(c, whyNot, &k)) return nullptr;
  // The other input must not be broadcast itself; then its memory order is the output's.
  if (k.volA == 1 && k.volB == k.volOut)
    return std::make_unique<ScalarKernel>(k.loops, true, k.volOut);
  if (k.volB == 1 && k.volA == k.volOut)
    return std::make_unique<ScalarKernel>(k.loops, false, k.volOut);
  setWhyNot(whyNot,
            "scalar_broadcast: neither input is a single value broadcast over the "
            "other (" +
                dimsString(c.inputs[0].dims) + " and " + dimsString(c.inputs[1].dims) + ")");
  return nullptr;
}

class ReferenceKernel final : public Kernel {
 public:
  ReferenceKernel(const Checked& k, const Dims& a, const Dims& b, const Dims& out)
      : loops_(k.loops), elemSize_(k.elemSize), outElemSize_(k.outElemSize), out_(out) {
    // Input strides aligned to the output's dims; 0 where the input is broadcast.
    stridesFor(a, strideA_);
    stridesFor(b, strideB_);
  }

  Status run(const void* const* in, void* const* out, void*) const override {
    const int32_t r = out_.nbDims;
    const int64_t vol = volume(out_);
    if (vol == 0) return Status::ok();
    const auto* a = static_cast<const uint8_t*>(in[0]);
    const auto* b = static_cast<const uint8_t*>(in[1]);
    auto* o = static_cast<uint8_t*>(out[0]);
    if (r == 0) {
      loops_->strided(a, 0, b, 0, o, 1);
      return Status::ok();
    }
    const int64_t n = out_.d[r - 1];
    const int64_t rows = vol / n;
    int64_t coord[Dims::kMaxDims] = {};
    int64_t offA = 0, offB = 0;  // in elements
    for (int64_t row = 0; row < rows; ++row) {
      loops_->strided(a + offA * elemSize_, strideA_[r - 1], b + offB * elemSize_, strideB_[r - 1],
                      o + row * n * outElemSize_, n);
      // Advance the odometer over all dims but the last.
      for (int32_t k = r - 2; k >= 0; --k) {
        offA += strideA_[k];
        offB += strideB_[k];
        if (++coord[k] < out_.d[k]) break;
        offA -= strideA_[k] * out_.d[k];
        offB -= strideB_[k] * out_.d[k];
        coord[k] = 0;
      }
    }
    return Status::ok();
  }

 private:
  void stridesFor(const Dims& d, int64_t* strides) const {
    int64_t own[Dims::kMaxDims] = {};
    rowMajorStrides(d, own);
    ops::elementwise::broadcastStrides(d, own, out_.nbDims, strides);
  }

  const BinaryLoops* loops_;
  size_t elemSize_;
  size_t outElemSize_;
  Dims out_;
  int64_t strideA_[Dims::kMaxDims] = {};
  int64_t strideB_[Dims::kMaxDims] = {};
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  Checked k;
  if (!check(c, whyNot, &k)) return nullptr;
  return std::make_unique<ReferenceKernel>(k, c.inputs[0].dims, c.inputs[1].dims,
                                           c.outputs[0].dims);
}

constexpr Tactic kTactics[] = {{"same_shape", &createSameShape},
                               {"scalar_broadcast", &createScalar},
                               {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Elementwise::cpuTactics() { return cpu::kTactics; }
