"""PyFlink's ``pyflink.datastream.connectors.base``: ``Source``, ``Sink``, ``DeliveryGuarantee``."""

from ._base import (
    DeliveryGuarantee,
    Sink,
    Source,
    StreamTransformer,
    SupportsPreprocessing,
)

__all__ = [
    "DeliveryGuarantee",
    "Sink",
    "Source",
    "StreamTransformer",
    "SupportsPreprocessing",
]
