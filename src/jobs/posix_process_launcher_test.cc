#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "jobs/process_launcher.h"

namespace openglue::jobs {
namespace {

namespace fs = std::filesystem;

class PosixProcessLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/og_launcher_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    launcher_ = MakePosixProcessLauncher();
  }
  void TearDown() override {
    for (int pid : started_) {
      (void)launcher_->SignalGroup(pid, SIGKILL);
      WaitUntilEnded(pid, ExitPath(pid));
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  LaunchSpec Spec(std::vector<std::string> argv, const std::string& name = "run") {
    LaunchSpec spec;
    spec.argv = std::move(argv);
    spec.env = {"PATH=/usr/bin:/bin", "OG_TEST=1"};
    spec.working_dir = dir_;
    spec.stdout_path = dir_ + "/" + name + ".out";
    spec.stderr_path = dir_ + "/" + name + ".err";
    spec.exit_code_path = dir_ + "/" + name + ".exit";
    return spec;
  }

  int Start(const LaunchSpec& spec) {
    Result<int> pid = launcher_->Launch(spec);
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    if (!pid.ok()) return -1;
    started_.push_back(*pid);
    exit_paths_[*pid] = spec.exit_code_path;
    return *pid;
  }

  std::string ExitPath(int pid) { return exit_paths_[pid]; }

  // Polls Check until the process is no longer running (at most ~10 s).
  ProcessStatus WaitUntilEnded(int pid, const std::string& exit_path,
                               ProcessLauncher* launcher = nullptr) {
    if (launcher == nullptr) launcher = launcher_.get();
    ProcessStatus status;
    for (int i = 0; i < 1000; ++i) {
      status = launcher->Check(pid, exit_path);
      if (status.state != ProcessState::kRunning) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return status;
  }

  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string dir_;
  std::unique_ptr<ProcessLauncher> launcher_;
  std::vector<int> started_;
  std::map<int, std::string> exit_paths_;
};

// Fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, session.
struct ProcStat {
  char state = '?';
  int pgrp = -1;
  int session = -1;
};

bool ReadProcStat(int pid, ProcStat* out) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 2));
  int ppid;
  rest >> out->state >> ppid >> out->pgrp >> out->session;
  return static_cast<bool>(rest);
}

std::vector<int> GroupMembers(int pgid) {
  std::vector<int> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    ProcStat st;
    int pid = std::stoi(name);
    if (ReadProcStat(pid, &st) && st.pgrp == pgid && st.state != 'Z') pids.push_back(pid);
  }
  return pids;
}

bool AliveNotZombie(int pid) {
  ProcStat st;
  return ReadProcStat(pid, &st) && st.state != 'Z' && st.state != 'X';
}

TEST_F(PosixProcessLauncherTest, RunsProgramCapturesOutputAndExitCode) {
  LaunchSpec spec = Spec({"sh", "-c", "echo hi; echo err >&2; echo \"$OG_TEST:$PWD\"; exit 3"});
  int pid = Start(spec);
  ASSERT_GT(pid, 0);
  ProcessStatus status = WaitUntilEnded(pid, spec.exit_code_path);
  EXPECT_EQ(status.state, ProcessState::kExited);
  EXPECT_EQ(status.exit_code, 3);
  EXPECT_EQ(ReadFile(spec.stdout_path), "hi\n1:" + dir_ + "\n");
  EXPECT_EQ(ReadFile(spec.stderr_path), "err\n");
  EXPECT_EQ(ReadFile(spec.exit_code_path), "3");
  EXPECT_FALSE(fs::exists(spec.exit_code_path + ".tmp"));
  // Checking again after the reap gives the same answer.
  status = launcher_->Check(pid, spec.exit_code_path);
  EXPECT_EQ(status.state, ProcessState::kExited);
  EXPECT_EQ(status.exit_code, 3);
}

TEST_F(PosixProcessLauncherTest, OutputIsAppendedAndEnvironmentIsExact) {
  LaunchSpec spec = Spec({"sh", "-c", "env | grep -c '^OG_SERVER_ONLY=' ; exit 0"});
  {
    std::ofstream pre(spec.stdout_path);
    pre << "before\n";
  }
  setenv("OG_SERVER_ONLY", "1", 1);
  int pid = Start(spec);
  unsetenv("OG_SERVER_ONLY");
  ProcessStatus status = WaitUntilEnded(pid, spec.exit_code_path);
  EXPECT_EQ(status.state, ProcessState::kExited);
  // The server's variable is not inherited: the environment is exactly spec.env.
  EXPECT_EQ(ReadFile(spec.stdout_path), "before\n0\n");
}

TEST_F(PosixProcessLauncherTest, ArgumentsAreNotInterpretedByAShell) {
  LaunchSpec spec = Spec({"printf", "%s|", "a b", "$(touch pwned)", "'; exit 9"});
  int pid = Start(spec);
  ProcessStatus status = WaitUntilEnded(pid, spec.exit_code_path);
  EXPECT_EQ(status.state, ProcessState::kExited);
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_EQ(ReadFile(spec.stdout_path), "a b|$(touch pwned)|'; exit 9|");
  EXPECT_FALSE(fs::exists(dir_ + "/pwned"));
}

TEST_F(PosixProcessLauncherTest, ProgramKilledBySignalReports128PlusSignal) {
  // Only the program dies (not the wrapper), so the wrapper records 128 + SIGKILL.
  LaunchSpec spec = Spec({"sh", "-c", "kill -9 $$"});
  int pid = Start(spec);
  ProcessStatus status = WaitUntilEnded(pid, spec.exit_code_path);
  EXPECT_EQ(status.state, ProcessState::kExited);
  EXPECT_EQ(status.exit_code, 128 + SIGKILL);
}

TEST_F(PosixProcessLauncherTest, SignalGroupKillsTheWholeGroupAndReportsGone) {
  LaunchSpec spec = Spec({"sleep", "30"});
  int pid = Start(spec);
  EXPECT_EQ(launcher_->Check(pid, spec.exit_code_path).state, ProcessState::kRunning);
  ProcStat st;
  ASSERT_TRUE(ReadProcStat(pid, &st));
  EXPECT_EQ(st.pgrp, pid);     // leads its own process group...
  EXPECT_EQ(st.session, pid);  // ...and session
  ASSERT_TRUE(launcher_->SignalGroup(pid, SIGKILL).ok());
  ProcessStatus status = WaitUntilEnded(pid, spec.exit_code_path);
  // The wrapper is killed with its group, so nothing records an exit code: kGone.
  EXPECT_EQ(status.state, ProcessState::kGone);
  EXPECT_FALSE(fs::exists(spec.exit_code_path));
  // Signalling a group that no longer exists is fine.
  EXPECT_TRUE(launcher_->SignalGroup(pid, SIGTERM).ok());
}

TEST_F(PosixProcessLauncherTest, SignalGroupReachesGrandchildren) {
  LaunchSpec spec = Spec({"sh", "-c", "sleep 30 & sleep 30 & wait"});
  int pid = Start(spec);
  // wrapper sh, the sh -c, and two sleeps.
  std::vector<int> members;
  for (int i = 0; i < 500 && members.size() < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    members = GroupMembers(pid);
  }
  ASSERT_EQ(members.size(), 4u);
  ASSERT_TRUE(launcher_->SignalGroup(pid, SIGKILL).ok());
  EXPECT_EQ(WaitUntilEnded(pid, spec.exit_code_path).state, ProcessState::kGone);
  for (int member : members) {
    bool alive = true;
    for (int i = 0; i < 500 && alive; ++i) {
      alive = AliveNotZombie(member);
      if (alive) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_FALSE(alive) << "pid " << member << " survived the group kill";
  }
}

TEST_F(PosixProcessLauncherTest, UnrelatedLivePidIsNotMistakenForARun) {
  std::string exit_path = dir_ + "/never.exit";
  ProcessStatus status = launcher_->Check(getppid(), exit_path);
  EXPECT_EQ(status.state, ProcessState::kGone);
  status = launcher_->Check(getpid(), exit_path);
  EXPECT_EQ(status.state, ProcessState::kGone);
  // A run's pid checked against another run's exit path is not that run either.
  LaunchSpec spec = Spec({"sleep", "30"});
  int pid = Start(spec);
  std::unique_ptr<ProcessLauncher> other = MakePosixProcessLauncher();
  EXPECT_EQ(other->Check(pid, exit_path).state, ProcessState::kGone);
  EXPECT_EQ(other->Check(pid, spec.exit_code_path).state, ProcessState::kRunning);
}

TEST_F(PosixProcessLauncherTest, LaunchFailuresAreInvalidInput) {
  Result<int> r = launcher_->Launch(Spec({"no-such-program-og"}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("no-such-program-og"), std::string::npos);

  r = launcher_->Launch(Spec({"/no/such/program"}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);

  LaunchSpec bad_dir = Spec({"true"});
  bad_dir.working_dir = dir_ + "/missing";
  r = launcher_->Launch(bad_dir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("missing"), std::string::npos);

  LaunchSpec bad_out = Spec({"true"});
  bad_out.stdout_path = dir_ + "/missing/out";
  r = launcher_->Launch(bad_out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);

  LaunchSpec bad_exit = Spec({"true"});
  bad_exit.exit_code_path = dir_ + "/missing/exit";
  r = launcher_->Launch(bad_exit);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);

  r = launcher_->Launch(Spec({}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);

  // A file that exists but is not executable.
  std::ofstream(dir_ + "/script.txt") << "echo hi\n";
  r = launcher_->Launch(Spec({"./script.txt"}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);

  EXPECT_EQ(launcher_->SignalGroup(0, SIGKILL).code(), StatusCode::kInvalidInput);
  EXPECT_EQ(launcher_->SignalGroup(1, SIGKILL).code(), StatusCode::kInvalidInput);
}

TEST_F(PosixProcessLauncherTest, FailedExecOfTheProgramWrites127) {
  // The program exists and is executable, but the kernel cannot run it (its interpreter is
  // missing): the exec fails inside the wrapper, which records 127.
  std::string script = dir_ + "/broken";
  std::ofstream(script) << "#!/no/such/interpreter\n";
  fs::permissions(script, fs::perms::owner_all);
  LaunchSpec spec = Spec({script});
  int pid = Start(spec);
  ProcessStatus status = WaitUntilEnded(pid, spec.exit_code_path);
  EXPECT_EQ(status.state, ProcessState::kExited);
  EXPECT_EQ(status.exit_code, 127);
  EXPECT_FALSE(ReadFile(spec.stderr_path).empty());  // the shell says why
}

TEST_F(PosixProcessLauncherTest, ProgramIsLookedUpOnTheJobsPath) {
  fs::create_directories(dir_ + "/bin");
  std::string tool = dir_ + "/bin/og-tool";
  std::ofstream(tool) << "#!/bin/sh\necho tool \"$@\"\nexit 4\n";
  fs::permissions(tool, fs::perms::owner_all);
  LaunchSpec spec = Spec({"og-tool", "x"});
  spec.env = {"PATH=" + dir_ + "/bin:/usr/bin:/bin"};
  int pid = Start(spec);
  ProcessStatus status = WaitUntilEnded(pid, spec.exit_code_path);
  EXPECT_EQ(status.state, ProcessState::kExited);
  EXPECT_EQ(status.exit_code, 4);
  EXPECT_EQ(ReadFile(spec.stdout_path), "tool x\n");
  // Without the job's PATH the program is not found (the server's PATH does not have it).
  LaunchSpec other = Spec({"og-tool"}, "other");
  other.env = {};
  Result<int> r = launcher_->Launch(other);
  EXPECT_FALSE(r.ok());
  // A relative path resolves against the working directory.
  LaunchSpec relative = Spec({"bin/og-tool"}, "relative");
  pid = Start(relative);
  EXPECT_EQ(WaitUntilEnded(pid, relative.exit_code_path).exit_code, 4);
}

TEST_F(PosixProcessLauncherTest, StaleExitFileIsRemovedAtLaunch) {
  LaunchSpec spec = Spec({"sleep", "30"});
  std::ofstream(spec.exit_code_path) << "0";
  int pid = Start(spec);
  EXPECT_FALSE(fs::exists(spec.exit_code_path));
  ASSERT_TRUE(launcher_->SignalGroup(pid, SIGKILL).ok());
  EXPECT_EQ(WaitUntilEnded(pid, spec.exit_code_path).state, ProcessState::kGone);
}

TEST_F(PosixProcessLauncherTest, ExitCodeSurvivesARestart) {
  std::string gate = dir_ + "/gate";
  LaunchSpec spec =
      Spec({"sh", "-c", "while [ ! -e \"$0\" ]; do sleep 0.02; done; exit 7", gate});
  int pid = Start(spec);
  // A second launcher plays the restarted server: it did not start the process.
  std::unique_ptr<ProcessLauncher> restarted = MakePosixProcessLauncher();
  EXPECT_EQ(restarted->Check(pid, spec.exit_code_path).state, ProcessState::kRunning);
  std::ofstream(gate) << "go";
  ProcessStatus status = WaitUntilEnded(pid, spec.exit_code_path, restarted.get());
  EXPECT_EQ(status.state, ProcessState::kExited);
  EXPECT_EQ(status.exit_code, 7);
  // The original launcher still reaps its child and agrees.
  status = WaitUntilEnded(pid, spec.exit_code_path);
  EXPECT_EQ(status.state, ProcessState::kExited);
  EXPECT_EQ(status.exit_code, 7);
  ProcStat st;
  EXPECT_FALSE(ReadProcStat(pid, &st) && st.state == 'Z') << "the child was not reaped";
}

TEST_F(PosixProcessLauncherTest, ManyConcurrentLaunches) {
  std::vector<LaunchSpec> specs;
  std::vector<int> pids;
  for (int i = 0; i < 20; ++i) {
    specs.push_back(Spec({"sh", "-c", "exit " + std::to_string(i)}, "run" + std::to_string(i)));
    pids.push_back(Start(specs.back()));
  }
  for (int i = 0; i < 20; ++i) {
    ProcessStatus status = WaitUntilEnded(pids[i], specs[i].exit_code_path);
    EXPECT_EQ(status.state, ProcessState::kExited);
    EXPECT_EQ(status.exit_code, i);
  }
}

}  // namespace
}  // namespace openglue::jobs
