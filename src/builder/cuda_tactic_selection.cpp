// The builder on a CUDA target: built-in steps choose among the CUDA backend's tactics, plugins
// and reformats are timed on device buffers, all with CUDA events on one builder stream (median
// after warm-up, like the CPU path in tactic_selection.cpp).
#include <algorithm>
#include <limits>

#include "builder/build_session.h"
#include "builder/tactic_choice.h"
#include "core/aligned_buffer.h"
#include "core/random_fill.h"

#if KILN_HAVE_CUDA
#include "backends/cuda/device.h"
#include "backends/cuda/kernel.h"
#include "backends/cuda/library_handles.h"
#endif

namespace kiln {

Status resolveBuildTarget(const std::string& target, BuildTarget& out) {
  out = BuildTarget();
  if (target == "cpu") return Status::ok();
  if (target != "cuda" && target.rfind("cuda:", 0) != 0) {
    return invalidArgument("target '" + target + "': expected \"cpu\", \"cuda\" or \"cuda:N\"");
  }
#if KILN_HAVE_CUDA
  int index = 0;
  if (target != "cuda") {
    const std::string n = target.substr(5);
    if (n.empty() || n.size() > 3 || n.find_first_not_of("0123456789") != std::string::npos) {
      return invalidArgument("target '" + target + "': the GPU ordinal must be a number");
    }
    index = std::stoi(n);
  }
  cuda::DeviceInfo info;
  Status s = cuda::getDeviceInfo(index, info);
  if (!s) return s.withContext("target '" + target + "'");
  KILN_RETURN_IF_ERROR(cuda::setDevice(index));
  out.device = DeviceKind::kCUDA;
  out.deviceIndex = index;
  out.planTarget = cuda::targetName(info);
  return Status::ok();
#else
  return unsupported("target '" + target +
                     "': this kiln was built without the CUDA backend (configure with "
                     "-DKILN_CUDA=ON where nvcc is installed)");
#endif
}

#if KILN_HAVE_CUDA

struct CudaTimingState {
  cuda::StreamHandle stream;
  cuda::LibraryHandles libraries;
};

namespace {

// A device copy of fresh random data (floats) or zeros (integers: indices, valid for any range).
Status randomDeviceTensor(const PluginTensorDesc& d, std::mt19937& rng, cuda::DeviceBuffer& out) {
  const size_t bytes = static_cast<size_t>(plan::tensorBytes(d.dims, d.type));
  KILN_RETURN_IF_ERROR(out.allocate(bytes, "a timing buffer"));
  AlignedBuffer host(bytes);
  if (isFloatType(d.type)) {
    fillRandom(host.data(), d.type, volume(d.dims), rng);
  } else if (bytes) {
    std::fill(host.data(), host.data() + bytes, uint8_t{0});
  }
  return cuda::copyToDevice(out.data(), host.data(), bytes);
}

template <typename Run>
Status medianEventMs(int warmup, int runs, void* stream, Run&& run, double& ms) {
  for (int i = 0; i < warmup; ++i) KILN_RETURN_IF_ERROR(run());
  cuda::EventTimer timer;
  std::vector<double> times;
  for (int i = 0; i < std::max(runs, 1); ++i) {
    KILN_RETURN_IF_ERROR(timer.start(stream));
    KILN_RETURN_IF_ERROR(run());
    double t = 0;
    KILN_RETURN_IF_ERROR(timer.stop(stream, t));
    times.push_back(t);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  ms = times[times.size() / 2];
  return Status::ok();
}

}  // namespace

Status BuildSession::cudaTiming(CudaTimingState*& state) {
  if (!cudaTiming_) {
    auto fresh = std::make_shared<CudaTimingState>();
    KILN_RETURN_IF_ERROR(fresh->stream.create());
    cudaTiming_ = std::move(fresh);
  }
  state = cudaTiming_.get();
  return Status::ok();
}

bool BuildSession::cudaAccepts(const KernelConfig& config) const {
  for (const cuda::Tactic& tactic : cuda::tacticsFor(config.type)) {
    std::string why;
    if (tactic.create(config, &why)) return true;
  }
  return false;
}

Status BuildSession::chooseCudaTactic(BuildStep& step) {
  KernelConfig config;
  config.type = step.type;
  config.params = step.params;
  for (int32_t i : step.inputs) {
    const BuildTensor& t = tensors_[i];
    config.inputs.push_back({t.dims, t.type, t.format, DeviceKind::kCUDA});
    config.constantInputs.push_back(t.constant ? t.constant->data() : nullptr);
  }
  for (int32_t o : step.outputs) {
    const BuildTensor& t = tensors_[o];
    config.outputs.push_back({t.dims, t.type, t.format, DeviceKind::kCUDA});
  }

  CudaTimingState* timing = nullptr;
  KILN_RETURN_IF_ERROR(cudaTiming(timing));
  std::vector<cuda::DeviceBuffer> inBuffers(config.inputs.size()),
      outBuffers(config.outputs.size());
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (size_t i = 0; i < config.inputs.size(); ++i) {
    const PluginTensorDesc& d = config.inputs[i];
    if (config.constantInputs[i]) {
      const size_t bytes = static_cast<size_t>(plan::tensorBytes(d.dims, d.type));
      KILN_RETURN_IF_ERROR(inBuffers[i].allocate(bytes, "a constant for timing"));
      KILN_RETURN_IF_ERROR(
          cuda::copyToDevice(inBuffers[i].data(), config.constantInputs[i], bytes));
    } else {
      KILN_RETURN_IF_ERROR(randomDeviceTensor(d, rng_, inBuffers[i]));
    }
    ins.push_back(inBuffers[i].data());
  }
  for (size_t o = 0; o < config.outputs.size(); ++o) {
    const PluginTensorDesc& d = config.outputs[o];
    KILN_RETURN_IF_ERROR(outBuffers[o].allocate(
        static_cast<size_t>(plan::tensorBytes(d.dims, d.type)), "a timing output"));
    outs.push_back(outBuffers[o].data());
  }

  cuda::RunContext ctx;
  ctx.stream = timing->stream.get();
  ctx.libraries = &timing->libraries;
  return chooseFastest(
      step, config, cuda::tacticsFor(step.type), "CUDA",
      [&](const cuda::Kernel& kernel, double& ms) {
        if (kernel.usesLibraries()) KILN_RETURN_IF_ERROR(timing->libraries.createAll());
        cuda::DeviceBuffer workspace;
        KILN_RETURN_IF_ERROR(workspace.allocate(kernel.workspaceSize(), "a timing workspace"));
        return medianEventMs(
            config_.warmupRuns, config_.timingRuns, ctx.stream,
            [&] { return kernel.run(ins.data(), outs.data(), workspace.data(), ctx); }, ms);
      });
}

Status BuildSession::reformatCostCuda(const KernelConfig& config, double& ms) {
  std::unique_ptr<cuda::Kernel> kernel;
  std::string why;
  for (const cuda::Tactic& tactic : cuda::tacticsFor(LayerType::kREFORMAT)) {
    if ((kernel = tactic.create(config, &why))) break;
  }
  if (!kernel) {
    ms = std::numeric_limits<double>::infinity();  // this combination cannot be connected
    return Status::ok();
  }
  CudaTimingState* timing = nullptr;
  KILN_RETURN_IF_ERROR(cudaTiming(timing));
  cuda::DeviceBuffer in, out, workspace;
  KILN_RETURN_IF_ERROR(randomDeviceTensor(config.inputs[0], rng_, in));
  KILN_RETURN_IF_ERROR(out.allocate(
      static_cast<size_t>(plan::tensorBytes(config.outputs[0].dims, config.outputs[0].type)),
      "a reformat timing output"));
  KILN_RETURN_IF_ERROR(workspace.allocate(kernel->workspaceSize(), "a timing workspace"));
  const void* ins[] = {in.data()};
  void* outs[] = {out.data()};
  cuda::RunContext ctx;
  ctx.stream = timing->stream.get();
  ctx.libraries = &timing->libraries;
  return medianEventMs(
      config_.warmupRuns, config_.timingRuns, ctx.stream,
      [&] { return kernel->run(ins, outs, workspace.data(), ctx); }, ms);
}

Status BuildSession::timePluginEnqueueCuda(const GraphNode& node, PluginObject& object,
                                           const std::vector<PluginTensorDesc>& inputs,
                                           const std::vector<PluginTensorDesc>& outputs,
                                           uint64_t workspace, double& ms) {
  CudaTimingState* timing = nullptr;
  KILN_RETURN_IF_ERROR(cudaTiming(timing));
  std::vector<cuda::DeviceBuffer> inBuffers(inputs.size()), outBuffers(outputs.size());
  std::vector<const void*> inPtrs;
  std::vector<void*> outPtrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const GraphTensor& t = graph_.tensors[node.inputs[i]];
    if (t.constant && t.shape.type == inputs[i].type && inputs[i].format == TensorFormat::kLINEAR) {
      KILN_RETURN_IF_ERROR(inBuffers[i].allocate(t.constant->size(), "a plugin constant"));
      KILN_RETURN_IF_ERROR(
          cuda::copyToDevice(inBuffers[i].data(), t.constant->data(), t.constant->size()));
    } else {
      KILN_RETURN_IF_ERROR(randomDeviceTensor(inputs[i], rng_, inBuffers[i]));
    }
    inPtrs.push_back(inBuffers[i].data());
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    KILN_RETURN_IF_ERROR(outBuffers[o].allocate(
        static_cast<size_t>(plan::tensorBytes(outputs[o].dims, outputs[o].type)),
        "a plugin timing output"));
    outPtrs.push_back(outBuffers[o].data());
  }
  cuda::DeviceBuffer scratch;
  KILN_RETURN_IF_ERROR(scratch.allocate(workspace, "a plugin workspace"));
  void* stream = timing->stream.get();
  return medianEventMs(
      config_.warmupRuns, config_.timingRuns, stream,
      [&] {
        return object.enqueue(inputs.data(), outputs.data(), inPtrs.data(), outPtrs.data(),
                              scratch.data(), stream);
      },
      ms);
}

#else  // no CUDA backend in this build: resolveBuildTarget never yields a CUDA target

struct CudaTimingState {};

Status BuildSession::cudaTiming(CudaTimingState*& state) {
  state = nullptr;
  return unsupported("no CUDA backend in this build");
}
bool BuildSession::cudaAccepts(const KernelConfig&) const { return false; }
Status BuildSession::chooseCudaTactic(BuildStep&) {
  return unsupported("no CUDA backend in this build");
}
Status BuildSession::reformatCostCuda(const KernelConfig&, double&) {
  return unsupported("no CUDA backend in this build");
}
Status BuildSession::timePluginEnqueueCuda(const GraphNode&, PluginObject&,
                                           const std::vector<PluginTensorDesc>&,
                                           const std::vector<PluginTensorDesc>&, uint64_t,
                                           double&) {
  return unsupported("no CUDA backend in this build");
}

#endif

}  // namespace kiln
