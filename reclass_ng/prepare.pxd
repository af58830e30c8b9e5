# Compiled build only (reclass_ng/compiled.py): Cython reads this beside prepare.py, the
# pure-Python install ignores it. EntityPreparer becomes an extension type (C fields, and
# the walk over every key of every file a C call). See doc/performance.rst, "The optional
# compiled build".

cimport cython


cdef class EntityPreparer:
    cdef dict __dict__  # an attribute added to prepare.py before it is declared here
    cdef public object settings
    cdef public object parser
    cdef public dict prefixes
    cdef public dict _templates
    cdef public object _queries
    cdef public set kept_prefixes
    cdef public bint shares_mappings

    cpdef mapping(self, value, key, source, copy=*)
    # The fast path's containers are exact dicts and lists (its callers check): their loops
    # are dict's and list's own iteration, without a call of `items()`.
    @cython.locals(needs_resolving=frozenset, prefixes=dict, templates=dict, dirty=list,
                   ref_open=str, query_open=str, text=str)
    cpdef _shared_mapping(self, dict mapping, source, tuple path)
    @cython.locals(dirty=list, ref_open=str, query_open=str)
    cpdef _shared_list(self, list items, source, tuple path)
    @cython.locals(dirty=list, ref_open=str, query_open=str)
    cpdef _shared_item_mapping(self, dict mapping, source, tuple path)
    cpdef _shared_item(self, item, source, path, key)
    @cython.locals(needs_resolving=frozenset)  # NEEDS_RESOLVING: `in` is a C set lookup
    cpdef _mapping(self, mapping, source, path)
    cpdef _value(self, value, source, path)
    cpdef string(self, text, source, path)
    cpdef _syntax_string(self, text, source, path)
