"""Optuna studies of a policy's parameters, through the simulator.

The space is the one ``numaplace tune`` searches (:func:`numaplace.search_space`: the
policy declares it), and a candidate is scored as the tuner scores it: each of its
``repeats`` runs uses seed ``seed_base + t`` (the same seeds for every candidate, so two
candidates differ by their setting, not by the run-to-run variation), its score is the
mean of their metric (default the makespan, in seconds), and a run the simulator cannot
finish scores ``failed`` (infinity). A trial of the study costs ``repeats`` simulator
runs.

    from numaplace.optuna import Objective, create_study

    objective = Objective({"workload": {"kind": "msort", "n": 16384}}, policy="larowe")
    study = create_study(objective, seed=1)    # TPE, the policy's defaults first
    study.optimize(objective, n_trials=20)     # 40 simulator runs
    objective.best(study)                      # the policy's values of the best trial

A parameter with special values (``freeze_window_ns``: a range, or 0, or ``inf``) is two
of Optuna's: ``NAME:arm``, a choice of ``"range"`` or one of the specials written as text,
and ``NAME`` itself, suggested only when the range is chosen (a conditional parameter).

Optuna is an optional dependency (``pip install './python[optuna]'``), imported when a
study is made; the space and the objective need only numaplace.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import _numaplace
from . import run as _run
from . import search_space as _search_space
from ._numaplace import ConfigError, SimulationError

if TYPE_CHECKING:
    import optuna

    from . import Config, Param

__all__ = [
    "RANGE",
    "Objective",
    "arm_name",
    "create_study",
    "suggest",
    "trial_params",
    "values_of",
]

Number = int | float
"""A parameter's value: an integer, a real, or ``math.inf``."""

RANGE = "range"
"""The choice of a parameter's ``NAME:arm`` that takes its numeric range."""


def arm_name(param: Param) -> str:
    """The name of the Optuna parameter that chooses between ``param``'s numeric range
    and its special values."""
    return f"{param.name}:arm"


def _label(value: Number) -> str:
    """A special value as a choice of its arm: ``"inf"``, ``"-1"``, ``"65536"``."""
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return str(value)


def _choices(param: Param) -> list[str]:
    return [RANGE, *(_label(v) for v in param.specials)]


def suggest(trial: optuna.trial.BaseTrial, space: Sequence[Param]) -> dict[str, Number]:
    """The policy's values for ``trial``: per parameter of ``space``, its arm (when it
    has special values: ``trial.suggest_categorical``), then its value in the range
    (``trial.suggest_int`` or ``trial.suggest_float``, on a log scale where the space's
    is), by the policy's field."""
    values: dict[str, Number] = {}
    for p in space:
        if p.specials:
            choices = _choices(p)
            arm = trial.suggest_categorical(arm_name(p), choices)
            if arm != RANGE:
                values[p.name] = p.specials[choices.index(arm) - 1]
                continue
        if p.kind == "int":
            values[p.name] = trial.suggest_int(p.name, int(p.low), int(p.high), log=p.log)
        else:
            values[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
    return values


def _by_name(space: Sequence[Param]) -> dict[str, Param]:
    return {p.name: p for p in space}


def _unknown(space: Sequence[Param], name: str) -> ConfigError:
    known = ", ".join(p.name for p in space)
    err = ConfigError(f"policy.{name}: not a tuned parameter; tuned: {known}")
    err.field = f"policy.{name}"
    err.reason = f"not a tuned parameter; tuned: {known}"
    return err


def trial_params(space: Sequence[Param], values: Mapping[str, Number]) -> dict[str, Any]:
    """The Optuna parameters that give the policy's ``values`` (every parameter of
    ``space``), for ``study.enqueue_trial``: the inverse of :func:`suggest`.

    Raises ConfigError for a name the space lacks, or one it has left out."""
    params: dict[str, Any] = {}
    by_name = _by_name(space)
    for name in values:
        if name not in by_name:
            raise _unknown(space, name)
    for p in space:
        if p.name not in values:
            err = ConfigError(f"policy.{p.name}: no value given (every tuned parameter needs one)")
            err.field = f"policy.{p.name}"
            err.reason = "no value given (every tuned parameter needs one)"
            raise err
        v = values[p.name]
        if p.specials:
            if v in p.specials:
                params[arm_name(p)] = _label(p.specials[p.specials.index(v)])
                continue
            params[arm_name(p)] = RANGE
        params[p.name] = v
    return params


def values_of(space: Sequence[Param], params: Mapping[str, Any]) -> dict[str, Number]:
    """The policy's values of a trial's Optuna parameters (``study.best_params``): the
    inverse of :func:`trial_params`."""
    values: dict[str, Number] = {}
    for p in space:
        if p.specials:
            choices = _choices(p)
            arm = params[arm_name(p)]
            if arm != RANGE:
                values[p.name] = p.specials[choices.index(arm) - 1]
                continue
        values[p.name] = params[p.name]
    return values


def _settings(set: Mapping[str, Any] | None, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Overrides by dotted path (``__`` for the dots in keywords), in the order given."""
    out: dict[str, Any] = {}
    for mapping in (set or {}), overrides:
        for key, value in mapping.items():
            out[key.replace("__", ".")] = value
    return out


class Objective:
    """A policy's parameters scored through the simulator: call it with an Optuna trial
    (``study.optimize(objective, n_trials=N)``: ``N * repeats`` simulator runs).

    ``config`` and the keywords are :func:`numaplace.run`'s: the base configuration
    (machine, workload, the policy's own setting). ``policy`` is ``--policy`` (default:
    the configuration's). A policy parameter given as an override is fixed and not
    searched, as ``numaplace tune --set`` fixes it; ``ranges`` narrows numeric ranges as
    ``--range`` does. ``metric`` is ``--objective`` (``makespan`` or
    ``mean-completion``), ``repeats`` ``--trials`` and ``seed_base`` ``--seed-base``: with
    the same values, a candidate's runs are the tuner's runs of it, to the bit. The
    per-page report is off unless an override turns it on, as in the tuner.

    Raises ConfigError for an unknown policy or metric, a policy without a search space,
    or a bad configuration.
    """

    def __init__(
        self,
        config: Config = None,
        *,
        policy: str | None = None,
        metric: str = "makespan",
        repeats: int = 2,
        seed_base: int = 1,
        failed: float = math.inf,
        ranges: Mapping[str, tuple[float, float]] | None = None,
        machine: str | None = None,
        workload: str | None = None,
        set: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> None:
        if metric not in _numaplace.METRICS:
            known = ", ".join(_numaplace.METRICS)
            raise ConfigError(f"unknown objective `{metric}`; known: {known}")
        if repeats < 1:
            raise ValueError(f"repeats must be at least 1, not {repeats}")
        self.config = config
        self.policy = policy
        self.metric = metric
        self.repeats = repeats
        self.seed_base = seed_base
        self.failed = failed
        self.machine = machine
        self.workload = workload
        self.settings = {"report.per_page": False, **_settings(set, overrides)}
        """The overrides every run gets, before the candidate's values."""
        self.space: list[Param] = _search_space(
            policy,
            config,
            machine=machine,
            workload=workload,
            ranges=ranges,
            set=self.settings,
        )
        """The parameters searched, in the tuner's order."""
        self.runs = 0
        """Simulator runs made so far."""
        self._by_name = _by_name(self.space)

    @property
    def defaults(self) -> dict[str, Number] | None:
        """The configuration's own values of the parameters (the tuner's first
        candidate), or None if one of them is not a number."""
        values = {p.name: p.default for p in self.space}
        if any(v is None for v in values.values()):
            return None
        return {k: v for k, v in values.items() if v is not None}

    def seeds(self) -> list[int]:
        """The seeds of a candidate's runs: ``seed_base + t`` for each repeat ``t``."""
        return [self.seed_base + t for t in range(self.repeats)]

    def holdout_seeds(self, n: int) -> list[int]:
        """``n`` seeds no search uses, those of ``numaplace tune --holdout``:
        ``seed_base + 1000000 + i``."""
        return [self.seed_base + _numaplace.HOLDOUT + i for i in range(n)]

    def run(self, values: Mapping[str, Number], seed: int) -> float:
        """One simulator run of the policy's ``values`` (by field; a parameter left out
        keeps the configuration's value) with ``seed``, scored: the metric in seconds, or
        ``failed`` if the simulation failed.

        Raises ConfigError for a name that is not a tuned parameter, or a value the
        policy refuses (naming the field)."""
        for name in values:
            if name not in self._by_name:
                raise _unknown(self.space, name)
        sets = dict(self.settings)
        for name, v in values.items():
            sets[f"policy.{name}"] = v
        self.runs += 1
        try:
            result = _run(
                self.config,
                machine=self.machine,
                workload=self.workload,
                policy=self.policy,
                seed=seed,
                set=sets,
            )
        except SimulationError:
            return self.failed
        score = result.metric(self.metric)
        return score if math.isfinite(score) else self.failed

    def evaluate(
        self, values: Mapping[str, Number], seeds: Iterable[int] | None = None
    ) -> list[float]:
        """The scores of ``values`` on ``seeds`` (default: :meth:`seeds`), one run each."""
        return [self.run(values, s) for s in (self.seeds() if seeds is None else seeds)]

    def __call__(self, trial: optuna.trial.BaseTrial) -> float:
        """Scores the values ``trial`` suggests: the mean of their runs on
        :meth:`seeds`. The trial's user attributes get ``policy`` (the values by field,
        ``inf`` as text) and ``scores`` (one per run)."""
        values = suggest(trial, self.space)
        scores = self.evaluate(values)
        trial.set_user_attr(
            "policy", {k: _label(v) if math.isinf(v) else v for k, v in values.items()}
        )
        trial.set_user_attr("scores", scores)
        return statistics.fmean(scores)

    def enqueue_defaults(self, study: optuna.Study) -> bool:
        """Puts the configuration's own values first in ``study``'s queue, as the
        tuner's first candidate; False (nothing queued) if one of them is not a
        number."""
        defaults = self.defaults
        if defaults is None:
            return False
        study.enqueue_trial(trial_params(self.space, defaults))
        return True

    def best(self, study: optuna.Study) -> dict[str, Number]:
        """The policy's values of ``study``'s best trial."""
        return values_of(self.space, study.best_params)


def create_study(
    objective: Objective,
    *,
    seed: int | None = None,
    sampler: optuna.samplers.BaseSampler | None = None,
    defaults_first: bool = True,
    **kwargs: Any,
) -> optuna.Study:
    """A study that minimises ``objective``: Optuna's TPE sampler with ``seed`` (or
    ``sampler``), and, with ``defaults_first``, the configuration's own values as its
    first trial (as ``numaplace tune`` starts from them). Other keywords go to
    ``optuna.create_study`` (``storage``, ``study_name``, ...)."""
    try:
        import optuna
    except ImportError as e:
        raise ImportError(
            "numaplace.optuna needs Optuna: pip install optuna (or numaplace[optuna])"
        ) from e
    study = optuna.create_study(
        direction="minimize",
        sampler=sampler if sampler is not None else optuna.samplers.TPESampler(seed=seed),
        **kwargs,
    )
    if defaults_first:
        objective.enqueue_defaults(study)
    return study
