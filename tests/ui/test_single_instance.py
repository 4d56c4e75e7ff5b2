"""The data folder's claim in one process: the socket name a folder gets, and a running app that
ignores junk on its socket yet still hears a real later launch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.paths import ROOT
from ui.single_instance import SingleInstance, server_name


def test_each_folder_gets_its_own_name_however_it_is_spelled(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    assert server_name(tmp_path / "a") != server_name(tmp_path / "b")
    assert server_name(tmp_path / "b" / ".." / "a") == server_name(tmp_path / "a")
    assert server_name(tmp_path / "link") == server_name(tmp_path / "a")


# Another program writing to the socket, then a real second launch (in another process: a
# blocking socket call here would hold the GIL the running app's slots need).
_LATER_LAUNCHES = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from PySide6.QtNetwork import QLocalSocket
    from ui.single_instance import SingleInstance

    lock, name, folder = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    junk = QLocalSocket()
    junk.connectToServer(name)
    outcome = {"junk connected": junk.waitForConnected(2000)}
    junk.write(b'{"not": "a command line"}\\n')
    junk.waitForBytesWritten(2000)
    outcome["junk dropped"] = junk.waitForDisconnected(5000)
    second = SingleInstance(lock, name)
    outcome["second claimed"] = second.claim()
    outcome["handed"] = second.hand_over(["--data-dir", folder])
    print(json.dumps(outcome))
    """
)


def test_junk_on_the_socket_is_ignored_and_a_real_hand_over_still_arrives(
    qtbot, tmp_path: Path
) -> None:
    lock, name = tmp_path / "branchwise.lock", server_name(tmp_path)
    running = SingleInstance(lock, name)
    assert running.claim()
    received: list[list[str]] = []
    running.activationRequested.connect(received.append)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        [sys.executable, "-c", _LATER_LAUNCHES, str(lock), name, str(tmp_path)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    ) as later:
        qtbot.waitUntil(lambda: later.poll() is not None, timeout=20000)
        outcome = json.loads(later.stdout.read())  # type: ignore[union-attr]
    running.release()
    assert outcome == {
        "junk connected": True,
        "junk dropped": True,
        "second claimed": False,
        "handed": True,
    }
    assert received == [["--data-dir", str(tmp_path)]]
    assert not lock.exists()
