#include "plugin/trace_render.h"

#include <gtest/gtest.h>

#include <random>

#include "plugin/trace_flow_test_util.h"

namespace kiln {
namespace {

using testing::Flow;
using testing::GoodFlow;
using P = TracePhase;

TEST(TraceRender, GoodFlowRendersOneBlockPerPhase) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  GoodFlow g = testing::makeGoodFlow(rng);
  const auto& l = g.layers.front();
  int64_t b = l.build.front();
  g.flow.events[g.flow.find(b, "enqueue")].status = 2;

  Status status;
  std::string text = renderTrace(g.flow.lines(), status);
  ASSERT_TRUE(status.isOk()) << status.message();

  // Headers in flow order, each once.
  size_t last = 0;
  for (const char* h : {"[parse]\n", "[build]\n", "[serialize]\n", "[deserialize]\n", "[context]\n",
                        "[infer]\n", "[teardown]\n"}) {
    size_t at = text.find(h);
    ASSERT_NE(at, std::string::npos) << h << "\n" << text;
    EXPECT_GE(at, last) << h;
    EXPECT_EQ(text.find(h, at + 1), std::string::npos) << h;
    last = at;
  }
  const std::string cls = (l.ns.empty() ? "" : l.ns + "::") + l.plugin;
  // Layers are padded to one width, and a thread suffix may follow.
  const std::string creator = cls + "Creator::createPlugin() --> " + std::to_string(l.definition);
  size_t at = text.find(creator);
  ASSERT_NE(at, std::string::npos) << creator << "\n" << text;
  size_t lineStart = text.rfind('\n', at) + 1;
  EXPECT_EQ(text.substr(lineStart, 2 + l.layer.size()), "  " + l.layer) << text;
  const std::string clone =
      cls + "Plugin#" + std::to_string(l.definition) + "::clone() --> " + std::to_string(b);
  EXPECT_NE(text.find(clone), std::string::npos) << clone << "\n" << text;
  EXPECT_NE(text.find(cls + "Plugin#" + std::to_string(b) + "::enqueue()  FAILED status=2"),
            std::string::npos)
      << text;
  // One line per event, plus the seven headers.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'),
            static_cast<long>(g.flow.events.size() + 7));
  // Contexts enqueue on their own threads, so lines say which.
  EXPECT_NE(text.find("x3)  (thread 2)"), std::string::npos) << text;
  // Shape changes show their shapes and the profile's range.
  EXPECT_NE(text.find("::onShapeChange("), std::string::npos) << text;
  EXPECT_NE(text.find(" in [1x3 -> 1x3 .. 4x3 -> 4x3]"), std::string::npos) << text;
}

TEST(TraceRender, ExactSmallTrace) {
  Flow f(3);
  int64_t d = f.make(P::kParse, "CropAndResize", "", "crop0", "createPlugin");
  f.call(P::kParse, d, "setPluginNamespace");
  int64_t b = f.clone(P::kBuild, d);
  f.call(P::kBuild, b, "initialize", 2);
  f.makeFails(P::kDeserialize, "CropAndResize", "", "", "deserializePlugin", 1);
  Status status;
  EXPECT_EQ(renderTrace(f.lines(), status),
            "[parse]\n"
            "  crop0  CropAndResizeCreator::createPlugin() --> 3\n"
            "  crop0  CropAndResizePlugin#3::setPluginNamespace()\n"
            "[build]\n"
            "  crop0  CropAndResizePlugin#3::clone() --> 4\n"
            "  crop0  CropAndResizePlugin#4::initialize()  FAILED status=2\n"
            "[deserialize]\n"
            "  -      CropAndResizeCreator::deserializePlugin()  FAILED status=1\n");
  EXPECT_TRUE(status.isOk());
}

TEST(TraceRender, MalformedLineIsAnError) {
  Status status;
  std::string text = renderTrace({"{\"seq\":1"}, status);
  EXPECT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("trace line 1"), std::string::npos) << status.message();
  EXPECT_TRUE(text.empty());
  text = renderTrace({}, status);
  EXPECT_TRUE(status.isOk());
  EXPECT_TRUE(text.empty());
}

}  // namespace
}  // namespace kiln
