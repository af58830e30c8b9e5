# Compiled build only (reclass_ng/compiled.py): Cython reads this beside provenance.py, the
# pure-Python install ignores it. The record's writes become extension types: lint makes
# hundreds of thousands of them (372,000 Write at 2,000 `mcp` nodes), and a class written in
# Python cost each about 3,000 instructions to make (type_call, the __init__ call, a
# generic setattr a field), five times what an extension type costs (doc/performance.rst,
# "lint: the record's objects as extension types").

cdef class Write:
    cdef public object section
    cdef public object path
    cdef public object key
    cdef public object flag
    cdef public object written
    cdef public object source
    cdef public object order
    cdef public object effect
    cdef public object by
    cdef public object via
    cdef public object via_keys
    cdef public object final
    cdef public object _location
    cdef public object _positions


cdef class MergedEntity:
    cdef public object entity
    cdef public object listed_by
    cdef public object order
