#include "trainer/metrics/convergence_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/output_path.h"
#include "core/status_macros.h"

namespace hogwild {

const char* ConvergenceLog::Header() {
  return "wall_time_s,kind,epoch,step,examples_seen,worker,train_loss,test_loss,test_accuracy,"
         "staleness_mean,staleness_max,lr,delay_s,remote_staleness_mean,remote_staleness_max,"
         "ema_test_accuracy,eval_seconds,exchanges,bytes_per_worker,outer_step_norm,dropped";
}

std::string FormatExchanges(int64_t exchanges, double bytes_per_worker) {
  if (exchanges == 0) return "";
  std::string bytes;
  if (bytes_per_worker < 1e3) {
    bytes = absl::StrFormat("%.0f bytes", bytes_per_worker);
  } else if (bytes_per_worker < 1e6) {
    bytes = absl::StrFormat("%.1f kB", bytes_per_worker / 1e3);
  } else if (bytes_per_worker < 1e9) {
    bytes = absl::StrFormat("%.1f MB", bytes_per_worker / 1e6);
  } else {
    bytes = absl::StrFormat("%.2f GB", bytes_per_worker / 1e9);
  }
  return absl::StrFormat(" | %d exchanges, %s sent per worker", exchanges, bytes);
}

absl::StatusOr<std::unique_ptr<ConvergenceLog>> ConvergenceLog::Open(const std::string& path) {
  // A .json name would get CSV (only .jsonl is JSON Lines): refused before anything is written.
  if (absl::EndsWithIgnoreCase(path, ".json")) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--log=%s: a convergence log is CSV, or JSON Lines when its name ends in .jsonl; name it "
        ".jsonl (or .csv)",
        path));
  }
  HOGWILD_ASSIGN_OR_RETURN(const int fd, OpenOutputStream("--log", path));
  const bool json = absl::EndsWithIgnoreCase(path, ".jsonl");
  std::unique_ptr<ConvergenceLog> log(new ConvergenceLog(fd, path, json));
  if (!json) {
    std::lock_guard<std::mutex> lock(log->mu_);
    HOGWILD_RETURN_IF_ERROR(log->AppendLocked(absl::StrCat(Header(), "\n")));
  }
  return log;
}

absl::Status ConvergenceLog::CheckWouldNotReplace(const std::string& path,
                                                  const std::string& overwrite_option) {
  struct stat st;
  // stat follows a symlink: what matters is the file that O_TRUNC would empty.
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      absl::StrFormat("%s already exists (%d bytes) and this run would replace it; pass "
                      "another path, or %s to replace it",
                      path, static_cast<int64_t>(st.st_size), overwrite_option));
}

ConvergenceLog::~ConvergenceLog() {
  bool open = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    open = fd_ >= 0;
  }
  // Only callers that skipped Close() would not see its error otherwise (the trainer calls it).
  if (const absl::Status status = Close(); open && !status.ok()) {
    absl::FPrintF(stderr, "hogwild: %s\n", status.message());
  }
}

void ConvergenceLog::SetErrorLocked(const char* what, int err) {
  if (status_.ok()) {
    status_ = absl::Status(
        absl::ErrnoToStatusCode(err),
        absl::StrFormat("convergence log %s: cannot %s (%s)", path_, what, std::strerror(err)));
  }
}

absl::Status ConvergenceLog::AppendLocked(const std::string& bytes) {
  if (!status_.ok()) return status_;
  if (fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("convergence log %s: written after Close()", path_));
  }
  // Where this row starts, to cut off a partial row if the write fails halfway (-1: not a
  // regular file, nothing to cut).
  const off_t start = ::lseek(fd_, 0, SEEK_CUR);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;  // write() returning 0 for >0 bytes: no room
      if (start >= 0 && done > 0) {
        // Best effort: a failed cut leaves the partial row, and the write's error ends the log.
        [[maybe_unused]] const int cut = ::ftruncate(fd_, start);
      }
      SetErrorLocked("write a row", err);
      return status_;
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status ConvergenceLog::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return status_;
  struct stat st;
  // fsync catches write-back errors (NFS, quotas) that write() did not report; pipes, ttys and
  // devices cannot be synced and have nothing to lose.
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && ::fsync(fd_) != 0) {
    SetErrorLocked("fsync", errno);
  }
  if (::close(fd_) != 0) SetErrorLocked("close", errno);
  fd_ = -1;
  return status_;
}

absl::Status ConvergenceLog::Write(const LogRow& r) {
  const char* kind = r.eval ? "eval" : "train";
  auto opt_int = [](const std::optional<int64_t>& v, const char* none) {
    return v ? absl::StrCat(*v) : std::string(none);
  };
  std::string line;
  if (json_) {
    auto opt = [](const std::optional<double>& v) {
      return v ? absl::StrFormat("%.6g", *v) : std::string("null");
    };
    line = absl::StrFormat(
        "{\"wall_time_s\":%.4f,\"kind\":\"%s\",\"epoch\":%.4f,\"step\":%d,"
        "\"examples_seen\":%d,\"worker\":%d,\"train_loss\":%.6g,\"test_loss\":%s,"
        "\"test_accuracy\":%s,\"staleness_mean\":%.4g,\"staleness_max\":%d,"
        "\"lr\":%.6g,\"delay_s\":%.6g,\"remote_staleness_mean\":%s,"
        "\"remote_staleness_max\":%s,\"ema_test_accuracy\":%s,\"eval_seconds\":%.4f,"
        "\"exchanges\":%d,\"bytes_per_worker\":%.0f,\"outer_step_norm\":%s,\"dropped\":%d}\n",
        r.wall_time_s, kind, r.epoch, r.step, r.examples_seen, r.worker, r.train_loss,
        opt(r.test_loss), opt(r.test_accuracy), r.staleness_mean, r.staleness_max, r.lr, r.delay_s,
        opt(r.remote_staleness_mean), opt_int(r.remote_staleness_max, "null"),
        opt(r.ema_test_accuracy), r.eval_seconds, r.exchanges, r.bytes_per_worker,
        opt(r.outer_step_norm), r.dropped);
  } else {
    auto opt = [](const std::optional<double>& v) {
      return v ? absl::StrFormat("%.6g", *v) : std::string();
    };
    line = absl::StrFormat(
        "%.4f,%s,%.4f,%d,%d,%d,%.6g,%s,%s,%.4g,%d,%.6g,%.6g,%s,%s,%s,%.4f,%d,%.0f,%s,%d\n",
        r.wall_time_s, kind, r.epoch, r.step, r.examples_seen, r.worker, r.train_loss,
        opt(r.test_loss), opt(r.test_accuracy), r.staleness_mean, r.staleness_max, r.lr, r.delay_s,
        opt(r.remote_staleness_mean), opt_int(r.remote_staleness_max, ""), opt(r.ema_test_accuracy),
        r.eval_seconds, r.exchanges, r.bytes_per_worker, opt(r.outer_step_norm), r.dropped);
  }
  std::lock_guard<std::mutex> lock(mu_);
  return AppendLocked(line);
}

}  // namespace hogwild
