"""The installed C++ library's version and public API (install/BUILD, tests/install_test.sh)."""

# MAJOR.MINOR.PATCH of libhogwild.so; its SONAME is libhogwild.so.MAJOR. A change that breaks
# a program built against an earlier install (a changed signature or struct layout in a public
# header) raises MAJOR.
VERSION = "0.1.0"

# What a program that embeds the trainer includes: the options, Train() and its result, the
# datasets and their readers, the modes (policies) and models (workloads) as types, the status
# macros. Every project header these include is installed too (install/tree.bzl), because the
# compiler needs it, but only these are the API: the others may change in any version.
PUBLIC_HEADERS = [
    "core/mode.h",
    "core/status_macros.h",
    "sync/update_policy.h",
    "trainer/data/cifar10.h",
    "trainer/data/dataset.h",
    "trainer/data/mnist.h",
    "trainer/model/model.h",
    "trainer/optimizer_options.h",
    "trainer/trainer.h",
    "trainer/trainer_options.h",
]
