// The base of the classes that own a CUDA resource and release it in their destructor (a stream,
// a pair of events, a graph, library handles): each resource has one owner, so these are neither
// copied nor assigned. No CUDA header here.
#pragma once

namespace kiln::cuda {

class NonCopyable {
 public:
  NonCopyable(const NonCopyable&) = delete;
  NonCopyable& operator=(const NonCopyable&) = delete;

 protected:
  NonCopyable() = default;
  ~NonCopyable() = default;
};

}  // namespace kiln::cuda
