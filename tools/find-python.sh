#!/usr/bin/env sh
# Print the path of a Python >= 3.12 on this machine, or explain what to install and fail.
# pyenv shims are often not on PATH in non-interactive shells, so look in its versions folder too.
for candidate in \
    "${BRANCHWISE_PYTHON:-}" \
    python3.12 python3.13 python3 \
    "$HOME"/.pyenv/versions/3.12*/bin/python3 \
    "$HOME"/.pyenv/versions/3.1[3-9]*/bin/python3 \
    /opt/homebrew/bin/python3.13 /opt/homebrew/bin/python3.12 \
    /usr/local/bin/python3.13 /usr/local/bin/python3.12 \
    /Library/Frameworks/Python.framework/Versions/3.1[2-9]/bin/python3; do
    [ -n "$candidate" ] || continue
    path=$(command -v "$candidate" 2>/dev/null) || continue
    if "$path" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
        echo "$path"
        exit 0
    fi
done
echo "Branchwise needs Python 3.12 or newer, and none was found." >&2
echo "Install one (python.org, 'brew install python@3.12', 'pyenv install 3.12', or your" >&2
echo "distribution's python3.12 package), or set BRANCHWISE_PYTHON to its path." >&2
exit 1
