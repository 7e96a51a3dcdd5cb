"""Reading the files of a results directory, which the repository keeps
gzipped where they are large (benchmarks/results/README.md): NAME is read
from NAME.gz where only that exists."""

import gzip
import os


def resolve(path):
    """path, or path + ".gz" where only that exists (path where neither
    does, so that the caller's open names the file it looked for)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return path + ".gz"
    return path


def open_text(path, newline=None):
    """The text of path (or path + ".gz", see resolve) for reading."""
    path = resolve(path)
    if path.endswith(".gz"):
        return gzip.open(path, "rt", newline=newline)
    return open(path, newline=newline)
