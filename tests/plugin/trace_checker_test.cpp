#include "plugin/trace_checker.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <random>
#include <set>

#include "plugin/trace_flow_test_util.h"

namespace kiln {
namespace {

using testing::Flow;
using testing::FlowEvent;
using testing::GoodFlow;
using testing::makeGoodFlow;
using P = TracePhase;

std::string dump(const std::vector<TraceViolation>& vs) {
  std::string s;
  for (const TraceViolation& v : vs) s += "  " + formatTraceViolation(v) + "\n";
  return s.empty() ? "  (none)\n" : s;
}

std::vector<TraceViolation> check(const Flow& flow) {
  std::vector<TraceViolation> vs;
  Status s = checkTrace(flow.lines(), vs);
  EXPECT_TRUE(s.isOk()) << s.message();
  return vs;
}

bool has(const std::vector<TraceViolation>& vs, int guarantee) {
  for (const TraceViolation& v : vs) {
    if (v.guarantee == guarantee) return true;
  }
  return false;
}

// The violation of `guarantee` that mentions `needle`, or fails the test.
const TraceViolation* find(const std::vector<TraceViolation>& vs, int guarantee,
                           const std::string& needle) {
  for (const TraceViolation& v : vs) {
    if (v.guarantee == guarantee && v.message.find(needle) != std::string::npos) return &v;
  }
  ADD_FAILURE() << "no violation of guarantee " << guarantee << " mentioning '" << needle
                << "'; got:\n"
                << dump(vs);
  return nullptr;
}

// Runs `body` with a fresh good flow from a fresh seed (printed on failure), a few times over so
// the random shapes of the flow vary.
void withFlows(const std::function<void(GoodFlow&, std::mt19937&)>& body) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int i = 0; i < 8; ++i) {
    GoodFlow g = makeGoodFlow(rng);
    body(g, rng);
    if (::testing::Test::HasFailure()) return;
  }
}

template <typename T>
const T& pickOne(const std::vector<T>& v, std::mt19937& rng) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

int64_t anyObject(const GoodFlow& g, std::mt19937& rng) {
  std::vector<int64_t> all;
  for (const auto& l : g.layers) {
    all.push_back(l.definition);
    all.push_back(l.engine);
    all.insert(all.end(), l.build.begin(), l.build.end());
    all.insert(all.end(), l.contexts.begin(), l.contexts.end());
  }
  return pickOne(all, rng);
}

std::string obj(int64_t id) { return "#" + std::to_string(id) + " "; }

TEST(TraceChecker, GoodFullFlowHasNoViolations) {
  withFlows([](GoodFlow& g, std::mt19937&) {
    std::vector<TraceViolation> vs = check(g.flow);
    EXPECT_TRUE(vs.empty()) << dump(vs);
    // It really is the full flow.
    std::set<P> phases;
    for (const FlowEvent& e : g.flow.events) phases.insert(e.phase);
    EXPECT_EQ(phases.size(), 7u);
  });
}

TEST(TraceChecker, GoodFlowWrittenByTheTracerChecksCleanFromAFile) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  GoodFlow g = makeGoodFlow(rng);
  std::string path =
      (std::filesystem::temp_directory_path() /
       ("kiln_trace_check_" + std::to_string(::getpid()) + "_" + std::to_string(seed) + ".jsonl"))
          .string();
  Tracer tracer;
  ASSERT_TRUE(tracer.setPath(path).isOk());
  for (const FlowEvent& e : g.flow.events) tracer.write(e.view());
  ASSERT_TRUE(tracer.setPath("").isOk());
  std::vector<TraceViolation> vs;
  Status s = checkTraceFile(path, vs);
  std::filesystem::remove(path);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_TRUE(vs.empty()) << dump(vs);

  s = checkTraceFile(path, vs);  // now gone
  EXPECT_EQ(s.code(), StatusCode::kIoError);
}

TEST(TraceChecker, GoodFailurePathsHaveNoViolations) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    // A candidate whose initialize fails is destroyed without terminate; a load whose second
    // deserializePlugin fails makes nothing; a failed enqueue still tears down normally.
    Flow& f = g.flow;
    const auto& l = pickOne(g.layers, rng);
    // The definition's destroy moves to the very end, after the extra events.
    int at = f.find(l.definition, "destroy");
    FlowEvent destroy = f.events[at];
    f.events.erase(f.events.begin() + at);
    int64_t b = f.clone(P::kBuild, l.definition);
    f.call(P::kBuild, b, "configurePlugin");
    f.call(P::kBuild, b, "initialize", 2);
    f.call(P::kBuild, b, "destroy");
    f.makeFails(P::kDeserialize, l.plugin, l.ns, l.layer, "deserializePlugin", 1);
    int64_t c = f.clone(P::kBuild, l.definition);
    f.call(P::kBuild, c, "configurePlugin", 3);
    f.call(P::kBuild, c, "destroy");
    f.events.push_back(destroy);
    std::vector<TraceViolation> vs = check(f);
    EXPECT_TRUE(vs.empty()) << dump(vs);
  });
}

// ---- guarantee 1 --------------------------------------------------------------------------------

TEST(TraceChecker, Guarantee1MissingDestroyIsALeak) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    int64_t victim = anyObject(g, rng);
    g.flow.events.erase(g.flow.events.begin() + g.flow.find(victim, "destroy"));
    std::vector<TraceViolation> vs = check(g.flow);
    const TraceViolation* v = find(vs, 1, obj(victim));
    if (v != nullptr) {
      EXPECT_NE(v->message.find("never destroyed"), std::string::npos);
    }
  });
}

TEST(TraceChecker, Guarantee1SecondDestroyAndCallsAfterDestroy) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    int64_t victim = anyObject(g, rng);
    Flow& f = g.flow;
    FlowEvent again = f.events[f.find(victim, "destroy")];
    f.events.push_back(again);
    std::vector<TraceViolation> vs = check(f);
    find(vs, 1, "second destroy");

    f.events.pop_back();
    f.call(P::kTeardown, victim, "getNbOutputs");
    vs = check(f);
    find(vs, 1, "getNbOutputs");
  });
}

TEST(TraceChecker, Guarantee1CallOnUnknownObject) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    Flow& f = g.flow;
    FlowEvent e = f.events[std::uniform_int_distribution<size_t>(0, f.events.size() - 1)(rng)];
    e.object = 999999;
    e.result = -1;
    e.call = "enqueue";
    f.events.insert(f.events.begin() + f.events.size() / 2, e);
    std::vector<TraceViolation> vs = check(f);
    find(vs, 1, "999999");
  });
}

TEST(TraceChecker, Guarantee1IdMadeTwiceAndSuccessWithoutResult) {
  withFlows([](GoodFlow& g, std::mt19937&) {
    Flow& f = g.flow;
    // A createPlugin returning the id of an existing object.
    FlowEvent e = f.events[0];
    ASSERT_EQ(e.call, "createPlugin");
    f.events.push_back(e);
    std::vector<TraceViolation> vs = check(f);
    find(vs, 1, "already used");

    f.events.back().result = -1;  // "succeeded" but made nothing
    vs = check(f);
    find(vs, 1, "names no result");
  });
}

// ---- guarantee 2 --------------------------------------------------------------------------------

TEST(TraceChecker, Guarantee2DestroyWithoutTerminate) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    int64_t victim = rng() % 2 ? l.engine : pickOne(l.build, rng);
    Flow& f = g.flow;
    f.events.erase(f.events.begin() + f.find(victim, "terminate"));
    std::vector<TraceViolation> vs = check(f);
    find(vs, 2, obj(victim));
    EXPECT_FALSE(has(vs, 8)) << "no call failed:\n" << dump(vs);
  });
}

TEST(TraceChecker, Guarantee2TerminateTwiceOrWithoutInitialize) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    Flow& f = g.flow;
    // Twice.
    int at = f.find(l.engine, "terminate");
    f.events.insert(f.events.begin() + at, f.events[at]);
    std::vector<TraceViolation> vs = check(f);
    find(vs, 2, "second terminate");
    f.events.erase(f.events.begin() + at);

    // On the definition, never initialized (the TensorRT 5.1 bug on context clones is the same
    // shape; there it also breaks nothing else).
    at = f.find(l.definition, "destroy");
    FlowEvent term = f.events[at];
    term.call = "terminate";
    f.events.insert(f.events.begin() + at, term);
    vs = check(f);
    find(vs, 2, "never initialized");
  });
}

TEST(TraceChecker, Guarantee2InitializeTwice) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    Flow& f = g.flow;
    int at = f.find(l.engine, "initialize");
    f.events.insert(f.events.begin() + at, f.events[at]);
    std::vector<TraceViolation> vs = check(f);
    find(vs, 2, "second initialize");
  });
}

TEST(TraceChecker, Guarantee2EngineLeftInitializedAtTheEnd) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    Flow& f = g.flow;
    f.events.erase(f.events.begin() + f.find(l.engine, "destroy"));
    f.events.erase(f.events.begin() + f.find(l.engine, "terminate"));
    std::vector<TraceViolation> vs = check(f);
    find(vs, 2, "terminate never came");
    find(vs, 1, obj(l.engine));
  });
}

// ---- guarantee 3 --------------------------------------------------------------------------------

TEST(TraceChecker, Guarantee3ContextObjectInitialized) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    int64_t x = pickOne(l.contexts, rng);
    Flow& f = g.flow;
    int at = f.find(x, "attachToContext");
    FlowEvent init = f.events[at];
    init.call = "initialize";
    f.events.insert(f.events.begin() + at, init);
    // Paired with a terminate, so guarantee 2 holds and only 3 is broken.
    FlowEvent term = f.events[f.find(x, "destroy")];
    term.call = "terminate";
    f.events.insert(f.events.begin() + f.find(x, "destroy"), term);
    std::vector<TraceViolation> vs = check(f);
    find(vs, 3, obj(x));
    EXPECT_FALSE(has(vs, 2)) << dump(vs);
  });
}

// ---- guarantee 4 --------------------------------------------------------------------------------

TEST(TraceChecker, Guarantee4BuildObjectUsedBeforeConfigure) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    int64_t b = pickOne(l.build, rng);
    Flow& f = g.flow;
    if (rng() % 2) {
      f.events.erase(f.events.begin() + f.find(b, "configurePlugin"));
    } else {
      f.events[f.find(b, "configurePlugin")].status = 1;  // failed configure does not count
      // and the flow went on regardless: initialize on an unconfigured object
    }
    std::vector<TraceViolation> vs = check(f);
    find(vs, 4, obj(b));
    find(vs, 4, "getWorkspaceSize");
  });
}

TEST(TraceChecker, Guarantee4DeserializedObjectsAndTheirClonesAreNeverConfigured) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    int64_t victim = rng() % 2 ? l.engine : pickOne(l.contexts, rng);
    Flow& f = g.flow;
    int at = f.findLast(victim);
    FlowEvent e = f.events[at];
    e.call = "configurePlugin";
    e.status = 0;
    f.events.insert(f.events.begin() + at, e);
    std::vector<TraceViolation> vs = check(f);
    find(vs, 4, obj(victim));
  });
}

// ---- guarantee 5 --------------------------------------------------------------------------------

TEST(TraceChecker, Guarantee5EnqueueOutsideAttachment) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    int64_t x = pickOne(l.contexts, rng);
    Flow& f = g.flow;
    int enq = f.find(x, "enqueue");
    FlowEvent late = f.events[enq];
    switch (rng() % 3) {
      case 0:  // after detach
        f.events.insert(f.events.begin() + f.find(x, "destroy"), late);
        break;
      case 1:  // attach failed
        f.events[f.find(x, "attachToContext")].status = 2;
        break;
      default:  // before attach
        f.events.insert(f.events.begin() + f.find(x, "attachToContext"), late);
        break;
    }
    std::vector<TraceViolation> vs = check(f);
    find(vs, 5, obj(x));
  });
}

TEST(TraceChecker, Guarantee5DestroyedWhileAttached) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    int64_t x = pickOne(l.contexts, rng);
    Flow& f = g.flow;
    f.events.erase(f.events.begin() + f.find(x, "detachFromContext"));
    std::vector<TraceViolation> vs = check(f);
    find(vs, 5, "detachFromContext before destroy");
  });
}

TEST(TraceChecker, Guarantee5DoubleAttachAndStrayDetach) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    int64_t x = pickOne(l.contexts, rng);
    Flow& f = g.flow;
    int at = f.find(x, "attachToContext");
    f.events.insert(f.events.begin() + at, f.events[at]);
    std::vector<TraceViolation> vs = check(f);
    find(vs, 5, "still attached");
    f.events.erase(f.events.begin() + at);

    at = f.find(x, "detachFromContext");
    f.events.insert(f.events.begin() + at, f.events[at]);
    vs = check(f);
    find(vs, 5, "without a successful attachToContext");
  });
}

// ---- guarantee 6 --------------------------------------------------------------------------------

TEST(TraceChecker, Guarantee6CloneBeforeRoundTrip) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    Flow& f = g.flow;
    if (rng() % 2) {
      f.events.erase(f.events.begin() + f.find(l.engine, "serialize"));
    } else {
      f.events[f.find(l.engine, "serialize")].phase = P::kSerialize;  // not the load's round trip
    }
    std::vector<TraceViolation> vs = check(f);
    find(vs, 6, obj(l.engine));
  });
}

TEST(TraceChecker, Guarantee6RoundTripMismatch) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    Flow& f = g.flow;
    f.events[f.find(l.engine, "serialize")].status = 1;
    std::vector<TraceViolation> vs = check(f);
    const TraceViolation* v = find(vs, 6, obj(l.engine));
    if (v != nullptr) {
      EXPECT_NE(v->message.find("status 1"), std::string::npos);
    }
  });
}

// ---- guarantee 7 --------------------------------------------------------------------------------

TEST(TraceChecker, Guarantee7NamespaceMustBeSetFirst) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    int64_t victim = rng() % 2 ? l.engine : l.definition;
    Flow& f = g.flow;
    int at = f.find(victim, "setPluginNamespace");
    if (rng() % 2) {
      f.events.erase(f.events.begin() + at);
    } else {
      std::swap(f.events[at], f.events[at + 1]);  // set, but not first
    }
    std::vector<TraceViolation> vs = check(f);
    find(vs, 7, "expected setPluginNamespace");
  });
}

TEST(TraceChecker, Guarantee7CloneWithAnotherNamespace) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    int64_t victim = rng() % 2 ? pickOne(l.contexts, rng) : pickOne(l.build, rng);
    Flow& f = g.flow;
    f.events[f.findLast(victim)].ns = l.ns + "x";
    std::vector<TraceViolation> vs = check(f);
    const TraceViolation* v = find(vs, 7, obj(victim));
    if (v != nullptr) {
      EXPECT_NE(v->message.find("source"), std::string::npos) << v->message;
    }
  });
}

TEST(TraceChecker, Guarantee7NamespaceOtherThanTheCreators) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    Flow& f = g.flow;
    f.events[f.find(l.definition, "setPluginNamespace")].ns = l.ns + "other";
    std::vector<TraceViolation> vs = check(f);
    find(vs, 7, "the creator that made it");
  });
}

// ---- guarantee 8 --------------------------------------------------------------------------------

TEST(TraceChecker, Guarantee8FailedInitializeThenTerminated) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    int64_t b = pickOne(l.build, rng);
    Flow& f = g.flow;
    f.events[f.find(b, "initialize")].status = 2;
    std::vector<TraceViolation> vs = check(f);
    find(vs, 2, "failed with status 2");
    find(vs, 8, "initialize on");
  });
}

TEST(TraceChecker, Guarantee8FailedLoadLeaksTheOtherEngineObjects) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    // An engine object made, then a later deserializePlugin fails and the load returns without
    // destroying what it had made.
    Flow& f = g.flow;
    const auto& l = pickOne(g.layers, rng);
    int64_t e = f.make(P::kDeserialize, l.plugin, l.ns, l.layer, "deserializePlugin");
    f.call(P::kDeserialize, e, "setPluginNamespace");
    f.call(P::kDeserialize, e, "initialize");
    f.makeFails(P::kDeserialize, l.plugin, l.ns, l.layer, "deserializePlugin", 1);
    std::vector<TraceViolation> vs = check(f);
    find(vs, 1, obj(e));
    find(vs, 2, obj(e));
    const TraceViolation* v = find(vs, 8, "deserializePlugin (status 1");
    if (v != nullptr) {
      EXPECT_NE(v->message.find("#" + std::to_string(e) + ":"), std::string::npos) << v->message;
    }
  });
}

TEST(TraceChecker, Guarantee8FailedEnqueueLeaksTheContextObject) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    int64_t x = pickOne(l.contexts, rng);
    Flow& f = g.flow;
    f.events[f.find(x, "enqueue")].status = 1;
    f.events.erase(f.events.begin() + f.find(x, "destroy"));
    std::vector<TraceViolation> vs = check(f);
    find(vs, 1, obj(x));
    find(vs, 8, "enqueue on");
  });
}

TEST(TraceChecker, Guarantee9EnqueueWithoutOnShapeChange) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const int64_t x = pickOne(pickOne(g.layers, rng).contexts, rng);
    Flow& f = g.flow;
    f.events.erase(f.events.begin() + f.find(x, "onShapeChange"));
    find(check(f), 9, "without a successful onShapeChange");
  });
}

TEST(TraceChecker, Guarantee9FailedOnShapeChangeThenEnqueue) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const int64_t x = pickOne(pickOne(g.layers, rng).contexts, rng);
    Flow& f = g.flow;
    f.events[f.find(x, "onShapeChange")].status = 1;
    find(check(f), 9, "without a successful onShapeChange");
  });
}

TEST(TraceChecker, Guarantee9EnqueueWithOtherShapesThanHeard) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const int64_t x = pickOne(pickOne(g.layers, rng).contexts, rng);
    Flow& f = g.flow;
    f.events[f.find(x, "enqueue")].shapes.shapes = "9x3;9x3";
    find(check(f), 9, "with shapes 9x3;9x3, but its last onShapeChange");
  });
}

TEST(TraceChecker, Guarantee9RepeatedAndOutOfRangeAndMisdirectedShapeChanges) {
  withFlows([](GoodFlow& g, std::mt19937& rng) {
    const auto& l = pickOne(g.layers, rng);
    const int64_t x = pickOne(l.contexts, rng);
    Flow& f = g.flow;
    const int at = f.find(x, "onShapeChange");
    FlowEvent again = f.events[at];
    f.events.insert(f.events.begin() + at + 1, again);
    find(check(f), 9, "repeats the shapes");
    f.events.erase(f.events.begin() + at + 1);

    f.events[at].shapes.shapes = "5x3;5x3";
    f.events[f.find(x, "enqueue")].shapes.shapes = "5x3;5x3";
    find(check(f), 9, "not inside the profile's range");
  });
  // On an engine object (no context object may be the one told).
  Flow f;
  int64_t d = f.make(P::kParse, "P", "", "l", "createPlugin");
  f.call(P::kParse, d, "setPluginNamespace");
  FlowEvent& e = f.call(P::kInfer, d, "onShapeChange");
  e.hasShapes = true;
  e.shapes = {"2x3;2x3", "1x3;1x3", "4x3;4x3"};
  f.call(P::kTeardown, d, "destroy");
  find(check(f), 9, "only context objects hear shape changes");
}

// ---- messages and malformed traces --------------------------------------------------------------

TEST(TraceChecker, ViolationsNameObjectCallAndExpectation) {
  Flow f(7);
  int64_t d = f.make(P::kParse, "CropAndResize", "", "crop0", "createPlugin");
  f.call(P::kParse, d, "setPluginNamespace");
  int64_t b = f.clone(P::kBuild, d);
  f.call(P::kBuild, b, "enqueue");
  f.call(P::kBuild, b, "destroy");
  f.call(P::kTeardown, d, "destroy");
  std::vector<TraceViolation> vs = check(f);
  ASSERT_EQ(vs.size(), 1u) << dump(vs);
  EXPECT_EQ(vs[0].guarantee, 4);
  EXPECT_EQ(vs[0].seq, 4);
  EXPECT_EQ(formatTraceViolation(vs[0]),
            "seq 4: guarantee 4: CropAndResize#8 (layer 'crop0', build object cloned from #7 at "
            "seq 3): enqueue at seq 4 on a build object before any successful configurePlugin; "
            "expected configurePlugin first");
}

TEST(TraceChecker, MalformedTracesGiveParseErrorsNotCrashes) {
  const std::string good =
      R"({"seq":1,"phase":"build","plugin":"P","version":"1","ns":"","layer":"l","call":"clone",)"
      R"("object":3,"result":5,"status":0,"thread":1})";
  struct Case {
    std::string line;
    const char* says;
  };
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  const Case cases[] = {
      {"not json", "trace line 2"},
      {with("\"seq\":1,", ""), "missing key \"seq\""},
      {with("\"phase\":\"build\"", "\"phase\":\"bake\""), "unknown phase"},
      {with("\"object\":3", "\"object\":\"3\""), "\"object\" must be an integer or null"},
      {with("\"object\":3", "\"object\":0"), "outside"},
      {with("\"status\":0", "\"status\":4294967296"), "outside"},
      {with("\"call\":\"clone\"", "\"call\":\"\""), "\"call\" is empty"},
      {with("\"object\":3", "\"object\":null"), "not a creator method"},
      {with("\"call\":\"clone\"", "\"call\":\"createPlugin\""), "expected \"object\": null"},
      {with("\"call\":\"clone\"", "\"call\":\"initialize\""), "only createPlugin"},
      {good.substr(0, good.size() / 2), "trace line 2"},
  };
  for (const Case& c : cases) {
    std::vector<TraceViolation> vs;
    Status s = checkTrace({good, c.line}, vs);
    EXPECT_FALSE(s.isOk()) << c.line;
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.line << "\n -> " << s.message();
    EXPECT_NE(s.message().find("trace line 2"), std::string::npos) << s.message();
  }
  // seq must grow.
  std::vector<TraceViolation> vs;
  Status s = checkTrace({good, good}, vs);
  EXPECT_NE(s.message().find("does not follow"), std::string::npos) << s.message();
  // Blank lines and unknown keys are fine.
  s = checkTrace({"", with("\"thread\":1", "\"thread\":1,\"extra\":\"x\""), "  "}, vs);
  EXPECT_TRUE(s.isOk()) << s.message();
}

TEST(TraceChecker, RandomlyDamagedTracesNeverCrash) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int i = 0; i < 50; ++i) {
    GoodFlow g = makeGoodFlow(rng);
    std::vector<std::string> lines = g.flow.lines();
    // Reorder or drop whole events: parses, and the checker must cope with any order.
    if (rng() % 2) {
      std::shuffle(g.flow.events.begin(), g.flow.events.end(), rng);
    } else {
      g.flow.events.resize(g.flow.events.size() / 2);
    }
    std::vector<TraceViolation> vs;
    EXPECT_TRUE(checkTrace(g.flow.lines(), vs).isOk());
    EXPECT_FALSE(vs.empty());
    // Damage one byte: a parse error or a checked trace, never a crash.
    std::string& line = lines[std::uniform_int_distribution<size_t>(0, lines.size() - 1)(rng)];
    line[std::uniform_int_distribution<size_t>(0, line.size() - 1)(rng)] =
        static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    Status s = checkTrace(lines, vs);
    if (!s.isOk()) {
      EXPECT_NE(s.message().find("trace line "), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace kiln
