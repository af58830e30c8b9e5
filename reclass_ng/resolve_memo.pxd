# Compiled build only (reclass_ng/compiled.py): Cython reads this beside resolve_memo.py, the
# pure-Python install ignores it. SharedSubtrees becomes an extension type between FastPaths
# and Resolver (which declares the instance __dict__): the attributes its methods use are C
# fields here, where the base-most class using them declares them, and its methods C calls
# (cpdef; the ones taking or holding a callable stay def). See doc/performance.rst, "The
# optional compiled build".

cimport cython

from reclass_ng.resolve_fast cimport FastPaths

cdef class SharedSubtrees(FastPaths):
    cdef public object subtrees
    cdef public object root
    cdef public object delimiter
    cdef public bint list_index_last
    cdef public dict _split
    cdef public dict _read_parts
    cdef public object _print_warning

    # Locals that are always exact dicts or lists (or None): typed, .get and .append are
    # C calls, not method lookups.
    @cython.locals(by_paths=dict, by_values=dict)
    cpdef _reuse(self, made_by, container, key)
    @cython.locals(parts=dict, key=list)
    cpdef _read_key_now(self, paths)
    cpdef _rendered_value(self, ref_path)
    cpdef _note_read(self, ref_path, value, path)
    cpdef _unkeep(self)
