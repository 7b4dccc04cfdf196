// HOGWILD_HD marks functions compiled for both the host and the device. Under nvcc it expands to
// `__host__ __device__`; in plain C++ translation units it is empty. The element-wise math of
// every kernel lives in such functors so that the CPU tests exercise the arithmetic the GPU runs.
#ifndef HOGWILD_CORE_HOST_DEVICE_H_
#define HOGWILD_CORE_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define HOGWILD_HD __host__ __device__ __forceinline__
#else
#define HOGWILD_HD inline
#endif

#endif  // HOGWILD_CORE_HOST_DEVICE_H_
