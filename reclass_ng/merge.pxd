# Compiled build only (reclass_ng/compiled.py): Cython reads this beside merge.py, the
# pure-Python install ignores it. Merger becomes an extension type: its attributes are C
# fields and its methods C calls (from the resolver and the class walk too). See
# doc/performance.rst, "The optional compiled build".

cimport cython

from reclass_ng.values cimport Layer, OwnedDict, Stack


# What a node's merge accumulates: its fields are read and written for every entity merged
# into it (merge_entity types its node), so they are C fields.
cdef class MergedNode:
    cdef dict __dict__  # an attribute added to merge.py before it is declared here
    cdef public object name
    cdef public object uri
    cdef public list classes
    cdef public set _class_set
    cdef public list applications
    cdef public object parameters
    cdef public object exports
    cdef public object environment
    cdef public object frozen_base


cdef class Merger:
    cdef dict __dict__  # an attribute added to merge.py before it is declared here
    cdef public object settings
    cdef public dict _split_paths
    cdef public bint inlined_merge
    cdef public set kept_prefixes
    cdef public dict _prefixes

    cpdef split_paths(self, delimiter)
    cpdef merge_entity(self, MergedNode node, entity, observer=*)
    # origin: a dict or None (OwnedDict.origin); typed, its .get is a C lookup. target: an
    # OwnedDict always; typed, .origin and .src are C fields, not __getattr__-hooked lookups.
    # mapping_types: MAPPING_TYPES, typed: `in` is a C set lookup.
    @cython.locals(origin=dict, target=OwnedDict, mapping_types=frozenset)
    cpdef merge_mapping(self, target, new, source, path, record=*)
    cpdef merge_mapping_per_key(self, target, new, source, path, record=*)
    cpdef merge_value(self, old, new, old_source, source, path, record=*)
    @cython.locals(stack=Stack)
    cpdef push_layers(self, old, new, old_source, source, path, record=*)
    @cython.locals(layer=Layer)
    cpdef fold(self, layers, render, path, warn, record=*)
