// The rules of instance normalization (ONNX InstanceNormalization), shared by the CPU reference
// (normalization_cpu.cpp) and the CUDA kernels (normalization_cuda.cu), so that the two backends
// cannot drift apart. The input [N, C, spatial...] is N * C slices (n, c) of S elements (S the
// product of the spatial dims); slice (n, c) takes scale[c] and bias[c]. Statistics are in double:
// two passes, the mean, then the mean of the centred squares (the biased variance, no
// cancellation); y = (x - mean) * scale / sqrt(var + epsilon) + bias, rounded once to the output
// type.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::normalization {

// Mean and biased variance of one slice of S >= 1 elements load(0), ..., load(S - 1), in two
// passes in double.
template <class Load>
KILN_HOST_DEVICE inline void sliceMoments(int64_t S, const Load& load, double& mean, double& var) {
  mean = 0.0;
  for (int64_t s = 0; s < S; ++s) mean += load(s);
  mean /= static_cast<double>(S);
  var = 0.0;
  for (int64_t s = 0; s < S; ++s) {
    const double d = load(s) - mean;
    var += d * d;
  }
  var /= static_cast<double>(S);
}

// scale / sqrt(var + epsilon): the factor of the slice's channel.
KILN_HOST_DEVICE inline double sliceFactor(double scale, double var, double epsilon) {
  return scale / sqrt(var + epsilon);
}

// One output value, before rounding: (x - mean) * k + bias, k from sliceFactor.
KILN_HOST_DEVICE inline double normalized(double x, double mean, double k, double bias) {
  return (x - mean) * k + bias;
}

}  // namespace kiln::ops::normalization
