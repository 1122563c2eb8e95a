// Which backends this build has: the one place that knows (KILN_HAVE_CUDA is decided by CMake).
#include <string>
#include <vector>

#include "backends/backend.h"

namespace kiln {

#if KILN_HAVE_CUDA
const Backend& cudaBackend();  // backends/cuda/cuda_backend.cpp
#endif

std::span<const Backend* const> allBackends() {
  static const std::vector<const Backend*> list = {
    &cpuBackend(),
#if KILN_HAVE_CUDA
    &cudaBackend(),
#endif
  };
  return list;
}

const Backend* backendFor(DeviceKind device) {
  for (const Backend* b : allBackends())
    if (b->getKind() == device) return b;
  return nullptr;
}

int32_t deviceCount(DeviceKind kind, std::string* why) {
  const Backend* backend = backendFor(kind);
  if (!backend) {
    if (why) *why = "this kiln was built without the CUDA backend (KILN_CUDA=OFF)";
    return 0;
  }
  return backend->deviceCount(why);
}

Status backendForBuildTarget(const std::string& target, const Backend*& backend) {
  for (const Backend* b : allBackends()) {
    if (b->buildsFor(target)) {
      backend = b;
      return Status::ok();
    }
  }
  if (target == "cuda" || target.rfind("cuda:", 0) == 0)
    return unsupported("target '" + target +
                       "': this kiln was built without the CUDA backend (configure with "
                       "-DKILN_CUDA=ON where nvcc is installed)");
  return invalidArgument("target '" + target + "': expected \"cpu\", \"cuda\" or \"cuda:N\"");
}

Status backendForPlanTarget(const std::string& planTarget, const Backend*& backend) {
  for (const Backend* b : allBackends()) {
    if (b->runsPlanTarget(planTarget)) {
      backend = b;
      return Status::ok();
    }
  }
  if (planTarget.rfind("cuda:", 0) == 0)
    return unsupported("the plan targets '" + planTarget +
                       "' but this kiln was built without the CUDA backend; rebuild the plan for "
                       "the CPU or use a kiln built with CUDA");
  return unsupported("the plan targets '" + planTarget +
                     "', which this runtime does not know; rebuild it for 'cpu' or 'cuda'");
}

}  // namespace kiln
