// End to end: the example plugin library, built out of tree against an installed kiln (the
// CTest fixture does that), loaded through the registry and driven through its lifecycle.
//
// Run through ctest so the fixture builds the library first. $KILN_EXAMPLE_PLUGIN_LIBRARY
// overrides the library's path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "kiln/float16.h"
#include "kiln/plugin.h"
#include "kiln/plugin_utils.h"
#include "kiln/registry.h"

namespace {

namespace fs = std::filesystem;
using kiln::DataType;
using kiln::IPlugin;
using kiln::IPluginCreator;
using kiln::PluginField;
using kiln::PluginFieldCollection;
using kiln::PluginFieldType;
using kiln::PluginTensorDesc;

std::string examplePath() {
  const char* env = std::getenv("KILN_EXAMPLE_PLUGIN_LIBRARY");
  return env && *env ? env : KILN_EXAMPLE_PLUGIN_LIBRARY;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Loads the example library (once per process is enough, but any number of times is harmless)
// and returns its ScaleBias creator.
IPluginCreator* loadScaleBias() {
  const std::string path = examplePath();
  if (!fs::exists(path)) {
    ADD_FAILURE() << path << " does not exist: run this test through ctest, whose fixture "
                  << "installs kiln and builds examples/plugin_library";
    return nullptr;
  }
  const kiln::Status s = kiln::PluginRegistry::global().loadLibrary(path);
  EXPECT_TRUE(s.isOk()) << s.toString();
  IPluginCreator* c = kiln::PluginRegistry::global().getCreator("ScaleBias", "1", "");
  EXPECT_NE(c, nullptr) << "ScaleBias/1 is not registered after loading " << path;
  return c;
}

// Destroys a plugin object at scope exit, as the engine would.
struct PluginDeleter {
  void operator()(IPlugin* p) const {
    if (p) p->destroy();
  }
};
using PluginPtr = std::unique_ptr<IPlugin, PluginDeleter>;

// Constant dimension expressions: all the shape calls need today.
class ConstExpr final : public kiln::IDimensionExpr {
 public:
  explicit ConstExpr(int64_t v) : v_(v) {}
  bool isConstant() const noexcept override { return true; }
  int64_t getConstantValue() const noexcept override { return v_; }

 private:
  int64_t v_;
};

class ConstExprBuilder final : public kiln::IExprBuilder {
 public:
  const kiln::IDimensionExpr* constant(int64_t value) noexcept override {
    exprs_.push_back(std::make_unique<ConstExpr>(value));
    return exprs_.back().get();
  }
  const kiln::IDimensionExpr* operation(kiln::DimensionOperation, const kiln::IDimensionExpr&,
                                        const kiln::IDimensionExpr&) noexcept override {
    return nullptr;  // ScaleBias needs none
  }

 private:
  std::vector<std::unique_ptr<ConstExpr>> exprs_;
};

class ContextResources final : public kiln::IPluginContextResources {
 public:
  kiln::DeviceKind getDeviceKind() const noexcept override { return kiln::DeviceKind::kCPU; }
  int32_t getDeviceIndex() const noexcept override { return -1; }
  void* allocatePersistent(size_t, size_t) noexcept override { return nullptr; }
  void* getCublasHandle() noexcept override { return nullptr; }
  void* getCudnnHandle() noexcept override { return nullptr; }
};

PluginTensorDesc desc(DataType type, const kiln::Dims& dims) {
  PluginTensorDesc d;
  d.dims = dims;
  d.type = type;
  return d;
}

class ExamplePlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = std::random_device{}();
    rng_.seed(seed_);
  }

  kiln::Dims randomDims() {
    const int32_t rank = std::uniform_int_distribution<int32_t>(1, 4)(rng_);
    kiln::Dims d;
    for (int32_t i = 0; i < rank; ++i)
      d.d[d.nbDims++] = std::uniform_int_distribution<int>(1, 9)(rng_);
    return d;
  }
  // Non-zero values of either sign.
  float randomValue(float lo, float hi) {
    const float v = std::uniform_real_distribution<float>(lo, hi)(rng_);
    return std::bernoulli_distribution()(rng_) ? v : -v;
  }

  PluginPtr create(IPluginCreator& c, float scale, float bias) {
    const PluginField fields[] = {{"scale", &scale, PluginFieldType::kFLOAT32, 1},
                                  {"bias", &bias, PluginFieldType::kFLOAT32, 1}};
    const PluginFieldCollection fc{2, fields};
    PluginPtr p(c.createPlugin("sb0", &fc));
    EXPECT_NE(p, nullptr) << (c.getLastError() ? c.getLastError() : "(no error)");
    if (p) p->setPluginNamespace("");
    return p;
  }

  unsigned seed_ = 0;
  std::mt19937 rng_;
};

#define SEED_TRACE() SCOPED_TRACE("seed " + std::to_string(seed_))

// ---- loading ------------------------------------------------------------------------------------

TEST_F(ExamplePlugin, LoadsAndListsTheCreatorWithItsLibrary) {
  IPluginCreator* c = loadScaleBias();
  ASSERT_NE(c, nullptr);
  EXPECT_STREQ(c->getPluginName(), "ScaleBias");
  EXPECT_STREQ(c->getPluginVersion(), "1");

  const std::string fileName = fs::path(examplePath()).filename().string();
  int found = 0;
  for (const kiln::PluginCreatorInfo& info : kiln::PluginRegistry::global().listCreators()) {
    if (info.name != "ScaleBias") continue;
    ++found;
    EXPECT_EQ(info.version, "1");
    EXPECT_EQ(info.pluginNamespace, "");
    EXPECT_EQ(info.libraryName, fileName);
    EXPECT_GE(info.libraryHash.size(), 16u) << info.libraryHash;
    EXPECT_TRUE(std::all_of(info.libraryHash.begin(), info.libraryHash.end(),
                            [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)); }))
        << "libraryHash should be a hex digest: " << info.libraryHash;
  }
  EXPECT_EQ(found, 1);

  kiln::PluginCreatorInfo info;
  ASSERT_TRUE(kiln::PluginRegistry::global().getCreatorInfo("ScaleBias", "1", "", info));
  EXPECT_EQ(info.libraryName, fileName);
}

TEST_F(ExamplePlugin, LoadingTwiceOrFromACopyIsHarmless) {
  IPluginCreator* first = loadScaleBias();
  ASSERT_NE(first, nullptr);
  kiln::PluginCreatorInfo before;
  ASSERT_TRUE(kiln::PluginRegistry::global().getCreatorInfo("ScaleBias", "1", "", before));

  kiln::Status s = kiln::PluginRegistry::global().loadLibrary(examplePath());
  ASSERT_TRUE(s.isOk()) << s.toString();

  // The same bytes under another name: the same content hash, so harmless too (registry.h).
  const fs::path copy =
      fs::temp_directory_path() /
      ("kiln_example_copy_" + std::to_string(::getpid()) + "_" + std::to_string(seed_) + ".so");
  fs::copy_file(examplePath(), copy, fs::copy_options::overwrite_existing);
  s = kiln::PluginRegistry::global().loadLibrary(copy.string());
  std::error_code ec;
  fs::remove(copy, ec);
  EXPECT_TRUE(s.isOk()) << s.toString();

  EXPECT_EQ(kiln::PluginRegistry::global().getCreator("ScaleBias", "1", ""), first)
      << "the first registration must stay in force";
  int found = 0;
  for (const kiln::PluginCreatorInfo& info : kiln::PluginRegistry::global().listCreators())
    found += info.name == "ScaleBias";
  EXPECT_EQ(found, 1);
  kiln::PluginCreatorInfo after;
  ASSERT_TRUE(kiln::PluginRegistry::global().getCreatorInfo("ScaleBias", "1", "", after));
  EXPECT_EQ(after.libraryName, before.libraryName);
  EXPECT_EQ(after.libraryHash, before.libraryHash);
}

TEST_F(ExamplePlugin, BadLibrariesGiveClearErrors) {
  kiln::PluginRegistry& registry = kiln::PluginRegistry::global();
  const size_t creatorsBefore = registry.listCreators().size();

  const std::string missing = (fs::temp_directory_path() / "kiln_no_such_library.so").string();
  kiln::Status s = registry.loadLibrary(missing);
  EXPECT_FALSE(s.isOk());
  EXPECT_TRUE(contains(s.message(), "kiln_no_such_library.so")) << s.toString();

  const fs::path text =
      fs::temp_directory_path() / ("kiln_not_a_library_" + std::to_string(::getpid()) + ".so");
  std::ofstream(text) << "this is not a shared library\n";
  s = registry.loadLibrary(text.string());
  std::error_code ec;
  fs::remove(text, ec);
  EXPECT_FALSE(s.isOk());
  EXPECT_TRUE(contains(s.message(), text.filename().string())) << s.toString();

  s = registry.loadLibrary(KILN_NO_ENTRY_LIBRARY);
  EXPECT_FALSE(s.isOk());
  EXPECT_TRUE(contains(s.message(), KILN_PLUGIN_LIBRARY_ENTRY_NAME))
      << "the error should name the missing entry point: " << s.toString();
  EXPECT_TRUE(contains(s.message(), fs::path(KILN_NO_ENTRY_LIBRARY).filename().string()))
      << s.toString();

  s = registry.loadLibrary(KILN_BAD_ABI_LIBRARY);
  EXPECT_FALSE(s.isOk());
  EXPECT_TRUE(contains(s.message(), std::to_string(kiln::kPluginAbiVersion + 1000)))
      << "the error should give the library's ABI version: " << s.toString();

  s = registry.loadLibrary(KILN_OLD_ABI_LIBRARY);
  EXPECT_FALSE(s.isOk());
  EXPECT_TRUE(contains(s.message(), "was built for plugin ABI version 1, this kiln has version 2"))
      << s.toString();
  EXPECT_TRUE(contains(s.message(), "onShapeChange")) << s.toString();

  s = registry.loadLibrary(KILN_NULL_INFO_LIBRARY);
  EXPECT_FALSE(s.isOk());
  EXPECT_TRUE(contains(s.message(), fs::path(KILN_NULL_INFO_LIBRARY).filename().string()))
      << s.toString();

  EXPECT_EQ(registry.listCreators().size(), creatorsBefore) << "a failed load registered something";
}

// ---- ScaleBias through its lifecycle ------------------------------------------------------------

TEST_F(ExamplePlugin, DescribesItsFields) {
  IPluginCreator* c = loadScaleBias();
  ASSERT_NE(c, nullptr);
  const PluginFieldCollection* fc = c->getFieldNames();
  ASSERT_NE(fc, nullptr);
  ASSERT_EQ(fc->nbFields, 2);
  EXPECT_STREQ(fc->fields[0].name, "scale");
  EXPECT_STREQ(fc->fields[1].name, "bias");
  EXPECT_EQ(fc->fields[0].type, PluginFieldType::kFLOAT32);
}

// Runs the whole flow of DESIGN.md §2 on one type and checks every output against y = x*s + b.
void runLifecycle(IPluginCreator& c, PluginPtr definition, DataType type, const kiln::Dims& dims,
                  float scale, float bias, std::mt19937& rng) {
  ASSERT_NE(definition, nullptr);
  definition->setPluginNamespace("example_ns");
  EXPECT_STREQ(definition->getPluginNamespace(), "example_ns");

  // Shapes and types.
  EXPECT_EQ(definition->getNbOutputs(), 1);
  DataType outType = DataType::kINT8;
  ASSERT_EQ(definition->getOutputDataType(0, &type, 1, &outType), kiln::kPLUGIN_SUCCESS);
  EXPECT_EQ(outType, type);
  ConstExprBuilder eb;
  kiln::DimsExprs in;
  in.nbDims = dims.nbDims;
  for (int32_t i = 0; i < dims.nbDims; ++i) in.d[i] = eb.constant(dims.d[i]);
  kiln::DimsExprs out;
  ASSERT_EQ(definition->getOutputDimensions(0, &in, 1, eb, &out), kiln::kPLUGIN_SUCCESS);
  ASSERT_EQ(out.nbDims, dims.nbDims);
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    ASSERT_NE(out.d[i], nullptr);
    EXPECT_EQ(out.d[i]->getConstantValue(), dims.d[i]);
  }

  // Build object: clone, negotiate, configure, size the workspace, initialize, run.
  PluginPtr build(definition->clone());
  ASSERT_NE(build, nullptr);
  EXPECT_STREQ(build->getPluginNamespace(), "example_ns") << "a clone keeps its namespace";
  PluginTensorDesc io[2] = {desc(type, dims), desc(type, dims)};
  EXPECT_TRUE(build->supportsFormatCombination(0, io, 1, 1));
  EXPECT_TRUE(build->supportsFormatCombination(1, io, 1, 1));
  ASSERT_EQ(build->configurePlugin(kiln::staticPluginTensorDescs(&io[0], 1).data(), 1,
                                   kiln::staticPluginTensorDescs(&io[1], 1).data(), 1),
            kiln::kPLUGIN_SUCCESS)
      << build->getLastError();
  size_t workspace = 123;
  ASSERT_EQ(build->getWorkspaceSize(kiln::staticPluginTensorDescs(&io[0], 1).data(), 1,
                                    kiln::staticPluginTensorDescs(&io[1], 1).data(), 1, &workspace),
            kiln::kPLUGIN_SUCCESS);
  EXPECT_EQ(workspace, 0u);
  ASSERT_EQ(build->initialize(), kiln::kPLUGIN_SUCCESS);

  const int64_t n = [&] {
    int64_t v = 1;
    for (int32_t i = 0; i < dims.nbDims; ++i) v *= dims.d[i];
    return v;
  }();
  const size_t elem = type == DataType::kFLOAT ? 4 : 2;
  std::vector<uint8_t> x(n * elem), y(n * elem), want(n * elem);
  std::uniform_real_distribution<float> dist(0.5f, 8.0f);
  for (int64_t i = 0; i < n; ++i) {
    const float v = std::bernoulli_distribution()(rng) ? dist(rng) : -dist(rng);
    if (type == DataType::kFLOAT) {
      std::memcpy(&x[i * 4], &v, 4);
      const float r = v * scale + bias;
      std::memcpy(&want[i * 4], &r, 4);
    } else {
      const uint16_t h = kiln::floatToHalf(v);
      std::memcpy(&x[i * 2], &h, 2);
      const uint16_t r = kiln::floatToHalf(kiln::halfToFloat(h) * scale + bias);
      std::memcpy(&want[i * 2], &r, 2);
    }
  }
  auto run = [&](IPlugin& p) {
    std::fill(y.begin(), y.end(), 0xA5);
    const void* ins[] = {x.data()};
    void* outs[] = {y.data()};
    ASSERT_EQ(p.enqueue(&io[0], &io[1], ins, outs, nullptr, nullptr), kiln::kPLUGIN_SUCCESS)
        << p.getLastError();
    for (int64_t i = 0; i < n; ++i) {
      if (type == DataType::kFLOAT) {
        float got, w;
        std::memcpy(&got, &y[i * 4], 4);
        std::memcpy(&w, &want[i * 4], 4);
        ASSERT_NEAR(got, w, 1e-6f * (1 + std::fabs(w))) << "element " << i;
      } else {
        uint16_t got, w;
        std::memcpy(&got, &y[i * 2], 2);
        std::memcpy(&w, &want[i * 2], 2);
        ASSERT_LE(std::abs(int(got) - int(w)), 1) << "element " << i << " (fp16 bits)";
      }
    }
  };
  run(*build);

  // Serialize the configured build object; the engine object comes from those bytes.
  std::vector<uint8_t> bytes(build->getSerializationSize());
  ASSERT_EQ(build->serialize(bytes.data(), bytes.size()), kiln::kPLUGIN_SUCCESS);
  EXPECT_NE(build->serialize(bytes.data(), bytes.size() - 1), kiln::kPLUGIN_SUCCESS)
      << "serialize must refuse a buffer that is too small";
  EXPECT_EQ(build->terminate(), kiln::kPLUGIN_SUCCESS);
  build.reset();

  PluginPtr engine(c.deserializePlugin("sb0", bytes.data(), bytes.size()));
  ASSERT_NE(engine, nullptr) << c.getLastError();
  engine->setPluginNamespace("example_ns");
  std::vector<uint8_t> again(engine->getSerializationSize());
  ASSERT_EQ(engine->serialize(again.data(), again.size()), kiln::kPLUGIN_SUCCESS);
  EXPECT_EQ(again, bytes) << "guarantee 6: serialize(deserialize(bytes)) == bytes";
  ASSERT_EQ(engine->initialize(), kiln::kPLUGIN_SUCCESS);

  // Context object: a clone of the engine object, never initialized, attached, run, detached.
  ContextResources resources;
  PluginPtr context(engine->clone());
  ASSERT_NE(context, nullptr);
  EXPECT_STREQ(context->getPluginNamespace(), "example_ns");
  ASSERT_EQ(context->attachToContext(&resources), kiln::kPLUGIN_SUCCESS);
  run(*context);
  run(*context);  // and again: enqueue keeps no state between calls
  EXPECT_EQ(context->detachFromContext(), kiln::kPLUGIN_SUCCESS);
  context.reset();

  EXPECT_EQ(engine->terminate(), kiln::kPLUGIN_SUCCESS);
}

TEST_F(ExamplePlugin, RunsFp32ThroughTheLifecycle) {
  SEED_TRACE();
  IPluginCreator* c = loadScaleBias();
  ASSERT_NE(c, nullptr);
  for (int rep = 0; rep < 3; ++rep) {
    const float scale = randomValue(0.25f, 4.0f), bias = randomValue(0.1f, 10.0f);
    runLifecycle(*c, create(*c, scale, bias), DataType::kFLOAT, randomDims(), scale, bias, rng_);
  }
}

TEST_F(ExamplePlugin, RunsFp16ThroughTheLifecycle) {
  SEED_TRACE();
  IPluginCreator* c = loadScaleBias();
  ASSERT_NE(c, nullptr);
  for (int rep = 0; rep < 3; ++rep) {
    const float scale = randomValue(0.25f, 4.0f), bias = randomValue(0.1f, 10.0f);
    runLifecycle(*c, create(*c, scale, bias), DataType::kHALF, randomDims(), scale, bias, rng_);
  }
}

TEST_F(ExamplePlugin, AcceptsFloat64FieldsRoundedToFloat32) {
  SEED_TRACE();
  IPluginCreator* c = loadScaleBias();
  ASSERT_NE(c, nullptr);
  const double scale = randomValue(0.1f, 3.0f) + 1e-9, bias = randomValue(0.1f, 3.0f) + 1e-9;
  const PluginField fields[] = {{"bias", &bias, PluginFieldType::kFLOAT64, 1},
                                {"scale", &scale, PluginFieldType::kFLOAT64, 1}};
  const PluginFieldCollection fc{2, fields};
  PluginPtr p(c->createPlugin("sb64", &fc));
  ASSERT_NE(p, nullptr) << c->getLastError();
  runLifecycle(*c, std::move(p), DataType::kFLOAT, randomDims(), static_cast<float>(scale),
               static_cast<float>(bias), rng_);

  // No fields at all: scale 1, bias 0.
  PluginPtr identity(c->createPlugin("sb_default", nullptr));
  ASSERT_NE(identity, nullptr) << c->getLastError();
  runLifecycle(*c, std::move(identity), DataType::kFLOAT, randomDims(), 1.0f, 0.0f, rng_);
}

TEST_F(ExamplePlugin, RefusesBadFieldsNamingThem) {
  IPluginCreator* c = loadScaleBias();
  ASSERT_NE(c, nullptr);
  const int32_t i32 = 3;
  const double huge = 1e300, nan = std::numeric_limits<double>::quiet_NaN();
  const float two[2] = {1.5f, 2.5f};
  const float fine = 2.0f;
  struct Case {
    PluginField field;
    const char* mustMention;
  };
  const Case cases[] = {
      {{"scale", &i32, PluginFieldType::kINT32, 1}, "'scale'"},
      {{"bias", &huge, PluginFieldType::kFLOAT64, 1}, "'bias'"},
      {{"scale", &nan, PluginFieldType::kFLOAT64, 1}, "finite"},
      {{"bias", two, PluginFieldType::kFLOAT32, 2}, "exactly one"},
      {{"sclae", &fine, PluginFieldType::kFLOAT32, 1}, "'sclae'"},
  };
  for (const Case& k : cases) {
    const PluginFieldCollection fc{1, &k.field};
    IPlugin* p = c->createPlugin("bad_layer", &fc);
    EXPECT_EQ(p, nullptr) << k.mustMention;
    if (p) p->destroy();
    ASSERT_NE(c->getLastError(), nullptr);
    EXPECT_TRUE(contains(c->getLastError(), k.mustMention)) << c->getLastError();
    EXPECT_TRUE(contains(c->getLastError(), "bad_layer")) << c->getLastError();
  }
}

TEST_F(ExamplePlugin, RefusesBadSerializedBytes) {
  SEED_TRACE();
  IPluginCreator* c = loadScaleBias();
  ASSERT_NE(c, nullptr);
  PluginPtr p = create(*c, randomValue(0.5f, 2.0f), randomValue(0.5f, 2.0f));
  ASSERT_NE(p, nullptr);
  std::vector<uint8_t> good(p->getSerializationSize());
  ASSERT_EQ(p->serialize(good.data(), good.size()), kiln::kPLUGIN_SUCCESS);

  auto refused = [&](const std::vector<uint8_t>& bytes, const std::string& what) {
    IPlugin* q = c->deserializePlugin("sb_bad", bytes.data(), bytes.size());
    EXPECT_EQ(q, nullptr) << what;
    if (q) q->destroy();
    EXPECT_NE(c->getLastError(), nullptr) << what;
  };
  for (size_t n = 0; n < good.size(); ++n)
    refused(std::vector<uint8_t>(good.begin(), good.begin() + n),
            "truncated to " + std::to_string(n));
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  refused(longer, "one byte too many");
  std::vector<uint8_t> bad = good;
  bad[0] ^= 0xff;
  refused(bad, "bad magic");
  bad = good;
  bad[4] = 99;
  refused(bad, "future layout version");
  bad = good;
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(&bad[8], &inf, 4);
  refused(bad, "infinite scale");
  bad = good;
  const int32_t int8Type = static_cast<int32_t>(DataType::kINT8);
  std::memcpy(&bad[16], &int8Type, 4);
  refused(bad, "configured as int8");
  EXPECT_EQ(c->deserializePlugin("sb_null", nullptr, 0), nullptr);

  // Random bytes: refused or accepted, never a crash (the sanitizers watch).
  for (int rep = 0; rep < 500; ++rep) {
    std::vector<uint8_t> noise = good;
    noise[std::uniform_int_distribution<size_t>(0, noise.size() - 1)(rng_)] =
        static_cast<uint8_t>(rng_());
    IPlugin* q = c->deserializePlugin("sb_noise", noise.data(), noise.size());
    if (q) {
      std::vector<uint8_t> back(q->getSerializationSize());
      EXPECT_EQ(q->serialize(back.data(), back.size()), kiln::kPLUGIN_SUCCESS);
      EXPECT_EQ(back, noise) << "accepted bytes must round-trip";
      q->destroy();
    }
  }
}

TEST_F(ExamplePlugin, RefusesUnsupportedTypesFormatsAndDevices) {
  IPluginCreator* c = loadScaleBias();
  ASSERT_NE(c, nullptr);
  PluginPtr p = create(*c, 2.0f, 1.0f);
  ASSERT_NE(p, nullptr);
  const kiln::Dims dims = kiln::makeDims({1, 3, 4, 4});

  PluginTensorDesc io[2] = {desc(DataType::kINT8, dims), desc(DataType::kINT8, dims)};
  EXPECT_FALSE(p->supportsFormatCombination(0, io, 1, 1));
  EXPECT_NE(p->configurePlugin(kiln::staticPluginTensorDescs(&io[0], 1).data(), 1,
                               kiln::staticPluginTensorDescs(&io[1], 1).data(), 1),
            kiln::kPLUGIN_SUCCESS);
  EXPECT_NE(p->getLastError(), nullptr);

  io[0] = desc(DataType::kFLOAT, dims);
  io[1] = desc(DataType::kHALF, dims);
  EXPECT_TRUE(p->supportsFormatCombination(0, io, 1, 1));
  EXPECT_FALSE(p->supportsFormatCombination(1, io, 1, 1)) << "output type must follow input";

  io[1] = desc(DataType::kFLOAT, dims);
  io[0].format = kiln::TensorFormat::kCHANNELS_LAST;
  EXPECT_FALSE(p->supportsFormatCombination(0, io, 1, 1));
  io[0].format = kiln::TensorFormat::kLINEAR;
  // CUDA tensors are taken only where the example was built with its kernel (nvcc found), but
  // never mixed with a CPU tensor.
  io[0].device = kiln::DeviceKind::kCUDA;
  if (p->supportsFormatCombination(0, io, 1, 1)) {
    EXPECT_FALSE(p->supportsFormatCombination(1, io, 1, 1)) << "output on another device";
  }

  std::vector<float> x(48, 1.0f), y(48);
  const void* ins[] = {x.data()};
  void* outs[] = {y.data()};
  EXPECT_NE(p->enqueue(&io[0], &io[1], ins, outs, nullptr, nullptr), kiln::kPLUGIN_SUCCESS);
  EXPECT_NE(p->getLastError(), nullptr);
}

}  // namespace
