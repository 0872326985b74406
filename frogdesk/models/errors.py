"""The models package's errors: ModelError for every problem the user can act on, and the
downloads' own kinds of it."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class ModelError(FrogDeskError):
    """A model problem with a clear message and, where there is one, the way forward."""


class DownloadError(ModelError):
    """The download stopped; what was received is kept in the .partial file to resume from."""


class ChecksumError(DownloadError):
    """The received bytes do not match the Hub's sha256; they were deleted."""


class DownloadCancelled(DownloadError):
    """The user cancelled; the partial file is kept for a later resume."""


class DownloadStalled(DownloadError):
    """Too slow or past the deadline; the partial file is kept for a later resume."""


class HubRequestError(ModelError):
    """A Hub request failed; `lasting` says whether trying again soon can help."""

    def __init__(self, message: str, *, lasting: bool, status: int = 0, code: str = "") -> None:
        super().__init__(message)
        self.lasting = lasting
        self.status = status
        self.code = code
        """The Hub's X-Error-Code header (RepoNotFound, GatedRepo, RevisionNotFound)."""


class HubCancelled(ModelError):
    """The user cancelled while waiting to try the Hub again."""


class UnsafeName(ModelError):
    """A name from outside would not stay a plain relative path inside its folder."""
