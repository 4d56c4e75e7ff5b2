"""Speech to text: Whisper model folders (`support`, no MLX: the library reads it to tell a
speech model from a chat model), mlx-whisper brought in without its PyTorch converter and its
word timestamps (`whisper`), a recording or a decoded file transcribed on the inference worker,
cancellable between 30-second windows (`transcription`), and a random-weight Whisper that proves
the path runs (`random_whisper`, for the frozen app's self-test and the tests).

mlx-whisper is installed without its declared dependencies (the Makefile): torch is only for its
checkpoint converter, and numba and scipy only for word timestamps, which Branchwise never asks
for, so `whisper` puts a stand-in for that one module in place before mlx-whisper is imported.

May import: `mlx`, `mlx_whisper` (its transcription, decoding, model and tokenizer modules, never
`torch_whisper`, `timing`, `cli` or `writers`), `numpy`, `inference.errors`, `inference.loading`
(the safetensors and config checks) and `inference.cpu` (whether MLX computes on the CPU).
"""
