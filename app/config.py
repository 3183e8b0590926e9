"""Server settings (pydantic-settings): limits, host, port, headers.

Every field can be overridden from the environment with the prefix ``FFN_LAB_``, e.g.
``FFN_LAB_MAX_TOKENS=128``. Limits are checked before any tensor is allocated.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Typed settings with defaults that keep one request well under a second on 2 cores."""

    model_config = SettingsConfigDict(env_prefix="FFN_LAB_", frozen=True)

    host: str = Field("127.0.0.1", description="interface to bind; 0.0.0.0 for a classroom LAN")
    port: int = Field(8000, ge=1, le=65535)

    max_tokens: int = Field(64, ge=1, description="most tokens T in one request")
    max_d_model: int = Field(4096, ge=1, description="largest d_model")
    max_d_ff: int = Field(16384, ge=1, description="largest d_ff")
    max_params: int = Field(
        150_000_000, ge=1, description="most FFN parameters (LLaMA-7B's FFN has 135,266,304)"
    )
    max_submitted_weights: int = Field(
        1_100_000, ge=1, description="most numbers in user-submitted weights"
    )
    max_abs_value: float = Field(
        1e4, gt=0, description="largest |value| in submitted tokens, weights and deltas"
    )
    max_body_bytes: int = Field(
        16 * 1024 * 1024, ge=1024, description="largest request body in bytes (answered with 413)"
    )
    upload_max_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="largest weights file for POST /api/weights/upload in bytes (LLaMA-style "
        "768 -> 3072 gated float32 is ~28 MB)",
    )
    upload_cache_bytes: int = Field(
        512 * 1024 * 1024, ge=0, description="bytes of uploaded layers kept (LRU) for weights_id"
    )
    request_timeout_s: float = Field(
        20.0, gt=0, description="time budget of one FFN request, queueing included (503 after)"
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        description="a connection's request headers must arrive within this time (from its "
        "opening or the request's first byte), else 408 and close (app/api/slow_clients.py)",
    )
    body_timeout_s: float = Field(
        30.0,
        gt=0,
        description="a request body still arriving after this time must come at "
        "body_min_rate_bytes per second on average, else 408 and close",
    )
    body_min_rate_bytes: int = Field(
        64 * 1024, ge=1, description="slowest average body rate (bytes/s) after body_timeout_s"
    )
    light_workers: int = Field(8, ge=1, description="threads for light requests (small FFNs)")
    heavy_workers: int = Field(1, ge=1, description="threads for heavy requests (large FFNs)")
    heavy_min_params: int = Field(
        4_000_000, ge=0, description="an FFN with more parameters than this runs in the heavy pool"
    )
    heavy_min_flops: int = Field(
        500_000_000, ge=0, description="a forward pass with more FLOPs runs in the heavy pool"
    )
    weight_cache_bytes: int = Field(
        896 * 1024 * 1024,
        ge=0,
        description=(
            "bytes of seeded weights kept in the LRU cache (896 MiB: LLaMA-7B's FFN, 541 MB, "
            "and its attention-vs-FFN attention, 268 MB, fit together)"
        ),
    )
    max_heads: int = Field(64, ge=1, description="most attention heads in the teaching views")
    max_influence_flops: int = Field(
        2_000_000_000,
        ge=0,
        description="largest FLOP budget for the [T, T] influence maps (T extra passes)",
    )
    max_svd_values: int = Field(
        4_194_304,
        ge=1,
        description="largest W1 (d_model x d_ff entries) /api/cheaper factors by SVD (1024 x 4096)",
    )
    max_layers: int = Field(12, ge=1, description="most layers in one /api/stack request")
    max_train_steps: int = Field(
        5000, ge=1, description="most optimiser steps in one /api/train run"
    )
    max_train_params: int = Field(
        500_000, ge=1, description="most trainable parameters of a /api/train model"
    )
    max_train_pairs: int = Field(4096, ge=1, description="most key-value pairs in /api/train")
    max_train_classes: int = Field(1024, ge=2, description="most target classes in /api/train")
    max_train_seconds: float = Field(
        60.0, gt=0, description="a /api/train run stops (and says so) after this many seconds"
    )
    max_train_work: int = Field(
        2_000_000_000_000,
        ge=1,
        description="most FLOPs (about 3x forward per step) of one /api/train run or sweep",
    )
    max_capacity_widths: int = Field(
        8, ge=1, description="most d_ff values in one /api/train/capacity sweep"
    )
    train_torch_threads: int = Field(
        1,
        ge=1,
        description="torch intra-op threads of a /api/train step (restored after each chunk); "
        "tiny models train fastest on one: see benchmarks/bench_train.py",
    )
    max_concurrent_trainings: int = Field(
        2, ge=1, description="trainings streamed at once; more get a 503 (busy)"
    )
    max_scatter_points: int = Field(
        2000, ge=1, description="most pre-activations per variant scattered on its curve"
    )
    display_max_values: int = Field(
        81_920,
        ge=1,
        description=(
            "an /api/forward or /api/perturb answer whose [T, n] tensors hold more numbers "
            "than this is summarised for display (display='auto'): its widest tensors keep "
            "a window of consecutive columns. 81,920 = T 16 x (512 + 2048 + 2048 + 512), the "
            "paper's base model, sent whole"
        ),
    )
    answer_cache_bytes: int = Field(
        64 * 1024 * 1024,
        ge=0,
        description=(
            "bytes of encoded answers kept to answer a repeated request (the same endpoint "
            "and body, e.g. a class on one preset) without computing it again; 0: off"
        ),
    )
    display_keep_values: int = Field(
        8_192,
        ge=1,
        description="a summarised [T, n] tensor keeps max(1, this // T) columns",
    )
    histogram_bins: int = Field(
        60, ge=1, le=1000, description="bins of the pre-activation histogram in /api/forward"
    )
    sparsity_threshold: float = Field(
        0.01, ge=0, description="default |h| below which a smooth activation counts as zero"
    )
    max_text_chars: int = Field(
        500, ge=1, description="longest text for the pretrained model (model: minilm-l6)"
    )
    inline_max_flops: int = Field(
        4_000_000,
        ge=0,
        description=(
            "requests of at most this many forward FLOPs run on the event loop, not in the "
            "thread pool (~0.1 ms of compute; 0 sends every request to the pool)"
        ),
    )
    torch_threads: int = Field(
        1,
        ge=0,
        description=(
            "torch intra-op threads in every thread that runs an FFN (0: torch's default, one "
            "per core). 1 by default: requests run in parallel on the cores instead, and a "
            "second OpenMP thread on a busy 2-core machine made LLaMA-size forwards 2-3x "
            "slower (benchmarks/README.md). Set per thread: a count set in one thread only "
            "would let a request's numbers depend on which thread ran it"
        ),
    )
    matmul_workers: int = Field(
        2,
        ge=1,
        description=(
            "threads a big linear map (at least 4M weights: LLaMA-7B, 1024 -> 4096) is split "
            "over, by output features, when the thread that computes has one torch thread "
            "(app/model/parallel.py); the numbers are bit-identical to the unsplit map. "
            "1: never split"
        ),
    )
    malloc_arena_max: int = Field(
        2,
        ge=0,
        description=(
            "glibc malloc arenas (mallopt M_ARENA_MAX, set at start-up; 0: glibc's default, "
            "8 per core). Fewer arenas keep less freed memory (app/services/allocator.py)"
        ),
    )
    malloc_mmap_threshold_bytes: int = Field(
        1 << 20,
        ge=0,
        le=1 << 25,
        description=(
            "blocks of at least this many bytes are mmap'd by glibc and returned to the "
            "system when freed (mallopt M_MMAP_THRESHOLD; 0: glibc's dynamic threshold, "
            "which rises to 32 MiB and leaves freed tensors in the heap)"
        ),
    )
    cache_dir: Path | None = Field(
        None,
        description="where computed data (the neuron view's corpus index) is kept; "
        "default $XDG_CACHE_HOME/ffn-lab or ~/.cache/ffn-lab",
    )
    frame_ancestors: str = Field(
        "*",
        description="CSP frame-ancestors: who may embed the page ('none', 'self', hosts); "
        "* = anyone, file:// slides too (the directive is then left out)",
    )
    cors_origins: list[str] = Field(
        default_factory=list, description="CORS origins; none by default"
    )
    page_script: Literal["bundle", "modules"] = Field(
        "bundle",
        description="the page's script: 'bundle', one file (build/js/main.js, made by "
        "scripts/setup) while it was built from the static/js of now, else the ES modules; "
        "'modules', always the ES modules of static/js (to debug them as written)",
    )

    # ---- class sessions (app/services/sessions): a lecturer's page followed by students ----
    redis_url: str | None = Field(
        None,
        description="redis://host:port/db: sessions, answers and events go through Redis, so "
        "several processes or replicas behind a proxy serve one session; unset: in-process",
    )
    session_idle_s: float = Field(
        7200.0, gt=0, description="a session without lecturer activity or answers ends after this"
    )
    max_sessions: int = Field(200, ge=1, description="most class sessions at once (503 beyond)")
    max_students_per_session: int = Field(
        400, ge=1, description="most event streams on one session (429 beyond)"
    )
    session_keepalive_s: float = Field(
        15.0, gt=0, description="a comment line on an idle event stream this often (proxies)"
    )
    session_tally_interval_s: float = Field(
        0.25, ge=0, description="answers are counted to the lecturer at most this often"
    )
    session_answer_rate: float = Field(2.0, gt=0, description="answers per second per device")
    session_answer_burst: float = Field(10.0, ge=1, description="burst of answers per device")
    session_state_rate: float = Field(
        20.0, gt=0, description="lecturer changes (state, questions) per second per session"
    )
    session_state_burst: float = Field(60.0, ge=1, description="burst of lecturer changes")
    session_connect_rate: float = Field(
        2.0, gt=0, description="event-stream connections per second per device (or address)"
    )
    session_connect_burst: float = Field(20.0, ge=1, description="burst of connections")
    session_create_rate: float = Field(0.5, gt=0, description="new sessions per second per address")
    session_create_burst: float = Field(10.0, ge=1, description="burst of new sessions")

    @field_validator("frame_ancestors")
    @classmethod
    def _one_directive(cls, value: str) -> str:
        """A source list only: a ';', ',' or control character would inject CSP directives."""
        if not value.strip() or any(c in value for c in ";,\r\n\x00"):
            raise ValueError(
                f"frame_ancestors = {value!r} must be a CSP source list such as "
                '"*", "\'self\'", "\'none\'" or "https://school.example"'
            )
        return value.strip()


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment (tests clear the cache)."""
    return Settings()
