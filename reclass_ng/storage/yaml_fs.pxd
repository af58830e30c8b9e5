# Compiled build only (reclass_ng/compiled.py): Cython reads this beside yaml_fs.py, the
# pure-Python install ignores it. The scan of classes/ with its locals typed: a file name's
# characters compared in C, its slices and the names' concatenations string operations
# without the generic operators' dispatch, the mapping's stores dict's own.

cimport cython


@cython.locals(classes=dict, sep=str, directory=str, relative=str, names=list, dotted=str,
               named=str, known=Py_ssize_t, filename=str, stem=str)
cpdef class_files(str top)
