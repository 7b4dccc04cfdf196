// The ParameterStore's Hogwild contract (sync/parameter_store.h), invariant 5 of DESIGN.md:
// concurrent updates may be lost but never produce a value that no writer wrote, and the version
// counter counts every completed update.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/sgd_update.h"
#include "kernels/functors.h"
#include "sync/hogwild.h"
#include "sync/parameter_store.h"

namespace hogwild {
namespace {

// Writer w stores only floats 0x40kkkkkk with k = 1 + 2w or 2 + 2w: the same byte k three times
// under the byte 0x40 (all in [2, 4), e.g. 0x40010101 = 2.0157...). A value assembled from parts
// of two different stores mixes two k's, so it is in no writer's set.
//
// Writers go through the Hogwild policy with lr = 1, weight decay 1, momentum 0 and the
// gradient -x: the update is p - 1 * (-x + 1 * p), and p - x is exact for p and x in [2, 4)
// (Sterbenz) or p = 0, so the new value is exactly x, whatever p the update loaded.
float WriterValue(int writer, int parity) {
  const uint32_t k = 1 + 2 * writer + parity;
  return std::bit_cast<float>(0x40000000u | k * 0x010101u);
}

// True for the initial 0 and for any value some writer in [0, writers) stores.
bool IsWrittenValue(float value, int writers) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (bits == 0) return true;
  const uint32_t k = bits & 0xffu;
  return bits == (0x40000000u | k * 0x010101u) && k >= 1 && k <= 2u * writers;
}

TEST(ParameterStore, StartsZeroedAtVersionZero) {
  ParameterStore store(37);
  EXPECT_EQ(store.size(), 37);
  EXPECT_EQ(store.version(), 0u);
  for (float v : store.unsafe_values()) EXPECT_EQ(std::bit_cast<uint32_t>(v), 0u);
  ParameterStore empty(0);
  std::vector<float> none;
  EXPECT_EQ(empty.Read(absl::MakeSpan(none)), 0u);
}

TEST(ParameterStore, ConcurrentUpdatesNeverProduceAValueNoWriterWrote) {
  // Every writer updates every element (the vector loop and the scalar tail of
  // kernels/cpu/sgd_update.h on shared cache lines), concurrently with each other and with the
  // readers. Writers keep going until each reader has completed kMinReads full reads, so reads
  // and writes overlap.
  constexpr int kWriters = 3, kReaders = 2, kSize = 257, kMinRounds = 200, kMinReads = 50;
  ParameterStore store(kSize);
  Hogwild policy(&store, kWriters, SgdOptions{.weight_decay = 1.0f});
  std::atomic<int> writers_left{kWriters};
  std::atomic<int64_t> bad_reads{0}, bad_snapshots{0}, rounds{0}, errors{0};
  std::vector<std::atomic<int64_t>> reads(kReaders);
  auto readers_done = [&] {
    for (const auto& r : reads) {
      if (r.load() < kMinReads) return false;
    }
    return true;
  };
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::vector<float> grad(kSize);
      while (!go.load()) std::this_thread::yield();
      for (int round = 0; round < kMinRounds || !readers_done(); ++round) {
        // BeginStep reads the store (or reuses the values the last update left, all this
        // writer's).
        auto snapshot = policy.BeginStep(w);
        if (!snapshot.ok()) return void(errors.fetch_add(1));
        for (float v : snapshot->HostSpan()) {
          if (!IsWrittenValue(v, kWriters)) bad_snapshots.fetch_add(1);
        }
        std::fill(grad.begin(), grad.end(), -WriterValue(w, round % 2));
        if (!policy.FinishStep(w, grad, 1.0f).ok()) return void(errors.fetch_add(1));
        rounds.fetch_add(1);
      }
      writers_left.fetch_sub(1);
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      std::vector<float> snapshot(kSize);
      while (!go.load()) std::this_thread::yield();
      // At least one full read after the writers finish, so the last values are checked too.
      bool last = false;
      while (!last) {
        last = writers_left.load() == 0;
        store.Read(absl::MakeSpan(snapshot));
        for (float v : snapshot) {
          if (!IsWrittenValue(v, kWriters)) bad_reads.fetch_add(1);
        }
        reads[r].fetch_add(1);
      }
    });
  }
  go.store(true);
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(errors.load(), 0);
  EXPECT_EQ(bad_reads.load(), 0) << "torn or invented values seen by Read()";
  EXPECT_EQ(bad_snapshots.load(), 0) << "torn or invented values in the writers' snapshots";
  EXPECT_EQ(store.version(), static_cast<uint64_t>(rounds.load()));
  // Each element ends as a value one of the writers stored.
  for (float v : store.unsafe_values()) {
    EXPECT_TRUE(IsWrittenValue(v, kWriters) && v != 0.0f) << std::bit_cast<uint32_t>(v);
  }
  // The update writes exactly the writer's value over another writer's (the premise above).
  const SgdMomentumFn sgd{1.0f, 0.0f, 1.0f};
  float unused = 0.0f;
  for (int from = 0; from < 2 * kWriters; ++from) {
    for (int to = 0; to < 2 * kWriters; ++to) {
      const float x = WriterValue(to / 2, to % 2);
      EXPECT_EQ(sgd(WriterValue(from / 2, from % 2), -x, unused), x);
      EXPECT_EQ(sgd(0.0f, -x, unused), x);
    }
  }
  // The checker itself rejects mixtures of two writers' values.
  const uint32_t torn = (std::bit_cast<uint32_t>(WriterValue(0, 0)) & 0xffff0000u) |
                        (std::bit_cast<uint32_t>(WriterValue(1, 0)) & 0x0000ffffu);
  EXPECT_FALSE(IsWrittenValue(std::bit_cast<float>(torn), kWriters));
}

// The store's rule that an element an update leaves unchanged is not written (so that it never
// overwrites another worker's concurrent update), checked where the store implements it: the
// shared kernel runs over an array whose second page is read-only and whose gradient is 0
// there, so one store to an unchanged element (vector lanes or the scalar head and tail) kills
// the test with SIGSEGV.
TEST(SharedSgdUpdateAndRead, ElementsLeftUnchangedAreNeverWritten) {
  const int64_t page_bytes = sysconf(_SC_PAGESIZE);
  const int64_t per_page = page_bytes / static_cast<int64_t>(sizeof(float));
  void* memory =
      mmap(nullptr, 2 * page_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  float* const pages = static_cast<float*>(memory);
  // Off a 16-byte boundary at both ends: one scalar head element, vectors, a scalar tail of 2.
  float* const shared = pages + 3;
  const int64_t n = 2 * per_page - 3 - 2;
  const int64_t first_page = per_page - 3;  // elements of `shared` in the writable page
  std::vector<float> grad(n), init(n), out(n);
  for (int64_t i = 0; i < n; ++i) {
    init[i] = shared[i] = 1.0f + static_cast<float>(i % 17);
    grad[i] = i < first_page ? 0.25f : 0.0f;
  }
  ASSERT_EQ(mprotect(pages + per_page, page_bytes, PROT_READ), 0);
  const SgdMomentumFn sgd{0.5f, 0.0f, 0.0f};
  cpu::SharedSgdUpdateAndRead(sgd, grad, {}, shared, absl::MakeSpan(out));
  float unused = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float want = sgd(init[i], grad[i], unused);
    ASSERT_EQ(shared[i], want) << i;
    ASSERT_EQ(out[i], want) << i;
  }
  EXPECT_NE(shared[0], init[0]);
  EXPECT_NE(shared[first_page - 1], init[first_page - 1]);
  ASSERT_EQ(munmap(memory, 2 * page_bytes), 0);
}

TEST(ParameterStore, VersionCountsCompletedUpdates) {
  ParameterStore store(4);
  std::vector<float> out(4);
  EXPECT_EQ(store.Read(absl::MakeSpan(out)), 0u);
  EXPECT_EQ(store.CompleteUpdate(), 0u);
  EXPECT_EQ(store.CompleteUpdate(), 1u);
  EXPECT_EQ(store.version(), 2u);
  EXPECT_EQ(store.Read(absl::MakeSpan(out)), 2u);

  // Concurrent completions are all counted, and each thread gets a distinct previous version.
  constexpr int kThreads = 4, kEach = 1000;
  std::vector<std::vector<uint64_t>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) seen[t].push_back(store.CompleteUpdate());
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(store.version(), 2u + kThreads * kEach);
  std::vector<bool> taken(2 + kThreads * kEach, false);
  for (const auto& versions : seen) {
    for (uint64_t v : versions) {
      ASSERT_GE(v, 2u);
      ASSERT_LT(v, taken.size());
      EXPECT_FALSE(taken[v]) << "version " << v << " handed out twice";
      taken[v] = true;
    }
  }
}

}  // namespace
}  // namespace hogwild
