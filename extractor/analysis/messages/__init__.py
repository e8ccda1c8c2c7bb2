"""Message templates, and the regex that full-matches every runtime rendering of them.

A message is read into *parts* (:mod:`.parts`): literal text and a placeholder for each dynamic
piece, written as its source text (``{dtype!r}``, ``{x:.2f}``, ``{x=}``). Every form sglang uses
is read (:mod:`.expressions`): literals and implicit concatenation, ``+``, ``%`` and
``.format()`` (:mod:`.formats`), f-strings through LibCST (:mod:`.fstrings`), ``textwrap.dedent``
and ``.strip()`` (:mod:`.whitespace`), ``sep.join([...])`` over a literal list, and a message held
in a local variable or module constant; a helper's parameters are rewritten in the call site's
terms (:mod:`.names`). :mod:`.patterns` builds the template and the regex from the parts, and
:mod:`.exception_str` what ``str(exc)`` prints for the exception's arguments.
"""
