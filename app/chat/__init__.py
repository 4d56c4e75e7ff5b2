"""The chat controller and what it composes: a person's intents (send, edit, regenerate, switch
branch, delete) turned into store changes and worker requests; attachments; think settings; the
branch map's outline.

May import every other `app` subpackage and QtCore; never `ui`, never MLX.
"""
