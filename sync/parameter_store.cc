#include "sync/parameter_store.h"

#include <bit>
#include <cstring>

#include "absl/base/internal/raw_logging.h"

namespace hogwild {

static_assert(std::atomic_ref<float>::is_always_lock_free,
              "the Hogwild contract needs lock-free 32-bit atomics");
static_assert(std::atomic_ref<float>::required_alignment <= alignof(float));

ParameterStore::ParameterStore(int64_t num_params) : size_(num_params) {
  ABSL_RAW_CHECK(num_params >= 0, "ParameterStore: negative size");
  // 64 bytes: one cache line, so the array shares no line with other data.
  const size_t bytes = (static_cast<size_t>(num_params) * sizeof(float) + 63) / 64 * 64;
  values_.reset(static_cast<float*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes)));
  ABSL_RAW_CHECK(values_ != nullptr, "ParameterStore: out of memory");
  std::memset(values_.get(), 0, bytes == 0 ? 64 : bytes);
}

uint64_t ParameterStore::Read(absl::Span<float> out) const {
  ABSL_RAW_CHECK(static_cast<int64_t>(out.size()) == size_, "ParameterStore::Read: size");
  const uint64_t version_before = version();
  float* values = values_.get();
  for (int64_t i = 0; i < size_; ++i) {
    out[i] = std::atomic_ref<float>(values[i]).load(std::memory_order_relaxed);
  }
  return version_before;
}

bool ParameterStore::BitwiseEqual(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

}  // namespace hogwild
