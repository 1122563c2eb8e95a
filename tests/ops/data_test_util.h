// Helpers for the data-movement op tests: every element type, random bytes, running a layer's
// reference tactic, and an element-by-element check against a map from output coordinates to the
// input element (or the fill value) written independently of the kernels.
#pragma once

#include <cstring>
#include <functional>
#include <span>
#include <vector>

#include "ops/op_test_util.h"

namespace kiln::test {

inline const std::vector<DataType>& allTypes() {
  static const std::vector<DataType> types = {DataType::kFLOAT, DataType::kHALF,  DataType::kBF16,
                                              DataType::kINT8,  DataType::kINT32, DataType::kINT64,
                                              DataType::kBOOL};
  return types;
}

// A buffer of random non-zero bytes holding `dims` elements of `type`.
inline std::vector<uint8_t> randomTensor(Rng& rng, const Dims& dims, DataType type) {
  return rng.bytes(volume(dims) * static_cast<int64_t>(dataTypeSize(type)));
}

// Runs `layer`'s reference tactic on inputs; returns the output (pre-filled with 0xCD, so that an
// element the kernel forgets shows) and the run's status in *st.
template <class P, class F>
std::vector<uint8_t> runReference(LayerType layer, std::span<const Tactic> tactics, F infer,
                                  const P& p, const std::vector<PluginTensorDesc>& inputs,
                                  const std::vector<const void*>& data, Dims* outDims, Status* st) {
  auto outs = inferredOutputs(infer, p, inputs);
  if (outs.size() != 1) return {};
  *outDims = outs[0].dims;
  auto kernel = create(tacticNamed(tactics, "reference"), config(layer, p, inputs, outs));
  if (!kernel) return {};
  std::vector<uint8_t> out(
      static_cast<size_t>(volume(outs[0].dims)) * dataTypeSize(outs[0].type) + 1, 0xCD);
  *st = runKernel(*kernel, data, {out.data()});
  return out;
}

// Checks every output element: `source(coord)` gives the input's linear element index, or -1 for
// the fill value `fill` (elemSize bytes). Stops at the first mismatch.
inline void expectMapped(const std::vector<uint8_t>& out, const Dims& outDims,
                         const std::vector<uint8_t>& in, size_t elemSize,
                         const std::function<int64_t(const std::vector<int64_t>&)>& source,
                         const void* fill, const std::string& what) {
  const int64_t n = volume(outDims);
  ASSERT_GE(out.size(), static_cast<size_t>(n) * elemSize) << what;
  for (int64_t e = 0; e < n; ++e) {
    const int64_t s = source(unravel(e, outDims));
    const uint8_t* want =
        s < 0 ? static_cast<const uint8_t*>(fill) : in.data() + static_cast<size_t>(s) * elemSize;
    ASSERT_EQ(0, std::memcmp(out.data() + static_cast<size_t>(e) * elemSize, want, elemSize))
        << what << ": output element " << e << " (source " << s << ")";
  }
  ASSERT_EQ(out.back(), 0xCD) << what << ": the kernel wrote past its output";
}

// Linear index of coord in row-major dims.
inline int64_t ravel(const std::vector<int64_t>& coord, const Dims& dims) {
  int64_t index = 0;
  for (int32_t i = 0; i < dims.nbDims; ++i)
    index = index * dims.d[i] + coord[static_cast<size_t>(i)];
  return index;
}

inline std::string dimsText(const Dims& d) { return kiln::dimsString(d); }

}  // namespace kiln::test
