# Compiled build only (reclass_ng/compiled.py): Cython reads this beside resolver.py, the
# pure-Python install ignores it. Resolver becomes an extension type: its attributes are C
# fields and the methods on the render's hot path C calls (cpdef: still callable from Python;
# methods holding a lambda stay def). See doc/performance.rst, "The optional compiled build".

cimport cython

from reclass_ng.merge cimport Merger
from reclass_ng.resolve.shared_subtrees cimport SharedSubtrees
from reclass_ng.values cimport Interpolation

cdef class Resolver(SharedSubtrees):
    cdef dict __dict__  # an attribute added to resolver.py before it is declared here
    cdef public Resolver refs
    cdef public Merger merger
    cdef public bint group_errors
    cdef public object warn
    cdef public object query
    cdef public dict in_progress
    cdef public list errors
    cdef public object reference_defaults
    cdef public object default_values
    cdef public bint fast_references
    cdef public bint fast_observed
    cdef public object _memo_min_dirty
    cdef public object _memo_given_up

    @cython.locals(plain=frozenset)  # PLAIN: typed, `in` is a C set lookup
    cpdef _render_children(self, container, path)
    @cython.locals(interpolation=Interpolation)
    cpdef _render_keys(self, container, keys, path)
    @cython.locals(nesting=Py_ssize_t, shared=Py_ssize_t, nesting_there=Py_ssize_t,
                   end=Py_ssize_t, walked=Py_ssize_t, last=tuple)
    cpdef Py_ssize_t _nesting_at(self, tuple path, value) except -1
    cpdef _render_layer(self, layer, path)
    cpdef _rendered_observed(self, container, key, value, path)
    cpdef render_interp(self, interp, path)
    cpdef _lookup_ref(self, ref, interp, path)
    @cython.locals(size=Py_ssize_t, at=Py_ssize_t)
    cpdef _expanded(self, value, interp, path)
    cpdef lookup(self, ref_path, interp, path)
    cpdef _lookup_walk(self, keys, ref_path, interp, path)
    cpdef _rendered_child(self, container, index, walked, ref_path, interp, path, shallow=*)
    @cython.locals(plain=frozenset)
    cpdef _ensure_rendered(self, node, walked, ref_path, interp, path)
