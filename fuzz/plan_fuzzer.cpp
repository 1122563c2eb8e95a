// libFuzzer target for the plan reader: any bytes must give a Status, never a crash, a leak or an
// out-of-bounds read. Whatever it accepts must pass validation and survive a write/read round trip.
//
// Build (clang, from the repository root):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -DKILN_VERSION_STRING='"fuzz"' \
//     -Iinclude -Isrc fuzz/plan_fuzzer.cpp src/runtime/plan_reader.cpp \
//     src/builder/plan_writer.cpp src/core/*.cpp -o plan_fuzzer
// Seed it with plans from the tests or `kiln build`; with verifyChecksum=false the mutations reach
// the structural checks behind the checksum.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/plan.h"
#include "runtime/plan_validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (bool verifyChecksum : {false, true}) {
    kiln::plan::Plan plan;
    if (!kiln::plan::readPlan(data, size, plan, verifyChecksum).isOk()) continue;
    if (!kiln::plan::validatePlan(plan).isOk()) __builtin_trap();
    std::vector<uint8_t> bytes;
    if (!kiln::plan::writePlan(plan, bytes).isOk()) __builtin_trap();
    kiln::plan::Plan back;
    if (!kiln::plan::readPlan(bytes.data(), bytes.size(), back).isOk()) __builtin_trap();
  }
  return 0;
}
