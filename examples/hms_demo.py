"""`make demo`, last part: the same catalog through the Hive Metastore protocol (docs/metastore.md).

What Spark, Hive or Trino would see at `hive.metastore.uris`, shown with a few hand-encoded Thrift
calls (no Thrift library needed): the databases, and the partitions of sales.orders."""
import socket
import struct
import sys


def call(port, method, *string_args):
    """A strict binary-protocol call with string arguments 1..n; returns its list<string> result."""
    def tstring(text):
        data = text.encode()
        return struct.pack(">i", len(data)) + data
    body = b"".join(b"\x0b" + struct.pack(">h", i + 1) + tstring(a) for i, a in enumerate(string_args))
    request = struct.pack(">I", 0x80010001) + tstring(method) + struct.pack(">i", 1) + body + b"\x00"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        stream = sock.makefile("rb")

        def take(n):
            data = stream.read(n)
            if len(data) != n:
                raise RuntimeError(f"{method}: connection closed")
            return data

        def i32():
            return struct.unpack(">i", take(4))[0]

        kind = i32() & 0xFF
        take(i32())  # method name
        i32()  # sequence id
        field_type, field_id = take(1)[0], struct.unpack(">h", take(2))[0]
        if kind != 2 or field_type != 15 or field_id != 0:
            raise RuntimeError(f"{method}: not a list result (message type {kind}, field {field_id})")
        take(1)  # element type: string
        return [take(i32()).decode() for _ in range(i32())]


port = int(sys.argv[1])
print(f"== The same catalog as a Hive Metastore: thrift://127.0.0.1:{port}")
print("get_all_databases ->", call(port, "get_all_databases"))
print("get_all_tables('sales') ->", call(port, "get_all_tables", "sales"))
names = call(port, "get_partition_names", "sales", "orders")
print(f"get_partition_names('sales', 'orders') -> {len(names)} partitions, e.g. {names[:3]}")
print("Spark: .config('spark.hadoop.hive.metastore.uris', "
      f"'thrift://127.0.0.1:{port}').enableHiveSupport() -> spark.sql('SELECT ... FROM sales.orders')")
