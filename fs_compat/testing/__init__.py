"""PyFlink's ``pyflink.testing`` helpers."""

__all__: list[str] = []
