// The command line's side of option errors: the library names a bad option by its field
// (`TrainerOptions::num_workers=0 is out of range ...`), the user typed a flag (`--workers`).
#ifndef HOGWILD_TRAINER_CLI_OPTION_FLAGS_H_
#define HOGWILD_TRAINER_CLI_OPTION_FLAGS_H_

#include "absl/status/status.h"

namespace hogwild {

// `status` with every option field it names (TrainerOptions::*, LrSchedule::*) replaced by the
// flag that sets it, and every floating-point flag typed on the command line reported as typed:
// the library prints the float32 it computes in (`--momentum=0.999999999` is the float 1), the
// message says `--momentum=0.999999999`. The code and the rest of the message are kept. OK stays
// OK. Reads the flag registry; thread-safe.
absl::Status WithFlagNames(const absl::Status& status);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_OPTION_FLAGS_H_
