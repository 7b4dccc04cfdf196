"""python_headers: the Python C API and pybind11 headers of Debian's /usr/bin/python3.

Asks /usr/bin/python3 itself (not whichever `python3` comes first on PATH: pyenv, a virtualenv)
where its headers are, so the extension module is built for the interpreter the tests and the
install target use. Links them into the repository and declares

    @python//:headers    Python.h and friends (-isystem, so -Werror ignores their warnings)
    @python//:pybind11   pybind11 (Debian's pybind11-dev, /usr/include/pybind11)

A missing package fails the build with one line naming it and tools/setup.sh. Extension modules
do not link libpython: the interpreter that imports them provides its symbols.
"""

_PYTHON = "/usr/bin/python3"
_PYBIND11 = "/usr/include/pybind11"

def _python_headers_impl(ctx):
    result = ctx.execute([_PYTHON, "-c", "import sysconfig; print(sysconfig.get_path('include'))"])
    if result.return_code != 0:
        fail("python_headers: %s not found or not working (%s); run tools/setup.sh" %
             (_PYTHON, result.stderr.strip()))
    include = result.stdout.strip()
    if not ctx.path(include + "/Python.h").exists:
        fail("python_headers: %s/Python.h is missing: install python3-dev (tools/setup.sh)" %
             include)
    if not ctx.path(_PYBIND11 + "/pybind11.h").exists:
        fail("python_headers: %s/pybind11.h is missing: install pybind11-dev (tools/setup.sh)" %
             _PYBIND11)
    ctx.symlink(include, "python_include")
    ctx.symlink(_PYBIND11, "pybind11_include/pybind11")
    ctx.file("BUILD", """package(default_visibility = ["//visibility:public"])

cc_library(
    name = "headers",
    hdrs = glob(["python_include/**/*.h"]),
    includes = ["python_include"],
)

cc_library(
    name = "pybind11",
    hdrs = glob(["pybind11_include/pybind11/**/*.h"]),
    includes = ["pybind11_include"],
    deps = [":headers"],
)
""")

python_headers = repository_rule(
    implementation = _python_headers_impl,
    local = True,
)
