"""The stand-in model of the prime-rl checks (scripts/prime_rl_check.py rollouts, scripts/prime_rl_check_loop.py): a
byte-level tokenizer, the scripted replies with the rewards DrugProt's rules give them, and a local token-route model
server (vLLM's ``/inference/v1/generate`` and ``GET /v1/models``) that answers with those replies."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# -- byte-level tokenizer --------------------------------------------------------------------------------

SPECIAL_TOKENS = ("<|im_start|>", "<|im_end|>")
"""Token ids 256 and 257; every other token is one byte (id = byte value)."""
EOS = SPECIAL_TOKENS[1]
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _byte_chars() -> list[str]:
    """GPT-2's reversible byte -> printable character table, indexed by byte value."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars: dict[int, str] = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def save_byte_tokenizer(directory: Path) -> None:
    """A Hugging Face fast tokenizer with one token per UTF-8 byte and a ChatML-style chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {char: byte for byte, char in enumerate(_byte_chars())}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(list(SPECIAL_TOKENS))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=EOS, chat_template=CHAT_TEMPLATE)
    fast.save_pretrained(str(directory))


def token_ids(text: str) -> list[int]:
    """Our tokenizer's ids of plain text (no special tokens): its UTF-8 bytes."""
    return list(text.encode("utf-8"))


def detokenize(ids: list[int]) -> str:
    return b"".join(bytes([i]) if i < 256 else SPECIAL_TOKENS[i - 256].encode() for i in ids).decode(
        "utf-8", errors="replace"
    )


# -- the scripted replies and what drugprot must score them ----------------------------------------------


@dataclass(frozen=True)
class Reply:
    kind: str
    text: str
    accuracy: float
    """What drugprot's accuracy reward must be: 1 when the boxed letter is one of the pair's gold letters."""
    format: float
    """What the format reward must be: closed reasoning and exactly one valid boxed answer."""
    utility: float = 0.0
    """What the utility reward must be: 1 per gold type named, minus fp_cost per type named that is not gold, minus
    fn_cost per gold type not named (NO-RELATION is never a gold type; no answer names nothing)."""

    def expected(self, weights: dict[str, float]) -> dict[str, float]:
        """Each reward's weighted value, as verifiers records it."""
        terms = {"accuracy": self.accuracy, "utility": self.utility, "format": self.format}
        return {name: terms[name] * weight for name, weight in weights.items()}


def replies_for(gold_letters: list[str], letters: str, fp_cost: float, fn_cost: float) -> list[Reply]:
    """Four replies per task, each with the rewards the DrugProt rules give it (``letters``: the options;
    ``fp_cost``/``fn_cost``: the utility's costs, the taskset's)."""
    right = gold_letters[0]
    wrong = next(letter for letter in letters if letter not in gold_letters)
    think = "<think>The chemical acts on the gene product.</think>"
    types = sum(letter != "N" for letter in gold_letters)  # the pair's gold relation types
    missed = -fn_cost * types  # no relation named: every gold type a false negative
    right_utility = 0.0 if right == "N" else 1.0 - fn_cost * (types - 1)
    return [
        Reply("gold answer", f"{think}\n\\boxed{{{right}}}", 1.0, 1.0, right_utility),
        Reply("wrong answer", f"{think}\n\\boxed{{{wrong}}}", 0.0, 1.0, missed - fp_cost),
        Reply("no boxed answer", f"{think}\nThe answer is {right}.", 0.0, 0.0, missed),
        # no completed reasoning: no answer (drugprot.core.parsing), so neither accuracy nor format
        Reply("gold, no reasoning", f"\\boxed{{{right}}}", 0.0, 0.0, missed),
    ]


# -- the token-route model server -------------------------------------------------------------------------

LOGPROB = -0.25
"""The logprob the server reports for every sampled token."""


class Script:
    """Which replies the server gives: per registered user prompt, the replies in turn (thread-safe)."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._replies: dict[str, list[Reply]] = {}
        self._served: dict[str, int] = {}
        self.requests: list[dict] = []

    def register(self, user_prompt: str, replies: list[Reply]) -> None:
        with self._lock:
            self._replies[user_prompt] = replies
            self._served[user_prompt] = 0

    def next_reply(self, prompt_text: str, body: dict) -> Reply:
        with self._lock:
            keys = [k for k in self._replies if k in prompt_text]
            if len(keys) != 1:
                raise LookupError(f"prompt matches {len(keys)} registered tasks")
            key = keys[0]
            reply = self._replies[key][self._served[key] % len(self._replies[key])]
            self._served[key] += 1
            self.requests.append({"kind": reply.kind, "prompt_tokens": len(body["token_ids"]), **body})
            return reply


def make_server(script: Script, model: str, max_model_len: int):
    """A ThreadingHTTPServer on 127.0.0.1 (free port) speaking vLLM's token route and ``GET /v1/models``."""
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                card = {"id": model, "object": "model", "owned_by": "prime-rl-check", "max_model_len": max_model_len}
                self._send(200, {"object": "list", "data": [card]})
            else:
                self._send(404, {"error": f"no route {self.path}"})

        def do_POST(self) -> None:
            if self.path != "/inference/v1/generate":
                self._send(404, {"error": f"no route {self.path}"})
                return
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            try:
                reply = script.next_reply(detokenize(body["token_ids"]), body)
            except LookupError as exc:
                self._send(400, {"error": str(exc)})
                return
            ids = [*token_ids(reply.text), 256 + SPECIAL_TOKENS.index(EOS)]
            choice = {
                "index": 0,
                "token_ids": ids,
                "finish_reason": "stop",
                "logprobs": {"content": [{"token": f"token_id:{i}", "logprob": LOGPROB} for i in ids]},
            }
            self._send(200, {"request_id": f"gen-{len(script.requests)}", "choices": [choice]})

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)
