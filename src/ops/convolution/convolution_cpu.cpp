// CPU convolution: im2col + sgemm, a 1x1 shortcut straight into sgemm, and the plain reference.
// Every tactic takes fp32 linear NCHW only; the builder reformats around it. The fused epilogue
// (residual, activation: kiln/ops/convolution.h) runs as one pass over each image's output after
// its products, while it is still in cache; the reference applies it per element.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/sgemm.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/convolution/convolution_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

// The sizes every convolution kernel works from, taken from a validated configuration.
struct ConvGeometry {
  ConvolutionParams p;
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int64_t outChannels = 0, outHeight = 0, outWidth = 0;
  int64_t groupChannels = 0, groupOutChannels = 0;
  int64_t patch = 0;  // groupChannels * kernelH * kernelW: the reduction length
  bool hasBias = false;
  int32_t residual = -1;  // the residual's input index, -1 without one
};

// The residual's buffer, or nullptr without one.
const float* residualOf(const ConvGeometry& g, const void* const* inputs) {
  return g.residual >= 0 ? static_cast<const float*>(inputs[g.residual]) : nullptr;
}

// Fills *g from the configuration, or says why the configuration is unusable (see
// validateFp32Linear: shapes are re-inferred and compared with the outputs, so a corrupted plan
// cannot steer run() out of bounds).
bool readGeometry(const KernelConfig& config, const char* tactic, ConvGeometry* g,
                  std::string* whyNot) {
  if (config.type != LayerType::kCONVOLUTION) {
    *whyNot = std::string(tactic) + ": not a convolution configuration";
    return false;
  }
  const auto* p = validateFp32Linear<ConvolutionParams>(config, "convolution", tactic,
                                                        ops::Convolution::infer, whyNot);
  if (!p) return false;
  const Dims& x = config.inputs[0].dims;
  const Dims& y = config.outputs[0].dims;
  g->p = *p;
  g->batch = x.d[0];
  g->channels = x.d[1];
  g->height = x.d[2];
  g->width = x.d[3];
  g->outChannels = p->outChannels;
  g->outHeight = y.d[2];
  g->outWidth = y.d[3];
  g->groupChannels = g->channels / p->groups;
  g->groupOutChannels = g->outChannels / p->groups;
  g->patch = g->groupChannels * p->kernelH * p->kernelW;
  const ops::convolution::InputSlots slots(*p, static_cast<int64_t>(config.inputs.size()));
  g->hasBias = slots.bias >= 0;
  g->residual = slots.residual;
  return true;
}

// Plain loops with double accumulation: obviously right, the yardstick for the others. The index
// rule is the CUDA kernels' (convolution_semantics.h).
Status convReference(const ConvGeometry& g, const void* const* inputs, void* const* outputs) {
  const auto [x, w, bias, y] = fp32Buffers(inputs, outputs, g.hasBias);
  const float* residual = residualOf(g, inputs);
  const ConvolutionParams& p = g.p;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t k = 0; k < g.outChannels; ++k) {
      const int64_t c0 =
          ops::convolution::groupFirstChannel(k, g.groupOutChannels, g.groupChannels);
      const float* wk = w + k * g.patch;
      for (int64_t oh = 0; oh < g.outHeight; ++oh) {
        for (int64_t ow = 0; ow < g.outWidth; ++ow) {
          double sum = bias ? bias[k] : 0.0;
          for (int64_t c = 0; c < g.groupChannels; ++c) {
            const float* xc = x + ((n * g.channels) + c0 + c) * g.height * g.width;
            for (int64_t r = 0; r < p.kernelH; ++r) {
              const int64_t ih =
                  ops::convolution::inputIndex(oh, r, p.strideH, p.padTop, p.dilationH);
              if (KILN_CONVOLUTION_IS_PADDING(ih, g.height)) continue;
              for (int64_t q = 0; q < p.kernelW; ++q) {
                const int64_t iw =
                    ops::convolution::inputIndex(ow, q, p.strideW, p.padLeft, p.dilationW);
                if (KILN_CONVOLUTION_IS_PADDING(iw, g.width)) continue;
                sum += static_cast<double>(xc[ih * g.width + iw]) *
                       wk[(c * p.kernelH + r) * p.kernelW + q];
              }
            }
          }
          const int64_t i = ((n * g.outChannels + k) * g.outHeight + oh) * g.outWidth + ow;
          y[i] =
              ops::convolution::epilogue(p, static_cast<float>(sum), residual ? residual[i] : 0.f);
        }
      }
    }
  }
  return Status::ok();
}

// Shared by the sgemm-based kernels: per group, weights [Kg, patch] are the left operand (packed
// once when constant) and the output rows of that group are C.
class ConvGemmBase : public Kernel {
 protected:
  ConvGemmBase(const ConvGeometry& g, const void* constantWeights) : g_(g) {
    if (!constantWeights) return;
    const auto* w = static_cast<const float*>(constantWeights);
    for (int64_t grp = 0; grp < g_.p.groups; ++grp)
      packedW_.push_back(
          PackedMatrix::packA(g_.groupOutChannels, g_.patch,
                              {w + grp * g_.groupOutChannels * g_.patch, g_.patch, false}));
  }

  GemmOperand weights(const float* w, int64_t grp) const {
    GemmOperand a;
    if (!packedW_.empty()) {
      a.packed = &packedW_[grp];
    } else {
      a.raw = {w + grp * g_.groupOutChannels * g_.patch, g_.patch, false};
    }
    return a;
  }

  // Starts image n's output at the bias (sgemm then accumulates with beta 1), or leaves it for
  // sgemm to overwrite (beta 0).
  float prefillBias(const float* bias, float* yn) const {
    if (!bias) return 0.f;
    const int64_t plane = g_.outHeight * g_.outWidth;
    for (int64_t k = 0; k < g_.outChannels; ++k) std::fill_n(yn + k * plane, plane, bias[k]);
    return 1.f;
  }

  // The fused epilogue over image n's output yn once its products are in, when there is one.
  void finishImage(const void* const* inputs, int64_t n, float* yn) const {
    const float* residual = residualOf(g_, inputs);
    if (!residual && !g_.p.hasActivation) return;
    const int64_t size = g_.outChannels * g_.outHeight * g_.outWidth;
    const float* rn = residual ? residual + n * size : nullptr;
    for (int64_t i = 0; i < size; ++i)
      yn[i] = ops::convolution::epilogue(g_.p, yn[i], rn ? rn[i] : 0.f);
  }

  ConvGeometry g_;
  std::vector<PackedMatrix> packedW_;
};

// im2col: the receptive fields of a tile of output pixels become the columns of a [patch, tile]
// matrix in the workspace, then one sgemm per group. Tiling the pixels bounds the workspace and
// keeps the column matrix in cache.
class ConvIm2colSgemm final : public ConvGemmBase {
 public:
  ConvIm2colSgemm(const ConvGeometry& g, const void* constantWeights)
      : ConvGemmBase(g, constantWeights) {
    const int64_t pixels = g_.outHeight * g_.outWidth;
    constexpr int64_t kColumnBudget = 128 * 1024;  // floats of column matrix per tile
    int64_t tile = std::max<int64_t>(64, kColumnBudget / std::max<int64_t>(1, g_.patch));
    tile = tile / 16 * 16;
    tile_ = std::max<int64_t>(1, std::min(tile, pixels));
    wsColumns_ = (static_cast<size_t>(g_.patch * tile_) * sizeof(float) + 63) / 64 * 64;
    ws_ = wsColumns_ + sgemmWorkspaceSize(g_.groupOutChannels, tile_, g_.patch);
  }

  size_t workspaceSize() const override { return ws_; }

  Status run(const void* const* inputs, void* const* outputs, void* workspace) const override {
    const auto [x, w, bias, y] = fp32Buffers(inputs, outputs, g_.hasBias);
    auto* columns = static_cast<float*>(workspace);
    void* gemmWorkspace = static_cast<char*>(workspace) + wsColumns_;
    const int64_t pixels = g_.outHeight * g_.outWidth;
    for (int64_t n = 0; n < g_.batch; ++n) {
      float* yn = y + n * g_.outChannels * pixels;
      const float beta = prefillBias(bias, yn);
      for (int64_t grp = 0; grp < g_.p.groups; ++grp) {
        const float* xg = x + (n * g_.channels + grp * g_.groupChannels) * g_.height * g_.width;
        float* yg = yn + grp * g_.groupOutChannels * pixels;
        for (int64_t j0 = 0; j0 < pixels; j0 += tile_) {
          const int64_t cols = std::min(tile_, pixels - j0);
          im2col(xg, j0, cols, columns);
          GemmOperand b;
          b.raw = {columns, cols, false};
          sgemm(g_.groupOutChannels, cols, g_.patch, 1.f, weights(w, grp), b, beta, yg + j0, pixels,
                gemmWorkspace);
        }
      }
      finishImage(inputs, n, yn);
    }
    return Status::ok();
  }

 private:
  // Row (c, r, q) of the column matrix holds, for output pixels j0 .. j0+cols, the input value
  // under kernel tap (r, q) of channel c, or 0 in the padding.
  void im2col(const float* xg, int64_t j0, int64_t cols, float* dst) const {
    const ConvolutionParams& p = g_.p;
    for (int64_t c = 0; c < g_.groupChannels; ++c) {
      const float* xc = xg + c * g_.height * g_.width;
      for (int64_t r = 0; r < p.kernelH; ++r) {
        for (int64_t q = 0; q < p.kernelW; ++q) {
          int64_t oh = j0 / g_.outWidth, ow = j0 % g_.outWidth;
          for (int64_t j = 0; j < cols;) {
            const int64_t span = std::min(g_.outWidth - ow, cols - j);
            const int64_t ih =
                ops::convolution::inputIndex(oh, r, p.strideH, p.padTop, p.dilationH);
            if (KILN_CONVOLUTION_IS_PADDING(ih, g_.height)) {
              std::fill_n(dst + j, span, 0.f);
            } else {
              // Pixels t in [lo, hi) read inside the row; the rest read padding.
              const float* row = xc + ih * g_.width;
              const int64_t sw = p.strideW;
              const int64_t iw0 = ops::convolution::inputIndex(ow, q, sw, p.padLeft, p.dilationW);
              const int64_t lo = std::min(span, iw0 >= 0 ? 0 : (-iw0 + sw - 1) / sw);
              const int64_t hi = std::max(
                  lo, std::min(span, iw0 >= g_.width ? 0 : (g_.width - iw0 + sw - 1) / sw));
              float* d = dst + j;
              std::fill(d, d + lo, 0.f);
              if (sw == 1) {
                std::copy(row + iw0 + lo, row + iw0 + hi, d + lo);
              } else {
                for (int64_t t = lo; t < hi; ++t) d[t] = row[iw0 + t * sw];
              }
              std::fill(d + hi, d + span, 0.f);
            }
            j += span;
            ++oh;
            ow = 0;
          }
          dst += cols;
        }
      }
    }
  }

  int64_t tile_ = 1;
  size_t wsColumns_ = 0, ws_ = 0;
};

// A 1x1, stride-1, unpadded convolution is already a matrix product: the input planes of a group
// are the [channels, pixels] right operand, no column matrix needed.
class ConvDirect1x1 final : public ConvGemmBase {
 public:
  ConvDirect1x1(const ConvGeometry& g, const void* constantWeights)
      : ConvGemmBase(g, constantWeights) {}

  size_t workspaceSize() const override {
    return sgemmWorkspaceSize(g_.groupOutChannels, g_.height * g_.width, g_.groupChannels);
  }

  Status run(const void* const* inputs, void* const* outputs, void* workspace) const override {
    const auto [x, w, bias, y] = fp32Buffers(inputs, outputs, g_.hasBias);
    const int64_t pixels = g_.height * g_.width;
    for (int64_t n = 0; n < g_.batch; ++n) {
      float* yn = y + n * g_.outChannels * pixels;
      const float beta = prefillBias(bias, yn);
      for (int64_t grp = 0; grp < g_.p.groups; ++grp) {
        GemmOperand b;
        b.raw = {x + (n * g_.channels + grp * g_.groupChannels) * pixels, pixels, false};
        sgemm(g_.groupOutChannels, pixels, g_.groupChannels, 1.f, weights(w, grp), b, beta,
              yn + grp * g_.groupOutChannels * pixels, pixels, workspace);
      }
      finishImage(inputs, n, yn);
    }
    return Status::ok();
  }
};

KernelPtr createIm2colSgemm(const KernelConfig& config, std::string* whyNot) {
  ConvGeometry g;
  if (!readGeometry(config, "im2col_sgemm", &g, whyNot)) return nullptr;
  return std::make_unique<ConvIm2colSgemm>(g, constantInput(config, 1));
}

KernelPtr createDirect1x1(const KernelConfig& config, std::string* whyNot) {
  ConvGeometry g;
  if (!readGeometry(config, "direct_1x1", &g, whyNot)) return nullptr;
  const ConvolutionParams& p = g.p;
  if (p.kernelH != 1 || p.kernelW != 1 || p.strideH != 1 || p.strideW != 1 || p.padTop != 0 ||
      p.padLeft != 0 || p.padBottom != 0 || p.padRight != 0) {
    *whyNot = "direct_1x1: needs a 1x1 kernel, stride 1 and no padding";
    return nullptr;
  }
  return std::make_unique<ConvDirect1x1>(g, constantInput(config, 1));
}

KernelPtr createReference(const KernelConfig& config, std::string* whyNot) {
  ConvGeometry g;
  if (!readGeometry(config, "reference", &g, whyNot)) return nullptr;
  return makeReferenceKernel<convReference>(g);
}

constexpr Tactic kTactics[] = {{"im2col_sgemm", &createIm2colSgemm},
                               {"direct_1x1", &createDirect1x1},
                               {"reference", &createReference, true}};  // per-element epilogue

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Convolution::cpuTactics() { return cpu::kTactics; }
