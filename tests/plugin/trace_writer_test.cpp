#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "kiln/registry.h"
#include "plugin/json_line.h"
#include "plugin/trace.h"
#include "plugin/trace_checker.h"

namespace kiln {
namespace {

uint32_t freshSeed() { return std::random_device{}(); }

// A file in the temp directory, removed when the test ends.
class TempFile {
 public:
  TempFile() {
    path_ = (std::filesystem::temp_directory_path() /
             ("kiln_trace_test_" + std::to_string(::getpid()) + "_" +
              std::to_string(std::random_device{}()) + ".jsonl"))
                .string();
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    EXPECT_TRUE(readTraceFile(path_, out).isOk());
    return out;
  }

 private:
  std::string path_;
};

TraceEvent cloneEvent() {
  TraceEvent e;
  e.phase = TracePhase::kBuild;
  e.plugin = "CropAndResize";
  e.version = "1";
  e.ns = "";
  e.layer = "crop0";
  e.call = "clone";
  e.object = 3;
  e.result = 5;
  e.status = 0;
  return e;
}

TEST(TraceWriter, WritesTheExactLineFormat) {
  TempFile file;
  Tracer tracer;
  ASSERT_TRUE(tracer.setPath(file.path()).isOk());
  EXPECT_TRUE(tracer.enabled());
  tracer.write(cloneEvent());
  TraceEvent creator;
  creator.phase = TracePhase::kDeserialize;
  creator.plugin = "CropAndResize";
  creator.version = "1";
  creator.ns = "acme";
  creator.layer = "crop0";
  creator.call = "deserializePlugin";
  creator.status = 2;
  tracer.write(creator);
  TraceEvent nulls;  // nullptr strings are written as ""
  nulls.plugin = nullptr;
  nulls.version = nullptr;
  nulls.ns = nullptr;
  nulls.layer = nullptr;
  nulls.call = "getFieldNames";
  nulls.phase = TracePhase::kTeardown;
  tracer.write(nulls);

  std::vector<std::string> lines = file.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            R"({"seq":1,"phase":"build","plugin":"CropAndResize","version":"1","ns":"",)"
            R"("layer":"crop0","call":"clone","object":3,"result":5,"status":0,"thread":1})");
  EXPECT_EQ(lines[1],
            R"({"seq":2,"phase":"deserialize","plugin":"CropAndResize","version":"1","ns":"acme",)"
            R"("layer":"crop0","call":"deserializePlugin","object":null,"status":2,"thread":1})");
  EXPECT_EQ(lines[2],
            R"({"seq":3,"phase":"teardown","plugin":"","version":"","ns":"","layer":"","call":)"
            R"("getFieldNames","object":null,"status":0,"thread":1})");

  TraceRecord r;
  ASSERT_TRUE(parseTraceRecord(lines[0], r).isOk());
  EXPECT_EQ(r.seq, 1);
  EXPECT_EQ(r.phase, TracePhase::kBuild);
  EXPECT_EQ(r.call, "clone");
  EXPECT_EQ(r.object, 3);
  EXPECT_EQ(r.result, 5);
  ASSERT_TRUE(parseTraceRecord(lines[1], r).isOk());
  EXPECT_EQ(r.object, -1);
  EXPECT_EQ(r.result, -1);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.ns, "acme");
}

TEST(TraceWriter, PhaseNamesRoundTrip) {
  const char* names[] = {"parse",   "build", "serialize", "deserialize",
                         "context", "infer", "teardown"};
  for (int i = 0; i < 7; ++i) {
    EXPECT_STREQ(tracePhaseName(static_cast<TracePhase>(i)), names[i]);
    TracePhase p;
    ASSERT_TRUE(parseTracePhase(names[i], p));
    EXPECT_EQ(p, static_cast<TracePhase>(i));
  }
  TracePhase p;
  EXPECT_FALSE(parseTracePhase("Build", p));
}

TEST(TraceWriter, EscapesAndParsesBackAnyString) {
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  TempFile file;
  Tracer tracer;
  ASSERT_TRUE(tracer.setPath(file.path()).isOk());
  std::vector<std::string> layers = {
      "a\"b",         "back\\slash", "new\nline", "tab\tcr\r", std::string("nul\0x", 5),
      "\x01\x1f\x7f", "caf\xc3\xa9"};
  for (int i = 0; i < 20; ++i) {
    std::string s(std::uniform_int_distribution<int>(1, 30)(rng), ' ');
    for (char& c : s) c = static_cast<char>(std::uniform_int_distribution<int>(1, 255)(rng));
    layers.push_back(s);
  }
  for (const std::string& layer : layers) {
    TraceEvent e = cloneEvent();
    e.layer = layer.c_str();  // the writer sees C strings: stops at the first NUL
    e.ns = layer.c_str();
    tracer.write(e);
  }
  std::vector<std::string> lines = file.lines();
  ASSERT_EQ(lines.size(), layers.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    TraceRecord r;
    Status s = parseTraceRecord(lines[i], r);
    ASSERT_TRUE(s.isOk()) << s.message() << "\n" << lines[i];
    std::string expected = std::string(layers[i].c_str());
    EXPECT_EQ(r.layer, expected);
    EXPECT_EQ(r.ns, expected);
    EXPECT_EQ(r.seq, static_cast<int64_t>(i) + 1);
  }
}

TEST(TraceWriter, ConcurrentWritersGiveCompleteUniqueLines) {
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int perThread = std::uniform_int_distribution<int>(300, 600)(rng);
  TempFile file;
  Tracer tracer;
  ASSERT_TRUE(tracer.setPath(file.path()).isOk());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&tracer, t, perThread] {
      std::string layer = "layer_of_thread_" + std::to_string(t);
      for (int i = 0; i < perThread; ++i) {
        TraceEvent e = cloneEvent();
        e.layer = layer.c_str();
        e.object = t * 100000 + i + 1;  // increasing within the thread
        tracer.write(e);
      }
    });
  }
  for (std::thread& t : threads) t.join();

  std::vector<std::string> lines = file.lines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(4 * perThread));
  std::vector<TraceRecord> records;
  Status s = parseTrace(lines, records);  // also requires seq to grow line by line
  ASSERT_TRUE(s.isOk()) << s.message();
  std::set<int64_t> seqs;
  std::map<int64_t, std::string> layerOfThread;
  std::map<int64_t, int64_t> lastObject;
  for (const TraceRecord& r : records) {
    seqs.insert(r.seq);
    auto [it, inserted] = layerOfThread.emplace(r.thread, r.layer);
    EXPECT_EQ(it->second, r.layer) << "thread ids must be stable per OS thread";
    EXPECT_GT(r.object, lastObject[r.thread]) << "a thread's lines keep their order";
    lastObject[r.thread] = r.object;
  }
  EXPECT_EQ(seqs.size(), lines.size());
  EXPECT_EQ(*seqs.begin(), 1);
  EXPECT_EQ(*seqs.rbegin(), static_cast<int64_t>(lines.size()));
  ASSERT_EQ(layerOfThread.size(), 4u);
  EXPECT_EQ(layerOfThread.begin()->first, 1);
  EXPECT_EQ(layerOfThread.rbegin()->first, 4);
}

TEST(TraceWriter, SetPathTurnsOffAndRestarts) {
  TempFile first, second;
  Tracer tracer;
  ASSERT_TRUE(tracer.setPath(first.path()).isOk());
  tracer.write(cloneEvent());
  tracer.write(cloneEvent());
  ASSERT_TRUE(tracer.setPath("").isOk());
  EXPECT_FALSE(tracer.enabled());
  tracer.write(cloneEvent());
  EXPECT_EQ(first.lines().size(), 2u);

  ASSERT_TRUE(tracer.setPath(second.path()).isOk());
  tracer.write(cloneEvent());
  std::vector<std::string> lines = second.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("{\"seq\":1,"), std::string::npos) << lines[0];

  // Reopening truncates.
  ASSERT_TRUE(tracer.setPath(first.path()).isOk());
  tracer.flush();
  EXPECT_TRUE(first.lines().empty());

  Status bad = tracer.setPath("/nonexistent_kiln_dir/trace.jsonl");
  EXPECT_FALSE(bad.isOk());
  EXPECT_EQ(bad.code(), StatusCode::kIoError);
  EXPECT_NE(bad.message().find("/nonexistent_kiln_dir/trace.jsonl"), std::string::npos);
  EXPECT_FALSE(tracer.enabled());
}

TEST(TraceWriter, ReadsKilnTraceAtFirstUse) {
  TempFile file;
  ASSERT_EQ(::setenv("KILN_TRACE", file.path().c_str(), 1), 0);
  {
    Tracer tracer;
    EXPECT_TRUE(tracer.enabled());
    tracer.write(cloneEvent());
  }
  EXPECT_EQ(file.lines().size(), 1u);
  {
    Tracer tracer;  // setPath() before first use wins over the environment
    ASSERT_TRUE(tracer.setPath("").isOk());
    EXPECT_FALSE(tracer.enabled());
  }
  ASSERT_EQ(::unsetenv("KILN_TRACE"), 0);
  {
    Tracer tracer;
    EXPECT_FALSE(tracer.enabled());
  }
  ASSERT_EQ(::setenv("KILN_TRACE", "-", 1), 0);
  {
    Tracer tracer;
    ::testing::internal::CaptureStderr();
    tracer.write(cloneEvent());
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("\"call\":\"clone\""), std::string::npos) << err;
  }
  ASSERT_EQ(::unsetenv("KILN_TRACE"), 0);
}

TEST(TraceWriter, PublicSetTracePathDrivesTheGlobalTracer) {
  TempFile file;
  ASSERT_TRUE(setTracePath(file.path()).isOk());
  Tracer::instance().write(cloneEvent());
  flushTrace();
  EXPECT_EQ(file.lines().size(), 1u);
  ASSERT_TRUE(setTracePath("").isOk());
  EXPECT_FALSE(Tracer::instance().enabled());
}

TEST(TraceWriter, ObjectIdsAreUniqueAcrossThreads) {
  std::vector<std::vector<int64_t>> ids(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&ids, t] {
      for (int i = 0; i < 1000; ++i) ids[t].push_back(Tracer::newObjectId());
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<int64_t> all;
  for (const auto& v : ids) {
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_GE(v[i], 1);
      if (i > 0) {
        EXPECT_GT(v[i], v[i - 1]);
      }
      all.insert(v[i]);
    }
  }
  EXPECT_EQ(all.size(), 4000u);
}

}  // namespace
}  // namespace kiln
