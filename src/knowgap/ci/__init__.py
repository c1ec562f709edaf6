"""knowgap in CI: run an evaluation, then put its summary where a team reads it.

- :mod:`knowgap.ci.evaluate`: ``knowgap ci run``: runs ``knowgap eval FILE`` (or ``knowgap run SUITE`` and
  ``knowgap gate``) as a subprocess, keeps its exit code, and says where the markdown summary and the HTML
  report are (on GitHub Actions also as step outputs).
- :mod:`knowgap.ci.github`: the job summary and one pull-request comment, updated by later runs.
- :mod:`knowgap.ci.gitlab`: one merge-request note, updated by later runs.
- :mod:`knowgap.ci.note`: the marker that finds the comment again, and the comment's body.
- :mod:`knowgap.ci.forge_api`: a small JSON client over ``urllib`` (no dependency) that never shows the token.

The GitHub Action (``action.yml`` at the repository root) and the GitLab template
(``ci/gitlab/knowgap.gitlab-ci.yml``) are thin shell steps over ``knowgap ci``; docs/ci.md describes both.
"""
