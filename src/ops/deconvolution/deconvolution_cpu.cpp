// CPU transposed convolution (ONNX ConvTranspose): sgemm + col2im, and the plain gather-form
// reference (each output element sums, in double, the inputs whose scatter window covers it).
// fp32 linear NCHW. Both index forms are the CUDA kernels' (deconvolution_semantics.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/sgemm.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/deconvolution/deconvolution_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

struct DeconvGeometry {
  DeconvolutionParams p;
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int64_t outHeight = 0, outWidth = 0;
  int64_t groupChannels = 0, groupOutChannels = 0;
  bool hasBias = false;
};

Status deconvReference(const DeconvGeometry& g, const void* const* inputs, void* const* outputs) {
  const auto [x, w, bias, y] = fp32Buffers(inputs, outputs, g.hasBias);
  const DeconvolutionParams& p = g.p;
  const int64_t kernel = static_cast<int64_t>(p.kernelH) * p.kernelW;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t k = 0; k < p.outChannels; ++k) {
      const int64_t grp = k / g.groupOutChannels;
      const int64_t m = k % g.groupOutChannels;
      for (int64_t oh = 0; oh < g.outHeight; ++oh) {
        for (int64_t ow = 0; ow < g.outWidth; ++ow) {
          double sum = bias ? bias[k] : 0.0;
          for (int64_t r = 0; r < p.kernelH; ++r) {
            const int64_t ih =
                ops::deconvolution::sourceIndex(oh, r, p.strideH, p.padTop, p.dilationH, g.height);
            if (ih < 0) continue;
            for (int64_t q = 0; q < p.kernelW; ++q) {
              const int64_t iw = ops::deconvolution::sourceIndex(ow, q, p.strideW, p.padLeft,
                                                                 p.dilationW, g.width);
              if (iw < 0) continue;
              for (int64_t c = 0; c < g.groupChannels; ++c) {
                const int64_t ci = grp * g.groupChannels + c;
                const float xv = x[((n * g.channels + ci) * g.height + ih) * g.width + iw];
                const float wv = w[(ci * g.groupOutChannels + m) * kernel + r * p.kernelW + q];
                sum += static_cast<double>(xv) * wv;
              }
            }
          }
          y[((n * p.outChannels + k) * g.outHeight + oh) * g.outWidth + ow] =
              static_cast<float>(sum);
        }
      }
    }
  }
  return Status::ok();
}

// Fills *g from a configuration the tactics accept (validated shapes, fp32 linear), or says why
// not. Shapes are re-inferred, so a corrupted plan cannot steer run() out of bounds.
bool readGeometry(const KernelConfig& c, DeconvGeometry* g, std::string* whyNot) {
  if (c.inputs.size() != 2 && c.inputs.size() != 3) {
    setWhyNot(whyNot,
              "deconvolution: expects 2 or 3 inputs, got " + std::to_string(c.inputs.size()));
    return false;
  }
  const DeconvolutionParams* p =
      validate<DeconvolutionParams>(c, "deconvolution", -1, &ops::Deconvolution::infer, whyNot);
  if (!p || !allLinear(c, "deconvolution", whyNot)) return false;
  for (const auto* v : {&c.inputs, &c.outputs})
    for (const auto& d : *v)
      if (d.type != DataType::kFLOAT) {
        setWhyNot(whyNot, "deconvolution: the CPU kernels compute in fp32 only");
        return false;
      }
  g->p = *p;
  const Dims& x = c.inputs[0].dims;
  g->batch = x.d[0];
  g->channels = x.d[1];
  g->height = x.d[2];
  g->width = x.d[3];
  g->outHeight = c.outputs[0].dims.d[2];
  g->outWidth = c.outputs[0].dims.d[3];
  g->groupChannels = g->channels / p->groups;
  g->groupOutChannels = p->outChannels / p->groups;
  g->hasBias = c.inputs.size() == 3;
  return true;
}

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  DeconvGeometry g;
  if (!readGeometry(c, &g, whyNot)) return nullptr;
  return makeReferenceKernel<deconvReference>(g);
}

// Per group, the weights [Cg, Mg*kH*kW] transposed times the input planes [Cg, pixels] give
// every output contribution of a tile of input pixels as a column matrix [Mg*kH*kW, tile]
// (sgemm), which col2im then adds into the output. Tiling bounds the workspace.
class DeconvSgemmCol2im final : public Kernel {
 public:
  DeconvSgemmCol2im(const DeconvGeometry& g, const void* constantWeights) : g_(g) {
    rows_ = g_.groupOutChannels * g_.p.kernelH * g_.p.kernelW;
    const int64_t pixels = g_.height * g_.width;
    constexpr int64_t kColumnBudget = 128 * 1024;  // floats of column matrix per tile
    int64_t tile = std::max<int64_t>(64, kColumnBudget / std::max<int64_t>(1, rows_));
    tile_ = std::max<int64_t>(1, std::min(tile / 16 * 16, pixels));
    wsColumns_ = (static_cast<size_t>(rows_ * tile_) * sizeof(float) + 63) / 64 * 64;
    ws_ = wsColumns_ + sgemmWorkspaceSize(rows_, tile_, g_.groupChannels);
    if (constantWeights) {
      const auto* w = static_cast<const float*>(constantWeights);
      for (int64_t grp = 0; grp < g_.p.groups; ++grp)
        packedW_.push_back(PackedMatrix::packA(rows_, g_.groupChannels,
                                               {w + grp * g_.groupChannels * rows_, rows_, true}));
    }
  }

  size_t workspaceSize() const override { return ws_; }

  Status run(const void* const* inputs, void* const* outputs, void* workspace) const override {
    const auto [x, w, bias, y] = fp32Buffers(inputs, outputs, g_.hasBias);
    auto* columns = static_cast<float*>(workspace);
    void* gemmWorkspace = static_cast<char*>(workspace) + wsColumns_;
    const int64_t pixels = g_.height * g_.width;
    const int64_t outPlane = g_.outHeight * g_.outWidth;
    const int64_t outChannels = g_.p.outChannels;
    for (int64_t n = 0; n < g_.batch; ++n) {
      float* yn = y + n * outChannels * outPlane;
      for (int64_t k = 0; k < outChannels; ++k)
        std::fill_n(yn + k * outPlane, outPlane, bias ? bias[k] : 0.f);
      for (int64_t grp = 0; grp < g_.p.groups; ++grp) {
        const float* xg = x + (n * g_.channels + grp * g_.groupChannels) * pixels;
        GemmOperand a;
        if (!packedW_.empty()) {
          a.packed = &packedW_[grp];
        } else {
          a.raw = {w + grp * g_.groupChannels * rows_, rows_, true};
        }
        float* yg = yn + grp * g_.groupOutChannels * outPlane;
        for (int64_t j0 = 0; j0 < pixels; j0 += tile_) {
          const int64_t cols = std::min(tile_, pixels - j0);
          GemmOperand b;
          b.raw = {xg + j0, pixels, false};
          sgemm(rows_, cols, g_.groupChannels, 1.f, a, b, 0.f, columns, cols, gemmWorkspace);
          col2im(columns, j0, cols, yg);
        }
      }
    }
    return Status::ok();
  }

 private:
  // Row (m, r, q) of the column matrix holds, for input pixels j0 .. j0+cols, what they add to
  // output channel m through kernel tap (r, q); each lands where the scatter window puts it.
  void col2im(const float* src, int64_t j0, int64_t cols, float* yg) const {
    const DeconvolutionParams& p = g_.p;
    for (int64_t m = 0; m < g_.groupOutChannels; ++m) {
      float* ym = yg + m * g_.outHeight * g_.outWidth;
      for (int64_t r = 0; r < p.kernelH; ++r) {
        for (int64_t q = 0; q < p.kernelW; ++q, src += cols) {
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t ih = (j0 + j) / g_.width, iw = (j0 + j) % g_.width;
            const int64_t oh =
                ops::deconvolution::targetIndex(ih, r, p.strideH, p.padTop, p.dilationH);
            const int64_t ow =
                ops::deconvolution::targetIndex(iw, q, p.strideW, p.padLeft, p.dilationW);
            if (oh < 0 || oh >= g_.outHeight || ow < 0 || ow >= g_.outWidth) continue;
            ym[oh * g_.outWidth + ow] += src[j];
          }
        }
      }
    }
  }

  DeconvGeometry g_;
  int64_t rows_ = 0, tile_ = 1;
  size_t wsColumns_ = 0, ws_ = 0;
  std::vector<PackedMatrix> packedW_;
};

KernelPtr createSgemmCol2im(const KernelConfig& c, std::string* whyNot) {
  DeconvGeometry g;
  if (!readGeometry(c, &g, whyNot)) return nullptr;
  const void* w = c.constantInputs.size() > 1 ? c.constantInputs[1] : nullptr;
  return std::make_unique<DeconvSgemmCol2im>(g, w);
}

constexpr Tactic kTactics[] = {{"sgemm_col2im", &createSgemmCol2im},
                               {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Deconvolution::cpuTactics() { return cpu::kTactics; }
