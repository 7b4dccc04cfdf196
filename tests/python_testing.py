"""Shared helpers of the Python tests (tests/python_*_test.py)."""

import faulthandler
import os
import sys

import numpy as np

import hogwild

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def fail_if_hung(limit_s=45):
    """Ends the process with every thread's traceback if it is still running after limit_s,
    so a hang fails well inside Bazel's timeout and says where it hung."""
    faulthandler.dump_traceback_later(limit_s, exit=True)


def synthetic(n, dim=20, classes=4, seed=0):
    """n learnable examples: float32 [n, dim] standard normal, int64 labels = the argmax of a
    fixed random linear map plus a little noise."""
    rng = np.random.default_rng(seed)
    w = np.random.default_rng(1234).standard_normal((dim, classes))
    x = rng.standard_normal((n, dim)).astype(np.float32)
    y = (x @ w + 0.3 * rng.standard_normal((n, classes))).argmax(axis=1)
    return x, y


def mlp_params(dim, hidden, classes):
    """The parameter count of hogwild's mlp: dense layers [in, out] weights and out biases."""
    sizes = [dim, *hidden, classes]
    return sum(a * b + b for a, b in zip(sizes, sizes[1:]))


def skip_without_fashion_mnist(test):
    if not os.path.exists(os.path.join(FASHION_MNIST, "train-images-idx3-ubyte.gz")):
        test.skipTest(f"Fashion-MNIST is not installed at {FASHION_MNIST}: "
                      "sudo apt-get install dataset-fashion-mnist (or tools/setup.sh)")


assert sys.executable == "/usr/bin/python3", f"run by {sys.executable}, not /usr/bin/python3"
assert hogwild.__file__.endswith("python/hogwild/__init__.py"), hogwild.__file__
