"""Any OpenAI-compatible chat endpoint (vLLM, SGLang, a hosted API) as a policy's backend.

Each episode turn is one ``POST {base_url}/chat/completions`` with the episode's chat; the server
batches concurrent requests itself. ``base_url`` is what the OpenAI SDK calls it (it usually ends
in ``/v1``). The API key, when the endpoint wants one, comes from ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import httpx

from openmanus_rl.policies.chat import ChatRequest, GenerationSettings, Reply

API_KEY_VAR = "OPENAI_API_KEY"
_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class EndpointError(RuntimeError):
    """The chat endpoint refused or did not answer: a failure of the evaluation, not of the policy."""


class OpenAIBackend:
    def __init__(self, base_url: str, model: str | None, settings: GenerationSettings, *,
                 api_key: str | None = None, timeout: float = 600.0, retries: int = 4, backoff: float = 1.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.settings = settings
        self.api_key = api_key if api_key is not None else (os.environ.get(API_KEY_VAR) or None)
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self._http: httpx.AsyncClient | None = None
        self.requests = 0

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:  # created in the event loop that uses it
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            self._http = httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(self.timeout, connect=10.0),
                                           limits=httpx.Limits(max_connections=256))
        return self._http

    async def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        for attempt in range(self.retries + 1):
            try:
                resp = await self._client().request(method, url, **kwargs)
            except httpx.TransportError as e:
                problem = f"{type(e).__name__}: {e}"
            else:
                if resp.status_code < 400:
                    try:
                        return resp.json()
                    except ValueError as e:
                        raise EndpointError(f"{method} {url} answered with non-JSON: {resp.text[:200]}") from e
                problem = f"HTTP {resp.status_code}: {resp.text[:300]}"
                if resp.status_code not in _RETRY_STATUS:
                    raise EndpointError(f"{method} {url} failed: {problem}")
            if attempt < self.retries:
                await asyncio.sleep(self.backoff * 2**attempt)
        raise EndpointError(f"{method} {url} failed after {self.retries + 1} attempts: {problem}")

    @property
    def label(self) -> str | None:
        return f"openai:{self.model}" if self.model else None

    async def start(self) -> None:
        if self.model is None:
            await self.resolve_model()

    async def resolve_model(self) -> str:
        """The model to ask for: the one given, else the first the endpoint lists (vLLM serves one)."""
        if self.model is None:
            body = await self._request("GET", "/models")
            models = [m.get("id") for m in body.get("data", []) if isinstance(m, dict) and m.get("id")]
            if not models:
                raise EndpointError(f"{self.base_url}/models lists no model; name one: openai:URL:MODEL")
            self.model = models[0]
        return self.model

    async def reply(self, request: ChatRequest) -> Reply:
        s = self.settings
        body: dict[str, Any] = {"model": await self.resolve_model(), "messages": request.messages,
                                "max_tokens": s.reply_budget(request.env), "temperature": max(0.0, s.temperature),
                                "top_p": s.top_p}
        if not s.greedy:
            body["seed"] = request.seed(s.seed)
        self.requests += 1
        answer = await self._request("POST", "/chat/completions", json=body)
        try:
            choice = answer["choices"][0]
            content = choice["message"].get("content")
        except (KeyError, IndexError, TypeError, AttributeError) as e:
            raise EndpointError(f"unexpected chat completion from {self.base_url}: {str(answer)[:300]}") from e
        return Reply(content or "", cut=choice.get("finish_reason") == "length")

    def stats(self) -> dict[str, float]:
        return {"requests": self.requests}

    def plan(self, episodes: int, concurrency: int) -> None:
        """Nothing to plan: the endpoint batches concurrent requests itself."""

    def episode_finished(self) -> None:
        pass

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
