#include "trainer/cli/progress_line.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace hogwild {
namespace {

bool IsTerminal(std::FILE* out) { return isatty(fileno(out)) != 0; }

}  // namespace

ProgressSink MakeProgressLine(std::FILE* out, bool may_rewrite) {
  const bool tty = may_rewrite && IsTerminal(out);
  // The previous line's totals: each line's loss is the mean over the steps since that line, so
  // it moves with every line (a worker's log window, 100 steps, can outlast several lines).
  struct Totals {
    int64_t examples = 0;
    double loss_sum = 0.0, loss = 0.0;
  };
  return [out, tty, last = Totals()](const ProgressReport& report) mutable {
    const TrainingMetrics::Snapshot& s = report.metrics;
    if (s.examples_seen > last.examples) {
      last.loss = (s.train_loss_sum - last.loss_sum) / (s.examples_seen - last.examples);
    } else if (last.examples == 0) {
      last.loss = s.recent_train_loss;
    }
    last.examples = s.examples_seen;
    last.loss_sum = s.train_loss_sum;
    const std::string acc =
        s.last_eval ? absl::StrFormat("%.2f%%", 100.0 * s.last_eval->accuracy) : "-";
    const std::string line = absl::StrFormat(
        "epoch %.2f/%d | %.0f examples/s | train loss %.4f | test acc %s | staleness %.2f",
        report.start_epoch + s.epoch, report.epochs,
        s.wall_time_s > 0 ? s.examples_seen / s.wall_time_s : 0.0, last.loss, acc,
        s.staleness_mean);
    if (tty) {
      absl::FPrintF(out, "\r\033[K%s%s", line, report.final ? "\n" : "");
    } else {
      absl::FPrintF(out, "%s\n", line);
    }
    std::fflush(out);
  };
}

absl::Duration ProgressLinePeriod(std::FILE* out, bool may_rewrite) {
  return may_rewrite && IsTerminal(out) ? absl::Milliseconds(250) : absl::Seconds(2);
}

}  // namespace hogwild
