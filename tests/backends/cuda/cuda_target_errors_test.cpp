// Where there is no GPU (CI), a CUDA target must fail with an error that says so; never a crash.
#include <gtest/gtest.h>

#include "../tools/demo_network.h"
#include "backends/cuda/device.h"
#include "kiln/kiln.h"
#include "kiln/plugins.h"

namespace kiln {
namespace {

Status buildFor(const std::string& target) {
  Status s = PluginRegistry::global().registerLibrary(*getBuiltinPluginLibrary(),
                                                      getBuiltinPluginLibraryPath());
  if (!s) return s;
  auto net = demo::buildDemoNetwork(s);
  if (!net) return s;
  BuilderConfig config;
  config.target = target;
  std::vector<uint8_t> plan;
  return createBuilder()->buildSerializedNetwork(*net, config, plan);
}

TEST(CudaTarget, MalformedTargetsAreRefused) {
  for (const char* t : {"gpu", "cuda:", "cuda:x", "cuda:-1", "cuda:99999"}) {
    Status s = buildFor(t);
    EXPECT_FALSE(s.isOk()) << t;
    EXPECT_NE(s.message().find("target"), std::string::npos) << s.message();
  }
}

TEST(CudaTarget, AMissingGpuIsAClearError) {
  if (cuda::deviceCount() > 0) GTEST_SKIP() << "this machine has a GPU";
  Status s = buildFor("cuda:0");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("no CUDA device 0"), std::string::npos) << s.message();
}

TEST(CudaTarget, AnOrdinalPastTheLastGpuIsAClearError) {
  Status s = buildFor("cuda:64");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("no CUDA device 64"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln
