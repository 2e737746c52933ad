"""Synthetic input for the aws-samples/aws-glue-samples scripts (tests/conformance/test_samples.py):
small tables of the shapes the scripts read, as the samples' READMEs describe them (the
us-legislators JSON tables, the Medicare CSV with its erroneous rows at the end), made up here:
no value comes from AWS's data sets. Each table comes with the catalog columns a crawler gives
it (`catalog_table()`), so the scripts' `from_catalog` reads go through the server's catalog.

The expected outputs of the tests are computed from these rows with plain Python, in the tests."""
import csv
import io
import json

# --------------------------------------------------------------------------------------------
# legislators: persons_json, memberships_json, organizations_json (join_and_relationalize.py)

HOUSE = "d56acebe-8fdc-47bd-8b53-a9e1b4cd7d4b"
SENATE = "8fa6c3d2-71dc-4786-8cbe-a7cb2cba8a28"


def _person(i, given, family, birth, contacts, death=None, links=1, names=("en",)):
    rec = {
        "family_name": family, "name": f"{given} {family}",
        "links": [{"note": "website", "url": f"https://example.org/people/{i}/{n}"}
                  for n in range(links)],
        "gender": "female" if i % 2 else "male", "image": f"https://example.org/people/{i}.jpg",
        "identifiers": [{"scheme": "bioguide", "identifier": f"X{i:06d}"},
                        {"scheme": "govtrack", "identifier": str(400000 + i)}][:1 + i % 2],
        "other_names": [{"note": "multilingual", "name": f"{given} {family}", "lang": lang}
                        for lang in names],
        "sort_name": f"{family}, {given}", "images": [{"url": f"https://example.org/people/{i}.jpg"}],
        "given_name": given, "birth_date": birth, "id": f"person-{i}",
        "contact_details": [{"type": t, "value": v} for t, v in contacts],
    }
    if death:
        rec["death_date"] = death
    return rec


PERSONS = [
    _person(1, "Ada", "Quill", "1941-02-03", [("phone", "202-555-0101")], links=2),
    _person(2, "Bram", "Oster", "1955-07-19", [("fax", "202-555-0201"), ("phone", "202-555-0202"),
                                               ("twitter", "RepOster")], names=("en", "nl")),
    _person(3, "Cleo", "Marsh", "1960-11-30", [("phone", "202-555-0301"), ("twitter", "SenMarsh")]),
    _person(4, "Dov", "Lind", "1932-04-12", [("fax", "202-555-0401")], death="2011-09-01"),
    _person(5, "Esme", "Kerr", "1970-01-25", [("phone", "202-555-0501")]),
    _person(6, "Finn", "Jarvis", "1948-08-08", [("phone", "202-555-0601")]),  # no membership
]

MEMBERSHIPS = [
    {"area_id": "ocd-division/country:us/state:ak", "on_behalf_of_id": "party/democrat",
     "organization_id": HOUSE, "role": "representative", "person_id": "person-1",
     "legislative_period_id": "term/110", "start_date": "2007-01-04", "end_date": "2009-01-03"},
    {"area_id": "ocd-division/country:us/state:nv", "on_behalf_of_id": "party/republican",
     "organization_id": HOUSE, "role": "representative", "person_id": "person-2",
     "legislative_period_id": "term/111", "start_date": "2009-01-06", "end_date": "2011-01-03"},
    {"area_id": "ocd-division/country:us/state:nv", "on_behalf_of_id": "party/republican",
     "organization_id": SENATE, "role": "senator", "person_id": "person-2",
     "legislative_period_id": "term/113", "start_date": "2013-01-03", "end_date": "2015-01-03"},
    {"area_id": "ocd-division/country:us/state:wv", "on_behalf_of_id": "party/republican",
     "organization_id": SENATE, "role": "senator", "person_id": "person-3",
     "legislative_period_id": "term/114", "start_date": "2015-01-06", "end_date": "2017-01-03"},
    {"area_id": "ocd-division/country:us/state:ar", "on_behalf_of_id": "party/democrat",
     "organization_id": HOUSE, "role": "representative", "person_id": "person-4",
     "legislative_period_id": "term/105", "start_date": "1997-01-07", "end_date": "1999-01-03"},
    # An organization that is not in organizations_json, and a person not in persons_json:
    # the inner joins drop both.
    {"area_id": "ocd-division/country:us/state:vt", "on_behalf_of_id": "party/independent",
     "organization_id": "unknown-org", "role": "representative", "person_id": "person-5",
     "legislative_period_id": "term/112", "start_date": "2011-01-05", "end_date": "2013-01-03"},
    {"area_id": "ocd-division/country:us/state:vt", "on_behalf_of_id": "party/independent",
     "organization_id": HOUSE, "role": "representative", "person_id": "person-99",
     "legislative_period_id": "term/112", "start_date": "2011-01-05", "end_date": "2013-01-03"},
]

# As the sample's README shows organizations_json: parties with links and an image, the two
# chambers (the only organizations memberships name) without them, with seats and a type.
ORGANIZATIONS = [
    {"classification": "party", "links": [{"note": "website", "url": "https://example.org/dem"}],
     "image": "https://example.org/dem.png",
     "identifiers": [{"scheme": "wikidata", "identifier": "Q1"}],
     "other_names": [{"lang": "en", "note": "multilingual", "name": "Democrats"}],
     "id": "party/democrat", "name": "Democrat"},
    {"classification": "party", "links": [{"note": "website", "url": "https://example.org/rep"}],
     "identifiers": [{"scheme": "wikidata", "identifier": "Q2"}],
     "id": "party/republican", "name": "Republican"},
    {"classification": "party", "id": "party/independent", "name": "Independent"},
    {"classification": "legislature", "identifiers": [{"scheme": "wikidata", "identifier": "Q3"}],
     "other_names": [{"lang": "fr", "note": "multilingual", "name": "Chambre"}],
     "id": HOUSE, "name": "House of Representatives", "seats": 435, "type": "lower house"},
    {"classification": "legislature", "id": SENATE, "name": "Senate", "seats": 100,
     "type": "upper house"},
]

_LINKS = "array<struct<note:string,url:string>>"
_IDS = "array<struct<scheme:string,identifier:string>>"
# Column order and struct field order as the sample's README prints the three tables' schemas.
PERSONS_COLUMNS = [
    ("family_name", "string"), ("name", "string"), ("links", _LINKS), ("gender", "string"),
    ("image", "string"), ("identifiers", _IDS),
    ("other_names", "array<struct<note:string,name:string,lang:string>>"), ("sort_name", "string"),
    ("images", "array<struct<url:string>>"), ("given_name", "string"), ("birth_date", "string"),
    ("id", "string"), ("contact_details", "array<struct<type:string,value:string>>"),
    ("death_date", "string")]
MEMBERSHIPS_COLUMNS = [(n, "string") for n in (
    "area_id", "on_behalf_of_id", "organization_id", "role", "person_id", "legislative_period_id",
    "start_date", "end_date")]
ORGANIZATIONS_COLUMNS = [
    ("classification", "string"), ("links", _LINKS), ("image", "string"), ("identifiers", _IDS),
    ("other_names", "array<struct<lang:string,note:string,name:string>>"), ("id", "string"),
    ("name", "string"), ("seats", "int"),
    ("type", "string")]


def json_lines(records):
    return "".join(json.dumps(r) + "\n" for r in records)


# --------------------------------------------------------------------------------------------
# payments.medicare (data_cleaning_and_lambda.py, resolve_choice.py): the Medicare provider
# CSV's columns (lower case, as the crawler names them) and made-up rows; the last two have a
# provider id that is not a number, as the README says the sample file's last records do.

MEDICARE_COLUMNS = [
    ("drg definition", "string"), ("provider id", "bigint"), ("provider name", "string"),
    ("provider street address", "string"), ("provider city", "string"),
    ("provider state", "string"), ("provider zip code", "bigint"),
    ("hospital referral region description", "string"), ("total discharges", "bigint"),
    ("average covered charges", "string"), ("average total payments", "string"),
    ("average medicare payments", "string")]

MEDICARE_ROWS = [
    ["101 - SEIZURES W/O MCC", "20017", "NORTH RIDGE CLINIC", "12 ELM ST", "JUNEAU", "AK",
     "99801", "AK - Anchorage", "44", "$21055.10", "$6012.45", "$5010.20"],
    ["101 - SEIZURES W/O MCC", "20024", "BAYVIEW GENERAL", "400 HARBOR RD", "SITKA", "AK",
     "99835", "AK - Anchorage", "17", "$18900.00", "$5550.75", "$4425.50"],
    ["202 - BRONCHITIS & ASTHMA", "30102", "DESERT SPRINGS HOSPITAL", "9 CACTUS WAY", "TUCSON",
     "AZ", "85701", "AZ - Tucson", "31", "$30110.99", "$7001.01", "$6100.00"],
    ["202 - BRONCHITIS & ASTHMA", "30155", "MESA VALLEY MEDICAL", "77 RIDGE AVE", "MESA", "AZ",
     "85201", "AZ - Mesa", "58", "$27420.35", "$6800.40", "$5900.60"],
    ["305 - HYPERTENSION W/O MCC", "40021", "RIVERBEND COMMUNITY", "5 MILL LN", "LITTLE ROCK",
     "AR", "72201", "AR - Little Rock", "12", "$9870.25", "$4400.10", "$3605.05"],
    ["305 - HYPERTENSION W/O MCC", "40088", "OZARK REGIONAL", "300 PINE ST", "FAYETTEVILLE",
     "AR", "72701", "AR - Springdale", "36", "$11250.80", "$4890.90", "$4012.30"],
    # erroneous records: the provider id column holds text
    ["948 - SIGNS & SYMPTOMS W/O MCC", "LAKESHORE", "INC", "1 SHORE DR", "MADISON", "WI",
     "53703", "WI - Madison", "33", "$10400.00", "$4700.00", "$3800.00"],
    ["948 - SIGNS & SYMPTOMS W/O MCC", "ST CLARE", "INC- ST CLARE", "20 HILL ST", "MILWAUKEE",
     "WI", "53202", "WI - Milwaukee", "29", "$10900.50", "$5100.25", "$4300.75"],
]


def medicare_csv():
    """The CSV text with its header line (the table skips it: skip.header.line.count)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([name for name, _ in MEDICARE_COLUMNS])
    w.writerows(MEDICARE_ROWS)
    return buf.getvalue()


def medicare_records():
    """The rows as {column: text}."""
    return [dict(zip([n for n, _ in MEDICARE_COLUMNS], row)) for row in MEDICARE_ROWS]


# --------------------------------------------------------------------------------------------
# Catalog tables

def catalog_table(name, location, columns, fmt):
    """A TableInput as a crawler makes it for a JSON folder or a CSV folder with a header."""
    if fmt == "json":
        serde = {"SerializationLibrary": "org.openx.data.jsonserde.JsonSerDe",
                 "Parameters": {"paths": ",".join(n for n, _ in columns)}}
        params = {"classification": "json"}
    else:
        serde = {"SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                 "Parameters": {"field.delim": ","}}
        params = {"classification": "csv", "skip.header.line.count": "1", "delimiter": ","}
    return {
        "Name": name, "TableType": "EXTERNAL_TABLE", "Parameters": params,
        "StorageDescriptor": {
            "Location": location,
            "Columns": [{"Name": n, "Type": t} for n, t in columns],
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "SerdeInfo": serde,
        },
    }
