"""openglue_runtime.studio_codegen: the script of a Glue Studio graph (docs/visual-jobs.md). Every
supported node type gives valid Python of Studio's shape; a graph that cannot be generated is
refused with a message naming the node. The end-to-end runs are in tests/test_visual_jobs.py."""
import pytest

from openglue_runtime import studio_codegen as cg
from openglue_runtime.engine_select import select_engine


def source(name="Amazon S3"):
    return {"S3CsvSource": {"Name": name, "Paths": ["s3://b/in/"], "Separator": "pipe",
                            "QuoteChar": "disabled", "WithHeader": True}}


def target(inputs, name="Out"):
    return {"S3DirectTarget": {"Name": name, "Inputs": inputs, "Path": "s3://b/out/",
                               "Format": "csv", "Compression": "gzip"}}


ALL_NODES = {
    "node-1": source(),
    "node-2": {"S3JsonSource": {"Name": "Json", "Paths": ["s3://b/j/"], "JsonPath": "$[*]"}},
    "node-3": {"S3ParquetSource": {"Name": "Parquet", "Paths": ["s3://b/p/"], "Recurse": True}},
    "node-4": {"S3CatalogSource": {"Name": "Cat", "Database": "db", "Table": "t",
                                   "PartitionPredicate": "year='2024'"}},
    "node-5": {"CatalogSource": {"Name": "Cat2", "Database": "db", "Table": "t2"}},
    "node-6": {"ApplyMapping": {"Name": "Map", "Inputs": ["node-1"], "Mapping": [
        {"ToKey": "id", "FromPath": ["id"], "FromType": "string", "ToType": "long"},
        {"ToKey": "gone", "FromPath": ["gone"], "FromType": "string", "ToType": "string",
         "Dropped": True},
        {"ToKey": "addr", "FromPath": ["address"], "FromType": "struct", "ToType": "struct",
         "Children": [{"ToKey": "town", "FromPath": ["address", "city"], "FromType": "string",
                       "ToType": "string"}]}]}},
    "node-7": {"SelectFields": {"Name": "Select", "Inputs": ["node-6"], "Paths": [["id"], ["addr", "town"]]}},
    "node-8": {"DropFields": {"Name": "Drop", "Inputs": ["node-7"], "Paths": [["x"]]}},
    "node-9": {"RenameField": {"Name": "Rename", "Inputs": ["node-8"], "SourcePath": ["id"],
                               "TargetPath": ["key"]}},
    "node-10": {"Filter": {"Name": "Filter", "Inputs": ["node-9"], "LogicalOperator": "OR", "Filters": [
        {"Operation": "ISNULL", "Values": [{"Type": "COLUMNEXTRACTED", "Value": ["key"]}]},
        {"Operation": "LTE", "Negated": True, "Values": [
            {"Type": "COLUMNEXTRACTED", "Value": ["key"]}, {"Type": "CONSTANT", "Value": ["1.5"]}]},
        {"Operation": "EQ", "Values": [
            {"Type": "COLUMNEXTRACTED", "Value": ["addr", "town"]},
            {"Type": "CONSTANT", "Value": ["Paris \"Centre\""]}]}]}},
    "node-11": {"Join": {"Name": "Join", "Inputs": ["node-10", "node-2"], "JoinType": "leftanti",
                         "Columns": [{"From": "node-2", "Keys": [["k2"]]},
                                     {"From": "node-10", "Keys": [["key"]]}]}},
    "node-12": {"Union": {"Name": "Union", "Inputs": ["node-11", "node-3"], "UnionType": "DISTINCT"}},
    "node-13": {"SparkSQL": {"Name": "SQL", "Inputs": ["node-12", "node-4"],
                             "SqlQuery": "select * from a join b on a.k = b.k where a.s like '%\\\\%'",
                             "SqlAliases": [{"From": "node-12", "Alias": "a"},
                                            {"From": "node-4", "Alias": "b"}]}},
    "node-14": {"DropNullFields": {"Name": "Nulls", "Inputs": ["node-13"],
                                   "NullCheckBoxList": {"IsEmpty": True, "IsNegOne": True},
                                   "NullTextList": [{"Value": "n/a", "Datatype": {"Id": "STRING", "Label": "s"}}]}},
    "node-15": {"DropDuplicates": {"Name": "Dedup", "Inputs": ["node-14"]}},
    "node-16": {"Aggregate": {"Name": "Agg", "Inputs": ["node-15"], "Groups": [["key"]],
                              "Aggs": [{"Column": ["v"], "AggFunc": "countDistinct"}]}},
    "node-17": {"Spigot": {"Name": "Spigot", "Inputs": ["node-16"], "Path": "s3://b/s/", "Prob": 0.5}},
    "node-18": {"CustomCode": {"Name": "Custom", "Inputs": ["node-17", "node-5"], "ClassName": "MyTransform",
                               "Code": "df = dfc.select(list(dfc.keys())[0]).toDF()\n"
                                       "if df.count() > 0:\n    pass\n"
                                       "return DynamicFrameCollection({\"o\": DynamicFrame.fromDF(df, glueContext, \"o\")}, glueContext)"}},
    "node-19": {"SelectFromCollection": {"Name": "Pick", "Inputs": ["node-18"], "Index": 0}},
    "node-20": target(["node-19"]),
    "node-21": {"S3GlueParquetTarget": {"Name": "GP", "Inputs": ["node-19"], "Path": "s3://b/gp/",
                                        "PartitionKeys": [["key"]], "NumberTargetPartitions": "4"}},
    "node-22": {"S3CatalogTarget": {"Name": "CT", "Inputs": ["node-19"], "Database": "db", "Table": "o",
                                    "SchemaChangePolicy": {"EnableUpdateCatalog": True,
                                                           "UpdateBehavior": "LOG"}}},
    "node-23": {"CatalogTarget": {"Name": "BT", "Inputs": ["node-5"], "Database": "db", "Table": "o2"}},
    "node-24": {"EvaluateDataQuality": {"Name": "DQ", "Inputs": ["node-1"], "Ruleset": "Rules = [ RowCount > 0 ]"}},
    "node-25": {"EvaluateDataQualityMultiFrame": {"Name": "DQ2", "Inputs": ["node-24"],
                                                  "Ruleset": "Rules = [ ColumnCount > 0 ]"}},
}


def test_every_supported_node_type_gives_a_valid_script_of_studios_shape():
    script = cg.generate(ALL_NODES)
    compile(script, "generated", "exec")
    types = {next(iter(n)) for n in ALL_NODES.values()}
    assert types == set(cg.GENERATORS)  # the graph uses every supported type
    assert script.startswith("import sys\nfrom awsglue.transforms import *\n")
    assert script.rstrip().endswith("job.commit()")
    for name in ("Amazon S3", "Map", "Filter", "Join", "Union", "SQL", "Custom", "Pick", "BT"):
        assert f"# Script generated for node {name}\n" in script
    for fragment in (
            '"quoteChar": "-1"', '"separator": "|"',
            'push_down_predicate="year=\'2024\'"',
            'mappings=[("id", "string", "id", "long"), ("address.city", "string", "addr.town", "string")]',
            'f=lambda row: (row["key"] is None or not(row["key"] <= 1.5) or '
            'row["addr"]["town"] == "Paris \\"Centre\\"")',
            'Filter_node10.toDF().join(Json_node2.toDF(), (Filter_node10.toDF()["key"] == '
            'Json_node2.toDF()["k2"]), "leftanti")',
            'sparkUnion(glueContext, unionType = "DISTINCT"',
            'mapping = {"a": Union_node12, "b": Cat_node4}',
            'nullStringSet={"", "n/a"}, nullIntegerSet={-1}',
            'Union_node12', 'Dedup_node15 = DynamicFrame.fromDF(Nulls_node14.toDF().dropDuplicates(), ',
            'aggs = [["v", "countDistinct"]]', 'options={"prob": 0.5}',
            'def MyTransform(glueContext, dfc) -> DynamicFrameCollection:\n    df = dfc.select',
            'MyTransform(glueContext, DynamicFrameCollection({"Spigot_node17": Spigot_node17, '
            '"Cat2_node5": Cat2_node5}, glueContext))',
            'key=list(Custom_node18.keys())[0]',
            'connection_options={"path": "s3://b/out/", "compression": "gzip", "partitionKeys": []}',
            'frame=Pick_node19.repartition(4), connection_type="s3", format="glueparquet"',
            'additional_options={"enableUpdateCatalog": True, "updateBehavior": "LOG"}',
            'BT_node23 = glueContext.write_dynamic_frame.from_catalog(frame=Cat2_node5, database="db", '
            'table_name="o2", transformation_ctx="BT_node23")'):
        assert fragment in script, fragment
    # Upstream blocks come first.
    assert script.index("# Script generated for node Pick") < script.index("# Script generated for node GP")
    assert script.index("# Script generated for node Json\n") < script.index("# Script generated for node Join")


def test_a_glue_only_graph_runs_on_the_embedded_engine_and_a_sql_one_on_spark():
    glue_only = {"node-1": source(), "node-2": {"Filter": {
        "Name": "F", "Inputs": ["node-1"], "LogicalOperator": "AND", "Filters": [
            {"Operation": "REGEX", "Values": [{"Type": "COLUMNEXTRACTED", "Value": ["a"]},
                                              {"Type": "CONSTANT", "Value": ["^x"]}]}]}},
        "node-3": target(["node-2"])}
    assert select_engine(cg.generate(glue_only), "auto")[0] == "embedded"
    sql = dict(glue_only, **{"node-2": {"SparkSQL": {
        "Name": "Q", "Inputs": ["node-1"], "SqlQuery": "select 1",
        "SqlAliases": [{"From": "node-1", "Alias": "s"}]}}})
    assert select_engine(cg.generate(sql), "auto", spark_available=True)[0] == "spark"


@pytest.mark.parametrize("nodes,message", [
    ({"node-1": source(), "node-2": {"FillMissingValues": {"Name": "F", "Inputs": ["node-1"],
                                                           "ImputedPath": "a"}}},
     "unsupported visual node node-2 of type FillMissingValues"),
    ({"node-1": source(), "node-2": {"EvaluateDataQuality": {"Name": "DQ", "Inputs": ["node-1"],
                                                             "Ruleset": "Rules = [ Foo ]"}}},
     "its Ruleset is not DQDL: line 1, column 11: unknown rule type 'Foo'"),
    ({"node-1": {"JDBCConnectorSource": {"Name": "J", "ConnectionName": "c", "ConnectorName": "x",
                                         "ConnectionType": "jdbc"}}},
     "unsupported visual node node-1 of type JDBCConnectorSource"),
    ({"node-1": source(), "node-2": target(["node-9"])},
     "visual node node-2 (S3DirectTarget \"Out\"): takes its input from node node-9"),
    ({"node-1": {"SelectFields": {"Name": "A", "Inputs": ["node-2"], "Paths": [["a"]]}},
      "node-2": {"SelectFields": {"Name": "B", "Inputs": ["node-1"], "Paths": [["a"]]}}},
     "cycle through nodes node-1, node-2"),
    ({"node-1": source(), "node-2": {"Join": {"Name": "J", "Inputs": ["node-1"], "JoinType": "equijoin",
                                              "Columns": []}}},
     "visual node node-2 (Join \"J\"): takes 2 inputs, has 1"),
    ({"node-1": source(), "node-2": {"ApplyMapping": {"Name": "M", "Inputs": ["node-1"]}}},
     "visual node node-2 (ApplyMapping \"M\"): Mapping is required"),
    ({"node-1": source(), "node-2": {"CustomCode": {"Name": "C", "Inputs": ["node-1"],
                                                    "ClassName": "T", "Code": "return (("}}},
     "visual node node-2 (CustomCode \"C\"): its Code is not valid Python"),
    ({"node-1": source(), "node-2": {"CustomCode": {"Name": "C", "Inputs": ["node-1"], "ClassName": "T",
                                                    "Code": "return dfc"}},
      "node-3": target(["node-2"])},
     "put a SelectFromCollection node between them"),
    ({"node-1": {"S3CsvSource": {"Name": "A", "Paths": ["s3://b/"]}, "S3JsonSource": {"Name": "B"}}},
     "visual node node-1 must have exactly one node type"),
    ({"node-1": source(), "node-2": {"S3DirectTarget": {"Name": "H", "Inputs": ["node-1"],
                                                        "Path": "s3://b/h/", "Format": "hudi"}}},
     "unsupported visual node node-2 of type S3DirectTarget with Format hudi"),
])
def test_a_graph_that_cannot_be_generated_is_refused_naming_the_node(nodes, message):
    with pytest.raises(cg.VisualJobError) as info:
        cg.generate(nodes)
    assert message in str(info.value)


def test_generate_for_run_writes_the_script_removes_the_graph_and_logs_the_count(tmp_path, capsys):
    import json
    nodes_path = tmp_path / "visual-nodes.json"
    nodes_path.write_text(json.dumps({"node-1": source(), "node-2": target(["node-1"])}))
    script = tmp_path / "script" / "job.py"
    assert cg.generate_for_run(str(nodes_path), str(script), "s3://a/job.py") == 2
    assert "# Script generated for node Out" in script.read_text()
    assert not nodes_path.exists()
    assert "[openglue] script generated from CodeGenConfigurationNodes (2 nodes) for s3://a/job.py" \
        in capsys.readouterr().err


def test_data_quality_nodes_generate_studios_calls():
    nodes = {"node-1": source(),
             "node-2": {"EvaluateDataQuality": {
                 "Name": "Evaluate Data Quality", "Inputs": ["node-1"],
                 "Ruleset": "Rules = [ RowCount > 0 ]", "Output": "PrimaryInput",
                 "PublishingOptions": {"EvaluationContext": "ctx1"},
                 "StopJobOnFailureOptions": {"StopJobOnFailureTiming": "Immediate"}}},
             "node-3": {"EvaluateDataQualityMultiFrame": {
                 "Name": "Multi", "Inputs": ["node-2", "node-1"], "Ruleset": "Rules = [ RowCountMatch \"ref\" = 1.0 ]",
                 "AdditionalDataSources": {"ref": "node-1"},
                 "AdditionalOptions": {"observations.scope": "ALL"}}},
             "node-4": {"SelectFromCollection": {"Name": "ruleOutcomes", "Inputs": ["node-3"], "Index": 0}},
             "node-5": target(["node-4"])}
    script = cg.generate(nodes)
    assert "from awsgluedq.transforms import EvaluateDataQuality" in script
    for line in (
            'EvaluateDataQuality_node2 = EvaluateDataQuality().process_rows(frame=',
            'publishing_options={"dataQualityEvaluationContext": "ctx1", '
            '"enableDataQualityCloudWatchMetrics": True, "enableDataQualityResultsPublishing": True}',
            'assert EvaluateDataQuality_node2[EvaluateDataQuality.DATA_QUALITY_RULE_OUTCOMES_KEY]'
            '.filter(lambda x: x["Outcome"] == "Failed").count() == 0, '
            '"The job failed due to failing DQ rules for node: EvaluateDataQuality_node2"',
            'EvaluateDataQuality_node2 = EvaluateDataQuality_node2[EvaluateDataQuality.DATA_QUALITY_ORIGINAL_DATA_KEY]',
            'additional_data_sources={"ref": ',
            'ruleOutcomes_node4 = SelectFromCollection.apply(dfc=Multi_node3, key=list(Multi_node3.keys())[0]'):
        assert line in script, (line, script)
