// Elementwise binary ops and activations on CUDA: per-element functions (emulatable on the host).
//
// Elementwise tactics, fastest first:
//   same_shape       both inputs have the output's dims and memory layout: out[i] = a[i] op b[i]
//   scalar_broadcast one input holds one value, the other has the output's dims and layout
//   reference        numpy broadcasting at any rank <= 8 through per-dim memory strides, so any
//                    mix of linear and channels-last inputs/output
// Activation: one tactic, "reference": input and output in the same layout, flat index.
//
// Value rules are the CPU backend's (backends/cpu/elementwise.cpp, activation.cpp):
//   float types (fp32/fp16/bf16) compute in fp32 and round once on store; max/min propagate NaN;
//   comparisons write bool bytes and are false on NaN; prelu is a < 0 ? a * b : a.
//   int32/int64: add/sub/mul wrap (two's complement), div truncates, x / 0 is 0, MIN / -1 wraps;
//   pow and prelu have no integer form. bool: equal only (non-zero is true).
//   Activations: every type on float; neg/abs on int32/int64 (wrapping); not on bool.
// The op is a kernel argument (a warp-uniform switch), not a template parameter: it keeps the
// number of instantiated kernels (and the build time) small at no measurable cost for
// memory-bound kernels.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/elements.cuh"
#include "backends/cuda/math_common.h"
#include "ops/op.h"

namespace kiln::cuda::math {
namespace {

__host__ __device__ inline float binaryFloat(ElementwiseOp op, float a, float b) {
  switch (op) {
    case ElementwiseOp::kADD:
      return a + b;
    case ElementwiseOp::kSUB:
      return a - b;
    case ElementwiseOp::kMUL:
      return a * b;
    case ElementwiseOp::kDIV:
      return a / b;
    case ElementwiseOp::kMAX:
      return (a > b || a != a) ? a : b;  // a NaN in either input wins
    case ElementwiseOp::kMIN:
      return (a < b || a != a) ? a : b;
    case ElementwiseOp::kPOW:
      return powf(a, b);
    case ElementwiseOp::kPRELU:
      return a < 0.f ? a * b : a;
    default:
      return 0.f;
  }
}

template <class I>
__host__ __device__ inline I binaryInt(ElementwiseOp op, I a, I b) {
  using U = std::make_unsigned_t<I>;
  switch (op) {
    case ElementwiseOp::kADD:
      return static_cast<I>(static_cast<U>(a) + static_cast<U>(b));
    case ElementwiseOp::kSUB:
      return static_cast<I>(static_cast<U>(a) - static_cast<U>(b));
    case ElementwiseOp::kMUL:
      return static_cast<I>(static_cast<U>(a) * static_cast<U>(b));
    case ElementwiseOp::kDIV:
      if (b == 0) return 0;
      if (b == -1) return static_cast<I>(U{0} - static_cast<U>(a));  // -MIN wraps to MIN
      return a / b;
    case ElementwiseOp::kMAX:
      return a > b ? a : b;
    case ElementwiseOp::kMIN:
      return a < b ? a : b;
    default:
      return 0;
  }
}

template <class C>
__host__ __device__ inline uint8_t compare(ElementwiseOp op, C a, C b) {
  switch (op) {
    case ElementwiseOp::kEQUAL:
      return a == b ? 1 : 0;
    case ElementwiseOp::kLESS:
      return a < b ? 1 : 0;
    default:
      return a > b ? 1 : 0;
  }
}

// out[at] = a op b for storage type T (uint8_t: bool).
template <class T>
__host__ __device__ inline void applyBinary(ElementwiseOp op, bool cmp, T a, T b, void* out,
                                            int64_t at) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    static_cast<uint8_t*>(out)[at] = (a != 0) == (b != 0) ? 1 : 0;  // equal is all bool has
  } else if constexpr (std::is_integral_v<T>) {
    if (cmp)
      static_cast<uint8_t*>(out)[at] = compare<T>(op, a, b);
    else
      static_cast<T*>(out)[at] = binaryInt<T>(op, a, b);
  } else {
    const float x = toFloat(a), y = toFloat(b);
    if (cmp)
      static_cast<uint8_t*>(out)[at] = compare<float>(op, x, y);
    else
      static_cast<T*>(out)[at] = fromFloat<T>(binaryFloat(op, x, y));
  }
}

// out[i] = a[i * sa] op b[i * sb], sa and sb in {0, 1}: same_shape and scalar_broadcast.
template <class T>
struct FlatBinary {
  const T* a;
  const T* b;
  void* out;
  int64_t sa, sb;
  ElementwiseOp op;
  bool cmp;
  __host__ __device__ void operator()(int64_t i) const {
    applyBinary<T>(op, cmp, a[i * sa], b[i * sb], out, i);
  }
};

// numpy broadcasting: the output's logical index i is split into coordinates, each input and
// the output are addressed through per-dim memory strides (0 where an input is broadcast).
struct BroadcastGeometry {
  int32_t rank = 0;
  int64_t dims[Dims::kMaxDims] = {};
  int64_t sa[Dims::kMaxDims] = {}, sb[Dims::kMaxDims] = {}, so[Dims::kMaxDims] = {};
};

template <class T>
struct BroadcastBinary {
  const T* a;
  const T* b;
  void* out;
  BroadcastGeometry g;
  ElementwiseOp op;
  bool cmp;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t oa = 0, ob = 0, oo = 0, rem = i;
#pragma unroll
    for (int32_t k = Dims::kMaxDims - 1; k >= 0; --k) {
      if (k < g.rank) {
        const int64_t c = rem % g.dims[k];
        rem /= g.dims[k];
        oa += c * g.sa[k];
        ob += c * g.sb[k];
        oo += c * g.so[k];
      }
    }
    applyBinary<T>(op, cmp, a[oa], b[ob], out, oo);
  }
};

// Calls f(T{}) for the storage type of an elementwise input type; false if none.
template <class F>
bool dispatchElementwise(DataType t, F&& f) {
  switch (t) {
    case DataType::kINT32:
      f(int32_t{});
      return true;
    case DataType::kINT64:
      f(int64_t{});
      return true;
    case DataType::kBOOL:
      f(uint8_t{});
      return true;
    default:
      return dispatchFloat(t, f);
  }
}

constexpr bool isComparison(ElementwiseOp op) {
  return op == ElementwiseOp::kEQUAL || op == ElementwiseOp::kLESS || op == ElementwiseOp::kGREATER;
}

// What every elementwise tactic checks.
const ElementwiseParams* checkElementwise(const KernelConfig& c, std::string* whyNot) {
  const ElementwiseParams* p =
      validate<ElementwiseParams>(c, "elementwise", 2, &ops::Elementwise::infer, whyNot);
  if (!p) return nullptr;
  const DataType t = c.inputs[0].type;
  const bool isInt = t == DataType::kINT32 || t == DataType::kINT64;
  if (!isFloatType(t) && !isInt && t != DataType::kBOOL) {
    setWhyNot(whyNot, std::string("elementwise: the CUDA kernels support fp32, fp16, bf16, int32, "
                                  "int64 (and bool for equal), got ") +
                          dataTypeName(t));
    return nullptr;
  }
  if (isInt && (p->op == ElementwiseOp::kPOW || p->op == ElementwiseOp::kPRELU)) {
    setWhyNot(whyNot, std::string("elementwise: ") +
                          (p->op == ElementwiseOp::kPOW ? "pow" : "prelu") + " is not defined on " +
                          dataTypeName(t));
    return nullptr;
  }
  return p;  // bool: inference already allows only equal
}

class FlatKernel final : public Kernel {
 public:
  FlatKernel(DataType type, ElementwiseOp op, int64_t count, int64_t sa, int64_t sb)
      : type_(type), op_(op), count_(count), sa_(sa), sb_(sb) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = Status::ok();
    dispatchElementwise(type_, [&](auto tag) {
      using T = decltype(tag);
      FlatBinary<T> f{static_cast<const T*>(in[0]),
                      static_cast<const T*>(in[1]),
                      out[0],
                      sa_,
                      sb_,
                      op_,
                      isComparison(op_)};
      s = launchElements(f, count_, ctx, "elementwise_flat");
    });
    return s;
  }

 private:
  DataType type_;
  ElementwiseOp op_;
  int64_t count_, sa_, sb_;
};

class BroadcastKernel final : public Kernel {
 public:
  BroadcastKernel(DataType type, ElementwiseOp op, int64_t count, const BroadcastGeometry& g)
      : type_(type), op_(op), count_(count), g_(g) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = Status::ok();
    dispatchElementwise(type_, [&](auto tag) {
      using T = decltype(tag);
      BroadcastBinary<T> f{static_cast<const T*>(in[0]),
                           static_cast<const T*>(in[1]),
                           out[0],
                           g_,
                           op_,
                           isComparison(op_)};
      s = launchElements(f, count_, ctx, "elementwise_broadcast");
    });
    return s;
  }

 private:
  DataType type_;
  ElementwiseOp op_;
  int64_t count_;
  BroadcastGeometry g_;
};

// Same dims and the same memory layout as the output (so the flat index addresses both).
bool sameLayoutAsOutput(const KernelConfig& c, size_t input) {
  const PluginTensorDesc& d = c.inputs[input];
  const PluginTensorDesc& o = c.outputs[0];
  if (d.dims != o.dims) return false;
  return d.format == o.format || (isRowMajor(d) && isRowMajor(o));
}

}  // namespace

std::unique_ptr<Kernel> createElementwiseSameShape(const KernelConfig& c, std::string* whyNot) {
  const ElementwiseParams* p = checkElementwise(c, whyNot);
  if (!p) return nullptr;
  if (!sameLayoutAsOutput(c, 0) || !sameLayoutAsOutput(c, 1)) {
    setWhyNot(whyNot, "same_shape: the inputs " + dimsString(c.inputs[0].dims) + " " +
                          formatName(c.inputs[0].format) + " and " + dimsString(c.inputs[1].dims) +
                          " " + formatName(c.inputs[1].format) +
                          " do not both have the output's dims and layout");
    return nullptr;
  }
  return std::make_unique<FlatKernel>(c.inputs[0].type, p->op, volume(c.outputs[0].dims), 1, 1);
}

std::unique_ptr<Kernel> createElementwiseScalar(const KernelConfig& c, std::string* whyNot) {
  const ElementwiseParams* p = checkElementwise(c, whyNot);
  if (!p) return nullptr;
  const int64_t n = volume(c.outputs[0].dims);
  if (volume(c.inputs[0].dims) == 1 && sameLayoutAsOutput(c, 1))
    return std::make_unique<FlatKernel>(c.inputs[0].type, p->op, n, 0, 1);
  if (volume(c.inputs[1].dims) == 1 && sameLayoutAsOutput(c, 0))
    return std::make_unique<FlatKernel>(c.inputs[0].type, p->op, n, 1, 0);
  setWhyNot(whyNot,
            "scalar_broadcast: neither input is a single value broadcast over the other, which "
            "has the output's dims and layout (" +
                dimsString(c.inputs[0].dims) + " and " + dimsString(c.inputs[1].dims) + ")");
  return nullptr;
}

std::unique_ptr<Kernel> createElementwiseBroadcast(const KernelConfig& c, std::string* whyNot) {
  const ElementwiseParams* p = checkElementwise(c, whyNot);
  if (!p) return nullptr;
  const Dims& o = c.outputs[0].dims;
  BroadcastGeometry g;
  g.rank = o.nbDims;
  for (int32_t i = 0; i < o.nbDims; ++i) g.dims[i] = o.d[i];
  memoryStrides(c.outputs[0], g.so);
  int64_t* inStrides[2] = {g.sa, g.sb};
  for (int k = 0; k < 2; ++k) {
    const PluginTensorDesc& d = c.inputs[k];
    int64_t own[Dims::kMaxDims] = {};
    memoryStrides(d, own);
    const int32_t shift = o.nbDims - d.dims.nbDims;  // >= 0: inference aligned trailing dims
    for (int32_t i = 0; i < o.nbDims; ++i) {
      const int32_t j = i - shift;
      inStrides[k][i] = (j < 0 || d.dims.d[j] == 1) ? 0 : own[j];
    }
  }
  return std::make_unique<BroadcastKernel>(c.inputs[0].type, p->op, volume(o), g);
}

// ---- activation ----------------------------------------------------------------------------

namespace {

__host__ __device__ inline float activateFloat(ActivationType t, float x, float alpha, float beta) {
  switch (t) {
    case ActivationType::kRELU:
      return x < 0.f ? 0.f : x;
    case ActivationType::kLEAKY_RELU:
      return x < 0.f ? alpha * x : x;
    case ActivationType::kSIGMOID:
      return 1.f / (1.f + expf(-x));
    case ActivationType::kTANH:
      return tanhf(x);
    case ActivationType::kCLIP: {
      const float lo = x < alpha ? alpha : x;
      return beta < lo ? beta : lo;
    }
    case ActivationType::kHARD_SWISH: {
      const float r = x + 3.f;
      const float c = r < 0.f ? 0.f : (r > 6.f ? 6.f : r);
      return x * c / 6.f;
    }
    case ActivationType::kELU:
      return x < 0.f ? alpha * expm1f(x) : x;
    case ActivationType::kSELU:
      return beta * (x <= 0.f ? alpha * expm1f(x) : x);
    case ActivationType::kSOFTPLUS:
      return (x > 0.f ? x : 0.f) + log1pf(expf(-fabsf(x)));
    case ActivationType::kHARD_SIGMOID: {
      const float v = alpha * x + beta;
      return v < 0.f ? 0.f : (v > 1.f ? 1.f : v);
    }
    case ActivationType::kEXP:
      return expf(x);
    case ActivationType::kLOG:
      return logf(x);
    case ActivationType::kSQRT:
      return sqrtf(x);
    case ActivationType::kNEG:
      return -x;
    case ActivationType::kABS:
      return fabsf(x);
    case ActivationType::kRECIPROCAL:
      return 1.f / x;
    case ActivationType::kERF:
      return erff(x);
    default:
      return x;
  }
}

template <class T>
struct ActivationOp {
  const T* x;
  T* y;
  ActivationType type;
  float alpha, beta;
  __host__ __device__ void operator()(int64_t i) const {
    if constexpr (std::is_same_v<T, uint8_t>) {
      y[i] = x[i] == 0 ? 1 : 0;  // not
    } else if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      const T v = x[i];
      const T neg = static_cast<T>(U{0} - static_cast<U>(v));  // wraps: neg(MIN) is MIN
      y[i] = type == ActivationType::kABS ? (v < 0 ? neg : v) : neg;
    } else {
      y[i] = fromFloat<T>(activateFloat(type, toFloat(x[i]), alpha, beta));
    }
  }
};

class ActivationKernel final : public Kernel {
 public:
  ActivationKernel(DataType type, const ActivationParams& p, int64_t count)
      : type_(type), p_(p), count_(count) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = Status::ok();
    dispatchElementwise(type_, [&](auto tag) {
      using T = decltype(tag);
      ActivationOp<T> f{static_cast<const T*>(in[0]), static_cast<T*>(out[0]), p_.type, p_.alpha,
                        p_.beta};
      s = launchElements(f, count_, ctx, "activation");
    });
    return s;
  }

 private:
  DataType type_;
  ActivationParams p_;
  int64_t count_;
};

}  // namespace

std::unique_ptr<Kernel> createActivation(const KernelConfig& c, std::string* whyNot) {
  const ActivationParams* p =
      validate<ActivationParams>(c, "activation", 1, &ops::Activation::infer, whyNot);
  if (!p) return nullptr;
  const DataType t = c.inputs[0].type;
  // Inference admits: any activation on float types; neg/abs on int32/int64; not on bool.
  if (!isFloatType(t) && t != DataType::kINT32 && t != DataType::kINT64 && t != DataType::kBOOL) {
    setWhyNot(whyNot, std::string("activation: unsupported type ") + dataTypeName(t));
    return nullptr;
  }
  const PluginTensorDesc &x = c.inputs[0], &y = c.outputs[0];
  if (x.format != y.format && !(isRowMajor(x) && isRowMajor(y))) {
    setWhyNot(whyNot, std::string("activation: input is ") + formatName(x.format) +
                          " but output is " + formatName(y.format) +
                          "; the kernel needs one layout for both");
    return nullptr;
  }
  return std::make_unique<ActivationKernel>(t, *p, volume(x.dims));
}

}  // namespace kiln::cuda::math
