"""The privacy ledger: what every differentially private step spent, and what it adds up to.

A ledger only records (as Opacus' accountants do); the mechanisms in this package do the
mathematics and call :meth:`Ledger.record` with what they used. Each :class:`Spend` names its
mechanism, epsilon, delta, sensitivity, the *unit of privacy* (what two neighbouring inputs
differ in: one ``user``'s data, one ``event``, one ``location`` ...), what it saw and under which
assumptions. Spends on the same unit add up by basic composition (epsilons and deltas sum,
Dwork and Roth, Theorem 3.16); a method with a tighter accountant (DP-SGD's RDP accountant)
records its composed figure as one spend. A spend marked ``holds=False`` is a bound the paper
derives under assumptions the implementation does not meet (PPMTF's Appendix F): it is shown,
never counted as a guarantee.

A ledger travels with a fitted model (``model.json``), with every TraceSet sampled from it or
transformed by an anonymizer (``meta.json``) and with every release (the release card).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from ..errors import InputError


@dataclass(frozen=True)
class Spend:
    """One DP step.

    Attributes
    ----------
    mechanism : str
        E.g. ``"laplace"``, ``"discrete-laplace"``, ``"randomized-response"``,
        ``"planar-laplace"``, ``"privelet"``, ``"posterior-sampling"``.
    epsilon, delta : float
        The step's guarantee (for ``holds=False``, the paper's bound).
    sensitivity : float or None
        The sensitivity the noise was calibrated to (L1 for Laplace-type mechanisms; None where
        the mechanism has none, as randomized response).
    unit : str
        What neighbouring inputs differ in: ``"user"``, ``"trace"``, ``"event"``, ``"location"``.
    saw : str
        What the step read, e.g. "transition counts of 500 training users, trimmed at 10 per user".
    assumptions : str
        What the guarantee rests on (public quantities, trimming, exact sampling ...).
    holds : bool
        False when the guarantee needs assumptions this implementation does not meet.
    """

    mechanism: str
    epsilon: float
    delta: float = 0.0
    sensitivity: float | None = None
    unit: str = "user"
    saw: str = ""
    assumptions: str = ""
    holds: bool = True

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.sensitivity is not None:
            object.__setattr__(self, "sensitivity", check_sensitivity(self.sensitivity))
        if not self.unit:
            raise InputError("a privacy spend needs its unit (what neighbouring inputs differ in)")


@dataclass
class Ledger:
    """The spends of one model, synthetic set or release, in the order they happened."""

    spends: list[Spend] = field(default_factory=list)

    def record(self, mechanism: str, epsilon: float, delta: float = 0.0, sensitivity: float | None = None,
               unit: str = "user", saw: str = "", assumptions: str = "", holds: bool = True) -> Spend:
        """Append a spend and return it."""
        spend = Spend(mechanism, epsilon, delta, sensitivity, unit, saw, assumptions, holds)
        self.spends.append(spend)
        return spend

    def __bool__(self) -> bool:
        return bool(self.spends)

    def __len__(self) -> int:
        return len(self.spends)

    def copy(self) -> "Ledger":
        return Ledger(list(self.spends))

    def merged(self, other: "Ledger | None") -> "Ledger":
        """This ledger's spends followed by ``other``'s (both protect the same people)."""
        return Ledger(self.spends + (list(other.spends) if other else []))

    def totals(self) -> dict[str, dict]:
        """Per unit of privacy: epsilon and delta of the spends that hold, by basic composition,
        and how many spends are bounds only (``holds=False``)."""
        out: dict[str, dict] = {}
        for s in self.spends:
            entry = out.setdefault(s.unit, {"epsilon": 0.0, "delta": 0.0, "spends": 0, "bounds_only": 0})
            if s.holds:
                entry["epsilon"] += s.epsilon
                entry["delta"] = min(1.0, entry["delta"] + s.delta)
                entry["spends"] += 1
            else:
                entry["bounds_only"] += 1
        return out

    def describe(self) -> list[str]:
        """One line per unit: 'per user: epsilon = 2, delta = 0 (basic composition of 3 spends)'."""
        lines = []
        for unit, t in self.totals().items():
            if t["spends"]:
                text = (f"per {unit}: epsilon = {t['epsilon']:.4g}, delta = {t['delta']:.3g} "
                        f"(basic composition of {t['spends']} spend{'s' if t['spends'] > 1 else ''})")
            else:
                text = f"per {unit}: no differential-privacy guarantee"
            if t["bounds_only"]:
                bounds = [s for s in self.spends if s.unit == unit and not s.holds]
                text += "; " + "; ".join(f"{s.mechanism} would give epsilon = {s.epsilon:.4g} only under "
                                         f"assumptions not met here" for s in bounds)
            lines.append(text)
        return lines

    # -- persistence ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"composition": "basic", "spends": [asdict(s) for s in self.spends], "totals": self.totals()}

    @classmethod
    def from_dict(cls, data: dict | None) -> "Ledger":
        """The ledger written by :meth:`to_dict` (an empty one for None)."""
        if not data:
            return cls()
        if not isinstance(data, dict) or not isinstance(data.get("spends"), list):
            raise InputError("the privacy ledger is damaged: expected {'spends': [...]}")
        names = set(Spend.__dataclass_fields__)
        try:
            return cls([Spend(**{k: v for k, v in s.items() if k in names}) for s in data["spends"]])
        except TypeError as exc:
            raise InputError(f"the privacy ledger is damaged: {exc}") from None


def check_epsilon(epsilon: float, name: str = "epsilon") -> float:
    """epsilon as a float, or an InputError unless it is finite and positive."""
    try:
        value = float(epsilon)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {epsilon!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{name} must be a positive finite number, got {epsilon!r}")
    return value


def check_delta(delta: float) -> float:
    """delta as a float, or an InputError unless 0 <= delta < 1."""
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise InputError(f"delta must be a number, got {delta!r}") from None
    if not (0.0 <= value < 1.0):
        raise InputError(f"delta must be in [0, 1), got {delta!r}")
    return value


def check_sensitivity(sensitivity: float) -> float:
    """sensitivity as a float, or an InputError unless it is finite and positive."""
    return check_epsilon(sensitivity, "sensitivity")
