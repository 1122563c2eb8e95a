// Running engines for the plugin conformance harness, on any backend through the engine's device
// (kiln/device.h): one stream and its own copies of the inputs and outputs per context, all
// contexts enqueuing at once from their own threads, and graph capture of an enqueue (CUDA).
#include <algorithm>
#include <atomic>
#include <thread>

#include "plugin_check/check_internal.h"

namespace kiln::check {
namespace {

// Device memory of one context's inputs and outputs.
struct DeviceBuffers {
  std::vector<std::unique_ptr<IDeviceBuffer>> inputs, outputs;
};

// Bytes to allocate for a tensor: never 0, so that every tensor has a distinct valid address.
size_t allocBytes(const HostTensor& t) {
  const int64_t n = plan::tensorBytes(t.dims, t.type);
  return n > 0 ? static_cast<size_t>(n) : 256;
}

Status setUpContext(IEngine& engine, const std::vector<HostTensor>& inputs,
                    const std::vector<HostTensor>& outputShapes,
                    std::unique_ptr<IExecutionContext>& context, DeviceBuffers& buffers) {
  const IDevice& device = engine.getDevice();
  KILN_RETURN_IF_ERROR(engine.createExecutionContext(context));
  buffers.inputs.resize(inputs.size());
  // Each context reads its own copy of the inputs: a plugin writing into its inputs shows as a
  // disagreement instead of racing.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor& t = inputs[i];
    const std::string what = "input " + t.name;
    // A static plan's inputs accept their own dims; a profile plan's need them set.
    KILN_RETURN_IF_ERROR(context->setInputShape(t.name.c_str(), t.dims));
    KILN_RETURN_IF_ERROR(device.allocate(allocBytes(t), what.c_str(), buffers.inputs[i]));
    KILN_RETURN_IF_ERROR(
        device.copyFromHost(buffers.inputs[i]->data(), t.bytes.data(), t.bytes.size()));
    KILN_RETURN_IF_ERROR(context->setTensorAddress(t.name.c_str(), buffers.inputs[i]->data()));
  }
  buffers.outputs.resize(outputShapes.size());
  for (size_t o = 0; o < outputShapes.size(); ++o) {
    const HostTensor& t = outputShapes[o];
    const std::string what = "output " + t.name;
    KILN_RETURN_IF_ERROR(device.allocate(allocBytes(t), what.c_str(), buffers.outputs[o]));
    KILN_RETURN_IF_ERROR(context->setTensorAddress(t.name.c_str(), buffers.outputs[o]->data()));
  }
  return Status::ok();
}

// Fills the outputs with 0xFF (NaN for floats) so that an output the plugin never writes shows.
Status poisonOutputs(const IDevice& device, const DeviceBuffers& buffers, Stream stream) {
  for (const auto& b : buffers.outputs)
    KILN_RETURN_IF_ERROR(device.fill(b->data(), 0xFF, b->size(), stream));
  return Status::ok();
}

// Waits for the stream, then copies the outputs back.
Status readOutputs(const IDevice& device, const std::vector<HostTensor>& outputShapes,
                   const DeviceBuffers& buffers, IDeviceStream& stream,
                   std::vector<std::vector<uint8_t>>& out) {
  KILN_RETURN_IF_ERROR(stream.synchronize());
  out.assign(outputShapes.size(), {});
  for (size_t o = 0; o < outputShapes.size(); ++o) {
    const int64_t n = plan::tensorBytes(outputShapes[o].dims, outputShapes[o].type);
    out[o].resize(n > 0 ? static_cast<size_t>(n) : 0);
    KILN_RETURN_IF_ERROR(
        device.copyToHost(out[o].data(), buffers.outputs[o]->data(), out[o].size()));
  }
  return Status::ok();
}

}  // namespace

bool deviceAvailable(DeviceKind kind, int ordinal, std::string& why) {
  const int32_t count = deviceCount(kind, &why);
  if (count == 0) return false;
  if (ordinal < 0 || ordinal >= count) {
    why =
        "no CUDA device " + std::to_string(ordinal) + " (there are " + std::to_string(count) + ")";
    return false;
  }
  return true;
}

Status runContexts(IEngine& engine, const std::vector<HostTensor>& inputs,
                   const std::vector<HostTensor>& outputShapes, int contexts, int iterations,
                   std::vector<RunOutputs>& outputs) {
  const IDevice& device = engine.getDevice();
  std::vector<std::unique_ptr<IExecutionContext>> ctx(contexts);
  std::vector<DeviceBuffers> buffers(contexts);
  std::vector<std::unique_ptr<IDeviceStream>> streams(contexts);
  for (int c = 0; c < contexts; ++c) {
    KILN_RETURN_IF_ERROR(setUpContext(engine, inputs, outputShapes, ctx[c], buffers[c]));
    KILN_RETURN_IF_ERROR(device.createStream(streams[c]));
  }
  outputs.assign(contexts, RunOutputs(iterations));
  std::vector<Status> results(contexts);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < contexts; ++c) {
    threads.emplace_back([&, c] {
      ready.fetch_add(1);
      while (ready.load() < contexts) std::this_thread::yield();  // enqueue concurrently
      const Stream stream = streams[c]->get();
      Status s;
      for (int i = 0; s && i < iterations; ++i) {
        s = poisonOutputs(device, buffers[c], stream);
        if (s) s = ctx[c]->enqueue(stream);
        if (s) s = readOutputs(device, outputShapes, buffers[c], *streams[c], outputs[c][i]);
      }
      results[c] = s;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int c = 0; c < contexts; ++c)
    KILN_RETURN_IF_ERROR(results[c].withContext("context " + std::to_string(c)));
  return Status::ok();
}

Status runShapes(IEngine& engine, const std::vector<std::vector<HostTensor>>& inputs,
                 const std::vector<std::vector<HostTensor>>& outputShapes,
                 std::vector<std::vector<std::vector<uint8_t>>>& outputs) {
  const IDevice& device = engine.getDevice();
  std::unique_ptr<IExecutionContext> ctx;
  KILN_RETURN_IF_ERROR(engine.createExecutionContext(ctx));
  std::unique_ptr<IDeviceStream> stream;
  KILN_RETURN_IF_ERROR(device.createStream(stream));
  outputs.assign(inputs.size(), {});
  for (size_t k = 0; k < inputs.size(); ++k) {
    DeviceBuffers buffers;
    buffers.inputs.resize(inputs[k].size());
    for (size_t i = 0; i < inputs[k].size(); ++i) {
      const HostTensor& t = inputs[k][i];
      KILN_RETURN_IF_ERROR(ctx->setInputShape(t.name.c_str(), t.dims));
      KILN_RETURN_IF_ERROR(device.allocate(allocBytes(t), t.name.c_str(), buffers.inputs[i]));
      KILN_RETURN_IF_ERROR(
          device.copyFromHost(buffers.inputs[i]->data(), t.bytes.data(), t.bytes.size()));
      KILN_RETURN_IF_ERROR(ctx->setTensorAddress(t.name.c_str(), buffers.inputs[i]->data()));
    }
    buffers.outputs.resize(outputShapes[k].size());
    for (size_t o = 0; o < outputShapes[k].size(); ++o) {
      const HostTensor& t = outputShapes[k][o];
      const Dims got = ctx->getTensorShape(t.name.c_str());
      if (got != t.dims)
        return internalError("output " + t.name + " has another shape in the profile plan");
      KILN_RETURN_IF_ERROR(device.allocate(allocBytes(t), t.name.c_str(), buffers.outputs[o]));
      KILN_RETURN_IF_ERROR(ctx->setTensorAddress(t.name.c_str(), buffers.outputs[o]->data()));
    }
    const std::string at = "shape " + std::to_string(k);
    KILN_RETURN_IF_ERROR(poisonOutputs(device, buffers, stream->get()));
    KILN_RETURN_IF_ERROR(ctx->enqueue(stream->get()).withContext(at));
    KILN_RETURN_IF_ERROR(readOutputs(device, outputShapes[k], buffers, *stream, outputs[k]));
  }
  return Status::ok();
}

Status runGraph(IEngine& engine, const std::vector<HostTensor>& inputs,
                const std::vector<HostTensor>& outputShapes,
                std::vector<std::vector<uint8_t>>& directOut,
                std::vector<std::vector<uint8_t>>& graphOut) {
  const IDevice& device = engine.getDevice();
  std::unique_ptr<IExecutionContext> ctx;
  DeviceBuffers buffers;
  std::unique_ptr<IDeviceStream> stream;
  KILN_RETURN_IF_ERROR(setUpContext(engine, inputs, outputShapes, ctx, buffers));
  KILN_RETURN_IF_ERROR(device.createStream(stream));
  const Stream s = stream->get();
  // A direct enqueue first (the first enqueue may set things up lazily; capture comes after).
  KILN_RETURN_IF_ERROR(poisonOutputs(device, buffers, s));
  KILN_RETURN_IF_ERROR(ctx->enqueue(s).withContext("direct enqueue"));
  KILN_RETURN_IF_ERROR(readOutputs(device, outputShapes, buffers, *stream, directOut));
  KILN_RETURN_IF_ERROR(poisonOutputs(device, buffers, s));
  KILN_RETURN_IF_ERROR(stream->synchronize());

  std::unique_ptr<IDeviceGraph> graph;
  KILN_RETURN_IF_ERROR(device.captureGraph(
      s, [&] { return ctx->enqueue(s); }, graph));
  // Replay twice: a graph must be replayable, not only launchable once.
  for (int r = 0; r < 2; ++r) {
    KILN_RETURN_IF_ERROR(poisonOutputs(device, buffers, s));
    KILN_RETURN_IF_ERROR(graph->launch(s));
    KILN_RETURN_IF_ERROR(readOutputs(device, outputShapes, buffers, *stream, graphOut));
  }
  return Status::ok();
}

}  // namespace kiln::check
