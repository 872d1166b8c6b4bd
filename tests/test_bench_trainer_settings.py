"""``bench.trainer_settings``: the trainer setting to ship is the fastest that keeps 10 % headroom and beats the
recipe's by more than the timing noise; results from other machines or step shapes are refused; the committed
results keep the recipe as it is, and the docs' table is this command's output."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from bench import trainer_settings as ts

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
COMMITTED = ["trainer_step_drugprot.json", "trainer_step_extraction.json", "trainer_step_compiled.json"]
DOC = REPO / "docs" / "training" / "gpu-sizing.md"


def result(
    runs: list[tuple[int, float, list[float]]],
    *,
    ac: bool = True,
    optim: bool = True,
    compiled: bool = False,
    gpu: str = "NVIDIA H200",
    sample_tokens: int | None = 2048,
) -> dict[str, Any]:
    """A bench.trainer_step result: runs of (seq_len, headroom, step seconds) at 2 micro-batches."""
    return {
        "benchmark": "trainer_step",
        "machine": {"gpu": gpu, "torch": "2.11.0+cu130"},
        "model": {"config": "Trinity-Mini", "substitutions": []},
        "recipe": {
            "activation_offload": ac,
            "optimizer": "AdamW, states on CPU" if optim else "AdamW",
            "compile": compiled,
            "sample_tokens": sample_tokens,
        },
        "ranks": {"world": 1},
        "runs": [
            {
                "seq_len": s,
                "micro_batches": 2,
                "oom": False,
                "peak_reserved_gib": round(139.8 * (1 - h), 1),
                "headroom": h,
                "step_s": steps,
                "tokens_per_s": round(2 * s / (sum(steps) / len(steps)), 1),
            }
            for s, h, steps in runs
        ],
    }


def write(tmp_path: Path, **results: dict[str, Any]) -> list[str]:
    paths = []
    for name, body in results.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(body))
        paths.append(str(path))
    return paths


def test_the_fastest_setting_with_headroom_is_shipped_with_its_prime_rl_keys(tmp_path: Path, capsys) -> None:
    paths = write(
        tmp_path,
        default=result([(10240, 0.214, [5.6, 5.6])]),
        no_offload=result([(10240, 0.15, [4.8, 4.8]), (20480, 0.05, [8.0, 8.0])], ac=False, optim=False),
        no_ac=result([(10240, 0.18, [5.2, 5.2])], ac=False),
        compiled=result([(10240, 0.214, [4.0, 4.0])], compiled=True),
    )
    assert ts.main(paths) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (
        "ship no activation offload, no optimizer offload, eager at seq_len 10,240: 1.167x the baseline's tokens/s "
        '(noise 0.0 %), 15.0 % headroom; in configs/drugprot.toml: [trainer.model] ac_offloading = "None", '
        "optim_cpu_offload = false"
    )
    assert out[2:7] == [
        "| prime-rl's offloads, compiled (compile: shown, not decided) | 10,240 | 109.9 GiB | 21.4 % | 5,120 | 1.400 "
        "| 0.0 % | `compiled.json` |",
        "| no activation offload, no optimizer offload, eager (headroom < 10 %) | 20,480 | 132.8 GiB | 5.0 % | 5,120 "
        "| 1.400 | 0.0 % | `no_offload.json` |",
        "| no activation offload, no optimizer offload, eager **(chosen)** | 10,240 | 118.8 GiB | 15.0 % | 4,267 "
        "| 1.167 | 0.0 % | `no_offload.json` |",
        "| no activation offload, eager | 10,240 | 114.6 GiB | 18.0 % | 3,938 | 1.077 | 0.0 % | `no_ac.json` |",
        "| prime-rl's offloads, eager **(baseline)** | 10,240 | 109.9 GiB | 21.4 % | 3,657 | 1.000 | 0.0 % "
        "| `default.json` |",
    ]


def test_a_lead_inside_the_timing_noise_keeps_the_recipe(tmp_path: Path, capsys) -> None:
    # the baseline's two steps differ by 5 %: a 4 % lead is noise
    paths = write(
        tmp_path,
        default=result([(10240, 0.214, [5.5, 5.775])]),
        no_optim=result([(10240, 0.2, [5.42, 5.42])], optim=False),
    )
    assert ts.main(paths) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "keep the recipe: no row with ≥ 10 % headroom beats the baseline (3,633 tokens/s) by more than the timing "
        "noise (5.0 %)"
    )


def test_the_same_setting_measured_twice_sets_the_noise_floor() -> None:
    table = ts.rows([("a", result([(10240, 0.2, [5.0, 5.0])])), ("b", result([(10240, 0.2, [5.5, 5.5])]))])
    assert ts.between_runs(table) == 0.1
    faster = ts.rows([("c", result([(10240, 0.2, [4.7, 4.7])], optim=False))])
    baseline, chosen, noise = ts.choose(table + faster, 10240, ts.Setting(True, True, False))
    assert (baseline.source, chosen.source, noise) == ("a", "a", 0.1)  # 6.4 % faster, inside the 10 % floor


@pytest.mark.parametrize(
    ("other", "message"),
    [
        (result([(10240, 0.2, [5.0, 5.0])], gpu="NVIDIA H100 80GB HBM3"), "machine or step shape"),
        (result([(10240, 0.2, [5.0, 5.0])], sample_tokens=None), "machine or step shape"),
        ({"benchmark": "rollout"}, "not a bench.trainer_step result"),
    ],
)
def test_results_that_cannot_be_compared_are_refused_naming_the_file(
    tmp_path: Path, capsys, other: dict[str, Any], message: str
) -> None:
    paths = write(tmp_path, default=result([(10240, 0.214, [5.6, 5.6])]), other=other)
    with pytest.raises(SystemExit) as exit_:
        ts.main(paths)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"bench.trainer_settings: error: {paths[1]}: {message}")


def test_without_the_recipes_setting_there_is_no_baseline(tmp_path: Path, capsys) -> None:
    paths = write(tmp_path, no_ac=result([(10240, 0.2, [5.0, 5.0])], ac=False))
    with pytest.raises(SystemExit):
        ts.main(paths)
    assert capsys.readouterr().err == (
        "bench.trainer_settings: error: no result measures the recipe's setting (prime-rl's offloads, eager) at "
        "seq_len 10240\n"
    )


def test_the_committed_results_keep_the_recipe_and_the_docs_show_them(capsys) -> None:
    assert ts.main([str(RESULTS / name) for name in COMMITTED]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == (
        "keep the recipe: no row with ≥ 10 % headroom beats the baseline (3,633 tokens/s) by more than the timing "
        "noise (6.6 %)"
    )
    model = tomllib.loads((REPO / "configs" / "drugprot.toml").read_text()).get("trainer", {}).get("model", {})
    assert not {"ac_offloading", "optim_cpu_offload", "compile"} & set(model)  # prime-rl's defaults, as chosen
    block = re.search(r"<!-- trainer-settings -->\n(.*?)\n<!-- /trainer-settings -->", DOC.read_text(), re.S)
    assert block is not None
    assert block.group(1) == "\n".join(out.splitlines()[:-1])
