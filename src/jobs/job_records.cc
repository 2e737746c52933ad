// The job service's stored documents: keys, arguments, the job from its input, error lines.
#include "jobs/job_service_internal.h"

namespace openglue::jobs {

bool IsRunnableCommand(const std::string& name) {
  return name == "glueetl" || name == "pythonshell";
}

EngineChoice ChooseEngine(const Json& arguments) {
  std::string requested;
  for (const char* key : {"--engine", "engine"}) {
    auto it = arguments.find(key);
    if (it != arguments.end() && it->is_string()) requested = it->get<std::string>();
  }
  std::string value = Trim(requested);
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (value.empty()) return {"auto", "--engine not set, auto", ""};
  if (value == "auto") return {"auto", "--engine auto", ""};
  if (value == "embedded") return {"embedded", "--engine embedded", ""};
  if (value == "spark") return {"spark", "--engine spark", ""};
  return {"", "", "--engine '" + TruncateUtf8(SanitizeUtf8(requested), 100) +
                      "' is not an engine: use auto, embedded or spark"};
}

std::string ArgumentText(const Json& arguments, const std::string& name) {
  for (const std::string& key : {name, name.substr(2)}) {
    auto it = arguments.find(key);
    if (it != arguments.end() && it->is_string()) return Trim(it->get<std::string>());
  }
  return "";
}

std::string SafeFileName(const std::string& uri, const std::string& fallback) {
  size_t slash = uri.find_last_of('/');
  std::string name = slash == std::string::npos ? uri : uri.substr(slash + 1);
  if (name.empty() || name == "." || name == ".." || name.size() > 200) return fallback;
  return name;
}

std::string StateName(JobRunState state) { return std::string(JobRunStateName(state)); }

int64_t GetInt(const Json& object, const char* member, int64_t fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(member);
  if (it == object.end() || !it->is_number()) return fallback;
  return it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
}

const Json& GetObject(const Json& object, const char* member) {
  static const Json kEmpty = Json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(member);
  return it == object.end() || !it->is_object() ? kEmpty : *it;
}

bool ParseU64(std::string_view text, uint64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string RunKey(const std::string& job, uint64_t sequence) {
  std::string inverted = std::to_string(kSequenceBase - sequence);
  return store::MakeKey({job, std::string(16 - std::min<size_t>(16, inverted.size()), '0') + inverted});
}

uint64_t SequenceOfKey(const std::string& key) {
  size_t sep = key.rfind(store::kKeySep);
  try {
    return kSequenceBase - std::stoull(key.substr(sep + 1));
  } catch (const std::exception&) {
    return 0;
  }
}

Json Present(Json run) {
  run.erase("_og");
  return run;
}

Json MergeArguments(const Json& job, const Json& run_arguments) {
  Json merged = GetObject(job, "DefaultArguments");
  if (run_arguments.is_object())
    for (auto& [k, v] : run_arguments.items()) merged[k] = v;
  const Json& fixed = GetObject(job, "NonOverridableArguments");
  for (auto& [k, v] : fixed.items()) merged[k] = v;
  return merged;
}

Status CheckGlueVersion(const std::string& version) {
  if (version.empty() || version == "2.0" || version == "3.0" || version == "4.0" || version == "5.0" ||
      version == "5.1")
    return Status::OK();
  if (version == "0.9" || version == "1.0")
    return Status::InvalidInput("GlueVersion " + version +
                                " has reached end of life: AWS Glue no longer creates or runs jobs of Glue 0.9 "
                                "and 1.0 (since 2026-04-01). Use GlueVersion 2.0, 3.0, 4.0, 5.0 or 5.1");
  return Status::InvalidInput("GlueVersion " + version + " is not a Glue version OpenGlue runs: use 2.0, 3.0, "
                              "4.0, 5.0 or 5.1 (docs/engines.md)");
}

Result<Json> JobFromInput(const Json& input, const std::string& name, double created_on,
                          double now) {
  if (input.contains("GlueVersion") && input["GlueVersion"].is_string())
    OG_RETURN_NOT_OK(CheckGlueVersion(input["GlueVersion"].get<std::string>()));
  // Any Command.Name is kept, as Glue does; a run of one OpenGlue has no runtime for fails.
  const Json& command = GetObject(input, "Command");
  std::string command_name = GetString(command, "Name", "glueetl");
  // Command.ScriptLocation is optional in Glue's model (a job may be made before its script):
  // a run of a job without one fails (JobService::Launch), unless the job is a visual one.
  // CodeGenConfigurationNodes (a Glue Studio graph; `sensitive` in the model: kept, returned,
  // never logged) is kept exactly as sent; a run without a script generates one from it.
  Json job = Json::object();
  job["Name"] = name;
  for (const char* member :
       {"JobMode", "JobRunQueuingEnabled", "Description", "LogUri", "Role", "ExecutionProperty",
        "Command", "DefaultArguments", "NonOverridableArguments", "Connections", "MaxRetries",
        "AllocatedCapacity", "Timeout", "MaxCapacity", "WorkerType", "NumberOfWorkers",
        "SecurityConfiguration", "NotificationProperty", "GlueVersion", "ExecutionClass",
        "MaintenanceWindow", "SourceControlDetails", "CodeGenConfigurationNodes"}) {
    if (input.contains(member) && !input[member].is_null()) job[member] = input[member];
  }
  job["Command"]["Name"] = command_name;
  if (!job.contains("ExecutionProperty") || !job["ExecutionProperty"].is_object())
    job["ExecutionProperty"] = Json::object();
  // A null member means absent.
  if (!job["ExecutionProperty"].contains("MaxConcurrentRuns") ||
      !job["ExecutionProperty"]["MaxConcurrentRuns"].is_number())
    job["ExecutionProperty"]["MaxConcurrentRuns"] = 1;
  if (GetInt(job["ExecutionProperty"], "MaxConcurrentRuns", 1) < 1)
    return Status::InvalidInput("ExecutionProperty.MaxConcurrentRuns must be at least 1");
  if (!job.contains("MaxRetries")) job["MaxRetries"] = 0;
  if (!job.contains("Timeout")) job["Timeout"] = kDefaultTimeoutMinutes;
  if (!job.contains("DefaultArguments")) job["DefaultArguments"] = Json::object();
  if (!job.contains("MaxCapacity") && !job.contains("WorkerType"))
    job["MaxCapacity"] = command_name == "pythonshell" ? 0.0625 : 10.0;
  if (!job.contains("JobMode")) job["JobMode"] = "SCRIPT";
  job["CreatedOn"] = created_on;
  job["LastModifiedOn"] = now;
  return job;
}

std::string ErrorFromStderr(const std::string& stderr_path) {
  std::ifstream in(stderr_path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff start = std::max<std::streamoff>(0, size - 65536);
  in.seekg(start);
  std::string tail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines = Split(tail, '\n');
  // The bytes are the process's own: invalid UTF-8 is replaced and the cut falls on a
  // character boundary, so the line can go into a document as it is.
  // The script's exception: the first unindented line after the last traceback's frames (what
  // the run printed after it, e.g. the Spark engine's shutdown lines, is not the error).
  constexpr std::string_view kTraceback = "Traceback (most recent call last)";
  for (size_t i = lines.size(); i-- > 0;) {
    if (lines[i].rfind(kTraceback, 0) != 0) continue;
    for (size_t j = i + 1; j < lines.size(); ++j) {
      const std::string& line = lines[j];
      if (line.empty() || line[0] == ' ' || line[0] == '\t' || Trim(line).empty()) continue;
      return TruncateUtf8(Trim(line), kErrorLineBytes);
    }
    break;  // a traceback cut before its exception line: fall back to the last line
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string line = Trim(*it);
    if (!line.empty()) return TruncateUtf8(line, kErrorLineBytes);
  }
  return "";
}

}  // namespace openglue::jobs
