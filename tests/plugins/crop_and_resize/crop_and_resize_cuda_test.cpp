// CropAndResize's CUDA path against its CPU path, both driven through the public plugin API
// (creator -> configurePlugin -> enqueue), on fresh random inputs: every type x format x form x
// method, and every edge case of DESIGN.md §5 (boxes partly or wholly outside, flipped,
// degenerate, crop size 1, NaN and infinite coordinates, box indices outside [0, N)), channel
// counts that are and are not a multiple of the 16-byte vector, and misaligned buffers.
//
// The CUDA output is poisoned (all bytes 0xff, a NaN in every type that neither path ever
// writes) before each run, so an element the kernel forgets fails. FP32 must match the CPU
// kernel bit for bit (same float32 operations in the same order, no FMA); FP16/BF16 to their
// precision (in practice they match bit for bit too).
//
// Label `gpu`: every test skips, with the CUDA error, where no GPU is present. Sizes are small so
// that the whole file runs in seconds, also under compute-sanitizer memcheck and racecheck.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "crop_and_resize_problem_test_util.h"
#include "kiln/logger.h"
#include "kiln/plugin_utils.h"

namespace kiln::testing {
namespace {

#define ASSERT_CUDA(call)                                                       \
  do {                                                                          \
    const cudaError_t e_ = (call);                                              \
    ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorName(e_) << " (" \
                               << cudaGetErrorString(e_) << ")";                \
  } while (0)

// "" when a GPU is usable, else why not.
std::string gpuMissing() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  if (count == 0) return "cudaGetDeviceCount found 0 devices";
  return {};
}

// Bad box indices make the CPU path warn; the tests expect them, so keep the output quiet.
class QuietLogger : public ILogger {
 public:
  void log(Severity severity, const char* message) noexcept override {
    if (severity == Severity::kError) std::fprintf(stderr, "kiln error: %s\n", message);
  }
};

// ---- one random problem ------------------------------------------------------------------------

Problem randomProblem(std::mt19937& rng, int nbInputs, DataType type, DataType boxesType,
                      TensorFormat featureFormat, TensorFormat outputFormat, bool nearest) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Problem p;
  p.nbInputs = nbInputs;
  p.type = type;
  p.boxesType = boxesType;
  p.featureFormat = featureFormat;
  p.outputFormat = outputFormat;
  p.nearest = nearest;
  // Channel counts below, at and above one 16-byte vector (4 fp32, 8 fp16/bf16), odd ones, and
  // enough for several vectors per lane in a 32-lane group.
  static const int kChannels[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 24, 32, 33, 40, 64, 130, 264};
  p.C = kChannels[pick(0, static_cast<int>(sizeof kChannels / sizeof *kChannels) - 1)];
  p.N = pick(1, 3);
  p.H = pick(0, 4) == 0 ? 1 : pick(2, 20);  // H == 1 makes H-1 == 0
  p.W = pick(0, 4) == 0 ? 1 : pick(2, 20);
  p.ch = pick(0, 3) == 0 ? 1 : pick(2, 9);
  p.cw = pick(0, 3) == 0 ? 1 : pick(2, 9);
  if (p.C >= 130) {  // keep the big ones small elsewhere
    p.H = std::min<int64_t>(p.H, 8);
    p.W = std::min<int64_t>(p.W, 8);
  }
  p.extrapolation = pick(0, 5) == 0
                        ? std::numeric_limits<float>::quiet_NaN()
                        : roundTo(type, std::uniform_real_distribution<float>(-50.0f, 50.0f)(rng));
  if (p.extrapolation == 0.0f) p.extrapolation = 3.5f;
  std::uniform_real_distribution<float> value(-8.0f, 8.0f);
  p.image.resize(static_cast<size_t>(p.N * p.C * p.H * p.W));
  for (float& v : p.image) {
    v = roundTo(type, value(rng));
    if (v == 0.0f) v = 0.75f;
  }
  if (nbInputs == 2) {
    p.B = pick(1, 5);
    p.K = p.N * p.B;
    p.rois4d = pick(0, 1) == 1;
  } else {
    p.K = pick(0, 4) == 0 ? pick(0, 2) : pick(3, 12);
    for (int64_t k = 0; k < p.K; ++k) {
      int32_t index = pick(0, static_cast<int>(p.N) - 1);
      if (pick(0, 5) == 0) {
        const int32_t bad[] = {-1, static_cast<int32_t>(p.N), static_cast<int32_t>(p.N) + 7,
                               std::numeric_limits<int32_t>::min(),
                               std::numeric_limits<int32_t>::max()};
        index = bad[pick(0, 4)];
      }
      p.indices.push_back(index);
    }
  }
  p.boxes.resize(static_cast<size_t>(4 * p.K));
  for (int64_t k = 0; k < p.K; ++k) randomBox(rng, &p.boxes[4 * k], /*smallBoxes=*/true);
  for (float& b : p.boxes) b = roundTo(boxesType, b);
  return p;
}

// ---- tensors and runs --------------------------------------------------------------------------

PluginPtr configured(const Problem& p, const Tensors& t) {
  Fields fields = cropFields(p.ch, p.cw, p.nearest ? "nearest" : "bilinear", p.extrapolation);
  PluginPtr plugin = create(fields);
  EXPECT_TRUE(plugin) << lastError(creator());
  if (!plugin) return plugin;
  plugin->setPluginNamespace("");
  std::vector<PluginTensorDesc> all = t.inDescs;
  all.push_back(t.outDesc);
  for (int32_t pos = 0; pos <= p.nbInputs; ++pos)
    EXPECT_TRUE(plugin->supportsFormatCombination(pos, all.data(), p.nbInputs, 1))
        << "position " << pos;
  const int32_t status =
      plugin->configurePlugin(kiln::staticPluginTensorDescs(t.inDescs.data(), p.nbInputs).data(),
                              p.nbInputs, kiln::staticPluginTensorDescs(&t.outDesc, 1).data(), 1);
  EXPECT_EQ(status, kPLUGIN_SUCCESS) << lastError(plugin.get());
  if (status != kPLUGIN_SUCCESS) plugin.reset();
  return plugin;
}

// The CPU path's output bytes (the reference the CUDA path must match).
std::vector<uint8_t> runCpu(const Problem& p) {
  const Tensors t = tensorsOf(p, DeviceKind::kCPU);
  PluginPtr plugin = configured(p, t);
  if (!plugin) return {};
  std::vector<const void*> ins;
  for (const auto& b : t.inBytes) ins.push_back(b.data());
  std::vector<uint8_t> out(t.outElements * sizeOf(p.type), 0xff);
  void* outs[] = {out.data()};
  EXPECT_EQ(plugin->enqueue(t.inDescs.data(), &t.outDesc, ins.data(), outs, nullptr, nullptr),
            kPLUGIN_SUCCESS)
      << lastError(plugin.get());
  return out;
}

// Device memory freed on scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
};

struct CudaStream {
  cudaStream_t stream = nullptr;
  ~CudaStream() {
    if (stream) cudaStreamDestroy(stream);
  }
};

// How the CUDA run is made.
struct CudaRunOptions {
  int64_t featureOffsetElements = 0;  // shift the feature map (and output) off 16-byte alignment
  int64_t outputOffsetElements = 0;
  bool graph = false;  // capture the enqueue in a CUDA graph and launch that
  // Give the enqueue the workspace getWorkspaceSize asks for (poisoned); false: none, so the
  // kernel runs without (a linear feature map is then gathered in place).
  bool workspace = true;
};

// Copies the inputs to the device, poisons the output, enqueues `plugin` on a fresh stream and
// returns the output bytes.
void runCuda(IPlugin& plugin, const Problem& p, const CudaRunOptions& options,
             std::vector<uint8_t>& result) {
  const Tensors t = tensorsOf(p, DeviceKind::kCUDA);
  const size_t es = sizeOf(p.type);
  std::vector<DeviceBuffer> inBuffers(t.inBytes.size());
  std::vector<const void*> ins;
  for (size_t i = 0; i < t.inBytes.size(); ++i) {
    const size_t offset = i == 0 ? static_cast<size_t>(options.featureOffsetElements) * es : 0;
    const size_t bytes = t.inBytes[i].size();
    if (bytes == 0) {
      ins.push_back(nullptr);
      continue;
    }
    ASSERT_CUDA(cudaMalloc(&inBuffers[i].ptr, bytes + offset));
    char* at = static_cast<char*>(inBuffers[i].ptr) + offset;
    ASSERT_CUDA(cudaMemcpy(at, t.inBytes[i].data(), bytes, cudaMemcpyHostToDevice));
    ins.push_back(at);
  }
  const size_t outBytes = t.outElements * es;
  const size_t outOffset = static_cast<size_t>(options.outputOffsetElements) * es;
  DeviceBuffer out;
  ASSERT_CUDA(cudaMalloc(&out.ptr, outBytes + outOffset + 1));
  ASSERT_CUDA(cudaMemset(out.ptr, 0xff, outBytes + outOffset + 1));  // poison: NaN in every type
  void* outs[] = {static_cast<char*>(out.ptr) + outOffset};
  DeviceBuffer workspace;
  size_t workspaceBytes = 0;
  ASSERT_EQ(plugin.getWorkspaceSize(
                kiln::staticPluginTensorDescs(t.inDescs.data(), p.nbInputs).data(), p.nbInputs,
                kiln::staticPluginTensorDescs(&t.outDesc, 1).data(), 1, &workspaceBytes),
            kPLUGIN_SUCCESS);
  if (options.workspace && workspaceBytes > 0) {
    ASSERT_CUDA(cudaMalloc(&workspace.ptr, workspaceBytes));
    ASSERT_CUDA(cudaMemset(workspace.ptr, 0xff, workspaceBytes));
  }
  CudaStream s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  if (options.graph) {
    ASSERT_CUDA(cudaStreamBeginCapture(s.stream, cudaStreamCaptureModeThreadLocal));
    const int32_t status =
        plugin.enqueue(t.inDescs.data(), &t.outDesc, ins.data(), outs, workspace.ptr, s.stream);
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(s.stream, &graph);
    ASSERT_EQ(status, kPLUGIN_SUCCESS) << lastError(&plugin);
    ASSERT_CUDA(end);
    cudaGraphExec_t exec = nullptr;
    const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    ASSERT_CUDA(inst);
    const cudaError_t launch = cudaGraphLaunch(exec, s.stream);
    const cudaError_t sync = cudaStreamSynchronize(s.stream);
    cudaGraphExecDestroy(exec);
    ASSERT_CUDA(launch);
    ASSERT_CUDA(sync);
  } else {
    ASSERT_EQ(
        plugin.enqueue(t.inDescs.data(), &t.outDesc, ins.data(), outs, workspace.ptr, s.stream),
        kPLUGIN_SUCCESS)
        << lastError(&plugin);
    ASSERT_CUDA(cudaStreamSynchronize(s.stream));
  }
  ASSERT_CUDA(cudaGetLastError());
  std::vector<uint8_t> all(outBytes + outOffset + 1);
  ASSERT_CUDA(cudaMemcpy(all.data(), out.ptr, all.size(), cudaMemcpyDeviceToHost));
  // Nothing written outside the output (the poison bytes around it are intact).
  for (size_t i = 0; i < outOffset; ++i) ASSERT_EQ(all[i], 0xff) << "write before the output";
  ASSERT_EQ(all.back(), 0xff) << "write past the end of the output";
  result.assign(all.begin() + static_cast<std::ptrdiff_t>(outOffset),
                all.begin() + static_cast<std::ptrdiff_t>(outOffset + outBytes));
}

// The CUDA output against the CPU path's: fp32 bit for bit, fp16 within 2e-3 and bf16 within
// 1e-2 relative; NaN where the CPU has NaN; never the poison pattern.
void expectSame(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, DataType type,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const size_t es = sizeOf(type);
  const double tolerance = type == DataType::kFLOAT ? 0.0 : type == DataType::kHALF ? 2e-3 : 1e-2;
  int failures = 0;
  for (size_t i = 0; i < got.size() / es && failures < 5; ++i) {
    bool poisoned = true;
    for (size_t b = 0; b < es; ++b) poisoned = poisoned && got[i * es + b] == 0xff;
    if (poisoned) {
      ++failures;
      ADD_FAILURE() << what << ": element " << i << " was never written";
      continue;
    }
    const float g = decodeAt(got, type, i), w = decodeAt(want, type, i);
    if (std::isnan(w) || std::isnan(g)) {
      if (std::isnan(w) != std::isnan(g)) {
        ++failures;
        ADD_FAILURE() << what << ": element " << i << " is " << g << ", CPU " << w;
      }
      continue;
    }
    const bool ok = type == DataType::kFLOAT
                        ? std::memcmp(&got[i * es], &want[i * es], es) == 0
                        : std::fabs(static_cast<double>(g) - w) <= tolerance * std::fabs(w);
    if (!ok) {
      ++failures;
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", CPU " << w << " (diff "
                    << (static_cast<double>(g) - w) << ")";
    }
  }
}

class CropAndResizeCudaTest : public SeededTest {
 protected:
  void SetUp() override {
    SeededTest::SetUp();
    const std::string missing = gpuMissing();
    if (!missing.empty()) GTEST_SKIP() << "no CUDA GPU: " << missing;
    setLogger(&logger_);
  }
  void TearDown() override {
    setLogger(nullptr);
    SeededTest::TearDown();
  }

  // One problem, CPU path vs CUDA path.
  void check(const Problem& p, const CudaRunOptions& options = {}) {
    const std::string what = describe(p);
    SCOPED_TRACE(what);
    const std::vector<uint8_t> want = runCpu(p);
    if (HasFailure()) return;
    const Tensors t = tensorsOf(p, DeviceKind::kCUDA);
    PluginPtr plugin = configured(p, t);
    ASSERT_TRUE(plugin);
    std::vector<uint8_t> got;
    runCuda(*plugin, p, options, got);
    if (HasFatalFailure()) return;
    expectSame(got, want, p.type, what);
  }

  // Every type x boxes type x format x method of one form, `cases` random problems each.
  void runAll(int nbInputs, int cases) {
    const auto L = TensorFormat::kLINEAR, CL = TensorFormat::kCHANNELS_LAST;
    for (DataType type : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
      std::vector<DataType> boxesTypes = {DataType::kFLOAT};
      if (type != DataType::kFLOAT) boxesTypes.push_back(type);
      for (DataType boxesType : boxesTypes)
        for (TensorFormat ff : {L, CL})
          for (TensorFormat of : {L, CL}) {
            if (nbInputs == 2 && of == CL) continue;  // rank-5 output: linear only
            for (bool nearest : {false, true})
              for (int i = 0; i < cases; ++i) {
                CudaRunOptions o;
                o.workspace = i != 0;  // the first case without workspace
                check(randomProblem(rng_, nbInputs, type, boxesType, ff, of, nearest), o);
                if (HasFailure()) return;  // one case's report is enough
              }
          }
    }
  }

  QuietLogger logger_;
};

TEST_F(CropAndResizeCudaTest, TwoInputFormMatchesCpu) { runAll(2, 3); }

TEST_F(CropAndResizeCudaTest, ThreeInputFormMatchesCpu) { runAll(3, 3); }

// Buffers one element off 16-byte alignment (C a multiple of the vector, so only the pointer
// stops the vector path) and C * element size not a multiple of 16.
TEST_F(CropAndResizeCudaTest, MisalignedBuffersAndOddChannels) {
  const auto L = TensorFormat::kLINEAR, CL = TensorFormat::kCHANNELS_LAST;
  for (DataType type : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16})
    for (TensorFormat ff : {L, CL})
      for (TensorFormat of : {L, CL})
        for (int64_t C : {16, 24, 6, 13}) {
          Problem p = randomProblem(rng_, 3, type, DataType::kFLOAT, ff, of, false);
          // Same problem with another C: redraw the image.
          p.C = C;
          p.image.assign(static_cast<size_t>(p.N * p.C * p.H * p.W), 0.0f);
          std::uniform_real_distribution<float> value(-8.0f, 8.0f);
          for (float& v : p.image) v = roundTo(type, value(rng_)) + 0.0f;
          for (float& v : p.image)
            if (v == 0.0f) v = 1.25f;
          for (int64_t shift : {int64_t{0}, int64_t{1}}) {
            CudaRunOptions o;
            o.featureOffsetElements = shift;
            o.outputOffsetElements = shift ? 3 : 0;
            check(p, o);
            if (HasFailure()) return;
          }
        }
}

// Crops of more than 256 pixels (a box's pixels split over several blocks of the planes
// kernel), channel counts of several 8-unit chunks and a partial one, with and without workspace.
TEST_F(CropAndResizeCudaTest, LargeCropsAndManyChannels) {
  const auto L = TensorFormat::kLINEAR, CL = TensorFormat::kCHANNELS_LAST;
  for (DataType type : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16})
    for (TensorFormat ff : {L, CL})
      for (int nbInputs : {2, 3})
        for (bool workspace : {true, false}) {
          Problem p = randomProblem(rng_, nbInputs, type, DataType::kFLOAT, ff, L, false);
          p.ch = 17;
          p.cw = 20;
          p.C = type == DataType::kFLOAT ? 72 : 80;  // 18 or 10 units: 3 or 2 chunks
          p.H = 9;
          p.W = 11;
          p.image.assign(static_cast<size_t>(p.N * p.C * p.H * p.W), 0.0f);
          std::uniform_real_distribution<float> value(-8.0f, 8.0f);
          for (float& v : p.image) v = roundTo(type, value(rng_));
          for (float& v : p.image)
            if (v == 0.0f) v = 1.25f;
          CudaRunOptions o;
          o.workspace = workspace;
          check(p, o);
          if (HasFailure()) return;
        }
}

// The enqueue can be captured in a CUDA graph (no allocation, no synchronisation inside).
TEST_F(CropAndResizeCudaTest, GraphCapture) {
  const auto L = TensorFormat::kLINEAR, CL = TensorFormat::kCHANNELS_LAST;
  CudaRunOptions o;
  o.graph = true;
  for (TensorFormat ff : {L, CL})
    for (TensorFormat of : {L, CL}) {
      check(randomProblem(rng_, 3, DataType::kHALF, DataType::kFLOAT, ff, of, false), o);
      if (HasFailure()) return;
    }
  check(randomProblem(rng_, 2, DataType::kFLOAT, DataType::kFLOAT, CL, L, true), o);
}

// A case worked by hand from §5, so that both paths agreeing on a wrong reading still fails.
TEST_F(CropAndResizeCudaTest, HandWorkedValues) {
  Problem p;
  p.nbInputs = 3;
  p.N = 1;
  p.C = 1;
  p.H = 2;
  p.W = 2;
  p.K = 2;
  p.ch = p.cw = 3;
  p.extrapolation = -1.0f;
  p.image = {1, 2, 3, 4};
  p.boxes = {0, 0, 1, 1, 0, 0, 2, 1};  // the second reaches past the bottom border
  p.indices = {0, 0};
  const Tensors t = tensorsOf(p, DeviceKind::kCUDA);
  PluginPtr plugin = configured(p, t);
  ASSERT_TRUE(plugin);
  std::vector<uint8_t> got;
  runCuda(*plugin, p, {}, got);
  if (HasFatalFailure()) return;
  std::vector<float> values(18);
  std::memcpy(values.data(), got.data(), 18 * 4);
  EXPECT_EQ(values, (std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4,  //
                                        1, 1.5f, 2, 3, 3.5f, 4, -1, -1, -1}));
  // A bad image index: extrapolation, no read.
  p.indices = {1, -3};
  runCuda(*plugin, p, {}, got);
  if (HasFatalFailure()) return;
  std::memcpy(values.data(), got.data(), 18 * 4);
  EXPECT_EQ(values, std::vector<float>(18, -1.0f));
}

// The whole lifecycle on CUDA tensors: the 44 serialized bytes keep the device, the engine
// object from them and its context clone run the CUDA kernel.
TEST_F(CropAndResizeCudaTest, SerializedConfigurationRunsOnCuda) {
  const Problem p =
      randomProblem(rng_, 3, DataType::kBF16, DataType::kBF16, TensorFormat::kCHANNELS_LAST,
                    TensorFormat::kCHANNELS_LAST, false);
  SCOPED_TRACE(describe(p));
  const std::vector<uint8_t> want = runCpu(p);
  const Tensors t = tensorsOf(p, DeviceKind::kCUDA);
  PluginPtr build = configured(p, t);
  ASSERT_TRUE(build);
  const std::vector<uint8_t> bytes = serializeToBytes(*build);
  ASSERT_EQ(bytes.size(), 44u);
  PluginPtr engine(creator()->deserializePlugin("crop0", bytes.data(), bytes.size()));
  ASSERT_TRUE(engine) << lastError(creator());
  engine->setPluginNamespace("");
  EXPECT_EQ(serializeToBytes(*engine), bytes);
  ASSERT_EQ(engine->initialize(), kPLUGIN_SUCCESS);
  PluginPtr context(engine->clone());
  ASSERT_TRUE(context);
  ASSERT_EQ(context->attachToContext(nullptr), kPLUGIN_SUCCESS);
  std::vector<uint8_t> got;
  runCuda(*context, p, {}, got);
  if (!HasFatalFailure()) expectSame(got, want, p.type, "context object");
  EXPECT_EQ(context->detachFromContext(), kPLUGIN_SUCCESS);
  context.reset();
  EXPECT_EQ(engine->terminate(), kPLUGIN_SUCCESS);

  // CPU tensors for a CUDA-configured plugin: refused, saying why.
  const Tensors cpu = tensorsOf(p, DeviceKind::kCPU);
  std::vector<const void*> ins;
  for (const auto& b : cpu.inBytes) ins.push_back(b.data());
  std::vector<uint8_t> out(cpu.outElements * sizeOf(p.type) + 1);
  void* outs[] = {out.data()};
  EXPECT_NE(build->enqueue(cpu.inDescs.data(), &cpu.outDesc, ins.data(), outs, nullptr, nullptr),
            kPLUGIN_SUCCESS);
  EXPECT_NE(lastError(build.get()).find("cuda"), std::string::npos) << lastError(build.get());
}

// Mixed devices are refused at configuration.
TEST_F(CropAndResizeCudaTest, MixedDevicesRefused) {
  const Problem p = randomProblem(rng_, 3, DataType::kFLOAT, DataType::kFLOAT,
                                  TensorFormat::kLINEAR, TensorFormat::kLINEAR, false);
  Tensors t = tensorsOf(p, DeviceKind::kCUDA);
  t.inDescs[1].device = DeviceKind::kCPU;
  Fields fields = cropFields(p.ch, p.cw);
  PluginPtr plugin = create(fields);
  ASSERT_TRUE(plugin);
  EXPECT_NE(plugin->configurePlugin(kiln::staticPluginTensorDescs(t.inDescs.data(), 3).data(), 3,
                                    kiln::staticPluginTensorDescs(&t.outDesc, 1).data(), 1),
            kPLUGIN_SUCCESS);
  EXPECT_NE(lastError(plugin.get()).find("same device"), std::string::npos)
      << lastError(plugin.get());
}

// Zero-size outputs launch nothing and succeed, even with null buffers.
TEST_F(CropAndResizeCudaTest, ZeroSizeOutputs) {
  for (int64_t K : {0, 3}) {
    Problem p;
    p.nbInputs = 3;
    p.N = 1;
    p.C = K == 0 ? 4 : 0;
    p.H = p.W = 4;
    p.K = K;
    p.ch = p.cw = 2;
    const Tensors t = tensorsOf(p, DeviceKind::kCUDA);
    PluginPtr plugin = configured(p, t);
    ASSERT_TRUE(plugin);
    const void* ins[] = {nullptr, nullptr, nullptr};
    void* outs[] = {nullptr};
    CudaStream s;
    ASSERT_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    EXPECT_EQ(plugin->enqueue(t.inDescs.data(), &t.outDesc, ins, outs, nullptr, s.stream),
              kPLUGIN_SUCCESS)
        << lastError(plugin.get());
    ASSERT_CUDA(cudaStreamSynchronize(s.stream));
  }
}

}  // namespace
}  // namespace kiln::testing
