#!/bin/sh
# The base image the Dockerfiles' FROM names (python:3.11-slim), bootstrapped from Debian's packages
# where no container registry can be reached: Debian bookworm (minbase) with Debian's Python 3.11 and
# venv, imported into podman under the very name FROM uses, so the same Dockerfiles build unchanged
# where the registry is reachable. Does nothing when an image of that name is already there.
set -eu
NAME="${BASE_IMAGE:-docker.io/library/python:3.11-slim}"
PODMAN="${PODMAN:-podman}"
if "$PODMAN" image exists "$NAME"; then
    exit 0
fi
mmdebstrap --quiet --variant=minbase --include=python3,python3-venv,ca-certificates \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    bookworm - \
    | "$PODMAN" import --change 'ENV LANG=C.UTF-8' --change 'CMD ["python3"]' - "$NAME" >/dev/null
echo "base image $NAME: Debian bookworm, $("$PODMAN" run --rm --ulimit nofile=20000:20000 --ulimit nproc=32768:32768 "$NAME" python3 --version)"
