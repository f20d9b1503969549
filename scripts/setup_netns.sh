#!/usr/bin/env bash
# Prepares a machine for the real network (maelstrom/netns, --network netns).
#
# The package itself runs no external program: it speaks netlink and
# nftables through Go libraries. What this installs are the kernel tools a
# person and the package's tests use to look at the result: `ip` and `tc`
# (Debian package iproute2) and `nft` (nftables). TestCloseLeavesNothing
# compares `ip netns list`, `ip -o link`, `nft list ruleset` and `tc qdisc`
# in the root namespace before and after a lab when they are installed.
#
# Idempotent: quiet apart from one line when everything is present; runs
# `apt-get update` once, and only when something is missing. Needs root
# (the real network needs it anyway): exits 1 with a message otherwise.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "setup_netns: needs root: installing packages and building network namespaces both do (run it with sudo)" >&2
  exit 1
fi

# command -> Debian package that provides it
declare -A package_of=([ip]=iproute2 [tc]=iproute2 [nft]=nftables)
missing=()
for cmd in ip tc nft; do
  command -v "$cmd" >/dev/null 2>&1 && continue
  pkg=${package_of[$cmd]}
  [[ " ${missing[*]} " == *" $pkg "* ]] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup_netns: ip, tc (iproute2) and nft (nftables) are already installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup_netns: ${missing[*]} missing and there is no apt-get here: install them with this system's package manager" >&2
  exit 1
fi
echo "setup_netns: installing ${missing[*]} from Debian's packages"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
for cmd in ip tc nft; do
  command -v "$cmd" >/dev/null 2>&1 || { echo "setup_netns: $cmd is still missing after installing ${missing[*]}" >&2; exit 1; }
done
echo "setup_netns: installed ${missing[*]} (ip, tc and nft are on PATH)"
