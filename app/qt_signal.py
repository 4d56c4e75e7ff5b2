"""A Qt signal as a protocol member, so a host protocol can be checked against its class.

A class declares `notice = Signal(str)`; read through an instance, that descriptor gives the
instance's `SignalInstance`. A protocol that declared `notice: SignalInstance` could never be
matched by such a class: the type checker compares the class attribute (a `Signal`) with the
member as declared, without calling `__get__`. So host protocols declare their signals as
`notice: Final[QtSignal]`: a `Signal` is one, reading it through the host gives a
`SignalInstance` to connect or emit, and `Final` says a host's user never replaces it.
"""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import SignalInstance


class QtSignal(Protocol):
    # `instance` is Any, not QObject: the checker passes the protocol itself as the instance,
    # and a protocol cannot derive from QObject.
    def __get__(self, instance: Any, owner: Any, /) -> SignalInstance: ...
