#include "runtime/demo_plan_test_util.h"

#include <gtest/gtest.h>

#include "../tools/demo_network.h"
#include "kiln/kiln.h"
#include "kiln/plugins.h"

namespace kiln::testing {

const std::vector<uint8_t>& demoPlan() {
  static const std::vector<uint8_t> plan = [] {
    std::vector<uint8_t> bytes;
    Status s = PluginRegistry::global().registerLibrary(*getBuiltinPluginLibrary(),
                                                        getBuiltinPluginLibraryPath());
    EXPECT_TRUE(s.isOk()) << s.toString();
    auto net = demo::buildDemoNetwork(s);
    EXPECT_TRUE(net) << s.toString();
    if (!net) return bytes;
    BuilderConfig config;
    config.timingRuns = 2;
    s = createBuilder()->buildSerializedNetwork(*net, config, bytes);
    EXPECT_TRUE(s.isOk()) << s.toString();
    return bytes;
  }();
  return plan;
}

}  // namespace kiln::testing
