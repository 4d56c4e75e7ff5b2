"""Images in prompts: vision models loaded through mlx-vlm, with every image keyed by what the
model sees so the branch cache stays exact.

`images` opens an image part (a path or bytes) safely; `processing` runs the model's own image
processor once per image and names the result by a digest of what the model sees; `prompt`
splices each image's tokens into the rendered chat and builds the cache key (image spans hold
ids derived from the digest); `features` keeps each image's encoder output by digest;
`families` says per model family how features are computed and merged; `language_view` is the
language model as mlx-lm calls a model, with positions passed explicitly; `loading` loads a
vision model folder.

May import: `mlx`, `mlx_lm`, `mlx_vlm` (models, processors, loaders: never its generation, server,
video or audio code), `PIL`, `numpy`, `inference.prompt` and `inference.errors`.
"""
