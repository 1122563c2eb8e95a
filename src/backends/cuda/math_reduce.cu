// Softmax, reduce, instance normalization and LRN on CUDA.
//
// Each layer has a plain reference kernel, one per-element function per output row / output
// element / (n, c) slice that loops over the reduced extent (emulatable on the host), indexing
// every tensor through per-dim memory strides so that any mix of linear and channels-last works.
// Faster tactics (softmax, reduce, instance norm) use one thread block per contiguous row with a
// shared-memory/shuffle reduction; they are not emulatable and return kUnsupported under
// RunContext::emulate.
//
// Value rules are the CPU backend's (backends/cpu/softmax.cpp, reduce.cpp, normalization.cpp):
//   softmax: max subtracted first (NaN never wins the max but makes the sum NaN; an all -inf
//     slice gives NaN); log-softmax is (x - m) - log(sum). FP32 arithmetic (expf, float sums of
//     positive terms).
//   reduce: sum/mean accumulate in double (as the CPU does); over an empty extent sum is 0, mean
//     NaN, max -inf; max propagates NaN. argmax writes int64, the first index of the maximum, the
//     first NaN winning; integers compare exactly in their own type.
//   instance norm: two passes in double: mean, then the mean of centred squares (biased
//     variance); y = (x - mean) * scale / sqrt(var + epsilon) + bias.
//   LRN: window [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the channels,
//     y = x / pow(bias + alpha / size * sum(x^2), beta), in fp32.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/elements.cuh"
#include "backends/cuda/math_common.h"
#include "ops/op.h"

namespace kiln::cuda::math {
namespace {

constexpr int kMaxRank = Dims::kMaxDims;

// Calls f(T{}) for float storage types and int32/int64; false for the rest.
template <class F>
bool dispatchFloatOrInt(DataType t, F&& f) {
  switch (t) {
    case DataType::kINT32:
      f(int32_t{});
      return true;
    case DataType::kINT64:
      f(int64_t{});
      return true;
    default:
      return dispatchFloat(t, f);
  }
}

// Splits `index` over dims[0..rank) (row-major, last fastest) and accumulates two offsets.
struct Walk {
  int32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t s1[kMaxRank] = {};
  int64_t s2[kMaxRank] = {};
  __host__ __device__ void offsets(int64_t index, int64_t& o1, int64_t& o2) const {
    o1 = 0;
    o2 = 0;
#pragma unroll
    for (int32_t k = kMaxRank - 1; k >= 0; --k) {
      if (k < rank) {
        const int64_t c = index % dims[k];
        index /= dims[k];
        o1 += c * s1[k];
        o2 += c * s2[k];
      }
    }
  }
};

// ---- block reductions (device only) --------------------------------------------------------

template <class C>
struct ArgBest {
  C v;
  int64_t i;  // -1: no element yet
};

__device__ inline float shflXor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ inline double shflXor(double v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
template <class C>
__device__ inline ArgBest<C> shflXor(ArgBest<C> v, int o) {
  ArgBest<C> r;
  if constexpr (std::is_same_v<C, float>)
    r.v = __shfl_xor_sync(0xffffffffu, v.v, o);
  else
    r.v = static_cast<C>(__shfl_xor_sync(0xffffffffu, static_cast<long long>(v.v), o));
  r.i = static_cast<int64_t>(__shfl_xor_sync(0xffffffffu, static_cast<long long>(v.i), o));
  return r;
}

// Every thread of the block gets the reduction of all threads' v. blockDim.x is a multiple of 32
// (at most 1024); safe to call repeatedly in one kernel.
template <class V, class F>
__device__ V blockReduce(V v, F f) {
  __shared__ V partial[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = f(v, shflXor(v, o));
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
  __syncthreads();  // a previous call may still be reading `partial`
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = partial[0];
  for (int w = 1; w < warps; ++w) v = f(v, partial[w]);  // same order in every thread
  return v;
}

struct SumF {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct SumD {
  __device__ double operator()(double a, double b) const { return a + b; }
};
struct MaxIgnoreNan {  // softmax's max: a NaN never wins (fmaxf returns the other operand)
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct MaxPropagateNan {  // reduce max: NaN wins
  __device__ float operator()(float a, float b) const {
    return a != a ? a : (b != b ? b : fmaxf(a, b));
  }
};
// argmax order: the first NaN, else the first maximum; an empty side loses.
struct ArgBetter {
  template <class C>
  __device__ ArgBest<C> operator()(ArgBest<C> a, ArgBest<C> b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = a.v != a.v, bn = b.v != b.v;
    if (an || bn) {
      if (an && bn) return a.i < b.i ? a : b;
      return an ? a : b;
    }
    if (a.v > b.v) return a;
    if (b.v > a.v) return b;
    return a.i < b.i ? a : b;
  }
};

// Threads per block for rows of `len` elements: a multiple of 32 in [32, 512].
int threadsFor(int64_t len) {
  const int64_t t = (len + 31) / 32 * 32;
  return static_cast<int>(t < 32 ? 32 : (t > 512 ? 512 : t));
}
unsigned blocksFor(int64_t rows) {
  return static_cast<unsigned>(rows < (int64_t{1} << 20) ? rows : (int64_t{1} << 20));
}

Status notEmulated(const char* tactic) {
  return unsupported(std::string(tactic) +
                     ": a block-reduction kernel, which has no host emulation");
}

// ---- softmax --------------------------------------------------------------------------------

struct SoftmaxGeometry {
  Walk rows;  // over all dims but the axis; s1: input strides, s2: output strides
  int64_t len = 0, axisIn = 0, axisOut = 0;
};

template <class T>
struct SoftmaxRow {
  const T* x;
  T* y;
  SoftmaxGeometry g;
  bool log;
  __host__ __device__ void operator()(int64_t r) const {
    int64_t bi, bo;
    g.rows.offsets(r, bi, bo);
    float m = -INFINITY;
    for (int64_t j = 0; j < g.len; ++j) {
      const float v = toFloat(x[bi + j * g.axisIn]);
      if (v > m) m = v;
    }
    float sum = 0.f;
    for (int64_t j = 0; j < g.len; ++j) sum += expf(toFloat(x[bi + j * g.axisIn]) - m);
    if (log) {
      const float logSum = logf(sum);
      for (int64_t j = 0; j < g.len; ++j)
        y[bo + j * g.axisOut] = fromFloat<T>((toFloat(x[bi + j * g.axisIn]) - m) - logSum);
    } else {
      for (int64_t j = 0; j < g.len; ++j)
        y[bo + j * g.axisOut] = fromFloat<T>(expf(toFloat(x[bi + j * g.axisIn]) - m) / sum);
    }
  }
};

template <class T>
__global__ void softmaxRowsKernel(const T* x, T* y, int64_t rows, int64_t len, bool log) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * len;
    T* yr = y + r * len;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) m = fmaxf(m, toFloat(xr[j]));
    m = blockReduce(m, MaxIgnoreNan{});
    float sum = 0.f;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) sum += expf(toFloat(xr[j]) - m);
    sum = blockReduce(sum, SumF{});
    if (log) {
      const float logSum = logf(sum);
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        yr[j] = fromFloat<T>((toFloat(xr[j]) - m) - logSum);
    } else {
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        yr[j] = fromFloat<T>(expf(toFloat(xr[j]) - m) / sum);
    }
  }
}

const SoftmaxParams* checkSoftmax(const KernelConfig& c, std::string* whyNot, int32_t* axis) {
  const SoftmaxParams* p = validate<SoftmaxParams>(c, "softmax", 1, &ops::Softmax::infer, whyNot);
  if (!p) return nullptr;
  const int32_t rank = c.inputs[0].dims.nbDims;
  *axis = p->axis < 0 ? p->axis + rank : p->axis;  // inference checked the range
  return p;
}

class SoftmaxReference final : public Kernel {
 public:
  SoftmaxReference(DataType t, const SoftmaxGeometry& g, int64_t rows, bool log)
      : type_(t), g_(g), rows_(rows), log_(log) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = Status::ok();
    dispatchFloat(type_, [&](auto tag) {
      using T = decltype(tag);
      SoftmaxRow<T> f{static_cast<const T*>(in[0]), static_cast<T*>(out[0]), g_, log_};
      s = launchElements(f, g_.len == 0 ? 0 : rows_, ctx, "softmax_reference");
    });
    return s;
  }

 private:
  DataType type_;
  SoftmaxGeometry g_;
  int64_t rows_;
  bool log_;
};

class SoftmaxRows final : public Kernel {
 public:
  SoftmaxRows(DataType t, int64_t rows, int64_t len, bool log)
      : type_(t), rows_(rows), len_(len), log_(log) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    if (ctx.emulate) return notEmulated("softmax contiguous_rows");
    if (rows_ == 0 || len_ == 0) return Status::ok();
    Status s = Status::ok();
    dispatchFloat(type_, [&](auto tag) {
      using T = decltype(tag);
      softmaxRowsKernel<T>
          <<<blocksFor(rows_), threadsFor(len_), 0, static_cast<cudaStream_t>(ctx.stream)>>>(
              static_cast<const T*>(in[0]), static_cast<T*>(out[0]), rows_, len_, log_);
      s = checkLaunch("softmax_rows", __FILE__, __LINE__);
    });
    return s;
  }

 private:
  DataType type_;
  int64_t rows_, len_;
  bool log_;
};

// ---- reduce ---------------------------------------------------------------------------------

struct ReduceGeometry {
  Walk kept;          // non-reduced dims; s1: input strides, s2: output strides
  Walk reduced;       // reduced dims; s1: input strides (s2 unused)
  int64_t count = 1;  // input elements per output element
};

template <class T>
struct ReduceElement {
  const T* x;
  void* y;
  ReduceGeometry g;
  ReduceOp op;
  __host__ __device__ void operator()(int64_t o) const {
    int64_t base, at;
    g.kept.offsets(o, base, at);
    if (op == ReduceOp::kARGMAX) {
      // One reduced axis, of at least one element (inference); the CPU's scan exactly.
      using C = std::conditional_t<std::is_integral_v<T>, T, float>;
      const int64_t n = g.reduced.dims[0], s = g.reduced.s1[0];
      auto load = [&](int64_t k) -> C {
        if constexpr (std::is_integral_v<T>)
          return x[base + k * s];
        else
          return toFloat(x[base + k * s]);
      };
      int64_t best = 0;
      C m = load(0);
      for (int64_t k = 1; k < n && m == m; ++k) {
        const C e = load(k);
        if (e > m || e != e) {
          m = e;
          best = k;
        }
      }
      static_cast<int64_t*>(y)[at] = best;
      return;
    }
    if constexpr (!std::is_integral_v<T>) {
      float result;
      if (op == ReduceOp::kMAX) {
        float m = -INFINITY;
        for (int64_t j = 0; j < g.count; ++j) {
          int64_t off, unused;
          g.reduced.offsets(j, off, unused);
          const float v = toFloat(x[base + off]);
          if (v > m || v != v) m = v;
        }
        result = m;
      } else {
        double acc = 0.0;
        for (int64_t j = 0; j < g.count; ++j) {
          int64_t off, unused;
          g.reduced.offsets(j, off, unused);
          acc += toFloat(x[base + off]);
        }
        if (op == ReduceOp::kMEAN) acc = acc / static_cast<double>(g.count);  // 0/0: NaN
        result = static_cast<float>(acc);
      }
      static_cast<T*>(y)[at] = fromFloat<T>(result);
    }
  }
};

template <class T>
__global__ void reduceRowsKernel(const T* x, void* y, int64_t rows, int64_t len, ReduceOp op) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * len;
    if (op == ReduceOp::kARGMAX) {
      using C = std::conditional_t<std::is_integral_v<T>, T, float>;
      ArgBest<C> b{C{}, -1};
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
        C e;
        if constexpr (std::is_integral_v<T>)
          e = xr[j];
        else
          e = toFloat(xr[j]);
        b = ArgBetter{}(b, ArgBest<C>{e, j});
      }
      b = blockReduce(b, ArgBetter{});
      if (threadIdx.x == 0) static_cast<int64_t*>(y)[r] = b.i;
      continue;
    }
    if constexpr (!std::is_integral_v<T>) {
      float result;
      if (op == ReduceOp::kMAX) {
        float m = -INFINITY;
        for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
          m = MaxPropagateNan{}(m, toFloat(xr[j]));
        result = blockReduce(m, MaxPropagateNan{});
      } else {
        double acc = 0.0;
        for (int64_t j = threadIdx.x; j < len; j += blockDim.x) acc += toFloat(xr[j]);
        acc = blockReduce(acc, SumD{});
        if (op == ReduceOp::kMEAN) acc = acc / static_cast<double>(len);
        result = static_cast<float>(acc);
      }
      if (threadIdx.x == 0) static_cast<T*>(y)[r] = fromFloat<T>(result);
    }
  }
}

const ReduceParams* checkReduce(const KernelConfig& c, std::string* whyNot) {
  const ReduceParams* p = validate<ReduceParams>(c, "reduce", 1, &ops::Reduce::infer, whyNot);
  if (!p) return nullptr;
  const DataType t = c.inputs[0].type;
  if (!isFloatType(t) &&
      !(p->op == ReduceOp::kARGMAX && (t == DataType::kINT32 || t == DataType::kINT64))) {
    setWhyNot(whyNot, std::string("reduce: unsupported input type ") + dataTypeName(t));
    return nullptr;
  }
  return p;
}

class ReduceReference final : public Kernel {
 public:
  ReduceReference(DataType t, ReduceOp op, const ReduceGeometry& g, int64_t outputs)
      : type_(t), op_(op), g_(g), outputs_(outputs) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = Status::ok();
    dispatchFloatOrInt(type_, [&](auto tag) {
      using T = decltype(tag);
      ReduceElement<T> f{static_cast<const T*>(in[0]), out[0], g_, op_};
      s = launchElements(f, outputs_, ctx, "reduce_reference");
    });
    return s;
  }

 private:
  DataType type_;
  ReduceOp op_;
  ReduceGeometry g_;
  int64_t outputs_;
};

class ReduceRows final : public Kernel {
 public:
  ReduceRows(DataType t, ReduceOp op, int64_t rows, int64_t len)
      : type_(t), op_(op), rows_(rows), len_(len) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    if (ctx.emulate) return notEmulated("reduce contiguous_rows");
    if (rows_ == 0) return Status::ok();
    Status s = Status::ok();
    dispatchFloatOrInt(type_, [&](auto tag) {
      using T = decltype(tag);
      reduceRowsKernel<T>
          <<<blocksFor(rows_), threadsFor(len_), 0, static_cast<cudaStream_t>(ctx.stream)>>>(
              static_cast<const T*>(in[0]), out[0], rows_, len_, op_);
      s = checkLaunch("reduce_rows", __FILE__, __LINE__);
    });
    return s;
  }

 private:
  DataType type_;
  ReduceOp op_;
  int64_t rows_, len_;
};

// ---- instance normalization and LRN ---------------------------------------------------------

// [N, C, spatial...] seen as (n, c, s); channels-last (rank 4) puts c innermost.
struct ChannelView {
  int64_t N = 0, C = 0, S = 1;
  bool inLast = false, outLast = false;
  __host__ __device__ int64_t at(int64_t n, int64_t c, int64_t s, bool last) const {
    return last ? (n * S + s) * C + c : (n * C + c) * S + s;
  }
};

ChannelView channelView(const KernelConfig& c) {
  const Dims& d = c.inputs[0].dims;
  ChannelView v;
  v.N = d.d[0];
  v.C = d.d[1];
  for (int32_t i = 2; i < d.nbDims; ++i) v.S *= d.d[i];
  v.inLast = c.inputs[0].format == TensorFormat::kCHANNELS_LAST;
  v.outLast = c.outputs[0].format == TensorFormat::kCHANNELS_LAST;
  return v;
}

template <class T>
struct InstanceNormSlice {
  const T* x;
  const T* scale;
  const T* bias;
  T* y;
  ChannelView v;
  double epsilon;
  __host__ __device__ void operator()(int64_t slice) const {
    const int64_t n = slice / v.C, c = slice % v.C;
    double mean = 0.0;
    for (int64_t s = 0; s < v.S; ++s) mean += toFloat(x[v.at(n, c, s, v.inLast)]);
    mean /= static_cast<double>(v.S);
    double var = 0.0;
    for (int64_t s = 0; s < v.S; ++s) {
      const double d = toFloat(x[v.at(n, c, s, v.inLast)]) - mean;
      var += d * d;
    }
    var /= static_cast<double>(v.S);
    const double k = toFloat(scale[c]) / sqrt(var + epsilon);
    const double b = toFloat(bias[c]);
    for (int64_t s = 0; s < v.S; ++s)
      y[v.at(n, c, s, v.outLast)] =
          fromFloat<T>(static_cast<float>((toFloat(x[v.at(n, c, s, v.inLast)]) - mean) * k + b));
  }
};

template <class T>
__global__ void instanceNormSlicesKernel(const T* x, const T* scale, const T* bias, T* y,
                                         int64_t slices, int64_t C, int64_t S, double epsilon) {
  for (int64_t sl = blockIdx.x; sl < slices; sl += gridDim.x) {
    const int64_t c = sl % C;
    const T* xs = x + sl * S;
    T* ys = y + sl * S;
    double sum = 0.0;
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) sum += toFloat(xs[j]);
    const double mean = blockReduce(sum, SumD{}) / static_cast<double>(S);
    double sq = 0.0;
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
      const double d = toFloat(xs[j]) - mean;
      sq += d * d;
    }
    const double var = blockReduce(sq, SumD{}) / static_cast<double>(S);
    const double k = toFloat(scale[c]) / sqrt(var + epsilon);
    const double b = toFloat(bias[c]);
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x)
      ys[j] = fromFloat<T>(static_cast<float>((toFloat(xs[j]) - mean) * k + b));
  }
}

const NormalizationParams* checkInstanceNorm(const KernelConfig& c, std::string* whyNot) {
  const NormalizationParams* p =
      validate<NormalizationParams>(c, "normalization", 3, &ops::Normalization::infer, whyNot);
  if (!p) return nullptr;
  if (c.inputs[1].type != c.inputs[0].type || c.inputs[2].type != c.inputs[0].type) {
    setWhyNot(whyNot, std::string("normalization: scale and bias must have the input's type (") +
                          dataTypeName(c.inputs[0].type) + "), got " +
                          dataTypeName(c.inputs[1].type) + " and " +
                          dataTypeName(c.inputs[2].type));
    return nullptr;
  }
  return p;
}

class InstanceNormReference final : public Kernel {
 public:
  InstanceNormReference(DataType t, const ChannelView& v, float epsilon)
      : type_(t), v_(v), epsilon_(epsilon) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    if (v_.S == 0) return Status::ok();
    Status s = Status::ok();
    dispatchFloat(type_, [&](auto tag) {
      using T = decltype(tag);
      InstanceNormSlice<T> f{static_cast<const T*>(in[0]),
                             static_cast<const T*>(in[1]),
                             static_cast<const T*>(in[2]),
                             static_cast<T*>(out[0]),
                             v_,
                             epsilon_};
      s = launchElements(f, v_.N * v_.C, ctx, "instance_norm_reference");
    });
    return s;
  }

 private:
  DataType type_;
  ChannelView v_;
  double epsilon_;
};

class InstanceNormSlices final : public Kernel {
 public:
  InstanceNormSlices(DataType t, const ChannelView& v, float epsilon)
      : type_(t), v_(v), epsilon_(epsilon) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    if (ctx.emulate) return notEmulated("normalization block_per_slice");
    const int64_t slices = v_.N * v_.C;
    if (v_.S == 0 || slices == 0) return Status::ok();
    Status s = Status::ok();
    dispatchFloat(type_, [&](auto tag) {
      using T = decltype(tag);
      instanceNormSlicesKernel<T>
          <<<blocksFor(slices), threadsFor(v_.S), 0, static_cast<cudaStream_t>(ctx.stream)>>>(
              static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
              static_cast<const T*>(in[2]), static_cast<T*>(out[0]), slices, v_.C, v_.S, epsilon_);
      s = checkLaunch("instance_norm_slices", __FILE__, __LINE__);
    });
    return s;
  }

 private:
  DataType type_;
  ChannelView v_;
  double epsilon_;
};

template <class T>
struct LrnElement {
  const T* x;
  T* y;
  ChannelView v;
  int64_t before, after;
  float alphaOverSize, bias, beta;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t s = i % v.S, c = (i / v.S) % v.C, n = i / (v.S * v.C);
    const int64_t lo = c - before < 0 ? 0 : c - before;
    const int64_t hi = c + after > v.C - 1 ? v.C - 1 : c + after;
    float sum = 0.f;
    for (int64_t j = lo; j <= hi; ++j) {
      const float e = toFloat(x[v.at(n, j, s, v.inLast)]);
      sum += e * e;
    }
    const float denom = powf(bias + alphaOverSize * sum, beta);
    y[v.at(n, c, s, v.outLast)] = fromFloat<T>(toFloat(x[v.at(n, c, s, v.inLast)]) / denom);
  }
};

class LrnReference final : public Kernel {
 public:
  LrnReference(DataType t, const ChannelView& v, const LRNParams& p) : type_(t), v_(v), p_(p) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = Status::ok();
    dispatchFloat(type_, [&](auto tag) {
      using T = decltype(tag);
      LrnElement<T> f{static_cast<const T*>(in[0]),
                      static_cast<T*>(out[0]),
                      v_,
                      (p_.size - 1) / 2,
                      p_.size / 2,
                      static_cast<float>(static_cast<double>(p_.alpha) / p_.size),
                      p_.bias,
                      p_.beta};
      s = launchElements(f, v_.N * v_.C * v_.S, ctx, "lrn_reference");
    });
    return s;
  }

 private:
  DataType type_;
  ChannelView v_;
  LRNParams p_;
};

}  // namespace

// ---- tactic entry points --------------------------------------------------------------------

std::unique_ptr<Kernel> createSoftmaxReference(const KernelConfig& c, std::string* whyNot) {
  int32_t axis = 0;
  const SoftmaxParams* p = checkSoftmax(c, whyNot, &axis);
  if (!p) return nullptr;
  const Dims& d = c.inputs[0].dims;
  int64_t si[kMaxRank] = {}, so[kMaxRank] = {};
  memoryStrides(c.inputs[0], si);
  memoryStrides(c.outputs[0], so);
  SoftmaxGeometry g;
  int64_t rows = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (i == axis) continue;
    g.rows.dims[g.rows.rank] = d.d[i];
    g.rows.s1[g.rows.rank] = si[i];
    g.rows.s2[g.rows.rank] = so[i];
    ++g.rows.rank;
    rows *= d.d[i];
  }
  g.len = d.d[axis];
  g.axisIn = si[axis];
  g.axisOut = so[axis];
  return std::make_unique<SoftmaxReference>(c.inputs[0].type, g, rows, p->log);
}

std::unique_ptr<Kernel> createSoftmaxRows(const KernelConfig& c, std::string* whyNot) {
  int32_t axis = 0;
  const SoftmaxParams* p = checkSoftmax(c, whyNot, &axis);
  if (!p) return nullptr;
  const PluginTensorDesc &x = c.inputs[0], &y = c.outputs[0];
  const Dims& d = x.dims;
  // Rows of the axis are contiguous and follow one another in memory, in input and output alike.
  const bool lastAxis = axis == d.nbDims - 1 && isRowMajor(x) && isRowMajor(y);
  const bool channelsAxis = axis == 1 && d.nbDims == 4 &&
                            x.format == TensorFormat::kCHANNELS_LAST &&
                            y.format == TensorFormat::kCHANNELS_LAST;
  if (!lastAxis && !channelsAxis) {
    setWhyNot(whyNot, "softmax contiguous_rows: axis " + std::to_string(axis) +
                          " is not contiguous in memory (needs the last axis of a linear tensor "
                          "or the channels of a channels_last one, same layout in and out)");
    return nullptr;
  }
  const int64_t len = d.d[axis];
  const int64_t rows = len == 0 ? 0 : volume(d) / len;
  return std::make_unique<SoftmaxRows>(x.type, rows, len, p->log);
}

std::unique_ptr<Kernel> createReduceReference(const KernelConfig& c, std::string* whyNot) {
  const ReduceParams* p = checkReduce(c, whyNot);
  if (!p) return nullptr;
  const Dims& d = c.inputs[0].dims;
  int64_t si[kMaxRank] = {}, so[kMaxRank] = {};
  memoryStrides(c.inputs[0], si);
  memoryStrides(c.outputs[0], so);
  ReduceGeometry g;
  int32_t outDim = 0;  // the output dim that input dim i maps to
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const bool reduced = (p->axesMask >> i) & 1u;
    if (reduced) {
      g.reduced.dims[g.reduced.rank] = d.d[i];
      g.reduced.s1[g.reduced.rank] = si[i];
      ++g.reduced.rank;
      g.count *= d.d[i];
      if (p->keepDims) ++outDim;
    } else {
      g.kept.dims[g.kept.rank] = d.d[i];
      g.kept.s1[g.kept.rank] = si[i];
      g.kept.s2[g.kept.rank] = so[outDim++];
      ++g.kept.rank;
    }
  }
  return std::make_unique<ReduceReference>(c.inputs[0].type, p->op, g, volume(c.outputs[0].dims));
}

std::unique_ptr<Kernel> createReduceRows(const KernelConfig& c, std::string* whyNot) {
  const ReduceParams* p = checkReduce(c, whyNot);
  if (!p) return nullptr;
  const PluginTensorDesc &x = c.inputs[0], &y = c.outputs[0];
  const int32_t rank = x.dims.nbDims;
  // Trailing axes of a row-major input, or the channels of a channels_last one: each output
  // element reduces one contiguous row, and the rows come in the output's memory order.
  const uint32_t all = rank >= 32 ? ~0u : ((1u << rank) - 1u);
  bool trailing = false;
  for (int32_t k = 0; k < rank; ++k)
    if (p->axesMask == (all & ~((1u << k) - 1u))) trailing = true;
  const bool rowMajorTrailing = trailing && isRowMajor(x) && isRowMajor(y);
  const bool channels =
      rank == 4 && x.format == TensorFormat::kCHANNELS_LAST && p->axesMask == 2u && isRowMajor(y);
  if (!rowMajorTrailing && !channels) {
    setWhyNot(whyNot, "reduce contiguous_rows: the reduced axes (mask " +
                          std::to_string(p->axesMask) +
                          ") are not one contiguous row per output element in memory");
    return nullptr;
  }
  int64_t len = 1;
  for (int32_t i = 0; i < rank; ++i)
    if ((p->axesMask >> i) & 1u) len *= x.dims.d[i];
  return std::make_unique<ReduceRows>(x.type, p->op, volume(y.dims), len);
}

std::unique_ptr<Kernel> createInstanceNormReference(const KernelConfig& c, std::string* whyNot) {
  const NormalizationParams* p = checkInstanceNorm(c, whyNot);
  if (!p) return nullptr;
  return std::make_unique<InstanceNormReference>(c.inputs[0].type, channelView(c), p->epsilon);
}

std::unique_ptr<Kernel> createInstanceNormSlices(const KernelConfig& c, std::string* whyNot) {
  const NormalizationParams* p = checkInstanceNorm(c, whyNot);
  if (!p) return nullptr;
  if (!isRowMajor(c.inputs[0]) || !isRowMajor(c.outputs[0])) {
    setWhyNot(whyNot,
              "normalization block_per_slice: needs linear input and output (each (n, c) slice "
              "contiguous)");
    return nullptr;
  }
  return std::make_unique<InstanceNormSlices>(c.inputs[0].type, channelView(c), p->epsilon);
}

std::unique_ptr<Kernel> createLrnReference(const KernelConfig& c, std::string* whyNot) {
  const LRNParams* p = validate<LRNParams>(c, "lrn", 1, &ops::LRN::infer, whyNot);
  if (!p) return nullptr;
  return std::make_unique<LrnReference>(c.inputs[0].type, channelView(c), *p);
}

}  // namespace kiln::cuda::math
