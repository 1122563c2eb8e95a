// GraphEditor: rewiring keeps indices valid until compact(), which renumbers once, drops what
// nothing uses and refuses a graph whose order an edit broke.
#include "builder/passes/graph_edit.h"
#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

using passes::GraphEditor;

// x -> relu "a" -> tanh "b" -> sigmoid "c" (output).
std::unique_ptr<INetworkDefinition> chain() {
  auto net = createNetwork();
  ITensor* t = net->addInput("x", DataType::kFLOAT, makeDims({4}));
  const char* names[] = {"a", "b", "c"};
  const ActivationType types[] = {ActivationType::kRELU, ActivationType::kTANH,
                                  ActivationType::kSIGMOID};
  for (int i = 0; i < 3; ++i) {
    ILayer* l = net->addActivation(*t, ActivationParams{types[i]});
    l->setName(names[i]);
    t = l->getOutput(0);
    t->setName((std::string(names[i]) + "_out").c_str());
  }
  EXPECT_TRUE(net->markOutput(*t).isOk());
  return net;
}

TEST(GraphEdit, BypassAndCompactRenumbers) {
  auto net = chain();
  Graph g = graphOf(*net);
  GraphEditor edit(g);
  const int32_t b = 1;
  edit.redirectConsumers(g.nodes[b].outputs[0], g.nodes[b].inputs[0]);
  edit.removeNode(b);
  EXPECT_TRUE(edit.removed(b));
  EXPECT_TRUE(edit.consumers(g.nodes[b].outputs[0]).empty());
  ASSERT_TRUE(edit.compact().isOk());
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[1].name, "c");
  EXPECT_EQ(g.nodes[1].inputs[0], g.nodes[0].outputs[0]);
  EXPECT_EQ(g.tensors.size(), 3u) << "b's output is gone";
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (int32_t o : g.nodes[n].outputs) EXPECT_EQ(g.tensors[size_t(o)].producer, int32_t(n));
  EXPECT_EQ(g.tensors[size_t(g.outputs[0])].name, "c_out");
  EXPECT_EQ(g.tensors[size_t(g.inputs[0])].name, "x");
}

TEST(GraphEdit, UnreadConstantsWaitForDeadLayerElimination) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2}));
  ILayer* r = net->addActivation(*x, ActivationParams{ActivationType::kRELU});
  ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());
  Graph g = graphOf(*net);
  auto bytes = std::make_shared<const std::vector<uint8_t>>(8, 0);
  {
    GraphEditor edit(g);
    edit.addConstant("r_out", TensorShape{makeDims({2}), DataType::kFLOAT}, bytes);
    ASSERT_TRUE(edit.compact().isOk());
  }
  ASSERT_EQ(g.tensors.size(), 3u);
  EXPECT_EQ(g.tensors[2].name, "r_out") << "the name was free";
  {
    GraphEditor edit(g);
    const int32_t t =
        edit.addConstant("r_out", TensorShape{makeDims({2}), DataType::kFLOAT}, bytes);
    EXPECT_EQ(edit.tensor(t).name, "r_out_1") << "names stay unique";
    std::vector<std::string> dropped;
    ASSERT_TRUE(edit.compact(true, &dropped).isOk());
    EXPECT_EQ(dropped, (std::vector<std::string>{"r_out", "r_out_1"}));
  }
  EXPECT_EQ(g.tensors.size(), 2u);
}

TEST(GraphEdit, CompactRefusesABrokenOrder) {
  auto net = chain();
  Graph g = graphOf(*net);
  GraphEditor edit(g);
  // "a" reading "c"'s output: a cycle, which no pass may leave behind.
  edit.setInput(0, 0, g.nodes[2].outputs[0]);
  Status s = edit.compact();
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.toString();
  EXPECT_NE(s.message().find("layer 'a' reading tensor 'c_out' before"), std::string::npos)
      << s.message();
}

TEST(GraphEdit, CompactRefusesAnOutputWithoutProducer) {
  auto net = chain();
  Graph g = graphOf(*net);
  GraphEditor edit(g);
  edit.removeNode(2);
  Status s = edit.compact();
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.toString();
  EXPECT_NE(s.message().find("network output 'c_out' without a producing layer"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace kiln::testing
