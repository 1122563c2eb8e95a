// CropAndResize's CPU path against a reference written here straight from DESIGN.md §5, on
// random inputs, through the whole plugin lifecycle: createPlugin -> clone -> configurePlugin ->
// enqueue, then serialize -> deserializePlugin -> clone -> attachToContext -> enqueue.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "crop_and_resize_problem_test_util.h"
#include "kiln/logger.h"
#include "kiln/plugin_utils.h"

namespace kiln::testing {
namespace {

// ---- the reference (shares nothing with the kernel) ---------------------------------------------

// Where output index i of a crop of `crop` samples lands along an input axis of `size`, in the
// float32 operations of §5, in their order.
float sourceCoordinate(float c1, float c2, int64_t size, int crop, int i) {
  if (crop > 1) {
    const float scale = (c2 - c1) * static_cast<float>(size - 1) / static_cast<float>(crop - 1);
    return c1 * static_cast<float>(size - 1) + static_cast<float>(i) * scale;
  }
  return 0.5f * (c1 + c2) * static_cast<float>(size - 1);
}

bool insideAxis(float v, int64_t size) {
  return v >= 0.0f && v <= static_cast<float>(size - 1);  // NaN fails both
}

// image: logical [N,C,H,W]; boxes: 4 floats per box; imageOf: the image of each box (any value);
// returns logical [K,C,ch,cw].
std::vector<float> reference(const std::vector<float>& image, int64_t N, int64_t C, int64_t H,
                             int64_t W, const std::vector<float>& boxes,
                             const std::vector<int64_t>& imageOf, int ch, int cw, bool nearest,
                             float extrapolation) {
  const int64_t K = static_cast<int64_t>(imageOf.size());
  std::vector<float> out;
  auto at = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    return image[((n * C + c) * H + h) * W + w];
  };
  for (int64_t k = 0; k < K; ++k) {
    const int64_t n = imageOf[k];
    const float y1 = boxes[4 * k], x1 = boxes[4 * k + 1], y2 = boxes[4 * k + 2],
                x2 = boxes[4 * k + 3];
    for (int64_t c = 0; c < C; ++c) {
      for (int y = 0; y < ch; ++y) {
        for (int x = 0; x < cw; ++x) {
          if (n < 0 || n >= N) {
            out.push_back(extrapolation);
            continue;
          }
          const float iy = sourceCoordinate(y1, y2, H, ch, y);
          const float ix = sourceCoordinate(x1, x2, W, cw, x);
          if (!insideAxis(iy, H) || !insideAxis(ix, W)) {
            out.push_back(extrapolation);
            continue;
          }
          if (nearest) {
            out.push_back(at(n, c, std::lround(iy), std::lround(ix)));
            continue;
          }
          const int64_t top = static_cast<int64_t>(std::floor(iy));
          const int64_t bottom = static_cast<int64_t>(std::ceil(iy));
          const int64_t left = static_cast<int64_t>(std::floor(ix));
          const int64_t right = static_cast<int64_t>(std::ceil(ix));
          const float ly = iy - std::floor(iy);
          const float lx = ix - std::floor(ix);
          const float upper =
              at(n, c, top, left) + (at(n, c, top, right) - at(n, c, top, left)) * lx;
          const float lower =
              at(n, c, bottom, left) + (at(n, c, bottom, right) - at(n, c, bottom, left)) * lx;
          out.push_back(upper + (lower - upper) * ly);
        }
      }
    }
  }
  return out;
}

// ---- one random problem ------------------------------------------------------------------------

Problem randomProblem(std::mt19937& rng, int nbInputs, DataType type, DataType boxesType,
                      TensorFormat featureFormat, TensorFormat outputFormat) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Problem p;
  p.nbInputs = nbInputs;
  p.type = type;
  p.boxesType = boxesType;
  p.featureFormat = featureFormat;
  p.outputFormat = outputFormat;
  p.N = pick(1, 3);
  p.C = pick(1, 4);
  p.H = pick(1, 3) == 1 ? 1 : pick(2, 9);  // H == 1 (and W == 1) make H-1 == 0
  p.W = pick(1, 3) == 1 ? 1 : pick(2, 9);
  p.ch = pick(0, 2) == 0 ? 1 : pick(2, 6);
  p.cw = pick(0, 2) == 0 ? 1 : pick(2, 6);
  p.nearest = pick(0, 1) == 1;
  p.extrapolation = roundTo(type, std::uniform_real_distribution<float>(-50.0f, 50.0f)(rng));
  if (p.extrapolation == 0.0f) p.extrapolation = 3.5f;
  std::uniform_real_distribution<float> value(-8.0f, 8.0f);
  p.image.resize(static_cast<size_t>(p.N * p.C * p.H * p.W));
  for (float& v : p.image) {
    v = roundTo(type, value(rng));
    if (v == 0.0f) v = 0.75f;
  }
  if (nbInputs == 2) {
    p.B = pick(1, 4);
    p.K = p.N * p.B;
    p.rois4d = pick(0, 1) == 1;
    for (int64_t k = 0; k < p.K; ++k) p.imageOf.push_back(k / p.B);
  } else {
    p.K = pick(0, 7);
    for (int64_t k = 0; k < p.K; ++k) {
      int32_t index = pick(0, static_cast<int>(p.N) - 1);
      if (pick(0, 4) == 0) {
        const int32_t bad[] = {-1, static_cast<int32_t>(p.N), static_cast<int32_t>(p.N) + 7,
                               std::numeric_limits<int32_t>::min(),
                               std::numeric_limits<int32_t>::max()};
        index = bad[pick(0, 4)];
        ++p.badBoxes;
      }
      p.indices.push_back(index);
      p.imageOf.push_back(index);
    }
  }
  p.boxes.resize(static_cast<size_t>(4 * p.K));
  for (int64_t k = 0; k < p.K; ++k) randomBox(rng, &p.boxes[4 * k]);
  for (float& b : p.boxes) b = roundTo(boxesType, b);
  return p;
}

std::vector<float> enqueue(IPlugin& plugin, const Problem& p, const Tensors& t) {
  std::vector<const void*> ins;
  for (const auto& b : t.inBytes) ins.push_back(b.data());
  std::vector<uint8_t> out(t.outBytes, 0xff);  // NaN in every type: unwritten elements show
  void* outs[] = {out.data()};
  EXPECT_EQ(plugin.enqueue(t.inDescs.data(), &t.outDesc, ins.data(), outs, nullptr, nullptr),
            kPLUGIN_SUCCESS)
      << lastError(&plugin);
  std::vector<float> values = decode(out, p.type);
  if (p.outputFormat == TensorFormat::kCHANNELS_LAST)
    values = fromChannelsLast(values, p.K, p.C, p.ch, p.cw);
  return values;
}

// Compares to the reference: exactly in fp32, to the type's precision in fp16/bf16.
void expectMatches(const std::vector<float>& got, const std::vector<float>& want, DataType type,
                   const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const float eps = type == DataType::kFLOAT  ? 0.0f
                    : type == DataType::kHALF ? 1.0f / 1024.0f
                                              : 1.0f / 128.0f;
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 5; ++i) {
    const float w = roundTo(type, want[i]);
    if (std::isnan(w) && std::isnan(got[i])) continue;
    const bool ok = type == DataType::kFLOAT ? floatBits(got[i]) == floatBits(w)
                                             : std::fabs(got[i] - w) <= eps * std::fabs(w);
    if (!ok) {
      ++failures;
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", reference " << w;
    }
  }
}

class CountingLogger : public ILogger {
 public:
  void log(Severity severity, const char* message) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (severity == Severity::kWarning) warnings.emplace_back(message);
  }
  std::vector<std::string> warnings;

 private:
  std::mutex mutex_;
};

class ContextResources : public IPluginContextResources {
 public:
  DeviceKind getDeviceKind() const noexcept override { return DeviceKind::kCPU; }
  int32_t getDeviceIndex() const noexcept override { return -1; }
  void* allocatePersistent(size_t, size_t) noexcept override { return nullptr; }
  void* getCublasHandle() noexcept override { return nullptr; }
  void* getCudnnHandle() noexcept override { return nullptr; }
};

class CropAndResizeKernelTest : public SeededTest {
 protected:
  void SetUp() override {
    SeededTest::SetUp();
    setLogger(&logger_);
  }
  void TearDown() override {
    setLogger(nullptr);
    SeededTest::TearDown();
  }

  // The whole lifecycle on one problem; checks every enqueue against the reference.
  void check(const Problem& p) {
    const std::string what = describe(p);
    SCOPED_TRACE(what);
    const std::vector<float> want = reference(p.image, p.N, p.C, p.H, p.W, p.boxes, p.imageOf, p.ch,
                                              p.cw, p.nearest, p.extrapolation);
    const Tensors t = tensorsOf(p);
    Fields fields = cropFields(p.ch, p.cw, p.nearest ? "nearest" : "bilinear", p.extrapolation);
    PluginPtr definition = create(fields);
    ASSERT_TRUE(definition) << lastError(creator());
    definition->setPluginNamespace("");

    // Build object: clone, negotiate, configure, time.
    PluginPtr build(definition->clone());
    ASSERT_TRUE(build);
    std::vector<PluginTensorDesc> all = t.inDescs;
    all.push_back(t.outDesc);
    for (int32_t pos = 0; pos <= p.nbInputs; ++pos)
      ASSERT_TRUE(build->supportsFormatCombination(pos, all.data(), p.nbInputs, 1)) << pos;
    ASSERT_EQ(
        build->configurePlugin(kiln::staticPluginTensorDescs(t.inDescs.data(), p.nbInputs).data(),
                               p.nbInputs, kiln::staticPluginTensorDescs(&t.outDesc, 1).data(), 1),
        kPLUGIN_SUCCESS)
        << lastError(build.get());
    size_t workspace = 123;
    ASSERT_EQ(build->getWorkspaceSize(
                  kiln::staticPluginTensorDescs(t.inDescs.data(), p.nbInputs).data(), p.nbInputs,
                  kiln::staticPluginTensorDescs(&t.outDesc, 1).data(), 1, &workspace),
              kPLUGIN_SUCCESS);
    EXPECT_EQ(workspace, 0u);
    ASSERT_EQ(build->initialize(), kPLUGIN_SUCCESS);
    size_t warningsBefore = logger_.warnings.size();
    expectMatches(enqueue(*build, p, t), want, p.type, "build object");
    expectWarnings(p, warningsBefore);
    const std::vector<uint8_t> bytes = serializeToBytes(*build);
    ASSERT_EQ(build->terminate(), kPLUGIN_SUCCESS);
    build.reset();

    // Engine object from the bytes (never configured), and a context object cloned from it.
    PluginPtr engine(creator()->deserializePlugin("crop0", bytes.data(), bytes.size()));
    ASSERT_TRUE(engine) << lastError(creator());
    engine->setPluginNamespace("");
    EXPECT_EQ(serializeToBytes(*engine), bytes);
    ASSERT_EQ(engine->initialize(), kPLUGIN_SUCCESS);
    PluginPtr context(engine->clone());
    ASSERT_TRUE(context);
    ContextResources resources;
    ASSERT_EQ(context->attachToContext(&resources), kPLUGIN_SUCCESS);
    warningsBefore = logger_.warnings.size();
    expectMatches(enqueue(*context, p, t), want, p.type, "context object");
    expectWarnings(p, warningsBefore);
    EXPECT_EQ(context->detachFromContext(), kPLUGIN_SUCCESS);
    context.reset();
    EXPECT_EQ(engine->terminate(), kPLUGIN_SUCCESS);
  }

  // One warning per enqueue that met a bad box index, naming the first such box and its index.
  void expectWarnings(const Problem& p, size_t before) {
    const size_t expected = p.badBoxes > 0 && p.C > 0 ? 1 : 0;
    ASSERT_EQ(logger_.warnings.size() - before, expected);
    if (!expected) return;
    int64_t first = 0;
    while (p.imageOf[first] >= 0 && p.imageOf[first] < p.N) ++first;
    const std::string& w = logger_.warnings.back();
    EXPECT_NE(w.find("box " + std::to_string(first)), std::string::npos) << w;
    EXPECT_NE(w.find(std::to_string(p.indices[first])), std::string::npos) << w;
  }

  void runRandom(int nbInputs, TensorFormat outputFormat, int cases) {
    for (DataType type : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
      std::vector<DataType> boxesTypes = {DataType::kFLOAT};
      if (type != DataType::kFLOAT) boxesTypes.push_back(type);
      for (DataType boxesType : boxesTypes) {
        for (TensorFormat featureFormat : {TensorFormat::kLINEAR, TensorFormat::kCHANNELS_LAST}) {
          for (int i = 0; i < cases; ++i) {
            check(randomProblem(rng_, nbInputs, type, boxesType, featureFormat, outputFormat));
            if (HasFatalFailure() || HasNonfatalFailure()) return;  // one case's report is enough
          }
        }
      }
    }
  }

  CountingLogger logger_;
};

TEST_F(CropAndResizeKernelTest, TwoInputFormMatchesReference) {
  runRandom(2, TensorFormat::kLINEAR, 25);
}

TEST_F(CropAndResizeKernelTest, ThreeInputFormMatchesReference) {
  runRandom(3, TensorFormat::kLINEAR, 25);
}

TEST_F(CropAndResizeKernelTest, ThreeInputFormChannelsLastOutputMatchesReference) {
  runRandom(3, TensorFormat::kCHANNELS_LAST, 25);
}

// The reference itself, on values worked out by hand from §5.
TEST(CropAndResizeReference, HandWorkedValues) {
  // 1 image, 1 channel, 2x2: [[1,2],[3,4]]; whole-image box, 3x3 bilinear crop.
  const std::vector<float> image = {1, 2, 3, 4};
  std::vector<float> out = reference(image, 1, 1, 2, 2, {0, 0, 1, 1}, {0}, 3, 3, false, -1);
  EXPECT_EQ(out, (std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}));
  // Flipped along y.
  out = reference(image, 1, 1, 2, 2, {1, 0, 0, 1}, {0}, 2, 2, false, -1);
  EXPECT_EQ(out, (std::vector<float>{3, 4, 1, 2}));
  // crop 1x1: the centre of the box; nearest rounds 0.5 away from zero.
  out = reference(image, 1, 1, 2, 2, {0, 0, 1, 1}, {0}, 1, 1, true, -1);
  EXPECT_EQ(out, (std::vector<float>{4}));
  // A box reaching past the border: those samples are the extrapolation value, not clamped.
  out = reference(image, 1, 1, 2, 2, {0, 0, 2, 1}, {0}, 2, 1, false, -7);
  EXPECT_EQ(out, (std::vector<float>{1.5f, -7}));
  // A bad image index.
  out = reference(image, 1, 1, 2, 2, {0, 0, 1, 1}, {1}, 1, 1, false, -7);
  EXPECT_EQ(out, (std::vector<float>{-7}));
}

// The plugin on a hand-worked case, so that a reference and kernel that agree on a wrong
// reading of §5 still fail.
TEST(CropAndResizePlugin, HandWorkedValues) {
  Fields fields = cropFields(3, 3, "bilinear", -1.0f);
  PluginPtr plugin = create(fields);
  ASSERT_TRUE(plugin) << lastError(creator());
  const PluginTensorDesc in[] = {desc(makeDims({1, 1, 2, 2}), DataType::kFLOAT),
                                 desc(makeDims({2, 4}), DataType::kFLOAT),
                                 desc(makeDims({2}), DataType::kINT32)};
  const PluginTensorDesc out = desc(makeDims({2, 1, 3, 3}), DataType::kFLOAT);
  ASSERT_EQ(plugin->configurePlugin(kiln::staticPluginTensorDescs(in, 3).data(), 3,
                                    kiln::staticPluginTensorDescs(&out, 1).data(), 1),
            kPLUGIN_SUCCESS)
      << lastError(plugin.get());
  const float image[] = {1, 2, 3, 4};
  const float boxes[] = {0, 0, 1, 1, 0, 0, 2, 1};  // the second reaches past the bottom border
  const int32_t indices[] = {0, 0};
  const void* ins[] = {image, boxes, indices};
  float result[18];
  void* outs[] = {result};
  ASSERT_EQ(plugin->enqueue(in, &out, ins, outs, nullptr, nullptr), kPLUGIN_SUCCESS);
  const std::vector<float> got(result, result + 18);
  EXPECT_EQ(got, (std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4,  //
                                     1, 1.5f, 2, 3, 3.5f, 4, -1, -1, -1}));
}

}  // namespace
}  // namespace kiln::testing
