// The shared engine of the CPU element movers (slice, padding, tile, expand): each output axis
// has a table saying which input element along that axis feeds each output coordinate (or -1:
// the padding value). The output is then written row by row. Tables are built and checked when
// the kernel is made, so run() only reads indices already known to be inside the input.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "backends/cpu/kernel.h"
#include "kiln/types.h"

namespace kiln::cpu {

class AxisMap {
 public:
  // inDims/outDims: row-major input and output; rank 0 counts as [1]. tables[i] has outDims.d[i]
  // entries, each in [-1, inDims.d[i]). elemSize is 1, 2, 4 or 8; `fill` holds elemSize bytes.
  AxisMap(const Dims& inDims, const Dims& outDims, std::vector<std::vector<int64_t>> tables,
          size_t elemSize, uint64_t fill = 0)
      : rank_(outDims.nbDims), elemSize_(elemSize), fill_(fill) {
    int64_t stride = 1;
    for (int32_t i = inDims.nbDims - 1; i >= 0; --i) {
      for (int64_t& t : tables[static_cast<size_t>(i)])
        if (t >= 0) t *= stride;  // stored as element offsets
      stride *= inDims.d[i];
    }
    tables_ = std::move(tables);
    outVolume_ = volume(outDims);
  }

  void run(const void* in, void* out) const {
    if (outVolume_ == 0) return;
    switch (elemSize_) {
      case 1:
        copy(static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out));
        break;
      case 2:
        copy(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(out));
        break;
      case 4:
        copy(static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out));
        break;
      default:
        copy(static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out));
        break;
    }
  }

 private:
  template <class T>
  void copy(const T* in, T* out) const {
    T fill;
    std::memcpy(&fill, &fill_, sizeof fill);  // little-endian: the low bytes hold the value
    if (rank_ == 0) {
      out[0] = in[0];
      return;
    }
    const std::vector<int64_t>& last = tables_[static_cast<size_t>(rank_ - 1)];
    const int64_t n = static_cast<int64_t>(last.size());
    int64_t coord[Dims::kMaxDims] = {};
    for (int64_t row = 0; row < outVolume_ / n; ++row) {
      int64_t base = 0;
      bool padded = false;
      for (int32_t k = 0; k < rank_ - 1; ++k) {
        const int64_t t = tables_[static_cast<size_t>(k)][static_cast<size_t>(coord[k])];
        padded = padded || t < 0;
        base += t;
      }
      if (padded) {
        for (int64_t j = 0; j < n; ++j) out[j] = fill;
      } else {
        for (int64_t j = 0; j < n; ++j) {
          const int64_t t = last[static_cast<size_t>(j)];
          out[j] = t < 0 ? fill : in[base + t];
        }
      }
      out += n;
      for (int32_t k = rank_ - 2; k >= 0; --k) {
        if (++coord[k] < static_cast<int64_t>(tables_[static_cast<size_t>(k)].size())) break;
        coord[k] = 0;
      }
    }
  }

  int32_t rank_;
  size_t elemSize_;
  uint64_t fill_;
  int64_t outVolume_ = 0;
  std::vector<std::vector<int64_t>> tables_;
};

// The kernel of every element mover built on an AxisMap: one input, one output.
class AxisMapKernel final : public Kernel {
 public:
  explicit AxisMapKernel(AxisMap map) : map_(std::move(map)) {}
  Status run(const void* const* in, void* const* out, void*) const override {
    map_.run(in[0], out[0]);
    return Status::ok();
  }

 private:
  AxisMap map_;
};

// The kernel of a mover whose output coordinate j along axis i reads input coordinate
// source(i, j), or the fill value (`fill`: the element's bytes) where source gives -1. Its tables
// are built here, once, when a tactic makes the kernel.
template <class Source>
KernelPtr makeAxisMapKernel(const Dims& in, const Dims& out, DataType type, Source source,
                            uint64_t fill = 0) {
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(out.nbDims));
  for (int32_t i = 0; i < out.nbDims; ++i) {
    auto& t = tables[static_cast<size_t>(i)];
    t.resize(static_cast<size_t>(out.d[i]));
    for (int64_t j = 0; j < out.d[i]; ++j) t[static_cast<size_t>(j)] = source(i, j);
  }
  return std::make_unique<AxisMapKernel>(
      AxisMap(in, out, std::move(tables), dataTypeSize(type), fill));
}

}  // namespace kiln::cpu
