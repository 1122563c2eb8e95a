// The CPU backend's thread pool and the multi-threaded sgemm on it: KILN_CPU_THREADS parsing,
// every task run once with slots never shared, nested and concurrent callers, and sgemm giving
// the very same bits on 1 and N threads (packed operands and odd shapes included), from several
// callers at once. ctest also runs this file with KILN_CPU_THREADS=4, so that more threads than
// this machine's cores are exercised.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "backends/cpu/sgemm.h"
#include "backends/cpu/thread_pool.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

using cpu::GemmOperand;
using cpu::MatrixRef;
using cpu::PackedMatrix;

TEST(CpuThreads, ParsesTheVariable) {
  std::string warning;
  EXPECT_EQ(cpu::parseCpuThreads(nullptr, 8, &warning), 8);
  EXPECT_TRUE(warning.empty());
  EXPECT_EQ(cpu::parseCpuThreads("", 8, &warning), 8);
  EXPECT_TRUE(warning.empty());
  EXPECT_EQ(cpu::parseCpuThreads("1", 8, &warning), 1);
  EXPECT_TRUE(warning.empty());
  EXPECT_EQ(cpu::parseCpuThreads("3", 8, &warning), 3);
  EXPECT_EQ(cpu::parseCpuThreads("64", 2, &warning), 64);  // more than the cores: as asked
  EXPECT_TRUE(warning.empty());
  // hardware_concurrency() may say 0 (unknown): then 1.
  EXPECT_EQ(cpu::parseCpuThreads(nullptr, 0, &warning), 1);

  for (const char* bad :
       {"0", "-2", "two", "4x", " 4", "+4", "2.5", "1025", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(cpu::parseCpuThreads(bad, 6, &warning), 6);
    EXPECT_NE(warning.find("KILN_CPU_THREADS"), std::string::npos) << warning;
    EXPECT_NE(warning.find(bad), std::string::npos) << warning;
    EXPECT_NE(warning.find("using 6"), std::string::npos) << warning;
  }
}

TEST(CpuThreads, ScopedLimitBoundsTheCaller) {
  const int all = cpu::cpuThreadCount();
  ASSERT_GE(all, 1);
  EXPECT_EQ(cpu::cpuThreadsForCaller(), all);
  {
    cpu::ScopedThreadLimit one(1);
    EXPECT_EQ(cpu::cpuThreadsForCaller(), 1);
    {
      cpu::ScopedThreadLimit more(all + 5);  // never above the pool
      EXPECT_EQ(cpu::cpuThreadsForCaller(), all);
    }
    EXPECT_EQ(cpu::cpuThreadsForCaller(), 1);
    std::thread other([&] { EXPECT_EQ(cpu::cpuThreadsForCaller(), all); });  // per thread
    other.join();
  }
  EXPECT_EQ(cpu::cpuThreadsForCaller(), all);
}

// Runs every task exactly once, on slots below the limit, never two at once on one slot.
void checkParallelFor(int64_t tasks, int maxThreads) {
  const int slots = std::min(maxThreads, cpu::cpuThreadsForCaller());
  std::vector<std::atomic<int>> runs(static_cast<size_t>(tasks));
  std::vector<std::atomic<int>> inUse(static_cast<size_t>(cpu::cpuThreadCount()));
  std::atomic<int> badSlot{0}, sharedSlot{0};
  cpu::parallelFor(tasks, maxThreads, [&](int64_t t, int slot) {
    if (slot < 0 || slot >= slots) {
      ++badSlot;
      return;
    }
    if (inUse[static_cast<size_t>(slot)].fetch_add(1) != 0) ++sharedSlot;
    runs[static_cast<size_t>(t)].fetch_add(1);
    volatile float sink = 0;  // long enough that workers join in
    for (int i = 0; i < 2000; ++i) sink = sink + 1.f;
    inUse[static_cast<size_t>(slot)].fetch_sub(1);
  });
  EXPECT_EQ(badSlot.load(), 0);
  EXPECT_EQ(sharedSlot.load(), 0);
  for (int64_t t = 0; t < tasks; ++t) ASSERT_EQ(runs[static_cast<size_t>(t)].load(), 1) << t;
}

TEST(ThreadPool, RunsEveryTaskOnceWithSlotsOfItsOwn) {
  for (int64_t tasks : {0, 1, 2, 3, 7, 64, 1000})
    for (int maxThreads : {1, 2, 3, 64}) {
      SCOPED_TRACE(std::to_string(tasks) + " tasks, at most " + std::to_string(maxThreads));
      for (int rep = 0; rep < 20; ++rep) checkParallelFor(tasks, maxThreads);
    }
}

TEST(ThreadPool, NestedCallsRunOnTheirCaller) {
  std::atomic<int64_t> inner{0};
  cpu::parallelFor(8, 64, [&](int64_t, int) {
    // The pool is busy with the outer loop: this one runs here, with slot 0.
    cpu::parallelFor(5, 64, [&](int64_t, int slot) {
      EXPECT_EQ(slot, 0);
      ++inner;
    });
  });
  EXPECT_EQ(inner.load(), 40);
}

TEST(ThreadPool, SeveralCallersAtOnce) {
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i)
    callers.emplace_back([&, i] {
      for (int rep = 0; rep < 200; ++rep) {
        const int64_t tasks = 1 + (rep * 7 + i) % 40;
        std::vector<std::atomic<int>> runs(static_cast<size_t>(tasks));
        cpu::parallelFor(tasks, 64, [&](int64_t t, int) { runs[static_cast<size_t>(t)]++; });
        for (auto& r : runs)
          if (r.load() != 1) ++failures;
      }
    });
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// One random product: operands (strided, maybe transposed), C's starting values, alpha, beta.
struct Problem {
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool ta = false, tb = false;
  float alpha = 1.f, beta = 0.f;
  std::vector<float> a, b, c0;

  Problem(Rng& rng, int64_t m_, int64_t n_, int64_t k_) : m(m_), n(n_), k(k_) {
    ta = rng.coin();
    tb = rng.coin();
    lda = (ta ? m : k) + rng.uniformInt(0, 3);
    ldb = (tb ? k : n) + rng.uniformInt(0, 3);
    ldc = n + rng.uniformInt(0, 3);
    a = rng.values((ta ? k : m) * lda);
    b = rng.values((tb ? n : k) * ldb);
    c0 = rng.values(m * ldc);
    alpha = rng.uniformFloat(-2.f, 2.f);
    beta = rng.coin() ? 0.f : rng.uniformFloat(-2.f, 2.f);
  }
  GemmOperand opA() const { return {MatrixRef{a.data(), lda, ta}, nullptr}; }
  GemmOperand opB() const { return {MatrixRef{b.data(), ldb, tb}, nullptr}; }
  std::string text() const {
    return "m " + std::to_string(m) + " n " + std::to_string(n) + " k " + std::to_string(k) +
           " ta " + std::to_string(ta) + " tb " + std::to_string(tb) + " beta " +
           std::to_string(beta);
  }

  std::vector<float> run(const GemmOperand& ga, const GemmOperand& gb) const {
    Buffer ws(cpu::sgemmWorkspaceSize(m, n, k));
    std::vector<float> c = c0;
    cpu::sgemm(m, n, k, alpha, ga, gb, beta, c.data(), ldc, ws.data());
    return c;
  }
};

bool sameBits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

// Shapes from tiny to large enough to split several ways, odd sizes (not whole register tiles)
// in every dimension, k across several k blocks.
Problem randomProblem(Rng& rng) {
  switch (rng.uniformInt(0, 3)) {
    case 0:
      return Problem(rng, rng.uniformInt(1, 9), rng.uniformInt(1, 9), rng.uniformInt(1, 9));
    case 1:  // thin: few rows or few columns, split the other way
      return rng.coin() ? Problem(rng, rng.uniformInt(1, 7), rng.uniformInt(200, 1100),
                                  rng.uniformInt(100, 600))
                        : Problem(rng, rng.uniformInt(200, 700), rng.uniformInt(1, 20),
                                  rng.uniformInt(100, 600));
    default:
      return Problem(rng, rng.uniformInt(1, 260), rng.uniformInt(1, 600), rng.uniformInt(1, 600));
  }
}

TEST(SgemmThreads, OneAndManyThreadsGiveTheSameBits) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  int split = 0;
  for (int iter = 0; iter < 40; ++iter) {
    const Problem p = randomProblem(rng);
    SCOPED_TRACE(p.text());
    const PackedMatrix pa = PackedMatrix::packA(p.m, p.k, p.opA().raw);
    const PackedMatrix pb = PackedMatrix::packB(p.k, p.n, p.opB().raw);
    std::vector<float> want;
    {
      cpu::ScopedThreadLimit one(1);
      ASSERT_EQ(cpu::sgemmThreads(p.m, p.n, p.k), 1);
      want = p.run(p.opA(), p.opB());
    }
    for (int threads = 2; threads <= cpu::cpuThreadCount(); ++threads) {
      cpu::ScopedThreadLimit limit(threads);
      if (cpu::sgemmThreads(p.m, p.n, p.k) > 1) ++split;
      for (int packing = 0; packing < 4; ++packing) {
        GemmOperand ga = p.opA(), gb = p.opB();
        if (packing & 1) ga.packed = &pa;
        if (packing & 2) gb.packed = &pb;
        ASSERT_TRUE(sameBits(p.run(ga, gb), want))
            << threads << " threads, packing " << packing << " changed the result";
      }
    }
  }
  // The comparison means something only if products were split.
  if (cpu::cpuThreadCount() > 1) {
    EXPECT_GT(split, 0);
  }
}

TEST(SgemmThreads, LargeProductsAreSplitSmallOnesAreNot) {
  if (cpu::cpuThreadCount() < 2) GTEST_SKIP() << "one thread: KILN_CPU_THREADS=1 or one core";
  EXPECT_EQ(cpu::sgemmThreads(4, 4, 4), 1);
  EXPECT_EQ(cpu::sgemmThreads(1, 1, 100000), 1);  // one output element: nothing to split
  // A ViT-B/16 projection (116M multiply-adds) uses every thread of a machine of today's size.
  const int vit = cpu::sgemmThreads(197, 768, 768);
  if (cpu::cpuThreadCount() <= 64) {
    EXPECT_EQ(vit, cpu::cpuThreadCount());
  } else {
    EXPECT_GE(vit, 64);
  }
  cpu::ScopedThreadLimit one(1);
  EXPECT_EQ(cpu::sgemmThreads(197, 768, 768), 1);
}

// A workspace sized for a product also serves any smaller one (callers size it once for their
// largest tile), with as many threads as the pool has.
TEST(SgemmThreads, WorkspaceForALargerProductServesASmallerOne) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int iter = 0; iter < 20; ++iter) {
    const Problem p = randomProblem(rng);
    SCOPED_TRACE(p.text());
    const int64_t m2 = rng.uniformInt(1, p.m), n2 = rng.uniformInt(1, p.n),
                  k2 = rng.uniformInt(1, p.k);
    ASSERT_LE(cpu::sgemmWorkspaceSize(m2, n2, k2), cpu::sgemmWorkspaceSize(p.m, p.n, p.k));
  }
}

// Several threads calling sgemm at once (as several execution contexts do), each with its own
// workspace: all get the single-threaded bits, whether they hold the pool or run alone.
TEST(SgemmThreads, ConcurrentCallersGetCorrectResults) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  std::vector<Problem> problems;
  std::vector<std::vector<float>> want;
  for (int i = 0; i < 4; ++i) {
    problems.emplace_back(rng, rng.uniformInt(60, 200), rng.uniformInt(100, 400),
                          rng.uniformInt(50, 300));
    cpu::ScopedThreadLimit one(1);
    want.push_back(problems.back().run(problems.back().opA(), problems.back().opB()));
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (size_t i = 0; i < problems.size(); ++i)
    callers.emplace_back([&, i] {
      const Problem& p = problems[i];
      const PackedMatrix pb = PackedMatrix::packB(p.k, p.n, p.opB().raw);
      Buffer ws(cpu::sgemmWorkspaceSize(p.m, p.n, p.k));
      std::vector<float> c(p.c0.size());
      for (int rep = 0; rep < 15; ++rep) {
        GemmOperand gb = p.opB();
        if (rep % 2) gb.packed = &pb;
        c = p.c0;
        cpu::sgemm(p.m, p.n, p.k, p.alpha, p.opA(), gb, p.beta, c.data(), p.ldc, ws.data());
        if (!sameBits(c, want[i])) ++wrong;
      }
    });
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace kiln::testing
