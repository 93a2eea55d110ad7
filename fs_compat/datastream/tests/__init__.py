"""PyFlink's ``pyflink.datastream.tests`` helpers, so PyFlink's tests port by import change."""
