// CropAndResize's CPU path against a reference written here straight from DESIGN.md §5, on
// random inputs, through the whole plugin lifecycle: createPlugin -> clone -> configurePlugin ->
// enqueue, then serialize -> deserializePlugin -> clone -> attachToContext -> enqueue.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "crop_and_resize_test_util.h"
#include "kiln/logger.h"

namespace kiln::crop_test {
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

// ---- tensors in the plugin's types and formats -------------------------------------------------

float roundTo(DataType type, float v) {
  if (type == DataType::kHALF) return halfToFloat(floatToHalf(v));
  if (type == DataType::kBF16) return bf16ToFloat(floatToBf16(v));
  return v;
}

std::vector<uint8_t> encode(const std::vector<float>& values, DataType type) {
  const size_t size = type == DataType::kFLOAT ? 4 : 2;
  std::vector<uint8_t> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == DataType::kFLOAT) {
      std::memcpy(&bytes[4 * i], &values[i], 4);
    } else {
      const uint16_t h = type == DataType::kHALF ? floatToHalf(values[i]) : floatToBf16(values[i]);
      std::memcpy(&bytes[2 * i], &h, 2);
    }
  }
  return bytes;
}

std::vector<float> decode(const std::vector<uint8_t>& bytes, DataType type) {
  const size_t size = type == DataType::kFLOAT ? 4 : 2;
  std::vector<float> values(bytes.size() / size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == DataType::kFLOAT) {
      std::memcpy(&values[i], &bytes[4 * i], 4);
    } else {
      uint16_t h;
      std::memcpy(&h, &bytes[2 * i], 2);
      values[i] = type == DataType::kHALF ? halfToFloat(h) : bf16ToFloat(h);
    }
  }
  return values;
}

// [A,C,H,W] logical <-> [A,H,W,C] in memory.
std::vector<float> toChannelsLast(const std::vector<float>& v, int64_t A, int64_t C, int64_t H,
                                  int64_t W) {
  std::vector<float> out(v.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w)
          out[((a * H + h) * W + w) * C + c] = v[((a * C + c) * H + h) * W + w];
  return out;
}
std::vector<float> fromChannelsLast(const std::vector<float>& v, int64_t A, int64_t C, int64_t H,
                                    int64_t W) {
  std::vector<float> out(v.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w)
          out[((a * C + c) * H + h) * W + w] = v[((a * H + h) * W + w) * C + c];
  return out;
}

// ---- one random problem ------------------------------------------------------------------------

struct Problem {
  int nbInputs = 3;
  int64_t N = 1, C = 1, H = 1, W = 1, B = 0, K = 0;  // B: boxes per image (2 inputs)
  bool rois4d = false;
  int ch = 1, cw = 1;
  bool nearest = false;
  float extrapolation = 0.0f;
  DataType type = DataType::kFLOAT, boxesType = DataType::kFLOAT;
  TensorFormat featureFormat = TensorFormat::kLINEAR, outputFormat = TensorFormat::kLINEAR;
  std::vector<float> image;      // logical NCHW, already rounded to `type`
  std::vector<float> boxes;      // 4 per box, already rounded to `boxesType`
  std::vector<int32_t> indices;  // three-input form
  std::vector<int64_t> imageOf;  // the image of every box, as the reference sees it
  int badBoxes = 0;
};

float randomCoordinate(std::mt19937& rng, float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(rng);
}

// A box of one of the cases §5 singles out.
void randomBox(std::mt19937& rng, float* b) {
  const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
  for (int i = 0; i < 4; ++i) b[i] = randomCoordinate(rng, 0.0f, 1.0f);  // inside, any order
  switch (kind) {
    case 0:  // the whole image, maybe flipped: samples land exactly on the borders
    case 1: {
      const bool flipY = rng() & 1, flipX = rng() & 1;
      b[0] = flipY ? 1.0f : 0.0f;
      b[2] = flipY ? 0.0f : 1.0f;
      b[1] = flipX ? 1.0f : 0.0f;
      b[3] = flipX ? 0.0f : 1.0f;
      break;
    }
    case 2:  // partly outside
    case 3:
      for (int i = 0; i < 4; ++i) b[i] = randomCoordinate(rng, -0.7f, 1.7f);
      break;
    case 4: {  // wholly outside along one axis
      const int axis = rng() & 1;
      const float base = (rng() & 1) ? 1.05f : -1.5f;
      b[axis] = base + randomCoordinate(rng, 0.0f, 0.4f);
      b[axis + 2] = base + randomCoordinate(rng, 0.0f, 0.4f);
      break;
    }
    case 5:  // NaN or infinity in one coordinate
      b[rng() % 4] = (rng() & 1)
                         ? std::numeric_limits<float>::quiet_NaN()
                         : ((rng() & 1) ? 1.0f : -1.0f) * std::numeric_limits<float>::infinity();
      break;
    case 6: {  // zero extent along an axis
      const int axis = rng() & 1;
      b[axis + 2] = b[axis];
      break;
    }
    default:  // plain random box, flipped half the time by the uniform draw
      break;
  }
}

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

std::string describe(const Problem& p) {
  return std::to_string(p.nbInputs) + " inputs, N=" + std::to_string(p.N) +
         " C=" + std::to_string(p.C) + " H=" + std::to_string(p.H) + " W=" + std::to_string(p.W) +
         " K=" + std::to_string(p.K) + " crop " + std::to_string(p.ch) + "x" +
         std::to_string(p.cw) + (p.nearest ? " nearest" : " bilinear") + ", " +
         dataTypeName(p.type) + " boxes " + dataTypeName(p.boxesType) + ", " +
         formatName(p.featureFormat) + " -> " + formatName(p.outputFormat);
}

// The tensors of a problem as the plugin sees them.
struct Tensors {
  std::vector<PluginTensorDesc> inDescs;
  PluginTensorDesc outDesc;
  std::vector<std::vector<uint8_t>> inBytes;
  size_t outBytes = 0;
};

Tensors tensorsOf(const Problem& p) {
  Tensors t;
  const Dims image = makeDims({p.N, p.C, p.H, p.W});
  t.inDescs.push_back(desc(image, p.type, p.featureFormat));
  t.inBytes.push_back(encode(p.featureFormat == TensorFormat::kLINEAR
                                 ? p.image
                                 : toChannelsLast(p.image, p.N, p.C, p.H, p.W),
                             p.type));
  Dims outDims;
  if (p.nbInputs == 2) {
    t.inDescs.push_back(
        desc(p.rois4d ? makeDims({p.N, p.B, 4, 1}) : makeDims({p.N, p.B, 4}), p.boxesType));
    outDims = makeDims({p.N, p.B, p.C, p.ch, p.cw});
  } else {
    t.inDescs.push_back(desc(makeDims({p.K, 4}), p.boxesType));
    t.inDescs.push_back(desc(makeDims({p.K}), DataType::kINT32));
    outDims = makeDims({p.K, p.C, p.ch, p.cw});
  }
  t.inBytes.push_back(encode(p.boxes, p.boxesType));
  if (p.nbInputs == 3) {
    std::vector<uint8_t> idx(p.indices.size() * 4);
    if (!idx.empty()) std::memcpy(idx.data(), p.indices.data(), idx.size());
    t.inBytes.push_back(idx);
  }
  t.outDesc = desc(outDims, p.type, p.outputFormat);
  t.outBytes = static_cast<size_t>(p.K * p.C * p.ch * p.cw) * (p.type == DataType::kFLOAT ? 4 : 2);
  return t;
}

// Runs enqueue and returns the output as logical [K,C,ch,cw] floats.
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
    ASSERT_EQ(build->configurePlugin(t.inDescs.data(), p.nbInputs, &t.outDesc, 1), kPLUGIN_SUCCESS)
        << lastError(build.get());
    size_t workspace = 123;
    ASSERT_EQ(build->getWorkspaceSize(t.inDescs.data(), p.nbInputs, &t.outDesc, 1, &workspace),
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
  ASSERT_EQ(plugin->configurePlugin(in, 3, &out, 1), kPLUGIN_SUCCESS) << lastError(plugin.get());
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
}  // namespace kiln::crop_test
