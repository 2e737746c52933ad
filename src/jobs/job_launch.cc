// Launching a run: its credential, folder, sandbox, arguments and process (JobService::Launch).
#include "jobs/job_service_internal.h"

namespace openglue::jobs {

// Run as `python -u -c kArgvBootstrap <run>/argv.json`: reads the run's sys.argv (the script,
// then its arguments) from the file, removes it, and runs the script as `python script args`
// would (its folder first on sys.path, __name__ "__main__", a namespace of its own). A run with
// an --additional-python-modules environment or a GlueVersion first runs
// openglue_runtime.run_start (the environment's .pth files, the runtime line of the log); so
// does a run whose script is to be generated from the job's CodeGenConfigurationNodes. A module
// run (JobService::StartModuleRun) has "module:<name>" for its script: the module runs as
// `python -m <name>` would, with nothing of the working folder on sys.path.
constexpr char kArgvBootstrap[] =
    "import json, os, runpy, sys\n"
    "with open(sys.argv[1]) as f:\n"
    "    argv = json.load(f)\n"
    "os.unlink(sys.argv[1])\n"
    "sys.argv = argv\n"
    "module = argv[0][len('module:'):] if argv[0].startswith('module:') else None\n"
    "if module:\n"
    "    del sys.path[0]\n"
    "else:\n"
    "    sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))\n"
    "if os.environ.get('OPENGLUE_PYTHON_MODULES') or os.environ.get('OPENGLUE_GLUE_VERSION') or \\\n"
    "        os.environ.get('OPENGLUE_VISUAL_NODES'):\n"
    "    import openglue_runtime.run_start\n"
    "    openglue_runtime.run_start.start()\n"
    "if module:\n"
    "    runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
    "else:\n"
    "    runpy.run_path(argv[0], run_name='__main__')\n";

Result<std::string> JobService::RunJars(const std::string& value, const std::string& dir) const {
  std::vector<std::string> paths;
  for (const std::string& entry : Split(value, ',')) {
    std::string uri = Trim(entry);
    if (uri.empty()) continue;
    std::string name = SafeFileName(uri, "");
    std::string copy_to = dir + "/jars/" + std::to_string(paths.size() + 1) + "/" + name;
    Result<std::string> local = name.empty()
        ? Result<std::string>(Status::InvalidInput(uri + " names no file"))
        : LocalPath(uri, copy_to);
    if (!local.ok()) return Status::InvalidInput("--extra-jars: cannot use " + uri + ": " + local.status().message());
    std::error_code ec;
    if (*local != copy_to && !std::filesystem::exists(*local, ec))
      return Status::InvalidInput("--extra-jars: cannot use " + uri + ": no such file");
    paths.push_back(*local != copy_to ? std::filesystem::absolute(*local, ec).string() : *local);
  }
  return Join(paths, ",");
}

Result<std::vector<std::string>> JobService::PythonModulesOf(const Json& arguments, const std::string& dir,
                                                             const std::string& run_id) const {
  std::string value = ArgumentText(arguments, "--additional-python-modules");
  if (Trim(value).empty()) return std::vector<std::string>{};
  if (options_.runtime_path.empty())
    return Status::InvalidInput("--additional-python-modules needs the awsglue runtime (runtime_path)");
  // Objects are copied out of the store under their own names (pip reads a wheel's name); the
  // run's user reads local paths itself when the key is computed.
  Json objects = Json::object();
  int number = 0;
  for (const std::string& entry : Split(value, ',')) {
    std::string uri = Trim(entry);
    Result<storage::Location> location = storage::ParseLocation(uri);
    if (uri.empty() || !location.ok() || location->scheme != storage::LocationScheme::kObject) continue;
    std::string name = SafeFileName(uri, "");
    std::string copy_to = dir + "/python-modules/" + std::to_string(++number) + "/" + name;
    Result<std::string> local = name.empty()
        ? Result<std::string>(Status::InvalidInput(uri + " names no file"))
        : LocalPath(uri, copy_to);
    if (!local.ok())
      return Status::InvalidInput("--additional-python-modules: cannot use " + uri + ": " + local.status().message());
    objects[uri] = *local;
  }
  Json spec{{"value", value},
            {"objects", objects},
            {"installer_options", ArgumentText(arguments, "--python-modules-installer-option")}};
  const std::string spec_path = dir + "/python-modules/spec.json";
  std::error_code ec;
  std::filesystem::create_directories(dir + "/python-modules", ec);
  std::string text = DumpJson(spec);
  int fd = open(spec_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  bool written = fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) close(fd);
  if (!written) return Status::Internal("cannot write " + spec_path);
  return std::vector<std::string>{"--cache", options_.data_dir + "/python-modules", "--python", options_.python,
                                  "--runtime", options_.runtime_path, "--spec", spec_path, "--run", run_id};
}

Status JobService::Launch(ActiveRun* run, Json* doc) {
  const Json& command = GetObject(GetObject(*doc, "_og"), "command");
  std::string command_name = GetString(command, "Name", "glueetl");
  if (!IsRunnableCommand(command_name))
    return Finish(run, doc, JobRunState::kFailed, std::string(kUnknownCommandMessage));
  std::string script = GetString(command, "ScriptLocation");
  // A module run (StartModuleRun) has no script: its spec goes into its folder instead.
  const std::string module = GetString(GetObject(*doc, "_og"), "module");
  std::string dir = RunDir(run->run_id);
  std::error_code ec;
  std::filesystem::create_directories(dir + "/work", ec);
  std::filesystem::create_directories(dir + "/tmp", ec);
  std::string local;              // the script, or "module:<name>"
  std::string visual_nodes_path;  // set: the run generates its script from the graph
  bool visual = false;
  if (!module.empty()) {
    const std::string spec_path = dir + "/spec.json";
    std::string text = DumpJson(GetObject(GetObject(*doc, "_og"), "module_spec"));
    int fd = open(spec_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    bool written = fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (fd >= 0) close(fd);
    if (!written)
      return Finish(run, doc, JobRunState::kError, "Could not start the run: cannot write " + spec_path);
    local = "module:" + module;
  } else {
    // A visual job (Glue Studio's CodeGenConfigurationNodes) without a script at its location
    // generates one (docs/visual-jobs.md); without a location, at Studio's default one.
    const Json& visual_nodes = GetObject(GetObject(*doc, "_og"), "code_gen_nodes");
    visual = !visual_nodes.empty();
    if (script.empty() && visual) script = DefaultScriptLocation(run->job);
    if (script.empty())
      return Finish(run, doc, JobRunState::kFailed,
                    "The job has no Command.ScriptLocation: there is no script to run (UpdateJob "
                    "with the script's location)");
    // An s3:// script is copied out of the store into the run's script/ folder and run from there.
    const std::string script_name = SafeFileName(script, "script.py");
    Result<std::string> fetched = LocalPath(script, dir + "/script/" + script_name);
    if (!fetched.ok() && visual && fetched.status().code() == StatusCode::kEntityNotFound) {
      // Only an object location gets a generated script: the server writes it there when the run
      // ends (PublishGeneratedScript), never to a path of its own file system.
      visual_nodes_path = dir + "/visual-nodes.json";
      std::filesystem::create_directories(dir + "/script", ec);
      std::string text = DumpJson(visual_nodes);
      int fd = open(visual_nodes_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
      bool written = fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      if (fd >= 0) close(fd);
      if (!written)
        return Finish(run, doc, JobRunState::kError, "Could not start the job run: cannot write " + visual_nodes_path);
      fetched = dir + "/script/" + script_name;
      (*doc)["_og"]["generated_script"] = {{"location", script}, {"file", script_name}};
    }
    if (!fetched.ok())
      return Finish(run, doc, JobRunState::kFailed,
                    "Script " + script +
                        (fetched.status().code() == StatusCode::kEntityNotFound ? " not found: "
                                                                                 : " cannot be run: ") +
                        fetched.status().message());
    local = *fetched;
    if (visual_nodes_path.empty() && !std::filesystem::is_regular_file(local, ec))
      return Finish(run, doc, JobRunState::kFailed,
                    "Script " + script + " not found" +
                        (visual ? " (a visual job's script is generated only for an s3:// "
                                  "ScriptLocation)" : " (looked for " + local + ")"));
  }
  const Json& arguments = GetObject(*doc, "Arguments");
  std::string glue_version = GetString(*doc, "GlueVersion");
  if (Status version = CheckGlueVersion(glue_version); !version.ok())
    return Finish(run, doc, JobRunState::kFailed, version.message());
  // glueetl scripts run on an engine; a Python shell script is plain Python with the same
  // environment (endpoints, credentials, the awsglue package) and no engine.
  EngineChoice engine;
  if (!module.empty()) {
    engine.engine = "embedded";
    engine.reason = "a data-quality run of " + module;
  } else if (command_name == "glueetl") {
    engine = ChooseEngine(arguments);
    if (!engine.error.empty()) return Finish(run, doc, JobRunState::kFailed, engine.error);
  }
  std::vector<std::string> argv = {options_.python, "-u", local};
  std::string job_id = "j_" + run->job;
  argv.insert(argv.end(), {"--JOB_NAME", run->job, "--JOB_ID", job_id, "--JOB_RUN_ID", run->run_id});
  bool has_temp_dir = false;
  std::string extra_py_files;
  std::string extra_files;
  for (auto& [key, value] : arguments.items()) {
    std::string flag = StartsWith(key, "--") ? key : "--" + key;
    if (flag == "--TempDir") has_temp_dir = true;
    if (flag == "--extra-py-files") extra_py_files = value.is_string() ? value.get<std::string>() : "";
    if (flag == "--extra-files") extra_files = value.is_string() ? value.get<std::string>() : "";
    argv.push_back(flag);
    argv.push_back(value.is_string() ? value.get<std::string>() : DumpJson(value));
  }
  if (!has_temp_dir) argv.insert(argv.end(), {"--TempDir", dir + "/tmp"});
  if (!module.empty()) argv.insert(argv.end(), {"--spec", dir + "/spec.json"});

  std::string python_path = options_.runtime_path;
  // `pyspark` on a glueetl run's path is OpenGlue's package (python/shims, or the installed
  // package's openglue_standin): on the embedded engine it is the stand-in (scripts import
  // Spark's entry points without a JVM); on Spark it prepares the run's Spark settings and hands
  // over to the real pyspark; on auto it first decides which of the two the script needs.
  if (command_name == "glueetl" && !options_.runtime_path.empty()) {
    for (const char* folder : {"/shims", "/openglue_standin"}) {
      std::string shims = options_.runtime_path + folder;
      if (std::filesystem::is_regular_file(shims + "/pyspark/__init__.py", ec)) {
        python_path += ":" + shims;
        break;
      }
    }
  }
  // A .py file on PYTHONPATH is not importable (entries must be folders or zip files), so
  // single modules go into the run's own py/ folder, which goes on the path instead: objects
  // are copied there out of the store; a local file is linked there, so the run opens it with
  // its own rights, never the server's. Other entries (.zip, .egg, .whl) go on the path as
  // they are, objects as copies in py/<n>-<name>.
  const std::string py_dir = dir + "/py";
  bool py_dir_on_path = false;
  int entry_number = 0;
  for (const std::string& entry : Split(extra_py_files, ',')) {
    std::string uri = Trim(entry);
    if (uri.empty()) continue;
    std::string name = SafeFileName(uri, "");
    bool is_py = name.size() > 3 && name.compare(name.size() - 3, 3, ".py") == 0;
    std::string copy_to = py_dir + "/" + (is_py ? name : std::to_string(++entry_number) + "-" + name);
    Result<std::string> local = name.empty()
        ? Result<std::string>(Status::InvalidInput(uri + " names no file"))
        : LocalPath(uri, copy_to);
    if (!local.ok())
      return Finish(run, doc, JobRunState::kFailed,
                    "--extra-py-files: cannot use " + uri + ": " + local.status().message());
    std::string path = *local;
    if (path != copy_to && !std::filesystem::exists(path, ec))
      return Finish(run, doc, JobRunState::kFailed, "--extra-py-files: cannot use " + uri + ": no such file");
    if (is_py) {
      if (path != copy_to) {
        std::filesystem::create_directories(py_dir, ec);
        std::filesystem::remove(copy_to, ec);
        std::filesystem::create_symlink(std::filesystem::absolute(path, ec), copy_to, ec);
        if (ec)
          return Finish(run, doc, JobRunState::kFailed,
                        "--extra-py-files: cannot use " + uri + ": " + ec.message());
      }
      if (py_dir_on_path) continue;
      py_dir_on_path = true;
      path = py_dir;
    }
    python_path += (python_path.empty() ? "" : ":") + path;
  }
  // --extra-files: copied (objects) or linked (local files) into the working directory, as
  // Glue copies them next to the script.
  for (const std::string& entry : Split(extra_files, ',')) {
    std::string uri = Trim(entry);
    if (uri.empty()) continue;
    std::string name = SafeFileName(uri, "");
    std::string copy_to = dir + "/work/" + name;
    Result<std::string> local = name.empty()
        ? Result<std::string>(Status::InvalidInput(uri + " names no file"))
        : LocalPath(uri, copy_to);
    if (!local.ok())
      return Finish(run, doc, JobRunState::kFailed,
                    "--extra-files: cannot use " + uri + ": " + local.status().message());
    if (*local != copy_to) {
      if (!std::filesystem::exists(*local, ec))
        return Finish(run, doc, JobRunState::kFailed, "--extra-files: cannot use " + uri + ": no such file");
      std::filesystem::remove(copy_to, ec);
      std::filesystem::create_symlink(std::filesystem::absolute(*local, ec), copy_to, ec);
      if (ec)
        return Finish(run, doc, JobRunState::kFailed, "--extra-files: cannot use " + uri + ": " + ec.message());
    }
  }
  // --extra-jars: the Spark engine puts them on its classpath (openglue_runtime.engines.spark.conf).
  Result<std::string> jars = RunJars(ArgumentText(arguments, "--extra-jars"), dir);
  if (!jars.ok()) return Finish(run, doc, JobRunState::kFailed, jars.status().message());
  // --additional-python-modules: installed (or reused) by `__python-modules` before the script.
  Result<std::vector<std::string>> python_modules = PythonModulesOf(arguments, dir, run->run_id);
  if (!python_modules.ok())
    return Finish(run, doc, JobRunState::kFailed, python_modules.status().message());
  std::string access_key = "OGRUN" + NewRandomHex(15);
  RunGrant grant{access_key, run->job, run->run_id, GetString(GetObject(*doc, "_og"), "role")};
  const char* path_env = std::getenv("PATH");
  const char* home_env = std::getenv("HOME");
  std::vector<std::string> env = {
      std::string("PATH=") + (path_env ? path_env : "/usr/local/bin:/usr/bin:/bin"),
      std::string("HOME=") + (home_env ? home_env : dir + "/work"),
      "LANG=C.UTF-8",
      "PYTHONUNBUFFERED=1",
      "PYTHONPATH=" + python_path,
      "TMPDIR=" + dir + "/tmp",
      "AWS_ACCESS_KEY_ID=" + access_key,
      "AWS_DEFAULT_REGION=" + options_.region,
      "AWS_REGION=" + options_.region,
      "AWS_ENDPOINT_URL_GLUE=" + options_.endpoint,
      "AWS_ENDPOINT_URL_CLOUDWATCH_LOGS=" + options_.endpoint,
      "AWS_ENDPOINT_URL_LOGS=" + options_.endpoint,
      "OPENGLUE_ENDPOINT=" + options_.endpoint,
      "OPENGLUE_JOB_NAME=" + run->job,
      "OPENGLUE_JOB_RUN_ID=" + run->run_id,
      "OPENGLUE_S3_ROOT=" + options_.data_dir + "/s3",
      // The engine and why: the runtime prints it into the run's error stream (driver log)
      // when the script starts its engine, and the server's log has it.
      "OPENGLUE_ENGINE=" + (command_name == "glueetl" ? engine.engine : command_name),
      "OPENGLUE_ENGINE_REASON=" + (command_name == "glueetl" ? engine.reason
                                                             : "Python shell job (no engine)"),
  };
  if (command_name == "glueetl") {
    // Where Spark runs and how big its executors are (read by openglue_runtime.engines.spark.conf), and the
    // run's folder (Spark's settings, event logs).
    std::string master = ArgumentText(arguments, "--spark-master");
    if (master.empty()) master = options_.spark_master;
    env.push_back("OPENGLUE_SPARK_MASTER=" + (master.empty() ? std::string("local[*]") : master));
    env.push_back("OPENGLUE_RUN_DIR=" + dir);
    if (doc->contains("WorkerType") && (*doc)["WorkerType"].is_string())
      env.push_back("OPENGLUE_WORKER_TYPE=" + (*doc)["WorkerType"].get<std::string>());
    if (doc->contains("NumberOfWorkers") && (*doc)["NumberOfWorkers"].is_number_integer())
      env.push_back("OPENGLUE_NUMBER_OF_WORKERS=" +
                    std::to_string((*doc)["NumberOfWorkers"].get<int64_t>()));
  }
  if (command_name == "glueetl" && !jars->empty()) env.push_back("OPENGLUE_EXTRA_JARS=" + *jars);
  if (!visual_nodes_path.empty()) {
    env.push_back("OPENGLUE_VISUAL_NODES=" + visual_nodes_path);
    env.push_back("OPENGLUE_VISUAL_SCRIPT_LOCATION=" + script);
  }
  // The runtime says in the run's log which runtime runs this GlueVersion (docs/engines.md).
  if (!glue_version.empty()) env.push_back("OPENGLUE_GLUE_VERSION=" + glue_version);
  // Unmodified boto3 `s3` code in the script reaches the embedded store through the S3 API.
  if (!options_.s3_endpoint.empty()) env.push_back("AWS_ENDPOINT_URL_S3=" + options_.s3_endpoint);
  if (!options_.hms_uri.empty()) env.push_back("OPENGLUE_HMS_URI=" + options_.hms_uri);
  // The arguments (secrets among them, as Glue users pass them) reach the run in a file of its
  // own folder, which only the run's uid may read, not on a command line every local user sees
  // in /proc/<pid>/cmdline: a bootstrap rebuilds sys.argv as Glue's is and runs the script.
  const std::string argv_path = dir + "/argv.json";
  {
    Json list = Json::array();
    for (size_t i = 2; i < argv.size(); ++i) list.push_back(argv[i]);
    std::string text = DumpJson(list);
    int fd = open(argv_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    bool written = fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (fd >= 0) close(fd);
    if (!written)
      return Finish(run, doc, JobRunState::kFailed, "cannot write the run's arguments to " + argv_path);
  }
  LaunchSpec spec;
  spec.argv = {options_.python, "-u", "-c", kArgvBootstrap, argv_path};
  spec.env = env;
  spec.working_dir = dir + "/work";
  spec.stdout_path = logs_->StdoutPath(run->run_id);
  spec.stderr_path = logs_->StderrPath(run->run_id);
  spec.exit_code_path = dir + "/exit_code";
  spec.run_dir = dir;
  spec.python_modules = *python_modules;
  {
    // The run's view of the store folder: its Role's grants, jobs' code read-only.
    StoreGrants grants = options_.store_grants ? options_.store_grants(grant.role) : StoreGrants{};
    Result<std::map<std::string, std::string>> code = CodeObjects();
    if (!code.ok())
      return Finish(run, doc, JobRunState::kError, "Could not start the job run: " + code.status().message());
    spec.store_view = StoreViewArgs(store_folder_, grants, *code);
  }
  std::filesystem::create_directories(std::filesystem::path(spec.stdout_path).parent_path(), ec);
  // The secret reaches the run through its environment only, never a command line or the store.
  std::string secret = credentials_.grant ? credentials_.grant(grant) : "";
  spec.env.push_back("AWS_SECRET_ACCESS_KEY=" + secret);
  Result<int> pid = launcher_->Launch(spec);
  if (!pid.ok()) {
    if (credentials_.revoke) credentials_.revoke(access_key);
    // The script never ran: Glue reports such runs as ERROR, not FAILED.
    return Finish(run, doc, JobRunState::kError,
                  "Could not start the job run: " + pid.status().message());
  }
  logs_->Follow(run->run_id);
  run->pid = *pid;
  run->access_key = access_key;
  run->exit_code_path = spec.exit_code_path;
  run->started_ms = clock_->NowMillis();
  run->state = JobRunState::kRunning;
  (*doc)["JobRunState"] = StateName(JobRunState::kRunning);
  (*doc)["LastModifiedOn"] = clock_->NowSeconds();
  (*doc)["_og"]["pid"] = *pid;
  (*doc)["_og"]["exit_code_path"] = spec.exit_code_path;
  (*doc)["_og"]["launched_ms"] = run->started_ms;
  (*doc)["_og"]["access_key"] = access_key;
  (*doc)["_og"].erase("secret");  // only the access key id is kept
  OG_LOG(kInfo, "job " << run->job << " run " << run->run_id << " RUNNING (pid " << *pid << ", "
                       << (command_name == "glueetl" ? "engine " + engine.engine + ": " + engine.reason
                                                     : command_name)
                       << ")");
  return SaveRun(run->key, *doc);
}

}  // namespace openglue::jobs
