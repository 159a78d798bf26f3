#!/usr/bin/env bash
# The first step of `npm test` (and of `npm run test:e2e`): what the suites run for real, installed.
# PostgreSQL, Redis, Prometheus, Alertmanager, dnsmasq, a Docker engine and a registry (throwaway
# servers the harness starts on free loopback ports), git, openssl, Chromium and busybox. Installs
# exactly what is missing with apt-get (as root, or through sudo) and stops the system services
# those packages start; where it cannot install, stops at once with one line naming what to install.
set -euo pipefail

missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v git >/dev/null 2>&1 || missing+=(git)                                         # workspaces: clones, refs, the loopback git server
command -v openssl >/dev/null 2>&1 || missing+=(openssl)                                 # the TLS tests make certificates
[ -x /usr/sbin/dnsmasq ] || missing+=(dnsmasq-base)                                      # the example world's resolver
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)                           # metrics tests scrape with a real one
command -v prometheus-alertmanager >/dev/null 2>&1 || missing+=(prometheus-alertmanager) # alert-trigger's real Alertmanager
[ -x /usr/bin/chromium ] || missing+=(chromium)                                          # the console and /docs pages, headless
[ -x /usr/sbin/dockerd ] || missing+=(docker.io)                                         # container-build and image-scan: a private engine per run
[ -x /usr/bin/docker-registry ] || missing+=(docker-registry)                            # container-build's push target
[ -x /bin/busybox ] || missing+=(busybox-static)                                         # the base image (nothing can be pulled)
command -v zsh >/dev/null 2>&1 || missing+=(zsh)                                         # tos completion zsh, run in a real zsh
command -v fish >/dev/null 2>&1 || missing+=(fish)                                       # tos completion fish, run in a real fish

if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "npm test needs what these Debian packages install, and this machine has no apt-get: ${missing[*]}" >&2
    exit 1
  elif [ "$(id -u)" -eq 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null 2>&1 && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
    sudo=(sudo)
  else
    echo "npm test needs these Debian packages; not root and no sudo here, so install them first: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "test/setup.sh: installing ${missing[*]}" >&2
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The packages start system-wide servers; the tests start their own on free ports.
  for service in postgresql redis-server prometheus prometheus-node-exporter prometheus-alertmanager docker.socket docker containerd docker-registry; do
    "${sudo[@]}" systemctl stop "$service" >/dev/null 2>&1 || "${sudo[@]}" service "${service%.socket}" stop >/dev/null 2>&1 || true
  done
fi

# container-build and image-scan start a private Docker engine, which only root can.
if [ "$(id -u)" -ne 0 ]; then
  echo "npm test starts a private Docker engine for the container-build and image-scan suites, which needs root: run it as root (sudo npm test)" >&2
  exit 1
fi
