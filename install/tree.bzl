"""install_tree: the installed C++ library as one directory (a tree artifact).

    <tree>/lib/libhogwild.so.<version>            the library (its SONAME is libhogwild.so.<major>)
    <tree>/include/hogwild/...                    the public headers and every project header
                                                  they include, by their workspace paths
                                                  (#include "trainer/trainer.h")
    <tree>/lib/cmake/hogwild/hogwildConfig.cmake  find_package(hogwild CONFIG) -> hogwild::hogwild
    <tree>/lib/cmake/hogwild/hogwildConfigVersion.cmake
    <tree>/lib/pkgconfig/hogwild.pc

The symlinks libhogwild.so.<major> and libhogwild.so are made by install.sh, which copies the
tree to a prefix (a tree artifact holds no symlinks to its own files).
"""

def _install_tree_impl(ctx):
    out = ctx.actions.declare_directory(ctx.label.name)
    headers = depset(transitive = [
        dep[CcInfo].compilation_context.headers
        for dep in ctx.attr.deps
    ])
    by_path = {f.short_path: f for f in headers.to_list()}
    public_hdrs = []
    for path in ctx.attr.public_hdrs:
        if path not in by_path:
            fail("public header %s is not a header of the install_tree's deps" % path)
        public_hdrs.append(by_path[path])
    args = ctx.actions.args()
    args.add(out.path)
    args.add(ctx.attr.version)
    args.add(ctx.file.library)
    args.add(ctx.file.cmake_config)
    args.add(ctx.file.pkg_config)
    args.add_all(public_hdrs)
    ctx.actions.run(
        executable = ctx.executable._make_tree,
        arguments = [args],
        inputs = depset(
            [ctx.file.library, ctx.file.cmake_config, ctx.file.pkg_config],
            transitive = [headers],
        ),
        outputs = [out],
        mnemonic = "InstallTree",
        progress_message = "Assembling the installed tree of %s" % ctx.label,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles([out]))]

install_tree = rule(
    implementation = _install_tree_impl,
    attrs = {
        "version": attr.string(mandatory = True, doc = "MAJOR.MINOR.PATCH"),
        "library": attr.label(mandatory = True, allow_single_file = True),
        "public_hdrs": attr.string_list(
            mandatory = True,
            doc = "workspace paths of the public headers, each a header of deps",
        ),
        "deps": attr.label_list(
            mandatory = True,
            providers = [CcInfo],
            doc = "the libraries whose headers public_hdrs include",
        ),
        "cmake_config": attr.label(mandatory = True, allow_single_file = True),
        "pkg_config": attr.label(mandatory = True, allow_single_file = True),
        "_make_tree": attr.label(
            default = ":make_tree",
            executable = True,
            cfg = "exec",
        ),
    },
)
