// The per-thread cache of host objects keyed by words (backends/cuda/recent_cache.h), which keeps
// cuDNN's variant packs between enqueues: a key seen before gives the same value without making
// it again, any other key makes its own, a failed make leaves nothing behind.
#include "backends/cuda/recent_cache.h"

#include <gtest/gtest.h>

namespace kiln::cuda {
namespace {

using Key = WordKey<5>;

Key key(std::initializer_list<uint64_t> words) {
  Key k;
  for (uint64_t w : words) EXPECT_TRUE(k.push(w));
  return k;
}

TEST(RecentCache, TheSameKeyGivesTheSameValueWithoutMakingItAgain) {
  RecentCache<Key, int, 8> cache;
  int made = 0;
  auto make = [&](int& v) {
    v = ++made;
    return true;
  };
  int* a = cache.get(key({1, 0x1000, 2}), make);
  ASSERT_NE(a, nullptr);
  const int first = *a;
  EXPECT_EQ(cache.get(key({1, 0x1000, 2}), make), a);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(cache.hits(), 1u);
  // One word changed (another pointer) or one word more: another value. (A value is valid until
  // the next get(), which may take its slot.)
  int* b = cache.get(key({1, 0x1040, 2}), make);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(*b, first);
  int* c = cache.get(key({1, 0x1000, 2, 0}), make);
  ASSERT_NE(c, nullptr);
  EXPECT_NE(*c, first);
  EXPECT_EQ(made, 3);
}

TEST(RecentCache, ASlotHoldsOneKeyAtATime) {
  RecentCache<Key, int, 1> cache;  // every key shares the one slot
  int made = 0;
  auto make = [&](int& v) {
    v = ++made;
    return true;
  };
  EXPECT_EQ(*cache.get(key({7}), make), 1);
  EXPECT_EQ(*cache.get(key({8}), make), 2);
  EXPECT_EQ(*cache.get(key({7}), make), 3);  // made again: 8 had taken its slot
  EXPECT_EQ(cache.misses(), 3u);
}

TEST(RecentCache, AFailedMakeLeavesTheSlotEmpty) {
  RecentCache<Key, int, 4> cache;
  EXPECT_EQ(cache.get(key({3}), [](int&) { return false; }), nullptr);
  int made = 0;
  int* v = cache.get(key({3}), [&](int& x) {
    x = ++made;
    return true;
  });
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(made, 1);
}

TEST(RecentCache, AKeyRefusesWordsBeyondItsSize) {
  WordKey<2> k;
  EXPECT_TRUE(k.push(1));
  EXPECT_TRUE(k.push(2));
  EXPECT_FALSE(k.push(3));
  EXPECT_EQ(k.count, 2u);
}

}  // namespace
}  // namespace kiln::cuda
