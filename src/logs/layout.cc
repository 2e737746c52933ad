#include "logs/layout.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <cstring>

#include "common/logging.h"
#include "common/strings.h"
#include "logs/event_file.h"

namespace openglue::logs {

bool ValidStreamName(std::string_view id) {
  if (id.empty() || id.size() > 512 || id[0] == '.') return false;
  for (char c : id) {
    if (c == '/' || c == ':' || c == '*' || c == '\0' || c == '\n') return false;
  }
  return true;
}

bool Layout::StreamExists(const std::string& run_id) const {
  if (!ValidStreamName(run_id)) return false;
  struct stat st;
  return stat(RunDir(run_id).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Layout::CreateRunDir(const std::string& run_id, int64_t now_ms) const {
  if (!ValidStreamName(run_id)) return false;
  std::string dir = RunDir(run_id);
  if (mkdir(dir.c_str(), 0755) == 0) {
    WriteFileAtomically(dir + "/" + kCreatedFile, std::to_string(now_ms));
    return true;
  }
  if (errno != EEXIST) {
    OG_LOG(kWarn, "log store: cannot create " << dir << ": " << std::strerror(errno));
  }
  return false;
}

std::vector<std::string> Layout::ListRuns() const {
  std::vector<std::string> runs;
  DIR* dir = opendir(root_.c_str());
  if (dir == nullptr) return runs;
  while (struct dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (!ValidStreamName(name)) continue;
    if (entry->d_type == DT_DIR || (entry->d_type == DT_UNKNOWN && StreamExists(name))) {
      runs.push_back(std::move(name));
    }
  }
  closedir(dir);
  return runs;
}

int64_t Layout::StreamCreationTime(const std::string& run_id) const {
  std::string text;
  int64_t ms = 0;
  if (ReadSmallFile(RunDir(run_id) + "/" + kCreatedFile, &text) && ParseInt64(Trim(text), &ms)) {
    return ms;
  }
  struct stat st;
  if (stat(RunDir(run_id).c_str(), &st) == 0) return MtimeMillis(st);
  return 0;
}

}  // namespace openglue::logs
