"""PyFlink's ``pyflink.datastream.formats``: the JSON (``json``) and CSV (``csv``) row schemas,
plain Python here; Avro, Parquet and ORC are read and written with Spark
(``env.from_dataframe(spark.read.parquet(path))``, ``ds.to_dataframe().write.parquet(path)``)."""
