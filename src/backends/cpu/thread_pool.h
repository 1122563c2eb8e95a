// The CPU backend's worker threads: one small pool per process that splits a loop of independent
// tasks over a fixed set of workers, the calling thread included.
//
// Decision: one global pool, not one per execution context. The cores are a process-wide
// resource; a pool per context would put contexts x cores threads on the cores whenever several
// contexts run at once (oversubscription), and would make each context pay for threads that sit
// idle between its enqueues. With one pool, a caller that finds it busy (another context, or a
// task of the pool itself calling parallelFor) runs its tasks on its own thread instead of
// waiting: no deadlock, no nesting, and at most threads + concurrent callers threads are busy.
//
// Thread count: KILN_CPU_THREADS (a positive integer), read once per process; by default
// std::thread::hardware_concurrency(). 1 means no worker is started and every loop runs on the
// caller, exactly as before the pool existed.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

namespace kiln::cpu {

// What KILN_CPU_THREADS=`value` means on a machine with `hardware` hardware threads: value null
// or empty gives `hardware` (at least 1); a value that is not a whole number in [1, 1024] gives
// `hardware` too, with the reason in *warning (left empty for a good value).
int parseCpuThreads(const char* value, unsigned hardware, std::string* warning);

// The pool's thread count (workers + the caller), fixed for the process at first use.
int cpuThreadCount();

// The threads a parallelFor from this thread may use: cpuThreadCount(), or less inside a
// ScopedThreadLimit. Work splitting (and workspace slots) follow this number.
int cpuThreadsForCaller();

// Limits parallelFor calls made from this thread to at most `threads` threads while it lives
// (1: run on the caller only). Tests use it to compare 1 and N threads in one process.
class ScopedThreadLimit {
 public:
  explicit ScopedThreadLimit(int threads);
  ~ScopedThreadLimit();
  ScopedThreadLimit(const ScopedThreadLimit&) = delete;
  ScopedThreadLimit& operator=(const ScopedThreadLimit&) = delete;

 private:
  int previous_;
};

// A callable fn(task, slot), referred to without owning it: what parallelFor takes. Made from a
// lambda it copies two pointers, whatever the lambda captures, where a std::function copies a
// closure of more than two pointers to the heap: a heap allocation on every parallel loop, inside
// enqueue (DESIGN.md §7 has none). parallelFor returns only after its last task, so the callable,
// a temporary of the caller's full expression, outlives every use.
class TaskRef {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, TaskRef>>>
  TaskRef(const F& fn)  // NOLINT(google-explicit-constructor): a lambda converts implicitly
      : object_(&fn), call_([](const void* object, int64_t task, int slot) {
          (*static_cast<const F*>(object))(task, slot);
        }) {}
  void operator()(int64_t task, int slot) const { call_(object_, task, slot); }

 private:
  const void* object_;
  void (*call_)(const void*, int64_t, int);
};

// Runs fn(task, slot) once for every task in [0, tasks), on up to min(maxThreads,
// cpuThreadsForCaller()) threads at once, and returns when all have run. `slot` names the thread
// running the task, below that number: no two tasks run at the same time with the same slot, so
// per-slot scratch needs no locking. The caller is slot 0; when the pool is busy every task runs on
// the caller, in order, with slot 0. Tasks are handed out dynamically, so which slot runs which
// task varies from run to run: results must not depend on it. fn must not throw.
void parallelFor(int64_t tasks, int maxThreads, TaskRef fn);

}  // namespace kiln::cpu
