// Hostile input: truncated and byte-mutated real models must be refused with an error naming what
// is wrong, or parse into a network; never crash (this runs under ASan+UBSan in CI's sanitizer
// pass). fuzz/onnx_fuzzer.cpp does the same at scale; this keeps a fixed amount of it in ctest.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/onnx_parser.h"
#include "kiln/plugins.h"

namespace kiln {
namespace {

class QuietLogger : public ILogger {
 public:
  void log(Severity, const char*) noexcept override {}
};

// The plugin path (CropAndResize in the demo detector) only runs with the builtins registered.
void registerBuiltins() {
  static const bool done = [] {
    Status s = PluginRegistry::global().registerLibrary(*getBuiltinPluginLibrary(),
                                                        getBuiltinPluginLibraryPath());
    EXPECT_TRUE(s.isOk()) << s.toString();
    return true;
  }();
  (void)done;
}

std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Parses the bytes; an error must carry a message, a success must leave a usable network.
void expectCleanOutcome(const std::vector<uint8_t>& bytes, const std::string& what) {
  std::unique_ptr<INetworkDefinition> network = createNetwork();
  Status s = parseOnnxBytes(bytes.data(), bytes.size(), what, *network);
  if (s.isOk()) {
    EXPECT_GT(network->getNbOutputs(), 0) << what << ": parsed, but no outputs";
    EXPECT_TRUE(network->getLastError().isOk())
        << what << ": parsed, but the network has " << network->getLastError().toString();
  } else {
    EXPECT_FALSE(s.message().empty()) << what << ": refused without a message";
  }
}

class MalformedModels : public ::testing::Test {
 protected:
  void SetUp() override {
    setLogger(&logger_);
    registerBuiltins();
  }
  void TearDown() override { setLogger(nullptr); }

  // Truncations at random points and at the edges, then 1 to 8 random byte changes per variant.
  void mutate(const std::string& path, int truncations, int mutations) {
    const std::vector<uint8_t> model = readFile(path);
    ASSERT_GT(model.size(), 16u) << "cannot read " << path;
    {
      // Sanity: the unmodified model parses, so the mutations start from a valid model.
      std::unique_ptr<INetworkDefinition> network = createNetwork();
      Status s = parseOnnxBytes(model.data(), model.size(), path, *network);
      ASSERT_TRUE(s.isOk()) << path << ": " << s.toString();
    }
    std::uniform_int_distribution<size_t> pos(0, model.size() - 1);
    std::vector<size_t> cuts = {0, 1, model.size() / 2, model.size() - 1};
    for (int i = 0; i < truncations; ++i) cuts.push_back(pos(gen_));
    for (size_t cut : cuts) {
      std::vector<uint8_t> bytes(model.begin(), model.begin() + static_cast<ptrdiff_t>(cut));
      expectCleanOutcome(bytes, path + " truncated to " + std::to_string(cut));
    }
    // Special byte values reach length and varint edge cases more often than random ones.
    const uint8_t special[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
    std::uniform_int_distribution<int> count(1, 8), byte(0, 255), pick(0, 9);
    for (int i = 0; i < mutations; ++i) {
      std::vector<uint8_t> bytes = model;
      std::string what = path + " mutated at";
      for (int n = count(gen_); n > 0; --n) {
        size_t p = pos(gen_);
        int k = pick(gen_);
        bytes[p] = k < 5 ? special[k] : static_cast<uint8_t>(byte(gen_));
        what += " " + std::to_string(p) + "=" + std::to_string(bytes[p]);
      }
      expectCleanOutcome(bytes, what);
    }
  }

  QuietLogger logger_;
  unsigned seed_ = std::random_device{}();
  std::mt19937 gen_{seed_};
};

TEST_F(MalformedModels, DemoDetector) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  mutate(KILN_DEMO_ONNX, 60, 200);
}

TEST_F(MalformedModels, NodeTestModels) {
  const std::string root = "/usr/share/libonnx-testdata/data/node/";
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "libonnx-testdata not installed";
  SCOPED_TRACE("seed " + std::to_string(seed_));
  // Models that parse as they are (no weights fed as graph inputs), over a spread of importers.
  for (const char* name :
       {"test_gemm_all_attributes", "test_roialign_aligned_false", "test_instancenorm_example",
        "test_lrn", "test_maxpool_2d_pads", "test_gather_2d_indices", "test_split_equal_parts_2d",
        "test_softmax_axis_1_expanded", "test_mvn_expanded", "test_transpose_all_permutations_3",
        "test_concat_3d_axis_1", "test_shape_start_1_end_2", "test_where_example",
        "test_cast_FLOAT_to_FLOAT16"}) {
    mutate(root + name + "/model.onnx", 12, 40);
  }
}

}  // namespace
}  // namespace kiln
