"""callscope: a terminal debugger for streamed LLM tool calls.

The package is this folder: ``core``, ``tui``, ``net`` and ``sessions`` in it are relative links
to the top-level folders of the checkout, so the code is kept where it always was while Python,
setuptools, mypy and import-linter all see one package, ``callscope``. Import ``callscope.core``,
never the top-level ``core`` (that one refuses to load, so no module is ever loaded twice).
"""
