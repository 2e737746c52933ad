"""Packaging details pyproject.toml cannot say: the two packages (`awsglue`, the façade, and
`openglue_runtime`, the machinery), the pyspark stand-in folder installed under another name,
the engine's binary as package data, and the .pth start-up hook in the wheel."""
import os

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PTH = "openglue_standin.pth"


class BuildPyWithStartupHook(build_py):
    """Adds openglue_standin.pth at the root of the build (so of site-packages)."""

    def run(self):
        super().run()
        self.copy_file(os.path.join(HERE, PTH),
                       os.path.join(self.build_lib, PTH), preserve_mode=False)

    def get_outputs(self, include_bytecode=1):
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, PTH)]


standin = ["openglue_standin"] + ["openglue_standin." + p for p in find_packages("shims")]
setup(
    packages=find_packages(include=["awsglue", "awsglue.*", "awsgluedq", "awsgluedq.*", "openglue_runtime",
                                    "openglue_runtime.*"]) + standin,
    package_dir={"openglue_standin": "shims"},
    package_data={"openglue_runtime.engines.embedded": ["_engine*.so", "README.md"],
                  "awsglue": ["*.pyi", "py.typed"]},
    cmdclass={"build_py": BuildPyWithStartupHook},
    zip_safe=False,
)
