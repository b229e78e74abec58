"""Human validation in Label Studio (paper sections III-D and V-D).

``server`` starts a loopback Label Studio from its own virtual environment, ``tasks`` turns records into
labeling tasks, ``sync`` pushes tasks and pulls annotations through ``label-studio-sdk``, ``verdicts``
converts annotations back into typed records, ``agreement`` and ``explanations`` compute the statistics,
and ``merge`` applies human verdicts to samples. The labeling configs (XML) and guidelines live in the
build project's ``annotation/`` folder; nothing here imports from it, the configs are read as files.
"""
