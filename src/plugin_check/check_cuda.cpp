// The CUDA side of the plugin conformance harness: device buffers, one stream per context, and
// CUDA graph capture of an enqueue. Without CUDA every entry point reports why it cannot run.
#include <atomic>
#include <thread>

#include "plugin_check/check_internal.h"

#if KILN_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kiln::check {

#if KILN_HAVE_CUDA
namespace {

Status cudaOk(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  return deviceError(std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

// Device memory of one context: inputs and outputs, freed at scope exit.
struct DeviceBuffers {
  std::vector<void*> inputs, outputs;
  ~DeviceBuffers() {
    for (void* p : inputs) cudaFree(p);
    for (void* p : outputs) cudaFree(p);
  }
};

// Bytes to allocate for a tensor: never 0, so that every tensor has a distinct valid address.
size_t allocBytes(const HostTensor& t) {
  const int64_t n = tensorBytes(t.dims, t.type);
  return n > 0 ? static_cast<size_t>(n) : 256;
}

Status setUpContext(IEngine& engine, const std::vector<HostTensor>& inputs,
                    const std::vector<HostTensor>& outputShapes,
                    std::unique_ptr<IExecutionContext>& context, DeviceBuffers& buffers) {
  KILN_RETURN_IF_ERROR(engine.createExecutionContext(context));
  for (const HostTensor& t : inputs) {
    void* p = nullptr;
    KILN_RETURN_IF_ERROR(cudaOk(cudaMalloc(&p, allocBytes(t)), "cudaMalloc (input)"));
    buffers.inputs.push_back(p);
    if (!t.bytes.empty())
      KILN_RETURN_IF_ERROR(
          cudaOk(cudaMemcpy(p, t.bytes.data(), t.bytes.size(), cudaMemcpyHostToDevice),
                 "cudaMemcpy (input)"));
    KILN_RETURN_IF_ERROR(context->setTensorAddress(t.name.c_str(), p));
  }
  for (const HostTensor& t : outputShapes) {
    void* p = nullptr;
    KILN_RETURN_IF_ERROR(cudaOk(cudaMalloc(&p, allocBytes(t)), "cudaMalloc (output)"));
    buffers.outputs.push_back(p);
    KILN_RETURN_IF_ERROR(context->setTensorAddress(t.name.c_str(), p));
  }
  return Status::ok();
}

// Fills the outputs with 0xFF (NaN for floats) so that an output the plugin never writes shows.
Status poisonOutputs(const std::vector<HostTensor>& outputShapes, const DeviceBuffers& buffers,
                     cudaStream_t stream) {
  for (size_t o = 0; o < outputShapes.size(); ++o)
    KILN_RETURN_IF_ERROR(
        cudaOk(cudaMemsetAsync(buffers.outputs[o], 0xFF, allocBytes(outputShapes[o]), stream),
               "cudaMemsetAsync"));
  return Status::ok();
}

Status readOutputs(const std::vector<HostTensor>& outputShapes, const DeviceBuffers& buffers,
                   cudaStream_t stream, std::vector<std::vector<uint8_t>>& out) {
  out.assign(outputShapes.size(), {});
  for (size_t o = 0; o < outputShapes.size(); ++o) {
    const int64_t n = tensorBytes(outputShapes[o].dims, outputShapes[o].type);
    out[o].resize(n > 0 ? static_cast<size_t>(n) : 0);
    if (!out[o].empty())
      KILN_RETURN_IF_ERROR(cudaOk(cudaMemcpyAsync(out[o].data(), buffers.outputs[o], out[o].size(),
                                                  cudaMemcpyDeviceToHost, stream),
                                  "cudaMemcpyAsync (output)"));
  }
  return cudaOk(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

struct StreamHolder {
  cudaStream_t stream = nullptr;
  ~StreamHolder() {
    if (stream) cudaStreamDestroy(stream);
  }
};

}  // namespace

bool cudaAvailable(int device, std::string& why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    why = std::string("no CUDA GPU: cudaGetDeviceCount: ") + cudaGetErrorString(e);
    return false;
  }
  if (count == 0) {
    why = "no CUDA GPU: cudaGetDeviceCount returned 0";
    return false;
  }
  if (device < 0 || device >= count) {
    why = "no CUDA device " + std::to_string(device) + " (there are " + std::to_string(count) + ")";
    return false;
  }
  return true;
}

Status runContextsCuda(int device, IEngine& engine, const std::vector<HostTensor>& inputs,
                       const std::vector<HostTensor>& outputShapes, int contexts, int iterations,
                       std::vector<RunOutputs>& outputs) {
  KILN_RETURN_IF_ERROR(cudaOk(cudaSetDevice(device), "cudaSetDevice"));
  std::vector<std::unique_ptr<IExecutionContext>> ctx(contexts);
  std::vector<DeviceBuffers> buffers(contexts);
  std::vector<StreamHolder> streams(contexts);
  for (int c = 0; c < contexts; ++c) {
    KILN_RETURN_IF_ERROR(setUpContext(engine, inputs, outputShapes, ctx[c], buffers[c]));
    KILN_RETURN_IF_ERROR(cudaOk(
        cudaStreamCreateWithFlags(&streams[c].stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  }
  outputs.assign(contexts, RunOutputs(iterations));
  std::vector<Status> results(contexts);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < contexts; ++c) {
    threads.emplace_back([&, c] {
      Status s = cudaOk(cudaSetDevice(device), "cudaSetDevice");
      ready.fetch_add(1);
      while (ready.load() < contexts) std::this_thread::yield();  // start together
      for (int i = 0; s && i < iterations; ++i) {
        s = poisonOutputs(outputShapes, buffers[c], streams[c].stream);
        if (s) s = ctx[c]->enqueue(streams[c].stream);
        if (s) s = readOutputs(outputShapes, buffers[c], streams[c].stream, outputs[c][i]);
      }
      results[c] = s;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int c = 0; c < contexts; ++c)
    KILN_RETURN_IF_ERROR(results[c].withContext("context " + std::to_string(c)));
  return Status::ok();
}

Status runCudaGraph(int device, IEngine& engine, const std::vector<HostTensor>& inputs,
                    const std::vector<HostTensor>& outputShapes,
                    std::vector<std::vector<uint8_t>>& directOut,
                    std::vector<std::vector<uint8_t>>& graphOut) {
  KILN_RETURN_IF_ERROR(cudaOk(cudaSetDevice(device), "cudaSetDevice"));
  std::unique_ptr<IExecutionContext> ctx;
  DeviceBuffers buffers;
  StreamHolder stream;
  KILN_RETURN_IF_ERROR(setUpContext(engine, inputs, outputShapes, ctx, buffers));
  KILN_RETURN_IF_ERROR(
      cudaOk(cudaStreamCreateWithFlags(&stream.stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  // A direct enqueue first (the first enqueue may set things up lazily; capture comes after).
  KILN_RETURN_IF_ERROR(poisonOutputs(outputShapes, buffers, stream.stream));
  KILN_RETURN_IF_ERROR(ctx->enqueue(stream.stream).withContext("direct enqueue"));
  KILN_RETURN_IF_ERROR(readOutputs(outputShapes, buffers, stream.stream, directOut));
  KILN_RETURN_IF_ERROR(poisonOutputs(outputShapes, buffers, stream.stream));
  KILN_RETURN_IF_ERROR(cudaOk(cudaStreamSynchronize(stream.stream), "cudaStreamSynchronize"));

  KILN_RETURN_IF_ERROR(
      cudaOk(cudaStreamBeginCapture(stream.stream, cudaStreamCaptureModeThreadLocal),
             "cudaStreamBeginCapture"));
  Status enqueued = ctx->enqueue(stream.stream);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream.stream, &graph);
  if (!enqueued) {
    if (graph) cudaGraphDestroy(graph);
    return enqueued.withContext("enqueue while capturing a CUDA graph");
  }
  if (ended != cudaSuccess) {
    cudaGetLastError();  // clear a sticky capture error
    return cudaOk(ended,
                  "cudaStreamEndCapture (the enqueue did something a graph cannot hold, "
                  "such as a synchronous copy or a device allocation)");
  }
  cudaGraphExec_t exec = nullptr;
  Status s = cudaOk(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  // Replay twice: a graph must be replayable, not only launchable once.
  for (int r = 0; s && r < 2; ++r) {
    s = poisonOutputs(outputShapes, buffers, stream.stream);
    if (s) s = cudaOk(cudaGraphLaunch(exec, stream.stream), "cudaGraphLaunch");
    if (s) s = readOutputs(outputShapes, buffers, stream.stream, graphOut);
  }
  if (exec) cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return s;
}

#else  // !KILN_HAVE_CUDA

bool cudaAvailable(int, std::string& why) {
  why = "kiln was built without CUDA (KILN_CUDA=OFF)";
  return false;
}

Status runContextsCuda(int, IEngine&, const std::vector<HostTensor>&,
                       const std::vector<HostTensor>&, int, int, std::vector<RunOutputs>&) {
  return unsupported("kiln was built without CUDA");
}

Status runCudaGraph(int, IEngine&, const std::vector<HostTensor>&, const std::vector<HostTensor>&,
                    std::vector<std::vector<uint8_t>>&, std::vector<std::vector<uint8_t>>&) {
  return unsupported("kiln was built without CUDA");
}

#endif

}  // namespace kiln::check
