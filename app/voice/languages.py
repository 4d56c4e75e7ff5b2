"""The languages dictation offers by name (Whisper knows 99; these are the ones it transcribes
best, by OpenAI's published error rates); "" lets Whisper detect the language."""

from __future__ import annotations

LANGUAGES = {
    "": "Detect automatically",
    "en": "English",
    "de": "German",
    "es": "Spanish",
    "fr": "French",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "sv": "Swedish",
    "da": "Danish",
    "no": "Norwegian",
    "fi": "Finnish",
    "pl": "Polish",
    "cs": "Czech",
    "uk": "Ukrainian",
    "ru": "Russian",
    "tr": "Turkish",
    "el": "Greek",
    "he": "Hebrew",
    "ar": "Arabic",
    "hi": "Hindi",
    "id": "Indonesian",
    "vi": "Vietnamese",
    "th": "Thai",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
}
