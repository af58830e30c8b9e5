# Compiled build only (reclass_ng/compiled.py): Cython reads this beside seam.py, the
# pure-Python install ignores it. WriteObserver is an extension type so that the provenance
# record's SectionRecorder, told every write of a lint's render, can be one too
# (provenance_recorder.pxd); the engine's other observers subclass it as Python classes.

cdef class WriteObserver:
    pass
