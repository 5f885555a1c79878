"""Checks the Java runtime before Spark tries to start, so the user gets a remedy, not a JVM trace."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from dbt_tablestream.exceptions import EngineStartError

MINIMUM_JAVA = 17
_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')

_REMEDY = (
    "Install a Java runtime 17 or newer (for example `apt-get install openjdk-17-jre-headless`) "
    "and put it on PATH or point JAVA_HOME at it."
)


def find_java() -> Path:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if not candidate.exists():
            raise EngineStartError(f"JAVA_HOME is set to {java_home!r} but {candidate} does not exist. {_REMEDY}")
        return candidate
    found = shutil.which("java")
    if found is None:
        raise EngineStartError(
            "The tablestream adapter runs a local Spark session, which needs Java, "
            f"and no `java` was found on PATH and JAVA_HOME is not set. {_REMEDY}"
        )
    return Path(found)


def java_major_version(java: Path) -> int:
    try:
        completed = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=60, check=False)
    except OSError as error:
        raise EngineStartError(f"Could not run {java} -version: {error}. {_REMEDY}") from error
    output = completed.stderr + completed.stdout
    match = _VERSION.search(output)
    if match is None:
        raise EngineStartError(
            f"Could not read a Java version from `{java} -version` (it printed {output.strip()!r}). {_REMEDY}"
        )
    major = int(match.group(1))
    # Java 8 and older report "1.8.0_x"; the major version is the second number there.
    if major == 1 and match.group(2):
        major = int(match.group(2))
    return major


def require_java() -> Path:
    """Return the java binary Spark will use, or raise :class:`EngineStartError` saying what to do."""
    java = find_java()
    major = java_major_version(java)
    if major < MINIMUM_JAVA:
        raise EngineStartError(
            f"The tablestream adapter needs Java {MINIMUM_JAVA} or newer for Spark 4, "
            f"but {java} is Java {major}. {_REMEDY}"
        )
    return java
