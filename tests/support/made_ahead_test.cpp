// Batches made on a thread of their own come in the order, and with the errors, of batches made on
// the caller's thread; a caller that stops early is not kept waiting.
#include "anec/support/made_ahead.hpp"

#include <gtest/gtest.h>
#include <stdexcept>
#include <vector>

using anec::MadeAhead;

namespace {
// Batches of `size` numbers counting up from 0, `batches` of them, then the end or (fail_at) an error.
struct Counter {
  int batches, size, fail_at = -1;
  int made = 0;
  bool operator()(std::vector<int> &b) {
    if (made == fail_at)
      throw std::runtime_error("batch " + std::to_string(made));
    if (made == batches)
      return false;
    b.clear(); // the storage of a batch made before: reused
    for (int k = 0; k < size; ++k)
      b.push_back(made * size + k);
    ++made;
    return true;
  }
};

// Every number the batches hold, in the order taken, and the error's text ("" for none).
std::pair<std::vector<int>, std::string> take_all(MadeAhead<std::vector<int>> &ahead) {
  std::vector<int> seen;
  try {
    while (std::vector<int> *b = ahead.next())
      seen.insert(seen.end(), b->begin(), b->end());
  } catch (const std::runtime_error &e) {
    return {seen, e.what()};
  }
  return {seen, ""};
}
} // namespace

TEST(MadeAhead, OnAThreadGivesTheBatchesInTheOrderMadeInline) {
  for (int batches : {0, 1, 2, 3, 4, 50}) {
    MadeAhead<std::vector<int>> inline_made(Counter{batches, 7}, false), on_thread(Counter{batches, 7}, true);
    auto [expected, no_error] = take_all(inline_made);
    EXPECT_EQ(expected.size(), size_t(batches * 7));
    EXPECT_EQ(take_all(on_thread), std::pair(expected, std::string())) << batches;
    EXPECT_EQ(on_thread.next(), nullptr); // after the last, again
  }
}

TEST(MadeAhead, AnErrorComesInItsTurnAndAgainAfter) {
  for (bool thread : {false, true}) {
    MadeAhead<std::vector<int>> ahead(Counter{10, 3, 5}, thread);
    auto [seen, error] = take_all(ahead);
    EXPECT_EQ(seen.size(), size_t(15)) << thread; // the five batches made before it
    EXPECT_EQ(error, "batch 5") << thread;
    EXPECT_THROW(ahead.next(), std::runtime_error) << thread;
  }
}

TEST(MadeAhead, ACallerThatStopsEarlyIsNotKeptWaiting) {
  for (int taken : {0, 1, 2}) {
    MadeAhead<std::vector<int>> ahead(Counter{1000, 100}, true);
    for (int k = 0; k < taken; ++k)
      ASSERT_NE(ahead.next(), nullptr);
  } // the destructor stops the thread with batches made and not taken
}

TEST(MadeAhead, TwoOnOneSharedThreadEachGiveTheirOwnBatchesInOrder) {
  for (int batches : {0, 1, 5, 50}) {
    MadeAhead<std::vector<int>> inline_made(Counter{batches, 7}, false);
    auto [expected, no_error] = take_all(inline_made);
    anec::JobThread jobs; // declared first: it outlives the two that post to it
    MadeAhead<std::vector<int>> first(Counter{batches, 7}, true), second(Counter{batches, 7}, true);
    first.share(jobs);
    second.share(jobs);
    std::vector<int> seen_first, seen_second;
    for (bool more = true; more;) { // taken in turn, so each waits on batches queued behind the other's
      std::vector<int> *a = first.next(), *b = second.next();
      for (auto [batch, seen] : {std::pair{a, &seen_first}, {b, &seen_second}})
        if (batch)
          seen->insert(seen->end(), batch->begin(), batch->end());
      more = a || b;
    }
    EXPECT_EQ(seen_first, expected) << batches;
    EXPECT_EQ(seen_second, expected) << batches;
  }
  anec::JobThread jobs;
  MadeAhead<std::vector<int>> left(Counter{1000, 100}, true); // left with batches asked and not taken
  left.share(jobs);
  ASSERT_NE(left.next(), nullptr);
}
