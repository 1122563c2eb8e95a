// CPU pooling: the reference (max, average, global max, global average) over fp32 linear NCHW.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "ops/op.h"
#include "ops/pooling/pooling_semantics.h"

namespace kiln::cpu {
namespace {

struct PoolGeometry {
  PoolingParams p;
  int64_t planes = 0;  // N * C
  int64_t height = 0, width = 0, outHeight = 0, outWidth = 0;
};

bool readGeometry(const KernelConfig& config, const char* tactic, PoolGeometry* g,
                  std::string* whyNot) {
  const auto* p = std::get_if<PoolingParams>(&config.params);
  if (!p || config.type != LayerType::kPOOLING) {
    *whyNot = std::string(tactic) + ": not a pooling configuration";
    return false;
  }
  if (config.inputs.size() != 1 || config.outputs.size() != 1) {
    *whyNot = std::string(tactic) + ": pooling has 1 input and 1 output, config has " +
              std::to_string(config.inputs.size()) + " and " +
              std::to_string(config.outputs.size());
    return false;
  }
  for (const PluginTensorDesc* d : {&config.inputs[0], &config.outputs[0]}) {
    if (d->type != DataType::kFLOAT || d->format != TensorFormat::kLINEAR ||
        d->device != DeviceKind::kCPU) {
      *whyNot = std::string(d == &config.inputs[0] ? "input 0" : "output 0") + " is " +
                dataTypeName(d->type) + " " + formatName(d->format) + "; " + tactic +
                " supports fp32 linear CPU tensors only";
      return false;
    }
  }
  std::vector<TensorShape> out;
  Status s = ops::Pooling::infer(*p, {{config.inputs[0].dims, config.inputs[0].type}}, out);
  if (!s.isOk()) {
    *whyNot = std::string(tactic) + ": " + s.message();
    return false;
  }
  if (out[0].dims != config.outputs[0].dims) {
    *whyNot = std::string(tactic) + ": output dims in the configuration disagree with the input";
    return false;
  }
  const Dims& x = config.inputs[0].dims;
  g->p = *p;
  g->planes = x.d[0] * x.d[1];
  g->height = x.d[2];
  g->width = x.d[3];
  g->outHeight = out[0].dims.d[2];
  g->outWidth = out[0].dims.d[3];
  return true;
}

// The largest element of plane xc (rows of `width`) in rows [h0, h1) and columns [w0, w1).
float maxOf(const float* xc, int64_t width, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t h = h0; h < h1; ++h)
    for (int64_t w = w0; w < w1; ++w) {
      m = ops::pooling::maxStep(m, xc[h * width + w]);
      if (ops::pooling::isNan(m)) return m;
    }
  return m;
}

// Their sum, in double.
double sumOf(const float* xc, int64_t width, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
  double s = 0.0;
  for (int64_t h = h0; h < h1; ++h)
    for (int64_t w = w0; w < w1; ++w) s += xc[h * width + w];
  return s;
}

// Plain loops, sums in double. Windows are clipped to the image (padding never wins a max);
// the average divides by the window clipped to the padded input when countIncludePad, else by
// the window clipped to the image. Shape inference guarantees every window touches the image.
// The window, divisor and NaN rules are the CUDA kernel's (pooling_semantics.h).
Status poolReference(const PoolGeometry& g, const void* const* inputs, void* const* outputs) {
  const auto* x = static_cast<const float*>(inputs[0]);
  auto* y = static_cast<float*>(outputs[0]);
  const PoolingParams& p = g.p;
  const int64_t plane = g.height * g.width;
  const bool global = p.type == PoolingType::kGLOBAL_MAX || p.type == PoolingType::kGLOBAL_AVERAGE;
  const bool isMax = p.type == PoolingType::kMAX || p.type == PoolingType::kGLOBAL_MAX;
  for (int64_t c = 0; c < g.planes; ++c) {
    const float* xc = x + c * plane;
    if (global) {
      y[c] = isMax ? maxOf(xc, g.width, 0, g.height, 0, g.width)
                   : static_cast<float>(sumOf(xc, g.width, 0, g.height, 0, g.width) /
                                        static_cast<double>(plane));
      continue;
    }
    float* yc = y + c * g.outHeight * g.outWidth;
    for (int64_t oh = 0; oh < g.outHeight; ++oh) {
      const ops::pooling::Window wh =
          ops::pooling::window(oh, p.kernelH, p.strideH, p.padTop, g.height);
      for (int64_t ow = 0; ow < g.outWidth; ++ow) {
        const ops::pooling::Window ww =
            ops::pooling::window(ow, p.kernelW, p.strideW, p.padLeft, g.width);
        float v;
        if (isMax) {
          v = maxOf(xc, g.width, wh.first, wh.last, ww.first, ww.last);
        } else {
          const int64_t count = ops::pooling::averageCount(wh, ww, g.height, g.width, p.padBottom,
                                                           p.padRight, p.countIncludePad);
          v = static_cast<float>(sumOf(xc, g.width, wh.first, wh.last, ww.first, ww.last) /
                                 static_cast<double>(count));
        }
        yc[oh * g.outWidth + ow] = v;
      }
    }
  }
  return Status::ok();
}

KernelPtr createReference(const KernelConfig& config, std::string* whyNot) {
  PoolGeometry g;
  if (!readGeometry(config, "reference", &g, whyNot)) return nullptr;
  return makeReferenceKernel<poolReference>(g);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Pooling::cpuTactics() { return cpu::kTactics; }
