# Compiled build only (reclass_ng/compiled.py): Cython reads this beside resolve_fast.py, the
# pure-Python install ignores it. FastPaths becomes an extension type (the base of Resolver,
# which declares its instance __dict__): its attributes are C fields and its methods C calls.
# See doc/performance.rst, "The optional compiled build".

cdef class FastPaths:
    cdef public dict _targets
    cdef public object _refs_root
    cdef public dict _refs_split
    cdef public list _reading

    cpdef _note_read(self, ref_path, value, path)
    cpdef _rendered_now(self, value, path, key)
    cpdef _rendered_string(self, template)
    cpdef _folded_scalars(self, stack)
    cpdef _note_reads(self, value, path)
    cpdef _rendered_target(self, ref_path)
