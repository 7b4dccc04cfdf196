// Silences this process's standard error (file descriptor 2) for a while: the errors found before
// MPI starts are the same on every rank of one command line, so under mpirun only one rank
// should print them (mpi/mpi_cluster.h, MpiCluster::SpeaksBeforeInit).
//
//   hogwild::QuietStderr quiet(!hogwild::MpiCluster::SpeaksBeforeInit());
//   absl::ParseCommandLine(argc, argv);  // may print and exit(1): silently on a quiet rank
//   quiet.Restore();                      // before MPI starts, or before an exec
//
// How: fd 2 is duplicated away (close-on-exec) and /dev/null put in its place; Restore() (and
// the destructor) puts the saved descriptor back. Descriptor-level, so it covers whatever writes
// to fd 2: stdio's stderr (unbuffered), std::cerr, Abseil's flag errors before their exit(1).
// Exit statuses are untouched: a quiet rank ends with the same status as the rank that speaks,
// but kLingerSeconds later (an atexit handler, active while silenced): mpirun ends the job at the
// first non-zero exit, and a quiet rank that exited first could get the speaking rank killed, or
// its message cut into by mpirun's report, before the message is out. Runs without an error
// never wait.
//
// Thread-safety: construct and restore from main before other threads write to stderr (a write
// racing with the switch goes to one of the two places). Errors: when /dev/null cannot be opened
// or fd 2 cannot be duplicated, nothing is silenced (printing twice is the safe failure).
#ifndef HOGWILD_TRAINER_CLI_QUIET_STDERR_H_
#define HOGWILD_TRAINER_CLI_QUIET_STDERR_H_

namespace hogwild {

class QuietStderr {
 public:
  // How long a silenced process waits at exit before it ends (see above).
  static constexpr int kLingerSeconds = 2;

  // Silences fd 2 when `quiet`; otherwise does nothing.
  explicit QuietStderr(bool quiet);
  // Puts the original standard error back but keeps the linger at exit: a quiet rank that leaves
  // main() early (an error found before MPI starts) still lets the speaking rank exit first.
  ~QuietStderr() { RestoreFd(); }
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;

  // Puts the original standard error back and ends the linger at exit (call it once the errors
  // before MPI are past); a no-op when nothing is silenced (idempotent).
  void Restore();

 private:
  void RestoreFd();

  int saved_fd_ = -1;  // the original fd 2 while silenced, else -1
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_CLI_QUIET_STDERR_H_
