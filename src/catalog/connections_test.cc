// Connections and the cipher that seals their passwords.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "catalog/catalog.h"
#include "catalog/catalog_util.h"
#include "catalog/connection_cipher.h"
#include "store/sqlite_store.h"

namespace openglue::catalog {
namespace {

constexpr const char* kPassword = "Hunter2-very-distinctive-p4ss";

std::string Key(char fill) { return std::string(ConnectionCipher::kKeyBytes, fill); }

std::unique_ptr<ConnectionCipher> CipherOf(char fill) {
  auto made = ConnectionCipher::FromKey(Key(fill));
  EXPECT_TRUE(made.ok());
  return std::move(*made);
}

TEST(ConnectionCipherTest, SealsAndOpensBoundToItsContext) {
  auto cipher = CipherOf('k');
  SeededRandom random(7);
  auto sealed = cipher->Seal(kPassword, "ctx-a", &random);
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(sealed->find(kPassword), std::string::npos);
  EXPECT_EQ(sealed->rfind("v1:" + cipher->key_id() + ":", 0), 0u) << *sealed;
  EXPECT_EQ(ConnectionCipher::KeyIdOf(*sealed), cipher->key_id());
  auto opened = cipher->Open(*sealed, "ctx-a");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, kPassword);
  // Moved to another connection or property: refused.
  auto moved = cipher->Open(*sealed, "ctx-b");
  EXPECT_EQ(moved.status().code(), StatusCode::kEncryption);
  // Two seals of one value differ (fresh nonce each time).
  auto again = cipher->Seal(kPassword, "ctx-a", &random);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(*again, *sealed);
  // The empty string round-trips too.
  auto empty = cipher->Seal("", "ctx", &random);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*cipher->Open(*empty, "ctx"), "");
}

TEST(ConnectionCipherTest, RefusesAlteredMalformedOrForeignValues) {
  auto cipher = CipherOf('k');
  auto other = CipherOf('o');
  EXPECT_NE(cipher->key_id(), other->key_id());
  SeededRandom random(1);
  std::string sealed = *cipher->Seal(kPassword, "ctx", &random);
  // Flip one bit of the ciphertext (a base64 character after the header).
  std::string altered = sealed;
  size_t pos = altered.size() - 5;
  altered[pos] = altered[pos] == 'A' ? 'B' : 'A';
  EXPECT_EQ(cipher->Open(altered, "ctx").status().code(), StatusCode::kEncryption);
  for (const char* bad : {"", "v1:", "plain", "v2:0123456789abcdef:AAAA", "v1:0123456789abcdef:!!"}) {
    auto opened = cipher->Open(bad, "ctx");
    EXPECT_EQ(opened.status().code(), StatusCode::kEncryption) << bad;
  }
  auto foreign = other->Open(sealed, "ctx");
  ASSERT_EQ(foreign.status().code(), StatusCode::kEncryption);
  EXPECT_NE(foreign.status().message().find(cipher->key_id()), std::string::npos);
  EXPECT_NE(foreign.status().message().find(other->key_id()), std::string::npos);
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-conn-XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

using ConnectionKeyFileTest = TempDir;

TEST_F(ConnectionKeyFileTest, SaveMakesA0600FileThatLoadsTheSameKey) {
  SeededRandom random(3);
  auto cipher = ConnectionCipher::Generate(&random);
  std::string path = dir_ + "/connection.key";
  ASSERT_TRUE(cipher->Save(path).ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 32);
  auto loaded = ConnectionCipher::FromFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->key_id(), cipher->key_id());
  // Never overwrites a key.
  EXPECT_EQ(cipher->Save(path).code(), StatusCode::kInvalidInput);
}

TEST_F(ConnectionKeyFileTest, MissingShortLongOrDirectoryKeyFilesAreClearErrors) {
  auto missing = ConnectionCipher::FromFile(dir_ + "/absent.key");
  ASSERT_EQ(missing.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(missing.status().message().find("absent.key"), std::string::npos);
  for (size_t size : {0, 31, 33, 64}) {
    std::string path = dir_ + "/k" + std::to_string(size);
    std::ofstream(path) << std::string(size, 'x');
    auto loaded = ConnectionCipher::FromFile(path);
    ASSERT_EQ(loaded.status().code(), StatusCode::kInvalidInput) << size;
    EXPECT_NE(loaded.status().message().find("exactly 32 bytes"), std::string::npos);
    // The message never echoes the file's bytes.
    EXPECT_EQ(loaded.status().message().find("xxxx"), std::string::npos);
  }
  auto dir = ConnectionCipher::FromFile(dir_);
  EXPECT_EQ(dir.status().code(), StatusCode::kInvalidInput);
}

class ConnectionsTest : public TempDir {
 protected:
  void SetUp() override {
    TempDir::SetUp();
    auto store = store::SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    cipher_ = CipherOf('k');
    MakeCatalog(cipher_.get());
  }
  void TearDown() override {
    catalog_.reset();
    store_.reset();
    TempDir::TearDown();
  }
  void MakeCatalog(const ConnectionCipher* cipher) {
    CatalogOptions options;
    options.connection_cipher = cipher;
    options.random = &random_;
    auto catalog = Catalog::Make(store_.get(), &clock_, options);
    ASSERT_TRUE(catalog.ok());
    catalog_ = std::move(*catalog);
  }
  static Json Input(const std::string& name, const std::string& type = "JDBC",
                    Json criteria = Json::array()) {
    return Json{{"Name", name},
                {"ConnectionType", type},
                {"MatchCriteria", std::move(criteria)},
                {"ConnectionProperties",
                 {{"JDBC_CONNECTION_URL", "jdbc:postgresql://127.0.0.1:5432/orders"},
                  {"USERNAME", "app"},
                  {"PASSWORD", kPassword}}}};
  }
  Status Create(const Json& input) {
    Status st = catalog_->CreateConnection(Json{{"ConnectionInput", input}}).status();
    if (!st.ok()) std::cerr << "CreateConnection: " << st.ToString() << "\n";
    return st;
  }
  Result<Json> Get(const std::string& name, bool hide) {
    OG_ASSIGN_OR_RETURN(Json r, catalog_->GetConnection(Json{{"Name", name}, {"HidePassword", hide}}));
    return r["Connection"];
  }
  // Every stored byte of the connection kind, as the store holds them.
  std::string StoredDocs() {
    auto txn = store_->BeginRead();
    EXPECT_TRUE(txn.ok());
    auto rows = (*txn)->Scan(kConnection, store::ScanOptions{"", "", -1, false});
    EXPECT_TRUE(rows.ok());
    std::string all;
    for (const auto& row : *rows) all += row.doc;
    return all;
  }

  FakeClock clock_{1700000000000};
  SeededRandom random_{42};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<ConnectionCipher> cipher_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(ConnectionsTest, PasswordIsSealedInTheStoreAndOpenedOnlyWithoutHidePassword) {
  ASSERT_TRUE(Create(Input("Orders_DB")).ok());
  std::string stored = StoredDocs();
  EXPECT_NE(stored.find("Orders_DB"), std::string::npos);
  EXPECT_EQ(stored.find(kPassword), std::string::npos) << stored;
  EXPECT_NE(stored.find("v1:" + cipher_->key_id()), std::string::npos);

  auto shown = Get("Orders_DB", false);
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  EXPECT_EQ((*shown)["ConnectionProperties"]["PASSWORD"], kPassword);
  EXPECT_EQ((*shown)["ConnectionProperties"]["USERNAME"], "app");
  EXPECT_FALSE(shown->contains("SealedProperties"));
  EXPECT_EQ((*shown)["Name"], "Orders_DB");  // names keep their case
  EXPECT_EQ((*shown)["Status"], "READY");
  EXPECT_DOUBLE_EQ((*shown)["CreationTime"].get<double>(), 1700000000.0);

  auto hidden = Get("Orders_DB", true);
  ASSERT_TRUE(hidden.ok());
  EXPECT_FALSE((*hidden)["ConnectionProperties"].contains("PASSWORD"));
  EXPECT_EQ((*hidden)["ConnectionProperties"]["USERNAME"], "app");

  EXPECT_EQ(Get("orders_db", false).status().code(), StatusCode::kEntityNotFound);
  EXPECT_EQ(Create(Input("Orders_DB")).code(), StatusCode::kAlreadyExists);
}

TEST_F(ConnectionsTest, EverySecretPropertyIsSealedAndHidden) {
  Json input = Input("kafka", "KAFKA");
  input["ConnectionProperties"] = {{"KAFKA_BOOTSTRAP_SERVERS", "b:9092"},
                                   {"KAFKA_SASL_SCRAM_PASSWORD", "scram-secret-123"},
                                   {"ENCRYPTED_PASSWORD", "opaque-ciphertext-456"}};
  ASSERT_TRUE(Create(input).ok());
  std::string stored = StoredDocs();
  EXPECT_EQ(stored.find("scram-secret-123"), std::string::npos);
  EXPECT_EQ(stored.find("opaque-ciphertext-456"), std::string::npos);
  auto shown = Get("kafka", false);
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ((*shown)["ConnectionProperties"]["KAFKA_SASL_SCRAM_PASSWORD"], "scram-secret-123");
  EXPECT_EQ((*shown)["ConnectionProperties"]["ENCRYPTED_PASSWORD"], "opaque-ciphertext-456");
  auto hidden = Get("kafka", true);
  ASSERT_TRUE(hidden.ok());
  EXPECT_EQ((*hidden)["ConnectionProperties"], Json({{"KAFKA_BOOTSTRAP_SERVERS", "b:9092"}}));
}

TEST_F(ConnectionsTest, ASealedValueCopiedToAnotherConnectionDoesNotOpen) {
  ASSERT_TRUE(Create(Input("a")).ok());
  ASSERT_TRUE(Create(Input("b")).ok());
  // Copy a's sealed password over b's, as someone with write access to the store file could.
  auto txn = store_->BeginWrite();
  ASSERT_TRUE(txn.ok());
  Json a = Json::parse(**(*txn)->Get(kConnection, store::MakeKey({"000000000000", "a"})));
  Json b = Json::parse(**(*txn)->Get(kConnection, store::MakeKey({"000000000000", "b"})));
  b["SealedProperties"] = a["SealedProperties"];
  ASSERT_TRUE((*txn)->Put(kConnection, store::MakeKey({"000000000000", "b"}), b.dump()).ok());
  ASSERT_TRUE((*txn)->Commit().ok());
  EXPECT_EQ(Get("b", false).status().code(), StatusCode::kEncryption);
  EXPECT_TRUE(Get("b", true).ok());  // the rest stays readable
  EXPECT_TRUE(Get("a", false).ok());
}

TEST_F(ConnectionsTest, ValidatesJdbcUrlAndRefusesCredentialsItCannotKeep) {
  Json no_url = Input("x");
  no_url["ConnectionProperties"].erase("JDBC_CONNECTION_URL");
  Status st = Create(no_url);
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_NE(st.message().find("JDBC_CONNECTION_URL"), std::string::npos);
  Json bad_url = Input("x");
  bad_url["ConnectionProperties"]["JDBC_CONNECTION_URL"] = "postgresql://h/db";
  EXPECT_EQ(Create(bad_url).code(), StatusCode::kInvalidInput);
  // Other types need no JDBC URL.
  Json network = {{"Name", "net"}, {"ConnectionType", "NETWORK"}, {"ConnectionProperties", Json::object()}};
  EXPECT_TRUE(Create(network).ok());
  Json basic = Input("x");
  basic["AuthenticationConfiguration"] = {{"AuthenticationType", "BASIC"},
                                          {"BasicAuthenticationCredentials", {{"Username", "u"}, {"Password", "p"}}}};
  st = Create(basic);
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(st.message().find("\"p\""), std::string::npos);
  Json arn = Input("y");
  arn["AuthenticationConfiguration"] = {{"AuthenticationType", "BASIC"},
                                        {"SecretArn", "arn:aws:secretsmanager:us-east-1:1:secret:s"}};
  ASSERT_TRUE(Create(arn).ok());
  EXPECT_EQ((*Get("y", true))["AuthenticationConfiguration"]["SecretArn"],
            "arn:aws:secretsmanager:us-east-1:1:secret:s");
}

TEST_F(ConnectionsTest, WithoutACipherSecretsAreRefusedNotStoredInTheClear) {
  MakeCatalog(nullptr);
  Status st = Create(Input("x"));
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  Json no_password = Input("y");
  no_password["ConnectionProperties"].erase("PASSWORD");
  EXPECT_TRUE(Create(no_password).ok());
  EXPECT_EQ(StoredDocs().find(kPassword), std::string::npos);
}

TEST_F(ConnectionsTest, GetConnectionsFiltersAndPages) {
  ASSERT_TRUE(Create(Input("c1", "JDBC", {"a", "b"})).ok());
  ASSERT_TRUE(Create(Input("c2", "JDBC", {"a"})).ok());
  Json kafka = {{"Name", "c3"}, {"ConnectionType", "KAFKA"}, {"MatchCriteria", {"a", "b"}},
                {"ConnectionProperties", {{"KAFKA_BOOTSTRAP_SERVERS", "h:9092"}}}};
  ASSERT_TRUE(Create(kafka).ok());
  auto names = [&](const Json& request) {
    std::vector<std::string> out;
    auto r = catalog_->GetConnections(request);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return out;
    for (const Json& c : (*r)["ConnectionList"]) out.push_back(c["Name"]);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(Json::object()), (V{"c1", "c2", "c3"}));
  EXPECT_EQ(names({{"Filter", {{"ConnectionType", "JDBC"}}}}), (V{"c1", "c2"}));
  EXPECT_EQ(names({{"Filter", {{"MatchCriteria", {"b"}}}}}), (V{"c1", "c3"}));
  EXPECT_EQ(names({{"Filter", {{"MatchCriteria", {"a", "b"}}, {"ConnectionType", "JDBC"}}}}), (V{"c1"}));
  EXPECT_EQ(names({{"Filter", {{"MatchCriteria", {"zzz"}}}}}), V{});
  Json v2 = Input("c4");
  v2["SparkProperties"] = {{"k", "v"}};
  ASSERT_TRUE(Create(v2).ok());
  EXPECT_EQ((*Get("c4", true))["ConnectionSchemaVersion"], 2);
  EXPECT_EQ((*Get("c1", true))["ConnectionSchemaVersion"], 1);
  EXPECT_EQ(names({{"Filter", {{"ConnectionSchemaVersion", 2}}}}), V{"c4"});
  ASSERT_TRUE(catalog_->DeleteConnection({{"ConnectionName", "c4"}}).ok());

  auto first = catalog_->GetConnections({{"MaxResults", 2}, {"HidePassword", true}});
  ASSERT_TRUE(first.ok());
  ASSERT_EQ((*first)["ConnectionList"].size(), 2u);
  EXPECT_FALSE((*first)["ConnectionList"][0]["ConnectionProperties"].contains("PASSWORD"));
  ASSERT_TRUE(first->contains("NextToken"));
  auto second = catalog_->GetConnections({{"MaxResults", 2}, {"NextToken", (*first)["NextToken"]}});
  ASSERT_TRUE(second.ok());
  ASSERT_EQ((*second)["ConnectionList"].size(), 1u);
  EXPECT_EQ((*second)["ConnectionList"][0]["Name"], "c3");
  EXPECT_FALSE(second->contains("NextToken"));
  auto shown = catalog_->GetConnections({{"Filter", {{"ConnectionType", "JDBC"}}}});
  EXPECT_EQ((*shown)["ConnectionList"][0]["ConnectionProperties"]["PASSWORD"], kPassword);
  EXPECT_EQ(catalog_->GetConnections({{"NextToken", "garbage!"}}).status().code(), StatusCode::kInvalidInput);
  // Another catalog id sees none of them.
  EXPECT_EQ(names({{"CatalogId", "111111111111"}}), V{});
}

TEST_F(ConnectionsTest, UpdateReplacesTheDefinitionAndCanRename) {
  ASSERT_TRUE(Create(Input("old")).ok());
  clock_.Advance(5000);
  Json input = Input("old");
  input["ConnectionProperties"]["PASSWORD"] = "second-password-xyz";
  input["Description"] = "d";
  ASSERT_TRUE(catalog_->UpdateConnection({{"Name", "old"}, {"ConnectionInput", input}}).ok());
  auto got = Get("old", false);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["ConnectionProperties"]["PASSWORD"], "second-password-xyz");
  EXPECT_EQ((*got)["Description"], "d");
  EXPECT_DOUBLE_EQ((*got)["CreationTime"].get<double>(), 1700000000.0);
  EXPECT_DOUBLE_EQ((*got)["LastUpdatedTime"].get<double>(), 1700000005.0);
  EXPECT_EQ(StoredDocs().find("second-password-xyz"), std::string::npos);

  // Rename: the password is sealed again for the new name and opens there.
  ASSERT_TRUE(catalog_->UpdateConnection({{"Name", "old"}, {"ConnectionInput", Input("new")}}).ok());
  EXPECT_EQ(Get("old", true).status().code(), StatusCode::kEntityNotFound);
  EXPECT_EQ((*Get("new", false))["ConnectionProperties"]["PASSWORD"], kPassword);
  ASSERT_TRUE(Create(Input("other")).ok());
  EXPECT_EQ(catalog_->UpdateConnection({{"Name", "new"}, {"ConnectionInput", Input("other")}}).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(catalog_->UpdateConnection({{"Name", "ghost"}, {"ConnectionInput", Input("ghost")}}).status().code(),
            StatusCode::kEntityNotFound);
}

TEST_F(ConnectionsTest, DeleteAndBatchDelete) {
  ASSERT_TRUE(Create(Input("a")).ok());
  ASSERT_TRUE(Create(Input("b")).ok());
  ASSERT_TRUE(catalog_->DeleteConnection({{"ConnectionName", "a"}}).ok());
  EXPECT_EQ(catalog_->DeleteConnection({{"ConnectionName", "a"}}).status().code(), StatusCode::kEntityNotFound);
  ASSERT_TRUE(Create(Input("c")).ok());
  auto r = catalog_->BatchDeleteConnection({{"ConnectionNameList", {"b", "missing", "c"}}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["Succeeded"], Json({"b", "c"}));
  ASSERT_TRUE((*r)["Errors"].contains("missing"));
  EXPECT_EQ((*r)["Errors"]["missing"]["ErrorCode"], "EntityNotFoundException");
  EXPECT_EQ((*r)["Errors"].size(), 1u);
  EXPECT_EQ(StoredDocs(), "");
}

TEST_F(ConnectionsTest, CheckConnectionKeyNamesTheConnectionAndBothKeys) {
  EXPECT_TRUE(catalog_->CheckConnectionKey(nullptr).ok());  // nothing sealed yet
  ASSERT_TRUE(Create(Input("db1")).ok());
  EXPECT_TRUE(catalog_->CheckConnectionKey(cipher_.get()).ok());
  auto other = CipherOf('o');
  Status st = catalog_->CheckConnectionKey(other.get());
  ASSERT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_NE(st.message().find("db1"), std::string::npos);
  EXPECT_NE(st.message().find(cipher_->key_id()), std::string::npos);
  EXPECT_NE(st.message().find(other->key_id()), std::string::npos);
  EXPECT_EQ(catalog_->CheckConnectionKey(nullptr).code(), StatusCode::kInvalidInput);
}

}  // namespace
}  // namespace openglue::catalog
