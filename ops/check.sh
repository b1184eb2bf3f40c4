#!/usr/bin/env bash
# Checks the shipped alerting rules: syntax (`promtool check rules`) and every rule's unit tests
# (`promtool test rules`). promtool comes with Debian's `prometheus` package; when it is missing
# it is installed with apt-get if this runs as root on a machine with apt, otherwise the script
# stops with one line saying what to install. Never starts a Prometheus server.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v promtool >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "ops/check.sh: promtool missing, installing Debian's prometheus package (promtool only is used)" >&2
    # policy-rc.d 101: the package must not start a prometheus daemon while it installs.
    policy=/usr/sbin/policy-rc.d
    created_policy=0
    if [ ! -e "$policy" ]; then
      printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1
    fi
    status=0
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; } >&2 || status=$?
    if [ "$created_policy" = "1" ]; then rm -f "$policy"; fi
    if [ "$status" != "0" ]; then
      echo "ops/check.sh: apt-get install prometheus failed (exit $status)" >&2
      exit "$status"
    fi
  else
    echo "ops/check.sh: promtool not found: install Debian/Ubuntu package 'prometheus' (apt-get install prometheus) or put promtool from https://prometheus.io/download/ on PATH" >&2
    exit 1
  fi
fi

promtool check rules ops/prometheus/alerts.yml
promtool test rules ops/prometheus/alerts.test.yml
