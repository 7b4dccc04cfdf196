// Progress reports of a running training job, for whoever shows them (the command line prints
// one line; research code may log or plot them). The library never writes to the terminal.
#ifndef HOGWILD_TRAINER_METRICS_PROGRESS_H_
#define HOGWILD_TRAINER_METRICS_PROGRESS_H_

#include <cstdint>
#include <functional>

#include "trainer/metrics/training_metrics.h"

namespace hogwild {

struct ProgressReport {
  TrainingMetrics::Snapshot metrics;  // counters since training (or the resume) started
  int64_t epochs = 0;                 // epochs the run was asked for
  // Epochs trained before this run started (a resumed run: the checkpoint's position, e.g. 2.0);
  // start_epoch + metrics.epoch is the run's position out of `epochs`.
  double start_epoch = 0.0;
  // The last report: training has ended and metrics.last_eval is the final evaluation.
  bool final = false;
  // A resumed run's first report, sent once the checkpoint was accepted and before the first
  // step: the checkpoint's global step (its position in epochs is start_epoch); -1 in every
  // other report.
  int64_t resumed_from_step = -1;
};

// Receives the reports, in order, on the thread that called Train(); must not block for long
// (training goes on meanwhile, but the next report waits).
using ProgressSink = std::function<void(const ProgressReport&)>;

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_METRICS_PROGRESS_H_
