#!/bin/sh
# Renders an overlay with the images `make images` builds from this checkout: accelopt/<service>:<git short
# revision>, optionally pushed under REGISTRY (e.g. 123456789012.dkr.ecr.us-east-1.amazonaws.com).
#   deploy/kubernetes/render.sh dev | kubectl apply -f -
#   deploy/kubernetes/render.sh eks-trn 123456789012.dkr.ecr.us-east-1.amazonaws.com | kubectl apply -f -
# TAG=<rev> overrides the revision (e.g. to roll back to images built earlier).
set -eu
overlay=${1:?usage: render.sh OVERLAY [REGISTRY]}
registry=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
[ -d "$here/overlays/$overlay" ] || { echo "render.sh: no overlay '$overlay' in $here/overlays" >&2; exit 2; }
tag=${TAG:-$(git -C "$here" rev-parse --short HEAD)}
prefix=${registry:+$registry/}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# kustomize only loads paths below the kustomization's directory: wrap a copy of the tree.
cp -r "$here/base" "$here/overlays" "$here/components" "$work/"
{
  echo "apiVersion: kustomize.config.k8s.io/v1beta1"
  echo "kind: Kustomization"
  echo "resources: [overlays/$overlay]"
  echo "images:"
  for service in orchestrator planner executor memory profiler; do
    echo "  - {name: accelopt/$service, newName: ${prefix}accelopt/$service, newTag: \"$tag\"}"
  done
} > "$work/kustomization.yaml"
kubectl kustomize "$work"
