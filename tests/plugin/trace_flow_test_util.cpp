#include "plugin/trace_flow_test_util.h"

namespace kiln::testing {

TraceEvent FlowEvent::view() const {
  TraceEvent e;
  e.phase = phase;
  e.plugin = plugin.c_str();
  e.version = version.c_str();
  e.ns = ns.c_str();
  e.layer = layer.c_str();
  e.call = call.c_str();
  e.object = object;
  e.result = result;
  e.status = status;
  e.shapes = hasShapes ? &shapes : nullptr;
  return e;
}

int64_t Flow::make(TracePhase phase, const std::string& plugin, const std::string& ns,
                   const std::string& layer, const std::string& call) {
  FlowEvent e;
  e.phase = phase;
  e.plugin = plugin;
  e.ns = ns;
  e.layer = layer;
  e.call = call;
  e.result = nextId_++;
  info_[e.result] = {plugin, ns, layer};
  events.push_back(e);
  return e.result;
}

void Flow::makeFails(TracePhase phase, const std::string& plugin, const std::string& ns,
                     const std::string& layer, const std::string& call, int32_t status) {
  FlowEvent e;
  e.phase = phase;
  e.plugin = plugin;
  e.ns = ns;
  e.layer = layer;
  e.call = call;
  e.status = status;
  events.push_back(e);
}

FlowEvent& Flow::call(TracePhase phase, int64_t object, const std::string& call, int32_t status,
                      int64_t thread) {
  const Info& info = info_[object];
  FlowEvent e;
  e.phase = phase;
  e.plugin = info.plugin;
  e.ns = info.ns;
  e.layer = info.layer;
  e.call = call;
  e.object = object;
  e.status = status;
  e.thread = thread;
  events.push_back(e);
  return events.back();
}

int64_t Flow::clone(TracePhase phase, int64_t object, int64_t thread) {
  int64_t id = nextId_++;
  info_[id] = info_[object];
  call(phase, object, "clone", 0, thread).result = id;
  return id;
}

int Flow::find(int64_t object, const std::string& call, int nth) const {
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].object == object && events[i].call == call && nth-- == 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Flow::findLast(int64_t object) const {
  for (size_t i = events.size(); i-- > 0;) {
    if (events[i].object == object) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> Flow::lines() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < events.size(); ++i) {
    out.push_back(
        formatTraceEvent(events[i].view(), static_cast<int64_t>(i) + 1, events[i].thread));
  }
  return out;
}

GoodFlow makeGoodFlow(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  GoodFlow g{Flow(pick(1, 1000)), {}};
  Flow& f = g.flow;
  const int nbLayers = pick(1, 3);
  const int nbContexts = pick(1, 3);
  const char* kPlugins[] = {"CropAndResize", "Probe"};
  const char* kNamespaces[] = {"", "acme", "ns.v2"};
  for (int l = 0; l < nbLayers; ++l) {
    LayerIds ids;
    ids.layer = "layer" + std::to_string(l) + "_" + std::to_string(pick(0, 99));
    ids.plugin = kPlugins[pick(0, 1)];
    ids.ns = kNamespaces[pick(0, 2)];
    g.layers.push_back(ids);
  }
  using P = TracePhase;

  for (LayerIds& l : g.layers) {
    l.definition = f.make(P::kParse, l.plugin, l.ns, l.layer, "createPlugin");
    f.call(P::kParse, l.definition, "setPluginNamespace");
    f.call(P::kParse, l.definition, "getNbOutputs");
    f.call(P::kParse, l.definition, "getOutputDimensions");
  }
  for (LayerIds& l : g.layers) {
    const int candidates = pick(1, 3);
    for (int c = 0; c < candidates; ++c) {
      int64_t b = f.clone(P::kBuild, l.definition);
      l.build.push_back(b);
      for (int k = pick(1, 4); k > 0; --k) f.call(P::kBuild, b, "supportsFormatCombination");
      f.call(P::kBuild, b, "configurePlugin");
      f.call(P::kBuild, b, "getWorkspaceSize");
      f.call(P::kBuild, b, "initialize");
      for (int k = pick(1, 3); k > 0; --k) f.call(P::kBuild, b, "enqueue");
      if (c + 1 < candidates) {  // the last candidate is the chosen one, kept for serialize
        f.call(P::kBuild, b, "terminate");
        f.call(P::kBuild, b, "destroy");
      }
    }
  }
  for (LayerIds& l : g.layers) {
    f.call(P::kSerialize, l.build.back(), "getSerializationSize");
    f.call(P::kSerialize, l.build.back(), "serialize");
    f.call(P::kSerialize, l.build.back(), "terminate");
    f.call(P::kSerialize, l.build.back(), "destroy");
  }
  for (LayerIds& l : g.layers) {
    l.engine = f.make(P::kDeserialize, l.plugin, l.ns, l.layer, "deserializePlugin");
    f.call(P::kDeserialize, l.engine, "setPluginNamespace");
    f.call(P::kDeserialize, l.engine, "initialize");
    f.call(P::kDeserialize, l.engine, "getSerializationSize");
    f.call(P::kDeserialize, l.engine, "serialize");  // the round trip
  }
  for (int c = 0; c < nbContexts; ++c) {
    for (LayerIds& l : g.layers) {
      int64_t x = f.clone(P::kContext, l.engine);
      l.contexts.push_back(x);
      f.call(P::kContext, x, "attachToContext");
    }
  }
  // Contexts run on their own threads, so their enqueues interleave. Each context object hears its
  // shapes before its first enqueue and after each change (guarantee 9); shapes change at random
  // inside the range [1..4]x3.
  std::vector<std::vector<int>> heard(nbContexts, std::vector<int>(g.layers.size(), 0));
  auto shapesText = [](int n) {
    const std::string d = std::to_string(n) + "x3";
    return d + ";" + d;
  };
  std::vector<int> left(nbContexts);
  for (int& n : left) n = pick(1, 4);
  while (true) {
    int remaining = 0;
    for (int n : left) remaining += n;
    if (remaining == 0) break;
    int c = pick(0, nbContexts - 1);
    if (left[c] == 0) continue;
    --left[c];
    for (size_t k = 0; k < g.layers.size(); ++k) {
      const int64_t x = g.layers[k].contexts[c];
      int& n = heard[c][k];
      if (n == 0 || pick(0, 3) == 0) {
        const int next = n == 0 ? pick(1, 4) : n % 4 + 1;  // a real change
        FlowEvent& e = f.call(P::kInfer, x, "onShapeChange", 0, c + 2);
        e.hasShapes = true;
        e.shapes = {shapesText(next), shapesText(1), shapesText(4)};
        n = next;
      }
      FlowEvent& e = f.call(P::kInfer, x, "enqueue", 0, c + 2);
      e.hasShapes = true;
      e.shapes.shapes = shapesText(n);
    }
  }
  for (int c = 0; c < nbContexts; ++c) {
    for (LayerIds& l : g.layers) {
      f.call(P::kTeardown, l.contexts[c], "detachFromContext");
      f.call(P::kTeardown, l.contexts[c], "destroy");
    }
  }
  for (LayerIds& l : g.layers) {
    f.call(P::kTeardown, l.engine, "terminate");
    f.call(P::kTeardown, l.engine, "destroy");
  }
  for (LayerIds& l : g.layers) f.call(P::kTeardown, l.definition, "destroy");
  return g;
}

}  // namespace kiln::testing
