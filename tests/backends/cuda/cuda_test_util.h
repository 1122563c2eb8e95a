// Helpers for tests that run the CUDA backend: skipping without a GPU, device copies of host data.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cuda/device.h"

#define KILN_SKIP_WITHOUT_GPU()                                          \
  do {                                                                   \
    if (::kiln::cuda::deviceCount() == 0)                                \
      GTEST_SKIP() << "no CUDA GPU: " << ::kiln::cuda::noDeviceReason(); \
  } while (0)
