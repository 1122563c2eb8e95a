// A plugin that uses every per-context resource a CUDA context offers: in attachToContext() it
// takes persistent memory from the context's stream-ordered pool and the context's cuBLAS
// handle; enqueue() copies its input into that memory and scales it by 2 with cuBLAS on the
// caller's stream. Tests read what each context object was given.
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include "kiln/plugin.h"

namespace kiln::testing {

struct ResourceProbeRecord {
  DeviceKind device = DeviceKind::kCPU;
  int32_t deviceIndex = -2;
  void* persistent = nullptr;
  void* cublas = nullptr;
};

// What every attachToContext() saw, in order (reset by the test).
std::vector<ResourceProbeRecord> resourceProbeRecords();
void clearResourceProbeRecords();

IPluginCreator& resourceProbeCreator();

}  // namespace kiln::testing
