"""The README's Python example runs: the ```python block of README.md's "Python" section,
copied to a temporary folder and run by /usr/bin/python3 on 3000 training examples for one
epoch (the README quotes the full run). Both modes must print a result and learn (> 50% test
accuracy; chance is 10%), and the plot is written where matplotlib is installed.
Usage: python_readme_example_test.py <README.md>."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

import python_testing as testing

README = None


def example_from_readme(path):
    with open(path) as f:
        text = f.read()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


class ReadmeExample(unittest.TestCase):

    def test_the_example_trains_both_modes_and_plots(self):
        testing.skip_without_fashion_mnist(self)
        code = example_from_readme(README)
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "fashion_mnist.py")
            with open(script, "w") as f:
                f.write(code)
            run = subprocess.run([sys.executable, script, "3000", "1"], cwd=tmp,
                                 capture_output=True, text=True, timeout=40)
            self.assertEqual(run.returncode, 0, run.stderr)
            for mode in ("async", "sync"):
                match = re.search(rf"^{mode}: ([\d.]+)% test accuracy in ", run.stdout, re.M)
                self.assertIsNotNone(match, run.stdout)
                self.assertGreater(float(match.group(1)), 50.0, run.stdout)
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                self.assertIn("no plot: matplotlib is missing", run.stdout)
            else:
                plot = os.path.join(tmp, "fashion_mnist_modes.png")
                self.assertTrue(os.path.getsize(plot) > 10000, run.stdout)


if __name__ == "__main__":
    README = sys.argv.pop(1)
    testing.fail_if_hung(55)
    unittest.main()
