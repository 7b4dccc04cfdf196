#include "sync/parameter_store.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "kernels/functors.h"

// The vector path: SSE2 is the x86-64 baseline. ThreadSanitizer cannot see inside inline
// assembly, so its builds take the atomic_ref loops (same results).
#if defined(__SANITIZE_THREAD__)
#define HOGWILD_STORE_SIMD 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HOGWILD_STORE_SIMD 0
#endif
#endif
#if !defined(HOGWILD_STORE_SIMD) && defined(__SSE2__) && defined(__x86_64__)
#define HOGWILD_STORE_SIMD 1
#endif
#if !defined(HOGWILD_STORE_SIMD)
#define HOGWILD_STORE_SIMD 0
#endif

#if HOGWILD_STORE_SIMD
#include <immintrin.h>
#endif

namespace hogwild {

static_assert(std::atomic_ref<float>::is_always_lock_free,
              "the Hogwild contract needs lock-free 32-bit atomics");
static_assert(std::atomic_ref<float>::required_alignment <= alignof(float));

namespace {

#if HOGWILD_STORE_SIMD
struct Float4 {
  float v[4];
};

// One 16-byte load / store of shared elements, as assembly so that the compiler treats it as
// exactly one access that it may not split, repeat or drop (see the contract in the header).
// `p` is 16-byte aligned: the array is 64-byte aligned and the loops step by 4 from 0.
inline __m128 LoadShared(const float* p) {
  __m128 v;
  asm volatile("movaps %1, %0" : "=x"(v) : "m"(*reinterpret_cast<const Float4*>(p)));
  return v;
}

inline void StoreShared(float* p, __m128 v) {
  asm volatile("movaps %1, %0" : "=m"(*reinterpret_cast<Float4*>(p)) : "x"(v));
}
#endif

}  // namespace

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
  // 64 bytes: one cache line, so the array shares no line with other data.
  const size_t bytes = (static_cast<size_t>(size_) * sizeof(float) + 63) / 64 * 64;
  values_.reset(static_cast<float*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes)));
  if (values_ == nullptr) return false;
  std::memset(values_.get(), 0, bytes == 0 ? 64 : bytes);
  return true;
}

uint64_t ParameterStore::Read(absl::Span<float> out) const {
  HOGWILD_CHECK(static_cast<int64_t>(out.size()) == size_, "ParameterStore::Read: size");
  const uint64_t version_before = version();
  float* values = values_.get();
  int64_t i = 0;
#if HOGWILD_STORE_SIMD
  for (; i + 4 <= size_; i += 4) _mm_storeu_ps(out.data() + i, LoadShared(values + i));
#endif
  for (; i < size_; ++i) {
    out[i] = std::atomic_ref<float>(values[i]).load(std::memory_order_relaxed);
  }
  return version_before;
}

void ParameterStore::SgdUpdateAndRead(absl::Span<const float> grad, float lr, float weight_decay,
                                      absl::Span<float> out) {
  HOGWILD_CHECK(static_cast<int64_t>(grad.size()) == size_ &&
                     static_cast<int64_t>(out.size()) == size_,
                 "ParameterStore::SgdUpdateAndRead: size");
  const float* g = grad.data();
  float* o = out.data();
  int64_t i = 0;
#if HOGWILD_STORE_SIMD
  float* values = values_.get();
  const __m128 lr4 = _mm_set1_ps(lr);
  const __m128 wd4 = _mm_set1_ps(weight_decay);
  for (; i + 4 <= size_; i += 4) {
    const __m128 p = LoadShared(values + i);
    // SgdMomentumFn's d = grad + weight_decay * param; param - lr * d, rounded step by step.
    const __m128 d = _mm_add_ps(_mm_loadu_ps(g + i), _mm_mul_ps(wd4, p));
    const __m128 q = _mm_sub_ps(p, _mm_mul_ps(lr4, d));
    _mm_storeu_ps(o + i, q);
    const int unchanged = _mm_movemask_ps(
        _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_castps_si128(p), _mm_castps_si128(q))));
    if (unchanged == 0) {
      StoreShared(values + i, q);
    } else if (unchanged != 0xF) {
      // Rare (a zero gradient in some lanes): write only the lanes that changed.
      for (int lane = 0; lane < 4; ++lane) {
        if ((unchanged >> lane & 1) == 0) {
          std::atomic_ref<float>(values[i + lane]).store(o[i + lane], std::memory_order_relaxed);
        }
      }
    }
  }
#endif
  const SgdMomentumFn sgd{lr, 0.0f, weight_decay};
  UpdateAndRead(
      i, size_,
      [&](int64_t j, float p) {
        float unused = 0.0f;
        return sgd(p, g[j], unused);
      },
      o);
}

}  // namespace hogwild
