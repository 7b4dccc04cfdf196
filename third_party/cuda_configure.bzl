"""cuda_configure: finds the CUDA toolkit when Bazel loads the workspace and makes @cuda.

The toolkit is where `$CUDA_PATH` says (when that is set and not empty), else /usr/local/cuda;
it is found when `bin/nvcc` is there. Bazel runs this rule again when CUDA_PATH changes, when
the server restarts, and on `bazel sync --configure` (so a toolkit installed later is picked up
after `bazel shutdown`).

Found: @cuda holds the toolkit's folders (symlinks) and third_party/cuda.BUILD's targets.
Not found: @cuda has the same targets as stubs (third_party/cuda_stub.BUILD), each of which fails
the build with one line naming the path searched and the two ways out, but only where a target
that is built needs it: with CUDA disabled (the default then, see //tools:cuda.bzl) every CUDA
target is incompatible and skipped. Either way @cuda//:defs.bzl says which:

    CUDA_FOUND       True or False
    CUDA_PATH        the toolkit's absolute path ("" when not found)
    CUDA_SEARCHED    the path searched
    MISSING_MESSAGE  the one-line error of the stubs
"""

_DEFAULT_PATH = "/usr/local/cuda"

def _cuda_configure_impl(repository_ctx):
    from_env = repository_ctx.os.environ.get("CUDA_PATH", "")
    searched = from_env if from_env else _DEFAULT_PATH
    found = repository_ctx.path(searched + "/bin/nvcc").exists
    missing = (
        "CUDA toolkit not found: no bin/nvcc under %s (%s); install the CUDA 13 toolkit there " +
        "or point CUDA_PATH at one, or build without CUDA: --config=cpu"
    ) % (searched, "$CUDA_PATH" if from_env else "the default; CUDA_PATH is not set")
    if found:
        # As given, not resolved: the rpath then follows /usr/local/cuda -> cuda-13.x updates.
        path = str(repository_ctx.path(searched))
        for entry in repository_ctx.path(path).readdir():
            repository_ctx.symlink(entry, entry.basename)
        repository_ctx.symlink(repository_ctx.attr.build_file, "BUILD.bazel")
    else:
        path = ""
        repository_ctx.symlink(repository_ctx.attr.stub_build_file, "BUILD.bazel")
    repository_ctx.file("defs.bzl", "\n".join([
        '"""Written by //third_party:cuda_configure.bzl: what it found."""',
        "CUDA_FOUND = %s" % found,
        "CUDA_PATH = %r" % path,
        "CUDA_SEARCHED = %r" % searched,
        "MISSING_MESSAGE = %r" % missing,
        "",
    ]))

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    doc = "The CUDA toolkit at $CUDA_PATH or /usr/local/cuda as @cuda, or stubs where it is not.",
    attrs = {
        "build_file": attr.label(allow_single_file = True, mandatory = True),
        "stub_build_file": attr.label(allow_single_file = True, mandatory = True),
    },
    environ = ["CUDA_PATH"],
    local = True,
    configure = True,
)
