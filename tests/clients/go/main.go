// The catalog-and-job-run scenario of tests/test_sdk_clients.py with the AWS SDK for Go v2's Glue
// client, configured as a user points it at OpenGlue: a base endpoint, static credentials, a
// region, nothing else changed (docs/clients.md).
//
//	scenario ENDPOINT NAME SCRIPT_LOCATION OUT_PATH
//
// Prints one JSON line once the catalog and job steps are done, waits for a line on standard
// input (the test checks the server's state through boto3 meanwhile), then deletes what it
// created and prints a second JSON line.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/smithy-go"
)

var partitionValues = [][]string{
	{"2023", "01"}, {"2023", "02"}, {"2024", "01"}, {"2024", "02"}, {"2024", "03"},
}

func fail(step string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", step, err)
	os.Exit(1)
}

func stamp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func columns(namesTypes ...string) []types.Column {
	var cols []types.Column
	for i := 0; i < len(namesTypes); i += 2 {
		cols = append(cols, types.Column{Name: aws.String(namesTypes[i]), Type: aws.String(namesTypes[i+1])})
	}
	return cols
}

func sdkVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/aws/aws-sdk-go-v2/service/glue" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: scenario ENDPOINT NAME SCRIPT_LOCATION OUT_PATH")
		os.Exit(2)
	}
	endpoint, name, script, out := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	ctx := context.Background()

	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	if err != nil {
		fail("config", err)
	}
	client := glue.NewFromConfig(cfg, func(o *glue.Options) { o.BaseEndpoint = aws.String(endpoint) })

	database, table := name+"_db", name+"_events"
	summary := map[string]any{"sdk": "go", "sdkVersion": sdkVersion()}

	if _, err := client.CreateDatabase(ctx, &glue.CreateDatabaseInput{
		DatabaseInput: &types.DatabaseInput{Name: aws.String(database), Description: aws.String("Go SDK scenario")},
	}); err != nil {
		fail("CreateDatabase", err)
	}
	if _, err := client.CreateTable(ctx, &glue.CreateTableInput{
		DatabaseName: aws.String(database),
		TableInput: &types.TableInput{
			Name:      aws.String(table),
			TableType: aws.String("EXTERNAL_TABLE"),
			StorageDescriptor: &types.StorageDescriptor{
				Columns:  columns("id", "bigint", "payload", "string"),
				Location: aws.String("s3://bucket/" + table + "/"),
			},
			PartitionKeys: columns("year", "string", "month", "string"),
			Parameters:    map[string]string{"classification": "json"},
		},
	}); err != nil {
		fail("CreateTable", err)
	}

	var inputs []types.PartitionInput
	for _, values := range partitionValues {
		inputs = append(inputs, types.PartitionInput{
			Values: values,
			StorageDescriptor: &types.StorageDescriptor{
				Columns:  columns("id", "bigint", "payload", "string"),
				Location: aws.String(fmt.Sprintf("s3://bucket/%s/year=%s/month=%s/", table, values[0], values[1])),
			},
		})
	}
	created, err := client.BatchCreatePartition(ctx, &glue.BatchCreatePartitionInput{
		DatabaseName: aws.String(database), TableName: aws.String(table), PartitionInputList: inputs,
	})
	if err != nil {
		fail("BatchCreatePartition", err)
	}
	summary["batchCreateErrors"] = len(created.Errors)

	// The SDK's own paginator, two partitions a page, filtered by an expression.
	var pages [][][]string
	var creationTimes []string
	paginator := glue.NewGetPartitionsPaginator(client, &glue.GetPartitionsInput{
		DatabaseName: aws.String(database), TableName: aws.String(table),
		Expression: aws.String("year = '2024' AND month >= '01'"), MaxResults: aws.Int32(2),
	})
	for paginator.HasMorePages() {
		page, err := paginator.NextPage(ctx)
		if err != nil {
			fail("GetPartitions", err)
		}
		var values [][]string
		for _, p := range page.Partitions {
			values = append(values, p.Values)
			creationTimes = append(creationTimes, stamp(p.CreationTime))
		}
		pages = append(pages, values)
	}
	summary["partitionPages"] = pages
	summary["partitionCreationTimes"] = creationTimes

	got, err := client.GetTable(ctx, &glue.GetTableInput{DatabaseName: aws.String(database), Name: aws.String(table)})
	if err != nil {
		fail("GetTable", err)
	}
	summary["table"] = map[string]any{
		"name": aws.ToString(got.Table.Name), "createTime": stamp(got.Table.CreateTime),
		"updateTime": stamp(got.Table.UpdateTime), "partitionKeys": len(got.Table.PartitionKeys),
	}
	// The server's time as the SDK read it from the response's Date header: what its clock
	// skew correction works from.
	serverTime, _ := awsmiddleware.GetServerTime(got.ResultMetadata)
	summary["clock"] = map[string]any{"serverTime": stamp(&serverTime), "clientTime": stamp(aws.Time(time.Now()))}

	// A missing table: the SDK's typed exception.
	started := time.Now()
	_, err = client.GetTable(ctx, &glue.GetTableInput{DatabaseName: aws.String(database), Name: aws.String("absent")})
	missing := map[string]any{"seconds": time.Since(started).Seconds()}
	var notFound *types.EntityNotFoundException
	var apiErr smithy.APIError
	if errors.As(err, &notFound) {
		missing["type"] = "EntityNotFoundException"
		missing["message"] = notFound.ErrorMessage()
	} else if errors.As(err, &apiErr) {
		missing["type"] = "other:" + apiErr.ErrorCode()
		missing["message"] = apiErr.ErrorMessage()
	} else {
		missing["type"] = fmt.Sprintf("untyped:%v", err)
	}
	summary["missingTable"] = missing

	job := name + "_job"
	if _, err := client.CreateJob(ctx, &glue.CreateJobInput{
		Name: aws.String(job), Role: aws.String("local"),
		Command: &types.JobCommand{Name: aws.String("pythonshell"), ScriptLocation: aws.String(script),
			PythonVersion: aws.String("3.9")},
		DefaultArguments: map[string]string{"--sdk": "go"},
	}); err != nil {
		fail("CreateJob", err)
	}
	start, err := client.StartJobRun(ctx, &glue.StartJobRunInput{
		JobName: aws.String(job), Arguments: map[string]string{"--out": out},
	})
	if err != nil {
		fail("StartJobRun", err)
	}
	runID := aws.ToString(start.JobRunId)
	var run *types.JobRun
	polls := 0
	for deadline := time.Now().Add(60 * time.Second); ; {
		polled, err := client.GetJobRun(ctx, &glue.GetJobRunInput{JobName: aws.String(job), RunId: aws.String(runID)})
		if err != nil {
			fail("GetJobRun", err)
		}
		polls++
		run = polled.JobRun
		state := run.JobRunState
		if state == types.JobRunStateSucceeded || state == types.JobRunStateFailed ||
			state == types.JobRunStateError || state == types.JobRunStateTimeout ||
			state == types.JobRunStateStopped || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var listed []string
	runs := glue.NewGetJobRunsPaginator(client, &glue.GetJobRunsInput{JobName: aws.String(job)})
	for runs.HasMorePages() {
		page, err := runs.NextPage(ctx)
		if err != nil {
			fail("GetJobRuns", err)
		}
		for _, r := range page.JobRuns {
			listed = append(listed, aws.ToString(r.Id))
		}
	}
	summary["job"] = job
	summary["jobRun"] = map[string]any{
		"id": runID, "state": string(run.JobRunState), "startedOn": stamp(run.StartedOn),
		"completedOn": stamp(run.CompletedOn), "executionTime": run.ExecutionTime,
		"arguments": run.Arguments, "error": aws.ToString(run.ErrorMessage), "polls": polls,
	}
	summary["jobRuns"] = listed
	summary["database"] = database
	summary["tableName"] = table
	emit(summary)

	// The test looks at the server through boto3, then lets the clean-up go on.
	bufio.NewReader(os.Stdin).ReadString('\n')
	if _, err := client.DeleteJob(ctx, &glue.DeleteJobInput{JobName: aws.String(job)}); err != nil {
		fail("DeleteJob", err)
	}
	if _, err := client.DeleteTable(ctx, &glue.DeleteTableInput{DatabaseName: aws.String(database), Name: aws.String(table)}); err != nil {
		fail("DeleteTable", err)
	}
	if _, err := client.DeleteDatabase(ctx, &glue.DeleteDatabaseInput{Name: aws.String(database)}); err != nil {
		fail("DeleteDatabase", err)
	}
	_, err = client.GetDatabase(ctx, &glue.GetDatabaseInput{Name: aws.String(database)})
	emit(map[string]any{"deleted": true, "databaseGone": errors.As(err, &notFound)})
}

func emit(v any) {
	line, err := json.Marshal(v)
	if err != nil {
		fail("json", err)
	}
	fmt.Println(string(line))
}
