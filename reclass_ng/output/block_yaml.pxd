# Compiled build only (reclass_ng/compiled.py): Cython reads this beside block_yaml.py, the
# pure-Python install ignores it. BlockYamlWriter becomes an extension type: its memos are C
# fields (not instance-dict lookups), the methods writing a node's lines C calls, and the
# loops' locals typed, so that a memo's `in` and subscript are dict's C functions and the
# indentations C integers. See doc/performance.rst, "The optional compiled build".

cimport cython


# The module's constants the writer reads once per mapping or item: C globals (no module
# dict lookup). Nothing outside this module reads them (SHARED_TEXT_CHARS and MEMO_ENTRIES,
# which a test changes, stay module attributes).
cdef frozenset _DICTS
cdef frozenset _LISTS
cdef tuple _SPACES
cdef Py_ssize_t _SPACED
cdef bytes _NAME_TABLE
cdef bytes _VALUE_TABLE
cdef str _NOT_MET


cpdef bint plain_as_is(str text) except -1
cpdef value_spelling(str text)
cpdef bint _plain_reads_as_string(str text) except -1


cdef class BlockYamlWriter:
    cdef dict _keys
    cdef dict _strings
    cdef dict _placed
    cdef list _str_lines
    cdef list _int_lines
    cdef list _item_lines
    cdef Py_ssize_t _line_count
    cdef dict _others
    cdef set _met
    cdef dict _shared_texts
    cdef dict _orders
    cdef Py_ssize_t _order_keys
    cdef object _dumper
    cdef dict _kept  # None: not streaming
    cdef Py_ssize_t _shared_chars
    cdef public Py_ssize_t fallbacks
    cdef public Py_ssize_t whole_fallbacks

    cpdef str document(self, data)
    cpdef str node_text(self, name, info)
    cpdef _bound_memos(self)
    @cython.locals(names=list, in_order=tuple, keys=dict, str_lines=dict, by_value=dict,
                   by_int=dict,
                   spaces=str, inner_spaces=str, inner=Py_ssize_t, column=Py_ssize_t, line=str,
                   key=str, shared=str)
    cpdef _mapping(self, mapping, Py_ssize_t indent, str lead, list out)
    @cython.locals(spaces=str, line=str)
    cpdef str _int_entry(self, name, value, Py_ssize_t indent)
    @cython.locals(by_value=dict, spaces=str, line=str, key=str, text=str,
                   column=Py_ssize_t)
    cpdef str _string_entry(self, name, str value, Py_ssize_t indent, dict str_lines)
    cpdef tuple _lines_at(self, Py_ssize_t indent)
    @cython.locals(inner=Py_ssize_t)
    cpdef _complex_entry(self, name, value, Py_ssize_t indent, str lead, list out)
    @cython.locals(spaces=str, item_lines=dict, inner=Py_ssize_t, line=str, shared=str)
    cpdef _sequence(self, items, Py_ssize_t indent, str lead, list out)
    @cython.locals(text=str, inner=Py_ssize_t, line=str)
    cpdef str _string_item(self, str value, Py_ssize_t indent, dict item_lines)
    @cython.locals(text=str)
    cpdef str _shared(self, value, Py_ssize_t indent, bint sequence)
    cpdef str _spell(self, str value)
    @cython.locals(text=str)
    cpdef str _placed_text(self, str value, Py_ssize_t column, Py_ssize_t indent)
    cpdef bint _reads_as_string(self, str text) except -1
    cpdef str _key(self, name)
    cpdef str _complex_key_text(self, name, Py_ssize_t column)
    @cython.locals(text=str)
    cpdef str _scalar(self, value, kind, Py_ssize_t column, Py_ssize_t indent)
    cpdef str _plain_other(self, value)
    cpdef _representer(self)
