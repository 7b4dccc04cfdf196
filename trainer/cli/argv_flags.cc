#include "trainer/cli/argv_flags.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/commandlineflag.h"
#include "absl/flags/internal/parse.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/marshalling.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace hogwild {
namespace {

// Levenshtein distance (insertions, deletions, substitutions), for did-you-mean hints on flag
// names of a few dozen characters: one row of the dynamic program.
int EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "; did you mean --epochs?" when exactly one registered flag is nearest to `name` and within
// edit distance 2, else "".
std::string DidYouMean(absl::string_view name) {
  int best = 3;
  std::vector<std::string> nearest;
  for (const auto& [known, flag] : absl::GetAllFlags()) {
    const int d = EditDistance(name, known);
    if (d < best) {
      best = d;
      nearest.clear();
    }
    if (d == best) nearest.emplace_back(known);
  }
  return nearest.size() == 1 ? absl::StrFormat("; did you mean --%s?", nearest[0]) : "";
}

// What a value of `flag`'s type looks like, or "" for a type not listed here (Abseil's parser
// then judges the value).
std::string ExpectedValue(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<bool>()) return "true or false";
  if (flag.IsOfType<int32_t>()) return "an integer in [-2147483648, 2147483647]";
  if (flag.IsOfType<int64_t>()) return "an integer";
  if (flag.IsOfType<uint64_t>()) return "an integer >= 0";
  if (flag.IsOfType<double>() || flag.IsOfType<float>()) return "a number";
  return "";
}

// Whether `value` parses as T (absl::ParseFlag, what the parser calls), if `flag` is of type T.
template <typename T>
std::optional<bool> ParsesAsType(const absl::CommandLineFlag& flag, absl::string_view value) {
  if (!flag.IsOfType<T>()) return std::nullopt;
  T parsed;
  std::string error;
  return absl::ParseFlag(value, &parsed, &error);
}

// Whether Abseil will parse `value` as `flag`'s type; true for a type not listed here (Abseil's
// parser then judges the value).
bool ParsesAs(const absl::CommandLineFlag& flag, absl::string_view value) {
  for (const std::optional<bool> parses :
       {ParsesAsType<bool>(flag, value), ParsesAsType<int32_t>(flag, value),
        ParsesAsType<int64_t>(flag, value), ParsesAsType<uint64_t>(flag, value),
        ParsesAsType<double>(flag, value), ParsesAsType<float>(flag, value)}) {
    if (parses.has_value()) return *parses;
  }
  return true;
}

absl::Status CheckValue(const absl::CommandLineFlag& flag, absl::string_view value) {
  // Empty is refused whatever the flag's type: for a path or a list it would parse, and read as
  // the flag not given (a log not written, standard output instead of a file).
  if (value.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s is empty (an unset shell variable?); give it a value or leave it out", flag.Name()));
  }
  if (ParsesAs(flag, value)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("--%s=%s is not %s (default %s); see --help",
                                                    flag.Name(), value, ExpectedValue(flag),
                                                    flag.DefaultValue()));
}

// The out-of-memory line, formatted before any allocation can fail (set once, before any thread
// starts).
std::string& OutOfMemoryLine() {
  static std::string* const line = new std::string;
  return *line;
}

// operator new failed: nothing more can be allocated, so the preformatted line is written with
// write(2) and the process ends at once (a worker thread's bad_alloc would abort).
[[noreturn]] void OutOfMemory() {
  const std::string& line = OutOfMemoryLine();
  const ssize_t written = write(STDERR_FILENO, line.data(), line.size());
  (void)written;
  std::_Exit(1);
}

}  // namespace

absl::Status CheckArgvFlags(int argc, char** argv) {
  absl::flat_hash_map<std::string, std::string> seen;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) continue;
    const size_t equals = arg.find('=');
    const absl::string_view name = arg.substr(0, equals);
    if (name == "undefok" || name == "flagfile" || name == "fromenv" || name == "tryfromenv") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s is not supported: give every flag on the command line, by its own name", name));
    }
    // --noresume is --resume=false: the same flag (booleans only).
    std::string key(name);
    bool negated = false;
    if (absl::StartsWith(key, "no") && absl::FindCommandLineFlag(key) == nullptr) {
      const absl::CommandLineFlag* positive = absl::FindCommandLineFlag(key.substr(2));
      if (positive != nullptr && positive->IsOfType<bool>()) {
        key = key.substr(2);
        negated = true;
      }
    }
    // Abseil's usage flags (--help, --helpfull, --help=substring, --version, ...) are its parser's
    // own, not all of them registered flags.
    if (absl::StartsWith(key, "help") || key == "version" || key == "only_check_args") continue;
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(key);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("unknown flag --%s%s; see --help", name, DidYouMean(name)));
    }
    const auto [it, inserted] = seen.emplace(key, argv[i]);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s is given twice ('%s' and '%s'); give it once", key, it->second, argv[i]));
    }
    if (equals != absl::string_view::npos) {
      if (negated) continue;  // --noresume=x: Abseil's parser names that mistake
      if (const absl::Status ok = CheckValue(*flag, arg.substr(equals + 1)); !ok.ok()) return ok;
    } else if (!flag->IsOfType<bool>() && i + 1 < argc) {
      // `--seed -1`: the next argument is the value, as Abseil reads it.
      ++i;
      if (const absl::Status ok = CheckValue(*flag, argv[i]); !ok.ok()) return ok;
    }
  }
  return absl::OkStatus();
}

std::optional<int> ParseCommandLineFlags(int argc, char** argv, absl::string_view command,
                                         absl::string_view flags_file) {
  return ParseCommandLineFlags(argc, argv, command, {flags_file});
}

std::optional<int> ParseCommandLineFlags(int argc, char** argv, absl::string_view command,
                                         std::initializer_list<absl::string_view> flags_files) {
  OutOfMemoryLine() = absl::StrFormat(
      "error: %s: out of memory: an allocation failed (the machine's memory, a container limit "
      "or `ulimit -v` is reached); give the run less to hold (a smaller model, batch, data set "
      "or fewer workers) or more memory\n",
      command);
  std::set_new_handler([] { OutOfMemory(); });
  // Abseil's --help lists only the flags of files named like the program; name the file instead.
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags =
      [files = std::vector<std::string>(flags_files.begin(), flags_files.end())](
          absl::string_view path) {
        for (const std::string& file : files) {
          if (absl::StrContains(path, file)) return true;
        }
        return false;
      };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  absl::SetFlagsUsageConfig(usage_config);
  if (const absl::Status ok = CheckArgvFlags(argc, argv); !ok.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(ok.message()).c_str());
    return 1;
  }
  // Parsed without Abseil's usage handling, which exits with 1 after --help: help is a success.
  const std::vector<char*> positional = absl::flags_internal::ParseCommandLineImpl(
      argc, argv, absl::flags_internal::ArgvListAction::kRemoveParsedArgs,
      absl::flags_internal::UsageFlagsAction::kIgnoreUsage,
      absl::flags_internal::OnUndefinedFlag::kAbortIfUndefined);
  if (absl::flags_internal::HandleUsageFlags(std::cout, absl::ProgramUsageMessage()) >= 0) {
    std::cout.flush();
    if (!std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::fprintf(stderr, "error: cannot write to standard output (%s)\n", std::strerror(errno));
      return 1;
    }
    return 0;
  }
  // `--hidden 128 128` would otherwise train one layer of 128 and drop the second, and
  // everything after `--` would be ignored.
  if (positional.size() > 1) {
    const std::vector<std::string> extra(positional.begin() + 1, positional.end());
    const bool boolean = extra[0] == "true" || extra[0] == "false";
    std::fprintf(stderr, "error: unexpected argument%s '%s': %s takes flags only (%s)\n",
                 extra.size() > 1 ? "s" : "", absl::StrJoin(extra, "' '").c_str(),
                 std::string(command).c_str(),
                 boolean ? "a boolean flag takes its value after '=', e.g. --resume=false"
                         : "a flag takes its value after '=' and lists are comma-separated, e.g. "
                           "--hidden=128,128; nothing after '--' is read as a flag");
    return 1;
  }
  return std::nullopt;
}

}  // namespace hogwild
