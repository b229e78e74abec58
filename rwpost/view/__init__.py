"""``rwpost view``: a local, read-only web view of a published version, a work folder, evaluation runs
and leaderboards (:mod:`rwpost.view.app`), paged on the server (:mod:`rwpost.view.tables`)."""
