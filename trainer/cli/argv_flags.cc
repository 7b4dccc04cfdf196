#include "trainer/cli/argv_flags.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace hogwild {

absl::Status CheckArgvFlags(int argc, char** argv) {
  absl::flat_hash_map<std::string, std::string> seen;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) continue;
    const absl::string_view name = arg.substr(0, arg.find('='));
    if (name == "undefok" || name == "flagfile" || name == "fromenv" || name == "tryfromenv") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s is not supported: give every flag on the command line, by its own name", name));
    }
    // --noresume is --resume=false: the same flag.
    std::string key(name);
    if (absl::StartsWith(key, "no") && absl::FindCommandLineFlag(key) == nullptr &&
        absl::FindCommandLineFlag(key.substr(2)) != nullptr) {
      key = key.substr(2);
    }
    // A value such as the -1 of `--seed -1` is not a flag; unknown names are Abseil's to refuse.
    if (absl::FindCommandLineFlag(key) == nullptr) continue;
    const auto [it, inserted] = seen.emplace(key, argv[i]);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s is given twice ('%s' and '%s'); give it once", key, it->second, argv[i]));
    }
  }
  return absl::OkStatus();
}

}  // namespace hogwild
