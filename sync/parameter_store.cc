#include "sync/parameter_store.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "kernels/cpu/optimizer_update.h"
#include "kernels/cpu/sgd_update.h"

namespace hogwild {

ParameterStore::ParameterStore(int64_t num_params) : size_(num_params) {
  HOGWILD_CHECK(num_params >= 0, "ParameterStore: negative size");
  HOGWILD_CHECK(Allocate(), "ParameterStore: out of memory");
}

absl::StatusOr<std::unique_ptr<ParameterStore>> ParameterStore::Create(int64_t num_params) {
  if (num_params < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ParameterStore: %d parameters; the count must be >= 0", num_params));
  }
  std::unique_ptr<ParameterStore> store(new ParameterStore(num_params, NoAllocation{}));
  if (!store->Allocate()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "out of memory for the parameters: %d floats (%d bytes) could not be allocated; use a "
        "smaller model",
        num_params, static_cast<uint64_t>(num_params) * sizeof(float)));
  }
  return store;
}

bool ParameterStore::Allocate() {
  // 64 bytes: one cache line, so the array shares no line with other data (and every vector
  // access of the shared kernels is aligned).
  const size_t bytes = (static_cast<size_t>(size_) * sizeof(float) + 63) / 64 * 64;
  values_.reset(static_cast<float*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes)));
  if (values_ == nullptr) return false;
  std::memset(values_.get(), 0, bytes == 0 ? 64 : bytes);
  return true;
}

uint64_t ParameterStore::Read(absl::Span<float> out) const {
  HOGWILD_CHECK(static_cast<int64_t>(out.size()) == size_, "ParameterStore::Read: size");
  const uint64_t version_before = version();
  cpu::SharedRead(values_.get(), out);
  return version_before;
}

void ParameterStore::SgdUpdateAndRead(const SgdMomentumFn& sgd, absl::Span<const float> grad,
                                      absl::Span<float> velocity, absl::Span<float> out,
                                      int64_t offset) {
  const int64_t n = static_cast<int64_t>(grad.size());
  HOGWILD_CHECK(offset >= 0 && offset + n <= size_ && static_cast<int64_t>(out.size()) == n &&
                    (sgd.momentum == 0.0f || static_cast<int64_t>(velocity.size()) == n),
                "ParameterStore::SgdUpdateAndRead: size");
  cpu::SharedSgdUpdateAndRead(sgd, grad, velocity, values_.get() + offset, out);
}

void ParameterStore::OptimizerUpdateAndRead(const OptimizerFn& fn, int num_slots,
                                            absl::Span<const float> grad, absl::Span<float> s0,
                                            absl::Span<float> s1, bool shared_state,
                                            absl::Span<float> out, int64_t offset) {
  const int64_t n = static_cast<int64_t>(grad.size());
  HOGWILD_CHECK(offset >= 0 && offset + n <= size_ && static_cast<int64_t>(out.size()) == n,
                "ParameterStore::OptimizerUpdateAndRead: size");
  cpu::SharedOptimizerUpdateAndRead(fn, num_slots, grad, s0, s1, shared_state,
                                    values_.get() + offset, out);
}

}  // namespace hogwild
