// The CUDA side of the plugin conformance harness: device buffers, one stream per context, and
// CUDA graph capture of an enqueue. Without CUDA every entry point reports why it cannot run.
#include <atomic>
#include <thread>

#include "plugin_check/check_internal.h"

#if KILN_HAVE_CUDA
#include "backends/cuda/device.h"
#include "backends/cuda/graph.h"
#endif

namespace kiln::check {

#if KILN_HAVE_CUDA
namespace {

// Device memory of one context's inputs and outputs (kiln's own RAII buffers).
struct DeviceBuffers {
  std::vector<cuda::DeviceBuffer> inputs, outputs;
};

// Bytes to allocate for a tensor: never 0, so that every tensor has a distinct valid address.
size_t allocBytes(const HostTensor& t) {
  const int64_t n = plan::tensorBytes(t.dims, t.type);
  return n > 0 ? static_cast<size_t>(n) : 256;
}

Status setUpContext(IEngine& engine, const std::vector<HostTensor>& inputs,
                    const std::vector<HostTensor>& outputShapes,
                    std::unique_ptr<IExecutionContext>& context, DeviceBuffers& buffers) {
  KILN_RETURN_IF_ERROR(engine.createExecutionContext(context));
  buffers.inputs.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor& t = inputs[i];
    KILN_RETURN_IF_ERROR(buffers.inputs[i].allocate(allocBytes(t), "input " + t.name));
    KILN_RETURN_IF_ERROR(
        cuda::copyToDevice(buffers.inputs[i].data(), t.bytes.data(), t.bytes.size()));
    KILN_RETURN_IF_ERROR(context->setTensorAddress(t.name.c_str(), buffers.inputs[i].data()));
  }
  buffers.outputs.resize(outputShapes.size());
  for (size_t o = 0; o < outputShapes.size(); ++o) {
    const HostTensor& t = outputShapes[o];
    KILN_RETURN_IF_ERROR(buffers.outputs[o].allocate(allocBytes(t), "output " + t.name));
    KILN_RETURN_IF_ERROR(context->setTensorAddress(t.name.c_str(), buffers.outputs[o].data()));
  }
  return Status::ok();
}

// Fills the outputs with 0xFF (NaN for floats) so that an output the plugin never writes shows.
Status poisonOutputs(const DeviceBuffers& buffers, void* stream) {
  for (const cuda::DeviceBuffer& b : buffers.outputs)
    KILN_RETURN_IF_ERROR(cuda::fillBytesAsync(b.data(), 0xFF, b.size(), stream));
  return Status::ok();
}

Status readOutputs(const std::vector<HostTensor>& outputShapes, const DeviceBuffers& buffers,
                   void* stream, std::vector<std::vector<uint8_t>>& out) {
  out.assign(outputShapes.size(), {});
  for (size_t o = 0; o < outputShapes.size(); ++o) {
    const int64_t n = plan::tensorBytes(outputShapes[o].dims, outputShapes[o].type);
    out[o].resize(n > 0 ? static_cast<size_t>(n) : 0);
    KILN_RETURN_IF_ERROR(
        cuda::copyAsync(out[o].data(), buffers.outputs[o].data(), out[o].size(), stream));
  }
  return cuda::synchronize(stream);
}

}  // namespace

bool cudaAvailable(int device, std::string& why) {
  const int count = cuda::deviceCount();
  if (count == 0) {
    why = "no CUDA GPU: " + cuda::noDeviceReason();
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
  KILN_RETURN_IF_ERROR(cuda::setDevice(device));
  std::vector<std::unique_ptr<IExecutionContext>> ctx(contexts);
  std::vector<DeviceBuffers> buffers(contexts);
  std::vector<cuda::StreamHandle> streams(contexts);
  for (int c = 0; c < contexts; ++c) {
    KILN_RETURN_IF_ERROR(setUpContext(engine, inputs, outputShapes, ctx[c], buffers[c]));
    KILN_RETURN_IF_ERROR(streams[c].create());
  }
  outputs.assign(contexts, RunOutputs(iterations));
  std::vector<Status> results(contexts);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < contexts; ++c) {
    threads.emplace_back([&, c] {
      Status s = cuda::setDevice(device);
      ready.fetch_add(1);
      while (ready.load() < contexts) std::this_thread::yield();  // start together
      void* stream = streams[c].get();
      for (int i = 0; s && i < iterations; ++i) {
        s = poisonOutputs(buffers[c], stream);
        if (s) s = ctx[c]->enqueue(stream);
        if (s) s = readOutputs(outputShapes, buffers[c], stream, outputs[c][i]);
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
  KILN_RETURN_IF_ERROR(cuda::setDevice(device));
  std::unique_ptr<IExecutionContext> ctx;
  DeviceBuffers buffers;
  cuda::StreamHandle stream;
  KILN_RETURN_IF_ERROR(setUpContext(engine, inputs, outputShapes, ctx, buffers));
  KILN_RETURN_IF_ERROR(stream.create());
  void* s = stream.get();
  // A direct enqueue first (the first enqueue may set things up lazily; capture comes after).
  KILN_RETURN_IF_ERROR(poisonOutputs(buffers, s));
  KILN_RETURN_IF_ERROR(ctx->enqueue(s).withContext("direct enqueue"));
  KILN_RETURN_IF_ERROR(readOutputs(outputShapes, buffers, s, directOut));
  KILN_RETURN_IF_ERROR(poisonOutputs(buffers, s));
  KILN_RETURN_IF_ERROR(cuda::synchronize(s));

  cuda::CapturedGraph graph;
  KILN_RETURN_IF_ERROR(graph.capture(s, [&] { return ctx->enqueue(s); }));
  // Replay twice: a graph must be replayable, not only launchable once.
  for (int r = 0; r < 2; ++r) {
    KILN_RETURN_IF_ERROR(poisonOutputs(buffers, s));
    KILN_RETURN_IF_ERROR(graph.launch(s));
    KILN_RETURN_IF_ERROR(readOutputs(outputShapes, buffers, s, graphOut));
  }
  return Status::ok();
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
