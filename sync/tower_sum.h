// The averaging arithmetic of every synchronous policy, in one place: the sum of the workers'
// [P] arrays (tower gradients, or local_sgd's replicas) element by element in worker order,
// and what each policy makes of it (backup's rescale to the examples used, local_sgd's uniform
// average). TowerAverage (sync/tower_average.h), BackupSync (sync/backup_sync.h), LocalSgd
// (sync/local_sgd.h), MpiTowerAverage (mpi/mpi_tower_average.h, its local towers and the ranks'
// parts) and the simulator (sim/) all call these, so the simulated and the real runs add the
// same float32 numbers in the same order and agree bitwise.
//
// Order: element i of the sum is ((t0[i] + t1[i]) + t2[i]) + ... in float32, workers in the
// order given (ascending worker ids in every caller): fixed, so bitwise reproducible. The
// running form (AddTower) gives bitwise the same values as the one-call form (SumTowers) for
// the same towers in the same order, for callers that never hold all towers at once (the
// simulator computes one tower at a time).
//
// Sparse gradients (the sparse workloads' towers) are summed by SumSparseTowers in the same
// worker order, bitwise the dense sum on every coordinate.
//
// Thread-safety: none inside; the functions are pure apart from their output, and the sync
// policies call them concurrently on disjoint slices [lo, lo + n) of the same arrays.
#ifndef HOGWILD_SYNC_TOWER_SUM_H_
#define HOGWILD_SYNC_TOWER_SUM_H_

#include <cstdint>

#include "absl/types/span.h"
#include "sync/sparse_gradient.h"

namespace hogwild {

// out[i] = towers[0][lo + i] + towers[1][lo + i] + ... + towers[K - 1][lo + i], i in [0, n),
// added left to right in float32.
//   towers: [K] pointers (K >= 1), each to a [>= lo + n] float32 array in host memory
//   out:    [n] float32; may be towers[0] + lo itself (an in-place running sum)
void SumTowers(absl::Span<const float* const> towers, int64_t lo, int64_t n, float* out);

// The sparse form (sync/sparse_gradient.h): sum <- towers[0] + towers[1] + ... + towers[K - 1],
// added with SparseGradient::Add into the cleared `sum` in the order given, so that every
// coordinate is bitwise SumTowers of the towers' dense forms (a tower that did not touch it
// adds +0 there), but for the sign of a zero, and sum.touched() is the union of the towers'.
// O(sum of the towers' touched), not O(P).
//   towers: [K] (K >= 1), each of sum's size P
void SumSparseTowers(absl::Span<const SparseGradient* const> towers, SparseGradient& sum);

// The running form: sum = tower when k == 0, else sum += tower (one SumTowers of {sum, tower}).
// Calling it for k = 0, 1, ..., K - 1 leaves in sum bitwise SumTowers of the K towers.
//   tower, sum: [n] float32, host memory
void AddTower(int k, absl::Span<const float> tower, absl::Span<float> sum);

// out[i] = SumTowers(towers, lo, n)[i] / K (local_sgd's uniform average of K replicas).
void AverageTowers(absl::Span<const float* const> towers, int64_t lo, int64_t n, float* out);

// out[i] = sum[i] / count: the running form's average (sum from AddTower over count towers),
// bitwise AverageTowers. count >= 1; out may be sum.
void DivideSum(int count, absl::Span<const float> sum, absl::Span<float> out);

// Backup workers (sync/backup_sync.h): each gradient was scaled by 1 / whole (the step's whole
// batch), but only `used` of its examples contributed; the sum is multiplied by whole / used to
// be the mean over the examples used. 1 (no rescaling) when all were used or no counts were set
// (used == 0). Pure.
float UsedExamplesRescale(int64_t used, int64_t whole);

// sum[i] *= rescale for i in [0, n), unless rescale == 1 (then sum is not touched).
void RescaleSum(float rescale, float* sum, int64_t n);
// The sparse form: RescaleSum of sum's touched coordinates (bitwise RescaleSum of its dense
// form, whose other elements are 0).
void RescaleSparseSum(float rescale, SparseGradient& sum);

}  // namespace hogwild

#endif  // HOGWILD_SYNC_TOWER_SUM_H_
