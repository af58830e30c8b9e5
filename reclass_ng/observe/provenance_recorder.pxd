# Compiled build only (reclass_ng/compiled.py): Cython reads this beside provenance_recorder.py,
# the pure-Python install ignores it. What a recorded render keeps of each entity's section
# and of each decision ending values, made for every node (245,000 EntityWrite and 96,000
# Kill in a lint of 2,000 `mcp` nodes), as extension types: see provenance.pxd.

cdef class Kill:
    cdef public object seq
    cdef public object kind
    cdef public object by_write
    cdef public object by_path
    cdef public object override
    cdef public object target
    cdef public object keep


cdef class EntityWrite:
    cdef public object source
    cdef public object value
    cdef public object order
    cdef public object notes
    cdef public object kept_keys
