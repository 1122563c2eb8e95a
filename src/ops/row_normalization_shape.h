// The shape rules the normalisations share: LayerNormalization's and RMSNormalization's (Scale and
// B broadcast over the normalised dims), GroupNormalization's and instance normalisation's (Scale
// and B one value per channel). Once here so that the ops check their parameters alike and say so
// in the same words.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/shape_checks.h"

namespace kiln::shape {

// Floating-point X of rank >= 1 normalised from `axisParam` (negative counts from the end), a
// valid epsilon, Scale (input 1) and, where given, B (input 2) that broadcast to the normalised
// dims X.shape[axis:]; the output is X's shape and type.
inline Status rowNormalizationRule(const char* layer, int32_t axisParam, float epsilon,
                                   const std::vector<TensorShape>& in,
                                   std::vector<TensorShape>& out) {
  KILN_RETURN_IF_ERROR(checkFloatInputs(layer, in));
  const Dims& x = in[0].dims;
  if (x.nbDims < 1)
    return invalidArgument(std::string(layer) + ": X must have rank >= 1, got a scalar");
  int32_t axis = 0;
  KILN_RETURN_IF_ERROR(normalizeAxis(layer, axisParam, x.nbDims, &axis));
  KILN_RETURN_IF_ERROR(checkEpsilon(layer, epsilon));
  KILN_RETURN_IF_ERROR(checkRowParam(layer, x, axis, in[1].dims, "Scale (input 1)"));
  if (in.size() == 3)
    KILN_RETURN_IF_ERROR(checkRowParam(layer, x, axis, in[2].dims, "B (input 2)"));
  out.assign(1, in[0]);
  return Status::ok();
}

// The end of a per-channel rule (X [N, C, ...] checked): inputs 1 and 2, named `scale` and `bias`
// in messages, are [C]; the output is X's shape and type.
inline Status perChannelParams(const char* layer, const std::vector<TensorShape>& in,
                               const char* scale, const char* bias, std::vector<TensorShape>& out) {
  const int64_t channels = in[0].dims.d[1];
  KILN_RETURN_IF_ERROR(checkPerChannel(layer, scale, in[1].dims, channels));
  KILN_RETURN_IF_ERROR(checkPerChannel(layer, bias, in[2].dims, channels));
  out.assign(1, in[0]);
  return Status::ok();
}

}  // namespace kiln::shape
