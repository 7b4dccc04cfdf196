// CYCLADES (Pan, Lam, Tu, Papailiopoulos, Zhang, Jordan, Ramchandran, Ré, Recht, "Cyclades:
// Conflict-free Asynchronous Machine Learning", NIPS 2016, Algorithm 1): lock-free parallel SGD
// without conflicts. A round samples B updates (here: the next B examples of the epoch's shuffled
// order, sampling without replacement), builds their conflict graph (two examples conflict when
// they touch a common coordinate), splits it into connected components and gives whole
// components to the workers. Each worker applies its components' updates one after another;
// workers never touch a coordinate another worker touches in the same round, and a barrier ends
// the round. The result is serially equivalent: it equals sequential SGD over the order
// "round by round, worker 0's updates, then worker 1's, ..." (SerialOrder), bitwise, because
// updates on disjoint coordinates commute exactly.
//
// Here (sparse/policy_workers.h RunSparseEpoch, mode Mode::kCyclades): the components come from a
// union-find over the round's examples keyed by coordinate (O(B + the round's non-zeros)); they
// are dealt to workers largest first, each to the worker with the fewest updates so far (ties:
// the lower worker), the paper's load balancing; a worker applies each component's updates in
// the order's order. Worker 0 plans round r + 1 after applying its share of round r, while the
// others apply theirs (the paper plans in parallel; one planner is the simple first step).
// A coordinate is what the workload's update reads and writes as one unit: a feature of a sparse
// linear model; a user's or an item's factor row in matrix factorization.
#ifndef HOGWILD_SPARSE_CYCLADES_H_
#define HOGWILD_SPARSE_CYCLADES_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace hogwild::sparse {

// One round's plan: per_worker[w] is worker w's examples (ids of the order), in the order it
// applies them. Every example of the round is in exactly one list; two lists never hold
// examples that share a coordinate.
struct CycladesRound {
  std::vector<std::vector<int64_t>> per_worker;  // [W]
  int64_t components = 0;                        // connected components of the round's graph
  int64_t largest_component = 0;                 // examples in the largest
  int64_t busiest_worker = 0;  // examples of the most loaded worker: the round's critical path
};

// A run's plans summed over its rounds, to explain its rate: with B the round's examples, the
// rounds' mean components, mean largest component over B, and mean busiest worker's share
// (busiest_worker / B; 1 / W is perfect balance, 1 a serial round).
struct CycladesStats {
  int64_t rounds = 0;
  int64_t examples = 0;  // summed over the rounds
  int64_t components = 0;
  int64_t largest_component = 0;
  int64_t busiest_worker = 0;
  void Add(const CycladesRound& round, int64_t round_examples) {
    ++rounds;
    examples += round_examples;
    components += round.components;
    largest_component += round.largest_component;
    busiest_worker += round.busiest_worker;
  }
};

// Plans rounds over a workload of `num_coordinates` coordinates for `num_workers` workers.
// Memory: 8 bytes per coordinate (the last round and example that touched it) and O(B) per round.
// Not thread-safe: one planner per run, used by one thread at a time.
class CycladesPlanner {
 public:
  // num_coordinates >= 1 (the largest coordinate id + 1), num_workers >= 1.
  CycladesPlanner(int64_t num_coordinates, int num_workers);

  // Plans the round of `examples` (ids, in the order's order). `coordinates(id, f)` calls
  // f(int64_t c) for each coordinate c in [0, num_coordinates) that example `id` touches
  // (repeats allowed). Overwrites `out`.
  template <typename Coordinates>
  void Plan(absl::Span<const int64_t> examples, Coordinates&& coordinates, CycladesRound& out) {
    BeginRound(examples.size());
    for (size_t j = 0; j < examples.size(); ++j) {
      coordinates(examples[j], [&](int64_t c) { Touch(static_cast<int32_t>(j), c); });
    }
    EndRound(examples, out);
  }

 private:
  void BeginRound(size_t size);
  void Touch(int32_t example, int64_t coordinate);
  void EndRound(absl::Span<const int64_t> examples, CycladesRound& out);
  int32_t Find(int32_t j);

  int num_workers_;
  int32_t round_ = 0;                 // this round's stamp, >= 1
  std::vector<int32_t> stamp_;        // [num_coordinates]: the round that last touched it
  std::vector<int32_t> owner_;        // [num_coordinates]: the example of that round
  std::vector<int32_t> parent_;       // [B]: the union-find forest over the round's examples
  std::vector<int32_t> component_;    // [B]: each example's component, scratch
  // The round's components, reused from round to round: their sizes, starts in members_ (the
  // examples grouped by component), a fill cursor, the size order and the workers' loads.
  std::vector<int64_t> sizes_, starts_, fill_, load_;
  std::vector<int64_t> members_;
  std::vector<int32_t> by_size_;
};

// The serial order a planned epoch equals: its rounds' lists concatenated, worker by worker.
std::vector<int64_t> SerialOrder(const std::vector<CycladesRound>& rounds);

}  // namespace hogwild::sparse

#endif  // HOGWILD_SPARSE_CYCLADES_H_
