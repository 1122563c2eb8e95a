// A probe plugin for lifecycle tests: y = x + offset on fp32 tensors, with a failure that can be
// injected into any one method, and ways to break the contract the engine must catch (a clone
// that drops the namespace, a serialize() that does not round-trip).
//
// Fields: offset (float32), fail_at (string: a method name, or "" for none), fail_deserialized
// (int32: 1 = fail only on objects that come from deserializePlugin and their clones, so a build
// succeeds and the load or inference fails), drop_namespace_on_clone (int32), bad_round_trip
// (int32). Failure settings are serialized, so they survive the plan.
#pragma once

#include <atomic>

#include "kiln/plugin.h"

namespace kiln::testing {

class ProbeCreator final : public IPluginCreator {
 public:
  const char* getPluginName() const noexcept override { return "Probe"; }
  const char* getPluginVersion() const noexcept override { return "2"; }
  const PluginFieldCollection* getFieldNames() noexcept override;
  IPlugin* createPlugin(const char* layerName,
                        const PluginFieldCollection* fields) noexcept override;
  IPlugin* deserializePlugin(const char* layerName, const void* data,
                             size_t length) noexcept override;
  const char* getLastError() const noexcept override { return error_; }

 private:
  const char* error_ = "";
};

// Objects alive right now, and every object the probe ever made: a leak shows as live != 0 after
// teardown, independently of the trace.
extern std::atomic<int> gProbeLiveObjects;
extern std::atomic<int> gProbeInitializedObjects;  // initialize() succeeded, terminate() not yet

ProbeCreator& probeCreator();
// The namespace the tests register the probe under.
constexpr const char* kProbeNamespace = "kiln.test";

}  // namespace kiln::testing
