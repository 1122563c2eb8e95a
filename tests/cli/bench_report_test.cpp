// `kiln bench` output (tools/bench_report): the table has every statistic and the throughput,
// the JSON report and the Chrome trace are valid JSON with the fields their readers need, and
// layer names that need escaping stay valid.
#include "bench_report.h"

#include <gtest/gtest.h>

#include "cli/json_check_test_util.h"

namespace kiln::cli {
namespace {

using kiln::testing::JsonCheck;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

BenchReport sampleReport(bool profiled) {
  BenchReport r;
  r.plan = "demo.plan";
  r.target = "cpu";
  r.device = "cpu";
  r.streams = 2;
  r.batchItems = 8;
  r.batchFrom = "dim 0 of input 'image'";
  r.warmupMs = 200.5;
  r.warmupInferences = 40;
  r.inferences = 500;
  r.wallMs = 2000;
  r.latency = summarize({1.0, 2.0, 3.0, 4.0});
  r.enqueue = summarize({0.1, 0.2});
  r.weightBytes = 0;
  r.contextBytes = 3 * 1024 * 1024;
  if (profiled) {
    r.profiled = true;
    r.profileRuns = 2;
    std::vector<LayerSample> samples;
    for (int run = 0; run < 2; ++run) {
      samples.push_back({run, 0, "conv \"1\"", "Convolution", "im2col_sgemm", 0, 0.75, 0.0125});
      samples.push_back({run, 1, "crop\\box", "Plugin", "CropAndResize", 0.75, 0.25, 0.0375});
    }
    r.layers = summarizeLayers(samples);
  }
  return r;
}

TEST(BenchReport, ThroughputCountsItemsOfTheBatch) {
  const BenchReport r = sampleReport(false);
  EXPECT_DOUBLE_EQ(inferencesPerSecond(r), 250);
  EXPECT_DOUBLE_EQ(itemsPerSecond(r), 2000);
}

TEST(BenchReport, TableHasEveryStatistic) {
  const std::string text = reportText(sampleReport(false));
  for (const char* field :
       {"throughput: 250.00 inferences/s, 2000.00 items/s", "min", "median", "mean", "p90", "p99",
        "max", "latency", "host enqueue", "steady clock", "2 streams", "8 items per inference",
        "dim 0 of input 'image'", "warm-up: 200.5 ms, 40 inferences",
        "timed: 2000.0 ms, 500 inferences", "3.0 MiB per context"})
    EXPECT_TRUE(has(text, field)) << field << " not in\n" << text;
  EXPECT_FALSE(has(text, "per-layer"));
  // The latency row: min, median, mean, p90, p99, max of 1, 2, 3, 4.
  EXPECT_TRUE(has(text, "1.0000     2.5000     2.5000     3.7000     3.9700     4.0000")) << text;
}

TEST(BenchReport, CudaRunsSayGpuComputeAndGraphs) {
  BenchReport r = sampleReport(true);
  r.deviceEvents = true;
  r.cudaGraph = true;
  r.device = "cuda:0";
  const std::string text = reportText(r);
  EXPECT_TRUE(has(text, "GPU compute")) << text;
  EXPECT_TRUE(has(text, "CUDA events")) << text;
  EXPECT_TRUE(has(text, "CUDA graph replays")) << text;
  EXPECT_TRUE(has(text, "without the CUDA graph")) << text;
  EXPECT_TRUE(has(reportJson(r), "\"latency_clock\": \"cuda_events\""));
}

TEST(BenchReport, CudaRunsSayWhetherTheEnginesGraphsReplayed) {
  BenchReport r = sampleReport(false);
  r.deviceEvents = true;
  r.device = "cuda:0";
  r.engineGraphs = true;
  EXPECT_TRUE(has(reportText(r), "2 streams, the engine's CUDA graphs")) << reportText(r);
  EXPECT_TRUE(has(reportJson(r), "\"engine_graphs\": true"));
  r.engineGraphs = false;
  EXPECT_TRUE(has(reportText(r), "2 streams, layer by layer")) << reportText(r);
  EXPECT_TRUE(has(reportJson(r), "\"engine_graphs\": false"));
  // The CPU has neither.
  EXPECT_FALSE(has(reportText(sampleReport(false)), "layer by layer"));
}

TEST(BenchReport, ProfiledTableHasLayersAndShares) {
  const std::string text = reportText(sampleReport(true));
  EXPECT_TRUE(has(text, "per-layer times over 2 profiled runs")) << text;
  EXPECT_TRUE(has(text, "conv \"1\"")) << text;
  EXPECT_TRUE(has(text, "im2col_sgemm")) << text;
  EXPECT_TRUE(has(text, "CropAndResize")) << text;
  EXPECT_TRUE(has(text, "75.0%")) << text;
  EXPECT_TRUE(has(text, "25.0%")) << text;
  EXPECT_TRUE(has(text, "total")) << text;
  // Each layer's host launch time beside its share, and their sum on the total row.
  EXPECT_TRUE(has(text, "75.0%    0.0125")) << text;
  EXPECT_TRUE(has(text, "100.0%    0.0500")) << text;
}

TEST(BenchReport, JsonIsValidWithEveryField) {
  for (bool profiled : {false, true}) {
    const std::string json = reportJson(sampleReport(profiled));
    size_t where = 0;
    EXPECT_TRUE(JsonCheck::valid(json, &where)) << "at " << where << ":\n" << json;
    for (const char* key :
         {"\"plan\": \"demo.plan\"", "\"device\": \"cpu\"", "\"streams\": 2",
          "\"cuda_graph\": false", "\"batch_items\": 8", "\"inferences_per_s\": 250",
          "\"items_per_s\": 2000", "\"latency_clock\": \"steady_clock\"", "\"latency_ms\": {",
          "\"enqueue_ms\": {", "\"p99\": 3.97", "\"count\": 4", "\"context_bytes\": 3145728"})
      EXPECT_TRUE(has(json, key)) << key << " not in\n" << json;
    EXPECT_EQ(has(json, "\"profile\""), profiled);
    if (profiled) {
      EXPECT_TRUE(has(json, "\"name\": \"conv \\\"1\\\"\"")) << json;  // escaped quotes
      EXPECT_TRUE(has(json, "\"share\": 0.75")) << json;
      EXPECT_TRUE(has(json, "\"host_ms\": {")) << json;
    }
  }
}

TEST(BenchReport, JsonStaysValidWithNonFiniteNumbers) {
  BenchReport r = sampleReport(false);
  r.latency.mean = std::numeric_limits<double>::infinity();
  r.enqueue.max = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(JsonCheck::valid(reportJson(r)));
}

TEST(BenchReport, ChromeTraceNestsLayersInTheirRuns) {
  const BenchReport r = sampleReport(true);
  std::vector<LayerSample> samples;
  for (int run = 0; run < 2; ++run) {
    samples.push_back({run, 0, "conv \"1\"", "Convolution", "im2col_sgemm", 0, 0.75});
    samples.push_back({run, 1, "crop\\box", "Plugin", "CropAndResize", 0.75, 0.25});
  }
  const std::string trace = chromeTrace(r, samples, {0.0, 2.5});
  size_t where = 0;
  ASSERT_TRUE(JsonCheck::valid(trace, &where)) << "at " << where << ":\n" << trace;
  EXPECT_TRUE(has(trace, "\"traceEvents\": [")) << trace;
  // 2 runs + 4 layers, all complete events, on one process and thread.
  EXPECT_EQ(occurrences(trace, "\"ph\": \"X\""), 6u) << trace;
  EXPECT_EQ(occurrences(trace, "\"pid\": 1, \"tid\": 1"), 7u) << trace;  // with the metadata
  // Microseconds: run 1 starts at 2.5 ms and lasts 1 ms; its second layer starts 0.75 ms in.
  EXPECT_TRUE(has(trace,
                  "\"name\": \"inference 1\", \"cat\": \"inference\", \"ph\": \"X\", "
                  "\"ts\": 2500, \"dur\": 1000"))
      << trace;
  EXPECT_TRUE(has(trace,
                  "\"name\": \"crop\\\\box\", \"cat\": \"Plugin\", \"ph\": \"X\", "
                  "\"ts\": 3250, \"dur\": 250"))
      << trace;
  EXPECT_TRUE(has(trace, "\"tactic\": \"im2col_sgemm\"")) << trace;
  // No profiled runs: an empty but valid trace.
  EXPECT_TRUE(JsonCheck::valid(chromeTrace(r, {}, {})));
}

TEST(BenchReport, BytesAndProgress) {
  EXPECT_EQ(byteText(0), "0 B");
  EXPECT_EQ(byteText(1023), "1023 B");
  EXPECT_EQ(byteText(1536), "1.5 KiB");
  EXPECT_EQ(byteText(5ull << 30), "5.0 GiB");
  EXPECT_EQ(progressLine(1.04, 3, 1234), "timed 1.0 s of at least 3.0 s, 1234 inferences");
}

TEST(JsonCheck, RefusesWhatIsNotJson) {
  EXPECT_TRUE(JsonCheck::valid("{\"a\": [1, -2.5e3, true, null, \"x\\u00e9\"]}"));
  for (const char* bad : {"", "{", "{\"a\" 1}", "[1,]", "{\"a\": nan}", "01", "\"\\q\"", "[] []"})
    EXPECT_FALSE(JsonCheck::valid(bad)) << bad;
}

}  // namespace
}  // namespace kiln::cli
