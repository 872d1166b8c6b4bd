"""``adapter_config.json``: the LoRA settings, each field of its PEFT type (``adapters.adapter_config``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.adapter_config import read_adapter_config
from tests.tools.adapters.headers import PRIME_RL_CONFIG, write_config


def test_prime_rl_config_reads_rank_alpha_scale_and_targets(tmp_path: Path) -> None:
    settings = read_adapter_config(write_config(tmp_path))
    assert (settings.r, settings.alpha, settings.scale, settings.use_rslora) == (16, 64.0, 4.0, False)
    assert settings.target_modules == tuple(PRIME_RL_CONFIG["target_modules"])
    assert settings.base_model == "arcee-ai/Trinity-Mini"


def test_rslora_scale_is_alpha_over_sqrt_r(tmp_path: Path) -> None:
    assert read_adapter_config(write_config(tmp_path, use_rslora=True)).scale == 16.0


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"peft_type": "IA3"}, "peft_type is 'IA3'"),
        ({"r": 0}, "field 'r' must be a positive integer, got 0"),
        ({"lora_alpha": None}, "field 'lora_alpha' must be a positive finite number, got None"),
        ({"use_dora": True}, "field 'use_dora' is set"),
        ({"rank_pattern": {"q_proj": 8}}, "field 'rank_pattern' is non-empty"),
        ({"modules_to_save": ["lm_head"]}, "field 'modules_to_save' is ['lm_head']"),
    ],
)
def test_unsupported_configs_are_refused_naming_the_field(tmp_path: Path, changes: dict, message: str) -> None:
    with pytest.raises(AdapterError, match=message.replace("[", r"\[").replace("]", r"\]")):
        read_adapter_config(write_config(tmp_path, **changes))


def test_missing_config_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(AdapterError, match="adapter_config.json: no adapter config"):
        read_adapter_config(tmp_path)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"lora_alpha": "16"}, "field 'lora_alpha' must be a positive finite number, got '16'"),
        ({"r": 4.0}, "field 'r' must be a positive integer, got 4.0"),
        ({"r": True}, "field 'r' must be a positive integer, got True"),
        ({"peft_type": 3}, "peft_type is 3; only LORA adapters are supported"),
        ({"use_rslora": "yes"}, "field 'use_rslora' must be true or false, got 'yes'"),
        ({"use_dora": 1}, "field 'use_dora' must be true or false, got 1"),
        ({"rank_pattern": ["q_proj"]}, "field 'rank_pattern' must be an object, got ['q_proj']"),
        ({"target_modules": 7}, "field 'target_modules' must be a string or a list of strings, got 7"),
        ({"target_modules": ["q_proj", None]}, "field 'target_modules' must be a string or a list of strings"),
        ({"base_model_name_or_path": 5}, "field 'base_model_name_or_path' must be a string, got 5"),
        ({"lora_alpha": 1e308, "r": 1, "use_rslora": True}, None),  # finite: accepted
    ],
)
def test_config_fields_of_the_wrong_type_are_refused_naming_the_field(
    tmp_path: Path, changes: dict, message: str | None
) -> None:
    directory = write_config(tmp_path, **changes)
    if message is None:
        assert read_adapter_config(directory).scale == 1e308
        return
    with pytest.raises(AdapterError) as info:
        read_adapter_config(directory)
    assert str(info.value).startswith(f"{directory / 'adapter_config.json'}: {message}")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"r": 4, "lora_alpha": Infinity}', "the adapter config is not valid JSON (Infinity is not a JSON number)"),
        (b'{"r": 4, "lora_alpha": -Infinity}', "the adapter config is not valid JSON (-Infinity is not a JSON number)"),
        (b'{"r": 4, "lora_alpha": 1e309}', "field 'lora_alpha' must be a positive finite number, got inf"),
        (b'{"r": 4, "lora_alpha": 16, "x": "\xff"}', "the adapter config is not UTF-8 text (byte 33); re-save it"),
        (b'{"r": 4,', "the adapter config is not valid JSON (Expecting property name enclosed in double quotes"),
        (b"[4, 16]", "expected a JSON object, got list"),
    ],
)
def test_malformed_config_files_are_refused_naming_the_file(tmp_path: Path, raw: bytes, message: str) -> None:
    (tmp_path / "adapter_config.json").write_bytes(raw)
    with pytest.raises(AdapterError) as info:
        read_adapter_config(tmp_path)
    assert str(info.value).startswith(f"{tmp_path / 'adapter_config.json'}: {message}")
