// The ParameterStore's Hogwild contract (sync/parameter_store.h), invariant 5 of DESIGN.md:
// concurrent updates may be lost but never produce a value that no writer wrote, and the version
// counter counts every completed update.
#include <atomic>
#include <bit>
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sync/parameter_store.h"

namespace hogwild {
namespace {

// Writer w stores only floats whose four bytes are all equal to kFirstByte + 2w or
// kFirstByte + 2w + 1 (0x40404040 is 3.0039...; every such value is a normal float). A value
// assembled from parts of two different stores would mix bytes, so it is in no writer's set.
constexpr uint32_t kFirstByte = 0x40;

float WriterValue(int writer, int parity) {
  const uint32_t byte = kFirstByte + 2 * writer + parity;
  return std::bit_cast<float>(byte * 0x01010101u);
}

// True for the initial 0 and for any value some writer in [0, writers) stores.
bool IsWrittenValue(float value, int writers) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (bits == 0) return true;
  const uint32_t byte = bits & 0xffu;
  return bits == byte * 0x01010101u && byte >= kFirstByte && byte < kFirstByte + 2 * writers;
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
  // Interleaved ranges on shared cache lines: writer w updates every element, so every element
  // is written concurrently by all writers, and read concurrently by the readers. Writers keep
  // going until each reader has completed kMinReads full reads, so reads and writes overlap.
  constexpr int kWriters = 3, kReaders = 2, kSize = 257, kMinRounds = 200, kMinReads = 50;
  ParameterStore store(kSize);
  std::atomic<int> writers_left{kWriters};
  std::atomic<int64_t> bad_reads{0}, bad_update_reads{0}, rounds{0};
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
      while (!go.load()) std::this_thread::yield();
      for (int round = 0; round < kMinRounds || !readers_done(); ++round) {
        store.Update(0, kSize, [&](int64_t, float old) {
          if (!IsWrittenValue(old, kWriters)) bad_update_reads.fetch_add(1);
          return WriterValue(w, round % 2);
        });
        store.CompleteUpdate();
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
  EXPECT_EQ(bad_reads.load(), 0) << "torn or invented values seen by Read()";
  EXPECT_EQ(bad_update_reads.load(), 0) << "torn or invented values seen by Update()";
  EXPECT_EQ(store.version(), static_cast<uint64_t>(rounds.load()));
  // Each element ends as a value one of the writers stored.
  for (float v : store.unsafe_values()) {
    EXPECT_TRUE(IsWrittenValue(v, kWriters) && v != 0.0f) << std::bit_cast<uint32_t>(v);
  }
  // The checker itself rejects mixtures of two writers' values.
  const uint32_t torn = (std::bit_cast<uint32_t>(WriterValue(0, 0)) & 0xffff0000u) |
                        (std::bit_cast<uint32_t>(WriterValue(1, 0)) & 0x0000ffffu);
  EXPECT_FALSE(IsWrittenValue(std::bit_cast<float>(torn), kWriters));
}

TEST(ParameterStore, UnchangedElementsAreNotWrittenBack) {
  // A concurrent writer's store that lands between this update's load and store of an element
  // (simulated inside fn) survives when the update leaves the element unchanged, and is lost
  // (the contract allows it) when the update changes it.
  ParameterStore store(2);
  store.Update(0, 2, [&](int64_t i, float old) {
    store.unsafe_values()[i] = 7.0f;  // "another worker" writes now
    return i == 0 ? old : old + 1.0f;
  });
  EXPECT_EQ(store.unsafe_values()[0], 7.0f);
  EXPECT_EQ(store.unsafe_values()[1], 1.0f);
}

TEST(ParameterStore, UpdateTouchesOnlyItsRange) {
  ParameterStore store(10);
  store.Update(3, 6, [](int64_t i, float) { return static_cast<float>(i); });
  const std::vector<float> expected = {0, 0, 0, 3, 4, 5, 0, 0, 0, 0};
  EXPECT_EQ(std::vector<float>(store.unsafe_values().begin(), store.unsafe_values().end()),
            expected);
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
