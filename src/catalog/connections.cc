// Connections: CreateConnection, GetConnection, GetConnections, UpdateConnection,
// DeleteConnection, BatchDeleteConnection.
//
// The stored document is the wire Connection without its secret properties; those are kept
// sealed (ConnectionCipher) in the member "SealedProperties", bound to the catalog id, the
// connection name and the property key.
#include <algorithm>
#include <set>

#include "catalog/catalog.h"
#include "catalog/catalog_util.h"
#include "common/logging.h"
#include "common/strings.h"

namespace openglue::catalog {
namespace {

constexpr const char* kSealed = "SealedProperties";

// The associated data a secret is sealed with: where it belongs.
std::string SealContext(const std::string& catalog_id, const std::string& name, const std::string& key) {
  return "connection" + std::string(1, store::kKeySep) + catalog_id + std::string(1, store::kKeySep) +
         name + std::string(1, store::kKeySep) + key;
}

// Members of an AuthenticationConfigurationInput that carry credentials. Glue keeps those in
// AWS Secrets Manager; OpenGlue has no such store, so it refuses them rather than drop them.
constexpr const char* kCredentialMembers[] = {"BasicAuthenticationCredentials",
                                              "CustomAuthenticationCredentials"};
constexpr const char* kOAuthSecretMembers[] = {"OAuth2Credentials", "AuthorizationCodeProperties"};

Status CheckInput(const Json& input) {
  const std::string type = GetString(input, "ConnectionType");
  const Json props = resource::GetObject(input, "ConnectionProperties");
  if (type == "JDBC") {
    auto url = props.find("JDBC_CONNECTION_URL");
    if (url == props.end() || !url->is_string())
      return Status::InvalidInput(
          "A JDBC connection needs the connection property JDBC_CONNECTION_URL");
    if (!url->get_ref<const std::string&>().starts_with("jdbc:"))
      return Status::InvalidInput("JDBC_CONNECTION_URL must be a JDBC URL starting with 'jdbc:' "
                                  "(e.g. jdbc:postgresql://host:5432/database)");
  }
  const Json auth = resource::GetObject(input, "AuthenticationConfiguration");
  for (const char* member : kCredentialMembers)
    if (auth.contains(member))
      return Status::InvalidInput(
          std::string("AuthenticationConfiguration.") + member +
          " is not supported by OpenGlue (it keeps no Secrets Manager): put USERNAME and PASSWORD "
          "in ConnectionProperties, where the password is encrypted at rest");
  const Json oauth = resource::GetObject(auth, "OAuth2Properties");
  for (const char* member : kOAuthSecretMembers)
    if (oauth.contains(member))
      return Status::InvalidInput(std::string("AuthenticationConfiguration.OAuth2Properties.") + member +
                                  " is not supported by OpenGlue (it keeps no Secrets Manager)");
  return Status::OK();
}

// The Connection's AuthenticationConfiguration from the input's (the output shape has no
// credentials; CheckInput has refused them).
Json AuthenticationFromInput(const Json& auth) {
  Json out = Json::object();
  for (const char* member : {"AuthenticationType", "SecretArn", "KmsKeyArn"})
    if (auth.contains(member)) out[member] = auth[member];
  if (auth.contains("OAuth2Properties") && auth["OAuth2Properties"].is_object()) {
    Json oauth = Json::object();
    for (const char* member : {"OAuth2GrantType", "OAuth2ClientApplication", "TokenUrl", "TokenUrlParametersMap"})
      if (auth["OAuth2Properties"].contains(member)) oauth[member] = auth["OAuth2Properties"][member];
    out["OAuth2Properties"] = std::move(oauth);
  }
  return out;
}

// GetConnections' Filter: every given criterion must hold. MatchCriteria: each listed string
// is among the connection's MatchCriteria.
bool MatchesFilter(const Json& connection, const Json& filter) {
  if (filter.contains("ConnectionType") && connection.value("ConnectionType", "") != filter["ConnectionType"])
    return false;
  if (filter.contains("ConnectionSchemaVersion") &&
      connection.value("ConnectionSchemaVersion", 1) != filter["ConnectionSchemaVersion"])
    return false;
  if (filter.contains("MatchCriteria") && filter["MatchCriteria"].is_array()) {
    const Json criteria = connection.value("MatchCriteria", Json::array());
    for (const Json& wanted : filter["MatchCriteria"])
      if (std::find(criteria.begin(), criteria.end(), wanted) == criteria.end()) return false;
  }
  return true;
}

}  // namespace

bool IsSecretConnectionProperty(const std::string& key) {
  static const std::set<std::string> kSecrets = {
      "PASSWORD",
      "ENCRYPTED_PASSWORD",
      "KAFKA_CLIENT_KEYSTORE_PASSWORD",
      "KAFKA_CLIENT_KEY_PASSWORD",
      "ENCRYPTED_KAFKA_CLIENT_KEYSTORE_PASSWORD",
      "ENCRYPTED_KAFKA_CLIENT_KEY_PASSWORD",
      "KAFKA_SASL_PLAIN_PASSWORD",
      "ENCRYPTED_KAFKA_SASL_PLAIN_PASSWORD",
      "KAFKA_SASL_SCRAM_PASSWORD",
      "ENCRYPTED_KAFKA_SASL_SCRAM_PASSWORD",
  };
  return kSecrets.count(key) > 0;
}

Result<Json> Catalog::ConnectionFromInput(const Json& input, const std::string& catalog_id,
                                          double creation_time, double update_time) {
  OG_RETURN_NOT_OK(CheckInput(input));
  const std::string name = GetString(input, "Name");
  Json connection = Json::object();
  connection["Name"] = name;
  for (const char* member : {"Description", "ConnectionType", "PhysicalConnectionRequirements",
                             "SparkProperties", "AthenaProperties", "PythonProperties"})
    if (input.contains(member)) connection[member] = input[member];
  connection["MatchCriteria"] = input.contains("MatchCriteria") ? input["MatchCriteria"] : Json::array();
  if (input.contains("AuthenticationConfiguration"))
    connection["AuthenticationConfiguration"] = AuthenticationFromInput(input["AuthenticationConfiguration"]);
  Json properties = Json::object();
  Json sealed = Json::object();
  const Json input_properties = resource::GetObject(input, "ConnectionProperties");
  for (const auto& [key, value] : input_properties.items()) {
    if (!value.is_string()) return Status::InvalidInput("ConnectionProperties values must be strings");
    if (!IsSecretConnectionProperty(key)) {
      properties[key] = value;
      continue;
    }
    if (options_.connection_cipher == nullptr)
      return Status::InvalidInput("this server has no connection key, so it cannot store " + key);
    Random* random = options_.random != nullptr ? options_.random : &system_random_;
    OG_ASSIGN_OR_RETURN(std::string box,
                        options_.connection_cipher->Seal(value.get_ref<const std::string&>(),
                                                         SealContext(catalog_id, name, key), random));
    sealed[key] = std::move(box);
  }
  connection["ConnectionProperties"] = std::move(properties);
  if (!sealed.empty()) connection[kSealed] = std::move(sealed);
  // Version 2 is the schema with per-compute-environment properties.
  bool v2 = input.contains("SparkProperties") || input.contains("AthenaProperties") ||
            input.contains("PythonProperties");
  connection["ConnectionSchemaVersion"] = v2 ? 2 : 1;
  connection["CreationTime"] = creation_time;
  connection["LastUpdatedTime"] = update_time;
  // Nothing to provision or validate: a stored connection is ready to use.
  connection["Status"] = "READY";
  return connection;
}

Result<Json> Catalog::ConnectionToWire(Json stored, const std::string& catalog_id, bool hide) const {
  Json sealed = stored.contains(kSealed) ? stored[kSealed] : Json::object();
  stored.erase(kSealed);
  if (hide || sealed.empty()) return stored;
  const std::string name = stored.value("Name", "");
  if (!stored["ConnectionProperties"].is_object()) stored["ConnectionProperties"] = Json::object();
  for (const auto& [key, box] : sealed.items()) {
    Status failed;
    if (options_.connection_cipher == nullptr) {
      failed = Status(StatusCode::kEncryption, "this server has no connection key");
    } else if (!box.is_string()) {
      failed = Status(StatusCode::kEncryption, "a stored secret is corrupt");
    } else {
      Result<std::string> opened =
          options_.connection_cipher->Open(box.get_ref<const std::string&>(), SealContext(catalog_id, name, key));
      if (opened.ok()) {
        stored["ConnectionProperties"][key] = std::move(*opened);
        continue;
      }
      failed = opened.status();
    }
    // The operator needs to know (the client only learns that decryption failed); neither
    // message holds the secret.
    std::string message = "Cannot decrypt " + key + " of connection " + SanitizeUtf8(name) + ": " + failed.message();
    OG_LOG(kError, message);
    return Status(StatusCode::kEncryption, message);
  }
  return stored;
}

Result<Json> Catalog::CreateConnection(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  double now = clock_->NowSeconds();
  OG_ASSIGN_OR_RETURN(Json connection, ConnectionFromInput(request.at("ConnectionInput"), catalog_id, now, now));
  const std::string name = connection["Name"];
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  Status st = txn->Insert(kConnection, store::MakeKey({catalog_id, name}), DumpJson(connection));
  if (st.code() == StatusCode::kAlreadyExists)
    return Status::AlreadyExists("Connection " + name + " already exists.");
  OG_RETURN_NOT_OK(st);
  if (request.contains("Tags"))
    OG_RETURN_NOT_OK(AddTags(txn.get(), ConnectionArn(options_.region, catalog_id, name), request["Tags"]));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"CreateConnectionStatus", "READY"}};
}

Result<Json> Catalog::GetConnection(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string name = GetString(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kConnection, store::MakeKey({catalog_id, name})));
  if (!doc) return Status::EntityNotFound("Connection " + name + " not found.");
  OG_ASSIGN_OR_RETURN(Json stored, ParseDoc(*doc));
  OG_ASSIGN_OR_RETURN(Json connection,
                      ConnectionToWire(std::move(stored), catalog_id, resource::GetBool(request, "HidePassword", false)));
  return Json{{"Connection", std::move(connection)}};
}

Result<Json> Catalog::GetConnections(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  const Json filter = resource::GetObject(request, "Filter");
  bool hide = resource::GetBool(request, "HidePassword", false);
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  std::string prefix = store::PrefixOf({catalog_id});
  OG_ASSIGN_OR_RETURN(Page page, ScanPage(txn.get(), kConnection, prefix, request, PageSize(request, 100),
                                          [&](const store::Row& row) -> Result<bool> {
                                            if (filter.empty()) return true;
                                            OG_ASSIGN_OR_RETURN(Json doc, ParseDoc(row.doc));
                                            return MatchesFilter(doc, filter);
                                          }));
  Json list = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json stored, ParseDoc(row.doc));
    OG_ASSIGN_OR_RETURN(Json connection, ConnectionToWire(std::move(stored), catalog_id, hide));
    list.push_back(std::move(connection));
  }
  Json response{{"ConnectionList", std::move(list)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> Catalog::UpdateConnection(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string name = GetString(request, "Name");
  const Json& input = request.at("ConnectionInput");
  std::string new_name = GetString(input, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  std::string key = store::MakeKey({catalog_id, name});
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kConnection, key));
  if (!doc) return Status::EntityNotFound("Connection " + name + " not found.");
  OG_ASSIGN_OR_RETURN(Json old, ParseDoc(*doc));
  double now = clock_->NowSeconds();
  // The input replaces the whole definition (as Glue's UpdateConnection does): a property it
  // leaves out, the password included, is gone afterwards.
  OG_ASSIGN_OR_RETURN(Json connection,
                      ConnectionFromInput(input, catalog_id, old.value("CreationTime", now), now));
  if (new_name != name) {
    // A new ConnectionInput.Name renames the connection; its tags follow it.
    OG_RETURN_NOT_OK(txn->Delete(kConnection, key).status());
    Status st = txn->Insert(kConnection, store::MakeKey({catalog_id, new_name}), DumpJson(connection));
    if (st.code() == StatusCode::kAlreadyExists)
      return Status::AlreadyExists("Connection " + new_name + " already exists.");
    OG_RETURN_NOT_OK(st);
    OG_RETURN_NOT_OK(resource::MoveTags(txn.get(), ConnectionArn(options_.region, catalog_id, name),
                                        ConnectionArn(options_.region, catalog_id, new_name)));
  } else {
    OG_RETURN_NOT_OK(txn->Put(kConnection, key, DumpJson(connection)));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::DeleteConnection(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string name = GetString(request, "ConnectionName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(bool existed, txn->Delete(kConnection, store::MakeKey({catalog_id, name})));
  if (!existed) return Status::EntityNotFound("Connection " + name + " not found.");
  OG_RETURN_NOT_OK(resource::DeleteTags(txn.get(), ConnectionArn(options_.region, catalog_id, name)));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::BatchDeleteConnection(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  Json succeeded = Json::array();
  Json errors = Json::object();
  for (const Json& entry : request.at("ConnectionNameList")) {
    if (!entry.is_string()) continue;
    const std::string& name = entry.get_ref<const std::string&>();
    Result<bool> existed = txn->Delete(kConnection, store::MakeKey({catalog_id, name}));
    Status st = existed.status();
    if (existed.ok()) {
      st = *existed ? resource::DeleteTags(txn.get(), ConnectionArn(options_.region, catalog_id, name))
                    : Status::EntityNotFound("Connection " + name + " not found.");
    }
    // The batch rule (resource/batch.h): a failed item is reported under its name, only an
    // Internal failure fails the call.
    if (st.code() == StatusCode::kInternal) return st;
    if (st.ok()) succeeded.push_back(name);
    else errors[name] = ErrorDetail(st);
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"Succeeded", std::move(succeeded)}, {"Errors", std::move(errors)}};
}

Status Catalog::CheckConnectionKey(const ConnectionCipher* cipher) const {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  store::ScanOptions scan{"", "", -1, false};
  OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kConnection, scan));
  for (const auto& row : rows) {
    OG_ASSIGN_OR_RETURN(Json doc, ParseDoc(row.doc));
    if (!doc.contains(kSealed) || !doc[kSealed].is_object()) continue;
    for (const auto& [key, box] : doc[kSealed].items()) {
      std::string id = box.is_string() ? ConnectionCipher::KeyIdOf(box.get_ref<const std::string&>()) : "";
      if (cipher != nullptr && id == cipher->key_id()) continue;
      return Status::InvalidInput(
          "connection " + SanitizeUtf8(doc.value("Name", "")) + " holds a " + key +
          " encrypted with connection key " + (id.empty() ? "?" : id) +
          (cipher == nullptr ? std::string(", and no key was given")
                             : ", but the key file gives key " + cipher->key_id()) +
          ": start the server with the key file the passwords were encrypted with");
    }
  }
  return Status::OK();
}

}  // namespace openglue::catalog
