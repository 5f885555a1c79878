import re
from pathlib import Path

from setuptools import find_namespace_packages, setup

# The version is written once, in dbt_tablestream/__init__.py (dbt_project.yml carries none).
VERSION = re.search(
    r'^__version__ = "([^"]+)"', Path(__file__).with_name("dbt_tablestream").joinpath("__init__.py").read_text(), re.M
)

# The local profile: a Spark session in the dbt process, with delta-spark.
LOCAL = [
    "dbt-spark[session]>=1.11,<1.12",
    # Spark's Ivy fetches io.delta:delta-spark_4.2_2.13:<delta-spark's version>; 4.4.1's jar for
    # Spark 4.2 is not on Maven Central, so pin the wheel to a version whose jar exists.
    "pyspark==4.2.0",
    "delta-spark==4.4.0",
    # pyspark 4.x warns that pandas 3 is not fully supported.
    "pandas>=2.2,<3",
]

# What the functional tests need to run on the local profile, whichever dbt-core is installed.
TEST_RUNNER = [
    "pytest>=8",
    # two workers, each with its own local session (tests/conftest.py spreads the suite)
    "pytest-xdist>=3.6",
    "hypothesis>=6.100",
    "dbt-tests-adapter>=1.11,<1.21",
]

setup(
    name="dbt-tablestream",
    version=VERSION.group(1) if VERSION else "0",
    license="Apache-2.0",
    description="Table streams for Spark lakehouse tables: a dbt package and its Python tools, on delta-spark",
    long_description=Path(__file__).with_name("README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    # The dbt package's macros ship inside the Python package too: the PySpark stream API renders
    # them (dbt_tablestream/_macros.py) instead of keeping a second copy of their rules.
    packages=[
        *find_namespace_packages(include=["dbt", "dbt.*", "dbt_tablestream", "dbt_tablestream.*"]),
        "dbt_tablestream._dbt_macros",
    ],
    package_dir={"dbt_tablestream._dbt_macros": "macros"},
    include_package_data=True,
    package_data={
        "dbt_tablestream": ["py.typed"],
        "dbt_tablestream._dbt_macros": ["*/*.sql"],
        "dbt.adapters.tablestream": ["log4j2.properties", "ivysettings.xml"],
        "dbt.include.tablestream": ["dbt_project.yml", "macros/*.sql", "macros/**/*.sql"],
    },
    # The light install: the `tablestream` command, the realtime writer and the macros, beside
    # whichever dbt adapter runs the models (dbt-databricks, dbt-spark on a cluster). The local
    # profile (`type: tablestream`: Spark in this process) is the `local` extra.
    install_requires=[
        "dbt-core>=1.11,<1.13",
        "deltalake>=1.6,<1.7",
        "pyarrow>=15",
    ],
    extras_require={
        "local": LOCAL,
        "test": [
            *LOCAL,
            # The default suite runs on dbt-core 1.11; .ci/run runs a subset on 1.12.0 in a second
            # virtualenv (1.12.5 and later build their parser by a download this CI cannot make).
            "dbt-core>=1.11,<1.12",
            *TEST_RUNNER,
            "ruff>=0.6",
            # the Thrift tests reach the local cluster (tests/cluster) as production does: dbt-spark's thrift method
            "dbt-spark[PyHive]>=1.11,<1.12",
            # docs/ is built as a site; the default suite runs `mkdocs build --strict`
            "mkdocs>=1.6,<2",
            "mkdocs-material>=9.5,<10",
        ],
        # .ci/run's second virtualenv: the `supported_dbt` tests on another dbt-core
        "test-runner": [*LOCAL, *TEST_RUNNER],
        "bench": [*LOCAL, "matplotlib>=3.8"],
    },
    entry_points={"console_scripts": ["tablestream = dbt_tablestream.cli:console_main"]},
    zip_safe=False,
)
