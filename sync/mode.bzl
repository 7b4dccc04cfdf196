"""The build flag that picks the trainer's mode: --//sync:mode=async|sync|ssp|backup|local_sgd|locked|round_robin|async_local_sgd."""

# The spellings of core/mode.h ModeName.
_MODES = ["async", "sync", "ssp", "backup", "local_sgd", "locked", "round_robin", "async_local_sgd"]

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
