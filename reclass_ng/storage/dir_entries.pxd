# Compiled build only (reclass_ng/compiled.py): Cython reads this beside dir_entries.py, the
# pure-Python install ignores it. The loop over a directory's entries with its locals typed:
# a name's first character compared in C, the lists' appends C calls. See
# doc/performance.rst, "The optional compiled build".

cimport cython


@cython.locals(files=list, walked=list, name=str, is_dir=bint)
cpdef directory_listing(path)
