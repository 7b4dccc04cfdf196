"""cuda_library: compiles .cu files with nvcc into a static library usable by any cc_* rule.

No rules_cuda is reachable offline, so this is a small rule of our own for Bazel 4.2.3:

  * one nvcc action per .cu file. nvcc runs by its absolute path in the toolkit that
    //third_party:cuda_configure.bzl found (run as a label inside the sandbox it cannot find
    cicc), with `-ccbin` set to the C++ toolchain's compiler, C++20,
    -fPIC, machine code for sm_80 and sm_90 plus compute_90 PTX (so newer GPUs JIT it), and
    warnings as errors for both nvcc's front end and the host compiler;
  * the deps' defines and include paths are passed on (quote and plain includes as -I, system
    includes as -isystem, so external headers never trip -Werror), and the repository root is
    on the path so `#include "kernels/functors.h"` works;
  * the objects are archived with the toolchain's `ar` into lib<name>.a, returned as CcInfo
    merged with the deps' CcInfo (and the CUDA runtime's), so cc_library/cc_test can depend on
    it like on any other library.

Relocatable device code across targets is not supported: each kernel's launcher lives in the
same .cu as the kernel. Headers in `hdrs` must be host-only (includable from plain C++).

Where CUDA is disabled (--config=cpu, or no toolkit found) a cuda_library is incompatible and
skipped, like everything else that needs @cuda (//tools:cuda.bzl).

Example:
    load("//tools:cuda_library.bzl", "cuda_library")
    cuda_library(
        name = "sgd_update",
        srcs = ["sgd_update.cu"],
        hdrs = ["sgd_update.h"],
        deps = ["//kernels:functors"],
    )
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load("@cuda//:defs.bzl", "CUDA_PATH", "MISSING_MESSAGE")
load("//tools:cuda.bzl", "cuda_compatible")

# sm_80 (A100) and sm_90 (H100/H200) machine code, and compute_90 PTX for anything newer.
CUDA_GENCODE = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
]

# Warnings are errors in our own code: nvcc's (cudafe/ptxas) and the host compiler's.
_WARNING_FLAGS = [
    "-Werror",
    "all-warnings",
    "-Xcompiler",
    "-Wall,-Wextra,-Werror",
]

def _object_path(ctx, src):
    # _objs/<target>/<path under the package, minus .cu>.o keeps sources with equal basenames in
    # different subfolders apart.
    rel = src.short_path
    if rel.startswith(ctx.label.package + "/"):
        rel = rel[len(ctx.label.package) + 1:]
    return "_objs/%s/%s.o" % (ctx.label.name, rel[:-len(".cu")])

def _cuda_library_impl(ctx):
    if not CUDA_PATH:
        fail(MISSING_MESSAGE)  # --config=cuda without a toolkit (the @cuda stubs say so first)
    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )

    dep_infos = [d[CcInfo] for d in ctx.attr.deps + [ctx.attr._cuda_runtime]]
    dep_cc = cc_common.merge_cc_infos(cc_infos = dep_infos)
    comp = dep_cc.compilation_context

    include_args = ["-I."]

    # Generated headers (none today) would live under the bin dir.
    include_args.append("-I" + ctx.bin_dir.path)
    for path in comp.quote_includes.to_list() + comp.includes.to_list():
        include_args.append("-I" + path)
    for path in comp.system_includes.to_list():
        include_args += ["-isystem", path]
    define_args = ["-D" + d for d in comp.defines.to_list()]

    cu_srcs = [f for f in ctx.files.srcs if f.extension == "cu"]
    private_hdrs = [f for f in ctx.files.srcs if f.extension != "cu"]
    inputs = depset(
        direct = private_hdrs + ctx.files.hdrs,
        transitive = [comp.headers],
    )

    mode = ctx.var.get("COMPILATION_MODE", "fastbuild")
    opt_args = ["-O3"] if mode == "opt" else (["-g", "-O0"] if mode == "dbg" else ["-O2"])

    objects = []
    for src in cu_srcs:
        obj = ctx.actions.declare_file(_object_path(ctx, src))
        args = ctx.actions.args()
        args.add("-ccbin", cc_toolchain.compiler_executable)
        args.add_all(["-x", "cu", "-std=c++20", "-Xcompiler", "-fPIC"])
        args.add_all(opt_args)
        args.add_all(CUDA_GENCODE)
        args.add_all(_WARNING_FLAGS)
        args.add_all(define_args)
        args.add_all(include_args)
        args.add_all(ctx.attr.copts)
        args.add("-c", src)
        args.add("-o", obj)
        ctx.actions.run(
            executable = CUDA_PATH + "/bin/nvcc",
            arguments = [args],
            inputs = depset([src], transitive = [inputs]),
            outputs = [obj],
            mnemonic = "NvccCompile",
            progress_message = "nvcc %s" % src.short_path,
            # --incompatible_strict_action_env gives actions no PATH; nvcc finds cicc/ptxas
            # through its nvcc.profile, but the host compiler driver still looks tools up.
            env = {"PATH": CUDA_PATH + "/bin:/usr/bin:/bin"},
        )
        objects.append(obj)

    if objects:
        archive = ctx.actions.declare_file("lib%s.a" % ctx.label.name)
        ar_args = ctx.actions.args()
        ar_args.add("rcsD")
        ar_args.add(archive)
        ar_args.add_all(objects)
        ctx.actions.run(
            executable = cc_toolchain.ar_executable,
            arguments = [ar_args],
            inputs = depset(objects, transitive = [cc_toolchain.all_files]),
            outputs = [archive],
            mnemonic = "CudaArchive",
            progress_message = "ar %s" % archive.short_path,
        )
        library = cc_common.create_library_to_link(
            actions = ctx.actions,
            feature_configuration = feature_configuration,
            cc_toolchain = cc_toolchain,
            static_library = archive,
            pic_static_library = archive,
        )
        linker_inputs = [cc_common.create_linker_input(
            owner = ctx.label,
            libraries = depset([library]),
        )]
        files = [archive]
    else:
        linker_inputs = []
        files = []

    own = CcInfo(
        compilation_context = cc_common.create_compilation_context(
            headers = depset(ctx.files.hdrs),
        ),
        linking_context = cc_common.create_linking_context(
            linker_inputs = depset(linker_inputs),
        ),
    )
    return [
        DefaultInfo(files = depset(files)),
        cc_common.merge_cc_infos(direct_cc_infos = [own], cc_infos = dep_infos),
    ]

_cuda_library = rule(
    implementation = _cuda_library_impl,
    doc = "Compiles .cu sources with nvcc into a static library exposed as CcInfo.",
    attrs = {
        "srcs": attr.label_list(
            allow_files = [".cu", ".cuh", ".h"],
            doc = ".cu files to compile, plus private .cuh/.h headers they include.",
        ),
        "hdrs": attr.label_list(
            allow_files = [".h"],
            doc = "Public host-only headers, includable by any cc_library.",
        ),
        "deps": attr.label_list(
            providers = [CcInfo],
            doc = "cc_library or cuda_library targets whose headers/defines the sources use.",
        ),
        "copts": attr.string_list(doc = "Extra nvcc flags, appended last."),
        "_cuda_runtime": attr.label(
            default = Label("@cuda//:cudart"),
            providers = [CcInfo],
        ),
        "_cc_toolchain": attr.label(
            default = Label("@bazel_tools//tools/cpp:current_cc_toolchain"),
        ),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)

def cuda_library(name, **kwargs):
    """A _cuda_library that is incompatible (skipped) where CUDA is disabled.

    Its @cuda runtime dependency would make it so anyway; saying it here skips it before its
    dependencies are analysed.
    """
    _cuda_library(
        name = name,
        target_compatible_with = cuda_compatible(),
        **kwargs
    )
