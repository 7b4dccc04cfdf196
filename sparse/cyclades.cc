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
  const int32_t size = static_cast<int32_t>(examples.size());
  component_.assign(static_cast<size_t>(size), -1);
  std::vector<std::vector<int64_t>> components;
  for (int32_t j = 0; j < size; ++j) {
    const int32_t root = Find(j);
    if (component_[root] < 0) {
      component_[root] = static_cast<int32_t>(components.size());
      components.emplace_back();
    }
    components[component_[root]].push_back(examples[j]);
  }
  // Largest first (ties: the earlier component), each to the least loaded worker.
  std::vector<size_t> by_size(components.size());
  std::iota(by_size.begin(), by_size.end(), size_t{0});
  std::stable_sort(by_size.begin(), by_size.end(), [&](size_t a, size_t b) {
    return components[a].size() > components[b].size();
  });
  out.per_worker.assign(static_cast<size_t>(num_workers_), {});
  std::vector<size_t> load(static_cast<size_t>(num_workers_), 0);
  for (size_t k : by_size) {
    const size_t w = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out.per_worker[w].insert(out.per_worker[w].end(), components[k].begin(),
                             components[k].end());
    load[w] += components[k].size();
  }
  out.components = static_cast<int64_t>(components.size());
  out.largest_component =
      by_size.empty() ? 0 : static_cast<int64_t>(components[by_size.front()].size());
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
