// The command line's progress display: one line per report, rewritten in place on a terminal.
#ifndef HOGWILD_TRAINER_CLI_PROGRESS_LINE_H_
#define HOGWILD_TRAINER_CLI_PROGRESS_LINE_H_

#include <cstdio>

#include "absl/time/time.h"
#include "trainer/metrics/progress.h"

namespace hogwild {

// A ProgressSink writing "epoch 1.25/8 | 51234 examples/s | train loss ... | test acc ... |
// staleness ..." to `out` (the train loss: the mean over the examples trained since the previous
// line; the last one's when none were): on a terminal the line is redrawn in place (carriage return
// and ANSI erase-line), elsewhere (a file, a pipe) each report is a line of its own. `out` must
// outlive the sink. The sink is called from one thread at a time (Train()'s contract).
// `may_rewrite` = false prints whole lines even on a terminal (a rank under mpirun, whose
// terminal may be a pseudo-terminal in front of a redirected mpirun).
ProgressSink MakeProgressLine(std::FILE* out, bool may_rewrite = true);

// How often the progress line is redrawn: often on a terminal (unless !may_rewrite), rarely
// into a file.
absl::Duration ProgressLinePeriod(std::FILE* out, bool may_rewrite = true);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_PROGRESS_LINE_H_
