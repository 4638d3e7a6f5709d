"""The game itself: cards (``cards``), 3- and 5-card hands on one strength scale (``hand_strengths``
builds the scale and its tables, ``hands`` evaluates and names a hand), the instant-win patterns
(``patterns``) and a hand as players say it against the hand it met (``hand_words``).

Nothing here knows a ruleset, a request or HTTP: it is the vocabulary every layer above shares.
May import: service.texts, service.package_files, the standard library (numpy only where hands are
evaluated many at once).
"""
