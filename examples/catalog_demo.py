"""A catalog round trip against OpenGlue with plain boto3, as a Glue user would write it.

Usage: python3 examples/catalog_demo.py http://127.0.0.1:4690
"""
import sys
import time

import boto3

endpoint = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:4690"
glue = boto3.client("glue", endpoint_url=endpoint, region_name="us-east-1",
                    aws_access_key_id="test", aws_secret_access_key="test")

print("== Create database 'sales' and a partitioned table 'orders'")
glue.create_database(DatabaseInput={"Name": "sales", "Description": "demo sales data"})
glue.create_table(
    DatabaseName="sales",
    TableInput={
        "Name": "orders",
        "TableType": "EXTERNAL_TABLE",
        "StorageDescriptor": {
            "Columns": [{"Name": "order_id", "Type": "bigint"}, {"Name": "amount", "Type": "double"}],
            "Location": "s3://demo-bucket/orders/",
            "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            "SerdeInfo": {"SerializationLibrary":
                          "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"},
        },
        "PartitionKeys": [{"Name": "year", "Type": "string"}, {"Name": "month", "Type": "string"}],
        "Parameters": {"classification": "parquet"},
    },
    PartitionIndexes=[{"IndexName": "by_year_month", "Keys": ["year", "month"]}],
)

print("== Add 36 monthly partitions in one BatchCreatePartition call")
inputs = [{"Values": [str(y), f"{m:02d}"],
           "StorageDescriptor": {"Location": f"s3://demo-bucket/orders/year={y}/month={m:02d}/"}}
          for y in (2022, 2023, 2024) for m in range(1, 13)]
errors = glue.batch_create_partition(DatabaseName="sales", TableName="orders",
                                     PartitionInputList=inputs)["Errors"]
print(f"   created {len(inputs) - len(errors)} partitions, {len(errors)} errors")

print("== Query partitions with an Expression (served by the partition index)")
start = time.perf_counter()
parts = glue.get_partitions(DatabaseName="sales", TableName="orders",
                            Expression="year = '2024' AND month BETWEEN '03' AND '05'")["Partitions"]
print(f"   {[p['Values'] for p in parts]} in {1000 * (time.perf_counter() - start):.1f} ms")

print("== Update the table schema: the old version is archived")
table = glue.get_table(DatabaseName="sales", Name="orders")["Table"]
new_input = {k: table[k] for k in ("Name", "StorageDescriptor", "PartitionKeys", "TableType", "Parameters")}
new_input["StorageDescriptor"]["Columns"].append({"Name": "customer", "Type": "string"})
glue.update_table(DatabaseName="sales", TableInput=new_input)
versions = glue.get_table_versions(DatabaseName="sales", TableName="orders")["TableVersions"]
for v in versions:
    cols = [c["Name"] for c in v["Table"]["StorageDescriptor"]["Columns"]]
    print(f"   version {v['VersionId']}: columns {cols}")

print("== Errors come back as Glue's exceptions")
try:
    glue.get_table(DatabaseName="sales", Name="nope")
except glue.exceptions.EntityNotFoundException as e:
    print(f"   EntityNotFoundException: {e.response['Error']['Message']}")
