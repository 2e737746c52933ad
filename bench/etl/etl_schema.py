"""The ETL benchmark's schema, shared by the references, the checks and run.py.

The Glue types of bench/etl/gen_csv.py's COLUMNS as Arrow types (CONTRACT.md's table: decimal is
decimal128(10, 2), date date32, timestamp timestamp[us]), and the types Glue infers from the CSV
text (what an ApplyMapping's source types say).
"""
import pyarrow as pa

from gen_csv import COLUMNS, PARTITION  # noqa: F401 - re-exported

ARROW = {"long": pa.int64(), "int": pa.int32(), "double": pa.float64(),
         "decimal": pa.decimal128(10, 2), "string": pa.string(), "boolean": pa.bool_(),
         "date": pa.date32(), "timestamp": pa.timestamp("us")}

# What Glue's CSV reader infers from the text (CONTRACT.md: ints that fit 32 bits are int, else
# long; numbers with a fraction double; everything that is not a number string).
INFERRED = {"order_id": "long", "customer_id": "int", "product_id": "int", "quantity": "int",
            "unit_price": "double", "discount": "double", "amount": "double", "tax": "double"}


def target_schema():
    return pa.schema([(name, ARROW[glue]) for name, glue in COLUMNS])


def mappings():
    """ApplyMapping tuples: (source, source type, target, target type)."""
    return [(name, INFERRED.get(name, "string"), name, glue) for name, glue in COLUMNS]
