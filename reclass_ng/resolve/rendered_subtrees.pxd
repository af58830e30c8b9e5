# Compiled build only (reclass_ng/compiled.py): Cython reads this beside rendered_subtrees.py, the
# pure-Python install ignores it. The memo and the reads of a container being rendered
# become extension types: the resolver asks the memo about every file container it copies
# (several times), and tells each container being rendered what every reference read, so
# their attributes are C fields and their methods C calls (the resolver's side types its
# fields with them, resolve/shared_subtrees.pxd). See doc/performance.rst, "The optional compiled
# build".

cimport cython

# Module functions first: tests/test_compiled_build.py reads what follows a `cdef class`
# as its members.
cpdef read_key(values)
cpdef read_part(value)


cdef class SubtreeReads:
    cdef dict __dict__  # an attribute added to rendered_subtrees.py before it is declared here
    cdef public tuple path
    cdef public tuple prefix
    cdef public dict reads
    cdef public bint kept

    cpdef read(self, ref_path, keys, value)


cdef class RenderedSubtrees:
    cdef dict __dict__  # an attribute added to rendered_subtrees.py before it is declared here
    cdef public object min_dirty
    cdef public Py_ssize_t max_entries
    cdef public Py_ssize_t max_variants
    cdef public Py_ssize_t max_unused
    cdef public dict _entries
    cdef public Py_ssize_t _count
    cdef public set _met
    cdef public set _reused
    cdef public set given_up_files
    cdef public Py_ssize_t given_up
    cdef public Py_ssize_t hits
    cdef public Py_ssize_t misses

    cpdef read_paths(self, made_by)
    cpdef reused(self, made_by)
    cpdef met_before(self, made_by)
    @cython.locals(by_paths=dict, by_values=dict)
    cpdef keep(self, made_by, producers, dict reads, rendered, Py_ssize_t expanded,
               told=*)

