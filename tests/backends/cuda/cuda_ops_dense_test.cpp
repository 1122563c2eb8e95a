// The dense family of the CUDA backend against the CPU reference: convolution, deconvolution,
// pooling, matrix multiply, gemm (see cuda_ops_test_util.h for the two modes).
#include <gtest/gtest.h>

#include <random>

#include "backends/cuda/conv_geometry.h"
#include "backends/cuda/cuda_ops_test_util.h"
#include "backends/cuda/kernel.h"
#include "ops/convolution/convolution_cuda.h"
#include "ops/op_table.h"

namespace kiln::testing {
namespace {

const std::vector<TensorFormat> kBothFormats = {TensorFormat::kLINEAR,
                                                TensorFormat::kCHANNELS_LAST};

OpInput data(std::initializer_list<int64_t> dims) { return OpInput{makeDims(dims)}; }
OpInput weights(std::initializer_list<int64_t> dims) {
  OpInput in{makeDims(dims)};
  in.constant = true;
  return in;
}

struct ConvSpec {
  int64_t n = 1, c = 4, h = 9, w = 9;
  int32_t k = 8, kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1, groups = 1;
  int32_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool bias = true;
  // The fused epilogue (kiln/ops/convolution.h): a residual input, an activation (-1: none).
  bool residual = false;
  int32_t activation = -1;
  float alpha = 0.f, beta = 0.f;
  bool weightsFollowFormat = false;  // channels-last weights in the channels-last variant
};

// A CNN's stem: 7x7 over 3 channels, stride 2, padding 3, ReLU, channels-last weights in the
// channels-last variant.
ConvSpec stemSpec(int64_t n, int64_t h, int64_t w, int32_t k) {
  ConvSpec s{.n = n, .c = 3, .h = h, .w = w, .k = k, .kh = 7, .kw = 7, .sh = 2, .sw = 2};
  s.pt = s.pl = s.pb = s.pr = 3;
  s.activation = static_cast<int32_t>(ActivationType::kRELU);
  s.weightsFollowFormat = true;
  return s;
}

OpCase conv(const std::string& name, const ConvSpec& s) {
  ConvolutionParams p;
  p.outChannels = s.k;
  p.kernelH = s.kh;
  p.kernelW = s.kw;
  p.strideH = s.sh;
  p.strideW = s.sw;
  p.dilationH = s.dh;
  p.dilationW = s.dw;
  p.groups = s.groups;
  p.padTop = s.pt;
  p.padLeft = s.pl;
  p.padBottom = s.pb;
  p.padRight = s.pr;
  p.hasResidual = s.residual;
  p.hasActivation = s.activation >= 0;
  if (p.hasActivation) p.activation = static_cast<ActivationType>(s.activation);
  p.activationAlpha = s.alpha;
  p.activationBeta = s.beta;
  OpCase c;
  c.name = "conv_" + name;
  c.type = LayerType::kCONVOLUTION;
  c.params = p;
  c.inputs = {data({s.n, s.c, s.h, s.w}), weights({s.k, s.c / s.groups, s.kh, s.kw})};
  c.inputs[1].constantFollowsFormat = s.weightsFollowFormat;
  if (s.bias) c.inputs.push_back(weights({s.k}));
  if (s.residual) {
    const int64_t oh = (s.h + s.pt + s.pb - s.dh * (s.kh - 1) - 1) / s.sh + 1;
    const int64_t ow = (s.w + s.pl + s.pr - s.dw * (s.kw - 1) - 1) / s.sw + 1;
    c.inputs.push_back(data({s.n, s.k, oh, ow}));
  }
  c.formats = kBothFormats;
  // cuDNN sums in its own order (and may use Winograd/FFT); reductions here are up to 200 long.
  c.fp32Rel = 1e-4f;
  c.fp32Abs = 1e-4f;
  return c;
}

struct DeconvSpec {
  int64_t n = 1, c = 4, h = 5, w = 6;
  int32_t k = 6, kh = 3, kw = 3, sh = 2, sw = 2, dh = 1, dw = 1, groups = 1;
  int32_t pt = 1, pl = 1, pb = 1, pr = 1, oph = 1, opw = 1;
  bool bias = true;
};

OpCase deconv(const std::string& name, const DeconvSpec& s) {
  DeconvolutionParams p;
  p.outChannels = s.k;
  p.kernelH = s.kh;
  p.kernelW = s.kw;
  p.strideH = s.sh;
  p.strideW = s.sw;
  p.dilationH = s.dh;
  p.dilationW = s.dw;
  p.groups = s.groups;
  p.padTop = s.pt;
  p.padLeft = s.pl;
  p.padBottom = s.pb;
  p.padRight = s.pr;
  p.outputPaddingH = s.oph;
  p.outputPaddingW = s.opw;
  OpCase c;
  c.name = "deconv_" + name;
  c.type = LayerType::kDECONVOLUTION;
  c.params = p;
  c.inputs = {data({s.n, s.c, s.h, s.w}), weights({s.c, s.k / s.groups, s.kh, s.kw})};
  if (s.bias) c.inputs.push_back(weights({s.k}));
  c.formats = kBothFormats;
  c.fp32Rel = 1e-4f;  // cuDNN's summation order
  c.fp32Abs = 1e-4f;
  return c;
}

OpCase pool(const std::string& name, PoolingParams p, std::initializer_list<int64_t> dims) {
  OpCase c;
  c.name = "pool_" + name;
  c.type = LayerType::kPOOLING;
  c.params = p;
  c.inputs = {data(dims)};
  c.formats = kBothFormats;
  return c;
}

PoolingParams poolParams(PoolingType type, int32_t k, int32_t s, int32_t pt, int32_t pl, int32_t pb,
                         int32_t pr, bool includePad, bool ceil) {
  PoolingParams p;
  p.type = type;
  p.kernelH = p.kernelW = k;
  p.strideH = p.strideW = s;
  p.padTop = pt;
  p.padLeft = pl;
  p.padBottom = pb;
  p.padRight = pr;
  p.countIncludePad = includePad;
  p.ceilMode = ceil;
  return p;
}

OpCase matmul(const std::string& name, std::initializer_list<int64_t> a,
              std::initializer_list<int64_t> b, bool ta, bool tb, bool constantB = false) {
  MatrixMultiplyParams p;
  p.transposeA = ta;
  p.transposeB = tb;
  OpCase c;
  c.name = "matmul_" + name;
  c.type = LayerType::kMATRIX_MULTIPLY;
  c.params = p;
  c.inputs = {data(a), constantB ? weights(b) : data(b)};
  c.fp32Rel = 1e-4f;  // cuBLAS's summation order (split-K) over k up to 70
  c.fp32Abs = 1e-4f;
  return c;
}

OpCase gemm(const std::string& name, int64_t m, int64_t n, int64_t k, bool ta, bool tb, float alpha,
            float beta, std::vector<int64_t> cDims, bool hasC = true) {
  GemmParams p;
  p.transposeA = ta;
  p.transposeB = tb;
  p.alpha = alpha;
  p.beta = beta;
  OpCase c;
  c.name = "gemm_" + name;
  c.type = LayerType::kGEMM;
  c.params = p;
  c.inputs = {
      data(ta ? std::initializer_list<int64_t>{k, m} : std::initializer_list<int64_t>{m, k}),
      weights(tb ? std::initializer_list<int64_t>{n, k} : std::initializer_list<int64_t>{k, n})};
  if (hasC) {
    OpInput in;
    in.dims.nbDims = static_cast<int32_t>(cDims.size());
    for (size_t i = 0; i < cDims.size(); ++i) in.dims.d[i] = cDims[i];
    in.constant = true;
    c.inputs.push_back(in);
  }
  c.fp32Rel = 1e-4f;  // cuBLAS's summation order
  c.fp32Abs = 1e-4f;
  return c;
}

std::vector<OpCase> denseCases() {
  std::vector<OpCase> cases;
  // Convolution.
  cases.push_back(conv("1x1", {.n = 2, .c = 8, .h = 7, .w = 5, .k = 6, .kh = 1, .kw = 1}));
  cases.push_back(conv("3x3_pad1", {.pt = 1, .pl = 1, .pb = 1, .pr = 1}));
  cases.push_back(conv("3x3_nobias", {.c = 3, .h = 11, .w = 7, .k = 5, .bias = false}));
  cases.push_back(conv("5x5_pad2", {.n = 2,
                                    .c = 8,
                                    .h = 13,
                                    .w = 10,
                                    .k = 4,
                                    .kh = 5,
                                    .kw = 5,
                                    .pt = 2,
                                    .pl = 2,
                                    .pb = 2,
                                    .pr = 2}));
  cases.push_back(conv(
      "stride2",
      {.c = 6, .h = 15, .w = 12, .k = 7, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1}));
  cases.push_back(
      conv("dilation2", {.h = 13, .w = 11, .dh = 2, .dw = 2, .pt = 2, .pl = 2, .pb = 2, .pr = 2}));
  cases.push_back(
      conv("groups2", {.c = 8, .k = 6, .groups = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1}));
  cases.push_back(conv(
      "depthwise",
      {.n = 2, .c = 8, .h = 10, .w = 9, .k = 8, .groups = 8, .pt = 1, .pl = 1, .pb = 1, .pr = 1}));
  // Asymmetric padding: cuDNN runs the first (same extent with the leading pad), declines the
  // second; the reference runs both.
  cases.push_back(conv("asym_pad_same_extent",
                       {.h = 10, .w = 10, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .pb = 0, .pr = 0}));
  cases.push_back(conv(
      "asym_pad", {.h = 8, .w = 9, .k = 5, .kh = 3, .kw = 2, .pt = 0, .pl = 1, .pb = 2, .pr = 0}));
  cases.push_back(conv("rect_kernel_stride", {.c = 5,
                                              .h = 12,
                                              .w = 17,
                                              .k = 3,
                                              .kh = 2,
                                              .kw = 4,
                                              .sh = 3,
                                              .sw = 2,
                                              .pt = 1,
                                              .pl = 0,
                                              .pb = 1,
                                              .pr = 0,
                                              .bias = false}));
  // The fused epilogue: residual and activation, in every tactic (cublaslt_1x1 takes the 1x1
  // ones channels-last, with the weights in either format).
  constexpr int32_t kRelu = static_cast<int32_t>(ActivationType::kRELU);
  constexpr int32_t kClip = static_cast<int32_t>(ActivationType::kCLIP);
  constexpr int32_t kHardSwish = static_cast<int32_t>(ActivationType::kHARD_SWISH);
  constexpr int32_t kSigmoid = static_cast<int32_t>(ActivationType::kSIGMOID);
  constexpr int32_t kSilu = static_cast<int32_t>(ActivationType::kSILU);
  cases.push_back(conv("1x1_residual_relu", {.n = 2,
                                             .c = 16,
                                             .h = 7,
                                             .w = 5,
                                             .k = 24,
                                             .kh = 1,
                                             .kw = 1,
                                             .residual = true,
                                             .activation = kRelu}));
  cases.push_back(conv("1x1_nhwc_weights_relu6", {.n = 2,
                                                  .c = 8,
                                                  .h = 6,
                                                  .w = 6,
                                                  .k = 16,
                                                  .kh = 1,
                                                  .kw = 1,
                                                  .activation = kClip,
                                                  .beta = 6.f,
                                                  .weightsFollowFormat = true}));
  cases.push_back(
      conv("1x1_nobias_residual",
           {.c = 8, .h = 5, .w = 4, .k = 8, .kh = 1, .kw = 1, .bias = false, .residual = true}));
  cases.push_back(
      conv("1x1_hard_swish",
           {.c = 8, .h = 5, .w = 5, .k = 16, .kh = 1, .kw = 1, .activation = kHardSwish}));
  // SiLU (silu_fusion's activation; cuDNN's graph as its swish mode): EfficientNet's 1x1
  // expansion with a residual, and a 3x3 with NHWC weights.
  cases.push_back(conv("1x1_residual_silu", {.n = 2,
                                             .c = 16,
                                             .h = 6,
                                             .w = 7,
                                             .k = 32,
                                             .kh = 1,
                                             .kw = 1,
                                             .residual = true,
                                             .activation = kSilu}));
  cases.push_back(conv("3x3_silu_nhwc_weights", {.c = 8,
                                                 .h = 9,
                                                 .w = 8,
                                                 .k = 16,
                                                 .pt = 1,
                                                 .pl = 1,
                                                 .pb = 1,
                                                 .pr = 1,
                                                 .activation = kSilu,
                                                 .weightsFollowFormat = true}));
  // MobileNet-shaped 1x1 layers: an expansion over a few hundred pixels (tactics tile them in
  // blocks, the last one partial) with 24 input channels (half-way into a tensor-core product's
  // 16-wide reduction step) and 144 outputs (over two tiles of 64 and a partial third), and a
  // projection with a long reduction and a residual.
  cases.push_back(conv("1x1_expand_relu6_nhwc_weights", {.n = 2,
                                                         .c = 24,
                                                         .h = 9,
                                                         .w = 11,
                                                         .k = 144,
                                                         .kh = 1,
                                                         .kw = 1,
                                                         .activation = kClip,
                                                         .beta = 6.f,
                                                         .weightsFollowFormat = true}));
  cases.push_back(conv("1x1_project_wide_residual",
                       {.c = 136, .h = 10, .w = 7, .k = 24, .kh = 1, .kw = 1, .residual = true}));
  cases.push_back(conv("3x3_residual_relu_nhwc_weights", {.n = 2,
                                                          .c = 8,
                                                          .h = 9,
                                                          .w = 7,
                                                          .pt = 1,
                                                          .pl = 1,
                                                          .pb = 1,
                                                          .pr = 1,
                                                          .residual = true,
                                                          .activation = kRelu,
                                                          .weightsFollowFormat = true}));
  // Stride equal to the kernel, unpadded: patch_gemm (a vision transformer's patch embedding),
  // with rows and columns past the last whole patch left out, and with the full epilogue.
  cases.push_back(conv("patch4_nhwc_weights", {.c = 3,
                                               .h = 17,
                                               .w = 13,
                                               .k = 16,
                                               .kh = 4,
                                               .kw = 4,
                                               .sh = 4,
                                               .sw = 4,
                                               .weightsFollowFormat = true}));
  cases.push_back(conv("patch16_residual_relu_nhwc_weights", {.n = 2,
                                                              .c = 3,
                                                              .h = 32,
                                                              .w = 48,
                                                              .k = 24,
                                                              .kh = 16,
                                                              .kw = 16,
                                                              .sh = 16,
                                                              .sw = 16,
                                                              .residual = true,
                                                              .activation = kRelu,
                                                              .weightsFollowFormat = true}));
  // Few input channels, any stride, padding and dilation: im2col_gemm (a CNN's stem). 7x7 over
  // 3 channels is 147 columns, padded to 152 along with the weights; the large one spans two
  // chunks of the patch matrix in FP32 (16 MiB is 27520 rows of 152 floats), the second ragged,
  // and writes its residual's rows in each.
  cases.push_back(conv("im2col_stem_relu_nhwc_weights", stemSpec(1, 23, 20, 16)));
  cases.push_back(conv("im2col_dilated_nobias_nhwc_weights", {.n = 2,
                                                              .c = 4,
                                                              .h = 11,
                                                              .w = 9,
                                                              .k = 8,
                                                              .dh = 2,
                                                              .dw = 3,
                                                              .pt = 2,
                                                              .pl = 1,
                                                              .pb = 0,
                                                              .pr = 3,
                                                              .bias = false,
                                                              .weightsFollowFormat = true}));
  cases.push_back(conv("im2col_chunks_residual_relu_nhwc_weights", {.n = 4,
                                                                    .c = 3,
                                                                    .h = 170,
                                                                    .w = 170,
                                                                    .k = 8,
                                                                    .kh = 7,
                                                                    .kw = 7,
                                                                    .sh = 2,
                                                                    .sw = 2,
                                                                    .pt = 3,
                                                                    .pl = 3,
                                                                    .pb = 3,
                                                                    .pr = 3,
                                                                    .residual = true,
                                                                    .activation = kRelu,
                                                                    .weightsFollowFormat = true}));
  // ResNet-50's stem at batch 16 (device only, FP16 channels-last as CNN plans run it): cuDNN's
  // fastest algorithm asks for enough workspace there (16 MiB or more) that cudnn_batch2 and
  // cudnn_batch4 run it on halves and quarters of the batch; with a residual as well, which the
  // slices' epilogues take one slice at a time.
  ConvSpec stem = stemSpec(16, 224, 224, 64);
  for (bool residual : {false, true}) {
    stem.residual = residual;
    OpCase c = conv(
        residual ? "stem_batch16_residual_relu_nhwc_weights" : "stem_batch16_relu_nhwc_weights",
        stem);
    c.emulate = false;
    c.floatTypes = {DataType::kHALF};
    c.formats = {TensorFormat::kCHANNELS_LAST};
    cases.push_back(c);
  }
  // NHWC weights reach cudnn_graph (cuDNN's graph API), which also takes asymmetric pads.
  cases.push_back(conv("stride2_asym_pad_nhwc_weights", {.n = 2,
                                                         .c = 8,
                                                         .h = 11,
                                                         .w = 9,
                                                         .k = 16,
                                                         .sh = 2,
                                                         .sw = 2,
                                                         .pt = 0,
                                                         .pl = 1,
                                                         .pb = 2,
                                                         .pr = 0,
                                                         .weightsFollowFormat = true}));
  cases.push_back(conv("groups2_nhwc_weights", {.c = 16,
                                                .k = 16,
                                                .groups = 2,
                                                .pt = 1,
                                                .pl = 1,
                                                .pb = 1,
                                                .pr = 1,
                                                .activation = kRelu,
                                                .weightsFollowFormat = true}));
  cases.push_back(conv("depthwise_nhwc_weights", {.n = 2,
                                                  .c = 16,
                                                  .h = 10,
                                                  .w = 9,
                                                  .k = 16,
                                                  .groups = 16,
                                                  .pt = 1,
                                                  .pl = 1,
                                                  .pb = 1,
                                                  .pr = 1,
                                                  .weightsFollowFormat = true}));
  cases.push_back(conv("stride2_sigmoid", {.c = 6,
                                           .h = 11,
                                           .w = 10,
                                           .k = 8,
                                           .sh = 2,
                                           .sw = 2,
                                           .pt = 1,
                                           .pl = 1,
                                           .pb = 1,
                                           .pr = 1,
                                           .activation = kSigmoid}));
  cases.push_back(conv("depthwise_relu6", {.c = 8,
                                           .h = 8,
                                           .w = 8,
                                           .k = 8,
                                           .groups = 8,
                                           .pt = 1,
                                           .pl = 1,
                                           .pb = 1,
                                           .pr = 1,
                                           .activation = kClip,
                                           .beta = 6.f}));
  // depthwise_vectorized's own: stride 2 with asymmetric padding (MobileNet's downsampling
  // blocks), dilation, a residual without bias, 24 channels (three FP16 vectors, six FP32 ones).
  cases.push_back(conv("depthwise_stride2_relu6_nhwc_weights", {.n = 2,
                                                                .c = 24,
                                                                .h = 13,
                                                                .w = 10,
                                                                .k = 24,
                                                                .sh = 2,
                                                                .sw = 2,
                                                                .groups = 24,
                                                                .pt = 1,
                                                                .pl = 0,
                                                                .pb = 1,
                                                                .pr = 1,
                                                                .activation = kClip,
                                                                .beta = 6.f,
                                                                .weightsFollowFormat = true}));
  cases.push_back(conv("depthwise_dilated_residual_nobias", {.c = 16,
                                                             .h = 9,
                                                             .w = 11,
                                                             .k = 16,
                                                             .dh = 2,
                                                             .dw = 3,
                                                             .groups = 16,
                                                             .pt = 2,
                                                             .pl = 3,
                                                             .pb = 2,
                                                             .pr = 3,
                                                             .bias = false,
                                                             .residual = true}));
  // Deconvolution.
  cases.push_back(deconv("stride2_outpad", {}));
  cases.push_back(deconv("stride2_nobias", {.c = 3,
                                            .k = 4,
                                            .kh = 4,
                                            .kw = 4,
                                            .pt = 1,
                                            .pl = 1,
                                            .pb = 1,
                                            .pr = 1,
                                            .oph = 0,
                                            .opw = 0,
                                            .bias = false}));
  cases.push_back(deconv("groups2", {.n = 2, .c = 4, .k = 6, .groups = 2, .oph = 0, .opw = 1}));
  cases.push_back(deconv("dilation2", {.h = 4,
                                       .w = 5,
                                       .sh = 1,
                                       .sw = 1,
                                       .dh = 2,
                                       .dw = 2,
                                       .pt = 0,
                                       .pl = 0,
                                       .pb = 0,
                                       .pr = 0,
                                       .oph = 0,
                                       .opw = 0}));
  cases.push_back(deconv("asym_pad", {.pt = 0, .pl = 1, .pb = 2, .pr = 0, .oph = 1, .opw = 0}));
  // Pooling.
  using PT = PoolingType;
  cases.push_back(
      pool("max_2x2_s2", poolParams(PT::kMAX, 2, 2, 0, 0, 0, 0, false, false), {2, 3, 8, 9}));
  cases.push_back(pool("max_3x3_s2_pad_ceil", poolParams(PT::kMAX, 3, 2, 1, 1, 1, 1, false, true),
                       {1, 5, 10, 11}));
  cases.push_back(pool("avg_3x3_pad_excl", poolParams(PT::kAVERAGE, 3, 1, 1, 1, 1, 1, false, false),
                       {1, 4, 7, 6}));
  cases.push_back(pool("avg_3x3_s2_pad_incl",
                       poolParams(PT::kAVERAGE, 3, 2, 1, 1, 1, 1, true, false), {2, 3, 9, 8}));
  cases.push_back(pool("avg_3x3_s2_ceil_incl",
                       poolParams(PT::kAVERAGE, 3, 2, 1, 0, 1, 0, true, true), {1, 3, 10, 11}));
  cases.push_back(pool("avg_2x2_s2_ceil_excl",
                       poolParams(PT::kAVERAGE, 2, 2, 0, 1, 1, 0, false, true), {1, 6, 7, 9}));
  cases.push_back(pool("global_max", poolParams(PT::kGLOBAL_MAX, 1, 1, 0, 0, 0, 0, false, false),
                       {2, 5, 7, 6}));
  cases.push_back(pool(
      "global_avg", poolParams(PT::kGLOBAL_AVERAGE, 1, 1, 0, 0, 0, 0, false, false), {2, 5, 7, 6}));
  // Channel counts that are a multiple of the 16-byte vector: channels_last_vectorized takes the
  // channels-last variants.
  cases.push_back(pool("vec_max_3x3_s2_pad", poolParams(PT::kMAX, 3, 2, 1, 1, 1, 1, false, false),
                       {2, 16, 9, 10}));
  cases.push_back(pool("vec_max_3x3_s2_ceil", poolParams(PT::kMAX, 3, 2, 0, 1, 1, 0, false, true),
                       {1, 8, 10, 11}));
  cases.push_back(pool("vec_avg_3x3_pad_excl",
                       poolParams(PT::kAVERAGE, 3, 1, 1, 1, 1, 1, false, false), {1, 8, 7, 6}));
  cases.push_back(pool("vec_avg_2x2_s2_incl",
                       poolParams(PT::kAVERAGE, 2, 2, 1, 1, 0, 0, true, false), {2, 24, 8, 7}));
  cases.push_back(pool("vec_global_avg",
                       poolParams(PT::kGLOBAL_AVERAGE, 1, 1, 0, 0, 0, 0, false, false),
                       {2, 32, 7, 7}));
  cases.push_back(pool("vec_global_max",
                       poolParams(PT::kGLOBAL_MAX, 1, 1, 0, 0, 0, 0, false, false), {1, 16, 5, 6}));
  // Matrix multiply.
  cases.push_back(matmul("2d", {7, 13}, {13, 9}, false, false));
  cases.push_back(matmul("2d_const_b", {16, 70}, {70, 33}, false, false, true));
  cases.push_back(matmul("batched", {3, 5, 11}, {3, 11, 4}, false, false));
  cases.push_back(matmul("broadcast_b", {2, 3, 5, 8}, {8, 6}, false, false));
  cases.push_back(matmul("broadcast_a", {5, 8}, {4, 8, 6}, false, false));
  cases.push_back(matmul("broadcast_both", {2, 1, 5, 8}, {1, 3, 8, 6}, false, false));
  cases.push_back(matmul("transpose_a", {2, 9, 5}, {2, 9, 7}, true, false));
  cases.push_back(matmul("transpose_b", {2, 5, 9}, {2, 7, 9}, false, true));
  cases.push_back(matmul("transpose_both", {3, 9, 5}, {7, 9}, true, true));
  // Gemm.
  cases.push_back(gemm("plain_no_c", 6, 10, 12, false, false, 1.f, 1.f, {}, false));
  cases.push_back(gemm("c_n", 8, 10, 12, false, true, 1.f, 1.f, {10}));
  cases.push_back(gemm("c_m1_alpha_beta", 8, 10, 12, true, false, 0.5f, 2.f, {8, 1}));
  cases.push_back(gemm("c_mn_transposes", 9, 7, 20, true, true, -1.5f, 0.25f, {9, 7}));
  cases.push_back(gemm("c_1n_beta0", 5, 11, 16, false, false, 2.f, 0.f, {1, 11}));
  cases.push_back(gemm("c_scalar", 5, 11, 16, false, true, 1.f, 3.f, {1}));
  return cases;
}

KILN_CUDA_OP_CASES(Dense, denseCases);

// On a GPU the library tactics must accept the common configurations (the harness passes as
// long as any tactic runs, so a cuDNN/cuBLAS tactic that always declined would go unnoticed).
TEST(DenseLibraries, DeviceAcceptCommonConfigs) {
  const std::string why = deviceSkipReason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;
  struct Want {
    OpCase c;
    const char* tactic;
  };
  std::vector<Want> wants;
  for (const OpCase& c : denseCases()) {
    const std::string& n = c.name;
    if (n == "conv_3x3_pad1" || n == "conv_depthwise" || n == "conv_stride2" ||
        n == "conv_asym_pad_same_extent" || n == "deconv_stride2_outpad" || n == "deconv_groups2")
      wants.push_back({c, "cudnn"});
    if (n.rfind("matmul_", 0) == 0 || n.rfind("gemm_", 0) == 0) wants.push_back({c, "cublas"});
  }
  ASSERT_FALSE(wants.empty());
  for (const Want& w : wants) {
    for (DataType t : {DataType::kFLOAT, DataType::kHALF}) {
      for (TensorFormat f : w.c.formats) {
        KernelConfig config;
        config.type = w.c.type;
        config.params = w.c.params;
        std::vector<TensorShape> shapes, outs;
        std::vector<std::vector<uint8_t>> bytes;
        for (const OpInput& in : w.c.inputs) {
          const TensorFormat inF = !in.constant && in.dims.nbDims == 4 ? f : TensorFormat::kLINEAR;
          config.inputs.push_back({in.dims, t, inF, DeviceKind::kCUDA});
          bytes.emplace_back(static_cast<size_t>(volume(in.dims)) * dataTypeSize(t), 0);
          shapes.push_back({in.dims, t});
        }
        for (size_t i = 0; i < bytes.size(); ++i)
          config.constantInputs.push_back(w.c.inputs[i].constant ? bytes[i].data() : nullptr);
        ASSERT_TRUE(inferLayerOutputs(w.c.type, w.c.params, shapes, outs).isOk());
        config.outputs.push_back({outs[0].dims, t,
                                  outs[0].dims.nbDims == 4 ? f : TensorFormat::kLINEAR,
                                  DeviceKind::kCUDA});
        const Tactic* tactic = ops::findTactic(ops::cudaTactics(w.c.type), w.tactic);
        ASSERT_NE(tactic, nullptr);
        std::string whyNot;
        EXPECT_NE(tactic->create(config, &whyNot), nullptr)
            << w.c.name << " " << dataTypeName(t) << " " << formatName(f) << ": " << whyNot;
      }
    }
  }
}

// The CUDA configuration of a convolution case's channels-last variant in type t, as the builder
// gives a CNN (constant weights channels-last where the case says so), its constants zero bytes
// held in `bytes`.
KernelConfig channelsLastConfig(const OpCase& c, DataType t,
                                std::vector<std::vector<uint8_t>>& bytes) {
  KernelConfig config;
  config.type = c.type;
  config.params = c.params;
  std::vector<TensorShape> shapes, outs;
  bytes.clear();
  for (const OpInput& in : c.inputs) {
    const bool cl = in.dims.nbDims == 4 && (!in.constant || in.constantFollowsFormat);
    config.inputs.push_back(
        {in.dims, t, cl ? TensorFormat::kCHANNELS_LAST : TensorFormat::kLINEAR, DeviceKind::kCUDA});
    bytes.emplace_back(static_cast<size_t>(volume(in.dims)) * dataTypeSize(t), 0);
    shapes.push_back({in.dims, t});
  }
  for (size_t i = 0; i < bytes.size(); ++i)
    config.constantInputs.push_back(c.inputs[i].constant ? bytes[i].data() : nullptr);
  EXPECT_TRUE(inferLayerOutputs(c.type, c.params, shapes, outs).isOk()) << c.name;
  config.outputs.push_back({outs[0].dims, t, TensorFormat::kCHANNELS_LAST, DeviceKind::kCUDA});
  return config;
}

// depthwise_vectorized takes every 3x3 depthwise case's channels-last variant in FP32 and FP16
// (no GPU needed to make it), and says why not to a dense convolution; the emulated harness then
// runs it against the reference in CI.
TEST(DepthwiseVectorized, TakesTheDepthwiseCasesAndSaysWhyNotToOthers) {
  const Tactic* tactic =
      ops::findTactic(ops::cudaTactics(LayerType::kCONVOLUTION), "depthwise_vectorized");
  ASSERT_NE(tactic, nullptr);
  int taken = 0;
  for (const OpCase& c : denseCases()) {
    const bool depthwise = c.name.rfind("conv_depthwise", 0) == 0;
    if (!depthwise && c.name != "conv_3x3_pad1") continue;
    for (DataType t : {DataType::kFLOAT, DataType::kHALF}) {
      std::vector<std::vector<uint8_t>> bytes;
      const KernelConfig config = channelsLastConfig(c, t, bytes);
      std::string whyNot;
      const bool made = tactic->create(config, &whyNot) != nullptr;
      EXPECT_EQ(made, depthwise) << c.name << " " << dataTypeName(t) << ": " << whyNot;
      if (!depthwise) {
        EXPECT_NE(whyNot.find("3x3 depthwise"), std::string::npos) << whyNot;
      }
      taken += made;
    }
  }
  EXPECT_EQ(taken, 10);  // five depthwise cases, two types
}

// The channels-last tactics on a GPU: cudnn_graph takes every NHWC-weights convolution case in
// FP16 (in FP32 cuDNN 9's heuristic offered only TF32 engines on the H200, which kiln refuses),
// cublaslt_1x1 the 1x1 ones in FP32 and FP16 (with the tensors as the builder gives a CNN), and
// patch_gemm the ones whose stride is their kernel, im2col_gemm the ones over few channels.
TEST(DenseLibraries, DeviceChannelsLastTacticsAccept) {
  const std::string why = deviceSkipReason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;
  int checked = 0;
  for (const OpCase& c : denseCases()) {
    const bool nhwcWeights = c.name.find("nhwc_weights") != std::string::npos;
    const bool oneByOne = c.name.rfind("conv_1x1", 0) == 0;
    if (!nhwcWeights && !oneByOne) continue;
    for (DataType t : {DataType::kFLOAT, DataType::kHALF}) {
      std::vector<std::vector<uint8_t>> bytes;
      const KernelConfig config = channelsLastConfig(c, t, bytes);
      const bool patches = c.name.rfind("conv_patch", 0) == 0;
      const bool im2col = c.name.rfind("conv_im2col", 0) == 0;
      for (const char* name : {"cudnn_graph", "cublaslt_1x1", "patch_gemm", "im2col_gemm"}) {
        const std::string n = name;
        const bool wanted = n == "cudnn_graph"    ? nhwcWeights && t == DataType::kHALF
                            : n == "cublaslt_1x1" ? oneByOne
                            : n == "patch_gemm"   ? patches
                                                  : im2col;
        if (!wanted) continue;
        const Tactic* tactic = ops::findTactic(ops::cudaTactics(c.type), name);
        ASSERT_NE(tactic, nullptr) << name;
        std::string whyNot;
        EXPECT_NE(tactic->create(config, &whyNot), nullptr)
            << c.name << " " << dataTypeName(t) << ": " << whyNot;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 22);
}

// cudnn_graph_fused (cuDNN's runtime fusion of the epilogue) takes a ResNet block's last
// convolution in FP16 (3x3, bias, residual, ReLU, channels-last); it declines one in FP32, saying
// why. The op harness checks its results wherever it accepts. (cuDNN 9 on the H200 offered no
// engine at all for the small 1x1 ReLU6 case, 8 to 16 channels over 6x6: nothing to demand there.)
TEST(DenseLibraries, DeviceFusedCudnnGraphTakesTheResNetBlockEpilogue) {
  const std::string why = deviceSkipReason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;
  const Tactic* tactic =
      ops::findTactic(ops::cudaTactics(LayerType::kCONVOLUTION), "cudnn_graph_fused");
  ASSERT_NE(tactic, nullptr);
  int checked = 0;
  for (const OpCase& c : denseCases()) {
    const bool wanted = c.name == "conv_3x3_residual_relu_nhwc_weights";
    if (!wanted && c.name != "conv_stride2_asym_pad_nhwc_weights") continue;
    for (DataType t : {DataType::kFLOAT, DataType::kHALF}) {
      std::vector<std::vector<uint8_t>> bytes;
      const KernelConfig config = channelsLastConfig(c, t, bytes);
      std::string whyNot;
      const bool made = tactic->create(config, &whyNot) != nullptr;
      if (t == DataType::kHALF && wanted) {
        EXPECT_TRUE(made) << c.name << ": " << whyNot;
        ++checked;
      } else if (t == DataType::kFLOAT) {
        EXPECT_FALSE(made) << c.name;
        EXPECT_NE(whyNot.find("fp16 only"), std::string::npos) << whyNot;
      }
    }
  }
  EXPECT_EQ(checked, 1);
}

// im2col_gemm's gather, emulated on the host (so in CI): every chunk of rows of the patch matrix
// against patches read naively from X, with stride, asymmetric padding, dilation and the zero
// columns that round a row up to a multiple of 8; the chunks start mid-image and the last is
// ragged.
TEST(Im2colGather, ChunksMatchNaivePatchesUnderEmulation) {
  cuda::ConvGeometry g;
  g.type = DataType::kFLOAT;
  g.channelsLast = g.weightsChannelsLast = true;
  g.n = 2, g.c = 3, g.h = 9, g.w = 11, g.k = 4;
  g.kh = 3, g.kw = 5, g.sh = 2, g.sw = 1, g.dh = 2, g.dw = 1;
  g.padTop = 1, g.padLeft = 2, g.padBottom = 0, g.padRight = 3;
  g.oh = (g.h + g.padTop + g.padBottom - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  g.ow = (g.w + g.padLeft + g.padRight - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  const int64_t taps = g.kh * g.kw * g.c, columns = (taps + 7) / 8 * 8;
  ASSERT_NE(taps, columns);  // the case has padding columns
  std::vector<float> x(static_cast<size_t>(g.n * g.h * g.w * g.c));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float& v : x) v = dist(rng);
  const int64_t rows = g.n * g.oh * g.ow, chunk = 17;
  cuda::RunContext ctx;
  ctx.emulate = true;
  for (int64_t begin = 0; begin < rows; begin += chunk) {
    const int64_t count = std::min(chunk, rows - begin);
    std::vector<float> p(static_cast<size_t>(count * columns), -7.f);
    ASSERT_TRUE(
        cuda::launchIm2colGather(g.type, x.data(), p.data(), g, columns, begin, count, ctx).isOk());
    for (int64_t r = 0; r < count; ++r) {
      const int64_t row = begin + r, ox = row % g.ow, oy = row / g.ow % g.oh,
                    n = row / (g.ow * g.oh);
      for (int64_t j = 0; j < columns; ++j) {
        float want = 0.f;
        if (j < taps) {
          const int64_t c = j % g.c, kx = j / g.c % g.kw, ky = j / (g.c * g.kw);
          const int64_t iy = oy * g.sh - g.padTop + ky * g.dh,
                        ix = ox * g.sw - g.padLeft + kx * g.dw;
          if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w)
            want = x[static_cast<size_t>(((n * g.h + iy) * g.w + ix) * g.c + c)];
        }
        ASSERT_EQ(p[static_cast<size_t>(r * columns + j)], want)
            << "row " << row << " column " << j;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::testing
