#include "common/config.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace openglue {
namespace {

TEST(ConfigTest, DefaultsComeFromTheTable) {
  ServerConfig config;
  EXPECT_EQ(config.host, "127.0.0.1");
  EXPECT_EQ(config.port, 4690);
  EXPECT_EQ(config.data_dir, "./openglue-data");
  EXPECT_EQ(config.credentials, (std::map<std::string, std::string>{{"test", "test"}}));
  EXPECT_EQ(config.region, "us-east-1");
  EXPECT_EQ(config.account_id, "000000000000");
  EXPECT_EQ(config.log_level, "info");
  EXPECT_EQ(config.max_clock_skew_seconds, 900);
  EXPECT_EQ(config.http_threads, 64);
  EXPECT_TRUE(config.require_auth);
  EXPECT_EQ(config.port_file, "");
  EXPECT_FALSE(config.python.empty());
  EXPECT_EQ(config.runtime_path, "");
  EXPECT_EQ(config.max_concurrent_runs, 16);
  EXPECT_EQ(config.log_retention_days, 30);
}

TEST(ConfigTest, EveryDefaultPassesItsOwnSetter) {
  for (const ConfigKey& key : ConfigKeys()) {
    if (!key.default_value) continue;
    ServerConfig config;
    EXPECT_TRUE(config.Set(key.name, key.default_value).ok()) << key.name;
  }
}

TEST(ConfigTest, NamesAreUniqueAndWellFormed) {
  std::set<std::string> names;
  for (const ConfigKey& key : ConfigKeys()) {
    EXPECT_TRUE(names.insert(key.name).second) << "duplicate key " << key.name;
    for (const char* c = key.name; *c; ++c)
      EXPECT_TRUE((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_') << key.name;
    EXPECT_NE(key.set, nullptr) << key.name;
    EXPECT_NE(std::string(key.help), "") << key.name;
    EXPECT_NE(std::string(key.value_name), "") << key.name;
  }
}

TEST(ConfigTest, DerivedNames) {
  const ConfigKey* key = FindConfigKey("max_concurrent_runs");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(EnvironmentName(*key), "OPENGLUE_MAX_CONCURRENT_RUNS");
  EXPECT_EQ(FlagName(*key), "--max-concurrent-runs");
  EXPECT_EQ(FindConfigKey("max-concurrent-runs"), key);
  EXPECT_EQ(FindConfigKey("no_such_key"), nullptr);
}

TEST(ConfigTest, HelpListsEveryKeyWithFlagEnvironmentAndDefault) {
  std::string help = ConfigHelp();
  for (const ConfigKey& key : ConfigKeys()) {
    if (key.secret) {
      // A secret is never offered as a flag: command lines are readable by every local user.
      EXPECT_EQ(help.find(FlagName(key) + " "), std::string::npos) << key.name;
      EXPECT_NE(help.find(std::string("  (") + key.name + ")"), std::string::npos) << key.name;
    } else {
      EXPECT_NE(help.find(FlagName(key) + " " + key.value_name), std::string::npos) << key.name;
    }
    EXPECT_NE(help.find(EnvironmentName(key)), std::string::npos) << key.name;
    if (key.default_value && *key.default_value) {
      EXPECT_NE(help.find(std::string("[") + key.default_value + "]"), std::string::npos)
          << key.name;
    }
  }
}

TEST(ConfigTest, SetAcceptsDashesAndRejectsUnknownKeys) {
  ServerConfig config;
  ASSERT_TRUE(config.Set("max-concurrent-runs", "3").ok());
  EXPECT_EQ(config.max_concurrent_runs, 3);
  Status st = config.Set("no_such_key", "1");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("unknown config key 'no_such_key'", 0), 0u) << st.message();
}

TEST(ConfigTest, BadValuesNameTheKeyAndLeaveTheValue) {
  ServerConfig config;
  Status st = config.Set("port", "seventy");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'port'"), std::string::npos) << st.message();
  EXPECT_EQ(config.port, 4690);
  st = config.Set("http_threads", "1");
  EXPECT_NE(st.message().find("'http_threads'"), std::string::npos) << st.message();
  EXPECT_FALSE(config.Set("auth", "maybe").ok());
  EXPECT_FALSE(config.Set("log_level", "loud").ok());
  EXPECT_FALSE(config.Set("credentials", "nocolon").ok());
  EXPECT_FALSE(config.Set("port", "65536").ok());
  EXPECT_FALSE(config.Set("port", "12x").ok());
}

TEST(ConfigTest, CredentialsKeys) {
  ServerConfig config;
  ASSERT_TRUE(config.Set("access_key_id", "AK").ok());
  ASSERT_TRUE(config.Set("secret_access_key", "SK").ok());
  EXPECT_EQ(config.credentials, (std::map<std::string, std::string>{{"AK", "SK"}}));
  ASSERT_TRUE(config.Set("credentials", "AK2:S:K2").ok());
  EXPECT_EQ(config.credentials.at("AK2"), "S:K2");
  ASSERT_TRUE(config.Set("auth", "none").ok());
  EXPECT_FALSE(config.require_auth);
}

TEST(ConfigTest, EnvironmentUsesDerivedNamesOnly) {
  ServerConfig config;
  ASSERT_TRUE(ApplyEnvironment({"OPENGLUE_PORT=1234", "OPENGLUE_LOG_RETENTION_DAYS=0",
                                "OPENGLUE_BIN=/x/openglue", "OPENGLUE_CONFIG=/x.conf",
                                "OPENGLUE_SOMETHING_ELSE=1", "PORT=9", "OPENGLUE_PORTX=5"},
                               &config)
                  .ok());
  EXPECT_EQ(config.port, 1234);
  EXPECT_EQ(config.log_retention_days, 0);
  Status st = ApplyEnvironment({"OPENGLUE_MAX_CONCURRENT_RUNS=zero"}, &config);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("OPENGLUE_MAX_CONCURRENT_RUNS"), std::string::npos) << st.message();
}

TEST(ConfigTest, EveryKeyIsSettableThroughEachChannel) {
  // A value each key accepts, taken from its default or a per-type probe.
  for (const ConfigKey& key : ConfigKeys()) {
    std::string value = key.default_value && *key.default_value ? key.default_value
                        : std::string(key.name) == "server_key"  ? std::string(40, 'k')
                        : std::string(key.name) == "role_policy" ? "etl: glue:Get*"
                                                                 : "a:b";
    ServerConfig from_env;
    EXPECT_TRUE(ApplyEnvironment({EnvironmentName(key) + "=" + value}, &from_env).ok()) << key.name;
    ServerConfig from_flag;
    EXPECT_TRUE(from_flag.Set(FlagName(key).substr(2), value).ok()) << key.name;
  }
}

TEST(ConfigTest, SecretsAreMarkedAndRolePoliciesAccumulate) {
  for (const char* name : {"secret_access_key", "credentials", "server_key"}) {
    const ConfigKey* key = FindConfigKey(name);
    ASSERT_NE(key, nullptr) << name;
    EXPECT_TRUE(key->secret) << name;
  }
  EXPECT_FALSE(FindConfigKey("access_key_id")->secret);
  ServerConfig config;
  ASSERT_TRUE(config.Set("role_policy", "etl: glue:Get*, logs:*").ok());
  ASSERT_TRUE(config.Set("role_policy", "etl: glue:BatchCreatePartition").ok());
  EXPECT_EQ(config.role_policies.at("etl"),
            (std::vector<std::string>{"glue:Get*", "logs:*", "glue:BatchCreatePartition"}));
  EXPECT_FALSE(config.Set("role_policy", "no-actions:").ok());
  EXPECT_FALSE(config.Set("server_key", "short").ok());
  EXPECT_FALSE(config.Set("job_uid_base", "0").ok());
}

TEST(ConfigTest, ConfigFileLinesAndErrors) {
  char path[] = "/tmp/openglue_config_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(path);
    out << "# comment\n\n  port = 0\nregion=eu-west-1\ncredentials = A:B\n";
  }
  ServerConfig config;
  ASSERT_TRUE(LoadConfigFile(path, &config).ok());
  EXPECT_EQ(config.port, 0);
  EXPECT_EQ(config.region, "eu-west-1");
  EXPECT_EQ(config.credentials.at("A"), "B");
  {
    std::ofstream out(path);
    out << "port = 1\nno equals sign here\n";
  }
  Status st = LoadConfigFile(path, &config);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(std::string(path) + ":2"), std::string::npos) << st.message();
  {
    std::ofstream out(path);
    out << "bogus = 1\n";
  }
  st = LoadConfigFile(path, &config);
  EXPECT_NE(st.message().find(":1: unknown config key 'bogus'"), std::string::npos) << st.message();
  std::remove(path);
  EXPECT_FALSE(LoadConfigFile(path, &config).ok());
}

}  // namespace
}  // namespace openglue
