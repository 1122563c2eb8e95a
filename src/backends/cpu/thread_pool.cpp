#include "backends/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "core/log.h"

namespace kiln::cpu {

int parseCpuThreads(const char* value, unsigned hardware, std::string* warning) {
  constexpr long kMax = 1024;  // far beyond any CPU kiln runs on: a typo, not a request
  const int fallback = static_cast<int>(std::clamp<unsigned>(hardware, 1, kMax));
  warning->clear();
  if (value == nullptr || value[0] == '\0') return fallback;
  errno = 0;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  // strtol skips leading blanks and accepts a sign; neither is a thread count.
  const bool digits = value[0] >= '0' && value[0] <= '9';
  if (!digits || *end != '\0' || errno == ERANGE || n < 1 || n > kMax) {
    *warning = "KILN_CPU_THREADS='" + std::string(value) +
               "' is not a thread count (a whole number from 1 to " + std::to_string(kMax) +
               "); using " + std::to_string(fallback) + " (the hardware's thread count)";
    return fallback;
  }
  return static_cast<int>(n);
}

namespace {

// One job at a time: the caller that claims `busy` publishes its loop, wakes the workers, takes
// tasks itself, then closes the job and waits for the workers that joined it to finish their
// tasks. A worker joins a job only while it is open, so once the caller has closed it and seen
// `joined` fall to 0, no worker touches the job again and fn may go out of scope.
class Pool {
 public:
  explicit Pool(int threads) {
    workers_.reserve(static_cast<size_t>(threads - 1));
    for (int slot = 1; slot < threads; ++slot) workers_.emplace_back([this, slot] { work(slot); });
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // False (nothing run) when another caller holds the pool.
  bool run(int64_t tasks, int slots, const TaskRef& fn) {
    bool expected = false;
    // An atomic flag rather than a mutex: a task that calls parallelFor on a thread that already
    // holds the pool must see it busy (try_lock on a mutex one owns is undefined).
    if (!busy_.compare_exchange_strong(expected, true, std::memory_order_acquire)) return false;
    bool wakeNeeded = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = &fn;
      tasks_ = tasks;
      slots_ = slots;
      next_.store(0, std::memory_order_relaxed);
      ++generation_;
      published_.store(generation_, std::memory_order_release);
      open_ = true;
      wakeNeeded = sleepers_ > 0;
    }
    // Spinning workers see published_ change; only sleeping ones need the (slow) futex wake.
    if (wakeNeeded) wake_.notify_all();
    takeTasks(fn, tasks, 0);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      open_ = false;
      idle_.wait(lock, [this] { return joined_ == 0; });
      fn_ = nullptr;
    }
    busy_.store(false, std::memory_order_release);
    return true;
  }

 private:
  void takeTasks(const TaskRef& fn, int64_t tasks, int slot) {
    for (int64_t t = next_.fetch_add(1, std::memory_order_relaxed); t < tasks;
         t = next_.fetch_add(1, std::memory_order_relaxed))
      fn(t, slot);
  }

  // Waking a sleeping thread takes tens of microseconds (measured 50-100 on a 2-core VM), as much
  // as a mid-sized GEMM; a model runs its GEMMs a few hundred microseconds apart. So a worker
  // spins a while for the next job before it sleeps, as OpenMP runtimes and onnxruntime's pool
  // do; kSpin bounds the CPU time that costs when no job comes.
  static constexpr std::chrono::microseconds kSpin{200};

  void spinForJob(uint64_t seen) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 1;; ++i) {
      if (published_.load(std::memory_order_acquire) != seen) return;
      if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }

  void work(int slot) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      auto ready = [&] {
        if (stop_) return true;
        // A job with too few slots for this worker counts as seen, so that the spin below
        // waits for the next one.
        if (open_ && generation_ != seen && slot >= slots_) seen = generation_;
        return open_ && generation_ != seen;
      };
      if (!ready()) {
        lock.unlock();
        spinForJob(seen);
        lock.lock();
        ++sleepers_;
        wake_.wait(lock, ready);
        --sleepers_;
      }
      if (stop_) return;
      seen = generation_;
      ++joined_;
      const TaskRef* fn = fn_;
      const int64_t tasks = tasks_;
      lock.unlock();
      takeTasks(*fn, tasks, slot);
      lock.lock();
      if (--joined_ == 0) idle_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::atomic<bool> busy_{false};
  std::atomic<int64_t> next_{0};
  std::atomic<uint64_t> published_{0};  // generation_, for spinning workers to watch unlocked
  std::mutex mutex_;                    // guards everything below
  std::condition_variable wake_, idle_;
  const TaskRef* fn_ = nullptr;
  int64_t tasks_ = 0;
  int slots_ = 0;  // workers with slot >= slots_ stay out of this job
  uint64_t generation_ = 0;
  int joined_ = 0;
  int sleepers_ = 0;  // workers blocked on wake_
  bool open_ = false, stop_ = false;
};

int readThreadCount() {
  std::string warning;
  const int n = parseCpuThreads(std::getenv("KILN_CPU_THREADS"),
                                std::thread::hardware_concurrency(), &warning);
  if (!warning.empty()) logMessage(Severity::kWarning, warning);
  return n;
}

// Built at first use; its destructor (at exit) stops and joins the workers.
Pool* pool() {
  static const int threads = readThreadCount();
  if (threads <= 1) return nullptr;
  static Pool instance(threads);
  return &instance;
}

thread_local int threadLimit = 0;  // 0: no ScopedThreadLimit on this thread

}  // namespace

int cpuThreadCount() {
  Pool* p = pool();
  return p ? p->threads() : 1;
}

int cpuThreadsForCaller() {
  const int n = cpuThreadCount();
  return threadLimit > 0 ? std::min(threadLimit, n) : n;
}

ScopedThreadLimit::ScopedThreadLimit(int threads) : previous_(threadLimit) {
  threadLimit = std::max(1, threads);
}

ScopedThreadLimit::~ScopedThreadLimit() { threadLimit = previous_; }

void parallelFor(int64_t tasks, int maxThreads, TaskRef fn) {
  if (tasks <= 0) return;
  // More slots than tasks would only wake workers that find nothing to do.
  const int slots = static_cast<int>(std::min<int64_t>({cpuThreadsForCaller(), maxThreads, tasks}));
  if (slots > 1 && pool()->run(tasks, slots, fn)) return;
  for (int64_t t = 0; t < tasks; ++t) fn(t, 0);
}

}  // namespace kiln::cpu
