// An independent CropAndResize for the harness tests: DESIGN.md §5 written out directly. Sample
// positions follow §5's float32 operations in its order (they decide which samples land exactly
// on the border); the interpolation itself is done in double.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "kiln/plugin_check.h"

namespace kiln::testing {

struct CropAndResizeParams {
  int cropH = 7, cropW = 7;
  bool nearest = false;
  float extrapolation = 0.0f;
};

inline PluginCheckReference cropAndResizeReference(CropAndResizeParams p) {
  return [p](const std::vector<PluginCheckTensor>& in, std::vector<std::vector<double>>& out,
             std::string& error) {
    if (in.size() != 2 && in.size() != 3) {
      error = "CropAndResize takes 2 or 3 inputs";
      return false;
    }
    const auto& image = in[0];
    const int64_t N = image.dims.d[0], C = image.dims.d[1], H = image.dims.d[2],
                  W = image.dims.d[3];
    // Boxes as (image index, y1, x1, y2, x2).
    struct Box {
      int64_t n;
      float y1, x1, y2, x2;
    };
    std::vector<Box> boxes;
    if (in.size() == 2) {
      const int64_t B = in[1].dims.d[1];
      for (int64_t n = 0; n < N; ++n)
        for (int64_t b = 0; b < B; ++b) {
          const double* v = &in[1].values[(n * B + b) * 4];
          boxes.push_back({n, float(v[0]), float(v[1]), float(v[2]), float(v[3])});
        }
    } else {
      const int64_t K = in[1].dims.d[0];
      for (int64_t k = 0; k < K; ++k) {
        const double* v = &in[1].values[k * 4];
        boxes.push_back({static_cast<int64_t>(in[2].values[k]), float(v[0]), float(v[1]),
                         float(v[2]), float(v[3])});
      }
    }
    auto position = [](float c1, float c2, int64_t size, int crop, int i) {
      const float last = static_cast<float>(size - 1);
      if (crop > 1) {
        const float scale = (c2 - c1) * last / static_cast<float>(crop - 1);
        return c1 * last + static_cast<float>(i) * scale;
      }
      return 0.5f * (c1 + c2) * last;
    };
    std::vector<double> result;
    result.reserve(boxes.size() * C * p.cropH * p.cropW);
    for (const Box& box : boxes) {
      for (int64_t c = 0; c < C; ++c) {
        for (int y = 0; y < p.cropH; ++y) {
          const float iy = position(box.y1, box.y2, H, p.cropH, y);
          for (int x = 0; x < p.cropW; ++x) {
            const float ix = position(box.x1, box.x2, W, p.cropW, x);
            const bool inside = box.n >= 0 && box.n < N && iy >= 0.0f && iy <= float(H - 1) &&
                                ix >= 0.0f && ix <= float(W - 1);
            if (!inside) {
              result.push_back(p.extrapolation);
              continue;
            }
            auto at = [&](int64_t yy, int64_t xx) {
              return image.values[((box.n * C + c) * H + yy) * W + xx];
            };
            if (p.nearest) {
              result.push_back(at(std::llround(iy), std::llround(ix)));
              continue;
            }
            const int64_t y0 = std::floor(iy), y1 = std::ceil(iy);
            const int64_t x0 = std::floor(ix), x1 = std::ceil(ix);
            const double ly = double(iy) - y0, lx = double(ix) - x0;
            const double top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * lx;
            const double bottom = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * lx;
            result.push_back(top + (bottom - top) * ly);
          }
        }
      }
    }
    out = {std::move(result)};
    return true;
  };
}

}  // namespace kiln::testing
