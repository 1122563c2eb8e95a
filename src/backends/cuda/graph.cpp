#include "backends/cuda/graph.h"

#include "backends/cuda/cuda_check.h"

namespace kiln::cuda {

CapturedGraph::~CapturedGraph() {
  if (exec_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
  if (graph_) cudaGraphDestroy(static_cast<cudaGraph_t>(graph_));
}

Status CapturedGraph::capture(void* stream, const std::function<Status()>& enqueue) {
  if (!stream) return invalidArgument("CUDA graph capture needs a created stream, not stream 0");
  auto s = static_cast<cudaStream_t>(stream);
  // Thread-local mode: other threads may keep using CUDA (other contexts) while this one captures.
  KILN_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  Status body = enqueue();
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(s, &graph);
  if (!body) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    return body.withContext("while capturing a CUDA graph");
  }
  if (ended != cudaSuccess) return cudaFailure(ended, "cudaStreamEndCapture", __FILE__, __LINE__);
  graph_ = graph;
  cudaGraphExec_t exec = nullptr;
  KILN_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  exec_ = exec;
  return Status::ok();
}

Status CapturedGraph::launch(void* stream) const {
  if (!exec_) return invalidArgument("no CUDA graph was captured");
  KILN_CUDA_CHECK(
      cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

bool isCapturing(void* stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status) != cudaSuccess) {
    // The legacy stream during another thread's global capture: not ours to capture either.
    cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace kiln::cuda
