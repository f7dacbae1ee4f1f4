# -*- Python -*-
# lit configuration that runs every GoogleTest binary under build/unittests;
# each GoogleTest case counts as one lit test.

import os

import lit.formats

config.name = "nvfp4-unit"
config.suffixes = []
config.test_source_root = os.path.join(config.nvfp4_obj_root, "unittests")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
