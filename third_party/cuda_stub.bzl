"""cuda_missing: the stand-in for a CUDA library where no toolkit was found (cuda_stub.BUILD)."""

load("@cuda//:defs.bzl", "MISSING_MESSAGE")

def _cuda_missing_impl(ctx):
    fail(MISSING_MESSAGE)

cuda_missing = rule(
    implementation = _cuda_missing_impl,
    doc = "Fails the build with @cuda//:defs.bzl MISSING_MESSAGE when anything built needs it.",
)
