"""The build flag that picks the trainer's mode: --//sync:mode=async|sync|ssp|backup|local_sgd|locked|round_robin."""

# The spellings of core/mode.h ModeName.
_MODES = ["async", "sync", "ssp", "backup", "local_sgd", "locked", "round_robin"]

def _mode_impl(ctx):
    if ctx.build_setting_value not in _MODES:
        fail("--//sync:mode must be one of {}, got '{}'".format(
            ", ".join(_MODES),
            ctx.build_setting_value,
        ))
    return []

mode_flag = rule(
    implementation = _mode_impl,
    build_setting = config.string(flag = True),
)

def _mode_transition_impl(settings, attr):
    return {"//sync:mode": attr.mode}

_mode_transition = transition(
    implementation = _mode_transition_impl,
    inputs = [],
    outputs = ["//sync:mode"],
)

def _binary_in_mode_impl(ctx):
    binary = ctx.attr.binary[0][DefaultInfo]
    out = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.symlink(output = out, target_file = binary.files_to_run.executable, is_executable = True)
    return [DefaultInfo(
        executable = out,
        runfiles = ctx.runfiles(files = [out]).merge(binary.default_runfiles),
    )]

# A binary built as `bazel build --//sync:mode=<mode>` would build it, for tests that run a
# mode other than the build's (tests/BUILD: cli_test's locked trainer). Its dependencies build
# once more, in that configuration.
binary_in_mode = rule(
    implementation = _binary_in_mode_impl,
    attrs = {
        "binary": attr.label(cfg = _mode_transition, executable = True),
        "mode": attr.string(mandatory = True, values = _MODES),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
    executable = True,
)
