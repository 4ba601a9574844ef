"""A fixed linear policy on the PettingZoo environment's arrays, entered as an ordinary bot process through
pyramid_sdk.pettingzoo_bot.PolicyBot. tests/test_pettingzoo.py plays the same policy in the environment
and checks that both choose the same actions on the same deals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pyramid_sdk.features import ACTIONS, SIZE
from pyramid_sdk.pettingzoo_bot import PolicyBot

WEIGHTS = np.random.default_rng(2026).normal(size=(SIZE, ACTIONS)).astype(np.float32)


def linear_policy(seen: Mapping[str, np.ndarray[Any, Any]]) -> int:
    scores = seen["observation"] @ WEIGHTS
    return int(np.where(seen["action_mask"] == 1, scores, -np.inf).argmax())


if __name__ == "__main__":
    from pyramid_sdk.client import run

    run(PolicyBot(linear_policy, name="linear"))
