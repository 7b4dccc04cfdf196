// The command line's prelude, shared by every command (train, predict, sparse/train, simulate, the
// study runner) so that all of them read flags alike: the checks before Abseil parses argv (what
// Abseil would accept silently but then drop or take from elsewhere), the parse, --help, and the
// refusal of arguments that are not flags.
#ifndef HOGWILD_TRAINER_CLI_ARGV_FLAGS_H_
#define HOGWILD_TRAINER_CLI_ARGV_FLAGS_H_

#include <initializer_list>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hogwild {

// Refuses, on argv as typed (argc entries; "--" ends the flags), with the project's one-line
// "error: ..." wording instead of Abseil's "ERROR: ..." and exit:
//   - a name that is no flag of the program: "unknown flag --lerning_rate; see --help", with
//     "; did you mean --epochs?" when exactly one flag is nearest and within edit distance 2;
//   - a value that does not parse as the flag's type (absl::ParseFlag, as Abseil's parser):
//     "--epochs=abc is not an integer (default 8); see --help";
//   - a flag typed with an empty value (`--log=$LOG` with LOG unset, or `--log ""`), which would
//     read as "not given": "--log is empty (an unset shell variable?); give it a value or leave
//     it out";
//   - a flag given twice (Abseil keeps the last one), --name and --noname counting as one:
//     "--epochs is given twice ('--epochs=2' and '--epochs=1'); give it once";
//   - --undefok, --flagfile, --fromenv and --tryfromenv, which let flags be ignored or come
//     from elsewhere than the command line.
// A non-boolean flag without '=' takes the next argument as its value (`--seed -1`), as Abseil
// does. Names are looked up among the flags linked into the program (absl::FindCommandLineFlag),
// so call it in main(). Errors: kInvalidArgument with one line naming the flag. Pure apart from
// reading the flag registry; thread-safe.
absl::Status CheckArgvFlags(int argc, char** argv);

// Every command's command line, read the same way: CheckArgvFlags, then Abseil's parser; --help
// (and Abseil's other usage flags) prints the flags defined in files whose path contains
// `flags_file` (a file, or a folder such as "sparse/") on standard output and ends the command with
// exit status 0 (1 when standard output cannot be written); an argument that is not a flag
// (`--hidden 128 128`, anything after `--`) is an error naming it and `command` ("predict takes
// flags only"). Returns the exit status main() returns at once, after printing any error as one
// "error: ..." line on standard error, or nullopt when the flags are parsed and the command goes
// on. It also makes a failed allocation anywhere in the process (operator new, e.g. under `ulimit
// -v`) end the command with one "error: <command>: out of memory ..." line and exit status 1
// instead of std::bad_alloc's abort. Call it once, first, in main().
std::optional<int> ParseCommandLineFlags(int argc, char** argv, absl::string_view command,
                                         absl::string_view flags_file);
// The same, --help listing the flags of files whose path contains any of `flags_files` (a
// command's own flags and shared ones, e.g. trainer/cli/mode_flags.h's).
std::optional<int> ParseCommandLineFlags(int argc, char** argv, absl::string_view command,
                                         std::initializer_list<absl::string_view> flags_files);

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_ARGV_FLAGS_H_
