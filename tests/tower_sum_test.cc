// The one averaging arithmetic (sync/tower_sum.h): the worker-order float32 sum, its running form
// bitwise the same (the simulator's), in place, over any slice, and the averages and backup's
// rescale.
#include "sync/tower_sum.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/bitwise.h"

namespace hogwild {
namespace {

using ::hogwild::testing::CountBitwiseDifferences;

std::vector<std::vector<float>> Towers(int count, int64_t n) {
  std::mt19937 rng(7);
  // Magnitudes far apart, so a different association or order would change the rounding.
  std::uniform_real_distribution<float> exponent(-8.0f, 8.0f), sign(-1.0f, 1.0f);
  std::vector<std::vector<float>> towers(count, std::vector<float>(n));
  for (auto& t : towers) {
    for (float& v : t) v = std::ldexp(sign(rng), static_cast<int>(exponent(rng)));
  }
  return towers;
}

TEST(TowerSum, IsTheLeftToRightWorkerOrderSumAndTheRunningFormIsBitwiseTheSame) {
  constexpr int64_t kN = 1031;  // not a multiple of the vector width
  const auto towers = Towers(5, kN);
  std::vector<const float*> pointers;
  for (const auto& t : towers) pointers.push_back(t.data());
  std::vector<float> reference(kN);
  for (int64_t i = 0; i < kN; ++i) {
    float acc = towers[0][i];
    for (size_t w = 1; w < towers.size(); ++w) acc += towers[w][i];
    reference[i] = acc;
  }
  std::vector<float> sum(kN);
  SumTowers(pointers, 0, kN, sum.data());
  EXPECT_EQ(CountBitwiseDifferences(sum, reference), 0);
  // A slice [lo, lo + n) of it.
  std::vector<float> slice(100);
  SumTowers(pointers, 517, 100, slice.data());
  EXPECT_EQ(CountBitwiseDifferences(
                slice, std::vector<float>(reference.begin() + 517, reference.begin() + 617)),
            0);
  // One tower at a time (the simulator never holds them all).
  std::vector<float> running(kN);
  for (size_t w = 0; w < towers.size(); ++w)
    AddTower(static_cast<int>(w), towers[w], absl::MakeSpan(running));
  EXPECT_EQ(CountBitwiseDifferences(running, reference), 0);
  // Not vacuous: another order rounds differently somewhere.
  std::vector<float> reversed(kN);
  for (int w = static_cast<int>(towers.size()) - 1, k = 0; w >= 0; --w, ++k) {
    AddTower(k, towers[w], absl::MakeSpan(reversed));
  }
  EXPECT_GT(CountBitwiseDifferences(reversed, reference), 0);
}

TEST(TowerSum, TheSparseSumIsBitwiseTheDenseSumOfTheDenseForms) {
  constexpr int64_t kN = 257;
  const auto values = Towers(4, kN);
  std::mt19937 rng(11);
  std::bernoulli_distribution touches(0.4);
  // Each tower touches its own random coordinates, in a random order, some of them twice; the
  // coordinates no tower touches stay 0 in both sums.
  std::vector<SparseGradient> towers(values.size(), SparseGradient(kN));
  for (size_t w = 0; w < values.size(); ++w) {
    std::vector<int32_t> order(kN);
    for (int32_t j = 0; j < kN; ++j) order[j] = j;
    std::shuffle(order.begin(), order.end(), rng);
    for (int32_t j : order) {
      if (!touches(rng)) continue;
      towers[w].Accumulate(j, values[w][j]);
      if (j % 5 == 0) towers[w].Accumulate(j, values[(w + 1) % values.size()][j]);
    }
  }
  std::vector<const float*> dense;
  std::vector<const SparseGradient*> sparse;
  for (const SparseGradient& t : towers) {
    dense.push_back(t.dense().data());
    sparse.push_back(&t);
  }
  std::vector<float> reference(kN);
  SumTowers(dense, 0, kN, reference.data());
  SparseGradient sum(kN);
  sum.Accumulate(3, 1.0f);  // a stale sum: SumSparseTowers starts from a cleared one
  SumSparseTowers(sparse, sum);
  EXPECT_EQ(CountBitwiseDifferences(sum.dense(), reference), 0);
  // Its touched coordinates are the union of the towers'.
  int64_t in_union = 0;
  for (int64_t j = 0; j < kN; ++j) {
    bool touched = false;
    for (const SparseGradient& t : towers) touched |= t.dense()[j] != 0.0f;
    in_union += touched;
  }
  EXPECT_EQ(static_cast<int64_t>(sum.touched().size()), in_union);
  // Not vacuous: the reverse worker order rounds differently somewhere.
  std::vector<const SparseGradient*> reversed(sparse.rbegin(), sparse.rend());
  SumSparseTowers(reversed, sum);
  EXPECT_GT(CountBitwiseDifferences(sum.dense(), reference), 0);
}

TEST(TowerSum, AveragesAreTheSumDividedByTheCountEitherWay) {
  constexpr int64_t kN = 37;
  const auto towers = Towers(3, kN);
  std::vector<const float*> pointers;
  for (const auto& t : towers) pointers.push_back(t.data());
  std::vector<float> average(kN), sum(kN), running(kN);
  AverageTowers(pointers, 0, kN, average.data());
  SumTowers(pointers, 0, kN, sum.data());
  for (int64_t i = 0; i < kN; ++i) EXPECT_EQ(average[i], sum[i] / 3.0f);
  DivideSum(3, sum, absl::MakeSpan(running));
  EXPECT_EQ(CountBitwiseDifferences(running, average), 0);
}

TEST(TowerSum, BackupRescalesToTheExamplesUsedOnlyWhenSomeWereLeftOut) {
  EXPECT_EQ(UsedExamplesRescale(10, 10), 1.0f);
  EXPECT_EQ(UsedExamplesRescale(0, 10), 1.0f);  // no counts set
  EXPECT_EQ(UsedExamplesRescale(8, 10), 10.0f / 8.0f);
  std::vector<float> sum = {1.0f, -2.0f};
  RescaleSum(1.25f, sum.data(), 2);
  EXPECT_EQ(sum, (std::vector<float>{1.25f, -2.5f}));
}

}  // namespace
}  // namespace hogwild
