# Compiled build only (reclass_ng/compiled.py): Cython reads this beside yaml_rules.py, the
# pure-Python install ignores it. Whether PyYAML's resolver table is its own, kept in C
# variables: standard_tags() is asked for most new strings the readers and the block writer
# meet, and was a class attribute and `sys.modules` looked up each time. See
# doc/performance.rst, "The optional compiled build".

cdef object _standard_table
cdef dict _modules


cpdef bint standard_tags() except -1
