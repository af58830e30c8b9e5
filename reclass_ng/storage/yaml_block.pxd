# Compiled build only (reclass_ng/compiled.py): Cython reads this beside yaml_block.py, the
# pure-Python install ignores it. BlockYamlReader becomes an extension type: its memos are C
# fields, the methods parse calls for a line C calls, and parse's locals typed, so that a
# line's indentation is a C integer, a character a C character compared in C, and a memo's
# `get` dict's C lookup. See doc/performance.rst, "The optional compiled build".

cimport cython


# The module functions parse calls for some lines: C calls from it.
cpdef _push_block(list stack, tuple block, Py_ssize_t max_depth)
cpdef _enclosing_block(list stack, Py_ssize_t indent)
cpdef _lines_left(lines)
cpdef _read_block_scalar(str header, list lines, lines_left, Py_ssize_t parent)
cpdef _quoted_key(str text)
cpdef _quoted(str text)
cpdef _quoted_value(str text)
cpdef _leading_quoted(str text)


cdef class BlockYamlReader:
    cdef public object plain_tag
    cdef public object plain_value
    cdef public Py_ssize_t max_depth
    cdef public Py_ssize_t max_memo
    cdef public bint unique_keys
    cdef public dict _keys
    cdef public dict _values
    cdef public dict _entries

    @cython.locals(written=list, lines=list, tabs=Py_ssize_t, keys=dict, values=dict,
                   max_depth=Py_ssize_t, entry_memo=dict, unique=bint, root=dict,
                   level=Py_ssize_t, is_sequence=bint, indentless=bint, stack=list,
                   line=str, indent=Py_ssize_t, owner_indent=Py_ssize_t, from_key=bint,
                   opened=dict, content=str, first=Py_UCS4, dash=bint, tabs_read=Py_ssize_t,
                   rest=str, text_key=str, separator=str, indentation=str)
    cpdef parse(self, str text)
    cpdef _key(self, str text)
    @cython.locals(start=Py_ssize_t, number=Py_ssize_t, last=Py_ssize_t, breaks=Py_ssize_t,
                   end=Py_ssize_t, pieces=list, line=str, text=str)
    cpdef _scalar_below(self, str content, list lines, lines_left, Py_ssize_t parent,
                        Py_ssize_t depth)
    @cython.locals(scalar=str, first=Py_UCS4, comment=Py_ssize_t)
    cpdef _value(self, str text, Py_ssize_t depth)
    cpdef _anchor_or_alias(self, str text, anchors, tuple entry, list stack, list written,
                           lines_left)

