# The Glue job of tests/airflow/dags/openglue_dag.py: reads the table the DAG's crawler made and
# writes the orders over 10 as Parquet. A plain AWS Glue script; Airflow uploads it to S3.
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import Filter
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "database", "table", "output"])
glue_context = GlueContext(SparkContext.getOrCreate())
job = Job(glue_context)
job.init(args["JOB_NAME"], args)

orders = glue_context.create_dynamic_frame.from_catalog(database=args["database"],
                                                        table_name=args["table"],
                                                        transformation_ctx="orders")
big = Filter.apply(frame=orders, f=lambda row: row["amount"] > 10)
glue_context.write_dynamic_frame.from_options(frame=big, connection_type="s3",
                                              connection_options={"path": args["output"]},
                                              format="parquet")
print(f"wrote {big.count()} of {orders.count()} orders to {args['output']}")
job.commit()
