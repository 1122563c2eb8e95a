// DESIGN.md §7: no allocation inside enqueue(). The heap is counted here (this program replaces
// the global operator new) while a context runs the demo plan on the CPU, plugin included, once
// its first enqueue is done.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "../tools/demo_network.h"
#include "backends/cpu/thread_pool.h"
#include "kiln/kiln.h"
#include "runtime/demo_plan_test_util.h"

// AddressSanitizer brings its own operator new, which the libraries' allocations reach while a
// replacement here would free them: under it (the CI's sanitizer job) the counting is off and the
// tests skip; the Release job runs them.
#if defined(__SANITIZE_ADDRESS__)
#define KILN_COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef KILN_COUNTS_ALLOCATIONS
#define KILN_COUNTS_ALLOCATIONS 1
#endif

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
}  // namespace

#if KILN_COUNTS_ALLOCATIONS
// GCC sees the replacement's free() meet memory from operator new where it inlines them: that is
// the replacement's own pairing (operator new here is malloc).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace kiln::testing {
namespace {

TEST(EnqueueAllocations, NoneAfterTheFirstEnqueue) {
  if (!KILN_COUNTS_ALLOCATIONS) GTEST_SKIP() << "AddressSanitizer replaces operator new";
  const std::vector<uint8_t>& plan = demoPlan();
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> context;
  ASSERT_TRUE(engine->createExecutionContext(context).isOk());
  std::vector<float> image(3 * demo::kImageSize * demo::kImageSize, 0.5f);
  std::vector<float> boxes(demo::kBoxes * 4, 0.25f);
  std::vector<int32_t> indices(demo::kBoxes, 0);
  std::vector<float> scores(demo::kBoxes * demo::kClasses);
  ASSERT_TRUE(context->setTensorAddress("image", image.data()).isOk());
  ASSERT_TRUE(context->setTensorAddress("boxes", boxes.data()).isOk());
  ASSERT_TRUE(context->setTensorAddress("box_indices", indices.data()).isOk());
  ASSERT_TRUE(context->setTensorAddress("class_scores", scores.data()).isOk());
  ASSERT_TRUE(context->enqueue(nullptr).isOk());
  allocations = 0;
  counting = true;
  Status status;
  for (int run = 0; run < 3 && status; ++run) status = context->enqueue(nullptr);
  counting = false;
  ASSERT_TRUE(status.isOk()) << status.message();
  EXPECT_EQ(allocations.load(), 0) << "heap allocations in three enqueues";
}

// Every CPU kernel's parallel loop goes through parallelFor; a closure of many captures (as the
// attention, LayerNorm and Linear kernels' are) must not be copied to the heap on the way.
TEST(EnqueueAllocations, NoneInAParallelLoopOfManyCaptures) {
  if (!KILN_COUNTS_ALLOCATIONS) GTEST_SKIP() << "AddressSanitizer replaces operator new";
  std::vector<int64_t> sums(static_cast<size_t>(cpu::cpuThreadCount()), 0);
  // Run-time values (constants would not be captured at all): five references in the closure.
  const int64_t a = static_cast<int64_t>(sums.size() / sums.size());
  const int64_t b = a + 1, c = a + 2, d = a + 3;
  allocations = 0;
  counting = true;
  cpu::parallelFor(64, cpu::cpuThreadCount(), [&](int64_t task, int slot) {
    sums[static_cast<size_t>(slot)] += task * a + b * c - d;
  });
  counting = false;
  int64_t total = 0;
  for (int64_t s : sums) total += s;
  EXPECT_EQ(total, 64 * 63 / 2 + 64 * 2);
  EXPECT_EQ(allocations.load(), 0) << "heap allocations in one parallelFor";
}

}  // namespace
}  // namespace kiln::testing
