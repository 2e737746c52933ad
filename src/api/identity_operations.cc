#include "api/identity_operations.h"

#include <ctime>
#include <memory>
#include <optional>

#include "api/query_protocol.h"

namespace openglue::api {
namespace {

constexpr const char* kIamVersion = "2010-05-08";
constexpr const char* kIamXmlns = "https://iam.amazonaws.com/doc/2010-05-08/";
constexpr const char* kStsVersion = "2011-06-15";
constexpr const char* kStsXmlns = "https://sts.amazonaws.com/doc/2011-06-15/";

// The trust policy every OpenGlue Role has: Glue may assume it.
constexpr const char* kAssumeRolePolicy =
    R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow",)"
    R"("Principal":{"Service":"glue.amazonaws.com"},"Action":"sts:AssumeRole"}]})";

// IAM's RoleName: 1 to 64 of [A-Za-z0-9_+=,.@-].
bool ValidRoleName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!word && std::string_view("+=,.@-").find(c) == std::string_view::npos) return false;
  }
  return true;
}

uint64_t Fnv1a(std::string_view text, uint64_t basis) {
  uint64_t hash = basis;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

// A role's stable unique id, in IAM's form: AROA and 17 characters of [A-Z2-7], from the name.
std::string RoleId(std::string_view name) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  uint64_t words[2] = {Fnv1a(name, 14695981039346656037ULL), Fnv1a(name, 1469598103934665603ULL)};
  std::string id = "AROA";
  for (int i = 0; i < 17; ++i) {
    uint64_t& word = words[i % 2];
    id.push_back(kAlphabet[word & 31]);
    word >>= 5;
  }
  return id;
}

std::string IsoTime(int64_t millis) {
  std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string Element(const char* name, const std::string& value) {
  return std::string("<") + name + ">" + XmlEscape(value) + "</" + name + ">";
}

Result<std::string> GetRole(const IdentityOptions& options, const Router::QueryParams& params) {
  auto it = params.find("RoleName");
  if (it == params.end())
    return Status::InvalidInput(
        "1 validation error detected: Value null at 'roleName' failed to satisfy constraint: "
        "Member must not be null");
  const std::string& name = it->second;
  if (!ValidRoleName(name))
    return Status::InvalidInput(
        "The specified value for roleName is invalid. It must contain only alphanumeric "
        "characters and/or the following: +=,.@_- (1 to 64 characters)");
  std::string description =
      "OpenGlue Role '" + name + "': its job runs may do what " +
      (options.configured_roles.count(name) ? "its role_policy lines allow"
                                            : "the default run policy allows") +
      " (docs/security.md)";
  return "<Role>" + Element("Path", "/") + Element("RoleName", name) +
         Element("RoleId", RoleId(name)) +
         Element("Arn", "arn:aws:iam::" + options.account_id + ":role/" + name) +
         Element("CreateDate", IsoTime(options.created_millis)) +
         Element("AssumeRolePolicyDocument", PercentEncode(kAssumeRolePolicy)) +
         Element("Description", description) + Element("MaxSessionDuration", "3600") + "</Role>";
}

std::string GetCallerIdentity(const IdentityOptions& options, const std::string& principal) {
  std::optional<RunPrincipal> run;
  if (options.authorizer != nullptr && !principal.empty()) run = options.authorizer->FindRun(principal);
  if (!run)  // a configured credential (or no auth): the account itself
    return Element("Arn", "arn:aws:iam::" + options.account_id + ":root") +
           Element("UserId", options.account_id) + Element("Account", options.account_id);
  std::string role(RoleNameOf(run->role));
  return Element("Arn", "arn:aws:sts::" + options.account_id + ":assumed-role/" + role + "/" +
                            run->run_id) +
         Element("UserId", RoleId(role) + ":" + run->run_id) +
         Element("Account", options.account_id);
}

}  // namespace

void RegisterIdentity(Router* router, IdentityOptions options) {
  auto shared = std::make_shared<const IdentityOptions>(std::move(options));
  router->RegisterQuery(
      "GetRole", {"iam", kIamVersion, kIamXmlns, /*authorize=*/true,
                  [shared](const Router::QueryParams& params, const std::string&) {
                    return GetRole(*shared, params);
                  }});
  router->RegisterQuery(
      "GetCallerIdentity",
      {"sts", kStsVersion, kStsXmlns, /*authorize=*/false,
       [shared](const Router::QueryParams&, const std::string& principal) -> Result<std::string> {
         return GetCallerIdentity(*shared, principal);
       }});
}

}  // namespace openglue::api
