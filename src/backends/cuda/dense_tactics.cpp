// The dense family's validation and tactic lists (see dense_common.h for the file map).
//
// A plan may be corrupted, so a tactic accepts a configuration only when it is exactly what
// shape inference gives for its inputs and params: then run() trusts every dim.
#include <string>
#include <variant>
#include <vector>

#include "backends/cuda/dense_common.h"
#include "ops/op_table.h"
#include "ops/shape_checks.h"

namespace kiln::cuda::dense {
namespace {

bool fail(std::string* whyNot, const char* tactic, const std::string& message) {
  if (whyNot) *whyNot = std::string(tactic) + ": " + message;
  return false;
}

// Common checks. `spatial`: input 0 and the output may be channels-last (rank 4, same format);
// every other input (weights, bias, matrices) must be linear.
template <class P>
const P* validate(const KernelConfig& c, LayerType type, const char* layer, const char* tactic,
                  bool spatial, std::string* whyNot) {
  const P* p = std::get_if<P>(&c.params);
  if (!p || c.type != type) {
    fail(whyNot, tactic, std::string("not a ") + layer + " configuration");
    return nullptr;
  }
  if (c.inputs.empty() || c.outputs.size() != 1) {
    fail(whyNot, tactic,
         std::string(layer) + " has inputs and 1 output; the configuration has " +
             std::to_string(c.inputs.size()) + " and " + std::to_string(c.outputs.size()));
    return nullptr;
  }
  const DataType t = c.inputs[0].type;
  if (t != DataType::kFLOAT && t != DataType::kHALF && t != DataType::kBF16) {
    fail(whyNot, tactic,
         std::string("input 0 is ") + dataTypeName(t) + "; fp32, fp16 or bf16 only");
    return nullptr;
  }
  for (size_t i = 0; i <= c.inputs.size(); ++i) {
    const bool isOut = i == c.inputs.size();
    const PluginTensorDesc& d = isOut ? c.outputs[0] : c.inputs[i];
    const std::string what = isOut ? std::string("output 0") : "input " + std::to_string(i);
    if (d.device != DeviceKind::kCUDA) {
      fail(whyNot, tactic, what + " is not in CUDA device memory");
      return nullptr;
    }
    if (d.type != t) {
      fail(whyNot, tactic,
           what + " is " + dataTypeName(d.type) + ", input 0 is " + dataTypeName(t) +
               "; all tensors must share one float type");
      return nullptr;
    }
    const bool mayBeChannelsLast = spatial && (isOut || i == 0);
    if (d.format == TensorFormat::kLINEAR) continue;
    if (d.format == TensorFormat::kCHANNELS_LAST && mayBeChannelsLast && d.dims.nbDims == 4)
      continue;
    fail(whyNot, tactic,
         what + " is " + formatName(d.format) + " " + dimsString(d.dims) + "; " +
             (mayBeChannelsLast ? "linear or rank-4 channels_last only" : "linear only"));
    return nullptr;
  }
  if (spatial && c.inputs[0].format != c.outputs[0].format) {
    fail(whyNot, tactic,
         std::string("input 0 is ") + formatName(c.inputs[0].format) + " but the output is " +
             formatName(c.outputs[0].format));
    return nullptr;
  }
  std::vector<TensorShape> in, out;
  for (const PluginTensorDesc& d : c.inputs) in.push_back({d.dims, d.type});
  const Status s = inferLayerOutputs(type, c.params, in, out);
  if (!s) {
    fail(whyNot, tactic, s.message());
    return nullptr;
  }
  if (out.size() != 1 || out[0].dims != c.outputs[0].dims || out[0].type != c.outputs[0].type) {
    fail(
        whyNot, tactic,
        "output is " + std::string(dataTypeName(c.outputs[0].type)) + " " +
            dimsString(c.outputs[0].dims) + " but the inputs give " +
            (out.empty() ? std::string("nothing")
                         : std::string(dataTypeName(out[0].type)) + " " + dimsString(out[0].dims)));
    return nullptr;
  }
  return p;
}

template <class P>
void fillSpatial(const KernelConfig& c, const P& p, ConvGeometry* g) {
  const Dims& x = c.inputs[0].dims;
  const Dims& y = c.outputs[0].dims;
  g->type = c.inputs[0].type;
  g->channelsLast = c.inputs[0].format == TensorFormat::kCHANNELS_LAST;
  g->hasBias = c.inputs.size() == 3;
  g->n = x.d[0];
  g->c = x.d[1];
  g->h = x.d[2];
  g->w = x.d[3];
  g->k = y.d[1];
  g->oh = y.d[2];
  g->ow = y.d[3];
  g->kh = p.kernelH;
  g->kw = p.kernelW;
  g->sh = p.strideH;
  g->sw = p.strideW;
  g->dh = p.dilationH;
  g->dw = p.dilationW;
  g->padTop = p.padTop;
  g->padLeft = p.padLeft;
  g->padBottom = p.padBottom;
  g->padRight = p.padRight;
  g->groups = p.groups;
  g->cg = g->c / p.groups;
  g->kg = g->k / p.groups;
}

}  // namespace

bool readConvolution(const KernelConfig& c, const char* tactic, ConvGeometry* g,
                     std::string* whyNot) {
  const auto* p =
      validate<ConvolutionParams>(c, LayerType::kCONVOLUTION, "convolution", tactic, true, whyNot);
  if (!p) return false;
  fillSpatial(c, *p, g);
  return true;
}

bool readDeconvolution(const KernelConfig& c, const char* tactic, ConvGeometry* g,
                       std::string* whyNot) {
  const auto* p = validate<DeconvolutionParams>(c, LayerType::kDECONVOLUTION, "deconvolution",
                                                tactic, true, whyNot);
  if (!p) return false;
  fillSpatial(c, *p, g);
  g->outPadH = p->outputPaddingH;
  g->outPadW = p->outputPaddingW;
  return true;
}

bool readPooling(const KernelConfig& c, const char* tactic, PoolGeometry* g, std::string* whyNot) {
  const auto* p = validate<PoolingParams>(c, LayerType::kPOOLING, "pooling", tactic, true, whyNot);
  if (!p) return false;
  const Dims& x = c.inputs[0].dims;
  const Dims& y = c.outputs[0].dims;
  g->type = c.inputs[0].type;
  g->channelsLast = c.inputs[0].format == TensorFormat::kCHANNELS_LAST;
  g->n = x.d[0];
  g->c = x.d[1];
  g->h = x.d[2];
  g->w = x.d[3];
  g->oh = y.d[2];
  g->ow = y.d[3];
  g->isMax = p->type == PoolingType::kMAX || p->type == PoolingType::kGLOBAL_MAX;
  if (p->type == PoolingType::kGLOBAL_MAX || p->type == PoolingType::kGLOBAL_AVERAGE) {
    // One window over the whole image: count = h * w, as the CPU divides by the plane.
    g->kh = g->h;
    g->kw = g->w;
    g->countIncludePad = false;
    return true;
  }
  g->kh = p->kernelH;
  g->kw = p->kernelW;
  g->sh = p->strideH;
  g->sw = p->strideW;
  g->padTop = p->padTop;
  g->padLeft = p->padLeft;
  g->padBottom = p->padBottom;
  g->padRight = p->padRight;
  g->countIncludePad = p->countIncludePad;
  return true;
}

bool readMatmul(const KernelConfig& c, const char* tactic, MatmulGeometry* g, std::string* whyNot) {
  const auto* p = validate<MatrixMultiplyParams>(c, LayerType::kMATRIX_MULTIPLY, "matrix multiply",
                                                 tactic, false, whyNot);
  if (!p) return false;
  const Dims& a = c.inputs[0].dims;
  const Dims& b = c.inputs[1].dims;
  const Dims& y = c.outputs[0].dims;
  g->type = c.inputs[0].type;
  g->transA = p->transposeA;
  g->transB = p->transposeB;
  g->m = y.d[y.nbDims - 2];
  g->n = y.d[y.nbDims - 1];
  g->k = p->transposeA ? a.d[a.nbDims - 2] : a.d[a.nbDims - 1];
  g->lda = a.d[a.nbDims - 1];
  g->ldb = b.d[b.nbDims - 1];
  g->batchRank = y.nbDims - 2;
  g->batchCount = 1;
  // Batch strides of each operand, numpy broadcasting (dims aligned right, size 1 stretches).
  int64_t aStride = g->m * g->k, bStride = g->k * g->n;
  for (int32_t i = g->batchRank - 1; i >= 0; --i) {
    g->batch[i] = y.d[i];
    g->batchCount *= y.d[i];
    const int32_t ia = i - (g->batchRank - (a.nbDims - 2));
    const int32_t ib = i - (g->batchRank - (b.nbDims - 2));
    const int64_t da = ia >= 0 ? a.d[ia] : 1, db = ib >= 0 ? b.d[ib] : 1;
    g->aStride[i] = da == 1 ? 0 : aStride;
    g->bStride[i] = db == 1 ? 0 : bStride;
    aStride *= da;
    bStride *= db;
  }
  return true;
}

bool readGemm(const KernelConfig& c, const char* tactic, GemmGeometry* g, std::string* whyNot) {
  const auto* p = validate<GemmParams>(c, LayerType::kGEMM, "gemm", tactic, false, whyNot);
  if (!p) return false;
  const Dims& a = c.inputs[0].dims;
  const Dims& b = c.inputs[1].dims;
  g->type = c.inputs[0].type;
  g->transA = p->transposeA;
  g->transB = p->transposeB;
  g->m = c.outputs[0].dims.d[0];
  g->n = c.outputs[0].dims.d[1];
  g->k = p->transposeA ? a.d[0] : a.d[1];
  g->lda = a.d[1];
  g->ldb = b.d[1];
  g->alpha = p->alpha;
  g->beta = p->beta;
  g->hasC = c.inputs.size() == 3;
  if (g->hasC) {
    const Dims& cd = c.inputs[2].dims;
    g->cRows = cd.nbDims == 2 ? cd.d[0] : 1;
    g->cCols = cd.nbDims >= 1 ? cd.d[cd.nbDims - 1] : 1;
  }
  return true;
}

namespace {

constexpr Tactic kConvolutionTactics[] = {
    {"cudnn", createConvCudnn},
    {"reference", createConvReference},
};
constexpr Tactic kDeconvolutionTactics[] = {
    {"cudnn", createDeconvCudnn},
    {"reference", createDeconvReference},
};
constexpr Tactic kPoolingTactics[] = {
    {"reference", createPoolReference},
};
constexpr Tactic kMatrixMultiplyTactics[] = {
    {"cublas", createMatmulCublas},
    {"reference", createMatmulReference},
};
constexpr Tactic kGemmTactics[] = {
    {"cublas", createGemmCublas},
    {"reference", createGemmReference},
};

}  // namespace
}  // namespace kiln::cuda::dense

namespace kiln::cuda {

std::span<const Tactic> denseTactics(LayerType type) {
  switch (type) {
    case LayerType::kCONVOLUTION:
      return dense::kConvolutionTactics;
    case LayerType::kDECONVOLUTION:
      return dense::kDeconvolutionTactics;
    case LayerType::kPOOLING:
      return dense::kPoolingTactics;
    case LayerType::kMATRIX_MULTIPLY:
      return dense::kMatrixMultiplyTactics;
    case LayerType::kGEMM:
      return dense::kGemmTactics;
    default:
      return {};
  }
}

}  // namespace kiln::cuda
