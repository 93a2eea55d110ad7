"""PyFlink's ``pyflink.util`` helpers that code and tests call (``java_utils``)."""

__all__: list[str] = []
