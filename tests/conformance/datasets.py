"""Input data for the corpus. The pages' own data (JSON lines, table cells, values) where they
show it; where an example reads the legislators or Medicare sample tables, whose records the pages
do not show, records with the documented schema (field order and types as the page's
printSchema lists them) carrying the values the page's output shows. Values that no output
shows (filler that only makes a frame long enough for "only showing top 20 rows") are marked."""

# --------------------------------------------------------------------------------------------
# legislators: persons_json, memberships_json, organizations_json

# select_fields example (family_name, given_name, in the page's show() order) and the spigot
# example (birth_date of the first 10).
PERSON_NAMES = [
    ("Collins", "Michael", "1944-10-15"), ("Huizenga", "Bill", "1969-01-31"),
    ("Clawson", "Curtis", "1959-09-28"), ("Solomon", "Gerald", "1930-08-14"),
    ("Rigell", "Edward", "1960-05-28"), ("Crapo", "Michael", "1951-05-20"),
    ("Hutto", "Earl", "1926-05-12"), ("Ertel", "Allen", "1937-11-07"),
    ("Minish", "Joseph", "1916-09-01"), ("Andrews", "Robert", "1957-08-04"),
    ("Walden", "Greg", "1957-01-10"), ("Kazen", "Abraham", "1919-01-17"),
    ("Turner", "Michael", "1949-11-25"), ("Kolbe", "James", "1942-06-28"),
    ("Lowenthal", "Alan", "1941-03-08"), ("Capuano", "Michael", "1952-01-09"),
    ("Schrader", "Kurt", "1951-10-19"), ("Nadler", "Jerrold", "1947-06-13"),
    ("Graves", "Tom", "1970-02-03"), ("McMillan", "John", "1932-04-25"),
    ("Filler", "Row", "1950-01-01"),  # filler: makes the show() say "only showing top 20 rows"
]


def person(i, family, given, birth):
    # Field order of the page's "Schema for the persons DynamicFrame".
    return {
        "family_name": family, "name": f"{given} {family}",
        "links": [{"note": "website", "url": f"https://example.org/{i}"}],
        "gender": "male", "image": f"https://example.org/{i}.jpg",
        "identifiers": [{"scheme": "bioguide", "identifier": f"B{i:06d}"}],
        "other_names": [{"lang": "en", "note": "multilingual", "name": given}],
        "sort_name": f"{family}, {given}", "images": [{"url": f"https://example.org/{i}.jpg"}],
        "given_name": given, "birth_date": birth, "id": f"person-{i}",
        "contact_details": [{"type": "twitter", "value": f"rep{i}"}],
        "death_date": "2000-01-01",
    }


PERSONS = [person(i, f, g, b) for i, (f, g, b) in enumerate(PERSON_NAMES, 1)]

MEMBERSHIPS = [  # field order of "Schema for the memberships DynamicFrame"
    {"area_id": f"area-{i}", "on_behalf_of_id": "party/democrat", "organization_id": f"org-{i % 3}",
     "role": "member", "person_id": f"person-{i}", "legislative_period_id": "term/114",
     "start_date": "2015-01-03", "end_date": "2017-01-03"}
    for i in range(1, 6)
]

ORGS = [  # field order of "Schema for the orgs DynamicFrame"
    {"identifiers": [{"scheme": "wikidata", "identifier": f"Q{i}"}],
     "other_names": [{"lang": "en", "note": "multilingual", "name": f"Org {i}"}],
     "id": f"org-{i}", "classification": "party", "name": f"Org {i}",
     "links": [{"note": "website", "url": f"https://example.org/org/{i}"}],
     "image": f"https://example.org/org/{i}.png", "seats": 100 + i, "type": "party"}
    for i in range(3)
]

# legislators_combined as the relationalize example's "Example dataset" schema lists it.
LEGISLATORS_COMBINED = [
    {"role": "member", "seats": 435, "org_name": "House",
     "links": [{"note": "website", "url": f"https://example.org/{i}"}],
     "type": "legislature", "sort_name": f"Name {i}", "area_id": f"area-{i}",
     "images": [{"url": f"https://example.org/{i}.jpg"}], "on_behalf_of_id": "party/democrat",
     "other_names": [{"note": "multilingual", "name": f"N{i}", "lang": "en"}],
     "contact_details": [{"type": "fax", "value": "202-225-0000"},
                         {"type": "phone", "value": "202-225-1111"}],
     "name": f"Name {i}", "birth_date": "1950-01-01", "organization_id": "house",
     "gender": "female", "classification": "legislature", "legislative_period_id": "term/114",
     "identifiers": [{"scheme": "bioguide", "identifier": f"B{i}"}],
     "image": f"https://example.org/{i}.png", "given_name": f"G{i}", "start_date": "2015-01-03",
     "family_name": f"F{i}", "id": f"person-{i}", "death_date": "2020-01-01",
     "end_date": "2017-01-03"}
    for i in range(1, 4)
]

# --------------------------------------------------------------------------------------------
# l_root_contact_details (the split_fields / split_rows examples' input, as the pages show it)

SPLIT_ROWS_INPUT = [
    (1, 0, "phone", "202-225-5265"), (1, 1, "twitter", "kathyhochul"),
    (2, 0, "phone", "202-225-3252"), (2, 1, "twitter", "repjackyrosen"),
    (3, 0, "fax", "202-225-1314"), (3, 1, "phone", "202-225-3772"),
    (3, 2, "twitter", "MikeRossUpdates"),
    (4, 0, "fax", "202-225-1314"), (4, 1, "phone", "202-225-3772"), (4, 2, "twitter", "MikeRossUpdates"),
    (5, 0, "fax", "202-225-1314"), (5, 1, "phone", "202-225-3772"), (5, 2, "twitter", "MikeRossUpdates"),
    (6, 0, "fax", "202-225-1314"), (6, 1, "phone", "202-225-3772"), (6, 2, "twitter", "MikeRossUpdates"),
    (7, 0, "fax", "202-225-1314"), (7, 1, "phone", "202-225-3772"), (7, 2, "twitter", "MikeRossUpdates"),
    (8, 0, "fax", "202-225-1314"),
    # filler (no output shows them): more rows with id <= 10, so low has more than 20
    (8, 1, "phone", "202-225-3772"), (9, 0, "fax", "202-225-9999"), (10, 0, "fax", "202-225-9999"),
] + [
    # the "high" rows the page's output shows
    (11, 0, "phone", "202-225-5476"), (11, 1, "twitter", "RepDavidYoung"),
    (12, 0, "phone", "202-225-4035"), (12, 1, "twitter", "RepStephMurphy"),
] + [
    (i, j, kind, value) for i in range(13, 21)
    for j, (kind, value) in enumerate((("fax", "202-226-0774"), ("phone", "202-225-6335")))
] + [
    (21, 0, "fax", "202-225-9999"),  # filler: more than 20 rows with id > 10
]

CONTACT_COLUMNS = ["id", "index", "contact_details.val.type", "contact_details.val.value"]


def contact_schema():
    from awsglue import gluetypes as gt
    return gt.StructType([gt.Field("id", gt.LongType()), gt.Field("index", gt.IntegerType()),
                          gt.Field("contact_details.val.type", gt.StringType()),
                          gt.Field("contact_details.val.value", gt.StringType())])


def contact_records(rows):
    return [dict(zip(CONTACT_COLUMNS, r)) for r in rows]


# mergeDynamicFrame example: the "low" and "high" frames of split_rows_collection as shown.
MERGE_LOW = [(i, j, kind, value) for i in range(1, 10)
             for j, (kind, value) in enumerate((("fax", "202-225-3307"), ("phone", "202-225-5731")))] + [
    (10, 0, "fax", "202-225-6328"), (10, 1, "phone", "202-225-4576"),
    (10, 2, "twitter", "filler"),  # filler: the page's low frame has more than 20 rows
]
MERGE_HIGH = [(i, j, kind, value) for i in range(11, 20)
              for j, (kind, value) in enumerate((("fax", "202-225-6328"), ("phone", "202-225-4576"),
                                                  ("twitter", "RepTrentFranks")))] + [
    (20, 0, "fax", "202-225-5604"), (20, 1, "phone", "202-225-6536"), (20, 2, "twitter", "USRepLong"),
]

# --------------------------------------------------------------------------------------------
# Medicare_Hospital_Provider.csv: its header, and rows with the values the unbox example shows.

MEDICARE_HEADER = ["DRG Definition", "Provider Id", "Provider Name", "Provider Street Address",
                   "Provider City", "Provider State", "Provider Zip Code",
                   "Hospital Referral Region Description", "Total Discharges",
                   "Average Covered Charges", "Average Total Payments", "Average Medicare Payments"]
MEDICARE_ROWS = [
    ["039 - EXTRACRANIAL PROCEDURES W/O CC/MCC", "10001", "SOUTHEAST ALABAMA MEDICAL CENTER",
     "1108 ROSS CLARK CIRCLE", "DOTHAN", "AL", "36301", "AL - Dothan", "91", "$32963.07",
     "$5777.24", "$4763.73"],
    ["039 - EXTRACRANIAL PROCEDURES W/O CC/MCC", "10005", "MARSHALL MEDICAL CENTER SOUTH",
     "2505 U S HIGHWAY 431 NORTH", "BOAZ", "AL", "35957", "AL - Birmingham", "14", "$15131.85",
     "$5787.57", "$4976.71"],
    ["039 - EXTRACRANIAL PROCEDURES W/O CC/MCC", "10006", "ELIZA COFFEE MEMORIAL HOSPITAL",
     "205 MARENGO STREET", "FLORENCE", "AL", "35631", "AL - Birmingham", "24", "$37560.37",
     "$5434.95", "$4453.79"],
]


def medicare_csv():
    import csv
    import io
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(MEDICARE_HEADER)
    w.writerows(MEDICARE_ROWS)
    return buf.getvalue()


def merge_address(rec):
    """The page's MergeAddress function (map example), as written there."""
    rec["Address"] = {}
    rec["Address"]["Street"] = rec["Provider Street Address"]
    rec["Address"]["City"] = rec["Provider City"]
    rec["Address"]["State"] = rec["Provider State"]
    rec["Address"]["Zip.Code"] = rec["Provider Zip Code"]
    rec["Address"]["Array"] = [rec["Provider Street Address"], rec["Provider City"],
                               rec["Provider State"], rec["Provider Zip Code"]]
    del rec["Provider Street Address"]
    del rec["Provider City"]
    del rec["Provider State"]
    del rec["Provider Zip Code"]
    return rec


def mapped_medicare_record(row):
    """A record of the unnest example's mapped_medicare (its schema's field order)."""
    d = dict(zip(MEDICARE_HEADER, row))
    return {
        "Average Total Payments": d["Average Total Payments"],
        "Average Covered Charges": d["Average Covered Charges"],
        "DRG Definition": d["DRG Definition"],
        "Average Medicare Payments": d["Average Medicare Payments"],
        "Hospital Referral Region Description": d["Hospital Referral Region Description"],
        "Address": {"Zip.Code": d["Provider Zip Code"], "City": d["Provider City"],
                    "Array": [d["Provider Street Address"], d["Provider City"],
                              d["Provider State"], d["Provider Zip Code"]],
                    "State": d["Provider State"], "Street": d["Provider Street Address"]},
        "Provider Id": d["Provider Id"], "Total Discharges": d["Total Discharges"],
        "Provider Name": d["Provider Name"],
    }

# --------------------------------------------------------------------------------------------
# Pages' literal inputs

FRIENDS_JSON = [  # drop_fields example dataset (EXAMPLE-FRIENDS-DATA)
    '{"name": "Sally", "age": 23, "location": {"state": "WY", "county": "Fremont"}, "friends": []}',
    '{"name": "Varun", "age": 34, "location": {"state": "NE", "county": "Douglas"}, "friends": [{"name": "Arjun", "age": 3}]}',
    '{"name": "George", "age": 52, "location": {"state": "NY"}, "friends": [{"name": "Fred"}, {"name": "Amy", "age": 15}]}',
    '{"name": "Haruki", "age": 21, "location": {"state": "AK", "county": "Denali"}}',
    '{"name": "Sheila", "age": 63, "friends": [{"name": "Nancy", "age": 22}]}',
]

ERROR_DATA_JSON = [  # errorsAsDynamicFrame example dataset; the second record is malformed
    '{"id": 1, "name": "george", "surname": "washington", "height": 178}',
    '{"id": 2, "name": "benjamin", "surname": "franklin",',
    '{"id": 3, "name": "alexander", "surname": "hamilton", "height": 171}',
    '{"id": 4, "name": "john", "surname": "jay", "height": 190}',
]

# Unbox class example: warehouse_inventory_list (the JSON strings as the page's code builds them)
WAREHOUSE = [
    ["TX_WAREHOUSE", '{ "strawberry":"220", "pineapple":"560", "mango":"350", "pears":null}'],
    ["CA_WAREHOUSE", '{ "strawberry":"34", "pineapple":"123", "mango":"42", "pears":null} '],
    ["CO_WAREHOUSE", '{ "strawberry":"340", "pineapple":"180", "mango":"2", "pears":null}'],
]

# Relationalize / SelectFromCollection / RenameField / Join class examples: dyf_orders (dyf_json),
# rebuilt from the root and root_customers tables the SelectFromCollection page shows.
CUSTOMER_ORDERS = [
    {"customers": [{"address": "108 Park Street, TX", "id": 623},
                   {"address": "763 Marsh Ln, TX", "id": 231}], "zip": 75091},
    {"customers": [{"address": "66 P Street, NY", "id": 343}], "zip": 75023},
    {"customers": [{"address": "708 Fed Ln, CA", "id": 932},
                   {"address": "807 Deccan Dr, CA", "id": 102}], "zip": 90093},
]


def _pickle_by_value():
    """map() on the Spark engine ships merge_address to Python workers, which cannot import this
    module (tests/conformance is not on their path): send its functions by value."""
    try:
        import sys
        from pyspark import cloudpickle
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
    except Exception:  # pyspark missing or an older cloudpickle: Spark cases skip or fail loudly
        pass


_pickle_by_value()
