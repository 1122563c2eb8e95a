// Parameters of kiln's built-in layers. Each struct is what the network API takes when a layer is
// added, what the builder and kernels read, and what the plan file stores.
// Enum values are part of the plan format: never reorder, only append.
#pragma once

#include <cstdint>

#include "kiln/types.h"

namespace kiln {

enum class LayerType : int32_t {
  kCONSTANT = 0,
  kCONVOLUTION = 1,
  kPOOLING = 2,
  kELEMENTWISE = 3,
  kACTIVATION = 4,
  kMATRIX_MULTIPLY = 5,
  kGEMM = 6,  // fully connected: Y = alpha * op(A) op(B) + beta * C
  kSOFTMAX = 7,
  kCONCATENATION = 8,
  kSHUFFLE = 9,
  kREDUCE = 10,
  kPLUGIN = 11,
  kREFORMAT = 12,  // inserted by the builder: converts type and/or format
  kSELECT = 13,    // ONNX Where: condition ? x : y, broadcasting
  kGATHER = 14,
  kSLICE = 15,
  kPADDING = 16,
  kRESIZE = 17,
  kTILE = 18,
  kEXPAND = 19,
  kDECONVOLUTION = 20,  // ONNX ConvTranspose
  kNORMALIZATION = 21,  // ONNX InstanceNormalization
  kLRN = 22,
  kROI_ALIGN = 23,
};
constexpr int32_t kLayerTypeCount = 24;
const char* layerTypeName(LayerType type);

// 2-D convolution over NCHW input [N, C, H, W] with weights [K, C/groups, kH, kW] and an optional
// bias [K]. Output [N, K, OH, OW] with OH = (H + padTop + padBottom - dilH*(kH-1) - 1)/strideH + 1.
struct ConvolutionParams {
  int32_t outChannels = 0;
  int32_t kernelH = 1, kernelW = 1;
  int32_t strideH = 1, strideW = 1;
  int32_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int32_t dilationH = 1, dilationW = 1;
  int32_t groups = 1;
};

enum class PoolingType : int32_t {
  kMAX = 0,
  kAVERAGE = 1,
  kGLOBAL_MAX = 2,  // kernel = whole spatial extent, output [N, C, 1, 1]
  kGLOBAL_AVERAGE = 3,
};

struct PoolingParams {
  PoolingType type = PoolingType::kMAX;
  int32_t kernelH = 1, kernelW = 1;
  int32_t strideH = 1, strideW = 1;
  int32_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  // Average pooling: divide by the full window (true) or only the elements inside the image.
  bool countIncludePad = false;
  // Output size rounds up instead of down (ONNX ceil_mode).
  bool ceilMode = false;
};

enum class ElementwiseOp : int32_t {
  kADD = 0,
  kSUB = 1,
  kMUL = 2,
  kDIV = 3,
  kMAX = 4,
  kMIN = 5,
  kPOW = 6,
  kEQUAL = 7,  // comparisons give kBOOL
  kLESS = 8,
  kGREATER = 9,
  kPRELU = 10,  // a < 0 ? a * b : a (b is the slope, broadcast)
};

// Two inputs of equal rank or broadcastable in numpy's rules (trailing dims aligned, size 1
// stretches).
struct ElementwiseParams {
  ElementwiseOp op = ElementwiseOp::kADD;
};

enum class ActivationType : int32_t {
  kRELU = 0,
  kLEAKY_RELU = 1,  // x < 0 ? alpha * x : x
  kSIGMOID = 2,
  kTANH = 3,
  kCLIP = 4,          // min(max(x, alpha), beta)
  kHARD_SWISH = 5,    // x * min(max(x + 3, 0), 6) / 6
  kELU = 6,           // x < 0 ? alpha * (exp(x) - 1) : x
  kSELU = 7,          // beta * (x <= 0 ? alpha * (exp(x) - 1) : x)   (beta is ONNX gamma)
  kSOFTPLUS = 8,      // log(1 + exp(x))
  kHARD_SIGMOID = 9,  // max(0, min(1, alpha * x + beta))
  kEXP = 10,
  kLOG = 11,
  kSQRT = 12,
  kNEG = 13,
  kABS = 14,
  kRECIPROCAL = 15,
  kERF = 16,
  kNOT = 17,  // logical not, kBOOL in and out
};

struct ActivationParams {
  ActivationType type = ActivationType::kRELU;
  float alpha = 0.f;
  float beta = 0.f;
};

// Batched matrix product in numpy matmul rules: the last two dims multiply, leading dims broadcast.
struct MatrixMultiplyParams {
  bool transposeA = false;
  bool transposeB = false;
};

// ONNX Gemm: A [M,K] (or [K,M] transposed), B [K,N] (or [N,K]), optional C broadcastable to [M,N].
struct GemmParams {
  float alpha = 1.f;
  float beta = 1.f;
  bool transposeA = false;
  bool transposeB = false;
};

struct SoftmaxParams {
  int32_t axis = -1;  // negative counts from the end
  bool log = false;   // LogSoftmax
};

struct ConcatenationParams {
  int32_t axis = 0;  // negative counts from the end
};

// TensorRT's shuffle: an optional transpose, an optional reshape, an optional second transpose.
// Reshape dims: 0 copies the input dim at that index, -1 is inferred (at most one).
struct ShuffleParams {
  bool hasFirstTranspose = false;
  int32_t firstTranspose[Dims::kMaxDims] = {};
  bool hasReshape = false;
  Dims reshapeDims;
  bool hasSecondTranspose = false;
  int32_t secondTranspose[Dims::kMaxDims] = {};
};

enum class ReduceOp : int32_t {
  kSUM = 0,
  kMEAN = 1,
  kMAX = 2,
  kARGMAX = 3,  // exactly one axis; output kINT64, the first index of the maximum
};

struct ReduceParams {
  ReduceOp op = ReduceOp::kSUM;
  uint32_t axesMask = 0;  // bit i set: reduce dim i
  bool keepDims = true;
};

// ONNX Where: inputs condition (kBOOL), x, y, all broadcast together; output has x's type.
struct SelectParams {};

// ONNX Gather: inputs data, indices (kINT32 or kINT64; negative indices count from the end;
// an index out of range is an error at run time, never an out-of-bounds read).
struct GatherParams {
  int32_t axis = 0;
};

// A strided slice with everything resolved: on axis i, output element j reads input element
// start[i] + j * step[i], for j < outputDims.d[i]. Every element read must be inside the input.
struct SliceParams {
  Dims starts;
  Dims steps;  // non-zero, may be negative
  Dims outputDims;
};

enum class PaddingMode : int32_t { kCONSTANT = 0, kREFLECT = 1, kEDGE = 2 };

// Pads every axis: before[i] elements in front of axis i and after[i] behind (both >= 0).
struct PaddingParams {
  PaddingMode mode = PaddingMode::kCONSTANT;
  float value = 0.f;  // kCONSTANT
  int64_t before[Dims::kMaxDims] = {};
  int64_t after[Dims::kMaxDims] = {};
};

enum class ResizeMode : int32_t { kNEAREST = 0, kLINEAR = 1 };
// How an output coordinate maps to an input one (ONNX coordinate_transformation_mode).
enum class ResizeCoordinates : int32_t {
  kHALF_PIXEL = 0,            // (x + 0.5) / scale - 0.5
  kASYMMETRIC = 1,            // x / scale
  kALIGN_CORNERS = 2,         // x * (in - 1) / (out - 1)
  kPYTORCH_HALF_PIXEL = 3,    // out > 1 ? (x + 0.5) / scale - 0.5 : 0
  kTF_HALF_PIXEL_FOR_NN = 4,  // (x + 0.5) / scale
};
// Nearest mode's rounding of the input coordinate (ONNX nearest_mode).
enum class ResizeRounding : int32_t {
  kROUND_PREFER_FLOOR = 0,
  kROUND_PREFER_CEIL = 1,
  kFLOOR = 2,
  kCEIL = 3,
};

// Resizes any axes: outputDims is the result; scales[i] is the factor ONNX uses in the
// coordinate transform of axis i (output / input when the model gave sizes).
struct ResizeParams {
  ResizeMode mode = ResizeMode::kNEAREST;
  ResizeCoordinates coordinates = ResizeCoordinates::kHALF_PIXEL;
  ResizeRounding rounding = ResizeRounding::kROUND_PREFER_FLOOR;
  float scales[Dims::kMaxDims] = {};
  Dims outputDims;
};

// Repeats the input repeats.d[i] times along axis i (ONNX Tile).
struct TileParams {
  Dims repeats;
};

// Broadcasts the input to `shape` in numpy's rules (ONNX Expand: the output is the broadcast of
// the input's shape and `shape`).
struct ExpandParams {
  Dims shape;
};

// Transposed 2-D convolution (ONNX ConvTranspose) over [N, C, H, W] with weights
// [C, outChannels/groups, kernelH, kernelW] and optional bias [outChannels]. Output
// OH = strideH*(H-1) + outputPaddingH + dilationH*(kernelH-1) + 1 - padTop - padBottom.
struct DeconvolutionParams {
  int32_t outChannels = 0;
  int32_t kernelH = 1, kernelW = 1;
  int32_t strideH = 1, strideW = 1;
  int32_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int32_t dilationH = 1, dilationW = 1;
  int32_t groups = 1;
  int32_t outputPaddingH = 0, outputPaddingW = 0;
};

// ONNX InstanceNormalization: inputs x [N, C, ...], scale [C], bias [C]; each (n, c) slice is
// normalised over its spatial elements.
struct NormalizationParams {
  float epsilon = 1e-5f;
};

// Local response normalisation across channels (ONNX LRN).
struct LrnParams {
  int32_t size = 1;
  float alpha = 1e-4f;
  float beta = 0.75f;
  float bias = 1.f;
};

enum class RoiAlignMode : int32_t { kAVERAGE = 0, kMAX = 1 };

// ONNX RoiAlign: inputs X [N, C, H, W], rois [R, 4] as (x1, y1, x2, y2), batch_indices [R]
// (kINT32 or kINT64). Output [R, C, outputHeight, outputWidth].
struct RoiAlignParams {
  RoiAlignMode mode = RoiAlignMode::kAVERAGE;
  int32_t outputHeight = 1, outputWidth = 1;
  int32_t samplingRatio = 0;  // 0: adaptive, ceil(roi size / output size)
  float spatialScale = 1.f;
  bool halfPixel =
      true;  // coordinate_transformation_mode half_pixel (opset 16), else output_half_pixel
};

// Inserted by the builder where neighbours disagree on type or format.
struct ReformatParams {
  DataType outputType = DataType::kFLOAT;
  TensorFormat outputFormat = TensorFormat::kLINEAR;
};

}  // namespace kiln
