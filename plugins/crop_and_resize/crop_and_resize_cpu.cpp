#include "crop_and_resize_cpu.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kiln/float16.h"

namespace kiln::plugins {
namespace {

template <DataType T>
struct Elem;
template <>
struct Elem<DataType::kFLOAT> {
  static float load(const void* p, int64_t i) { return static_cast<const float*>(p)[i]; }
  static void store(void* p, int64_t i, float v) { static_cast<float*>(p)[i] = v; }
};
template <>
struct Elem<DataType::kHALF> {
  static float load(const void* p, int64_t i) {
    return halfToFloat(static_cast<const uint16_t*>(p)[i]);
  }
  static void store(void* p, int64_t i, float v) { static_cast<uint16_t*>(p)[i] = floatToHalf(v); }
};
template <>
struct Elem<DataType::kBF16> {
  static float load(const void* p, int64_t i) {
    return bf16ToFloat(static_cast<const uint16_t*>(p)[i]);
  }
  static void store(void* p, int64_t i, float v) { static_cast<uint16_t*>(p)[i] = floatToBf16(v); }
};

// Where output row y (or column x) samples the input along one axis.
struct AxisSample {
  bool inside = false;     // false: the extrapolation value
  int64_t lo = 0, hi = 0;  // floor and ceil (bilinear), or both the rounded index (nearest)
  float lerp = 0.0f;
};

// Fills one axis table for a box edge pair (c1, c2) over an input extent `size` (H or W).
// The float32 operations and their order are DESIGN.md §5's, since they decide which samples
// land exactly on the border.
void sampleAxis(float c1, float c2, int64_t size, int32_t crop, ResizeMethod method,
                AxisSample* out) {
  const float last = static_cast<float>(size - 1);
  const float scale =
      crop > 1 ? (c2 - c1) * last / static_cast<float>(crop - 1) : 0.0f;  // once per box
  for (int32_t i = 0; i < crop; ++i) {
    const float in = crop > 1 ? c1 * last + static_cast<float>(i) * scale : 0.5f * (c1 + c2) * last;
    AxisSample& s = out[i];
    s.inside = in >= 0.0f && in <= last;  // false for NaN as well
    if (!s.inside) continue;
    if (method == ResizeMethod::kBILINEAR) {
      const float lo = std::floor(in);
      s.lo = static_cast<int64_t>(lo);
      s.hi = static_cast<int64_t>(std::ceil(in));
      s.lerp = in - lo;
    } else {
      s.lo = s.hi = static_cast<int64_t>(std::round(in));  // half away from zero
    }
    // Only beyond 2^24 can float(size - 1) round up past the last index; never read past it.
    s.lo = std::min(s.lo, size - 1);
    s.hi = std::min(s.hi, size - 1);
  }
}

template <DataType F, DataType B>
void run(const CropAndResizeCpuArgs& a, AxisSample* ys, AxisSample* xs,
         CropAndResizeCpuReport& report) {
  using FE = Elem<F>;
  using BE = Elem<B>;
  const bool featureLinear = a.featureFormat == TensorFormat::kLINEAR;
  // Element strides of the feature map along n, c, h, w.
  const int64_t fsC = featureLinear ? a.h * a.w : 1;
  const int64_t fsH = featureLinear ? a.w : a.w * a.c;
  const int64_t fsW = featureLinear ? 1 : a.c;
  const int64_t fsN = a.c * a.h * a.w;
  const int64_t ch = a.cropHeight, cw = a.cropWidth;
  const bool outLinear = a.outputFormat == TensorFormat::kLINEAR;
  const int64_t osC = outLinear ? ch * cw : 1;
  const int64_t osY = outLinear ? cw : cw * a.c;
  const int64_t osX = outLinear ? 1 : a.c;
  const int64_t osK = a.c * ch * cw;
  const float extrapolation = a.extrapolationValue;

  for (int64_t k = 0; k < a.numBoxes; ++k) {
    void* out = a.output;
    const int64_t outBase = k * osK;
    int64_t image = k / a.boxesPerImage;
    if (a.boxIndices) {
      const int32_t index = a.boxIndices[k];
      if (index < 0 || index >= a.n) {
        if (report.badBoxes++ == 0) {
          report.firstBadBox = k;
          report.firstBadIndex = index;
        }
        for (int64_t i = 0; i < osK; ++i) FE::store(out, outBase + i, extrapolation);
        continue;
      }
      image = index;
    }
    const float y1 = BE::load(a.boxes, 4 * k + 0);
    const float x1 = BE::load(a.boxes, 4 * k + 1);
    const float y2 = BE::load(a.boxes, 4 * k + 2);
    const float x2 = BE::load(a.boxes, 4 * k + 3);
    sampleAxis(y1, y2, a.h, a.cropHeight, a.method, ys);
    sampleAxis(x1, x2, a.w, a.cropWidth, a.method, xs);
    const int64_t imageBase = image * fsN;

    for (int64_t y = 0; y < ch; ++y) {
      const AxisSample& sy = ys[y];
      for (int64_t x = 0; x < cw; ++x) {
        const AxisSample& sx = xs[x];
        const int64_t o = outBase + y * osY + x * osX;
        if (!sy.inside || !sx.inside) {
          for (int64_t c = 0; c < a.c; ++c) FE::store(out, o + c * osC, extrapolation);
          continue;
        }
        const int64_t top = imageBase + sy.lo * fsH, bottom = imageBase + sy.hi * fsH;
        const int64_t left = sx.lo * fsW, right = sx.hi * fsW;
        if (a.method == ResizeMethod::kNEAREST) {
          for (int64_t c = 0; c < a.c; ++c)
            FE::store(out, o + c * osC, FE::load(a.feature, top + left + c * fsC));
          continue;
        }
        for (int64_t c = 0; c < a.c; ++c) {
          const int64_t cc = c * fsC;
          const float tl = FE::load(a.feature, top + left + cc);
          const float tr = FE::load(a.feature, top + right + cc);
          const float bl = FE::load(a.feature, bottom + left + cc);
          const float br = FE::load(a.feature, bottom + right + cc);
          // Along x, then along y.
          const float t = tl + (tr - tl) * sx.lerp;
          const float b = bl + (br - bl) * sx.lerp;
          FE::store(out, o + c * osC, t + (b - t) * sy.lerp);
        }
      }
    }
  }
}

template <DataType F>
void runWithBoxes(const CropAndResizeCpuArgs& a, AxisSample* ys, AxisSample* xs,
                  CropAndResizeCpuReport& report) {
  if (a.boxesType == DataType::kFLOAT) return run<F, DataType::kFLOAT>(a, ys, xs, report);
  return run<F, F>(a, ys, xs, report);
}

}  // namespace

bool cropAndResizeCpu(const CropAndResizeCpuArgs& args, CropAndResizeCpuReport& report) noexcept {
  report = CropAndResizeCpuReport();
  // The per-box axis tables: on the stack for crops of up to kStackSamples a side (every crop
  // size in use: 7, 14, 28, ...), so that an enqueue allocates nothing (DESIGN.md §7); larger
  // crops take the heap.
  constexpr int64_t kStackSamples = 64;
  AxisSample stackYs[kStackSamples], stackXs[kStackSamples];
  std::vector<AxisSample> heapYs, heapXs;
  AxisSample* ys = stackYs;
  AxisSample* xs = stackXs;
  try {
    if (args.cropHeight > kStackSamples) {
      heapYs.resize(static_cast<size_t>(args.cropHeight));
      ys = heapYs.data();
    }
    if (args.cropWidth > kStackSamples) {
      heapXs.resize(static_cast<size_t>(args.cropWidth));
      xs = heapXs.data();
    }
  } catch (...) {
    return false;
  }
  switch (args.featureType) {
    case DataType::kHALF:
      runWithBoxes<DataType::kHALF>(args, ys, xs, report);
      break;
    case DataType::kBF16:
      runWithBoxes<DataType::kBF16>(args, ys, xs, report);
      break;
    default:
      runWithBoxes<DataType::kFLOAT>(args, ys, xs, report);
      break;
  }
  return true;
}

}  // namespace kiln::plugins
