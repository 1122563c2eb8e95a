// Capturing work enqueued on a stream into a CUDA graph and replaying it (kiln run --cuda-graph,
// the plugin harness, tests). No CUDA header here.
#pragma once

#include <functional>

#include "backends/cuda/non_copyable.h"
#include "kiln/status.h"

namespace kiln::cuda {

class CapturedGraph : NonCopyable {
 public:
  ~CapturedGraph();

  // Captures what `enqueue` puts on `stream` (which must not be the legacy default stream) and
  // instantiates it. A failure inside `enqueue` ends the capture and is returned.
  Status capture(void* stream, const std::function<Status()>& enqueue);
  // Launches the instantiated graph on `stream`.
  Status launch(void* stream) const;

 private:
  void* graph_ = nullptr;  // cudaGraph_t
  void* exec_ = nullptr;   // cudaGraphExec_t
};

// Whether `stream` is being captured (by anyone): work enqueued on it is recorded, not run.
// False for stream 0 unless a global capture makes the legacy stream illegal to use.
bool isCapturing(void* stream);

}  // namespace kiln::cuda
