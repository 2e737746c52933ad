// S3Gate: the S3 API's front door, where a job run's Role applies to the object store.
//
// versitygw serves <data_dir>/s3 over the S3 API on a unix socket in its private folder, which
// only the server reaches; clients (operators, tools, job runs) reach it through this gate on the
// S3 port. For each connection the gate reads one request head, works out what the request does
// (DescribeS3Request: the access key it is signed with, and every S3 action it performs on which
// bucket and key, as IAM names them), asks `authorize`, and either answers 403 AccessDenied in
// S3's XML or hands the request to versitygw byte for byte, with `Connection: close` so that one
// connection carries one request and nothing unchecked follows it. The gate authorizes; versitygw
// still authenticates: a request that claims a run's access key is held to that run's policy, and
// its signature is checked by versitygw against that same key, so claiming another key gains
// nothing without its secret.
//
// What the gate refuses before anything is forwarded (400 InvalidRequest): a head that does not
// parse as HTTP/1.1, several Authorization headers, both a signed header and a presigned query,
// an Authorization header or presigned query it cannot read the access key of, a path that does
// not percent-decode; from a run credential also a path with empty, `.` or `..` segments, a
// DeleteObjects body that is not plain XML with a Content-Length (CDATA, comments, namespaced
// keys), and browser-form POST uploads (whose credential travels in the body) from anyone.
//
// Limits: the head must arrive within head_timeout_ms; a connection that moves no byte for
// idle_timeout_ms is closed; at most max_connections at once (more get 503 SlowDown).
//
// Thread-safety: Start/Stop from one thread; each connection runs on a thread of its own.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/authorizer.h"
#include "api/http_parser.h"
#include "jobs/store_view.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace openglue::api {

// One action on one resource: bucket "" is the account (ListAllMyBuckets), key "" the bucket.
struct S3Check {
  std::string action;  // "s3:GetObject"
  std::string bucket;
  std::string key;
};

struct S3Access {
  std::string principal;  // the access key id the request is signed with; "" when unsigned
  std::vector<S3Check> checks;
  // POST ?delete (DeleteObjects): the keys are in the body; the gate adds one s3:DeleteObject
  // check per key (DeleteObjectKeys) before authorizing.
  bool deletes_listed_keys = false;
  // Why this request may not come from a job run ("" when it may): the authorizer refuses it
  // with this message when the principal is a run credential.
  std::string refused_to_runs;
};

// What the request with this head does. InvalidInput (answered 400) for the refusals above that
// depend on the head alone.
Result<S3Access> DescribeS3Request(const HttpRequestHead& head);
// What a run credential may not send besides: keys with empty, `.` or `..` segments or NUL, and
// a DeleteObjects in aws-chunked encoding. InvalidInput naming the problem.
Status CheckRunRequest(const HttpRequestHead& head, const S3Access& access);

// The keys a DeleteObjects body names (<Delete><Object><Key>k</Key>...). InvalidInput for XML the
// gate does not read the way versitygw's parser does: CDATA, comments, processing instructions
// after the declaration, DTDs, namespaced Key elements, unknown entities.
Result<std::vector<std::string>> DeleteObjectKeys(std::string_view body);

// Go's url.PathUnescape and url.QueryUnescape (the latter also turns '+' into a blank):
// InvalidInput for a malformed escape.
Result<std::string> PathUnescape(std::string_view text);
Result<std::string> QueryUnescape(std::string_view text);

// Objects that are jobs' code, "bucket/key" (or "bucket/prefix/") -> job (JobService::CodeObjects).
using CodeObjects = std::function<Result<std::map<std::string, std::string>>()>;

// The gate's decision for `access`: OK for operators, unsigned requests and keys that are no
// run's (versitygw authenticates those). For a run credential: InvalidInput when the request is
// refused_to_runs; AccessDenied unless the run's Role allows every check (RunAuthorizer::
// AuthorizeResource) and no write (s3:Put*, s3:Delete*, s3:AbortMultipartUpload,
// s3:RestoreObject) reaches an object that is a job's code, whatever the Role allows.
Status AuthorizeS3Access(const RunAuthorizer& authorizer, const S3Access& access,
                         const CodeObjects& code_objects);

// What `statements` (a Role's policy) grant on the store folder, for the run's view of it
// (jobs/store_view.h): reads where s3:GetObject is allowed, writes where s3:PutObject is, on
// every resource ("*", "arn:aws:s3:::*", no resources), on `bucket/prefix/*` folders, or (reads)
// on exact objects; other patterns grant nothing on the folder route.
jobs::StoreGrants StoreGrantsOf(const std::vector<std::string>& statements);

struct S3GateOptions {
  std::string host = "127.0.0.1";
  int port = 0;              // 0: a free port (see port())
  std::string upstream;      // versitygw's unix socket
  int head_timeout_ms = 10000;
  int idle_timeout_ms = 300000;
  int max_connections = 1024;
  size_t max_delete_body = 2 << 20;  // DeleteObjects bodies read for a run credential
};

// OK, or an error whose message the client gets as AccessDenied (kAccessDenied) or
// InvalidRequest (other codes).
using S3Authorize = std::function<Status(const S3Access& access)>;
// Whether an access key is a job run's (whose DeleteObjects bodies the gate reads, to check them;
// nobody else makes the gate buffer a body).
using S3IsRun = std::function<bool(const std::string& access_key)>;

class S3Gate {
 public:
  // Binds the port. InvalidInput for a bad host; Internal when it cannot listen.
  static Result<std::unique_ptr<S3Gate>> Make(S3GateOptions options, S3Authorize authorize, S3IsRun is_run);
  ~S3Gate();  // Stop()

  void Start();
  // Stops accepting, closes every connection and waits for their threads.
  void Stop() EXCLUDES(mutex_);

  int port() const { return port_; }
  std::string endpoint() const;  // "http://host:port"

 private:
  S3Gate(S3GateOptions options, S3Authorize authorize, S3IsRun is_run, int listen_fd, int port);
  void AcceptLoop();
  void Serve(int client) EXCLUDES(mutex_);

  const S3GateOptions options_;
  const S3Authorize authorize_;
  const S3IsRun is_run_;
  const int listen_fd_;
  const int port_;
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  Mutex mutex_;
  std::set<int> clients_ GUARDED_BY(mutex_);
  int active_ GUARDED_BY(mutex_) = 0;
  CondVar idle_;
};

}  // namespace openglue::api
