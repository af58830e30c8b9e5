# Compiled build only (reclass_ng/compiled.py): Cython reads this beside shared_subtrees.py, the
# pure-Python install ignores it. SharedSubtrees becomes an extension type between FastPaths
# and Resolver (which declares the instance __dict__): the attributes its methods use are C
# fields here, where the base-most class using them declares them, and its methods C calls
# (cpdef; the ones taking or holding a callable stay def). See doc/performance.rst, "The
# optional compiled build".

cimport cython

from reclass_ng.resolve.fast_paths cimport FastPaths
from reclass_ng.resolve.rendered_subtrees cimport RenderedSubtrees, SubtreeReads, read_part

cdef class SharedSubtrees(FastPaths):
    cdef public RenderedSubtrees subtrees  # or None
    cdef public object root
    cdef public object delimiter
    cdef public bint list_index_last
    cdef public dict _split
    cdef public dict _read_parts
    cdef public object _print_warning
    cdef public object record  # a WriteObserver or None (Resolver sets it)

    # Locals that are always exact dicts or lists (or None): typed, .get and .append are
    # C calls, not method lookups.
    @cython.locals(subtrees=RenderedSubtrees, by_paths=dict, by_values=dict,
                   outer=SubtreeReads)
    cpdef _reuse(self, made_by, container, key, path)
    @cython.locals(parts=dict, key=list)
    cpdef _read_key_now(self, paths)
    cpdef _rendered_value(self, ref_path)
    cpdef tuple _split_path(self, ref_path)
    cpdef bint _count_reused(self, Py_ssize_t expanded) except -1
    cpdef _render_file_container(self, container, key, value, path)
    @cython.locals(reading=SubtreeReads)
    cpdef _render_for_memo(self, made_by, producers, rendered, path)
    # reading: each container being rendered, typed: .path, .kept and .read are C
    @cython.locals(reading=SubtreeReads)
    cpdef _note_read(self, ref_path, value, path)
    @cython.locals(reading=SubtreeReads)
    cpdef _unkeep(self)
