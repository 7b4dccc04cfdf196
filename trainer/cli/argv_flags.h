// The command line's checks before Abseil parses it, shared by the commands (train, sparse/train,
// sim/simulate): what Abseil would accept silently but then drop or take from elsewhere.
#ifndef HOGWILD_TRAINER_CLI_ARGV_FLAGS_H_
#define HOGWILD_TRAINER_CLI_ARGV_FLAGS_H_

#include "absl/status/status.h"

namespace hogwild {

// Refuses, on argv as typed (argc entries; "--" ends the flags), with the project's one-line
// "error: ..." wording instead of Abseil's "ERROR: ..." and exit:
//   - a name that is no flag of the program: "unknown flag --lerning_rate; see --help", with
//     "; did you mean --epochs?" when exactly one flag is nearest and within edit distance 2;
//   - a value that does not parse as the flag's type (absl::ParseFlag, as Abseil's parser):
//     "--epochs=abc is not an integer (default 8); see --help";
//   - a flag given twice (Abseil keeps the last one), --name and --noname counting as one:
//     "--epochs is given twice ('--epochs=2' and '--epochs=1'); give it once";
//   - --undefok, --flagfile, --fromenv and --tryfromenv, which let flags be ignored or come
//     from elsewhere than the command line.
// A non-boolean flag without '=' takes the next argument as its value (`--seed -1`), as Abseil
// does. Names are looked up among the flags linked into the program (absl::FindCommandLineFlag),
// so call it in main(). Errors: kInvalidArgument with one line naming the flag. Pure apart from
// reading the flag registry; thread-safe.
absl::Status CheckArgvFlags(int argc, char** argv);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_ARGV_FLAGS_H_
