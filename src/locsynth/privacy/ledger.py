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

Units are nested, and a person is what the headline protects. A user's history holds their
traces, and a trace holds its events (``NESTING``). A spend on one user covers the person; a spend
on one trace (NGRAM's, PrivTrace's, DPTrip's trip) covers a person with k traces k times over
(group privacy, Dwork and Roth, Theorem 2.2: (k epsilon, k e^((k-1) epsilon) delta)), so the
ledger keeps the public bound on the traces a user contributes (``traces_per_user``: 1 where
``prepare`` makes one trace per user, or the bound a method's ``fit`` enforces by dropping a user's
extra traces), and :meth:`Ledger.person` adds every spend that touches one person. A bound enforced
by dropping (``drops``) costs the per-trace line twice: a trace added to a user already at the
bound, listed before the kept ones, displaces one of them, so two traces of the input the method
reads change (one in, one out; group privacy of 2). No deterministic rule that keeps k of a user's
traces avoids it: of k + 1 traces, whichever k it keeps differ in two traces from some k of them.
The per-person line is unaffected (a person added or removed moves at most k kept traces). A spend on one
event (k-RR, planar Laplace) has no bound per person: a person with m events loses m epsilon.

Local and central. A spend is central by default: a curator holds the raw data and adds the noise,
so the guarantee holds against whoever reads the output, not against the curator. A spend marked
``local=True`` is local DP (Kasiviswanathan et al., FOCS 2008; Warner's randomized response): the
unit's own device perturbs its data before anyone collects it, so the guarantee holds against the
collector as well. Local DP compares any two values of one unit's data (its presence is seen by
the collector, who receives one report per unit): a local spend's relation is ``replace``. The
totals say ``local`` where every spend that holds is local; one central spend makes the whole
central (against the collector, only the local spends' epsilon would hold).

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

from ..core.errors import InputError, unknown
from ..core.validation import check_delta, check_epsilon, check_sensitivity

#: the neighbour relations a spend can be stated for (module docstring)
RELATIONS = ("add-remove", "replace")
#: the units of privacy, widest first: a user's history holds their traces, a trace its events
NESTING = ("user", "trace", "event")
#: the key of the per-person headline among :meth:`Ledger.totals`
PERSON = "person"
#: how a guarantee whose spends are all local DP says so (module docstring)
LOCAL_WORDS = "local DP, against the collector as well; "


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
    local : bool
        True for local DP: the unit's own device perturbed its data before anyone collected it, so
        the guarantee holds against the collector too (module docstring); needs ``relation="replace"``.
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
    local: bool = False

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.sensitivity is not None:
            object.__setattr__(self, "sensitivity", check_sensitivity(self.sensitivity))
        if not self.unit:
            raise InputError("a privacy spend needs its unit (what neighbouring inputs differ in)")
        if self.relation not in RELATIONS:
            raise unknown("neighbour relation", self.relation, RELATIONS)
        if not isinstance(self.local, bool):
            raise InputError(f"a privacy spend's 'local' must be true or false, got {self.local!r}")
        if self.local and self.relation != "replace":
            raise InputError("a local-DP spend compares two values of one unit's data: its relation is 'replace' "
                             "(the collector sees every unit's report)")

    def neighbours(self) -> str:
        """What two neighbouring inputs differ in, in words."""
        return neighbours(self.unit, self.relation)


@dataclass
class Ledger:
    """The spends of one model, synthetic set or release, in the order they happened, and what
    the output depends on that no spend covers (``uncovered``)."""

    spends: list[Spend] = field(default_factory=list)
    uncovered: list[str] = field(default_factory=list)
    #: the public bound on the traces one user contributes (None: not bounded)
    traces_per_user: int | None = None
    #: whether the bound is enforced by dropping a user's extra traces (module docstring: the
    #: per-trace line then counts a group of 2)
    drops: bool = False

    def record(self, mechanism: str, epsilon: float, delta: float = 0.0, sensitivity: float | None = None,
               unit: str = "user", saw: str = "", assumptions: str = "", holds: bool = True,
               relation: str = "add-remove", local: bool = False) -> Spend:
        """Append a spend and return it."""
        spend = Spend(mechanism, epsilon, delta, sensitivity, unit, saw, assumptions, holds, relation, local)
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
        return Ledger(list(self.spends), list(self.uncovered), self.traces_per_user, self.drops)

    def bound_traces(self, k: int, drops: bool = False) -> None:
        """Record that every user contributes at most ``k`` traces (a public bound that whoever
        records it enforces; ``drops``: by dropping a user's extra traces, module docstring); two
        bounds give the smaller."""
        k = int(k)
        if k < 1:
            raise InputError(f"a bound on the traces per user must be at least 1, got {k}")
        self.traces_per_user = k if self.traces_per_user is None else min(self.traces_per_user, k)
        self.drops = self.drops or bool(drops)

    def merged(self, other: "Ledger | None") -> "Ledger":
        """This ledger's spends followed by ``other``'s (both protect the same people)."""
        out = self.copy()
        if other:
            out.spends += list(other.spends)
            for fact in other.uncovered:
                out.note_uncovered(fact)
            if other.traces_per_user is not None:
                out.bound_traces(other.traces_per_user, other.drops)
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
        """The headline per person (:meth:`person`, key ``"person"``) and then, per unit of privacy,
        the neighbour relation, epsilon and delta of the spends that hold by basic composition
        (mixed relations stated for replace-one, module docstring), whether they are all local
        (``local``: the guarantee holds against the collector too), and how many spends are bounds
        only (``holds=False``)."""
        out: dict[str, dict] = {}
        if any(s.holds for s in self.spends):
            out[PERSON] = self.person()
        for unit in dict.fromkeys(s.unit for s in self.spends):
            held = [s for s in self.spends if s.unit == unit and s.holds]
            displaces = unit == "trace" and self.drops
            eps, delta, relation = _compose(held, 1, displaced=displaces)
            words = neighbours(unit, relation)
            if displaces and relation == "add-remove":
                words += (f"; a trace added to a user already at the bound of {self.traces_per_user} displaces a "
                          f"kept one: two traces change")
            out[unit] = {"epsilon": eps, "delta": min(1.0, delta), "relation": relation, "local": _local(held),
                         "neighbours": words, "spends": len(held),
                         "bounds_only": sum(1 for s in self.spends if s.unit == unit and not s.holds)}
        return out

    def person(self) -> dict:
        """What one person loses: every spend that holds, a spend on one trace counted
        ``traces_per_user`` times (group privacy), one on an event or on another unit unbounded
        (epsilon and delta None). Fields as in :meth:`totals`, plus ``traces_per_user`` and
        ``unbounded`` (the units that leave the person without a bound)."""
        held = [s for s in self.spends if s.holds]
        k = self.traces_per_user
        unbounded = sorted({s.unit for s in held if s.unit not in ("user", "trace")
                            or (s.unit == "trace" and k is None)})
        eps, delta, relation = _compose([s for s in held if s.unit == "user"], 1)
        e2, d2, r2 = _compose([s for s in held if s.unit == "trace"], k or 1)
        relation = "replace" if "replace" in (relation, r2) else "add-remove"
        eps, delta = (None, None) if unbounded else (eps + e2, min(1.0, delta + d2))
        words = ("one person's data (every trace of theirs) replaced, the number of people public"
                 if relation == "replace" else "one person (every trace of theirs) added or removed (unbounded DP)")
        return {"epsilon": eps, "delta": delta, "relation": relation, "local": _local(held), "neighbours": words,
                "spends": len(held), "bounds_only": 0, "traces_per_user": k, "unbounded": unbounded}

    def describe(self) -> list[str]:
        """The headline per person ('per person (neighbouring inputs: ...): epsilon = 3, delta = 0,
        basic composition of 2 spends, each user contributing at most 1 trace'), one line per unit,
        then one per fact no spend covers."""
        lines = []
        for unit, t in self.totals().items():
            if unit == PERSON:
                lines.append(_person_line(t))
                continue
            if t["spends"]:
                text = (f"per {unit} ({LOCAL_WORDS if t['local'] else ''}neighbouring inputs: {t['neighbours']}): "
                        f"epsilon = {t['epsilon']:.4g}, "
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
                "uncovered": list(self.uncovered), "traces_per_user": self.traces_per_user, "drops": self.drops}

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
        bound = data.get("traces_per_user")
        if bound is not None and (not isinstance(bound, int) or bound < 1):
            raise InputError("the privacy ledger is damaged: 'traces_per_user' must be a whole number >= 1")
        return cls(spends, list(uncovered), bound, bool(data.get("drops", False)))


def _compose(spends: list[Spend], k: int, displaced: bool = False) -> tuple[float, float, str]:
    """(epsilon, delta, relation) of ``spends`` by basic composition, each counted for a group of
    ``k`` units (Dwork and Roth, Theorem 2.2: (k epsilon, k e^((k-1) epsilon) delta)), of 2 k
    units where ``displaced`` and the relation is add/remove (a bound enforced by dropping, module
    docstring); mixed relations stated for replace-one (module docstring)."""
    relation = "replace" if any(s.relation == "replace" for s in spends) else "add-remove"
    if displaced and relation == "add-remove":
        k = 2 * k
    eps = delta = 0.0
    for s in spends:
        e = k * s.epsilon
        d = k * math.exp(min((k - 1) * s.epsilon, 700.0)) * s.delta if s.delta else 0.0   # 700: exp's range
        if relation == "replace" and s.relation == "add-remove":
            e, d = 2 * e, (1 + math.exp(e)) * d
        eps, delta = eps + e, delta + d
    return eps, delta, relation


def _local(held: list[Spend]) -> bool:
    """Whether every spend of ``held`` (at least one) is local DP."""
    return bool(held) and all(s.local for s in held)


def _person_line(t: dict) -> str:
    """The per-person headline in words."""
    if t["unbounded"]:
        return (f"per person: no bound: spends on one {' or one '.join(t['unbounded'])} add up over every {' or '.join(t['unbounded'])} of a person, "
                f"whose number is not bounded")
    k = t["traces_per_user"]
    each = f", each user contributing at most {k} trace{'s' if k != 1 else ''}" if k is not None else ""
    return (f"per person ({LOCAL_WORDS if t['local'] else ''}neighbouring inputs: {t['neighbours']}): "
            f"epsilon = {t['epsilon']:.4g}, "
            f"delta = {t['delta']:.3g} (basic composition of {t['spends']} spend{'s' if t['spends'] > 1 else ''}"
            f"{each})")
