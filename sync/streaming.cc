#include "sync/streaming.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/logging.h"

namespace hogwild {

absl::Status CheckStreamingOptions(const StreamingOptions& streaming, int64_t average_every,
                                   int64_t num_params, const char* prefix) {
  int64_t most = std::min<int64_t>(kMaxFragments, average_every);
  if (num_params > 0) most = std::min(most, num_params);
  if (streaming.fragments < 1 || streaming.fragments > most) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%sfragments=%d is out of range; it must be in [1, %d] (at most %d, at most the averaging "
        "period H = %d so that each fragment is exchanged at its own step of it%s)",
        prefix, streaming.fragments, std::max<int64_t>(1, most), kMaxFragments, average_every,
        num_params > 0 ? absl::StrFormat(", at most the %d parameters", num_params) : ""));
  }
  if (streaming.overlap_steps < 0 || streaming.overlap_steps >= average_every) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%soverlap_steps=%d is out of range; it must be in [0, %d] (shorter than the averaging "
        "period H = %d, so a fragment's exchange is merged before its next one)",
        prefix, streaming.overlap_steps, average_every - 1, average_every));
  }
  if (!(streaming.mix_alpha >= 0.0f && streaming.mix_alpha < 1.0f)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%smix_alpha=%g is out of range; it must be in [0, 1) (0 replaces the replica's fragment "
        "by the exchanged one)",
        prefix, streaming.mix_alpha));
  }
  return absl::OkStatus();
}

int FragmentSchedule::ExchangedAt(int64_t step) const {
  if (step < 1) return -1;
  const int64_t r = step % period_;
  // offset_p = floor(p H / F) = r has at most one solution, the smallest p with p H / F >= r.
  const int64_t p = (r * fragments_ + period_ - 1) / period_;
  if (p >= fragments_ || offset(static_cast<int>(p)) != r) return -1;
  return static_cast<int>(p);
}

int64_t FragmentSchedule::LastExchange(int p, int64_t step) const {
  const int64_t first = offset(p) == 0 ? period_ : offset(p);
  if (step < first) return 0;
  return first + (step - first) / period_ * period_;
}

void MixIntoReplica(float alpha, absl::Span<const float> theta, absl::Span<float> replica) {
  HOGWILD_CHECK(theta.size() == replica.size(), "MixIntoReplica: theta and replica differ in size");
  if (alpha == 0.0f) {
    std::copy(theta.begin(), theta.end(), replica.begin());
    return;
  }
  const float keep = 1.0f - alpha;
  for (size_t i = 0; i < replica.size(); ++i) replica[i] = alpha * replica[i] + keep * theta[i];
}

}  // namespace hogwild
