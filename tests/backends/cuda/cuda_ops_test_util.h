// One harness that checks every built-in layer of the CUDA backend against the CPU reference
// (ggml's test-backend-ops is the model): for each case, every type x format variant, every CUDA
// tactic that accepts it runs on fresh random data and is compared with the CPU backend's
// reference tactic run on the same values in FP32 linear.
//
// Two modes:
//   kEmulated  host buffers, RunContext::emulate: kiln's own per-element kernels run their element
//              function on the CPU. Tests the index arithmetic of every own kernel in CI.
//   kDevice    the GPU (ctest label `gpu`); skipped with the CUDA runtime's reason where there is
//              none.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backends/kernel.h"
#include "builder/graph.h"
#include "kiln/types.h"

namespace kiln::testing {

struct OpInput {
  Dims dims;
  DataType type = DataType::kFLOAT;  // logical type; float inputs take the variant's float type
  bool constant = false;             // weights: handed to the tactic as constantInputs too
  // Rank-4 float inputs take the variant's format unless this is false (e.g. a bias).
  bool followsFormat = true;
  // Constants stay linear unless this is true (convolution weights that the builder reformats
  // channels-last at build time for the tactics that take them so).
  bool constantFollowsFormat = false;
  // Value ranges: floats uniform in [floatLo, floatHi), integers uniform in [intLo, intHi),
  // bools 0/1.
  float floatLo = -1.f, floatHi = 1.f;
  int64_t intLo = 0, intHi = 4;
  // In the edge-value pass (OpValues::kWithEdges), every third element of a float input becomes a
  // special value: signed zeros, infinities, NaN, values that overflow fp16, tiny ones, values
  // where exp() overflows or underflows. False for inputs whose special values the CPU reference
  // refuses by design (RoI coordinates: the CPU fails the run, the GPU cannot).
  bool edgeValues = true;
};

struct OpCase {
  std::string name;
  LayerType type = LayerType::kCONSTANT;
  LayerParams params;
  std::vector<OpInput> inputs;
  // The float types and formats to try; channels-last only where the layer allows it.
  std::vector<DataType> floatTypes = {DataType::kFLOAT, DataType::kHALF};
  std::vector<TensorFormat> formats = {TensorFormat::kLINEAR};
  // Allowed |cuda - ref| <= rel * |ref| + abs, per float type. Negative: the harness default
  // (fp32 1e-5/1e-5, fp16 4e-3/4e-3 relative to the values' scale, bf16 3e-2/3e-2).
  float fp32Rel = -1, fp32Abs = -1, halfRel = -1, halfAbs = -1;
  // False for cases too large to emulate in CI (a reference kernel's element function over a
  // long sequence takes minutes on the host): they run on the device only.
  bool emulate = true;
  // Some layers compute in FP32 whatever the storage: give the output type explicitly
  // (kFLOAT: follow the variant's float type).
};

enum class OpMode { kEmulated, kDevice };

// kRandom: uniform in each input's range. kWithEdges: the same with special values mixed in (see
// OpInput::edgeValues); the comparison then needs NaN where the reference has NaN and the same
// infinity where it has one. That pass skips tactics built on cuDNN or cuBLAS, which make no
// promise at special values.
enum class OpValues { kRandom, kWithEdges };

// Runs every variant of `c` and records gtest failures; returns how many (variant, tactic) pairs
// ran and compared. Device mode skips (GTEST_SKIP in the caller) when no GPU: see
// deviceSkipReason().
int runOpCase(const OpCase& c, OpMode mode, OpValues values = OpValues::kRandom);

// Empty when a GPU is usable, else why not (for GTEST_SKIP).
std::string deviceSkipReason();

}  // namespace kiln::testing

// Defines a family's tests: FAMILY.Emulated/<case> and FAMILY.Device/<case>, and the same two on
// edge values (EmulatedEdgeValues, DeviceEdgeValues; the ctests' *Emulated* and *Device* filters
// take them too). `cases` is a function returning std::vector<kiln::testing::OpCase>.
#define KILN_CUDA_OP_CASES(FAMILY, cases)                                                    \
  class FAMILY : public ::testing::TestWithParam<kiln::testing::OpCase> {};                  \
  TEST_P(FAMILY, Emulated) {                                                                 \
    if (!GetParam().emulate) GTEST_SKIP() << "device only (too large to emulate)";           \
    kiln::testing::runOpCase(GetParam(), kiln::testing::OpMode::kEmulated);                  \
  }                                                                                          \
  TEST_P(FAMILY, Device) {                                                                   \
    const std::string why = kiln::testing::deviceSkipReason();                               \
    if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;                                \
    const int ran = kiln::testing::runOpCase(GetParam(), kiln::testing::OpMode::kDevice);    \
    EXPECT_GT(ran, 0) << "no CUDA tactic ran for " << GetParam().name;                       \
  }                                                                                          \
  TEST_P(FAMILY, EmulatedEdgeValues) {                                                       \
    if (!GetParam().emulate) GTEST_SKIP() << "device only (too large to emulate)";           \
    kiln::testing::runOpCase(GetParam(), kiln::testing::OpMode::kEmulated,                   \
                             kiln::testing::OpValues::kWithEdges);                           \
  }                                                                                          \
  TEST_P(FAMILY, DeviceEdgeValues) {                                                         \
    const std::string why = kiln::testing::deviceSkipReason();                               \
    if (!why.empty()) GTEST_SKIP() << "no CUDA GPU: " << why;                                \
    kiln::testing::runOpCase(GetParam(), kiln::testing::OpMode::kDevice,                     \
                             kiln::testing::OpValues::kWithEdges);                           \
  }                                                                                          \
  INSTANTIATE_TEST_SUITE_P(Ops, FAMILY, ::testing::ValuesIn(cases()),                        \
                           [](const ::testing::TestParamInfo<kiln::testing::OpCase>& info) { \
                             std::string n = info.param.name;                                \
                             for (char& ch : n)                                              \
                               if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';       \
                             return n;                                                       \
                           })

namespace kiln::testing {

// A CUDA layer configuration (linear tensors) for `inputs`, outputs by shape inference.
KernelConfig linearConfig(LayerType type, const LayerParams& params,
                          const std::vector<TensorShape>& inputs);

// Emulated: runs the last CUDA tactic (the reference) on `inputs` and every other tactic that
// accepts `c` with its input and output buffers shifted by `misalign` bytes (so the fast
// tactics' unaligned paths run too), and returns the differences from the reference's output
// bytes ("" when every tactic wrote exactly the reference's bytes). *ran counts the tactics that
// ran besides the reference (those returning kUnsupported under emulation do not).
std::string bytesAgainstReference(const KernelConfig& c,
                                  const std::vector<std::vector<uint8_t>>& inputs, size_t misalign,
                                  int* ran);

}  // namespace kiln::testing
