"""``statinterp review``: read a term's ranked sentences in the browser, label them, re-rank.

* :mod:`.session` -- the review of one term (rankings, near-duplicate groups, filters, labels,
  re-ranking with the reviewer's labels); plain Python, no web framework.
* :mod:`.markup` -- HTML-escaped text with the term or the sentence highlighted.
* :mod:`.views`, :mod:`.errors` -- the route table and URLs, one view per route; the HTTP errors.
* :mod:`.server` -- the app (:class:`~.server.ReviewApp`: routes, CSRF and access-token
  middleware, error pages), the connection limits and :func:`~.server.serve`.
* ``templates/`` and ``static/`` -- Jinja2 pages, one small vanilla-JS file and one stylesheet.

The labels themselves live in :mod:`statinterp.corpus.labels`.
"""
