"""The wheel's tags. The package holds a compiled library it loads with ctypes, so the wheel
is for one platform (linux_x86_64) but any Python 3 (py3-none): no CPython extension module,
hence no Python ABI. Everything else is in pyproject.toml."""

from setuptools import setup
from setuptools.dist import Distribution

try:  # setuptools >= 70.1 has its own; before it, the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel


class PlatformWheel(bdist_wheel):
    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        return "py3", "none", platform


class BinaryDistribution(Distribution):
    """Says the package holds compiled code, so its files go to platlib (the wheel's root), where
    auditwheel and installers expect a platform library, rather than to purelib."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"bdist_wheel": PlatformWheel}, distclass=BinaryDistribution)
