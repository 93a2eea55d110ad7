"""The Bytewax 0.21 mirror: port Bytewax code by replacing ``bytewax.`` with ``fs_compat.bytewax.``.

Modules: :mod:`.dataflow` (``Dataflow``, ``Stream``), :mod:`.operators` (``import ... as op``;
:mod:`.operators.windowing`, :mod:`.operators.helpers`), :mod:`.testing` (``TestingSource``,
``TestingSink``, ``run_main``, ``cluster_main``), :mod:`.recovery`, :mod:`.inputs`, :mod:`.outputs`,
:mod:`.errors`, :mod:`.connectors` (``stdio``, ``files``, ``demo``, ``kafka``), :mod:`.run`
(``python -m fs_compat.bytewax.run module:flow``); :mod:`.spark` (not in Bytewax) runs dataflows on
Spark DataFrames.
"""

__all__: list[str] = []
