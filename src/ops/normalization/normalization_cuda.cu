// Instance normalization (ONNX InstanceNormalization) on CUDA. Tactics, fastest first:
//   block_per_slice  one thread block per (n, c) slice of a linear tensor, with a
//                    shared-memory/shuffle reduction; not emulatable (kUnsupported under
//                    RunContext::emulate)
//   reference        one per-element function per slice (emulatable on the host), linear or
//                    channels-last
//
// Value rules: normalization_semantics.h, the CPU's (normalization_cpu.cpp): two passes in
// double, mean then the mean of centred squares (biased variance);
// y = (x - mean) * scale / sqrt(var + epsilon) + bias.
#include <cmath>
#include <cstdint>

#include "backends/config_checks.h"
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/strided_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/normalization/normalization_semantics.h"
#include "ops/op.h"

namespace kiln::cuda::normalization {
namespace {

using config_checks::fail;
using ops::normalization::normalized;
using ops::normalization::sliceFactor;

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
    double mean, var;
    ops::normalization::sliceMoments(
        v.S, [&](int64_t s) { return toFloat(x[v.at(n, c, s, v.inLast)]); }, mean, var);
    const double k = sliceFactor(toFloat(scale[c]), var, epsilon);
    const double b = toFloat(bias[c]);
    for (int64_t s = 0; s < v.S; ++s)
      y[v.at(n, c, s, v.outLast)] = fromFloat<T>(
          static_cast<float>(normalized(toFloat(x[v.at(n, c, s, v.inLast)]), mean, k, b)));
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
    const double k = sliceFactor(toFloat(scale[c]), var, epsilon);
    const double b = toFloat(bias[c]);
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x)
      ys[j] = fromFloat<T>(static_cast<float>(normalized(toFloat(xs[j]), mean, k, b)));
  }
}

const NormalizationParams* checkInstanceNorm(const KernelConfig& c, std::string* whyNot) {
  const NormalizationParams* p = config_checks::validate<NormalizationParams>(
      c, DeviceKind::kCUDA, "normalization", 3, &ops::Normalization::infer, whyNot);
  if (!p) return nullptr;
  if (c.inputs[1].type != c.inputs[0].type || c.inputs[2].type != c.inputs[0].type) {
    fail(whyNot, std::string("normalization: scale and bias must have the input's type (") +
                     dataTypeName(c.inputs[0].type) + "), got " + dataTypeName(c.inputs[1].type) +
                     " and " + dataTypeName(c.inputs[2].type));
    return nullptr;
  }
  return p;
}

// A kernel over every float type whose run is launch(T{}, view, epsilon, in, out, ctx), or nullptr
// when the configuration is refused; `contiguousSlices`: the tactic also needs linear tensors.
template <class Launch>
std::unique_ptr<Kernel> makeKernel(const KernelConfig& c, std::string* whyNot,
                                   bool contiguousSlices, Launch launch) {
  const NormalizationParams* p = checkInstanceNorm(c, whyNot);
  if (!p) return nullptr;
  if (contiguousSlices && (!isRowMajor(c.inputs[0]) || !isRowMajor(c.outputs[0]))) {
    fail(whyNot,
         "normalization block_per_slice: needs linear input and output (each (n, c) slice "
         "contiguous)");
    return nullptr;
  }
  const ChannelView v = channelView(c.inputs[0], c.outputs[0]);
  const double epsilon = p->epsilon;
  return makeTypedKernel<FloatTypes>(
      c.inputs[0].type, [v, epsilon, launch](auto tag, const void* const* in, void* const* out,
                                             const RunContext& ctx) {
        return launch(tag, v, epsilon, in, out, ctx);
      });
}

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  return makeKernel(c, whyNot, false,
                    [](auto tag, const ChannelView& v, double epsilon, const void* const* in,
                       void* const* out, const RunContext& ctx) {
                      using T = decltype(tag);
                      InstanceNormSlice<T> f{static_cast<const T*>(in[0]),
                                             static_cast<const T*>(in[1]),
                                             static_cast<const T*>(in[2]),
                                             static_cast<T*>(out[0]),
                                             v,
                                             epsilon};
                      return launchElements(f, v.S == 0 ? 0 : v.N * v.C, ctx,
                                            "instance_norm_reference");
                    });
}

std::unique_ptr<Kernel> createSlices(const KernelConfig& c, std::string* whyNot) {
  return makeKernel(
      c, whyNot, true,
      [](auto tag, const ChannelView& v, double epsilon, const void* const* in, void* const* out,
         const RunContext& ctx) {
        using T = decltype(tag);
        const int64_t slices = v.N * v.C;
        return launchBlockPerRow(
            "normalization block_per_slice", "instance_norm_slices", v.S == 0 ? 0 : slices, v.S,
            ctx, [&](unsigned blocks, int threads, cudaStream_t stream) {
              instanceNormSlicesKernel<T><<<blocks, threads, 0, stream>>>(
                  static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                  static_cast<const T*>(in[2]), static_cast<T*>(out[0]), slices, v.C, v.S, epsilon);
            });
      });
}

constexpr Tactic kTactics[] = {{"block_per_slice", &createSlices}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda::normalization

std::span<const kiln::Tactic> kiln::ops::Normalization::cudaTactics() {
  return cuda::normalization::kTactics;
}
