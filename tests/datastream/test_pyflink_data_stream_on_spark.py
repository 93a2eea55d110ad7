"""The ported PyFlink DataStream tests again, on the Spark target: the same test bodies, with
``execution.target`` set to ``spark`` on the environment. Results must be identical to the
in-process target's (the assertions are the original ones)."""

from __future__ import annotations

import pytest
import test_pyflink_data_stream as ported

from fs_compat.common import Configuration

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_SPARK = Configuration().set_string("execution.target", "spark")


class _OnSpark:
    """Mixin: the class-level environment of the ported test classes runs on Spark."""

    env: ported.StreamExecutionEnvironment

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()  # type: ignore[misc]
        cls.env.configure(_SPARK)


class SparkProcessDataStreamStreamingTests(_OnSpark, ported.ProcessDataStreamStreamingTests):
    pass


class SparkProcessDataStreamBatchTests(_OnSpark, ported.ProcessDataStreamBatchTests):
    pass


class SparkEmbeddedDataStreamStreamTests(_OnSpark, ported.EmbeddedDataStreamStreamTests):
    pass


class SparkEmbeddedDataStreamBatchTests(_OnSpark, ported.EmbeddedDataStreamBatchTests):
    pass


class SparkCommonDataStreamTests(ported.CommonDataStreamTests):
    def setUp(self) -> None:
        super().setUp()
        self.env.configure(_SPARK)
