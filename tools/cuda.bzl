"""Whether this build compiles the CUDA code: the --//tools:cuda flag and its helpers.

    --//tools:cuda=auto   (default) CUDA where //third_party:cuda_configure.bzl found the toolkit
    --//tools:cuda=on     (--config=cuda) CUDA; without a toolkit the build fails with one line
                          naming the path searched (the @cuda stubs)
    --//tools:cuda=off    (--config=cpu) CPU only: every target that needs @cuda (the CUDA
                          kernels and backend, the GPU policies and batch feed, //trainer:gpu,
                          train_gpu, the gpu tests and benchmarks) is incompatible, so
                          `bazel build //...` and `bazel test //...` skip it rather than fail

Incompatibility starts at the @cuda targets (cuda_compatible() in third_party/cuda.BUILD and
cuda_stub.BUILD) and spreads to everything that depends on them, so a new CUDA target needs no
marking of its own. Use if_cuda() where a target that builds either way changes with it.
"""

load("@cuda//:defs.bzl", "CUDA_FOUND")

_VALUES = ["auto", "on", "off"]

def _cuda_flag_impl(ctx):
    if ctx.build_setting_value not in _VALUES:
        fail("--//tools:cuda must be one of {}, got '{}'".format(
            ", ".join(_VALUES),
            ctx.build_setting_value,
        ))
    return []

cuda_flag = rule(
    implementation = _cuda_flag_impl,
    build_setting = config.string(flag = True),
)

def if_cuda(yes, no = []):
    """`yes` in a build with CUDA enabled (on, or auto with the toolkit found), else `no`.

    Example: data = if_cuda([":train_gpu"]), local_defines = if_cuda(["HAS_GPU=1"]).
    """
    return select({
        "@//tools:cuda_on": yes,
        "@//tools:cuda_off": no,
        "//conditions:default": yes if CUDA_FOUND else no,
    })

def cuda_compatible():
    """A target_compatible_with value: compatible exactly where CUDA is enabled."""
    return if_cuda([], ["@//tools:incompatible"])
