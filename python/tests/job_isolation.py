"""An autouse fixture for the runtime's in-process test modules that make a Job: import it
(`from job_isolation import no_current_job  # noqa: F401`). Not a conftest.py: tests/ has the
one conftest module that its tests import by name, and pytest runs both folders at once."""
import pytest

import awsglue.job


@pytest.fixture(autouse=True)
def no_current_job():
    """A Job whose init() ran in one test stays awsglue.job's current job (its bookmark state
    decides what sources read): each test starts and ends without one, as a job run's process
    does."""
    awsglue.job._current = None
    yield
    awsglue.job._current = None
