# Compiled build only (reclass_ng/compiled.py): Cython reads this beside grammar.py, the
# pure-Python install ignores it. ValueParser becomes an extension type: its sentinels and
# memo are C fields, parse's call of the plain path a C call, and that path's positions C
# integers over a typed string (its `find`s are PyUnicode_Find). See doc/performance.rst,
# "The optional compiled build".

cimport cython


cdef class ValueParser:
    cdef public str ref_open
    cdef public str ref_close
    cdef public str query_open
    cdef public str query_close
    cdef public str escape
    cdef public tuple _top_stops
    cdef public tuple _ref_stops
    cdef public tuple _query_stops
    cdef public tuple _after_double_escape
    cdef public dict _cache
    cdef public object _lock
    cdef public frozenset _not_simple

    cpdef parse(self, str text)
    @cython.locals(r_open=str, r_close=str, items=list, pos=Py_ssize_t, start=Py_ssize_t,
                   inner=Py_ssize_t, end=Py_ssize_t)
    cpdef simple_template(self, str text)
