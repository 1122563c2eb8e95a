// The closed list of kiln's built-in ops: the one place that says which ops exist. The layer-type
// enum (kiln/layers.h), the parameter variant, the name table, every dispatch over ops (shape
// rules, plan codec, CPU and CUDA tactic tables) and the static_asserts that tie their counts
// together are generated from it.
//
// Adding an op: its public parameters (kiln/ops/<op>.h, included below), one line in
// KILN_BUILTIN_OPS, its unit src/ops/<op>/ (shape rule, CPU tactics with the reference last, CUDA
// tactics), its ONNX importer and its tests. README.md, "Adding an op", walks through one.
#pragma once

#include "kiln/ops/activation.h"
#include "kiln/ops/attention.h"
#include "kiln/ops/concatenation.h"
#include "kiln/ops/convolution.h"
#include "kiln/ops/deconvolution.h"
#include "kiln/ops/elementwise.h"
#include "kiln/ops/elementwise_chain.h"
#include "kiln/ops/expand.h"
#include "kiln/ops/gather.h"
#include "kiln/ops/gemm.h"
#include "kiln/ops/group_normalization.h"
#include "kiln/ops/layer_normalization.h"
#include "kiln/ops/linear.h"
#include "kiln/ops/lrn.h"
#include "kiln/ops/matrix_multiply.h"
#include "kiln/ops/normalization.h"
#include "kiln/ops/padding.h"
#include "kiln/ops/pooling.h"
#include "kiln/ops/range.h"
#include "kiln/ops/reduce.h"
#include "kiln/ops/reformat.h"
#include "kiln/ops/resize.h"
#include "kiln/ops/rms_normalization.h"
#include "kiln/ops/roi_align.h"
#include "kiln/ops/scatter_nd.h"
#include "kiln/ops/select.h"
#include "kiln/ops/shape.h"
#include "kiln/ops/shuffle.h"
#include "kiln/ops/slice.h"
#include "kiln/ops/softmax.h"
#include "kiln/ops/tile.h"
#include "kiln/ops/trilu.h"

// X(ENUM, VALUE, Name): LayerType::k<ENUM> = VALUE (part of the plan format: never change or reuse
// a value, only append), parameters kiln::<Name>Params, unit src/ops/<name>/, and <Name> is what
// layerTypeName() says. Values 0 (kCONSTANT) and 11 (kPLUGIN) are the two layer types that are
// not ops (kiln/layers.h).
#define KILN_BUILTIN_OPS(X)                      \
  X(CONVOLUTION, 1, Convolution)                 \
  X(POOLING, 2, Pooling)                         \
  X(ELEMENTWISE, 3, Elementwise)                 \
  X(ACTIVATION, 4, Activation)                   \
  X(MATRIX_MULTIPLY, 5, MatrixMultiply)          \
  X(GEMM, 6, Gemm)                               \
  X(SOFTMAX, 7, Softmax)                         \
  X(CONCATENATION, 8, Concatenation)             \
  X(SHUFFLE, 9, Shuffle)                         \
  X(REDUCE, 10, Reduce)                          \
  X(REFORMAT, 12, Reformat)                      \
  X(SELECT, 13, Select)                          \
  X(GATHER, 14, Gather)                          \
  X(SLICE, 15, Slice)                            \
  X(PADDING, 16, Padding)                        \
  X(RESIZE, 17, Resize)                          \
  X(TILE, 18, Tile)                              \
  X(EXPAND, 19, Expand)                          \
  X(DECONVOLUTION, 20, Deconvolution)            \
  X(NORMALIZATION, 21, Normalization)            \
  X(LRN, 22, LRN)                                \
  X(ROI_ALIGN, 23, RoiAlign)                     \
  X(TRILU, 24, Trilu)                            \
  X(LAYER_NORMALIZATION, 25, LayerNormalization) \
  X(ATTENTION, 26, Attention)                    \
  X(RMS_NORMALIZATION, 27, RMSNormalization)     \
  X(GROUP_NORMALIZATION, 28, GroupNormalization) \
  X(SCATTER_ND, 29, ScatterND)                   \
  X(LINEAR, 30, Linear)                          \
  X(RANGE, 31, Range)                            \
  X(SHAPE, 32, Shape)                            \
  X(ELEMENTWISE_CHAIN, 33, ElementwiseChain)

// How many lines KILN_BUILTIN_OPS has; kiln/layers.h checks it.
#define KILN_BUILTIN_OP_COUNT 32
