"""What a conversation's user sends in a turn: text in the conversation's language, speech with its
transcript (as a speech recogniser heard a simulated caller), an image or a PDF beside the text, a
welcome event from the client platform, or variables the client sets."""

from __future__ import annotations

import random
import re
from typing import Any

from pipelines.ces.simulator.corpus.agent_content import b64
from pipelines.ces.simulator.corpus.catalog import VALUES, AppCatalog
from pipelines.ces.simulator.corpus.protojson import between

INPUT_TYPES = (
    "INPUT_TYPE_TEXT",
    "INPUT_TYPE_EVENT",
    "INPUT_TYPE_AUDIO",
    "INPUT_TYPE_IMAGE",
    "INPUT_TYPE_BLOB",
    "INPUT_TYPE_TOOL_RESPONSE",
    "INPUT_TYPE_VARIABLES",
)
LANGUAGES = (
    ("en-US", 55),
    ("en-GB", 10),
    ("de-DE", 10),
    ("fr-FR", 7),
    ("es-ES", 7),
    ("ja-JP", 6),
    ("pt-BR", 5),
)
"""Each language with its weight."""
_GREETINGS = {
    "de-DE": "Hallo, ich brauche Hilfe.",
    "fr-FR": "Bonjour, j'ai besoin d'aide.",
    "es-ES": "Hola, necesito ayuda.",
    "ja-JP": "こんにちは、助けてください。",
    "pt-BR": "Olá, preciso de ajuda.",
}
_IMAGE_MAGIC = (
    ("image/png", b"\x89PNG\r\n\x1a\n"),
    ("image/jpeg", b"\xff\xd8\xff\xe0"),
    ("image/webp", b"RIFF"),
)


def _asr_variant(text: str, rng: random.Random) -> str:
    """What a speech recogniser might make of `text`: lower case, punctuation lost, a word dropped."""
    words = re.sub(r"[^\w\s'-]", "", text).lower().split()
    if len(words) > 3 and rng.random() < 0.5:
        del words[rng.randrange(len(words))]
    return " ".join(words)


def user_input(
    rng: random.Random,
    catalog: AppCatalog,
    turn_index: int,
    language: str,
    modality: str,
    simulated_caller: bool,
) -> tuple[list[dict[str, Any]], str | None, list[str]]:
    """Chunks of the user's message, the caller's intended text (a simulated caller's), its input types."""
    audio = modality == "audio"
    chunks: list[dict[str, Any]] = []
    kinds: list[str] = []
    intended = None
    text = rng.choice(catalog.user_texts)
    if turn_index == 0 and language in _GREETINGS and rng.random() < 0.6:
        text = _GREETINGS[language]
    if turn_index == 0 and rng.random() < 0.15:
        chunks.append(
            {
                "updatedVariables": {
                    "customer_id": VALUES["customer_id"](rng, catalog),
                    "channel": "app" if rng.random() < 0.5 else "web",
                }
            }
        )
        kinds.append("INPUT_TYPE_VARIABLES")
    if turn_index == 0 and not audio and rng.random() < 0.12:
        chunks.append({"payload": {"event": "welcome", "locale": language}})
        kinds.append("INPUT_TYPE_EVENT")
    elif audio:
        speech = {"mimeType": "audio/l16; rate=16000", "data": b64(rng.randbytes(between(rng, 48, 120)))}
        if simulated_caller and rng.random() < 0.8:
            intended, text = text, _asr_variant(text, rng)
        chunks += [{"blob": speech}, {"transcript": text}]
        kinds.append("INPUT_TYPE_AUDIO")
    else:
        chunks.append({"text": text})
        kinds.append("INPUT_TYPE_TEXT")
        if modality == "multimodal":
            roll = rng.random()
            if roll < 0.5:
                mime_type, magic = rng.choice(_IMAGE_MAGIC)
                image = {
                    "mimeType": mime_type,
                    "data": b64(magic + rng.randbytes(between(rng, 40, 110))),
                }
                if rng.random() < 0.6:
                    image["altText"] = rng.choice(("photo of the damaged box", "screenshot of the invoice"))
                chunks.append({"image": image})
                kinds.append("INPUT_TYPE_IMAGE")
            elif roll < 0.75:
                chunks.append(
                    {
                        "blob": {
                            "mimeType": "application/pdf",
                            "data": b64(b"%PDF-1.7\n" + rng.randbytes(between(rng, 40, 110))),
                        }
                    }
                )
                kinds.append("INPUT_TYPE_BLOB")
    return chunks, intended, kinds
