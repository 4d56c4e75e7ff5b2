"""Preferences for new chats survive a restart, and a damaged settings file never breaks them."""

from pathlib import Path

import pytest

from app.settings import Preferences


def test_new_chat_defaults_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "settings.ini"
    preferences = Preferences(path)
    preferences.default_model_id = "SmolLM2-135M"
    preferences.default_system_prompt = "Answer in French."
    preferences.default_params = {"temperature": 0.7, "max_tokens": 64}
    preferences.set_draft_model_for("Qwen3-8B", "Qwen3-0.6B")
    preferences.sync()

    again = Preferences(path)
    assert again.default_model_id == "SmolLM2-135M"
    assert again.default_system_prompt == "Answer in French."
    assert again.default_params == {"temperature": 0.7, "max_tokens": 64}
    assert again.draft_model_for("Qwen3-8B") == "Qwen3-0.6B"
    assert again.draft_model_for("SmolLM2-135M") is None

    again.set_draft_model_for("Qwen3-8B", None)
    again.default_model_id = None
    assert again.draft_model_for("Qwen3-8B") is None
    assert again.default_model_id is None


def test_a_hand_damaged_file_reads_as_no_choice(tmp_path: Path) -> None:
    path = tmp_path / "settings.ini"
    path.write_text('[chat]\nparams="{not json"\n[models]\ndrafts=[1, 2]\n')
    preferences = Preferences(path)
    assert preferences.default_params == {}
    assert preferences.draft_model_for("anything") is None
    assert preferences.default_system_prompt == ""


def test_a_models_image_detail_is_kept_and_only_offered_sizes_are_read(tmp_path: Path) -> None:
    path = tmp_path / "settings.ini"
    preferences = Preferences(path)
    assert preferences.image_detail_for("Qwen2.5-VL-3B") is None  # the model's own
    preferences.set_image_detail_for("Qwen2.5-VL-3B", 768)
    preferences.set_draft_model_for("Qwen2.5-VL-3B", "Qwen2.5-VL-0.5B")  # kept beside it
    preferences.sync()
    again = Preferences(path)
    assert again.image_detail_for("Qwen2.5-VL-3B") == 768
    assert again.draft_model_for("Qwen2.5-VL-3B") == "Qwen2.5-VL-0.5B"
    assert again.image_detail_for("SmolVLM") is None
    with pytest.raises(ValueError, match="Unknown image detail 700"):
        again.set_image_detail_for("SmolVLM", 700)
    again.set_image_detail_for("Qwen2.5-VL-3B", None)
    assert again.image_detail_for("Qwen2.5-VL-3B") is None
    path.write_text('[models]\nimage_detail="{\\"a\\": 700, \\"b\\": true, \\"c\\": \\"512\\"}"\n')
    damaged = Preferences(path)
    assert [damaged.image_detail_for(m) for m in "abc"] == [None, None, None]


def test_the_knowledge_new_chats_read_and_its_budget_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "settings.ini"
    preferences = Preferences(path)
    assert preferences.default_knowledge == [] and preferences.knowledge_budget_tokens == 0
    preferences.default_knowledge = ["Papers", "Manuals"]
    preferences.knowledge_budget_tokens = 3000
    preferences.sync()
    again = Preferences(path)
    assert again.default_knowledge == ["Papers", "Manuals"]
    assert again.knowledge_budget_tokens == 3000
    path.write_text('[knowledge]\ndefault_collections="{not json"\nbudget_tokens=lots\n')
    damaged = Preferences(path)
    assert damaged.default_knowledge == [] and damaged.knowledge_budget_tokens == 0
