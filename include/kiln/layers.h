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
};
constexpr int32_t kLayerTypeCount = 13;
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
  kGLOBAL_MAX = 2,      // kernel = whole spatial extent, output [N, C, 1, 1]
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
};

// Two inputs of equal rank or broadcastable in numpy's rules (trailing dims aligned, size 1 stretches).
struct ElementwiseParams {
  ElementwiseOp op = ElementwiseOp::kADD;
};

enum class ActivationType : int32_t {
  kRELU = 0,
  kLEAKY_RELU = 1,  // x < 0 ? alpha * x : x
  kSIGMOID = 2,
  kTANH = 3,
  kCLIP = 4,        // min(max(x, alpha), beta)
  kHARD_SWISH = 5,  // x * min(max(x + 3, 0), 6) / 6
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
};

struct ReduceParams {
  ReduceOp op = ReduceOp::kSUM;
  uint32_t axesMask = 0;  // bit i set: reduce dim i
  bool keepDims = true;
};

// Inserted by the builder where neighbours disagree on type or format.
struct ReformatParams {
  DataType outputType = DataType::kFLOAT;
  TensorFormat outputFormat = TensorFormat::kLINEAR;
};

}  // namespace kiln
