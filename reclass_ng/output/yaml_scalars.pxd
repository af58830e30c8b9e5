# Compiled build only (reclass_ng/compiled.py): Cython reads this beside yaml_scalars.py, the
# pure-Python install ignores it. _Line becomes an extension type (its column and flags C
# fields, its methods C calls), and the folding loops' positions C integers over typed
# strings. See doc/performance.rst, "The optional compiled build".

cimport cython


@cython.locals(at=Py_ssize_t, space=Py_ssize_t, last=Py_ssize_t)
cpdef Py_ssize_t _fold_at(str text, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t column,
                          bint space_may_follow) except? -2
@cython.locals(end=Py_ssize_t, parts=list, fold=str, start=Py_ssize_t, space=Py_ssize_t)
cpdef str _plain(str text, Py_ssize_t column, Py_ssize_t indent, bint allow_breaks)
@cython.locals(quoted=str, line=_Line, start=Py_ssize_t, end=Py_ssize_t, breaks=bint,
               stop=Py_ssize_t, after=Py_ssize_t)
cpdef str _single_quoted(str text, Py_ssize_t column, Py_ssize_t indent, bint allow_breaks)
@cython.locals(lines=list, first=str, spaces=str, parts=list, breaks=Py_ssize_t, run=str)
cpdef _single_quoted_unfolded(str text, Py_ssize_t column, Py_ssize_t indent)
@cython.locals(escaped=str, parts=list, fold=str, start=Py_ssize_t, line_column=Py_ssize_t,
               end=Py_ssize_t, space=Py_ssize_t)
cpdef str _double_quoted(str text, Py_ssize_t column, Py_ssize_t indent, bint allow_breaks)


cdef class _Line:
    cdef public list parts
    cdef public Py_ssize_t column
    cdef public Py_ssize_t indent
    cdef public bint indention
    cdef public bint whitespace

    cpdef write(self, str text)
    cpdef line_break(self)
    cpdef write_indent(self)
    @cython.locals(space=Py_ssize_t)
    cpdef write_folded(self, str text, Py_ssize_t start, Py_ssize_t stop)
    cpdef str text(self)
