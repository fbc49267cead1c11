#!/bin/sh
# Node labels and taints of the plan. The node names are the plan's: replace each with the
# name of the node of that pool you give the role to. The MIG manager re-partitions a node when
# its nvidia.com/mig.config label changes, and stops the GPU pods on it while it does.
set -eu
kubectl label node h100-0 --overwrite gpu-trust.io/pool=h100 nvidia.com/mig.config=gpu-trust-mig-1
kubectl taint node h100-0 --overwrite gpu-trust.io/tenants=shared-1:NoSchedule
kubectl label node h100-1 --overwrite gpu-trust.io/pool=h100 nvidia.com/mig.config=gpu-trust-mig-2
kubectl taint node h100-1 --overwrite gpu-trust.io/tenants=acme:NoSchedule
kubectl label node h100-2 --overwrite gpu-trust.io/pool=h100 nvidia.com/mig.config=gpu-trust-mig-3
kubectl taint node h100-2 --overwrite gpu-trust.io/tenants=shared-2:NoSchedule
kubectl label node l40s-0 --overwrite gpu-trust.io/pool=l40s
kubectl taint node l40s-0 --overwrite gpu-trust.io/tenants=search:NoSchedule
