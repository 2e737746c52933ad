"""An autouse fixture for the runtime's in-process test modules that make a Job: import it
(`from job_isolation import no_current_job  # noqa: F401`). Not a conftest.py: tests/ has the
one conftest module that its tests import by name, and pytest runs both folders at once."""
import pytest

from openglue_runtime import run_state


@pytest.fixture(autouse=True)
def no_current_job():
    """A Job whose init() ran in one test stays the process's running Job (openglue_runtime.run_state) (its bookmark state
    decides what sources read): each test starts and ends without one, as a job run's process
    does."""
    run_state.set_current_job(None)
    yield
    run_state.set_current_job(None)
