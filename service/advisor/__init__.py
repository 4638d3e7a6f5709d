"""The arrangement advisor ("gợi ý"): the split with the best expected result.

One module a layer: ``splits`` (enumeration and legality), ``opponents`` (the field tables),
``expectation`` (a split's expected units), ``search`` (the bounded search) and ``advise``.

Method (docs/advisor.md):

1. The 13 cards are evaluated once: every 5-card subset (1,287) and 3-card subset (286),
   vectorised with numpy on the same strength scale as the scoring pipeline.
2. Every one of the 72,072 splits is then a triple of subset indices; fouled splits are dropped.
3. Each split is scored against *a field*: for each position, the distribution of one opponent's
   hand strength there, shipped as package data (``scripts/build_field.py``, seeded). Two fields:
   ``strong`` (the default), opponents who arrange as this advisor does, built per built-in
   ruleset by fictitious play; ``weak``, random hands arranged by the lexicographic rule. From the
   field, per subset: P(win), P(loss), the chi value the ruleset pays us when we win (bonus table)
   and the chi value we expect to pay when we lose. The expectation adds the scoop (the ruleset's
   multiplier for its smallest room, one scooper, on its basis: the total, or the 3 chi) assuming
   the three positions are independent. House rules are weighed as they are: the bonus table and
   its mode, the scoop multiplier and basis. A fixed foul payment and the sweep multiplier never
   apply in this model: neither the advisor nor the field fouls, and a heads-up room has nobody
   to sweep.
4. The search values splits back by back (a back and its 56 middle/front pairs): first the 32 backs
   with the highest upper bounds, then only the backs whose bound reaches the best splits found. It
   returns what valuing all 72,072 would, for a fraction of the work (tests/unit/test_arrange.py).
5. Instant wins: every pattern the cards (or some legal split) qualify for is reported; in a
   declared ruleset the advisor says whether declaring (its units, for sure) beats playing out.

Limits: one opponent (heads-up); the field ignores which cards we hold; positions are treated as
independent for scoops; aces (chi Át) are not weighed.

May import: service.scoring (it asks the settlement, never restates it), service.contract, service.rulesets,
service.game, service.support, service.texts; never the request layers, HTTP or signing.
"""

from service.advisor.advise import Advice, advise, build_tables
from service.advisor.search import Suggestion

__all__ = ["Advice", "Suggestion", "advise", "build_tables"]
