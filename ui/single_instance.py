"""One running Branchwise per data folder.

The first launch on a folder takes a lock file there (`QLockFile`; a lock left by a process that
no longer runs, e.g. one that was killed, is taken over) and listens on a local socket whose name
derives from the folder's path. A later launch on the same folder finds the lock held, sends its
command line over that socket and exits; the running one brings its window to the front. Two
processes writing one database would each overwrite the other's unsaved state, and each would
mark the other's streaming replies as interrupted at start-up.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import logging
import time
from pathlib import Path

from PySide6.QtCore import QLockFile, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from PySide6.QtWidgets import QWidget

_log = logging.getLogger(__name__)

_ACK = b"ok\n"
# A command line is a few hundred bytes; anything far longer is not a launch of ours.
_MAX_MESSAGE_BYTES = 64 * 1024


class LockError(OSError):
    """The lock file cannot be created (e.g. a read-only data folder)."""


def server_name(data_dir: Path) -> str:
    """The local socket's name for this folder and this user (two people may share /tmp)."""
    key = f"{getpass.getuser()}:{data_dir.resolve()}"
    return "branchwise-" + hashlib.sha256(key.encode()).hexdigest()[:24]


class SingleInstance(QObject):
    """Create on the GUI thread. `claim` first; if it fails, `hand_over` to the running one."""

    # The command line of a later launch on this folder (a list of str): show the window.
    activationRequested = Signal(object)

    def __init__(self, lock_file: Path, name: str) -> None:
        super().__init__()
        self._lock_path = lock_file
        self._lock = QLockFile(str(lock_file))
        # The lock lasts as long as the app runs: only a dead owner makes it stale, never its age.
        self._lock.setStaleLockTime(0)
        self._name = name
        self._server: QLocalServer | None = None

    def claim(self) -> bool:
        """Take the folder's lock and start listening; False if a running instance holds it."""
        if not self._lock.tryLock(0):
            if self._lock.error() == QLockFile.LockError.LockFailedError:
                return False
            raise LockError(
                f"Branchwise cannot create the lock file {self._lock_path}; it needs to write "
                "in its data folder."
            )
        # A killed instance leaves its socket file behind; holding the lock makes it ours.
        QLocalServer.removeServer(self._name)
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        server.newConnection.connect(lambda: self._accept(server))
        if not server.listen(self._name):
            _log.warning(
                "Later launches cannot reach this one (%s): %s", self._name, server.errorString()
            )
        self._server = server
        return True

    def release(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        self._lock.unlock()

    def hand_over(self, argv: list[str], timeout_s: float = 5.0) -> bool:
        """Send `argv` to the instance holding the lock; True once it has confirmed."""
        deadline = time.monotonic() + timeout_s

        def left_ms() -> int:
            return max(1, int((deadline - time.monotonic()) * 1000))

        while time.monotonic() < deadline:
            socket = QLocalSocket()
            socket.connectToServer(self._name)
            if socket.waitForConnected(min(500, left_ms())):
                socket.write(json.dumps(argv).encode() + b"\n")
                socket.waitForBytesWritten(left_ms())
                # A running app that is still starting answers once its event loop runs.
                while not socket.canReadLine() and socket.waitForReadyRead(left_ms()):
                    pass
                return bytes(socket.readLine().data()) == _ACK
            # The lock's owner may have taken it a moment ago and not be listening yet.
            time.sleep(0.1)
        return False

    def _accept(self, server: QLocalServer) -> None:
        while (socket := server.nextPendingConnection()) is not None:
            socket.disconnected.connect(socket.deleteLater)
            socket.readyRead.connect(lambda s=socket: self._read(s))
            self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        if socket.bytesAvailable() > _MAX_MESSAGE_BYTES:
            _log.warning("Ignored an oversized message on %s", self._name)
            socket.abort()
            return
        if not socket.canReadLine():
            return
        try:
            argv = json.loads(bytes(socket.readLine().data()))
        except ValueError:
            argv = None
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
            _log.warning("Ignored a malformed message on %s", self._name)
            socket.abort()
            return
        socket.write(_ACK)
        socket.flush()
        socket.disconnectFromServer()
        _log.debug("Another launch on this data folder handed over: %s", argv)
        self.activationRequested.emit(argv)


def bring_to_front(window: QWidget) -> None:
    """Show `window` above the others and give it the keyboard, restoring it if minimized."""
    if window.isMinimized():
        window.showNormal()
    window.show()
    window.raise_()
    window.activateWindow()
