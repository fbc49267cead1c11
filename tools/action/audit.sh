#!/usr/bin/env bash
# The GitHub Action's audit step (action.yml): runs `gpu-trust audit` with the action's inputs,
# writes the SARIF log and the Markdown job summary, and records the exit code as the step output
# `exit-code` without failing, so that the SARIF is uploaded before the action ends with that code.
#
# Environment: INPUT_ARGS (the audit's paths and options, separated by spaces or new lines), INPUT_SARIF
# (the SARIF file), INPUT_SUMMARY (true: the Markdown summary goes to GITHUB_STEP_SUMMARY),
# GPU_TRUST (the binary; default gpu-trust on PATH), GITHUB_WORKSPACE (the repository root the
# SARIF URIs are relative to), GITHUB_SERVER_URL, GITHUB_REPOSITORY and GITHUB_SHA (the summary's
# links to files), GITHUB_OUTPUT and GITHUB_STEP_SUMMARY.
set -uo pipefail

gpu_trust="${GPU_TRUST:-gpu-trust}"
# Word splitting only: no globbing, no command or variable in the inputs is run. Every line is read
# (`-d ''`: up to the end, not the first newline), so a block scalar with one path per line audits
# every path; read's status at the end of its input is not an error.
set -f
read -r -d '' -a args <<<"${INPUT_ARGS:-}" || true
set +f

sarif="${INPUT_SARIF:-gpu-trust.sarif}"
outputs=(--output "sarif=$sarif")
if [ "${INPUT_SUMMARY:-true}" = true ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  outputs+=(--output "markdown=$GITHUB_STEP_SUMMARY")
  if [ -n "${GITHUB_SERVER_URL:-}" ] && [ -n "${GITHUB_REPOSITORY:-}" ] && [ -n "${GITHUB_SHA:-}" ]; then
    outputs+=(--link-base "$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/blob/$GITHUB_SHA/")
  fi
fi
root=()
if [ -n "${GITHUB_WORKSPACE:-}" ]; then
  root=(--sarif-root "$GITHUB_WORKSPACE")
fi

# (`${a[@]+"${a[@]}"}`: an empty array under `set -u` on the bash 3.2 of macOS runners.)
"$gpu_trust" audit ${args[@]+"${args[@]}"} "${outputs[@]}" ${root[@]+"${root[@]}"}
code=$?
echo "gpu-trust audit exited $code (0 clean, 1 findings at or above --fail-on, 2 unusable input or a partial audit)"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "exit-code=$code" >>"$GITHUB_OUTPUT"
  if [ -f "$sarif" ]; then
    echo "sarif=$sarif" >>"$GITHUB_OUTPUT"
  fi
fi
exit 0
