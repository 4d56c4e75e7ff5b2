"""The chat pane: the scrolling list of messages, one message's widget (text, actions,
`‹ 2/3 ›`, stats, thinking, attachments), the inline editor, the notice banner, the header, the
branch map, and Regenerate xN / compare views.

May import: `PySide6`, `ui.text`, `ui.widgets`, `ui.forms` and `app` values.

Never `ui.window`.
"""
