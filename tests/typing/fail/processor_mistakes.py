"""Mistakes in FSProcessorDriver subclasses and codecs."""

from __future__ import annotations

from fs_api import Context, FSProcessorDriver
from fs_api_advanced import Codec


class WrongSignature(FSProcessorDriver):
    # process takes (ctx, source_id, data).
    def process(self, ctx: Context, data: bytes) -> None:  # E: Signature of "process" incompatible with supertype "fs_api._driver.FSProcessorDriver"  [override]
        ctx.emit(data)


class EmitsText(FSProcessorDriver):
    def process(self, ctx: Context, source_id: int, data: bytes) -> None:
        # emit takes bytes.
        ctx.emit(data.decode())  # E: Argument 1 to "emit" of "Context" has incompatible type "str"; expected "bytes"  [arg-type]


class Forgotten(FSProcessorDriver):
    def init(self, ctx: Context, config: dict[str, str]) -> None:
        pass


class TextCodec(Codec[str]):
    # encode must return bytes.
    def encode(self, value: str) -> str:  # E: Return type "str" of "encode" incompatible with return type "bytes" in supertype "fs_api_advanced._codecs.Codec"  [override]
        return value

    def decode(self, data: bytes) -> str:
        return data.decode()


# process() is abstract: a processor without it cannot be created.
proc = Forgotten()  # E: Cannot instantiate abstract class "Forgotten" with abstract attribute "process"  [abstract]
