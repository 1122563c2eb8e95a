// The format decision timed across the graph (builder/format_regions.h): regions of channels-last
// layers, their exits, and the search over alternatives with a plan cost given by the test (the
// real cost is a timed lowering on the GPU: tests/backends/cuda/cuda_cnn_format_test.cpp).
#include "builder/format_regions.h"

#include <gtest/gtest.h>

#include <map>

namespace kiln {
namespace {

// A graph built node by node: each node reads the named tensors and writes one new one.
struct GraphMaker {
  Graph graph;
  std::map<std::string, int32_t> tensorByName;

  int32_t tensor(const std::string& name) {
    if (auto it = tensorByName.find(name); it != tensorByName.end()) return it->second;
    GraphTensor t;
    t.name = name;
    graph.tensors.push_back(t);
    return tensorByName[name] = static_cast<int32_t>(graph.tensors.size()) - 1;
  }
  void input(const std::string& name) {
    const int32_t t = tensor(name);
    graph.tensors[t].isInput = true;
    graph.inputs.push_back(t);
  }
  int32_t node(LayerType type, const std::string& name, std::vector<std::string> inputs) {
    GraphNode n;
    n.type = type;
    n.name = name;
    for (const std::string& i : inputs) n.inputs.push_back(tensor(i));
    const int32_t out = tensor(name + ":out");
    graph.tensors[out].producer = static_cast<int32_t>(graph.nodes.size());
    n.outputs.push_back(out);
    graph.nodes.push_back(n);
    return static_cast<int32_t>(graph.nodes.size()) - 1;
  }
};

// x -> conv1 -> relu -> conv2 -> (+ relu's output) add -> pool -> flatten -> fc, and a second
// convolution on x alone: its own region.
struct SmallCnn {
  GraphMaker m;
  int32_t conv1, relu, conv2, add, pool, flatten, fc, side;
  SmallCnn() {
    m.input("x");
    conv1 = m.node(LayerType::kCONVOLUTION, "conv1", {"x"});
    relu = m.node(LayerType::kACTIVATION, "relu", {"conv1:out"});
    conv2 = m.node(LayerType::kCONVOLUTION, "conv2", {"relu:out"});
    add = m.node(LayerType::kELEMENTWISE, "add", {"conv2:out", "relu:out"});
    pool = m.node(LayerType::kPOOLING, "pool", {"add:out"});
    flatten = m.node(LayerType::kSHUFFLE, "flatten", {"pool:out"});
    fc = m.node(LayerType::kMATRIX_MULTIPLY, "fc", {"flatten:out"});
    side = m.node(LayerType::kCONVOLUTION, "side", {"x"});
  }
  // What the greedy rule gives: every layer but the product channels-last.
  std::vector<bool> greedy() const {
    std::vector<bool> cl(m.graph.nodes.size(), true);
    cl[fc] = false;
    return cl;
  }
};

TEST(FormatRegions, LayersConnectedThroughTensorsFormOneRegion) {
  SmallCnn cnn;
  const auto regions = channelsLastRegions(cnn.m.graph, cnn.greedy());
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[0],
            (std::vector<int32_t>{cnn.conv1, cnn.relu, cnn.conv2, cnn.add, cnn.pool, cnn.flatten}));
  // The side convolution reads the same network input, but no layer joins it to the trunk.
  EXPECT_EQ(regions[1], (std::vector<int32_t>{cnn.side}));
}

TEST(FormatRegions, ALinearLayerSplitsARegion) {
  SmallCnn cnn;
  std::vector<bool> cl = cnn.greedy();
  cl[cnn.relu] = false;  // conv1 is then alone; conv2 and add still meet relu's output
  const auto regions = channelsLastRegions(cnn.m.graph, cl);
  ASSERT_EQ(regions.size(), 3u);
  EXPECT_EQ(regions[0], (std::vector<int32_t>{cnn.conv1}));
  EXPECT_EQ(regions[1], (std::vector<int32_t>{cnn.conv2, cnn.add, cnn.pool, cnn.flatten}));
}

TEST(FormatRegions, ExitsAreTheTailLayersThatAreNotConvolutions) {
  SmallCnn cnn;
  const auto regions = channelsLastRegions(cnn.m.graph, cnn.greedy());
  EXPECT_EQ(regionExits(cnn.m.graph, regions[0]), (std::vector<int32_t>{cnn.flatten}));
  // A region of one convolution has nothing to peel.
  EXPECT_TRUE(regionExits(cnn.m.graph, regions[1]).empty());
  // Without the flatten, the pool is the exit.
  std::vector<int32_t> trunk = regions[0];
  trunk.pop_back();
  EXPECT_EQ(regionExits(cnn.m.graph, trunk), (std::vector<int32_t>{cnn.pool}));
}

// A plan cost from a table keyed by the set of forced-linear layers; records every trial.
struct CostTable {
  std::map<std::vector<bool>, double> cost;
  double otherwise = 100;
  std::vector<std::vector<bool>> tried;
  std::vector<double> bounds;
  FormatTrial trial() {
    return [this](const std::vector<bool>& forceLinear, double bound, double& ms) {
      tried.push_back(forceLinear);
      bounds.push_back(bound);
      auto it = cost.find(forceLinear);
      ms = it == cost.end() ? otherwise : it->second;
      return Status::ok();
    };
  }
};

std::vector<bool> linearSet(size_t n, std::initializer_list<int32_t> nodes) {
  std::vector<bool> v(n, false);
  for (int32_t i : nodes) v[i] = true;
  return v;
}

TEST(FormatRegions, AFasterLinearRegionIsTaken) {
  SmallCnn cnn;
  const size_t n = cnn.m.graph.nodes.size();
  CostTable table;
  const auto trunk = linearSet(n, {cnn.conv1, cnn.relu, cnn.conv2, cnn.add, cnn.pool, cnn.flatten});
  table.cost[trunk] = 8;  // the greedy plan costs 10
  std::vector<bool> forced;
  double best = 0;
  std::vector<std::string> log;
  ASSERT_TRUE(searchFormatRegions(
      cnn.m.graph, cnn.greedy(), 10, table.trial(), [&](const std::string& l) { log.push_back(l); },
      forced, best));
  EXPECT_EQ(forced, trunk);
  EXPECT_DOUBLE_EQ(best, 8);
  // The trunk, then the side convolution on top of the linear trunk (100: not taken).
  ASSERT_EQ(table.tried.size(), 2u);
  EXPECT_EQ(table.bounds[0], 10);
  EXPECT_EQ(table.bounds[1], 8);
  auto withSide = trunk;
  withSide[cnn.side] = true;
  EXPECT_EQ(table.tried[1], withSide);
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log[0].find("'conv1' .. 'flatten'"), std::string::npos) << log[0];
}

TEST(FormatRegions, ExitsArePeeledWhileThatPays) {
  SmallCnn cnn;
  const size_t n = cnn.m.graph.nodes.size();
  CostTable table;
  table.cost[linearSet(n, {cnn.flatten})] = 9.5;
  table.cost[linearSet(n, {cnn.flatten, cnn.pool})] = 9.6;  // slower than 9.5: stop there
  std::vector<bool> forced;
  double best = 0;
  ASSERT_TRUE(searchFormatRegions(cnn.m.graph, cnn.greedy(), 10, table.trial(), {}, forced, best));
  EXPECT_EQ(forced, linearSet(n, {cnn.flatten}));
  EXPECT_DOUBLE_EQ(best, 9.5);
  // Trunk linear, flatten peeled, pool peeled (not taken), the side convolution.
  EXPECT_EQ(table.tried.size(), 4u);
}

TEST(FormatRegions, AGainWithinTimingNoiseKeepsTheGreedyPlan) {
  SmallCnn cnn;
  const size_t n = cnn.m.graph.nodes.size();
  CostTable table;
  table.otherwise = 9.95;  // every alternative 0.5% faster: not enough
  std::vector<bool> forced;
  double best = 0;
  ASSERT_TRUE(searchFormatRegions(cnn.m.graph, cnn.greedy(), 10, table.trial(), {}, forced, best));
  EXPECT_EQ(forced, std::vector<bool>(n, false));
  EXPECT_DOUBLE_EQ(best, 10);
}

TEST(FormatRegions, NothingToTimeWithoutChannelsLastLayers) {
  SmallCnn cnn;
  CostTable table;
  std::vector<bool> forced;
  double best = 0;
  ASSERT_TRUE(searchFormatRegions(cnn.m.graph, std::vector<bool>(cnn.m.graph.nodes.size(), false),
                                  10, table.trial(), {}, forced, best));
  EXPECT_TRUE(table.tried.empty());
  EXPECT_DOUBLE_EQ(best, 10);
}

TEST(FormatRegions, TheSearchIsBounded) {
  // A chain of 20 single-convolution regions, each separated by a linear product.
  GraphMaker m;
  m.input("x");
  std::string last = "x";
  std::vector<bool> cl;
  for (int i = 0; i < 20; ++i) {
    const std::string conv = "conv" + std::to_string(i), mm = "mm" + std::to_string(i);
    m.node(LayerType::kCONVOLUTION, conv, {last});
    m.node(LayerType::kMATRIX_MULTIPLY, mm, {conv + ":out"});
    cl.push_back(true);
    cl.push_back(false);
    last = mm + ":out";
  }
  CostTable table;
  std::vector<bool> forced;
  double best = 0;
  std::vector<std::string> log;
  ASSERT_TRUE(searchFormatRegions(
      m.graph, cl, 10, table.trial(), [&](const std::string& l) { log.push_back(l); }, forced,
      best));
  EXPECT_EQ(table.tried.size(), static_cast<size_t>(kMaxFormatTrials));
  EXPECT_NE(log.back().find("not timed"), std::string::npos) << log.back();
}

TEST(FormatRegions, ATrialsErrorIsTheSearchsError) {
  SmallCnn cnn;
  std::vector<bool> forced;
  double best = 0;
  const Status s = searchFormatRegions(
      cnn.m.graph, cnn.greedy(), 10,
      [](const std::vector<bool>&, double, double&) { return internalError("out of memory"); }, {},
      forced, best);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("out of memory"), std::string::npos);
}

}  // namespace
}  // namespace kiln
