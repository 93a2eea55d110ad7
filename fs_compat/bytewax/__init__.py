"""The Bytewax 0.21 mirror: port Bytewax code by replacing ``bytewax.`` with ``fs_compat.bytewax.``.

Modules: :mod:`.dataflow` (``Dataflow``, ``Stream``), :mod:`.operators` (``import ... as op``),
:mod:`.testing` (``TestingSource``, ``TestingSink``, ``run_main``), :mod:`.recovery`,
:mod:`.inputs`, :mod:`.outputs`, :mod:`.errors`; :mod:`.spark` (not in Bytewax) runs dataflows on
Spark DataFrames.
"""

__all__: list[str] = []
