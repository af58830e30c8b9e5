# Compiled build only (reclass_ng/compiled.py): Cython reads this beside expansion.py, the
# pure-Python install ignores it. ClassExpander becomes an extension type (C fields, the
# depth-first walk C calls); SharedClassWalks stays a Python class (tests patch it). See
# doc/performance.rst, "The optional compiled build".

from reclass_ng.merge cimport Merger

cdef class ClassExpander:
    cdef dict __dict__  # an attribute added to expansion.py before it is declared here
    cdef public object loader
    cdef public Merger merger
    cdef public object settings
    cdef public object preparer
    cdef public object warn
    cdef public object ignorable
    cdef public set _plain_names
    cdef public object rendered_class_names

    cpdef walk(self, node, entity, seen, walking, observer=*, listed_by=*)
    cpdef walk_classes(self, node, entity, seen, walking, observer=*, entries=*)
    cpdef _class_name(self, listed, node, entity)
