// CUDA resize (ONNX Resize, nearest and linear, any axes) and RoiAlign (ONNX opset 16), one
// thread per output element. Semantics are the CPU reference's (backends/cpu/resize.cpp,
// roi_align.cpp) exactly: coordinates, weights and sums are computed in double, in the same
// order, so rounding ties (nearest modes, adaptive grid sizes, samples on a pixel border) fall
// the same way; storage is fp32, fp16 or bf16, values convert to float on load and round once
// on store. (Double costs little on the data-centre GPUs kiln targets, and these kernels are
// memory bound.) Both accept linear and channels-last (rank 4) independently on input and
// output.
#include "backends/cuda/data_movement.h"
#include "backends/cuda/elements.cuh"

namespace kiln::cuda::dm {
namespace {

constexpr int32_t kMaxRank = Dims::kMaxDims;

__host__ __device__ inline double clampD(double x, double lo, double hi) {
  return x < lo ? lo : (hi < x ? hi : x);
}
__host__ __device__ inline int64_t clampI(int64_t x, int64_t lo, int64_t hi) {
  return x < lo ? lo : (hi < x ? hi : x);
}
__host__ __device__ inline bool finite(double x) { return x - x == 0.0; }

// Decodes memory index i of a tensor with `dims` into logical coordinates (channels-last:
// rank 4, memory order N, H, W, C).
__host__ __device__ inline void decode(int64_t i, int32_t rank, const int64_t* dims,
                                       bool channelsLast, int64_t* coord) {
  if (channelsLast) {
    coord[1] = i % dims[1];
    i /= dims[1];
    coord[3] = i % dims[3];
    i /= dims[3];
    coord[2] = i % dims[2];
    coord[0] = i / dims[2];
    return;
  }
  for (int32_t k = rank - 1; k >= 0; --k) {
    coord[k] = i % dims[k];
    i /= dims[k];
  }
}

// Memory offset of logical coordinates.
__host__ __device__ inline int64_t encode(const int64_t* coord, int32_t rank, const int64_t* dims,
                                          bool channelsLast) {
  if (channelsLast)
    return offset4(coord[0], coord[1], coord[2], coord[3], dims[1], dims[2], dims[3], true);
  int64_t off = 0;
  for (int32_t k = 0; k < rank; ++k) off = off * dims[k] + coord[k];
  return off;
}

// ---------------------------------------------------------------------------------------------
// Resize.

struct ResizeLayout {
  int32_t rank = 0;
  int64_t inDims[kMaxRank] = {};
  int64_t outDims[kMaxRank] = {};
  float scales[kMaxRank] = {};
  ResizeMode mode = ResizeMode::kNEAREST;
  ResizeCoordinates coordinates = ResizeCoordinates::kHALF_PIXEL;
  ResizeRounding rounding = ResizeRounding::kROUND_PREFER_FLOOR;
  bool inChannelsLast = false, outChannelsLast = false;
  int64_t count = 0;
};

// Input coordinate of output index x along one axis (the CPU's inputCoordinate, in double).
__host__ __device__ inline double inputCoordinate(ResizeCoordinates mode, int64_t x, int64_t in,
                                                  int64_t out, float scale) {
  const double s =
      scale > 0.f ? static_cast<double>(scale) : static_cast<double>(out) / static_cast<double>(in);
  const double xd = static_cast<double>(x);
  switch (mode) {
    case ResizeCoordinates::kHALF_PIXEL:
      return (xd + 0.5) / s - 0.5;
    case ResizeCoordinates::kASYMMETRIC:
      return xd / s;
    case ResizeCoordinates::kALIGN_CORNERS:
      return out == 1 ? 0.0
                      : xd * static_cast<double>(in - 1) / (static_cast<double>(in) * s - 1.0);
    case ResizeCoordinates::kPYTORCH_HALF_PIXEL:
      return out > 1 ? (xd + 0.5) / s - 0.5 : 0.0;
    case ResizeCoordinates::kTF_HALF_PIXEL_FOR_NN:
      return (xd + 0.5) / s;
  }
  return 0.0;
}

__host__ __device__ inline int64_t nearestIndex(ResizeRounding rounding, double x, int64_t in) {
  x = clampD(x, -1.0, static_cast<double>(in));
  const double fl = floor(x);
  const double frac = x - fl;
  double r = fl;
  if (frac != 0.0) {
    switch (rounding) {
      case ResizeRounding::kROUND_PREFER_FLOOR:
        r = frac <= 0.5 ? fl : fl + 1;
        break;
      case ResizeRounding::kROUND_PREFER_CEIL:
        r = frac < 0.5 ? fl : fl + 1;
        break;
      case ResizeRounding::kFLOOR:
        break;
      case ResizeRounding::kCEIL:
        r = fl + 1;
        break;
    }
  }
  return clampI(static_cast<int64_t>(r), 0, in - 1);
}

template <class T>
struct ResizeOp {
  const T* in;
  T* out;
  ResizeLayout l;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t coord[kMaxRank], lo[kMaxRank], hi[kMaxRank];
    double w[kMaxRank];
    decode(i, l.rank, l.outDims, l.outChannelsLast, coord);
    int32_t active[kMaxRank];
    int32_t nbActive = 0;
    for (int32_t a = 0; a < l.rank; ++a) {
      const int64_t n = l.outDims[a], len = l.inDims[a], o = coord[a];
      double x = inputCoordinate(l.coordinates, o, len, n, l.scales[a]);
      // Only a degenerate scale (align_corners with in * scale == 1) gives NaN; read element 0
      // rather than convert NaN to an integer.
      if (!(x == x)) x = 0.0;
      w[a] = 0.0;
      if (l.mode == ResizeMode::kNEAREST) {
        lo[a] = hi[a] = nearestIndex(l.rounding, x, len);
      } else if (n == len && (l.scales[a] == 1.f || l.scales[a] == 0.f)) {
        lo[a] = hi[a] = o;  // an axis that keeps its size and scale is copied, not blended
      } else {
        const double c = clampD(x, 0.0, static_cast<double>(len - 1));
        lo[a] = static_cast<int64_t>(floor(c));
        hi[a] = lo[a] + 1 < len - 1 ? lo[a] + 1 : len - 1;
        w[a] = c - static_cast<double>(lo[a]);
        if (w[a] != 0.0) active[nbActive++] = a;
      }
    }
    // The CPU blends over the axes where any output has a weight; axes whose weight is 0 for
    // this element only multiply by 1 or skip a zero-weight corner there, so blending over this
    // element's own weighted axes, in the same order, gives the same double sum.
    double sum = 0.0;
    int64_t pick[kMaxRank];
    const int64_t corners = int64_t{1} << nbActive;
    for (int64_t corner = 0; corner < corners; ++corner) {
      double weight = 1.0;
      for (int32_t a = 0; a < l.rank; ++a) pick[a] = lo[a];
      for (int32_t k = 0; k < nbActive; ++k) {
        const int32_t a = active[k];
        if (corner >> k & 1) {
          pick[a] = hi[a];
          weight *= w[a];
        } else {
          weight *= 1.0 - w[a];
        }
      }
      if (weight != 0.0)
        sum += weight *
               static_cast<double>(toFloat(in[encode(pick, l.rank, l.inDims, l.inChannelsLast)]));
    }
    out[i] = fromFloat<T>(static_cast<float>(sum));
  }
};

class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(DataType type, ResizeLayout l) : type_(type), l_(l) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = Status::ok();
    dispatchFloat(type_, [&](auto t) {
      using T = decltype(t);
      s = launchElements(ResizeOp<T>{static_cast<const T*>(in[0]), static_cast<T*>(out[0]), l_},
                         l_.count, ctx, "resize");
    });
    return s;
  }

 private:
  DataType type_;
  ResizeLayout l_;
};

}  // namespace

std::unique_ptr<Kernel> createResize(const KernelConfig& c, std::string* whyNot) {
  const ResizeParams* p = validate<ResizeParams>(c, "resize", 1, false, whyNot);
  if (!p) return nullptr;
  const PluginTensorDesc& in = c.inputs[0];
  const PluginTensorDesc& out = c.outputs[0];
  if (!isFloatType(in.type)) {  // inference already requires it; kept for the dispatch below
    setWhyNot(whyNot,
              std::string("resize: needs fp32, fp16 or bf16, got ") + dataTypeName(in.type));
    return nullptr;
  }
  ResizeLayout l;
  l.rank = in.dims.nbDims;
  for (int32_t a = 0; a < l.rank; ++a) {
    l.inDims[a] = in.dims.d[a];
    l.outDims[a] = out.dims.d[a];
    l.scales[a] = p->scales[a];
  }
  l.mode = p->mode;
  l.coordinates = p->coordinates;
  l.rounding = p->rounding;
  l.inChannelsLast = in.format == TensorFormat::kCHANNELS_LAST;
  l.outChannelsLast = out.format == TensorFormat::kCHANNELS_LAST;
  l.count = volume(out.dims);
  return std::make_unique<ResizeKernel>(in.type, l);
}

// ---------------------------------------------------------------------------------------------
// RoiAlign: bilinear samples on a regular grid in each output bin, averaged or maxed (max mode:
// per sample the largest of the four weighted corners, then the largest over the bin, as the
// ONNX reference and onnxruntime do; a NaN among them wins, as on the CPU).
//
// Bad rois. The CPU reference checks every roi before writing and fails run() when a batch
// index is outside [0, N), a coordinate is not finite, or an adaptive grid would exceed 2^24
// samples per bin. Here run() cannot see device data without synchronizing, so such a roi's
// outputs are written as 0 (nothing is read out of bounds and no thread loops for ages) and a
// 32-bit error flag in the workspace is set; run() resets it with cudaMemsetAsync first, so a
// caller that synchronizes may read workspace[0] != 0 as "some roi was invalid".

namespace {

constexpr double kMaxGridAxis = 16777216.0;
constexpr double kMaxGridSamples = 16777216.0;

struct RoiAlignLayout {
  int64_t N = 0, C = 0, H = 0, W = 0, R = 0;
  int64_t oh = 1, ow = 1;
  int32_t samplingRatio = 0;
  double spatialScale = 1.0;
  bool halfPixel = true;
  bool maxMode = false;
  bool xChannelsLast = false, outChannelsLast = false;
  bool int64Indices = false;
  DataType roiType = DataType::kFLOAT;
  int64_t count = 0;
};

__host__ __device__ inline float loadFloat(const void* p, int64_t i, DataType t) {
  switch (t) {
    case DataType::kHALF:
      return toFloat(static_cast<const __half*>(p)[i]);
    case DataType::kBF16:
      return toFloat(static_cast<const __nv_bfloat16*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

// The CPU's sampleRange: sample indices [lo, hi) of a grid that may lie inside the map.
__host__ __device__ inline void sampleRange(double base, double step, int64_t grid, int64_t extent,
                                            int64_t& lo, int64_t& hi) {
  lo = 0;
  hi = grid;
  if (grid == 0 || step == 0.0) return;
  double a = (-1.0 - base) / step - 0.5, b = (static_cast<double>(extent) - base) / step - 0.5;
  if (!finite(a) || !finite(b)) return;
  if (a > b) {
    const double t = a;
    a = b;
    b = t;
  }
  const double g = static_cast<double>(grid);
  lo = static_cast<int64_t>(clampD(floor(a) - 1.0, 0.0, g));
  const int64_t h = static_cast<int64_t>(clampD(ceil(b) + 2.0, 0.0, g));
  hi = lo > h ? lo : h;
}

template <class T>
struct RoiAlignOp {
  const T* x;
  const void* rois;
  const void* batchIndices;
  T* out;
  int32_t* errorFlag;
  RoiAlignLayout l;

  __host__ __device__ void fail(int64_t i) const {
    out[i] = fromFloat<T>(0.f);
    *errorFlag = 1;  // every writer stores the same value: a benign race
  }

  __host__ __device__ void operator()(int64_t i) const {
    const int64_t dims[4] = {l.R, l.C, l.oh, l.ow};
    int64_t coord[4];
    decode(i, 4, dims, l.outChannelsLast, coord);
    const int64_t r = coord[0], c = coord[1], ph = coord[2], pw = coord[3];
    const int64_t b = l.int64Indices ? static_cast<const int64_t*>(batchIndices)[r]
                                     : static_cast<const int32_t*>(batchIndices)[r];
    float roi[4];
    for (int k = 0; k < 4; ++k) roi[k] = loadFloat(rois, r * 4 + k, l.roiType);
    if (b < 0 || b >= l.N) return fail(i);
    for (int k = 0; k < 4; ++k)
      if (!finite(roi[k])) return fail(i);
    if (l.H * l.W == 0) {  // no pixels: every sample falls outside the map
      out[i] = fromFloat<T>(0.f);
      return;
    }
    const double scale = l.spatialScale;
    const double offset = l.halfPixel ? 0.5 : 0.0;
    const double startW = roi[0] * scale - offset, startH = roi[1] * scale - offset;
    const double endW = roi[2] * scale - offset, endH = roi[3] * scale - offset;
    double roiW = endW - startW, roiH = endH - startH;
    if (!l.halfPixel) {  // legacy mode: a roi is at least one pixel
      roiW = roiW > 1.0 ? roiW : 1.0;
      roiH = roiH > 1.0 ? roiH : 1.0;
    }
    const double binH = roiH / static_cast<double>(l.oh);
    const double binW = roiW / static_cast<double>(l.ow);
    const double ch = ceil(binH), cw = ceil(binW);
    const double gridHd = l.samplingRatio > 0 ? l.samplingRatio : (ch > 0.0 ? ch : 0.0);
    const double gridWd = l.samplingRatio > 0 ? l.samplingRatio : (cw > 0.0 ? cw : 0.0);
    if (!(gridHd <= kMaxGridAxis) || !(gridWd <= kMaxGridAxis) || gridHd * gridWd > kMaxGridSamples)
      return fail(i);
    const auto gridH = static_cast<int64_t>(gridHd);
    const auto gridW = static_cast<int64_t>(gridWd);
    const double count = static_cast<double>(gridH * gridW > 1 ? gridH * gridW : 1);
    int64_t yLo, yHi, xLo, xHi;
    sampleRange(startH + ph * binH, binH / static_cast<double>(gridH), gridH, l.H, yLo, yHi);
    sampleRange(startW + pw * binW, binW / static_cast<double>(gridW), gridW, l.W, xLo, xHi);
    double value = 0.0;
    bool first = (yHi - yLo) * (xHi - xLo) == gridH * gridW;
    for (int64_t iy = yLo; iy < yHi; ++iy) {
      const double sy = startH + ph * binH + (iy + 0.5) * binH / gridH;
      for (int64_t ix = xLo; ix < xHi; ++ix) {
        const double sx = startW + pw * binW + (ix + 0.5) * binW / gridW;
        // The bilinear sample (onnxruntime's rule): all weights 0 outside [-1, H] x [-1, W],
        // coordinates clamped to the plane inside it. Outside, the CPU's Sample reads pixel
        // (0, 0) with weight 0, which is kept (0 * inf is NaN there too).
        int64_t ys[2] = {0, 0}, xs[2] = {0, 0};
        double wts[4] = {0.0, 0.0, 0.0, 0.0};
        double y = sy, xx = sx;
        if (!(y < -1.0 || y > static_cast<double>(l.H) || xx < -1.0 ||
              xx > static_cast<double>(l.W))) {
          y = y > 0.0 ? y : 0.0;
          xx = xx > 0.0 ? xx : 0.0;
          int64_t yLow = static_cast<int64_t>(y), xLow = static_cast<int64_t>(xx), yHigh, xHigh;
          if (yLow >= l.H - 1) {
            yHigh = yLow = l.H - 1;
            y = static_cast<double>(yLow);
          } else {
            yHigh = yLow + 1;
          }
          if (xLow >= l.W - 1) {
            xHigh = xLow = l.W - 1;
            xx = static_cast<double>(xLow);
          } else {
            xHigh = xLow + 1;
          }
          const double ly = y - static_cast<double>(yLow), lx = xx - static_cast<double>(xLow);
          const double hy = 1.0 - ly, hx = 1.0 - lx;
          ys[0] = yLow;
          ys[1] = yHigh;
          xs[0] = xLow;
          xs[1] = xHigh;
          wts[0] = hy * hx;
          wts[1] = hy * lx;
          wts[2] = ly * hx;
          wts[3] = ly * lx;
        }
        double v4[4];
        for (int k = 0; k < 4; ++k) {
          const int64_t off = offset4(b, c, ys[k >> 1], xs[k & 1], l.C, l.H, l.W, l.xChannelsLast);
          v4[k] = wts[k] * static_cast<double>(toFloat(x[off]));
        }
        if (!l.maxMode) {
          for (int k = 0; k < 4; ++k) value += v4[k];
        } else {
          // (a > b || a != a) ? a : b is the larger, a NaN in either winning.
          double v = v4[0];
          for (int k = 1; k < 4; ++k) v = (v > v4[k] || v != v) ? v : v4[k];
          value = first ? v : ((value > v || value != value) ? value : v);
          first = false;
        }
      }
    }
    if (!l.maxMode) value /= count;
    out[i] = fromFloat<T>(static_cast<float>(value));
  }
};

class RoiAlignKernel final : public Kernel {
 public:
  RoiAlignKernel(DataType type, RoiAlignLayout l) : type_(type), l_(l) {}

  size_t workspaceSize() const override { return sizeof(int32_t); }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (l_.count == 0) return Status::ok();
    auto* flag = static_cast<int32_t*>(workspace);
    if (ctx.emulate) {
      *flag = 0;
    } else {
      KILN_CUDA_CHECK(
          cudaMemsetAsync(flag, 0, sizeof(int32_t), static_cast<cudaStream_t>(ctx.stream)));
    }
    Status s = Status::ok();
    dispatchFloat(type_, [&](auto t) {
      using T = decltype(t);
      s = launchElements(RoiAlignOp<T>{static_cast<const T*>(in[0]), in[1], in[2],
                                       static_cast<T*>(out[0]), flag, l_},
                         l_.count, ctx, "roi_align");
    });
    return s;
  }

 private:
  DataType type_;
  RoiAlignLayout l_;
};

}  // namespace

std::unique_ptr<Kernel> createRoiAlign(const KernelConfig& c, std::string* whyNot) {
  const RoiAlignParams* p = validate<RoiAlignParams>(c, "roi_align", 3, false, whyNot);
  if (!p) return nullptr;
  const PluginTensorDesc& x = c.inputs[0];
  const PluginTensorDesc& out = c.outputs[0];
  if (!isFloatType(x.type) || !isFloatType(c.inputs[1].type)) {  // inference requires both
    setWhyNot(whyNot, "roi_align: X and rois must be fp32, fp16 or bf16");
    return nullptr;
  }
  RoiAlignLayout l;
  l.N = x.dims.d[0];
  l.C = x.dims.d[1];
  l.H = x.dims.d[2];
  l.W = x.dims.d[3];
  l.R = c.inputs[1].dims.d[0];
  l.oh = p->outputHeight;
  l.ow = p->outputWidth;
  l.samplingRatio = p->samplingRatio;
  l.spatialScale = p->spatialScale;
  l.halfPixel = p->halfPixel;
  l.maxMode = p->mode == RoiAlignMode::kMAX;
  l.xChannelsLast = x.format == TensorFormat::kCHANNELS_LAST;
  l.outChannelsLast = out.format == TensorFormat::kCHANNELS_LAST;
  l.int64Indices = c.inputs[2].type == DataType::kINT64;
  l.roiType = c.inputs[1].type;
  l.count = volume(out.dims);
  return std::make_unique<RoiAlignKernel>(x.type, l);
}

}  // namespace kiln::cuda::dm
