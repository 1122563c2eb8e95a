// CropAndResize on the device (DESIGN.md §5), matching crop_and_resize_cpu.cpp bit for bit in
// float32: the coordinate and interpolation arithmetic is written with __fadd_rn / __fsub_rn /
// __fmul_rn / __fdiv_rn in the CPU kernel's order, so no fused multiply-add can change a
// rounding (the file is also compiled with -fmad=false).
//
// Three kernels, chosen by the formats:
//
// * channels-last feature map and output, 16-byte vectors, C / (16 / element size) a power of
//   two (the common case): kCropTiles. A block works out the corners of a tile of pixels once
//   into shared memory, then streams the tile's contiguous output with 16-byte streaming stores
//   (see the kernel).
//
// * other channels-last in and out (odd C, misaligned buffers): kCropChannelGroups. A group of
// `lanes`
//   threads (a power of two up to 32) owns one output pixel (box, y, x). Every lane computes the
//   pixel's corner offsets and weights once, then the group streams the C channels: lane l takes
//   channel units l, l + lanes, ... where a unit is one 16-byte vector (4 fp32 or 8 fp16/bf16
//   channels) when C * element size is a multiple of 16 and both pointers are 16-byte aligned,
//   else one element. Loads go through the read-only path, stores are streaming (evict-first),
//   so the output stream does not push the feature map out of L2. Neighbouring pixels of a box
//   sit in the same block and share corners through L1.
//
// * a linear feature map with a workspace (C * element size a multiple of 16; fp32 only with an
//   output of at least 4x the feature map): kToChannelsLast copies it to channels-last in the
//   workspace first (32x32 tiles through shared memory), then one of the channels-last kernels
//   runs on the copy.
//
// * channels-last feature map (16-byte vectors) and linear output: kCropPlanes. A block owns a
//   box's pixels and chunks of 8 channel units, gathers 16-byte corner vectors, stages the
//   results as [channel][pixel] in shared memory and writes the box's planes, which are
//   contiguous in the linear output, with coalesced 32-bit stores.
//
// * every other combination (linear feature map and/or linear output): kCropPixelLanes.
//   Consecutive threads own consecutive output pixels of a box (x fastest, then y, then box), so
//   that a warp's store of one channel is coalesced along x (and across rows and boxes, since a
//   linear [K,C,ch,cw] output keeps the crop of one (box, channel) contiguous). Each thread
//   computes its pixel's coordinates once and then runs over chunks of V channels (V = 16 /
//   element size), gridDim.y chunk rows in parallel, so the coordinate work is shared by
//   many channels and each thread has 4 * V independent loads in flight. With a channels-last
//   feature map a chunk is one 16-byte vector load per corner when aligned.
//
// Indices are 64-bit where a product of dims can exceed 2^31; the per-pixel div/mod use 32-bit
// arithmetic when the pixel count allows (the common case).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "crop_and_resize_cuda.h"

namespace kiln::plugins {
namespace {

constexpr int kBlock = 256;

// ---- element types -----------------------------------------------------------------------------

struct F32 {
  using Raw = float;
  static constexpr int kVec = 4;  // elements per 16-byte vector
  static constexpr bool kBf16 = false;
  static __device__ __forceinline__ float toFloat(Raw r) { return r; }
  static __device__ __forceinline__ Raw fromFloat(float v) { return v; }
};
struct F16 {
  using Raw = unsigned short;
  static constexpr int kVec = 8;
  static constexpr bool kBf16 = false;
  static __device__ __forceinline__ float toFloat(Raw r) {
    return __half2float(__ushort_as_half(r));
  }
  static __device__ __forceinline__ Raw fromFloat(float v) {
    return __half_as_ushort(__float2half_rn(v));
  }
};
struct BF16 {
  using Raw = unsigned short;
  static constexpr int kVec = 8;
  static constexpr bool kBf16 = true;
  static __device__ __forceinline__ float toFloat(Raw r) {
    return __bfloat162float(__ushort_as_bfloat16(r));
  }
  static __device__ __forceinline__ Raw fromFloat(float v) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  }
};

// 16 bytes <-> E::kVec floats, with register moves only (no local-memory array). fp16/bf16 go
// through the paired conversions (one instruction converts two values, each rounded to nearest
// even exactly as the scalar conversion does).
template <class E>
__device__ __forceinline__ void unpack(const uint4& u, float* out) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (E::kVec == 4) {
      out[j] = __uint_as_float(w[j]);
    } else if constexpr (E::kBf16) {
      out[2 * j] = __uint_as_float(w[j] << 16);
      out[2 * j + 1] = __uint_as_float(w[j] & 0xffff0000u);
    } else {
      const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&w[j]));
      out[2 * j] = f.x;
      out[2 * j + 1] = f.y;
    }
  }
}

template <class E>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (E::kBf16) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
}

template <class E>
__device__ __forceinline__ uint4 pack(const float* v) {
  uint32_t w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (E::kVec == 4)
      w[j] = __float_as_uint(v[j]);
    else
      w[j] = pack2<E>(v[2 * j], v[2 * j + 1]);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// ---- §5's arithmetic, in the CPU kernel's order ------------------------------------------------

struct Params {
  const void* feature;
  const void* boxes;
  const int32_t* indices;  // three-input form, else nullptr
  void* output;
  int64_t n, c, h, w;
  int64_t boxesPerImage;
  int64_t pixels;  // numBoxes * cropHeight * cropWidth
  int32_t cropHeight, cropWidth;
  int32_t nearest;
  float extrapolation;
  // Element strides of the feature map (n, c, h, w) and of the output (box, c, y, x).
  int64_t fsN, fsC, fsH, fsW;
  int64_t osK, osC, osY, osX;
  // Launch shape.
  int32_t lanesLog2;  // kCropChannelGroups: threads per pixel = 1 << lanesLog2
  int32_t vecIn, vecOut;
  int64_t units;   // kCropChannelGroups: channel units per pixel
  int64_t chunks;  // kCropPixelLanes: chunks of E::kVec channels per pixel
  int32_t small;   // pixels < 2^31: 32-bit div/mod
  // kCropTiles: pixels per block (<= kBlock) and log2 of the 16-byte units per pixel.
  int32_t tilePixels, unitsLog2;
  // kCropPlanes: pixels per box, pixel tiles per box, shared-memory row stride (odd), 16-byte
  // units per channel chunk, 16-byte units per pixel, whether the output takes 32-bit stores.
  int32_t boxPixels, tilesPerBox, rowStride, chunkUnits;
  int32_t unitsPerPixel;
  int32_t wordOut;
};

struct Axis {
  bool inside;
  int64_t lo, hi;
  float lerp;
};

__device__ __forceinline__ Axis sampleAxis(float c1, float c2, int64_t size, int32_t crop,
                                           int32_t i, bool nearest) {
  const float last = static_cast<float>(size - 1);
  float in;
  if (crop > 1) {
    const float scale = __fdiv_rn(__fmul_rn(__fsub_rn(c2, c1), last), static_cast<float>(crop - 1));
    in = __fadd_rn(__fmul_rn(c1, last), __fmul_rn(static_cast<float>(i), scale));
  } else {
    in = __fmul_rn(__fmul_rn(0.5f, __fadd_rn(c1, c2)), last);
  }
  Axis a;
  a.inside = in >= 0.0f && in <= last;  // false for NaN as well
  a.lo = a.hi = 0;
  a.lerp = 0.0f;
  if (!a.inside) return a;
  if (!nearest) {
    const float lo = floorf(in);
    a.lo = static_cast<int64_t>(lo);
    a.hi = static_cast<int64_t>(ceilf(in));
    a.lerp = __fsub_rn(in, lo);
  } else {
    a.lo = a.hi = static_cast<int64_t>(roundf(in));  // half away from zero, like std::round
  }
  // As on the CPU: beyond 2^24, float(size - 1) may round past the last index.
  a.lo = min(a.lo, size - 1);
  a.hi = min(a.hi, size - 1);
  return a;
}

__device__ __forceinline__ float bilinear(float tl, float tr, float bl, float br, float lx,
                                          float ly) {
  // Along x, then along y.
  const float t = __fadd_rn(tl, __fmul_rn(__fsub_rn(tr, tl), lx));
  const float b = __fadd_rn(bl, __fmul_rn(__fsub_rn(br, bl), lx));
  return __fadd_rn(t, __fmul_rn(__fsub_rn(b, t), ly));
}

// Bilinear on 16-byte vectors of the four corners.
template <class E>
__device__ __forceinline__ uint4 lerpVector(const uint4& a, const uint4& b, const uint4& c,
                                            const uint4& d, float lx, float ly) {
  float fa[E::kVec], fb[E::kVec], fc[E::kVec], fd[E::kVec], v[E::kVec];
  unpack<E>(a, fa);
  unpack<E>(b, fb);
  unpack<E>(c, fc);
  unpack<E>(d, fd);
#pragma unroll
  for (int j = 0; j < E::kVec; ++j) v[j] = bilinear(fa[j], fb[j], fc[j], fd[j], lx, ly);
  return pack<E>(v);
}

// One output pixel: its box and the element offsets of its four corners (channel 0).
struct Pixel {
  int64_t box;
  int32_t y, x;
  bool valid;  // false: every channel is the extrapolation value
  int64_t tl, tr, bl, br;
  float lx, ly;
};

template <class B>
__device__ __forceinline__ Pixel setupPixel(const Params& p, int64_t pix) {
  Pixel px;
  if (p.small) {
    const uint32_t u = static_cast<uint32_t>(pix), cw = static_cast<uint32_t>(p.cropWidth);
    const uint32_t r = u / cw;
    px.x = static_cast<int32_t>(u - r * cw);
    const uint32_t ch = static_cast<uint32_t>(p.cropHeight), k = r / ch;
    px.y = static_cast<int32_t>(r - k * ch);
    px.box = k;
  } else {
    const int64_t rest = pix / p.cropWidth;
    px.x = static_cast<int32_t>(pix - rest * p.cropWidth);
    px.box = rest / p.cropHeight;
    px.y = static_cast<int32_t>(rest - px.box * p.cropHeight);
  }
  px.valid = false;
  px.tl = px.tr = px.bl = px.br = 0;
  px.lx = px.ly = 0.0f;
  int64_t image;
  if (p.indices) {
    const int32_t index = __ldg(p.indices + px.box);
    if (index < 0 || index >= p.n) return px;  // never read the feature map for it
    image = index;
  } else {
    image = p.boxesPerImage == 1 ? px.box : px.box / p.boxesPerImage;
  }
  const typename B::Raw* b = static_cast<const typename B::Raw*>(p.boxes) + 4 * px.box;
  const float y1 = B::toFloat(__ldg(b + 0));
  const float x1 = B::toFloat(__ldg(b + 1));
  const float y2 = B::toFloat(__ldg(b + 2));
  const float x2 = B::toFloat(__ldg(b + 3));
  const bool nearest = p.nearest != 0;
  const Axis ay = sampleAxis(y1, y2, p.h, p.cropHeight, px.y, nearest);
  const Axis ax = sampleAxis(x1, x2, p.w, p.cropWidth, px.x, nearest);
  if (!ay.inside || !ax.inside) return px;
  const int64_t top = image * p.fsN + ay.lo * p.fsH, bottom = image * p.fsN + ay.hi * p.fsH;
  const int64_t left = ax.lo * p.fsW, right = ax.hi * p.fsW;
  px.tl = top + left;
  px.tr = top + right;
  px.bl = bottom + left;
  px.br = bottom + right;
  px.lx = ax.lerp;
  px.ly = ay.lerp;
  px.valid = true;
  return px;
}

// ---- channels-last in, channels-last out: a group of lanes per pixel ----------------------------

template <class E, class B, bool VEC>
__global__ void __launch_bounds__(kBlock) kCropChannelGroups(const Params p) {
  using Raw = typename E::Raw;
  const Raw* __restrict__ feature = static_cast<const Raw*>(p.feature);
  Raw* __restrict__ output = static_cast<Raw*>(p.output);
  const int32_t lanes = 1 << p.lanesLog2;
  const int32_t lane = static_cast<int32_t>(threadIdx.x) & (lanes - 1);
  const int64_t groupsPerBlock = kBlock >> p.lanesLog2;
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * groupsPerBlock + (threadIdx.x >> p.lanesLog2);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * groupsPerBlock;
  const bool nearest = p.nearest != 0;
  for (int64_t pix = first; pix < p.pixels; pix += stride) {
    const Pixel px = setupPixel<B>(p, pix);
    // Channels-last output: pixel `pix` starts at pix * C.
    Raw* out = output + pix * p.c;
    if constexpr (VEC) {
      uint4* o = reinterpret_cast<uint4*>(out);
      if (!px.valid) {
        float v[E::kVec];
#pragma unroll
        for (int j = 0; j < E::kVec; ++j) v[j] = p.extrapolation;
        const uint4 u = pack<E>(v);
        for (int64_t i = lane; i < p.units; i += lanes) __stcs(o + i, u);
        continue;
      }
      const uint4* tl = reinterpret_cast<const uint4*>(feature + px.tl);
      const uint4* tr = reinterpret_cast<const uint4*>(feature + px.tr);
      const uint4* bl = reinterpret_cast<const uint4*>(feature + px.bl);
      const uint4* br = reinterpret_cast<const uint4*>(feature + px.br);
      if (nearest) {
        for (int64_t i = lane; i < p.units; i += lanes) __stcs(o + i, __ldg(tl + i));
        continue;
      }
      // Two units per lane per step (8 loads in flight), then the odd one.
      int64_t i = lane;
      for (; i + lanes < p.units; i += 2 * lanes) {
        const uint4 a0 = __ldg(tl + i), b0 = __ldg(tr + i), c0 = __ldg(bl + i), d0 = __ldg(br + i);
        const int64_t i1 = i + lanes;
        const uint4 a1 = __ldg(tl + i1), b1 = __ldg(tr + i1), c1 = __ldg(bl + i1),
                    d1 = __ldg(br + i1);
        __stcs(o + i, lerpVector<E>(a0, b0, c0, d0, px.lx, px.ly));
        __stcs(o + i1, lerpVector<E>(a1, b1, c1, d1, px.lx, px.ly));
      }
      if (i < p.units)
        __stcs(o + i, lerpVector<E>(__ldg(tl + i), __ldg(tr + i), __ldg(bl + i), __ldg(br + i),
                                    px.lx, px.ly));
    } else {
      if (!px.valid) {
        const Raw e = E::fromFloat(p.extrapolation);
        for (int64_t i = lane; i < p.c; i += lanes) __stcs(out + i, e);
        continue;
      }
      if (nearest) {
#pragma unroll 4
        for (int64_t i = lane; i < p.c; i += lanes) __stcs(out + i, __ldg(feature + px.tl + i));
        continue;
      }
#pragma unroll 4
      for (int64_t i = lane; i < p.c; i += lanes) {
        const float a = E::toFloat(__ldg(feature + px.tl + i));
        const float b = E::toFloat(__ldg(feature + px.tr + i));
        const float c = E::toFloat(__ldg(feature + px.bl + i));
        const float d = E::toFloat(__ldg(feature + px.br + i));
        __stcs(out + i, E::fromFloat(bilinear(a, b, c, d, px.lx, px.ly)));
      }
    }
  }
}

// ---- channels-last in and out, 16-byte units, units per pixel a power of two: pixel tiles ------
//
// A block owns `tilePixels` consecutive output pixels, whose channels-last output is one
// contiguous run of tilePixels * units 16-byte vectors. Phase 1: thread t works out pixel t's
// corners and weights (the §5 arithmetic, once per pixel instead of once per lane) into shared
// memory. Phase 2: the block streams the run, vector i of the run by thread i mod kBlock, U
// vectors per thread per step with all 4U corner loads issued before the first use, and
// 16-byte streaming stores that are coalesced across the whole block. Every output byte is
// written once by one 16-byte store; the remaining cost is the corner gather (4 vectors read
// per vector written, mostly L2 hits), which bench/RESULTS.md measures as a ceiling.
template <class E, class B, int U>
__global__ void __launch_bounds__(kBlock, U >= 4 ? 2 : 4) kCropTiles(const Params p) {
  __shared__ int4 sOffset[kBlock];    // corner offsets in 16-byte units; x < 0: extrapolate
  __shared__ float2 sWeight[kBlock];  // (lx, ly)
  const int64_t tile0 = static_cast<int64_t>(blockIdx.x) * p.tilePixels;
  const int32_t count =
      static_cast<int32_t>(min(static_cast<int64_t>(p.tilePixels), p.pixels - tile0));
  const int32_t t = static_cast<int32_t>(threadIdx.x);
  if (t < count) {
    const Pixel px = setupPixel<B>(p, tile0 + t);
    constexpr int V = E::kVec;
    sOffset[t] = px.valid
                     ? make_int4(static_cast<int32_t>(px.tl / V), static_cast<int32_t>(px.tr / V),
                                 static_cast<int32_t>(px.bl / V), static_cast<int32_t>(px.br / V))
                     : make_int4(-1, 0, 0, 0);
    sWeight[t] = make_float2(px.lx, px.ly);
  }
  __syncthreads();
  const uint4* __restrict__ f = static_cast<const uint4*>(p.feature);
  uint4* __restrict__ o = static_cast<uint4*>(p.output) + tile0 * (int64_t{1} << p.unitsLog2);
  const int32_t total = count << p.unitsLog2;
  const int32_t mask = (1 << p.unitsLog2) - 1;
  float e[E::kVec];
#pragma unroll
  for (int j = 0; j < E::kVec; ++j) e[j] = p.extrapolation;
  const uint4 extrapolated = pack<E>(e);
  if (p.nearest) {
    for (int32_t i = t; i < total; i += kBlock) {
      const int4 off = sOffset[i >> p.unitsLog2];
      __stcs(o + i, off.x >= 0 ? __ldg(f + off.x + (i & mask)) : extrapolated);
    }
    return;
  }
  for (int32_t base = t; base < total; base += U * kBlock) {
    uint4 a[U], b[U], c[U], d[U];
    float lx[U], ly[U];
    bool ok[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int32_t i = base + u * kBlock;
      ok[u] = false;
      lx[u] = ly[u] = 0.0f;
      if (i < total) {
        const int32_t q = i >> p.unitsLog2, unit = i & mask;
        const int4 off = sOffset[q];
        const float2 w = sWeight[q];
        lx[u] = w.x;
        ly[u] = w.y;
        ok[u] = off.x >= 0;
        if (ok[u]) {
          a[u] = __ldg(f + off.x + unit);
          b[u] = __ldg(f + off.y + unit);
          c[u] = __ldg(f + off.z + unit);
          d[u] = __ldg(f + off.w + unit);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int32_t i = base + u * kBlock;
      if (i < total)
        __stcs(o + i, ok[u] ? lerpVector<E>(a[u], b[u], c[u], d[u], lx[u], ly[u]) : extrapolated);
    }
  }
}

// ---- linear feature map -> channels-last copy in the workspace ---------------------------------
//
// Image n's [C, H*W] becomes [H*W, C]: 32x32 tiles through shared memory (padded against bank
// conflicts), read and written along rows of 32 consecutive elements. Plain stores, so the copy
// stays in L2 for the gather that follows.
template <class E>
__global__ void __launch_bounds__(256)
    kToChannelsLast(const typename E::Raw* __restrict__ in, typename E::Raw* __restrict__ out,
                    int64_t c, int64_t hw) {
  __shared__ uint32_t tile[32][33];
  const int64_t n = blockIdx.z;
  const int64_t s0 = static_cast<int64_t>(blockIdx.x) * 32,
                c0 = static_cast<int64_t>(blockIdx.y) * 32;
  const typename E::Raw* src = in + n * c * hw;
  typename E::Raw* dst = out + n * c * hw;
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
#pragma unroll
  for (int r = ty; r < 32; r += 8) {
    const int64_t ch = c0 + r, s = s0 + tx;
    if (ch < c && s < hw) {
      if constexpr (E::kVec == 4)
        tile[r][tx] = __float_as_uint(__ldg(src + ch * hw + s));
      else
        tile[r][tx] = __ldg(src + ch * hw + s);
    }
  }
  __syncthreads();
#pragma unroll
  for (int r = ty; r < 32; r += 8) {
    const int64_t s = s0 + r, ch = c0 + tx;
    if (ch < c && s < hw) {
      if constexpr (E::kVec == 4)
        dst[s * c + ch] = __uint_as_float(tile[tx][r]);
      else
        dst[s * c + ch] = static_cast<typename E::Raw>(tile[tx][r]);
    }
  }
}

// ---- channels-last feature map, linear output: box planes through shared memory ---------------
//
// A block owns a tile of up to kBlock pixels of one box (the whole box when crop_h * crop_w <=
// kBlock) and loops over chunks of chunkUnits 16-byte channel units. Phase 1 (once per block):
// pixel t's corners and weights into shared memory. Phase 2: item i = (pixel i / chunkUnits,
// unit i % chunkUnits); a warp covers 4 pixels x 8 units, so each corner load is 128 contiguous
// bytes; two items per thread per step with all 8 corner loads issued first; the V results go
// to the chunk's [channel][pixel] staging rows (odd row stride: no bank conflicts). Phase 3: the
// staged planes are written out. With the whole box in the tile, the chunk's planes are one
// contiguous run of the linear output (planes (box, c) of crop_h * crop_w elements follow each
// other), written with coalesced 32-bit streaming stores (2 elements per store in fp16/bf16);
// otherwise element by element, coalesced along each plane's row.
template <class E, class B>
__global__ void __launch_bounds__(kBlock, 4) kCropPlanes(const Params p) {
  using Raw = typename E::Raw;
  constexpr int V = E::kVec;
  __shared__ int4 sOffset[kBlock];  // 16-byte units; x < 0: extrapolate
  __shared__ float2 sWeight[kBlock];
  extern __shared__ __align__(16) unsigned char sDynamic[];
  Raw* sOut = reinterpret_cast<Raw*>(sDynamic);

  const int32_t box = static_cast<int32_t>(blockIdx.x / p.tilesPerBox);
  const int32_t tile = static_cast<int32_t>(blockIdx.x - static_cast<int64_t>(box) * p.tilesPerBox);
  const int32_t p0 = tile * kBlock;
  const int32_t count = min(kBlock, p.boxPixels - p0);
  const int32_t t = static_cast<int32_t>(threadIdx.x);
  if (t < count) {
    const Pixel px = setupPixel<B>(p, static_cast<int64_t>(box) * p.boxPixels + p0 + t);
    sOffset[t] = px.valid
                     ? make_int4(static_cast<int32_t>(px.tl / V), static_cast<int32_t>(px.tr / V),
                                 static_cast<int32_t>(px.bl / V), static_cast<int32_t>(px.br / V))
                     : make_int4(-1, 0, 0, 0);
    sWeight[t] = make_float2(px.lx, px.ly);
  }
  const uint4* __restrict__ f = static_cast<const uint4*>(p.feature);
  Raw* __restrict__ output = static_cast<Raw*>(p.output);
  const Raw extrapolated = E::fromFloat(p.extrapolation);
  const int32_t stride = p.rowStride;
  const int32_t chunks = (p.unitsPerPixel + p.chunkUnits - 1) / p.chunkUnits;
  const bool whole = count == p.boxPixels;

  for (int32_t chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
    __syncthreads();  // phase 1 done / the previous chunk's staging rows written out
    const int32_t u0 = chunk * p.chunkUnits;
    const int32_t ub = min(p.chunkUnits, p.unitsPerPixel - u0);
    const int32_t items = ub * count;
    // Phase 2.
    for (int32_t base = t; base < items; base += 2 * kBlock) {
      uint4 a[2], b[2], c[2], d[2];
      int32_t q[2], unit[2];
      bool ok[2];
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const int32_t i = base + u * kBlock;
        q[u] = i / ub;
        unit[u] = i - q[u] * ub;
        ok[u] = false;
        if (i < items) {
          const int4 off = sOffset[q[u]];
          ok[u] = off.x >= 0;
          if (ok[u]) {
            const int32_t g = u0 + unit[u];
            a[u] = __ldg(f + off.x + g);
            if (!p.nearest) {
              b[u] = __ldg(f + off.y + g);
              c[u] = __ldg(f + off.z + g);
              d[u] = __ldg(f + off.w + g);
            }
          }
        }
      }
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const int32_t i = base + u * kBlock;
        if (i >= items) continue;
        Raw* row = sOut + unit[u] * V * stride + q[u];
        if (!ok[u]) {
#pragma unroll
          for (int j = 0; j < V; ++j) row[j * stride] = extrapolated;
          continue;
        }
        float v[V];
        if (p.nearest) {
          unpack<E>(a[u], v);
        } else {
          const float2 w = sWeight[q[u]];
          float fa[V], fb[V], fc[V], fd[V];
          unpack<E>(a[u], fa);
          unpack<E>(b[u], fb);
          unpack<E>(c[u], fc);
          unpack<E>(d[u], fd);
#pragma unroll
          for (int j = 0; j < V; ++j) v[j] = bilinear(fa[j], fb[j], fc[j], fd[j], w.x, w.y);
        }
        if constexpr (V == 4) {
#pragma unroll
          for (int j = 0; j < V; ++j) row[j * stride] = v[j];
        } else {
#pragma unroll
          for (int j = 0; j < V; j += 2) {
            const uint32_t w2 = pack2<E>(v[j], v[j + 1]);
            row[j * stride] = static_cast<Raw>(w2 & 0xffffu);
            row[(j + 1) * stride] = static_cast<Raw>(w2 >> 16);
          }
        }
      }
    }
    __syncthreads();
    // Phase 3.
    const int32_t elements = ub * V * count;
    Raw* planes = output +
                  (static_cast<int64_t>(box) * p.c + static_cast<int64_t>(u0) * V) * p.boxPixels +
                  p0;
    if (whole && p.wordOut) {
      // One contiguous run; element e is (channel e / P, pixel e % P).
      constexpr int kPer = 4 / static_cast<int>(sizeof(Raw));  // elements per 32-bit store
      const int32_t P = p.boxPixels;
      const int32_t step = kPer * kBlock, dc = step / P, dq = step - dc * P;
      int32_t e = t * kPer;
      int32_t ch = e / P, q = e - ch * P;
      uint32_t* words = reinterpret_cast<uint32_t*>(planes);
      for (; e < elements; e += step) {
        uint32_t word;
        if constexpr (kPer == 1) {
          word = __float_as_uint(sOut[ch * stride + q]);
        } else {
          const uint32_t lo = sOut[ch * stride + q];
          const int32_t q1 = q + 1 == P ? 0 : q + 1, ch1 = q + 1 == P ? ch + 1 : ch;
          const uint32_t hi = sOut[ch1 * stride + q1];
          word = lo | (hi << 16);
        }
        __stcs(words + e / kPer, word);
        q += dq;
        ch += dc;
        if (q >= P) {
          q -= P;
          ++ch;
        }
      }
    } else {
      for (int32_t e = t; e < elements; e += kBlock) {
        const int32_t ch = e / count, q = e - ch * count;
        __stcs(planes + static_cast<int64_t>(ch) * p.boxPixels + q, sOut[ch * stride + q]);
      }
    }
  }
}

// ---- every other format combination: one pixel per thread, chunks of channels ------------------

// fp32 (16 loads in flight per thread): at least 4 blocks (1024 threads) per SM, at most 64
// registers. fp16/bf16 (32 loads in flight): at least 2 blocks, so no register spills.
template <class E, class B, bool FEATURE_CL, bool OUTPUT_CL>
__global__ void __launch_bounds__(kBlock, E::kVec == 4 ? 4 : 2) kCropPixelLanes(const Params p) {
  using Raw = typename E::Raw;
  constexpr int V = E::kVec;
  const Raw* __restrict__ feature = static_cast<const Raw*>(p.feature);
  Raw* __restrict__ output = static_cast<Raw*>(p.output);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kBlock;
  const bool nearest = p.nearest != 0;
  const bool vecIn = FEATURE_CL && p.vecIn;
  const bool vecOut = OUTPUT_CL && p.vecOut;
  for (int64_t pix = first; pix < p.pixels; pix += stride) {
    const Pixel px = setupPixel<B>(p, pix);
    Raw* out = output + px.box * p.osK + px.y * p.osY + px.x * p.osX;
    for (int64_t chunk = blockIdx.y; chunk < p.chunks; chunk += gridDim.y) {
      const int64_t c0 = chunk * V;
      const bool full = c0 + V <= p.c;
      float v[V];
      if (!px.valid) {
#pragma unroll
        for (int j = 0; j < V; ++j) v[j] = p.extrapolation;
      } else if (vecIn) {  // channels-last, aligned, C a multiple of V: full is true
        const uint4 a = __ldg(reinterpret_cast<const uint4*>(feature + px.tl + c0));
        if (nearest) {
          unpack<E>(a, v);
        } else {
          const uint4 b = __ldg(reinterpret_cast<const uint4*>(feature + px.tr + c0));
          const uint4 c = __ldg(reinterpret_cast<const uint4*>(feature + px.bl + c0));
          const uint4 d = __ldg(reinterpret_cast<const uint4*>(feature + px.br + c0));
          float fa[V], fb[V], fc[V], fd[V];
          unpack<E>(a, fa);
          unpack<E>(b, fb);
          unpack<E>(c, fc);
          unpack<E>(d, fd);
#pragma unroll
          for (int j = 0; j < V; ++j) v[j] = bilinear(fa[j], fb[j], fc[j], fd[j], px.lx, px.ly);
        }
      } else {
        const int64_t fsC = FEATURE_CL ? 1 : p.fsC;
        const Raw* tl = feature + px.tl + c0 * fsC;
        if (nearest) {
#pragma unroll
          for (int j = 0; j < V; ++j)
            v[j] = (full || c0 + j < p.c) ? E::toFloat(__ldg(tl + j * fsC)) : 0.0f;
        } else {
          const Raw* tr = feature + px.tr + c0 * fsC;
          const Raw* bl = feature + px.bl + c0 * fsC;
          const Raw* br = feature + px.br + c0 * fsC;
          float fa[V], fb[V], fc[V], fd[V];
#pragma unroll
          for (int j = 0; j < V; ++j) {
            const bool in = full || c0 + j < p.c;
            fa[j] = in ? E::toFloat(__ldg(tl + j * fsC)) : 0.0f;
            fb[j] = in ? E::toFloat(__ldg(tr + j * fsC)) : 0.0f;
            fc[j] = in ? E::toFloat(__ldg(bl + j * fsC)) : 0.0f;
            fd[j] = in ? E::toFloat(__ldg(br + j * fsC)) : 0.0f;
          }
#pragma unroll
          for (int j = 0; j < V; ++j) v[j] = bilinear(fa[j], fb[j], fc[j], fd[j], px.lx, px.ly);
        }
      }
      if (vecOut) {
        __stcs(reinterpret_cast<uint4*>(out + c0), pack<E>(v));
      } else {
        const int64_t osC = OUTPUT_CL ? 1 : p.osC;
        Raw* o = out + c0 * osC;
#pragma unroll
        for (int j = 0; j < V; ++j)
          if (full || c0 + j < p.c) __stcs(o + j * osC, E::fromFloat(v[j]));
      }
    }
  }
}

// ---- launch ------------------------------------------------------------------------------------

std::string cudaError(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

template <class E, class B>
std::string launch(const CropAndResizeCudaArgs& a, Params p, void* workspace, size_t workspaceBytes,
                   cudaStream_t stream) {
  int device = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e != cudaSuccess) return cudaError("CropAndResize: querying the device", e);
  // Enough threads for a few waves at full occupancy (2048 threads per SM).
  const int64_t targetThreads = static_cast<int64_t>(std::max(sms, 1)) * 2048 * 4;
  const int64_t maxBlocks = INT_MAX;
  const int64_t es = static_cast<int64_t>(sizeof(typename E::Raw));
  bool featureCl = a.featureFormat == TensorFormat::kCHANNELS_LAST;
  // A linear feature map goes to channels-last in the workspace first, when there is one.
  const size_t copyBytes = featureCl
                               ? 0
                               : cropAndResizeCudaWorkspaceSize(a.featureType, a.featureFormat, a.n,
                                                                a.c, a.h, a.w, p.pixels * a.c);
  if (copyBytes > 0 && workspace && workspaceBytes >= copyBytes && aligned16(workspace) &&
      a.n <= 65535 && (a.c + 31) / 32 <= 65535) {
    const int64_t hw = a.h * a.w;
    const dim3 grid(static_cast<unsigned>((hw + 31) / 32), static_cast<unsigned>((a.c + 31) / 32),
                    static_cast<unsigned>(a.n));
    if ((hw + 31) / 32 <= maxBlocks) {
      using Raw = typename E::Raw;
      kToChannelsLast<E><<<grid, 256, 0, stream>>>(static_cast<const Raw*>(a.feature),
                                                   static_cast<Raw*>(workspace), a.c, hw);
      p.feature = workspace;
      p.fsC = 1;
      p.fsH = a.w * a.c;
      p.fsW = a.c;
      featureCl = true;
    }
  }
  const void* featurePtr = p.feature;
  const bool outputCl = a.outputFormat == TensorFormat::kCHANNELS_LAST;
  const bool rowBytes16 = (a.c * es) % 16 == 0;
  p.vecIn = featureCl && rowBytes16 && aligned16(featurePtr);
  p.vecOut = outputCl && rowBytes16 && aligned16(a.output);

  if (featureCl && !outputCl && p.vecIn && a.c % E::kVec == 0 &&
      a.n * a.h * a.w * (a.c / E::kVec) < (int64_t{1} << 31) &&
      a.c * a.cropHeight * a.cropWidth < (int64_t{1} << 31)) {
    const int64_t boxPixels = static_cast<int64_t>(a.cropHeight) * a.cropWidth;
    const int64_t tiles = (boxPixels + kBlock - 1) / kBlock;
    const int64_t units = a.c / E::kVec;
    const int64_t chunkUnits = std::min<int64_t>(8, units);
    const int64_t chunks = (units + chunkUnits - 1) / chunkUnits;
    const int64_t tilePixels = std::min<int64_t>(boxPixels, kBlock);
    p.boxPixels = static_cast<int32_t>(boxPixels);
    p.tilesPerBox = static_cast<int32_t>(tiles);
    p.rowStride = static_cast<int32_t>(tilePixels | 1);
    p.chunkUnits = static_cast<int32_t>(chunkUnits);
    p.unitsPerPixel = static_cast<int32_t>(units);
    p.wordOut = (reinterpret_cast<uintptr_t>(a.output) & 3u) == 0 ? 1 : 0;
    const int64_t blocksX = a.numBoxes * tiles;
    if (blocksX <= maxBlocks) {
      // Chunks of a block share its phase-1 setup; split them over gridDim.y only as far as
      // needed for a few waves.
      const int64_t wanted = static_cast<int64_t>(std::max(sms, 1)) * 32;
      int64_t rows = std::clamp<int64_t>((wanted + blocksX - 1) / blocksX, 1,
                                         std::min<int64_t>(chunks, 65535));
      rows =
          (chunks + (chunks + rows - 1) / rows - 1) / ((chunks + rows - 1) / rows);  // even split
      const size_t smem =
          static_cast<size_t>(chunkUnits * E::kVec * p.rowStride) * sizeof(typename E::Raw);
      const dim3 grid(static_cast<unsigned>(blocksX), static_cast<unsigned>(rows));
      kCropPlanes<E, B><<<grid, kBlock, smem, stream>>>(p);
      e = cudaGetLastError();
      if (e != cudaSuccess) return cudaError("CropAndResize kernel launch", e);
      return {};
    }
  }
  if (featureCl && outputCl && p.vecIn && p.vecOut) {
    const int64_t units = a.c / E::kVec;
    // Offsets in 16-byte units must fit in int32.
    if ((units & (units - 1)) == 0 && units <= (int64_t{1} << 22) &&
        a.n * a.h * a.w * units < (int64_t{1} << 31)) {
      int32_t log2 = 0;
      while ((int64_t{1} << log2) < units) ++log2;
      p.unitsLog2 = log2;
      // 16 vectors per thread per block (8 steps of 2; measured on the H200: 2 vectors per step
      // at 4 blocks per SM beat 4 per step at 2 blocks, and 16 per thread beat 8 and 32).
      p.tilePixels = static_cast<int32_t>(std::clamp<int64_t>(16 * kBlock / units, 1, kBlock));
      const int64_t blocks = (p.pixels + p.tilePixels - 1) / p.tilePixels;
      if (blocks <= maxBlocks) {
        kCropTiles<E, B, 2><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(p);
        e = cudaGetLastError();
        if (e != cudaSuccess) return cudaError("CropAndResize kernel launch", e);
        return {};
      }
    }
  }
  if (featureCl && outputCl) {
    const bool vec = p.vecIn && p.vecOut;
    p.units = vec ? a.c / E::kVec : a.c;
    int32_t log2 = 0;
    while (log2 < 5 && (int64_t{1} << log2) < p.units) ++log2;
    p.lanesLog2 = log2;
    const int64_t groupsPerBlock = kBlock >> log2;
    const int64_t blocks = std::min((p.pixels + groupsPerBlock - 1) / groupsPerBlock, maxBlocks);
    if (vec)
      kCropChannelGroups<E, B, true><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(p);
    else
      kCropChannelGroups<E, B, false><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(p);
  } else {
    p.chunks = (a.c + E::kVec - 1) / E::kVec;
    const int64_t blocks = std::min((p.pixels + kBlock - 1) / kBlock, maxBlocks);
    // Chunk rows in parallel (gridDim.y) only as far as needed to fill the device.
    const int64_t rows = std::clamp<int64_t>(targetThreads / std::max<int64_t>(blocks * kBlock, 1),
                                             1, std::min<int64_t>(p.chunks, 65535));
    const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(rows));
    if (featureCl)
      kCropPixelLanes<E, B, true, false><<<grid, kBlock, 0, stream>>>(p);
    else if (outputCl)
      kCropPixelLanes<E, B, false, true><<<grid, kBlock, 0, stream>>>(p);
    else
      kCropPixelLanes<E, B, false, false><<<grid, kBlock, 0, stream>>>(p);
  }
  e = cudaGetLastError();
  if (e != cudaSuccess) return cudaError("CropAndResize kernel launch", e);
  return {};
}

template <class E>
std::string launchWithBoxes(const CropAndResizeCudaArgs& a, const Params& p, void* workspace,
                            size_t workspaceBytes, cudaStream_t s) {
  if (a.boxesType == DataType::kFLOAT) return launch<E, F32>(a, p, workspace, workspaceBytes, s);
  return launch<E, E>(a, p, workspace, workspaceBytes, s);
}

}  // namespace

size_t cropAndResizeCudaWorkspaceSize(DataType type, TensorFormat featureFormat, int64_t n,
                                      int64_t c, int64_t h, int64_t w, int64_t outputElements) {
  if (featureFormat != TensorFormat::kLINEAR) return 0;
  if (type != DataType::kFLOAT && type != DataType::kHALF && type != DataType::kBF16) return 0;
  const int64_t es = type == DataType::kFLOAT ? 4 : 2;
  if (n <= 0 || c <= 0 || h <= 0 || w <= 0 || (c * es) % 16 != 0) return 0;
  int64_t elements = 1;
  for (int64_t d : {n, c, h, w})
    if (__builtin_mul_overflow(elements, d, &elements)) return 0;
  // fp16/bf16: the scalar gather costs per element, the copy always paid off on the H200.
  // fp32: only where the gather dominates (output >= 4x the feature map); with output about
  // the feature map's size the copy cost more than it saved in one of two cases measured
  // (bench/RESULTS.md).
  if (es == 4 && outputElements / 4 < elements) return 0;
  return static_cast<size_t>(elements) * static_cast<size_t>(es);
}

std::string cropAndResizeCuda(const CropAndResizeCudaArgs& a, void* workspace,
                              size_t workspaceBytes, void* stream) {
  auto isFloat = [](DataType t) {
    return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16;
  };
  if (!isFloat(a.featureType))
    return "CropAndResize CUDA kernel: the feature map must be fp32, fp16 or bf16";
  if (a.boxesType != DataType::kFLOAT && a.boxesType != a.featureType)
    return "CropAndResize CUDA kernel: boxes must be fp32 or the feature map's type";
  if (a.cropHeight < 1 || a.cropWidth < 1)
    return "CropAndResize CUDA kernel: crop size must be at least 1x1";
  if (a.n < 0 || a.c < 0 || a.h < 1 || a.w < 1 || a.numBoxes < 0 || a.boxesPerImage < 1)
    return "CropAndResize CUDA kernel: invalid dims";
  const int64_t pixels = a.numBoxes * a.cropHeight * a.cropWidth;  // fits: the plugin checked
  if (pixels == 0 || a.c == 0) return {};                          // nothing to write
  // The feature map may be null only when it is empty (three-input form with N == 0, where
  // every box index is out of range and nothing is read).
  if (!a.output || !a.boxes || (a.n > 0 && !a.feature))
    return "CropAndResize CUDA kernel: null buffer";

  Params p{};
  p.feature = a.feature;
  p.boxes = a.boxes;
  p.indices = a.boxIndices;
  p.output = a.output;
  p.n = a.n;
  p.c = a.c;
  p.h = a.h;
  p.w = a.w;
  p.boxesPerImage = a.boxesPerImage;
  p.pixels = pixels;
  p.cropHeight = a.cropHeight;
  p.cropWidth = a.cropWidth;
  p.nearest = a.method == ResizeMethod::kNEAREST ? 1 : 0;
  p.extrapolation = a.extrapolationValue;
  const bool featureLinear = a.featureFormat == TensorFormat::kLINEAR;
  p.fsN = a.c * a.h * a.w;
  p.fsC = featureLinear ? a.h * a.w : 1;
  p.fsH = featureLinear ? a.w : a.w * a.c;
  p.fsW = featureLinear ? 1 : a.c;
  const int64_t ch = a.cropHeight, cw = a.cropWidth;
  const bool outputLinear = a.outputFormat == TensorFormat::kLINEAR;
  p.osK = a.c * ch * cw;
  p.osC = outputLinear ? ch * cw : 1;
  p.osY = outputLinear ? cw : cw * a.c;
  p.osX = outputLinear ? 1 : a.c;
  p.small = pixels < (int64_t{1} << 31) ? 1 : 0;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (a.featureType) {
    case DataType::kHALF:
      return launchWithBoxes<F16>(a, p, workspace, workspaceBytes, s);
    case DataType::kBF16:
      return launchWithBoxes<BF16>(a, p, workspace, workspaceBytes, s);
    default:
      return launchWithBoxes<F32>(a, p, workspace, workspaceBytes, s);
  }
}

}  // namespace kiln::plugins
