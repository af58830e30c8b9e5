# Compiled build only (reclass_ng/compiled.py): Cython reads this beside merge.py, the
# pure-Python install ignores it. Merger becomes an extension type: its attributes are C
# fields and its methods C calls (from the resolver and the class walk too). See
# doc/performance.rst, "The optional compiled build".

cimport cython

from reclass_ng.values cimport OwnedDict


cdef class Merger:
    cdef dict __dict__  # an attribute added to merge.py before it is declared here
    cdef public object settings
    cdef public dict _split_paths

    cpdef split_paths(self, delimiter)
    cpdef merge_entity(self, node, entity, observer=*)
    # origin: a dict or None (OwnedDict.origin); typed, its .get is a C lookup. target: an
    # OwnedDict always; typed, .origin and .src are C fields, not __getattr__-hooked lookups.
    @cython.locals(origin=dict, target=OwnedDict)
    cpdef merge_mapping(self, target, new, source, path, record=*)
    cpdef merge_value(self, old, new, old_source, source, path, record=*)
    cpdef push_layers(self, old, new, old_source, source, path, record=*)
    cpdef fold(self, layers, render, path, warn, record=*)
