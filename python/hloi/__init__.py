"""hloi: run XLA HLO programs from Python with hloi, a C interpreter of HLO.

    import numpy as np, hloi
    m = hloi.load("testdata/sources/matrix_plus_vector.hlo")
    m.run(np.array([[1, 2, 3], [4, 5, 6]], np.int32), np.array([7, 8, 9], np.int32))

Everything is implemented in the C extension hloi._hloi; see python/README.md.
"""

from hloi._hloi import (
    CheckError,
    Error,
    FileError,
    HloArray,
    InvalidArgumentError,
    MemoryLimitError,
    Module,
    Parameter,
    ParseError,
    StoppedError,
    TimeoutError,
    UnsupportedError,
    bits,
    have_ml_dtypes,
    hloi_version,
    load,
    run,
)

__version__ = hloi_version

__all__ = [
    "CheckError",
    "Error",
    "FileError",
    "HloArray",
    "InvalidArgumentError",
    "MemoryLimitError",
    "Module",
    "Parameter",
    "ParseError",
    "StoppedError",
    "TimeoutError",
    "UnsupportedError",
    "bits",
    "have_ml_dtypes",
    "load",
    "run",
]
