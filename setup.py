"""The scorer's compiled kernel, an optional C extension (everything else is in pyproject.toml).

Optional: without a C compiler and Python's headers (a stock Debian has neither python3-dev nor gcc),
the install goes on without it and the scorer runs its pure-Python reference, which gives the same
scores (gateway/routing/scorer/_kernel.c says why it exists).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "gateway.routing.scorer._kernel",
            ["gateway/routing/scorer/_kernel.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
