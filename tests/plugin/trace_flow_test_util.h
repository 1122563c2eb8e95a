// Test helper: builds lifecycle traces event by event, and a random but correct full flow
// (parse -> build -> serialize -> deserialize -> context -> infer -> teardown, DESIGN.md §2) that
// the checker tests then break one guarantee at a time.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "plugin/trace.h"

namespace kiln::testing {

struct FlowEvent {
  TracePhase phase = TracePhase::kParse;
  std::string plugin;
  std::string version = "1";
  std::string ns;
  std::string layer;
  std::string call;
  int64_t object = -1;
  int64_t result = -1;
  int32_t status = 0;
  int64_t thread = 1;
  bool hasShapes = false;  // onShapeChange and enqueue lines carry shapes
  TraceShapes shapes;

  TraceEvent view() const;  // points into this event's strings
};

class Flow {
 public:
  explicit Flow(int64_t firstId = 1) : nextId_(firstId) {}

  // A creator call that makes an object (createPlugin/deserializePlugin); returns its id.
  int64_t make(TracePhase phase, const std::string& plugin, const std::string& ns,
               const std::string& layer, const std::string& call);
  // A creator call that fails and makes nothing.
  void makeFails(TracePhase phase, const std::string& plugin, const std::string& ns,
                 const std::string& layer, const std::string& call, int32_t status);
  // A call on an object; layer, plugin and namespace are the object's.
  FlowEvent& call(TracePhase phase, int64_t object, const std::string& call, int32_t status = 0,
                  int64_t thread = 1);
  // clone() on `object`; returns the new id.
  int64_t clone(TracePhase phase, int64_t object, int64_t thread = 1);

  // Index of the nth event with this object and call; -1 if none.
  int find(int64_t object, const std::string& call, int nth = 0) const;
  // Index of the last event on this object; -1 if none.
  int findLast(int64_t object) const;

  std::vector<FlowEvent> events;

  // The trace lines, seq 1..n in event order.
  std::vector<std::string> lines() const;

 private:
  struct Info {
    std::string plugin, ns, layer;
  };
  int64_t nextId_;
  std::map<int64_t, Info> info_;
};

struct LayerIds {
  std::string layer;
  std::string plugin;
  std::string ns;
  int64_t definition = 0;
  std::vector<int64_t> build;  // all build objects, the chosen one last
  int64_t engine = 0;
  std::vector<int64_t> contexts;
};

struct GoodFlow {
  Flow flow;
  std::vector<LayerIds> layers;
};

// A correct full flow with random layer count, namespaces, candidate count, context count,
// enqueue interleaving and first object id.
GoodFlow makeGoodFlow(std::mt19937& rng);

}  // namespace kiln::testing
