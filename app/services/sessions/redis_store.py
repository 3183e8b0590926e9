"""The Redis store (`FFN_LAB_REDIS_URL`): sessions, answers and events shared by every
process behind a proxy, so the lecturer and the students may reach different replicas.

Keys of session C (all expire after the idle time, renewed by lecturer activity and answers):
    ffnlab:s:C            hash: token, state, version, question, reveal, *_event, seq
    ffnlab:s:C:log        list: the last `log_size` events (JSON), newest first
    ffnlab:s:C:a:<qid>    hash: device -> choice
    ffnlab:s:C:l          sorted set: listener -> expiry (students counted across replicas)
    ffnlab:sessions       sorted set: code -> last activity (sessions per server)
Events go out on channel ffnlab:ev:C; each process has one pattern subscriber (ffnlab:ev:*)
that hands them to its `Hub`. The client is redis-py's asyncio client on a
`BlockingConnectionPool`: a burst of students waits for a connection instead of failing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import orjson
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.client import PubSub

from app.services.sessions.errors import Conflict, Full, NotFound
from app.services.sessions.events import Event, Hub

log = logging.getLogger(__name__)

PREFIX = "ffnlab:"
JSON_FIELDS = ("state", "question", "reveal")

ANSWER_SCRIPT = """
if redis.call('HEXISTS', KEYS[1], 'token') == 0 then return -3 end
if redis.call('HGET', KEYS[1], 'qid') ~= ARGV[1] then return -4 end
if redis.call('HGET', KEYS[1], 'closed') == ARGV[1] then return -1 end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0
   and redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[4]) then return -2 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[5]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[7])
return 1
"""
"""An answer in one atomic step: the session exists, `qid` is its question and still open,
the cap holds; the session is kept alive (one round trip)."""


def _key(code: str, suffix: str = "") -> str:
    return f"{PREFIX}s:{code}{suffix}"


class RedisStore:
    """Sessions in Redis (see `Store`)."""

    def __init__(
        self, url: str, hub: Hub, idle_s: float, log_size: int = 64, max_connections: int = 64
    ) -> None:
        self.hub = hub
        self.idle_s = idle_s
        self.ttl = max(1, int(idle_s))
        self.log_size = log_size
        self._pool = BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=10
        )
        self.redis: Redis = Redis(connection_pool=self._pool)
        self._pubsub: PubSub | None = None
        self._answer_script = self.redis.register_script(ANSWER_SCRIPT)
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._reader is not None:
            return
        self._pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        await self._pubsub.psubscribe(f"{PREFIX}ev:*")
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        if self._pubsub is None:  # set by start(); a reader is only created there
            raise RuntimeError("the Redis store's subscriber was not started")
        while True:
            try:
                async for message in self._pubsub.listen():
                    if message.get("type") == "pmessage":
                        self.hub.deliver(Event.from_json(message["data"]))
            except asyncio.CancelledError:
                raise
            except Exception:  # a lost connection: subscribe again after a breath
                log.warning("redis subscriber lost its connection; resubscribing", exc_info=True)
                await asyncio.sleep(0.5)
                with contextlib.suppress(Exception):
                    await self._pubsub.psubscribe(f"{PREFIX}ev:*")

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
            self._reader = None
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
            self._pubsub = None
        await self.redis.aclose()
        await self._pool.aclose()

    async def create(self, code: str, record: dict[str, Any], max_sessions: int) -> bool:
        now = time.time()
        index = f"{PREFIX}sessions"
        await self.redis.zremrangebyscore(index, "-inf", now - self.idle_s)
        if await self.redis.zcard(index) >= max_sessions:
            raise Full(
                f"This server runs {max_sessions} class sessions already (its limit): end one "
                "or try again later.",
                scope="server",
            )
        fields = {k: _dump(k, v) for k, v in record.items()} | {"seq": 0}
        created = await self.redis.hsetnx(_key(code), "token", fields.pop("token"))
        if not created:
            return False
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(_key(code), mapping=fields)  # type: ignore[arg-type]
            pipe.expire(_key(code), self.ttl)
            pipe.zadd(index, {code: now})
            await pipe.execute()
        return True

    async def get(self, code: str) -> dict[str, Any] | None:
        raw = await self.redis.hgetall(_key(code))
        if not raw or b"token" not in raw:
            return None
        out: dict[str, Any] = {}
        for key, value in raw.items():
            name = _text(key)
            out[name] = orjson.loads(value) if name in JSON_FIELDS else _text(value)
        for name in ("version", "seq", "state_event", "question_event", "reveal_event"):
            if name in out:
                out[name] = int(out[name])
        return out

    async def _touch(self, pipe: Any, code: str) -> None:
        pipe.expire(_key(code), self.ttl)
        pipe.expire(_key(code, ":log"), self.ttl)
        pipe.expire(_key(code, ":l"), self.ttl)
        pipe.zadd(f"{PREFIX}sessions", {code: time.time()})

    async def update(self, code: str, fields: dict[str, Any]) -> None:
        if not await self.redis.exists(_key(code)):
            return
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(_key(code), mapping={k: _dump(k, v) for k, v in fields.items()})
            await self._touch(pipe, code)
            await pipe.execute()

    async def next_version(self, code: str) -> int:
        return int(await self.redis.hincrby(_key(code), "version", 1))

    async def publish(self, code: str, type_: str, data: dict[str, Any]) -> Event:
        event_id = int(await self.redis.hincrby(_key(code), "seq", 1))
        event = Event(code, event_id, type_, data)
        payload = event.to_json()
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.lpush(_key(code, ":log"), payload)
            pipe.ltrim(_key(code, ":log"), 0, self.log_size - 1)
            pipe.expire(_key(code, ":log"), self.ttl)
            pipe.publish(f"{PREFIX}ev:{code}", payload)
            await pipe.execute()
        return event

    async def events_after(self, code: str, last_id: int) -> list[Event] | None:
        raw = await self.redis.lrange(_key(code, ":log"), 0, -1)
        events = [Event.from_json(r) for r in reversed(raw)]
        seq = await self.redis.hget(_key(code), "seq")
        if seq is None:
            return None
        if last_id >= int(seq):
            return []
        if not events or events[0].id > last_id + 1:
            return None
        return [e for e in events if e.id > last_id]

    async def close_question(self, code: str, qid: str) -> None:
        await self.redis.hset(_key(code), "closed", qid)

    async def set_answer(
        self, code: str, qid: str, device: str, choice: str, max_answers: int
    ) -> None:
        result = int(
            await self._answer_script(
                keys=[_key(code), _key(code, f":a:{qid}"), f"{PREFIX}sessions"],
                args=[qid, device, choice, max_answers, self.ttl, time.time(), code],
            )
        )
        if result == -3:
            raise NotFound("The class session has ended.", field="code")
        if result == -1:
            raise Conflict("This question has been revealed: answers are closed.", "question_id")
        if result == -4:
            raise NotFound(
                f"Question {qid} is not this session's current question.", field="question_id"
            )
        if result == -2:
            raise Full(f"This question has {max_answers} answers already (the limit).", "session")

    async def answers(self, code: str, qid: str) -> dict[str, str]:
        raw = await self.redis.hgetall(_key(code, f":a:{qid}"))
        return {_text(k): _text(v) for k, v in raw.items()}

    async def add_listener(self, code: str, listener: str, ttl: float) -> int:
        key = _key(code, ":l")
        now = time.time()
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, {listener: now + ttl})
            pipe.zremrangebyscore(key, "-inf", now)
            pipe.zcard(key)
            pipe.expire(key, self.ttl)
            result = await pipe.execute()
        return int(result[2])

    async def remove_listener(self, code: str, listener: str) -> None:
        await self.redis.zrem(_key(code, ":l"), listener)

    async def delete(self, code: str) -> None:
        keys = [_key(code), _key(code, ":log"), _key(code, ":l")]
        keys += [k async for k in self.redis.scan_iter(match=_key(code, ":a:*"), count=100)]
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(*keys)
            pipe.zrem(f"{PREFIX}sessions", code)
            await pipe.execute()


def _dump(name: str, value: Any) -> Any:
    if name in JSON_FIELDS:
        return orjson.dumps(value)
    if isinstance(value, bool):
        return int(value)
    return value


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
