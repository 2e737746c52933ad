// The catalog-and-job-run scenario of tests/test_sdk_clients.py with the AWS SDK for Java v2's Glue
// client, configured as a user points it at OpenGlue: an endpoint override, static credentials, a
// region, nothing else changed (docs/clients.md).
//
//   java -cp CLASSPATH Scenario ENDPOINT NAME SCRIPT_LOCATION OUT_PATH
//
// Prints one JSON line once the catalog and job steps are done, waits for a line on standard
// input (the test checks the server's state through boto3 meanwhile), then deletes what it
// created and prints a second JSON line.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.SdkGlobalTime;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.util.VersionInfo;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.glue.GlueClient;
import software.amazon.awssdk.services.glue.model.BatchCreatePartitionResponse;
import software.amazon.awssdk.services.glue.model.Column;
import software.amazon.awssdk.services.glue.model.EntityNotFoundException;
import software.amazon.awssdk.services.glue.model.GetPartitionsRequest;
import software.amazon.awssdk.services.glue.model.GetPartitionsResponse;
import software.amazon.awssdk.services.glue.model.GlueException;
import software.amazon.awssdk.services.glue.model.JobRun;
import software.amazon.awssdk.services.glue.model.JobRunState;
import software.amazon.awssdk.services.glue.model.Partition;
import software.amazon.awssdk.services.glue.model.PartitionInput;
import software.amazon.awssdk.services.glue.model.StorageDescriptor;
import software.amazon.awssdk.services.glue.model.Table;

public class Scenario {
  static final List<List<String>> PARTITION_VALUES = List.of(
      List.of("2023", "01"), List.of("2023", "02"), List.of("2024", "01"), List.of("2024", "02"),
      List.of("2024", "03"));
  static final Set<JobRunState> TERMINAL = Set.of(JobRunState.SUCCEEDED, JobRunState.FAILED,
      JobRunState.ERROR, JobRunState.TIMEOUT, JobRunState.STOPPED);

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: Scenario ENDPOINT NAME SCRIPT_LOCATION OUT_PATH");
      System.exit(2);
    }
    String endpoint = args[0], name = args[1], script = args[2], out = args[3];
    String database = name + "_db", table = name + "_events", job = name + "_job";

    GlueClient glue = GlueClient.builder()
        .endpointOverride(URI.create(endpoint))
        .region(Region.US_EAST_1)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
        .build();
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("sdk", "java");
    summary.put("sdkVersion", VersionInfo.SDK_VERSION);

    glue.createDatabase(r -> r.databaseInput(d -> d.name(database).description("Java SDK scenario")));
    glue.createTable(r -> r.databaseName(database).tableInput(t -> t
        .name(table)
        .tableType("EXTERNAL_TABLE")
        .storageDescriptor(sd -> sd.columns(columns("id", "bigint", "payload", "string"))
                                   .location("s3://bucket/" + table + "/"))
        .partitionKeys(columns("year", "string", "month", "string"))
        .parameters(Map.of("classification", "json"))));

    List<PartitionInput> inputs = new ArrayList<>();
    for (List<String> values : PARTITION_VALUES)
      inputs.add(PartitionInput.builder()
          .values(values)
          .storageDescriptor(StorageDescriptor.builder()
              .columns(columns("id", "bigint", "payload", "string"))
              .location("s3://bucket/" + table + "/year=" + values.get(0) + "/month=" + values.get(1) + "/")
              .build())
          .build());
    BatchCreatePartitionResponse created = glue.batchCreatePartition(
        r -> r.databaseName(database).tableName(table).partitionInputList(inputs));
    summary.put("batchCreateErrors", created.errors().size());

    // The SDK's own paginator, two partitions a page, filtered by an expression.
    List<Object> pages = new ArrayList<>();
    List<Object> creationTimes = new ArrayList<>();
    GetPartitionsRequest request = GetPartitionsRequest.builder()
        .databaseName(database).tableName(table)
        .expression("year = '2024' AND month >= '01'").maxResults(2).build();
    for (GetPartitionsResponse page : glue.getPartitionsPaginator(request)) {
      List<Object> values = new ArrayList<>();
      for (Partition p : page.partitions()) {
        values.add(p.values());
        creationTimes.add(stamp(p.creationTime()));
      }
      pages.add(values);
    }
    summary.put("partitionPages", pages);
    summary.put("partitionCreationTimes", creationTimes);

    Table got = glue.getTable(r -> r.databaseName(database).name(table)).table();
    Map<String, Object> tableSummary = new LinkedHashMap<>();
    tableSummary.put("name", got.name());
    tableSummary.put("createTime", stamp(got.createTime()));
    tableSummary.put("updateTime", stamp(got.updateTime()));
    tableSummary.put("partitionKeys", got.partitionKeys().size());
    summary.put("table", tableSummary);

    // A missing table: the SDK's typed exception.
    Map<String, Object> missing = new LinkedHashMap<>();
    long started = System.nanoTime();
    try {
      glue.getTable(r -> r.databaseName(database).name("absent"));
      missing.put("type", "none");
    } catch (EntityNotFoundException e) {
      missing.put("type", "EntityNotFoundException");
      missing.put("message", e.awsErrorDetails().errorMessage());
      missing.put("status", e.statusCode());
    } catch (GlueException e) {
      missing.put("type", "other:" + e.awsErrorDetails().errorCode());
      missing.put("message", e.getMessage());
    }
    missing.put("seconds", (System.nanoTime() - started) / 1e9);
    summary.put("missingTable", missing);

    // A clock 20 minutes slow (the SDK's global time offset): the first request is refused as
    // expired, and the SDK corrects its clock from the response's Date header and retries.
    AtomicInteger attempts = new AtomicInteger();
    Map<String, Object> clock = new LinkedHashMap<>();
    SdkGlobalTime.setGlobalTimeOffset(20 * 60);  // read by a client when it is built
    try (GlueClient slow = GlueClient.builder()
        .endpointOverride(URI.create(endpoint))
        .region(Region.US_EAST_1)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
        .overrideConfiguration(o -> o.addExecutionInterceptor(new ExecutionInterceptor() {
          @Override
          public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            attempts.incrementAndGet();
          }
        }))
        .build()) {
      slow.getDatabase(r -> r.name(database));
      clock.put("ok", true);
    } catch (GlueException e) {
      clock.put("ok", false);
      clock.put("error", e.getMessage());
    }
    clock.put("attempts", attempts.get());
    clock.put("offsetSeconds", SdkGlobalTime.getGlobalTimeOffset());
    SdkGlobalTime.setGlobalTimeOffset(0);
    summary.put("clock", clock);

    glue.createJob(r -> r.name(job).role("local")
        .command(c -> c.name("pythonshell").scriptLocation(script).pythonVersion("3.9"))
        .defaultArguments(Map.of("--sdk", "java")));
    String runId = glue.startJobRun(r -> r.jobName(job).arguments(Map.of("--out", out))).jobRunId();
    JobRun run;
    int polls = 0;
    long deadline = System.currentTimeMillis() + 60_000;
    while (true) {
      run = glue.getJobRun(r -> r.jobName(job).runId(runId)).jobRun();
      polls++;
      if (TERMINAL.contains(run.jobRunState()) || System.currentTimeMillis() > deadline) break;
      Thread.sleep(100);
    }
    List<Object> listed = new ArrayList<>();
    glue.getJobRunsPaginator(r -> r.jobName(job)).jobRuns().forEach(r -> listed.add(r.id()));
    Map<String, Object> runSummary = new LinkedHashMap<>();
    runSummary.put("id", runId);
    runSummary.put("state", run.jobRunStateAsString());
    runSummary.put("startedOn", stamp(run.startedOn()));
    runSummary.put("completedOn", stamp(run.completedOn()));
    runSummary.put("executionTime", run.executionTime());
    runSummary.put("arguments", run.arguments());
    runSummary.put("error", run.errorMessage());
    runSummary.put("polls", polls);
    summary.put("job", job);
    summary.put("jobRun", runSummary);
    summary.put("jobRuns", listed);
    summary.put("database", database);
    summary.put("tableName", table);
    emit(summary);

    // The test looks at the server through boto3, then lets the clean-up go on.
    new BufferedReader(new InputStreamReader(System.in)).readLine();
    glue.deleteJob(r -> r.jobName(job));
    glue.deleteTable(r -> r.databaseName(database).name(table));
    glue.deleteDatabase(r -> r.name(database));
    boolean gone = false;
    try {
      glue.getDatabase(r -> r.name(database));
    } catch (EntityNotFoundException e) {
      gone = true;
    }
    Map<String, Object> done = new LinkedHashMap<>();
    done.put("deleted", true);
    done.put("databaseGone", gone);
    emit(done);
    glue.close();
  }

  static List<Column> columns(String... namesTypes) {
    List<Column> cols = new ArrayList<>();
    for (int i = 0; i < namesTypes.length; i += 2)
      cols.add(Column.builder().name(namesTypes[i]).type(namesTypes[i + 1]).build());
    return cols;
  }

  static String stamp(Instant t) {
    return t == null ? "" : t.truncatedTo(java.time.temporal.ChronoUnit.MILLIS).toString();
  }

  // A small JSON writer (the SDK's own Jackson is shaded and internal).
  static void emit(Object value) {
    StringBuilder out = new StringBuilder();
    write(out, value);
    System.out.println(out);
    System.out.flush();
  }

  static void write(StringBuilder out, Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof Number || value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      Iterator<? extends Map.Entry<?, ?>> it = map.entrySet().iterator();
      while (it.hasNext()) {
        Map.Entry<?, ?> e = it.next();
        write(out, String.valueOf(e.getKey()));
        out.append(':');
        write(out, e.getValue());
        if (it.hasNext()) out.append(',');
      }
      out.append('}');
    } else if (value instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) out.append(',');
        write(out, list.get(i));
      }
      out.append(']');
    } else {
      out.append('"');
      for (char c : value.toString().toCharArray()) {
        if (c == '"' || c == '\\') out.append('\\').append(c);
        else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
        else out.append(c);
      }
      out.append('"');
    }
  }
}
