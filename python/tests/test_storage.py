from openglue_runtime.storage import storage_options


def test_embedded_root_wins():
    env = {"OPENGLUE_S3_ROOT": "/data/s3", "AWS_ENDPOINT_URL_S3": "http://x"}
    assert storage_options(env) == {"s3_root": "/data/s3"}


def test_endpoint_with_credentials_and_region():
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ENDPOINT_URL_S3": "http://s3:1",
           "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_DEFAULT_REGION": "eu-west-1",
           "AWS_SESSION_TOKEN": "t"}
    assert storage_options(env) == {"endpoint": "http://s3:1", "access_key": "k",
                                    "secret_key": "s", "region": "eu-west-1",
                                    "session_token": "t"}
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_REGION": "us-west-2"}
    assert storage_options(env) == {"endpoint": "http://127.0.0.1:9", "access_key": "",
                                    "secret_key": "", "region": "us-west-2"}


def test_nothing_configured_means_local_paths_only():
    assert storage_options({}) == {}
