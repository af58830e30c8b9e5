# Compiled build only (reclass_ng/compiled.py): Cython reads this beside values.py, the
# pure-Python install ignores it. OwnedDict, the node's own mappings, becomes an extension type:
# a dict subclass written in Python reaches `d[k]` and `k in d` through the generic slot
# wrappers (dict defines __getitem__ and __contains__ as methods too, so a Python subclass
# gets slot_mp_subscript, a method call per subscript); an extension type inherits dict's C
# slots. auto_pickle off: pickling goes through copyreg as for the Python classes (its
# __reduce__), not through a generated reducer that would drop the items. UnresolvedDict
# stays a Python class: prepare.py makes it with dict.__new__, which refuses extension types.

cimport cython

# The copies of a node's tree: C functions, so that their recursion into nested containers
# is a C call (bounded by the nesting of a file, storage.yaml_load.MAX_YAML_DEPTH).
@cython.locals(dirty=list, again=frozenset)
cpdef frozen_copy(value)
@cython.locals(dirty=list, items=list, again=frozenset)
cpdef _frozen_list(value)
cpdef unresolved_dict(items, dirty, bint merged)
cpdef owned_copy(value)
@cython.locals(layers=list)
cpdef _copied_stack(stack, copy, copied_types, shared)


# A key's layers (merge.py folds them, the resolver's fast path reads them): extension
# types, so that code typing them (fold, push_layers, _folded_scalars) reads their fields
# as C fields. Pickled (`--jobs`) and copied by Cython's generated reducers.
# A string holding references or queries, one per string a file writes (prepare.py makes
# thousands in a Salt model's render): an extension type, made without the generic
# __init__ call of a Python class.
cdef class Interpolation:
    cdef public object template
    cdef public object source
    cdef public object text
    cdef public object reference_path


cdef class Layer:
    cdef public object value
    cdef public object source
    cdef public object override
    cdef public object constant


cdef class Stack:
    cdef public list layers
    cdef public object shared

    cpdef owned_copy(self)


@cython.auto_pickle(False)
cdef class OwnedDict(dict):
    cdef public object src
    cdef public object origin

