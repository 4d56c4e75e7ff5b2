"""Text embeddings for knowledge folders: a text becomes a unit vector, so a chunk's similarity to
a query is a dot product.

Two kinds. `static_model` is the built-in one: a table of token vectors averaged over a text's
tokens (WordLlama's `l2_supercat_256`, read from the data files of the `wordllama` package with
`safetensors`, `tokenizers` and numpy, never importing `wordllama`); it needs no MLX, so the app
may import it at any time and run it on any thread. `folder` reads a model folder in the
sentence-transformers layout (config, `modules.json`, the pooling and dense layers' configs)
without MLX, so the library can tell an embedding model from a chat model. `encoder` loads such a
folder on MLX and embeds on the inference worker: mlx-lm's own model classes for decoders
(Qwen3-Embedding: causal, last-token pooling; EmbeddingGemma: `gemma3_text` run both ways,
mean pooling, then dense layers), Branchwise's own BERT encoder (`bert`, mlx-lm has none) for
bge-style models (CLS pooling); `pooling` and `attention` hold the pooling and the masks. The
GPL-3.0 `mlx-embeddings` package is neither used nor copied.

Every embedder has `model_id` (which vectors may be compared: the model and its weights),
`dimensions`, `embed_documents(texts)` (float32 rows of length 1; a text with no tokens gives
zeros) and `embed_query(text)` (one such row, after the model's query prompt): the app's
`Embedder` protocol (`app.knowledge.embedder`), which this layer does not import.

May import: `numpy`, `safetensors`, `tokenizers`, `mlx`, `mlx_lm` (the decoders' model classes
and its tokenizer loader), `inference.errors`, `inference.models` (the architecture registry),
`inference.cpu` (float32 weights on the CPU) and `inference.loading` (model files, their
identity, and the checks made before native code reads them).
"""
