#include "trainer/rank_gpus.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace hogwild {

absl::StatusOr<std::vector<int>> RankGpus(const std::vector<int>& listed, const RankHost& host) {
  if (listed.empty()) return absl::InvalidArgumentError("RankGpus: no GPU listed");
  if (host.local_ranks < 1 || host.local_rank < 0 || host.local_rank >= host.local_ranks ||
      host.visible_gpus < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("RankGpus: bad host (local rank %d of %d, %d visible GPUs)",
                        host.local_rank, host.local_ranks, host.visible_gpus));
  }
  absl::flat_hash_set<int> seen;
  for (const int d : listed) {
    if (d < 0 || !seen.insert(d).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("RankGpus: GPU index %d is negative or repeated in gpu:%s", d,
                          absl::StrJoin(listed, ",")));
    }
  }
  const int block = *std::max_element(listed.begin(), listed.end()) + 1;
  const auto as_listed = [&]() -> absl::StatusOr<std::vector<int>> {
    if (block > host.visible_gpus) {
      return absl::FailedPreconditionError(
          absl::StrFormat("--devices=gpu:%s names GPU %d, but this rank sees %d GPU(s)",
                          absl::StrJoin(listed, ","), block - 1, host.visible_gpus));
    }
    return listed;
  };
  if (host.local_ranks == 1) return as_listed();
  // Each rank of the host takes its own block of B GPUs when the host has them all; the sums
  // cannot overflow: block and local_ranks are small (indices of visible devices, ranks).
  if (static_cast<int64_t>(host.local_ranks) * block <= host.visible_gpus) {
    std::vector<int> mapped;
    mapped.reserve(listed.size());
    for (const int d : listed) mapped.push_back(host.local_rank * block + d);
    return mapped;
  }
  if (host.visible_gpus_restricted) return as_listed();
  return absl::FailedPreconditionError(absl::StrFormat(
      "%d ranks run on this host with --devices=gpu:%s, which needs %d GPUs (a block of %d per "
      "rank), but this host has %d: start at most %d rank(s) per host, or give each rank its own "
      "GPUs with CUDA_VISIBLE_DEVICES",
      host.local_ranks, absl::StrJoin(listed, ","), host.local_ranks * block, block,
      host.visible_gpus, host.visible_gpus / block));
}

}  // namespace hogwild
