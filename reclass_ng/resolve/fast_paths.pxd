# Compiled build only (reclass_ng/compiled.py): Cython reads this beside fast_paths.py, the
# pure-Python install ignores it. FastPaths becomes an extension type (the base of
# SharedSubtrees and Resolver, which declares the instance __dict__): its attributes are C
# fields and its methods C calls (_note_read, SharedSubtrees', is called as a Python method).
# See doc/performance.rst, "The optional compiled build".

cimport cython

from reclass_ng.values cimport Layer, Stack


@cython.locals(walked=frozenset)
cpdef walked_value(root, tuple keys)
cpdef value_at(tree, tuple keys, bint list_index_last=*)
@cython.locals(deepest=Py_ssize_t, depth=Py_ssize_t, containers=frozenset)
cpdef Py_ssize_t nesting_depth(value, Py_ssize_t budget) except -1


cdef class FastPaths:
    cdef public dict _targets
    cdef public object _refs_root
    cdef public dict _refs_split
    cdef public object _refs_delimiter
    cdef public list _reading
    cdef public Py_ssize_t expanded
    cdef public dict _plain_sizes

    cpdef _rendered_now(self, value, path, key)
    @cython.locals(found=dict)
    cpdef _rendered_string(self, template)
    cpdef _counted_text(self, text)
    # Locals holding the module's frozensets of types: typed, `in` is a C set lookup.
    @cython.locals(scalars=frozenset, layer=Layer, counted=Py_ssize_t, found=dict)
    cpdef _folded_scalars(self, Stack stack, bint strings=*)
    cpdef _note_reads(self, value, path)
    @cython.locals(walked=frozenset, keys=tuple)
    cpdef _rendered_target(self, ref_path)
    @cython.locals(keys=tuple, expanded=Py_ssize_t, size=Py_ssize_t)
    cpdef _counted_target(self, ref_path, Py_ssize_t at)
    @cython.locals(depth=Py_ssize_t)
    cpdef Py_ssize_t _rendered_depth(self, value) except -1
    @cython.locals(size=Py_ssize_t, containers=frozenset)
    cpdef Py_ssize_t _expansion_size(self, value) except -1
