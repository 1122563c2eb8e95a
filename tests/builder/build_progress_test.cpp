// BuilderConfig::progress: every phase is reported in order, each unit once, counting to its
// total, and returning false cancels the build with kCancelled (what the Python package's
// progress bar and Ctrl-C rely on).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

// x -> relu -> sigmoid -> tanh: three built-in layers.
std::unique_ptr<INetworkDefinition> threeLayers() {
  auto net = createNetwork();
  ITensor* t = net->addInput("x", DataType::kFLOAT, makeDims({2, 3}));
  const ActivationType types[] = {ActivationType::kRELU, ActivationType::kSIGMOID,
                                  ActivationType::kTANH};
  const char* names[] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    ActivationParams p;
    p.type = types[i];
    ILayer* layer = net->addActivation(*t, p);
    EXPECT_NE(layer, nullptr);
    layer->setName(names[i]);
    t = layer->getOutput(0);
    // Each output wanted, so that elementwise_chain_fusion keeps the three layers apart.
    EXPECT_TRUE(net->markOutput(*t).isOk());
  }
  return net;
}

struct Seen {
  std::string phase;
  int32_t done, total;
  std::string layer;
};

TEST(BuildProgress, ReportsEveryPhaseInOrderAndCountsToTheTotal) {
  auto net = threeLayers();
  std::vector<Seen> seen;
  BuilderConfig config;
  config.progress = [&](const BuildProgress& p) {
    seen.push_back({p.phase, p.done, p.total, p.layer});
    return true;
  };
  std::vector<uint8_t> plan;
  Status s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_FALSE(seen.empty());
  // Phases come in order, each counting 1..total with one total.
  const std::vector<std::string> order = {"layers", "tactics", "plan"};
  size_t phase = 0;
  int32_t expect = 1;
  for (const Seen& e : seen) {
    if (e.phase != order[phase]) {
      ASSERT_EQ(expect - 1, seen[&e - seen.data() - 1].total) << "phase " << order[phase];
      ++phase;
      expect = 1;
      ASSERT_LT(phase, order.size());
      ASSERT_EQ(e.phase, order[phase]);
    }
    EXPECT_EQ(e.done, expect++);
    EXPECT_LE(e.done, e.total);
  }
  EXPECT_EQ(phase, order.size() - 1);
  EXPECT_EQ(seen.back().phase, "plan");
  EXPECT_EQ(seen.back().done, 1);
  EXPECT_EQ(seen.back().total, 1);
  // The three layers are named in the "layers" phase.
  std::vector<std::string> layers;
  for (const Seen& e : seen)
    if (e.phase == "layers") layers.push_back(e.layer);
  EXPECT_EQ(layers, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(BuildProgress, ReturningFalseCancelsTheBuild) {
  auto net = threeLayers();
  int calls = 0;
  BuilderConfig config;
  config.progress = [&](const BuildProgress& p) {
    ++calls;
    return !(std::string(p.phase) == "tactics" && p.done == 1);
  };
  std::vector<uint8_t> plan;
  Status s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kCancelled);
  EXPECT_NE(s.message().find("cancelled"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("tactics"), std::string::npos) << s.message();
  EXPECT_EQ(calls, 4);  // three layers, then the first tactic step
  EXPECT_TRUE(plan.empty());
  EXPECT_STREQ(statusCodeName(StatusCode::kCancelled), "cancelled");
}

}  // namespace
}  // namespace kiln
