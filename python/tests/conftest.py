"""Shared fixtures of the runtime's in-process tests."""
import pytest

import awsglue.job


@pytest.fixture(autouse=True)
def _no_current_job_left_behind():
    """A Job whose init() ran in one test stays awsglue.job's current job (its bookmark state
    decides what sources read): each test starts and ends without one, as a job run's process
    does."""
    awsglue.job._current = None
    yield
    awsglue.job._current = None
