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

Neighbouring inputs. A guarantee means nothing without the relation it is stated for. Each spend
names it: ``relation="add-remove"`` (unbounded DP: the inputs differ by one ``unit`` added or
removed, so the number of units is itself protected) or ``relation="replace"`` (bounded DP: one
unit's data replaced, so the number of units is public; paper 000's friend graph on n public
users, the per-event anonymizers). Spends of one unit under one relation add up. Where they mix,
the totals are stated for replace-one: an add/remove epsilon-DP step is (2 epsilon, (1 + e^epsilon)
delta)-DP under replacement (a replacement is a removal then an addition; group privacy, Dwork and
Roth, Theorem 2.2), while a replace-one step says nothing under add/remove.

What no spend covers. An output can depend on the data outside every DP step: a location space
of the most visited POIs, a grid over the data's own bounding box, a time axis that starts on the
earliest record's date, or a method fitted without DP. Such facts are kept in ``uncovered`` and
stated beside the totals: epsilon then covers only the listed steps, not the whole output.

A ledger travels with a prepared TraceSet, a fitted model (``model.json``), with every TraceSet
sampled from it or transformed by an anonymizer (``meta.json``) and with every release (the card).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .errors import InputError
from .validation import check_delta, check_epsilon, check_sensitivity

#: the neighbour relations a spend can be stated for (module docstring)
RELATIONS = ("add-remove", "replace")


def neighbours(unit: str, relation: str) -> str:
    """'one user added or removed' / 'one user's data replaced (the number of users is public)'."""
    base, _, detail = unit.partition(" (")
    detail = f" ({detail}" if detail else ""
    if relation == "replace":
        return f"one {base}'s data replaced{detail}, the number of {base}s public"
    return f"one {base} added or removed{detail} (unbounded DP)"


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
    relation : str
        ``"add-remove"`` (one unit added or removed) or ``"replace"`` (one unit's data replaced,
        the number of units public); module docstring.
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
    relation: str = "add-remove"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.sensitivity is not None:
            object.__setattr__(self, "sensitivity", check_sensitivity(self.sensitivity))
        if not self.unit:
            raise InputError("a privacy spend needs its unit (what neighbouring inputs differ in)")
        if self.relation not in RELATIONS:
            raise InputError(f"unknown neighbour relation {self.relation!r}; expected one of {', '.join(RELATIONS)}")

    def neighbours(self) -> str:
        """What two neighbouring inputs differ in, in words."""
        return neighbours(self.unit, self.relation)


@dataclass
class Ledger:
    """The spends of one model, synthetic set or release, in the order they happened, and what
    the output depends on that no spend covers (``uncovered``)."""

    spends: list[Spend] = field(default_factory=list)
    uncovered: list[str] = field(default_factory=list)

    def record(self, mechanism: str, epsilon: float, delta: float = 0.0, sensitivity: float | None = None,
               unit: str = "user", saw: str = "", assumptions: str = "", holds: bool = True,
               relation: str = "add-remove") -> Spend:
        """Append a spend and return it."""
        spend = Spend(mechanism, epsilon, delta, sensitivity, unit, saw, assumptions, holds, relation)
        self.spends.append(spend)
        return spend

    def note_uncovered(self, fact: str) -> None:
        """Record that the output depends on the data through ``fact``, outside every spend."""
        if fact not in self.uncovered:
            self.uncovered.append(fact)

    def __bool__(self) -> bool:
        return bool(self.spends) or bool(self.uncovered)

    def __len__(self) -> int:
        return len(self.spends)

    def copy(self) -> "Ledger":
        return Ledger(list(self.spends), list(self.uncovered))

    def merged(self, other: "Ledger | None") -> "Ledger":
        """This ledger's spends followed by ``other``'s (both protect the same people)."""
        out = self.copy()
        if other:
            out.spends += list(other.spends)
            for fact in other.uncovered:
                out.note_uncovered(fact)
        return out

    @property
    def claims_dp(self) -> bool:
        """Whether any spend holds: the output then claims some differential privacy, and must not
        state what the spends protect (exact sizes of the training data)."""
        return any(s.holds for s in self.spends)

    def sizes_public(self) -> bool:
        """Whether every spend that holds is stated for replace-one neighbours, under which the
        numbers of units are public (and may be stated exactly)."""
        return all(s.relation == "replace" for s in self.spends if s.holds)

    def totals(self) -> dict[str, dict]:
        """Per unit of privacy: the neighbour relation, epsilon and delta of the spends that hold
        by basic composition (mixed relations stated for replace-one, module docstring), and how
        many spends are bounds only (``holds=False``)."""
        out: dict[str, dict] = {}
        for unit in dict.fromkeys(s.unit for s in self.spends):
            held = [s for s in self.spends if s.unit == unit and s.holds]
            relation = "replace" if any(s.relation == "replace" for s in held) else "add-remove"
            eps = delta = 0.0
            for s in held:
                if relation == "replace" and s.relation == "add-remove":
                    eps, delta = eps + 2 * s.epsilon, delta + (1 + math.exp(s.epsilon)) * s.delta
                else:
                    eps, delta = eps + s.epsilon, delta + s.delta
            out[unit] = {"epsilon": eps, "delta": min(1.0, delta), "relation": relation,
                         "neighbours": neighbours(unit, relation), "spends": len(held),
                         "bounds_only": sum(1 for s in self.spends if s.unit == unit and not s.holds)}
        return out

    def describe(self) -> list[str]:
        """One line per unit ('per user (one user added or removed (unbounded DP)): epsilon = 2,
        delta = 0, basic composition of 3 spends'), then one per fact no spend covers."""
        lines = []
        for unit, t in self.totals().items():
            if t["spends"]:
                text = (f"per {unit} (neighbouring inputs: {t['neighbours']}): epsilon = {t['epsilon']:.4g}, "
                        f"delta = {t['delta']:.3g} (basic composition of {t['spends']} "
                        f"spend{'s' if t['spends'] > 1 else ''})")
            else:
                text = f"per {unit}: no differential-privacy guarantee"
            if t["bounds_only"]:
                bounds = [s for s in self.spends if s.unit == unit and not s.holds]
                text += "; " + "; ".join(f"{s.mechanism} would give epsilon = {s.epsilon:.4g} only under "
                                         f"assumptions not met here" for s in bounds)
            lines.append(text)
        if self.uncovered and self.claims_dp:
            lines.append("epsilon covers only the steps above, not the whole output: " + "; ".join(self.uncovered))
        elif self.uncovered:
            lines.append("not covered by any differential privacy: " + "; ".join(self.uncovered))
        return lines

    # -- persistence ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"composition": "basic", "spends": [asdict(s) for s in self.spends], "totals": self.totals(),
                "uncovered": list(self.uncovered)}

    @classmethod
    def from_dict(cls, data: dict | None) -> "Ledger":
        """The ledger written by :meth:`to_dict` (an empty one for None)."""
        if not data:
            return cls()
        if not isinstance(data, dict) or not isinstance(data.get("spends"), list):
            raise InputError("the privacy ledger is damaged: expected {'spends': [...]}")
        names = set(Spend.__dataclass_fields__)
        try:
            spends = [Spend(**{k: v for k, v in s.items() if k in names}) for s in data["spends"]]
        except TypeError as exc:
            raise InputError(f"the privacy ledger is damaged: {exc}") from None
        uncovered = data.get("uncovered") or []
        if not isinstance(uncovered, list) or not all(isinstance(x, str) for x in uncovered):
            raise InputError("the privacy ledger is damaged: 'uncovered' must be a list of texts")
        return cls(spends, list(uncovered))
