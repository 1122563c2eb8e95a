// CropAndResize on the GPU: kiln's plugin (driven through the public plugin API, as the engine
// drives it) against a baseline kernel written here in the scheme of TensorRT's open-source
// cropAndResizePlugin (one thread per output element over the linear layout, each computing its
// box's coordinates and doing its own 4 loads), and, with --torch-results FILE, against
// torchvision.ops.roi_align measured by bench/crop_and_resize_torchvision.py in the same session.
//
// Timing: CUDA events around each run, median of many runs after warm-up, rotating among several
// copies of the inputs and outputs so the feature map is not L2-resident (H200: 60 MiB L2).
// Byte floor = output bytes + feature-map bytes; bandwidth is the floor over the time, as a
// percentage of the device-to-device copy bandwidth measured in the same run (bytes read +
// written). Before timing, every kiln output is checked against the baseline's on the same data.
//
//   crop_and_resize_bench [--runs N] [--torch-results FILE] [--csv FILE]
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/float16.h"
#include "kiln/plugin.h"
#include "kiln/plugin_utils.h"
#include "kiln/plugins.h"

namespace {

#define CHECK_CUDA(call)                                                                      \
  do {                                                                                        \
    const cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "error: %s failed at %s:%d: %s (%s)\n", #call, __FILE__, __LINE__, \
                   cudaGetErrorName(e_), cudaGetErrorString(e_));                             \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::exit(1);
}

// ---- element types (device) --------------------------------------------------------------------

template <kiln::DataType T>
struct Elem;
template <>
struct Elem<kiln::DataType::kFLOAT> {
  using Raw = float;
  static __device__ float toFloat(Raw r) { return r; }
  static __device__ Raw fromFloat(float v) { return v; }
};
template <>
struct Elem<kiln::DataType::kHALF> {
  using Raw = unsigned short;
  static __device__ float toFloat(Raw r) { return __half2float(__ushort_as_half(r)); }
  static __device__ Raw fromFloat(float v) { return __half_as_ushort(__float2half_rn(v)); }
};
template <>
struct Elem<kiln::DataType::kBF16> {
  using Raw = unsigned short;
  static __device__ float toFloat(Raw r) { return __bfloat162float(__ushort_as_bfloat16(r)); }
  static __device__ Raw fromFloat(float v) { return __bfloat16_as_ushort(__float2bfloat16_rn(v)); }
};

// The logical value of feature element i (NCHW order) of copy `seed`, in [-1, 1).
__device__ float hashValue(uint64_t i, uint32_t seed) {
  uint64_t x = i * 0x9E3779B97F4A7C15ull + seed * 0xD1B54A32D192ED03ull + 1;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<float>(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

template <kiln::DataType T>
__global__ void fillFeature(typename Elem<T>::Raw* f, int64_t N, int64_t C, int64_t H, int64_t W,
                            bool channelsLast, uint32_t seed) {
  const int64_t total = N * C * H * W;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t r = i;
    const int64_t w = r % W;
    r /= W;
    const int64_t h = r % H;
    r /= H;
    const int64_t c = r % C;
    const int64_t n = r / C;
    const int64_t dst = channelsLast ? ((n * H + h) * W + w) * C + c : i;
    f[dst] = Elem<T>::fromFloat(hashValue(static_cast<uint64_t>(i), seed));
  }
}

// ---- the baseline: TensorRT cropAndResizePlugin's scheme ---------------------------------------
// One thread per output element (box, c, y, x) of a linear [K,C,ch,cw] output from a linear
// [N,C,H,W] feature map; every thread works out its box's sampling coordinates and reads its
// own 4 corners. Same float32 operations as §5 (the target is compiled with -fmad=false), so its
// output also checks kiln's.
template <kiln::DataType T>
__global__ void baselineCropAndResize(int64_t total, const typename Elem<T>::Raw* image,
                                      const float* boxes, const int32_t* indices,
                                      int32_t boxesPerImage, int32_t N, int32_t C, int32_t H,
                                      int32_t W, int32_t ch, int32_t cw, float extrapolation,
                                      typename Elem<T>::Raw* out) {
  using E = Elem<T>;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t r = idx;
    const int x = static_cast<int>(r % cw);
    r /= cw;
    const int y = static_cast<int>(r % ch);
    r /= ch;
    const int c = static_cast<int>(r % C);
    const int64_t k = r / C;
    const int n = indices ? indices[k] : static_cast<int>(k / boxesPerImage);
    if (n < 0 || n >= N) {
      out[idx] = E::fromFloat(extrapolation);
      continue;
    }
    const float y1 = boxes[4 * k], x1 = boxes[4 * k + 1], y2 = boxes[4 * k + 2],
                x2 = boxes[4 * k + 3];
    const float hs = ch > 1 ? (y2 - y1) * (H - 1) / (ch - 1) : 0.0f;
    const float ws = cw > 1 ? (x2 - x1) * (W - 1) / (cw - 1) : 0.0f;
    const float iy = ch > 1 ? y1 * (H - 1) + y * hs : 0.5f * (y1 + y2) * (H - 1);
    const float ix = cw > 1 ? x1 * (W - 1) + x * ws : 0.5f * (x1 + x2) * (W - 1);
    if (!(iy >= 0.0f && iy <= H - 1) || !(ix >= 0.0f && ix <= W - 1)) {
      out[idx] = E::fromFloat(extrapolation);
      continue;
    }
    const int top = static_cast<int>(floorf(iy)), bottom = static_cast<int>(ceilf(iy));
    const int left = static_cast<int>(floorf(ix)), right = static_cast<int>(ceilf(ix));
    const float ly = iy - top, lx = ix - left;
    const typename E::Raw* plane = image + (static_cast<int64_t>(n) * C + c) * H * W;
    const float tl = E::toFloat(plane[top * W + left]), tr = E::toFloat(plane[top * W + right]);
    const float bl = E::toFloat(plane[bottom * W + left]);
    const float br = E::toFloat(plane[bottom * W + right]);
    const float t = tl + (tr - tl) * lx, b = bl + (br - bl) * lx;
    out[idx] = E::fromFloat(t + (b - t) * ly);
  }
}

// ---- ceiling probes (channels-last, 16-byte units; not CropAndResize, only its traffic) --------
// writeOnly: the output bytes written once with 16-byte streaming stores (what any kernel that
// writes this output needs). gatherOnly: every output pixel's 4 corner vectors over all channels
// read from the channels-last feature map (same boxes, same sample positions up to rounding),
// nothing stored: the L2 -> SM gather traffic alone.
__global__ void writeOnly(uint4* out, int64_t n) {
  const uint4 v = make_uint4(0x3f800000u, 0x3f800000u, 0x3f800000u, 0x3f800000u);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    __stcs(out + i, v);
}

__global__ void gatherOnly(const uint4* feature, const float* boxes, const int32_t* indices,
                           int32_t boxesPerImage, int32_t H, int32_t W, int32_t crop,
                           int32_t unitsLog2, int32_t tile, int64_t pixels, uint4* sink) {
  __shared__ int4 off[256];
  const int64_t tile0 = static_cast<int64_t>(blockIdx.x) * tile;
  const int count = static_cast<int>(min(static_cast<int64_t>(tile), pixels - tile0));
  const int t = threadIdx.x;
  if (t < count) {
    const int64_t pix = tile0 + t;
    const int x = static_cast<int>(pix % crop), y = static_cast<int>((pix / crop) % crop);
    const int64_t k = pix / (crop * crop);
    const int n = indices ? indices[k] : static_cast<int>(k / boxesPerImage);
    const float y1 = boxes[4 * k], x1 = boxes[4 * k + 1], y2 = boxes[4 * k + 2],
                x2 = boxes[4 * k + 3];
    const float iy = y1 * (H - 1) + y * ((y2 - y1) * (H - 1) / (crop - 1));
    const float ix = x1 * (W - 1) + x * ((x2 - x1) * (W - 1) / (crop - 1));
    const int top = min(max(static_cast<int>(floorf(iy)), 0), H - 1);
    const int bottom = min(max(static_cast<int>(ceilf(iy)), 0), H - 1);
    const int left = min(max(static_cast<int>(floorf(ix)), 0), W - 1);
    const int right = min(max(static_cast<int>(ceilf(ix)), 0), W - 1);
    const int rowU = W << unitsLog2;
    const int base = n * H * rowU;
    off[t] = make_int4(
        base + top * rowU + (left << unitsLog2), base + top * rowU + (right << unitsLog2),
        base + bottom * rowU + (left << unitsLog2), base + bottom * rowU + (right << unitsLog2));
  }
  __syncthreads();
  const int total = count << unitsLog2, mask = (1 << unitsLog2) - 1;
  uint32_t acc = 0;
  for (int i = t; i < total; i += 256) {
    const int4 o = off[i >> unitsLog2];
    const int u = i & mask;
    const uint4 a = __ldg(feature + o.x + u), b = __ldg(feature + o.y + u),
                c = __ldg(feature + o.z + u), d = __ldg(feature + o.w + u);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^
           d.w;
  }
  if (acc == 0x7fc00001u) sink[0] = make_uint4(acc, 0, 0, 0);  // (practically) never
}

// ---- cases -------------------------------------------------------------------------------------

struct Case {
  std::string name, label;
  int nbInputs;
  int64_t N, C, H, W;
  int64_t boxes;  // K (3 inputs) or boxes per image (2 inputs)
  int crop;
};

const char* typeName(kiln::DataType t) {
  return t == kiln::DataType::kFLOAT ? "fp32" : t == kiln::DataType::kHALF ? "fp16" : "bf16";
}
size_t typeSize(kiln::DataType t) { return t == kiln::DataType::kFLOAT ? 4 : 2; }

// Normalised (y1, x1, y2, x2) inside the image: half large boxes, half small ones. Shared with
// the torchvision script by construction (same generator, same seed).
std::vector<float> randomBoxes(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> b(static_cast<size_t>(4 * count));
  for (int64_t k = 0; k < count; ++k) {
    const bool large = k % 2 == 0;
    const float hy = large ? 0.3f + 0.6f * u(rng) : 0.02f + 0.18f * u(rng);
    const float hx = large ? 0.3f + 0.6f * u(rng) : 0.02f + 0.18f * u(rng);
    const float y1 = u(rng) * (1.0f - hy), x1 = u(rng) * (1.0f - hx);
    b[4 * k] = y1;
    b[4 * k + 1] = x1;
    b[4 * k + 2] = y1 + hy;
    b[4 * k + 3] = x1 + hx;
  }
  return b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Median milliseconds of `fn(copy)` over `runs` runs after warm-up, rotating `copies` copies.
template <class F>
double timeMs(int copies, int runs, cudaStream_t stream, F&& fn) {
  for (int r = 0; r < 5; ++r) fn(r % copies);
  std::vector<cudaEvent_t> ev(2 * static_cast<size_t>(runs));
  for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
  for (int r = 0; r < runs; ++r) {
    CHECK_CUDA(cudaEventRecord(ev[2 * r], stream));
    fn(r % copies);
    CHECK_CUDA(cudaEventRecord(ev[2 * r + 1], stream));
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]));
    t.push_back(ms);
  }
  for (auto& e : ev) CHECK_CUDA(cudaEventDestroy(e));
  return median(t);
}

double copyBandwidth(cudaStream_t stream, int runs) {
  const size_t bytes = size_t{1} << 30;  // 1 GiB read + 1 GiB written
  void *a = nullptr, *b = nullptr;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  CHECK_CUDA(cudaMemsetAsync(a, 1, bytes, stream));
  const double ms = timeMs(1, runs, stream, [&](int) {
    CHECK_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3);
}

// ---- kiln through the plugin API ---------------------------------------------------------------

kiln::IPluginCreator* cropCreator() {
  const kiln::PluginLibraryInfo* lib = kiln::getBuiltinPluginLibrary();
  for (int32_t i = 0; lib && i < lib->nbCreators; ++i)
    if (std::strcmp(lib->creators[i]->getPluginName(), "CropAndResize") == 0 &&
        std::strcmp(lib->creators[i]->getPluginVersion(), "1") == 0)
      return lib->creators[i];
  die("the CropAndResize creator is not in libkiln_plugins");
}

kiln::PluginTensorDesc cudaDesc(const kiln::Dims& d, kiln::DataType t, kiln::TensorFormat f) {
  kiln::PluginTensorDesc desc;
  desc.dims = d;
  desc.type = t;
  desc.format = f;
  desc.device = kiln::DeviceKind::kCUDA;
  return desc;
}

struct Row {
  std::string caseName, type, format, note;
  double kilnMs = 0, baselineMs = 0, floorBytes = 0;
  double maxDiff = 0;
  bool checked = false;
  double writeMs = 0, gatherMs = 0;  // ceiling probes (channels-last rows)
  double outBytes = 0;
};

// One buffer set per copy.
struct Copy {
  void* feature = nullptr;
  void* output = nullptr;
};

float decodeHost(const std::vector<uint8_t>& bytes, kiln::DataType t, size_t i) {
  if (t == kiln::DataType::kFLOAT) {
    float f;
    std::memcpy(&f, &bytes[4 * i], 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, &bytes[2 * i], 2);
  return t == kiln::DataType::kHALF ? kiln::halfToFloat(h) : kiln::bf16ToFloat(h);
}

template <kiln::DataType T>
void fill(void* f, const Case& c, bool channelsLast, uint32_t seed, cudaStream_t s) {
  fillFeature<T><<<1024, 256, 0, s>>>(static_cast<typename Elem<T>::Raw*>(f), c.N, c.C, c.H, c.W,
                                      channelsLast, seed);
  CHECK_CUDA(cudaGetLastError());
}

template <kiln::DataType T>
void launchBaseline(const Case& c, const void* feature, const float* boxes, const int32_t* idx,
                    void* out, int64_t K, cudaStream_t s) {
  const int64_t total = K * c.C * c.crop * c.crop;
  const int64_t blocks = std::min<int64_t>((total + 255) / 256, int64_t{1} << 30);
  baselineCropAndResize<T><<<static_cast<unsigned>(blocks), 256, 0, s>>>(
      total, static_cast<const typename Elem<T>::Raw*>(feature), boxes, idx,
      static_cast<int32_t>(c.nbInputs == 2 ? c.boxes : 1), static_cast<int32_t>(c.N),
      static_cast<int32_t>(c.C), static_cast<int32_t>(c.H), static_cast<int32_t>(c.W), c.crop,
      c.crop, 0.0f, static_cast<typename Elem<T>::Raw*>(out));
  CHECK_CUDA(cudaGetLastError());
}

template <kiln::DataType T>
std::vector<Row> runCase(const Case& c, int runs, cudaStream_t stream) {
  using kiln::makeDims;
  const size_t es = typeSize(T);
  const int64_t K = c.nbInputs == 2 ? c.N * c.boxes : c.boxes;
  const int64_t featureElems = c.N * c.C * c.H * c.W;
  const int64_t outElems = K * c.C * c.crop * c.crop;
  const size_t featureBytes = static_cast<size_t>(featureElems) * es;
  const size_t outBytes = static_cast<size_t>(outElems) * es;
  // Enough copies that one run's feature map (and output) is long gone from L2 by its next turn.
  const size_t l2Flush = size_t{3} * 60 * 1024 * 1024;
  const int copies = static_cast<int>(std::clamp<size_t>(
      (l2Flush + featureBytes + outBytes - 1) / (featureBytes + outBytes), 2, 8));

  // Boxes and indices (shared by all copies: they are tiny).
  const std::vector<float> hostBoxes = randomBoxes(K, 1234);
  std::vector<int32_t> hostIdx(static_cast<size_t>(K));
  for (int64_t k = 0; k < K; ++k) hostIdx[k] = static_cast<int32_t>(k % c.N);
  float* boxes = nullptr;
  int32_t* idx = nullptr;
  CHECK_CUDA(cudaMalloc(&boxes, hostBoxes.size() * 4));
  CHECK_CUDA(cudaMemcpy(boxes, hostBoxes.data(), hostBoxes.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMalloc(&idx, hostIdx.size() * 4));
  CHECK_CUDA(cudaMemcpy(idx, hostIdx.data(), hostIdx.size() * 4, cudaMemcpyHostToDevice));

  std::vector<Copy> linear(copies), cl(copies);
  for (int i = 0; i < copies; ++i) {
    for (Copy* cp : {&linear[i], &cl[i]}) {
      CHECK_CUDA(cudaMalloc(&cp->feature, featureBytes));
      CHECK_CUDA(cudaMalloc(&cp->output, outBytes));
    }
    fill<T>(linear[i].feature, c, false, 77 + i, stream);
    fill<T>(cl[i].feature, c, true, 77 + i, stream);
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));

  // Baseline (linear only), and its output on copy 0 as the check for kiln.
  auto baseline = [&](int i) {
    launchBaseline<T>(c, linear[i].feature, boxes, c.nbInputs == 3 ? idx : nullptr,
                      linear[i].output, K, stream);
  };
  const double baselineMs = timeMs(copies, runs, stream, baseline);
  baseline(0);
  std::vector<uint8_t> want(outBytes);
  CHECK_CUDA(
      cudaMemcpyAsync(want.data(), linear[0].output, outBytes, cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));

  std::vector<Row> rows;
  for (kiln::TensorFormat format :
       {kiln::TensorFormat::kLINEAR, kiln::TensorFormat::kCHANNELS_LAST}) {
    const bool isCl = format == kiln::TensorFormat::kCHANNELS_LAST;
    // The two-input output is rank 5, linear only.
    const kiln::TensorFormat outFormat = c.nbInputs == 2 ? kiln::TensorFormat::kLINEAR : format;
    std::vector<kiln::PluginTensorDesc> in;
    in.push_back(cudaDesc(makeDims({c.N, c.C, c.H, c.W}), T, format));
    kiln::PluginTensorDesc out;
    if (c.nbInputs == 2) {
      in.push_back(cudaDesc(makeDims({c.N, c.boxes, 4}), kiln::DataType::kFLOAT,
                            kiln::TensorFormat::kLINEAR));
      out = cudaDesc(makeDims({c.N, c.boxes, c.C, c.crop, c.crop}), T, outFormat);
    } else {
      in.push_back(cudaDesc(makeDims({K, 4}), kiln::DataType::kFLOAT, kiln::TensorFormat::kLINEAR));
      in.push_back(cudaDesc(makeDims({K}), kiln::DataType::kINT32, kiln::TensorFormat::kLINEAR));
      out = cudaDesc(makeDims({K, c.C, c.crop, c.crop}), T, outFormat);
    }
    // Fields: crop size, bilinear, extrapolation 0.
    const int32_t crop = c.crop;
    const char* method = "bilinear";
    const float extrapolation = 0.0f;
    const kiln::PluginField fields[] = {
        {"crop_height", &crop, kiln::PluginFieldType::kINT32, 1},
        {"crop_width", &crop, kiln::PluginFieldType::kINT32, 1},
        {"method", method, kiln::PluginFieldType::kSTRING,
         static_cast<int32_t>(std::strlen(method))},
        {"extrapolation_value", &extrapolation, kiln::PluginFieldType::kFLOAT32, 1}};
    const kiln::PluginFieldCollection fc{4, fields};
    kiln::IPluginCreator* creator = cropCreator();
    kiln::IPlugin* plugin = creator->createPlugin("crop_bench", &fc);
    if (!plugin)
      die(std::string("createPlugin: ") +
          (creator->getLastError() ? creator->getLastError() : "?"));
    plugin->setPluginNamespace("");
    if (plugin->configurePlugin(kiln::staticPluginTensorDescs(in.data(), c.nbInputs).data(),
                                c.nbInputs, kiln::staticPluginTensorDescs(&out, 1).data(),
                                1) != kiln::kPLUGIN_SUCCESS)
      die(std::string("configurePlugin: ") +
          (plugin->getLastError() ? plugin->getLastError() : "?"));
    std::vector<Copy>& set = isCl ? cl : linear;
    // The workspace the plugin asks for (a channels-last copy of a linear feature map), as an
    // engine would allocate it; its pass counts in kiln's time.
    size_t workspaceBytes = 0;
    if (plugin->getWorkspaceSize(kiln::staticPluginTensorDescs(in.data(), c.nbInputs).data(),
                                 c.nbInputs, kiln::staticPluginTensorDescs(&out, 1).data(), 1,
                                 &workspaceBytes) != kiln::kPLUGIN_SUCCESS)
      die("getWorkspaceSize failed");
    void* workspace = nullptr;
    if (workspaceBytes > 0) CHECK_CUDA(cudaMalloc(&workspace, workspaceBytes));
    auto kiln = [&](int i) {
      const void* ins[] = {set[i].feature, boxes, idx};
      void* outs[] = {set[i].output};
      if (plugin->enqueue(in.data(), &out, ins, outs, workspace, stream) != kiln::kPLUGIN_SUCCESS)
        die(std::string("enqueue: ") + (plugin->getLastError() ? plugin->getLastError() : "?"));
    };
    // Check against the baseline on copy 0 (poisoned first).
    CHECK_CUDA(cudaMemsetAsync(set[0].output, 0xff, outBytes, stream));
    kiln(0);
    std::vector<uint8_t> got(outBytes);
    CHECK_CUDA(
        cudaMemcpyAsync(got.data(), set[0].output, outBytes, cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    Row row;
    row.checked = true;
    const bool outCl = outFormat == kiln::TensorFormat::kCHANNELS_LAST;
    const int64_t P = static_cast<int64_t>(c.crop) * c.crop;
    for (int64_t i = 0; i < outElems; ++i) {
      // Logical (k, ch, p) of linear element i, and where the kiln output keeps it.
      const int64_t p = i % P, kc = i / P, ch = kc % c.C, k = kc / c.C;
      const int64_t j = outCl ? (k * P + p) * c.C + ch : i;
      const float g = decodeHost(got, T, static_cast<size_t>(j));
      const float w = decodeHost(want, T, static_cast<size_t>(i));
      const double d = std::isnan(g) || std::isnan(w) ? INFINITY : std::fabs(double(g) - w);
      row.maxDiff = std::max(row.maxDiff, d);
    }
    row.kilnMs = timeMs(copies, runs, stream, kiln);
    plugin->destroy();
    if (workspace) CHECK_CUDA(cudaFree(workspace));
    const int64_t units = c.C * static_cast<int64_t>(es) / 16;
    if (isCl && (units & (units - 1)) == 0 && c.C * static_cast<int64_t>(es) % 16 == 0) {
      row.writeMs = timeMs(copies, runs, stream, [&](int i) {
        writeOnly<<<132 * 8, 256, 0, stream>>>(static_cast<uint4*>(set[i].output),
                                               static_cast<int64_t>(outBytes / 16));
        CHECK_CUDA(cudaGetLastError());
      });
      int log2 = 0;
      while ((int64_t{1} << log2) < units) ++log2;
      const int tile = static_cast<int>(std::clamp<int64_t>(16 * 256 / units, 1, 256));
      const int64_t pixels = K * c.crop * c.crop;
      row.gatherMs = timeMs(copies, runs, stream, [&](int i) {
        gatherOnly<<<static_cast<unsigned>((pixels + tile - 1) / tile), 256, 0, stream>>>(
            static_cast<const uint4*>(set[i].feature), boxes, c.nbInputs == 3 ? idx : nullptr,
            static_cast<int32_t>(c.nbInputs == 2 ? c.boxes : 1), static_cast<int32_t>(c.H),
            static_cast<int32_t>(c.W), c.crop, log2, tile, pixels,
            static_cast<uint4*>(set[i].output));
        CHECK_CUDA(cudaGetLastError());
      });
    }
    row.caseName = c.name;
    row.type = typeName(T);
    row.format = isCl ? "channels_last" : "linear";
    row.note = c.nbInputs == 2 && isCl ? " (output linear: rank 5)" : "";
    row.baselineMs = baselineMs;
    row.floorBytes = static_cast<double>(featureBytes + outBytes);
    row.outBytes = static_cast<double>(outBytes);
    rows.push_back(row);
  }
  for (int i = 0; i < copies; ++i)
    for (Copy* cp : {&linear[i], &cl[i]}) {
      CHECK_CUDA(cudaFree(cp->feature));
      CHECK_CUDA(cudaFree(cp->output));
    }
  CHECK_CUDA(cudaFree(boxes));
  CHECK_CUDA(cudaFree(idx));
  return rows;
}

// torchvision results: lines "case,type,format,ms" (comments and a header allowed).
std::map<std::string, double> readTorch(const std::string& path) {
  std::map<std::string, double> m;
  std::ifstream f(path);
  if (!f) die("cannot read --torch-results " + path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("case,", 0) == 0) continue;
    std::stringstream ss(line);
    std::string cs, type, format, ms;
    if (!std::getline(ss, cs, ',') || !std::getline(ss, type, ',') ||
        !std::getline(ss, format, ',') || !std::getline(ss, ms, ','))
      continue;
    char* end = nullptr;
    const double v = std::strtod(ms.c_str(), &end);
    if (end != ms.c_str() && v > 0) m[cs + "," + type + "," + format] = v;
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 50;
  std::string torchPath, csvPath, caseFilter = "abc", typeFilter = "fp32,fp16,bf16";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::max(5, std::atoi(argv[++i]));
    } else if (a == "--torch-results" && i + 1 < argc) {
      torchPath = argv[++i];
    } else if (a == "--csv" && i + 1 < argc) {
      csvPath = argv[++i];
    } else if (a == "--cases" && i + 1 < argc) {
      caseFilter = argv[++i];
    } else if (a == "--types" && i + 1 < argc) {
      typeFilter = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--runs N] [--torch-results FILE] [--csv FILE] "
                   "[--cases abc] [--types fp32,fp16,bf16]\n",
                   argv[0]);
      return 2;
    }
  }
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::fprintf(stderr, "no CUDA GPU: %s\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found 0 devices");
    return 1;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::map<std::string, double> torch;
  if (!torchPath.empty()) torch = readTorch(torchPath);

  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const double copyBw = copyBandwidth(stream, 20);
  std::fprintf(stderr, "device-to-device copy: %.0f GB/s (read + written)\n", copyBw / 1e9);

  const std::vector<Case> cases = {
      {"a", "[1,1024,50,68], 300 boxes, 14x14 (3 inputs)", 3, 1, 1024, 50, 68, 300, 14},
      {"b", "[1,256,200,272], 1000 boxes, 7x7 (3 inputs)", 3, 1, 256, 200, 272, 1000, 7},
      {"c", "[8,256,64,64], 100 boxes per image, 7x7 (2 inputs)", 2, 8, 256, 64, 64, 100, 7},
  };
  std::vector<Row> rows;
  std::vector<Case> run;
  for (const Case& c : cases) {
    if (caseFilter.find(c.name) == std::string::npos) continue;
    run.push_back(c);
    std::fprintf(stderr, "case %s: %s\n", c.name.c_str(), c.label.c_str());
    if (typeFilter.find("fp32") != std::string::npos)
      for (Row& r : runCase<kiln::DataType::kFLOAT>(c, runs, stream)) rows.push_back(r);
    if (typeFilter.find("fp16") != std::string::npos)
      for (Row& r : runCase<kiln::DataType::kHALF>(c, runs, stream)) rows.push_back(r);
    if (typeFilter.find("bf16") != std::string::npos)
      for (Row& r : runCase<kiln::DataType::kBF16>(c, runs, stream)) rows.push_back(r);
  }
  CHECK_CUDA(cudaStreamDestroy(stream));

  if (!csvPath.empty()) {
    std::ofstream f(csvPath);
    f << "case,type,format,kiln_ms,baseline_ms,roi_align_ms,floor_bytes,copy_bw,max_diff\n";
    for (const Row& r : rows) {
      const auto t = torch.find(r.caseName + "," + r.type + "," + r.format);
      f << r.caseName << "," << r.type << "," << r.format << "," << r.kilnMs << "," << r.baselineMs
        << "," << (t == torch.end() ? 0.0 : t->second) << "," << r.floorBytes << "," << copyBw
        << "," << r.maxDiff << "\n";
    }
  }

  // The table, last.
  std::printf(
      "\nCropAndResize on %s (sm_%d%d, %d SMs, %.0f MiB L2); copy bandwidth %.0f GB/s "
      "(D2D, read + written); median of %d runs, inputs rotated\n",
      prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0,
      copyBw / 1e9, runs);
  std::printf(
      "%%copy = (feature-map + output bytes) / time / copy bandwidth. baseline: one thread "
      "per output element, linear (TensorRT cropAndResizePlugin scheme).\n");
  bool allMatch = true;
  for (const Case& c : run) {
    std::printf("\n(%s) %s\n", c.name.c_str(), c.label.c_str());
    std::printf("%-5s %-14s %9s %9s %7s | %9s %7s %8s | %9s %7s %8s | %s\n", "type", "format",
                "floor MB", "kiln ms", "%copy", "base ms", "%copy", "vs base", "roi ms", "%copy",
                "vs roi", "check");
    for (const Row& r : rows) {
      if (r.caseName != c.name) continue;
      const double pk = r.floorBytes / (r.kilnMs * 1e-3) / copyBw * 100;
      const double pb = r.floorBytes / (r.baselineMs * 1e-3) / copyBw * 100;
      const auto t = torch.find(r.caseName + "," + r.type + "," + r.format);
      char roi[64] = "      n/a     n/a      n/a";
      if (t != torch.end())
        std::snprintf(roi, sizeof roi, "%9.4f %6.1f%% %7.2fx", t->second,
                      r.floorBytes / (t->second * 1e-3) / copyBw * 100, t->second / r.kilnMs);
      const bool match = r.maxDiff == 0.0;
      allMatch = allMatch && match;
      char check[64];
      std::snprintf(check, sizeof check, "%s (max diff %g)", match ? "same" : "DIFFERS", r.maxDiff);
      std::printf("%-5s %-14s %9.1f %9.4f %6.1f%% | %9.4f %6.1f%% %7.2fx | %s | %s%s\n",
                  r.type.c_str(), r.format.c_str(), r.floorBytes / 1e6, r.kilnMs, pk, r.baselineMs,
                  pb, r.baselineMs / r.kilnMs, roi, check, r.note.c_str());
    }
    bool header = false;
    for (const Row& r : rows) {
      if (r.caseName != c.name || r.writeMs <= 0) continue;
      if (!header) {
        std::printf(
            "  ceilings (channels-last, same run): write-only = output bytes written once; "
            "gather-only = 4 corner vectors per output pixel read, nothing stored\n");
        std::printf("  %-5s %9s %9s %8s %10s | %9s %8s %11s | %9s %10s\n", "type", "out MB",
                    "write ms", "GB/s", "floor%copy", "gather ms", "gathr MB", "gather GB/s",
                    "kiln ms", "kiln/write");
        header = true;
      }
      const double ob = r.outBytes;
      std::printf("  %-5s %9.1f %9.4f %8.0f %9.1f%% | %9.4f %8.1f %11.0f | %9.4f %9.2fx\n",
                  r.type.c_str(), ob / 1e6, r.writeMs, ob / (r.writeMs * 1e-3) / 1e9,
                  r.floorBytes / (r.writeMs * 1e-3) / copyBw * 100, r.gatherMs, 4 * ob / 1e6,
                  4 * ob / (r.gatherMs * 1e-3) / 1e9, r.kilnMs, r.kilnMs / r.writeMs);
    }
  }
  std::printf("\nvs base / vs roi: how many times faster kiln is (their time / kiln's time).\n");
  if (!allMatch) {
    std::printf("WARNING: some kiln outputs differ from the baseline's (see 'check')\n");
    return 3;
  }
  return 0;
}
