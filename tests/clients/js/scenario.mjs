// The catalog-and-job-run scenario of tests/test_sdk_clients.py with the AWS SDK for JavaScript
// v3's Glue client, configured as a user points it at OpenGlue: an endpoint, static credentials,
// a region, nothing else changed (docs/clients.md).
//
//   node scenario.mjs ENDPOINT NAME SCRIPT_LOCATION OUT_PATH
//
// Prints one JSON line once the catalog and job steps are done, waits for a line on standard
// input (the test checks the server's state through boto3 meanwhile), then deletes what it
// created and prints a second JSON line.
import { createRequire } from "node:module";
import { createInterface } from "node:readline";

import {
  BatchCreatePartitionCommand, CreateDatabaseCommand, CreateJobCommand, CreateTableCommand,
  DeleteDatabaseCommand, DeleteJobCommand, DeleteTableCommand, EntityNotFoundException,
  GetDatabaseCommand, GetJobRunCommand, GetTableCommand, GlueClient, GlueServiceException,
  StartJobRunCommand, paginateGetJobRuns, paginateGetPartitions,
} from "@aws-sdk/client-glue";

const PARTITION_VALUES = [["2023", "01"], ["2023", "02"], ["2024", "01"], ["2024", "02"], ["2024", "03"]];
const TERMINAL = new Set(["SUCCEEDED", "FAILED", "ERROR", "TIMEOUT", "STOPPED"]);

const args = process.argv.slice(2);
if (args.length !== 4) {
  console.error("usage: node scenario.mjs ENDPOINT NAME SCRIPT_LOCATION OUT_PATH");
  process.exit(2);
}
const [endpoint, name, script, out] = args;
const database = `${name}_db`, table = `${name}_events`, job = `${name}_job`;

const glue = new GlueClient({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "test", secretAccessKey: "test" },
});
const sdkVersion = createRequire(import.meta.url)("@aws-sdk/client-glue/package.json").version;
const summary = { sdk: "js", sdkVersion, node: process.version };
const columns = (...namesTypes) => {
  const cols = [];
  for (let i = 0; i < namesTypes.length; i += 2) cols.push({ Name: namesTypes[i], Type: namesTypes[i + 1] });
  return cols;
};
const stamp = (date) => (date instanceof Date ? date.toISOString() : `not a Date: ${JSON.stringify(date)}`);

await glue.send(new CreateDatabaseCommand({ DatabaseInput: { Name: database, Description: "JS SDK scenario" } }));
await glue.send(new CreateTableCommand({
  DatabaseName: database,
  TableInput: {
    Name: table,
    TableType: "EXTERNAL_TABLE",
    StorageDescriptor: { Columns: columns("id", "bigint", "payload", "string"), Location: `s3://bucket/${table}/` },
    PartitionKeys: columns("year", "string", "month", "string"),
    Parameters: { classification: "json" },
  },
}));
const created = await glue.send(new BatchCreatePartitionCommand({
  DatabaseName: database,
  TableName: table,
  PartitionInputList: PARTITION_VALUES.map((values) => ({
    Values: values,
    StorageDescriptor: {
      Columns: columns("id", "bigint", "payload", "string"),
      Location: `s3://bucket/${table}/year=${values[0]}/month=${values[1]}/`,
    },
  })),
}));
summary.batchCreateErrors = (created.Errors ?? []).length;

// The SDK's own paginator, two partitions a page, filtered by an expression.
summary.partitionPages = [];
summary.partitionCreationTimes = [];
for await (const page of paginateGetPartitions({ client: glue }, {
  DatabaseName: database, TableName: table, Expression: "year = '2024' AND month >= '01'", MaxResults: 2,
})) {
  summary.partitionPages.push(page.Partitions.map((p) => p.Values));
  for (const p of page.Partitions) summary.partitionCreationTimes.push(stamp(p.CreationTime));
}

const { Table: got } = await glue.send(new GetTableCommand({ DatabaseName: database, Name: table }));
summary.table = {
  name: got.Name, createTime: stamp(got.CreateTime), updateTime: stamp(got.UpdateTime),
  partitionKeys: got.PartitionKeys.length,
};

// A missing table: the SDK's typed exception.
const started = performance.now();
try {
  await glue.send(new GetTableCommand({ DatabaseName: database, Name: "absent" }));
  summary.missingTable = { type: "none" };
} catch (e) {
  if (e instanceof EntityNotFoundException) {
    summary.missingTable = { type: "EntityNotFoundException", message: e.message, status: e.$metadata.httpStatusCode };
  } else if (e instanceof GlueServiceException) {
    summary.missingTable = { type: `other:${e.name}`, message: e.message };
  } else {
    summary.missingTable = { type: `untyped:${e}` };
  }
}
summary.missingTable.seconds = (performance.now() - started) / 1000;

// A client whose clock is 20 minutes slow: its first request is refused as expired, and the SDK
// corrects its clock from the response's Date header and retries.
const slow = new GlueClient({
  endpoint, region: "us-east-1", credentials: { accessKeyId: "test", secretAccessKey: "test" },
  systemClockOffset: -20 * 60 * 1000,
});
try {
  const out = await slow.send(new GetDatabaseCommand({ Name: database }));
  summary.clock = { ok: true, attempts: out.$metadata.attempts, offsetSeconds: slow.config.systemClockOffset / 1000 };
} catch (e) {
  summary.clock = { ok: false, error: `${e.name}: ${e.message}`, attempts: e.$metadata?.attempts,
                    offsetSeconds: slow.config.systemClockOffset / 1000 };
}
slow.destroy();

await glue.send(new CreateJobCommand({
  Name: job, Role: "local",
  Command: { Name: "pythonshell", ScriptLocation: script, PythonVersion: "3.9" },
  DefaultArguments: { "--sdk": "js" },
}));
const { JobRunId: runId } = await glue.send(new StartJobRunCommand({ JobName: job, Arguments: { "--out": out } }));
let run;
let polls = 0;
for (const deadline = Date.now() + 60_000; ;) {
  ({ JobRun: run } = await glue.send(new GetJobRunCommand({ JobName: job, RunId: runId })));
  polls++;
  if (TERMINAL.has(run.JobRunState) || Date.now() > deadline) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const listed = [];
for await (const page of paginateGetJobRuns({ client: glue }, { JobName: job })) {
  for (const r of page.JobRuns) listed.push(r.Id);
}
Object.assign(summary, {
  job,
  jobRun: {
    id: runId, state: run.JobRunState, startedOn: stamp(run.StartedOn), completedOn: stamp(run.CompletedOn),
    executionTime: run.ExecutionTime, arguments: run.Arguments, error: run.ErrorMessage ?? "", polls,
  },
  jobRuns: listed,
  database,
  tableName: table,
});
console.log(JSON.stringify(summary));

// The test looks at the server through boto3, then lets the clean-up go on.
const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => { lines.once("line", resolve); lines.once("close", resolve); });
lines.close();
await glue.send(new DeleteJobCommand({ JobName: job }));
await glue.send(new DeleteTableCommand({ DatabaseName: database, Name: table }));
await glue.send(new DeleteDatabaseCommand({ Name: database }));
let databaseGone = false;
try {
  await glue.send(new GetDatabaseCommand({ Name: database }));
} catch (e) {
  databaseGone = e instanceof EntityNotFoundException;
}
console.log(JSON.stringify({ deleted: true, databaseGone }));
glue.destroy();
