"""Presets: a named bundle of a chat's settings (system prompt, sampling, context and overflow,
model, draft, thinking, tools) that a chat starts from or takes later (`bundle`: what a preset
holds, applying it, how far a chat has drifted from it), LM Studio's preset files read into one
(`lmstudio`), and the actions on them the controller composes (`actions`). The store keeps them
(`app.store.presets`).

Part of `app.chat`, under its import rules.
"""
