"""The built-in detectors: baselines, the embedding + classifier, the API vision-language model, a local
vision-language model (``transformers``, GPU) and AgentFact (the paper's agents). Each is imported only
when its name is used (see :mod:`rwpost.evaluate.registry`)."""
