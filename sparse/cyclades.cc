#include "sparse/cyclades.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace hogwild::sparse {

CycladesPlanner::CycladesPlanner(int64_t num_coordinates, int num_workers)
    : num_workers_(num_workers),
      stamp_(static_cast<size_t>(num_coordinates), 0),
      owner_(static_cast<size_t>(num_coordinates), 0) {}

void CycladesPlanner::BeginRound(size_t size) {
  if (round_ == std::numeric_limits<int32_t>::max()) {  // the stamps wrap: forget every round
    std::fill(stamp_.begin(), stamp_.end(), 0);
    round_ = 0;
  }
  ++round_;
  parent_.resize(size);
  std::iota(parent_.begin(), parent_.end(), 0);
}

int32_t CycladesPlanner::Find(int32_t j) {
  while (parent_[j] != j) {
    parent_[j] = parent_[parent_[j]];  // path halving
    j = parent_[j];
  }
  return j;
}

void CycladesPlanner::Touch(int32_t example, int64_t coordinate) {
  const size_t c = static_cast<size_t>(coordinate);
  if (stamp_[c] != round_) {
    stamp_[c] = round_;
    owner_[c] = example;
    return;
  }
  const int32_t a = Find(example), b = Find(owner_[c]);
  // The lower root wins, so a component's root is its first example.
  if (a < b) {
    parent_[b] = a;
  } else if (b < a) {
    parent_[a] = b;
  }
}

void CycladesPlanner::EndRound(absl::Span<const int64_t> examples, CycladesRound& out) {
  // The components as one flat array (a counting sort by component, the order kept within each),
  // so that a round allocates nothing once the buffers have grown.
  const int32_t size = static_cast<int32_t>(examples.size());
  component_.assign(static_cast<size_t>(size), -1);
  sizes_.clear();
  for (int32_t j = 0; j < size; ++j) {
    const int32_t root = Find(j);
    if (component_[root] < 0) {
      component_[root] = static_cast<int32_t>(sizes_.size());
      sizes_.push_back(0);
    }
    component_[j] = component_[root];  // a root's is its own: set above
    ++sizes_[component_[j]];
  }
  const size_t num_components = sizes_.size();
  starts_.assign(num_components + 1, 0);
  for (size_t k = 0; k < num_components; ++k) starts_[k + 1] = starts_[k] + sizes_[k];
  members_.resize(static_cast<size_t>(size));
  fill_.assign(starts_.begin(), starts_.end() - 1);
  for (int32_t j = 0; j < size; ++j) members_[fill_[component_[j]]++] = examples[j];
  // Largest first (ties: the earlier component), each to the least loaded worker.
  by_size_.resize(num_components);
  std::iota(by_size_.begin(), by_size_.end(), int32_t{0});
  std::stable_sort(by_size_.begin(), by_size_.end(),
                   [&](int32_t a, int32_t b) { return sizes_[a] > sizes_[b]; });
  out.per_worker.resize(static_cast<size_t>(num_workers_));
  for (std::vector<int64_t>& list : out.per_worker) list.clear();
  load_.assign(static_cast<size_t>(num_workers_), 0);
  for (int32_t k : by_size_) {
    const size_t w =
        static_cast<size_t>(std::min_element(load_.begin(), load_.end()) - load_.begin());
    out.per_worker[w].insert(out.per_worker[w].end(), members_.begin() + starts_[k],
                             members_.begin() + starts_[k + 1]);
    load_[w] += sizes_[k];
  }
  out.components = static_cast<int64_t>(num_components);
  out.largest_component = num_components == 0 ? 0 : sizes_[by_size_.front()];
  out.busiest_worker = *std::max_element(load_.begin(), load_.end());
}

std::vector<int64_t> SerialOrder(const std::vector<CycladesRound>& rounds) {
  std::vector<int64_t> order;
  for (const CycladesRound& round : rounds) {
    for (const std::vector<int64_t>& list : round.per_worker) {
      order.insert(order.end(), list.begin(), list.end());
    }
  }
  return order;
}

}  // namespace hogwild::sparse
