// The command line's checks before Abseil parses it, shared by the commands (train, sparse/train,
// sim/simulate): what Abseil would accept silently but then drop or take from elsewhere.
#ifndef HOGWILD_TRAINER_CLI_ARGV_FLAGS_H_
#define HOGWILD_TRAINER_CLI_ARGV_FLAGS_H_

#include "absl/status/status.h"

namespace hogwild {

// Refuses, on argv as typed (argc entries; "--" ends the flags):
//   - a flag given twice (Abseil keeps the last one), --name and --noname counting as one:
//     "--epochs is given twice ('--epochs=2' and '--epochs=1'); give it once";
//   - --undefok, --flagfile, --fromenv and --tryfromenv, which let flags be ignored or come
//     from elsewhere than the command line.
// Only names of flags linked into the program count (absl::FindCommandLineFlag), so call it
// after the flags are registered (any time in main()); an unknown name or a value such as the
// -1 of `--seed -1` is left for Abseil's parser. Errors: kInvalidArgument with one line naming
// the flag. Pure apart from reading the flag registry; thread-safe.
absl::Status CheckArgvFlags(int argc, char** argv);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_ARGV_FLAGS_H_
