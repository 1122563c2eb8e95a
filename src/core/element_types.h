// The element types a kernel is written for, as a list: each DataType with the C++ type its
// elements are stored as in that kernel (bool as uint8_t, fp16 as __half on CUDA, ...). A list
// picks the storage type of a run-time DataType once, where a switch per kernel would spell it out.
#pragma once

#include "kiln/types.h"

namespace kiln {

// A DataType and the storage type of its elements.
template <DataType kType, class T>
struct Stored {
  static constexpr DataType type = kType;
  using Storage = T;
};

// dispatch(t, f) calls f(T{}) with T the storage type of `t`, or returns false for a type
// outside the list.
template <class... Entries>
struct ElementTypes {
  template <class F>
  static bool dispatch(DataType t, F&& f) {
    return ((t == Entries::type && (f(typename Entries::Storage{}), true)) || ...);
  }
};

}  // namespace kiln
