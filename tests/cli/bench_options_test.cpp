// `kiln bench` options (tools/bench_options): trtexec's defaults, every value read, and a clear
// error naming the option and what it takes for each bad value.
#include "bench_options.h"

#include <gtest/gtest.h>

namespace kiln::cli {
namespace {

Status parse(std::vector<std::string> words, BenchOptions& options) {
  std::vector<char*> argv = {const_cast<char*>("kiln"), const_cast<char*>("bench")};
  for (std::string& w : words) argv.push_back(w.data());
  Args args;
  KILN_RETURN_IF_ERROR(parseArgs(static_cast<int>(argv.size()), argv.data(), 2, benchValueOptions(),
                                 benchFlags(), args));
  return benchOptionsFromArgs(args, options);
}

// The error's message, or "" when it parsed.
std::string error(std::vector<std::string> words) {
  BenchOptions options;
  const Status s = parse(std::move(words), options);
  return s ? std::string() : s.message();
}

TEST(BenchOptions, DefaultsAreTrtexecs) {
  BenchOptions o;
  ASSERT_TRUE(parse({"demo.plan"}, o).isOk());
  EXPECT_EQ(o.warmupMs, 200);
  EXPECT_EQ(o.iterations, 10);
  EXPECT_EQ(o.durationS, 3);
  EXPECT_EQ(o.streams, 1);
  EXPECT_FALSE(o.cudaGraph);
  EXPECT_FALSE(o.engineGraphs);
  EXPECT_FALSE(o.layerByLayer);  // neither: the engine's default
  EXPECT_FALSE(o.profile);
  EXPECT_EQ(o.batchItems, 0);
  EXPECT_FALSE(o.seedGiven);
  EXPECT_TRUE(o.progress);
  EXPECT_TRUE(o.jsonPath.empty());
  EXPECT_TRUE(o.chromeTracePath.empty());
}

TEST(BenchOptions, ReadsEveryValue) {
  BenchOptions o;
  ASSERT_TRUE(parse({"p.plan", "--warmup-ms", "50.5", "--iterations=7", "--duration", "0.25",
                     "--streams", "4", "--cuda-graph", "--profile", "--profile-runs", "3", "--json",
                     "r.json", "--batch-items", "32", "--seed", "4294967295", "--no-progress"},
                    o)
                  .isOk());
  EXPECT_EQ(o.warmupMs, 50.5);
  EXPECT_EQ(o.iterations, 7);
  EXPECT_EQ(o.durationS, 0.25);
  EXPECT_EQ(o.streams, 4);
  EXPECT_TRUE(o.cudaGraph);
  EXPECT_TRUE(o.profile);
  EXPECT_EQ(o.profileRuns, 3);
  EXPECT_EQ(o.jsonPath, "r.json");
  EXPECT_EQ(o.batchItems, 32);
  EXPECT_TRUE(o.seedGiven);
  EXPECT_EQ(o.seed, 4294967295u);
  EXPECT_FALSE(o.progress);
}

TEST(BenchOptions, AChromeTraceOrProfileRunsImplyProfiling) {
  BenchOptions o;
  ASSERT_TRUE(parse({"p.plan", "--chrome-trace", "t.json"}, o).isOk());
  EXPECT_TRUE(o.profile);
  EXPECT_EQ(o.chromeTracePath, "t.json");
  ASSERT_TRUE(parse({"p.plan", "--profile-runs", "5"}, o).isOk());
  EXPECT_TRUE(o.profile);
}

TEST(BenchOptions, GraphChoicesExcludeEachOther) {
  BenchOptions o;
  ASSERT_TRUE(parse({"p.plan", "--layer-by-layer"}, o).isOk());
  EXPECT_TRUE(o.layerByLayer);
  ASSERT_TRUE(parse({"p.plan", "--engine-graphs"}, o).isOk());
  EXPECT_TRUE(o.engineGraphs);
  EXPECT_FALSE(o.layerByLayer);
  EXPECT_EQ(error({"--layer-by-layer", "--cuda-graph"}),
            "--layer-by-layer runs without CUDA graphs; --cuda-graph replays them: pick one");
  EXPECT_EQ(error({"--engine-graphs", "--layer-by-layer"}),
            "--layer-by-layer runs without CUDA graphs; --engine-graphs replays them: pick one");
  EXPECT_EQ(error({"--engine-graphs", "--cuda-graph"}),
            "--cuda-graph and --engine-graphs are two ways to replay graphs: pick one");
}

TEST(BenchOptions, BadValuesSayWhichOptionAndWhatItTakes) {
  EXPECT_EQ(error({"--streams", "0"}), "--streams takes a whole number from 1 to 64, got '0'");
  EXPECT_EQ(error({"--streams", "65"}), "--streams takes a whole number from 1 to 64, got '65'");
  EXPECT_EQ(error({"--streams", "two"}), "--streams takes a whole number from 1 to 64, got 'two'");
  EXPECT_NE(error({"--iterations", "1.5"}).find("--iterations takes a whole number"),
            std::string::npos);
  EXPECT_NE(error({"--iterations", "0"}).find("got '0'"), std::string::npos);
  EXPECT_NE(error({"--iterations", "99999999999999999999"}).find("--iterations"),
            std::string::npos);
  EXPECT_NE(error({"--duration", "-1"}).find("--duration takes a number from 0"),
            std::string::npos);
  EXPECT_NE(error({"--duration", "nan"}).find("--duration"), std::string::npos);
  EXPECT_NE(error({"--warmup-ms", "1ms"}).find("--warmup-ms takes a number"), std::string::npos);
  EXPECT_NE(error({"--batch-items", "0"}).find("--batch-items"), std::string::npos);
  EXPECT_NE(error({"--seed", "-3"}).find("--seed"), std::string::npos);
  EXPECT_NE(error({"--profile-runs", ""}).find("--profile-runs"), std::string::npos);
  EXPECT_EQ(error({"--json="}), "--json takes a file name");
  EXPECT_EQ(error({"--chrome-trace="}), "--chrome-trace takes a file name");
  // parseArgs's own errors.
  EXPECT_EQ(error({"--json"}), "option --json needs a value");
  EXPECT_EQ(error({"--profile=yes"}), "option --profile takes no value");
  EXPECT_EQ(error({"--contexts", "2"}), "unknown option --contexts");
}

}  // namespace
}  // namespace kiln::cli
