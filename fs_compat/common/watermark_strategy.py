"""``pyflink.common.watermark_strategy``: ``WatermarkStrategy`` and ``TimestampAssigner``."""

from ._watermark import TimestampAssigner, WatermarkStrategy

__all__ = ["TimestampAssigner", "WatermarkStrategy"]
