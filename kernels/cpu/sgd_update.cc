#include "kernels/cpu/sgd_update.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>

#include "absl/base/optimization.h"
#include "core/logging.h"
#include "kernels/cpu/shared_element.h"

// SSE2 is the x86-64 baseline, so the vector loops need no runtime dispatch.
#if defined(__SSE2__) && defined(__x86_64__)
#define HOGWILD_SGD_SIMD 1
#include <immintrin.h>
#else
#define HOGWILD_SGD_SIMD 0
#endif

// The shared (Hogwild) loops use inline assembly, which ThreadSanitizer cannot see into: its
// builds take the std::atomic_ref loops for the shared array (same results). The plain loop
// keeps its vectors: TSan instruments them like any other access.
#if defined(__SANITIZE_THREAD__)
#define HOGWILD_SHARED_SIMD 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HOGWILD_SHARED_SIMD 0
#endif
#endif
#if !defined(HOGWILD_SHARED_SIMD)
#define HOGWILD_SHARED_SIMD HOGWILD_SGD_SIMD
#endif

namespace hogwild::cpu {
namespace {

// One shared element: kernels/cpu/shared_element.h, the result copied to *out.
inline void SharedElement(const SgdMomentumFn& sgd, float grad, float& velocity, float* element,
                          float* out) {
  *out = SharedSgdElement(sgd, grad, velocity, element);
}

inline float LoadRelaxed(const float* element) { return SharedLoad(element); }

#if HOGWILD_SGD_SIMD
// SgdMomentumFn on four lanes: the same operations in the same order (d = g + wd * p;
// v = m * v + d; p - lr * d), each rounded separately.
template <bool kMomentum>
inline __m128 SgdStep4(__m128 param, __m128 grad, __m128& velocity, __m128 lr, __m128 momentum,
                       __m128 weight_decay) {
  __m128 d = _mm_add_ps(grad, _mm_mul_ps(weight_decay, param));
  if constexpr (kMomentum) {
    velocity = _mm_add_ps(_mm_mul_ps(momentum, velocity), d);
    d = velocity;
  }
  return _mm_sub_ps(param, _mm_mul_ps(lr, d));
}
#endif

#if HOGWILD_SHARED_SIMD
struct Float4 {
  float v[4];
};

// One 16-byte load / store of shared elements, as assembly so that the compiler treats it as
// exactly one access that it may not split, repeat or drop (see the contract in the header).
// `p` is 16-byte aligned (movaps faults otherwise).
inline __m128 LoadShared(const float* p) {
  __m128 v;
  asm volatile("movaps %1, %0" : "=x"(v) : "m"(*reinterpret_cast<const Float4*>(p)));
  return v;
}

inline void StoreShared(float* p, __m128 v) {
  asm volatile("movaps %1, %0" : "=m"(*reinterpret_cast<Float4*>(p)) : "x"(v));
}

// Elements of `p` before its first 16-byte boundary, at most n.
int64_t ElementsBeforeAlignment(const float* p, int64_t n) {
  const uintptr_t misalignment = reinterpret_cast<uintptr_t>(p) % 16;
  return std::min<int64_t>(n, misalignment == 0 ? 0 : (16 - misalignment) / sizeof(float));
}
#endif

template <bool kMomentum>
void PlainLoop(const SgdMomentumFn& sgd, int64_t n, const float* grad, float* velocity,
               float* params) {
  int64_t i = 0;
#if HOGWILD_SGD_SIMD
  // GCC's -O2 ("very cheap" cost model) does not vectorize the functor loop.
  const __m128 lr = _mm_set1_ps(sgd.lr);
  const __m128 momentum = _mm_set1_ps(sgd.momentum);
  const __m128 weight_decay = _mm_set1_ps(sgd.weight_decay);
  for (; i + 4 <= n; i += 4) {
    __m128 v = kMomentum ? _mm_loadu_ps(velocity + i) : _mm_setzero_ps();
    const __m128 q = SgdStep4<kMomentum>(_mm_loadu_ps(params + i), _mm_loadu_ps(grad + i), v, lr,
                                         momentum, weight_decay);
    if constexpr (kMomentum) _mm_storeu_ps(velocity + i, v);
    _mm_storeu_ps(params + i, q);
  }
#endif
  float unused = 0.0f;
  for (; i < n; ++i) params[i] = sgd(params[i], grad[i], kMomentum ? velocity[i] : unused);
}

template <bool kMomentum>
void SharedLoop(const SgdMomentumFn& sgd, int64_t n, const float* grad, float* velocity,
                float* shared, float* out) {
  float unused = 0.0f;
  int64_t i = 0;
#if HOGWILD_SHARED_SIMD
  for (const int64_t head = ElementsBeforeAlignment(shared, n); i < head; ++i) {
    SharedElement(sgd, grad[i], kMomentum ? velocity[i] : unused, shared + i, out + i);
  }
  // Four elements per instruction instead of one (the effect: "What the profile showed" in
  // benchmarks/results/2026-12-02-throughput-and-pytorch.md).
  // Plain locals (a struct of them was kept in memory and reloaded every iteration).
  const __m128 lr = _mm_set1_ps(sgd.lr);
  const __m128 momentum = _mm_set1_ps(sgd.momentum);
  const __m128 weight_decay = _mm_set1_ps(sgd.weight_decay);
  for (; i + 4 <= n; i += 4) {
    const __m128 p = LoadShared(shared + i);
    __m128 v = kMomentum ? _mm_loadu_ps(velocity + i) : _mm_setzero_ps();
    const __m128 q = SgdStep4<kMomentum>(p, _mm_loadu_ps(grad + i), v, lr, momentum, weight_decay);
    if constexpr (kMomentum) _mm_storeu_ps(velocity + i, v);
    _mm_storeu_ps(out + i, q);
    const int unchanged = _mm_movemask_ps(
        _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_castps_si128(p), _mm_castps_si128(q))));
    if (ABSL_PREDICT_TRUE(unchanged == 0)) {
      StoreShared(shared + i, q);
    } else if (unchanged != 0xF) {
      // Rare (a zero step in some lanes): write only the lanes that changed.
      for (int lane = 0; lane < 4; ++lane) {
        if ((unchanged >> lane & 1) == 0) {
          std::atomic_ref<float>(shared[i + lane]).store(out[i + lane], std::memory_order_relaxed);
        }
      }
    }
  }
#endif
  for (; i < n; ++i) {
    SharedElement(sgd, grad[i], kMomentum ? velocity[i] : unused, shared + i, out + i);
  }
}

}  // namespace

void SgdUpdate(const SgdMomentumFn& sgd, absl::Span<const float> grad, absl::Span<float> velocity,
               absl::Span<float> params) {
  const int64_t n = static_cast<int64_t>(params.size());
  HOGWILD_CHECK(grad.size() == params.size(), "SgdUpdate: grad and params differ in size");
  if (sgd.momentum != 0.0f) {
    HOGWILD_CHECK(velocity.size() == params.size(), "SgdUpdate: velocity and params differ");
    PlainLoop<true>(sgd, n, grad.data(), velocity.data(), params.data());
  } else {
    PlainLoop<false>(sgd, n, grad.data(), nullptr, params.data());
  }
}

void SharedSgdUpdateAndRead(const SgdMomentumFn& sgd, absl::Span<const float> grad,
                            absl::Span<float> velocity, float* shared, absl::Span<float> out) {
  const int64_t n = static_cast<int64_t>(out.size());
  HOGWILD_CHECK(grad.size() == out.size(), "SharedSgdUpdateAndRead: grad and out differ");
  if (sgd.momentum != 0.0f) {
    HOGWILD_CHECK(velocity.size() == out.size(), "SharedSgdUpdateAndRead: velocity and out differ");
    SharedLoop<true>(sgd, n, grad.data(), velocity.data(), shared, out.data());
  } else {
    SharedLoop<false>(sgd, n, grad.data(), nullptr, shared, out.data());
  }
}

void SharedRead(const float* shared, absl::Span<float> out) {
  const int64_t n = static_cast<int64_t>(out.size());
  float* o = out.data();
  int64_t i = 0;
#if HOGWILD_SHARED_SIMD
  for (const int64_t head = ElementsBeforeAlignment(shared, n); i < head; ++i) {
    o[i] = LoadRelaxed(shared + i);
  }
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(o + i, LoadShared(shared + i));
#endif
  for (; i < n; ++i) o[i] = LoadRelaxed(shared + i);
}

}  // namespace hogwild::cpu
