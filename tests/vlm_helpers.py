"""The scripted zero-shot VLM answers the vlm detector tests share (the loopback LLM server serves them)."""

from __future__ import annotations

import re

from rwpost.testing.llm import Reply, message_text

SECRET = "sk-test-secret-never-written"


def responder(body):
    """Answers True for even claim numbers, False for odd ones; claim 5 gets an invalid answer."""
    user = message_text(body, "user")
    number = int(re.search(r"Generated claim number (\d+)", user).group(1))
    if number == 5:
        return Reply.text("this is not JSON")
    label = "True" if number % 2 == 0 else "False"
    return Reply.answer(
        {
            "label": label,
            "confidence": 0.75,
            "explanation": f"The post {number} is {label}.",
            "evidence_urls": ["https://example.org/e1"] if "Evidence items" in user else [],
        }
    )
