"""What agentic detectors share, below every detector: one home for each piece of their plumbing.

- one sample's transcript is the contract's :class:`~rwpost.evaluate.contract.Trace` (every model and
  tool call as a ledger row, every result the leakage guard dropped, the images sent), which
  ``RunContext.transcript`` hands out;
- :mod:`~rwpost.evaluate.toolkit.ask`: :class:`Asker`, prompt -> request -> complete -> ledger row;
- :mod:`~rwpost.evaluate.toolkit.tools`: the tools agents call (search, Wikipedia, reverse image, a
  forgery classifier, a model as a tool), their cards, cache and ledger rows, behind the leakage guard;
- :mod:`~rwpost.evaluate.toolkit.cases`: a blinded sample as an agent's case (the news text of the cell);
- :mod:`~rwpost.evaluate.toolkit.toolsets`: tool selection (the T2Agent paper's Algorithm 2) and the
  toolset file it writes; the harness drives it (:mod:`rwpost.evaluate.select`).

Detectors import from here and never from one another; nothing here imports a detector or the harness.
"""
