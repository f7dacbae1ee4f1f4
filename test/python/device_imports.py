# RUN: env PYTHONPATH=%S/../../python:%S/../../runtime/python:%S/../../integration_test %PYTHON %s
# REQUIRES: python-nvfp4, python-torch
"""What the GPU machine imports: this tree's python/ and runtime/python/
without nvfp4's numerics extension (it is built for this machine's Python
into build/python_packages; the GPU machine's Python differs). nvfp4,
nvfp4.layer_kernels, nvfp4.torch and the device scripts of
integration_test/ must import; the numerics -- and nvfp4.__version__, which
the extension holds -- raise one ImportError that says why when used. (A
module-level read of the version once broke every device suite at import.)
"""
import os
import sys
import unittest

import nvfp4

SOURCE = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..",
                                       "python", "nvfp4"))


class DeviceImports(unittest.TestCase):
    def test_runs_without_the_extension(self):
        # Otherwise this test proves nothing.
        self.assertEqual(os.path.dirname(os.path.realpath(nvfp4.__file__)),
                         SOURCE)
        self.assertNotIn("nvfp4._nvfp4", sys.modules)

    def test_pure_python_parts_import(self):
        import nvfp4.layer_kernels  # noqa: F401
        import nvfp4.torch  # noqa: F401
        import nvfp4_runtime  # noqa: F401
        self.assertEqual(nvfp4.DEFAULT_SIGN_MASK, 0xD7E8)

    def test_device_scripts_import(self):
        # Their module level only imports and reads argv / the environment.
        argv = sys.argv
        sys.argv = [argv[0]]
        try:
            import torch_dist  # noqa: F401
            import torch_linear  # noqa: F401
        finally:
            sys.argv = argv
        self.assertNotIn("nvfp4._nvfp4", sys.modules)

    def test_numerics_raise_when_used(self):
        for use in (lambda: nvfp4.__version__,
                    lambda: nvfp4.pack([0, 1]),
                    lambda: nvfp4.quantize([[0.0] * 16])):
            with self.assertRaisesRegex(ImportError,
                                        r"numerics extension \(nvfp4\._nvfp4\)"
                                        r" cannot be loaded here: .*Python "
                                        r"\d+\.\d+"):
                use()

    def test_other_missing_attributes(self):
        with self.assertRaises(AttributeError):
            nvfp4.no_such_thing  # noqa: B018


if __name__ == "__main__":
    unittest.main()
