// Parameters of the built-in Resize layer (src/ops/resize/).
#pragma once

#include <cstdint>

#include "kiln/types.h"

namespace kiln {

enum class ResizeMode : int32_t { kNEAREST = 0, kLINEAR = 1 };
constexpr int32_t enumCount(ResizeMode) { return 2; }

// How an output coordinate maps to an input one (ONNX coordinate_transformation_mode).
enum class ResizeCoordinates : int32_t {
  kHALF_PIXEL = 0,            // (x + 0.5) / scale - 0.5
  kASYMMETRIC = 1,            // x / scale
  kALIGN_CORNERS = 2,         // x * (in - 1) / (out - 1)
  kPYTORCH_HALF_PIXEL = 3,    // out > 1 ? (x + 0.5) / scale - 0.5 : 0
  kTF_HALF_PIXEL_FOR_NN = 4,  // (x + 0.5) / scale
};
constexpr int32_t enumCount(ResizeCoordinates) { return 5; }

// Nearest mode's rounding of the input coordinate (ONNX nearest_mode).
enum class ResizeRounding : int32_t {
  kROUND_PREFER_FLOOR = 0,
  kROUND_PREFER_CEIL = 1,
  kFLOOR = 2,
  kCEIL = 3,
};
constexpr int32_t enumCount(ResizeRounding) { return 4; }

// Resizes any axes: outputDims is the result; scales[i] is the factor ONNX uses in the
// coordinate transform of axis i (output / input when the model gave sizes). An output dim of -1
// is floor(input dim * scales[i]) (scale > 0), ONNX's rule for scales: the form that follows a
// dynamic input (the ONNX parser writes it for every axis of a Resize given scales).
struct ResizeParams {
  ResizeMode mode = ResizeMode::kNEAREST;
  ResizeCoordinates coordinates = ResizeCoordinates::kHALF_PIXEL;
  ResizeRounding rounding = ResizeRounding::kROUND_PREFER_FLOOR;
  float scales[Dims::kMaxDims] = {};
  Dims outputDims;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("mode", p.mode);
    v("coordinates", p.coordinates);
    v("rounding", p.rounding);
    v("scales", p.scales);
    v("outputDims", p.outputDims);
  }
};

}  // namespace kiln
