"""Process plumbing both commands share: how a process meets its pipes and its C heap.

The harness (``conformance``) and the mock (``mockserver``) never import each other, yet both
are command-line processes with the same needs: exit quietly when stdout's reader goes away
(:mod:`procutil.broken_pipe`) and give large buffers back to the OS (:mod:`procutil.heap`).
This package is below both and imports neither (``tests/test_import_graph.py``), so each need
has one home instead of a copy on each side.
"""
