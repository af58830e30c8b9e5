# Compiled build only (reclass_ng/compiled.py): Cython reads this beside provenance_recorder.py,
# the pure-Python install ignores it. What a recorded render keeps of each entity's section
# and of each decision ending values, made for every node (245,000 EntityWrite and 96,000
# Kill in a lint of 2,000 `mcp` nodes), as extension types: see provenance.pxd. The
# SectionRecorder, told every write of each node's render, too: its methods read and write
# its own memos as C fields, not through an instance dict.

from reclass_ng.observe.seam cimport WriteObserver

cdef class Kill:
    cdef public object seq
    cdef public object kind
    cdef public object by_write
    cdef public object by_path
    cdef public object override
    cdef public object target
    cdef public object keep


cdef class EntityWrite:
    cdef public object source
    cdef public object value
    cdef public object order
    cdef public object notes
    cdef public object kept_keys


cdef class SectionRecorder(WriteObserver):
    cdef object __weakref__  # (tests/test_subtree_recording.py: a record let go of)
    cdef public object counter
    cdef public object share
    cdef public set read_own
    cdef public bint shared_held
    cdef public dict _by_id
    cdef public list writes
    cdef public dict by_source
    cdef public dict reaching
    cdef public bint first_keys_indexed
    cdef public dict layer_writes
    cdef public dict layer_paths
    cdef public list stacked_layers
    cdef public dict resolved
    cdef public list rendered_references
    cdef public list reference_paths
    cdef public list reference_targets
    cdef public dict endings
    cdef public dict kills
    cdef public dict anchors
    cdef public object current
    cdef public list merging
    cdef public object next_order
