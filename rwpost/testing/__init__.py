"""Loopback servers for tests, benchmarks and demos (127.0.0.1 only, never part of a pipeline's output).

- :mod:`rwpost.testing.server`: the one small server base (a threaded HTTP server on a free port,
  started and stopped as a context manager) the others build on.
- :mod:`rwpost.testing.llm`: a scripted OpenAI-compatible server, with recording and replay.

The sample Snopes-like site's server (:class:`rwpost.sample.serve.SampleServer`) uses the same base.
"""
