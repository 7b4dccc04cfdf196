// CYCLADES (sparse/cyclades.h): the planner's components against a naive breadth-first search of
// the conflict graph on random graphs (no coordinate shared across workers, every example once,
// the order kept within a component, the load balanced to within the largest component), and the
// trainer's cyclades epochs equal sequential SGD over the order the plan reports, bitwise, for
// both linear models with 1 to 4 workers, shuffled epochs, a decaying rate and weight decay;
// a run resumed from a checkpoint equals the whole run with 3 workers, and the run reports its
// plans (rounds, components, busiest worker).
#include "sparse/cyclades.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <random>
#include <set>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/splitmix64.h"
#include "gtest/gtest.h"
#include "kernels/functors.h"
#include "sparse/linear_loss.h"
#include "sparse/sparse_train.h"
#include "sparse/synthetic.h"
#include "tests/expect_error.h"
#include "tests/sparse_resume.h"

namespace hogwild::sparse {
namespace {

// The connected components of the examples' conflict graph, by breadth-first search over pairs
// (O(B^2 k^2)): the reference the union-find is held to. component[j] for example j.
std::vector<int> NaiveComponents(const std::vector<std::vector<int64_t>>& coords) {
  const size_t n = coords.size();
  std::vector<int> component(n, -1);
  int next = 0;
  auto conflict = [&](size_t a, size_t b) {
    for (int64_t x : coords[a]) {
      if (std::find(coords[b].begin(), coords[b].end(), x) != coords[b].end()) return true;
    }
    return false;
  };
  for (size_t s = 0; s < n; ++s) {
    if (component[s] >= 0) continue;
    std::vector<size_t> frontier = {s};
    component[s] = next;
    while (!frontier.empty()) {
      const size_t a = frontier.back();
      frontier.pop_back();
      for (size_t b = 0; b < n; ++b) {
        if (component[b] < 0 && conflict(a, b)) {
          component[b] = next;
          frontier.push_back(b);
        }
      }
    }
    ++next;
  }
  return component;
}

TEST(CycladesPlanner, ComponentsAreTheConflictGraphsAndNeverShareACoordinate) {
  std::mt19937_64 rng(7);
  int rounds_with_several_components = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t num_coordinates = std::uniform_int_distribution<int64_t>(5, 400)(rng);
    const int workers = std::uniform_int_distribution<int>(1, 5)(rng);
    const size_t round = std::uniform_int_distribution<size_t>(1, 80)(rng);
    const int per_example = std::uniform_int_distribution<int>(1, 4)(rng);
    SCOPED_TRACE(absl::StrFormat("trial %d: %d coordinates, %d workers, %d examples x %d", trial,
                                 num_coordinates, workers, round, per_example));
    // Example ids 1000 + j (ids are not positions), each with its coordinates (repeats allowed).
    std::vector<std::vector<int64_t>> coords(round);
    std::vector<int64_t> ids(round);
    for (size_t j = 0; j < round; ++j) {
      ids[j] = 1000 + static_cast<int64_t>(j);
      for (int k = 0; k < per_example; ++k) {
        coords[j].push_back(std::uniform_int_distribution<int64_t>(0, num_coordinates - 1)(rng));
      }
    }
    CycladesPlanner planner(num_coordinates, workers);
    CycladesRound plan;
    // Two rounds through one planner: the second must not see the first's coordinates.
    for (int again = 0; again < 2; ++again) {
      planner.Plan(
          ids, [&](int64_t id, auto&& f) { for (int64_t c : coords[id - 1000]) f(c); }, plan);
    }
    const std::vector<int> want = NaiveComponents(coords);
    const int num_components = *std::max_element(want.begin(), want.end()) + 1;
    EXPECT_EQ(plan.components, num_components);
    if (num_components > 1) ++rounds_with_several_components;
    ASSERT_EQ(plan.per_worker.size(), static_cast<size_t>(workers));
    std::vector<int> seen(round, 0), worker_of_component(num_components, -1);
    std::vector<int64_t> sizes(num_components, 0);
    for (int j : want) ++sizes[j];
    size_t max_load = 0, min_load = round;
    for (int w = 0; w < workers; ++w) {
      const std::vector<int64_t>& list = plan.per_worker[w];
      max_load = std::max(max_load, list.size());
      min_load = std::min(min_load, list.size());
      for (size_t k = 0; k < list.size(); ++k) {
        const size_t j = static_cast<size_t>(list[k] - 1000);
        ++seen[j];
        int& owner = worker_of_component[want[j]];
        EXPECT_TRUE(owner < 0 || owner == w) << "a component split across workers";
        owner = w;
        // Within a component, the order's order.
        for (size_t later = k + 1; later < list.size(); ++later) {
          const size_t m = static_cast<size_t>(list[later] - 1000);
          if (want[m] == want[j]) {
            EXPECT_LT(j, m);
          }
        }
      }
    }
    EXPECT_EQ(seen, std::vector<int>(round, 1));
    EXPECT_EQ(plan.largest_component, *std::max_element(sizes.begin(), sizes.end()));
    EXPECT_EQ(plan.busiest_worker, static_cast<int64_t>(max_load));
    // Greedy largest-first: no worker ends more than one largest component above another.
    EXPECT_LE(max_load - min_load, static_cast<size_t>(plan.largest_component));
    // No coordinate in two workers' lists.
    std::vector<int> coordinate_owner(num_coordinates, -1);
    for (int w = 0; w < workers; ++w) {
      for (int64_t id : plan.per_worker[w]) {
        for (int64_t c : coords[id - 1000]) {
          EXPECT_TRUE(coordinate_owner[c] < 0 || coordinate_owner[c] == w);
          coordinate_owner[c] = w;
        }
      }
    }
  }
  EXPECT_GT(rounds_with_several_components, 20) << "the random graphs test too little";
}

SparseDataset Synthetic(int64_t n, int64_t d, int nnz) {
  absl::StatusOr<SyntheticData> out = GenerateRcv1Like(
      {.num_examples = n, .num_features = d, .mean_nnz = nnz, .noise_std = 0.1, .seed = 3});
  EXPECT_TRUE(out.ok()) << out.status();
  return std::move(out->data);
}

// Sequential batch-1 SGD over `order`, from the definitions (linear_loss.h, SgdMomentumFn).
void SequentialSteps(const SparseTrainOptions& o, const SparseDataset& data,
                     const std::vector<int64_t>& order, float lr, std::vector<float>& w) {
  const SgdMomentumFn sgd{.lr = lr, .momentum = 0.0f, .weight_decay = o.weight_decay};
  for (int64_t i : order) {
    float margin = 0.0f;
    for (int64_t k = data.row_offsets[i]; k < data.row_offsets[i + 1]; ++k) {
      margin += w[data.indices[k]] * data.values[k];
    }
    const float c = LinearLoss(o.model, margin, data.labels[i]).slope;
    for (int64_t k = data.row_offsets[i]; k < data.row_offsets[i + 1]; ++k) {
      float unused = 0.0f;
      w[data.indices[k]] = sgd(w[data.indices[k]], c * data.values[k], unused);
    }
  }
}

TEST(Cyclades, TrainingIsSequentialSgdInThePlansOrderBitwise) {
  // A sparse set (many components per round) and a dense one (a few large components).
  for (const auto& [d, nnz] : {std::pair{20000, 6}, std::pair{300, 12}}) {
    const SparseDataset data = Synthetic(900, d, nnz);
    for (LinearModel model : {LinearModel::kLogistic, LinearModel::kHinge}) {
      for (int workers : {1, 2, 4}) {
        SCOPED_TRACE(absl::StrFormat("D %d, %s, %d workers", d, LinearModelName(model), workers));
        const SparseTrainOptions o{.model = model,
                                   .mode = Mode::kCyclades,
                                   .num_workers = workers,
                                   .batch_size = 64,
                                   .epochs = 3,
                                   .lr = 0.5f,
                                   .lr_decay = 0.8f,
                                   .weight_decay = 0.001f,
                                   .seed = 11};
        absl::StatusOr<SparseTrainResult> result = TrainSparse(o, data, nullptr);
        ASSERT_TRUE(result.ok()) << result.status();
        EXPECT_EQ(result->updates, 3 * 900);

        std::vector<float> w(d, 0.0f);
        std::vector<int64_t> order(900);
        CycladesPlanner planner(d, workers);
        int64_t components = 0, rounds = 0;
        for (int epoch = 0; epoch < o.epochs; ++epoch) {
          std::iota(order.begin(), order.end(), int64_t{0});
          std::mt19937_64 rng(SplitMix64(o.seed) + static_cast<uint64_t>(epoch));
          std::shuffle(order.begin(), order.end(), rng);
          std::vector<CycladesRound> plan;
          for (size_t lo = 0; lo < order.size(); lo += 64) {
            plan.emplace_back();
            planner.Plan(absl::MakeConstSpan(order).subspan(lo, std::min<size_t>(64, 900 - lo)),
                         [&](int64_t i, auto&& f) {
                           for (int32_t c : data.row_indices(i)) f(c);
                         },
                         plan.back());
            components += plan.back().components;
            ++rounds;
          }
          const float lr = static_cast<float>(static_cast<double>(o.lr) *
                                             std::pow(static_cast<double>(o.lr_decay), epoch));
          SequentialSteps(o, data, SerialOrder(plan), lr, w);
        }
        EXPECT_EQ(result->weights, w);
        if (d == 20000) {
          EXPECT_GT(components, 4 * rounds) << "too few components to test";
        }
      }
    }
  }
}

TEST(Cyclades, ResumesBitwiseWithSeveralWorkers) {
  // Serially equivalent, so deterministic with any worker count: a run stopped after 2 epochs
  // and resumed equals the run of 4.
  const SparseDataset data = Synthetic(600, 300, 6);
  const SparseTrainOptions o{
      .mode = Mode::kCyclades, .num_workers = 3, .batch_size = 50, .epochs = 4, .lr_decay = 0.7f};
  testing::ExpectResumeIsBitwise(o, data, /*first_epochs=*/2,
                                 ::testing::TempDir() + "/cyclades_resume");
}

TEST(Cyclades, TheRunReportsItsPlans) {
  // A round of 6 examples in 3 components of sizes 3, 2, 1 over 2 workers: {3} and {2, 1}.
  SparseDataset data;
  data.num_features = 4;
  data.row_offsets = {0, 1, 2, 3, 4, 5, 6};
  data.indices = {0, 0, 0, 1, 1, 2};
  data.values.assign(6, 1.0f);
  data.labels = {1, -1, 1, -1, 1, -1};
  const SparseTrainOptions o{.mode = Mode::kCyclades,
                             .num_workers = 2,
                             .batch_size = 6,
                             .epochs = 3,
                             .shuffle = false};
  absl::StatusOr<SparseTrainResult> r = TrainSparse(o, data, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  const CycladesStats& s = r->epochs.back().cyclades;
  EXPECT_EQ(s.rounds, 3);
  EXPECT_EQ(s.examples, 18);
  EXPECT_EQ(s.components, 9);
  EXPECT_EQ(s.largest_component, 9);
  EXPECT_EQ(s.busiest_worker, 9);
  EXPECT_EQ(r->epochs.front().cyclades.rounds, 1);  // the report holds the run so far
}

TEST(Cyclades, TheRoundMustGiveEveryWorkerAnUpdate) {
  const SparseDataset data = Synthetic(100, 50, 5);
  const SparseTrainOptions o{.mode = Mode::kCyclades, .num_workers = 4, .batch_size = 3};
  testing::ExpectError(TrainSparse(o, data, nullptr).status(), absl::StatusCode::kInvalidArgument,
                       {"--batch_size=3 is out of range [4, 100] in cyclades mode: it is the "
                        "updates each round samples and splits into conflict-free components "
                        "over the workers"});
}

}  // namespace
}  // namespace hogwild::sparse
