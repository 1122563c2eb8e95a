// The demo detector's plan, built once per test binary (with kiln's own plugins registered).
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::testing {

const std::vector<uint8_t>& demoPlan();

}  // namespace kiln::testing
