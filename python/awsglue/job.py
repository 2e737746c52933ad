"""The Job object of a Glue script: init() at the start, commit() at the end."""
from typing import Dict, Optional


class Job:
    """A job run as seen from its script.

    `init(name, args)` marks the start of the run and `commit()` its successful end. In AWS Glue,
    commit() is what advances job bookmarks; OpenGlue's bookmarks arrive in a later release, so
    for now commit() only records that the script reached its end.
    """

    def __init__(self, glue_context=None):
        self._context = glue_context
        self.name: Optional[str] = None
        self.args: Dict[str, str] = {}
        self.committed = False

    def init(self, job_name: str, args: Optional[Dict[str, str]] = None) -> None:
        self.name = job_name
        self.args = dict(args or {})

    def commit(self) -> None:
        if self.name is None:
            raise RuntimeError("Job.commit() called before Job.init()")
        self.committed = True
