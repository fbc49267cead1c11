#!/usr/bin/env bash
# The migration of the current cluster to the plan examples/plan/plan.yaml, written by `gpu-trust plan --current`.
# Without arguments it prints what it would run; with --apply it runs it.
# The audit of the planned state: clean (no finding at or above high).
set -euo pipefail

apply=false
accept_risk=false
for arg in "$@"; do
  case "$arg" in
    --apply) apply=true ;;
    --accept-driver-risk) accept_risk=true ;;
    *)
      echo "usage: $0 [--apply] [--accept-driver-risk]" >&2
      exit 2
      ;;
  esac
done

# Runs a command with --apply; otherwise prints it.
run() {
  if [ "$apply" = true ]; then
    "$@"
  else
    printf '+'
    printf ' %q' "$@"
    printf '\n'
  fi
}

# Runs a command that reads a document on standard input; otherwise prints both.
run_with_input() {
  if [ "$apply" = true ]; then
    "$@"
  else
    printf '+'
    printf ' %q' "$@"
    printf ' <<EOF\n'
    cat
    printf 'EOF\n'
  fi
}

# Warns before a node is repartitioned on a driver the advisory data warns about; with --apply,
# stops unless --accept-driver-risk was given.
driver_risk() {
  printf 'warning: %s\n' "$2" >&2
  if [ "$apply" = true ] && [ "$accept_risk" = false ]; then
    printf 'stopping before node %s: pass --accept-driver-risk to repartition it anyway\n' "$1" >&2
    exit 3
  fi
}

echo '== configs: the mig-parted and device plugin ConfigMaps, the ClusterPolicy'
run_with_input kubectl apply -f - <<'GPU_TRUST_EOF'
apiVersion: v1
data:
  config.yaml: |
    version: v1
    mig-configs:
      all-disabled:
      - devices: all
        mig-enabled: false
        mig-devices: {}
      gpu-trust-mig-1:
      - device-filter:
        - "0x233010DE"
        - "0x232410DE"
        devices:
        - 0
        - 1
        - 2
        - 3
        - 7
        mig-enabled: false
        mig-devices: {}
      - device-filter:
        - "0x233010DE"
        - "0x232410DE"
        devices:
        - 4
        mig-enabled: true
        mig-devices:
          1g.10gb: 4
      - device-filter:
        - "0x233010DE"
        - "0x232410DE"
        devices:
        - 5
        - 6
        mig-enabled: true
        mig-devices:
          3g.40gb: 2
      gpu-trust-mig-2:
      - device-filter:
        - "0x233010DE"
        - "0x232410DE"
        devices:
        - 1
        - 2
        - 3
        - 4
        - 5
        - 6
        - 7
        mig-enabled: false
        mig-devices: {}
      - device-filter:
        - "0x233010DE"
        - "0x232410DE"
        devices:
        - 0
        mig-enabled: true
        mig-devices:
          3g.40gb: 2
      gpu-trust-mig-3:
      - device-filter:
        - "0x233010DE"
        - "0x232410DE"
        devices:
        - 2
        - 3
        - 4
        - 5
        - 6
        - 7
        mig-enabled: false
        mig-devices: {}
      - device-filter:
        - "0x233010DE"
        - "0x232410DE"
        devices:
        - 0
        mig-enabled: true
        mig-devices:
          1g.10gb: 4
          3g.40gb: 1
      - device-filter:
        - "0x233010DE"
        - "0x232410DE"
        devices:
        - 1
        mig-enabled: true
        mig-devices:
          1g.10gb: 1
          3g.40gb: 1
kind: ConfigMap
metadata:
  name: gpu-trust-mig-parted-config
  namespace: gpu-operator
GPU_TRUST_EOF
run_with_input kubectl apply -f - <<'GPU_TRUST_EOF'
apiVersion: v1
data:
  exclusive: |
    version: v1
    flags:
      migStrategy: mixed
      failOnInitError: true
      plugin:
        deviceListStrategy: volume-mounts
  mps-1: |
    version: v1
    flags:
      migStrategy: none
      failOnInitError: true
      plugin:
        deviceListStrategy: volume-mounts
    sharing:
      mps:
        renameByDefault: false
        failRequestsGreaterThanOne: true
        resources:
        - name: nvidia.com/gpu
          replicas: 3
kind: ConfigMap
metadata:
  name: gpu-trust-device-plugin-config
  namespace: gpu-operator
GPU_TRUST_EOF
run kubectl patch clusterpolicies.nvidia.com 'cluster-policy' --type merge -p '{"spec":{"devicePlugin":{"config":{"default":"exclusive","name":"gpu-trust-device-plugin-config"},"env":[{"name":"DEVICE_LIST_STRATEGY","value":"volume-mounts"}],"image":"k8s-device-plugin","repository":"nvcr.io/nvidia","version":"v0.18.1"},"mig":{"strategy":null},"migManager":{"config":{"default":"all-disabled","name":"gpu-trust-mig-parted-config"}},"toolkit":{"env":[{"name":"ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED","value":"false"},{"name":"ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS","value":"true"}],"image":"container-toolkit","repository":"nvcr.io/nvidia/k8s","version":"v1.19.1"}}}'

echo '== nodes that keep their GPU configuration: labels and taints only'
run kubectl label node 'gpu-l40s-01' --overwrite 'gpu-trust.io/pool=l40s' 'nvidia.com/device-plugin.config=mps-1'
run kubectl taint node 'gpu-l40s-01' --overwrite 'gpu-trust.io/tenants=search:NoSchedule'

echo '== step 1: gpu-h100-01'
# Pool h100 keeps 2 nodes, 7 whole GPUs, MIG instances 2 x 1g.20gb meanwhile.
# Pool l40s keeps 1 node, 4 whole GPUs meanwhile.
# gpu-h100-01 becomes h100-0 (pool h100): MIG is turned on on GPUs 4, 5, 6: a GPU reset, and the MIG manager may stop the kubelet.
# Its drain evicts 1 pod: search-prod/pretrain-0.
run kubectl cordon 'gpu-h100-01'
run kubectl drain 'gpu-h100-01' --ignore-daemonsets --delete-emptydir-data --timeout=30m
run kubectl label node 'gpu-h100-01' --overwrite 'gpu-trust.io/pool=h100' 'nvidia.com/device-plugin.config=exclusive' 'nvidia.com/mig.config=gpu-trust-mig-1' 'nvidia.com/mig.config.state=pending'
run kubectl taint node 'gpu-h100-01' --overwrite 'gpu-trust.io/tenants=shared-1:NoSchedule'
run kubectl wait 'node/gpu-h100-01' --for='jsonpath={.metadata.labels.nvidia\.com/mig\.config\.state}=success' --timeout=30m
run kubectl uncordon 'gpu-h100-01'

echo '== step 2: gpu-h100-02'
# Pool h100 keeps 2 nodes, 5 whole GPUs, MIG instances 4 x 1g.10gb, 4 x 3g.40gb meanwhile.
# Pool l40s keeps 1 node, 4 whole GPUs meanwhile.
# gpu-h100-02 becomes h100-1 (pool h100): the MIG instances of GPU 0 are destroyed and recreated.
# Its drain evicts 2 pods: cust-acme/acme-infer-0 and cust-acme/acme-infer-1.
driver_risk 'gpu-h100-02' 'node gpu-h100-02 is repartitioned on driver 580.95.05, affected by CVE-2026-24197 (insecure default initialisation of memory routing while MIG partitions are reconfigured, which can corrupt data or hang the GPU; fixed in 580.159.03): upgrade its driver first'
run kubectl cordon 'gpu-h100-02'
run kubectl drain 'gpu-h100-02' --ignore-daemonsets --delete-emptydir-data --timeout=30m
run kubectl label node 'gpu-h100-02' --overwrite 'gpu-trust.io/pool=h100' 'nvidia.com/device-plugin.config=exclusive' 'nvidia.com/mig.config=gpu-trust-mig-2' 'nvidia.com/mig.config.state=pending'
run kubectl taint node 'gpu-h100-02' --overwrite 'gpu-trust.io/tenants=acme:NoSchedule'
run kubectl wait 'node/gpu-h100-02' --for='jsonpath={.metadata.labels.nvidia\.com/mig\.config\.state}=success' --timeout=30m
run kubectl uncordon 'gpu-h100-02'

echo '== step 3: gpu-h100-03'
# Pool h100 keeps 2 nodes, 12 whole GPUs, MIG instances 4 x 1g.10gb, 6 x 3g.40gb meanwhile.
# Pool l40s keeps 1 node, 4 whole GPUs meanwhile.
# gpu-h100-03 becomes h100-2 (pool h100): the input does not say how its GPUs are partitioned now: a MIG mode change may be needed; it runs GPU pods the plan puts elsewhere (4).
# Its drain evicts 5 pods: ads-prod/ads-rank-0, ads-prod/ads-rank-1, ads-prod/ads-rank-2, ads-prod/ads-rank-3 and research/feature-cache-0 (no GPU); deletes the emptyDir data of research/feature-cache-0.
driver_risk 'gpu-h100-03' 'node gpu-h100-03 is repartitioned, and its driver version is unknown: it may be affected by advisories about MIG reconfiguration; check it before going on'
run kubectl cordon 'gpu-h100-03'
run kubectl drain 'gpu-h100-03' --ignore-daemonsets --delete-emptydir-data --timeout=30m
run kubectl label node 'gpu-h100-03' --overwrite 'gpu-trust.io/pool=h100' 'nvidia.com/device-plugin.config=exclusive' 'nvidia.com/mig.config=gpu-trust-mig-3' 'nvidia.com/mig.config.state=pending'
run kubectl taint node 'gpu-h100-03' --overwrite 'gpu-trust.io/tenants=shared-2:NoSchedule'
run kubectl wait 'node/gpu-h100-03' --for='jsonpath={.metadata.labels.nvidia\.com/mig\.config\.state}=success' --timeout=30m
run kubectl uncordon 'gpu-h100-03'

echo '== pod patches: each workload gets its planned GPU request and nodes'
run kubectl -n 'ads-prod' patch 'deployment' 'ads-rank' --type strategic -p '{"spec":{"template":{"spec":{"containers":[{"name":"ranker","resources":{"limits":{"nvidia.com/gpu":null,"nvidia.com/mig-1g.10gb":1},"requests":{"nvidia.com/gpu":null,"nvidia.com/mig-1g.10gb":1}}}],"nodeSelector":{"gpu-trust.io/pool":"h100","nvidia.com/mig-1g.10gb.replicas":"1","nvidia.com/mig-1g.10gb.sharing-strategy":"none"},"tolerations":[{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"},{"effect":"NoSchedule","key":"gpu-trust.io/tenants","operator":"Equal","value":"shared-1"}]}}}}'
run kubectl -n 'search-prod' patch 'deployment' 'chat-api' --type strategic -p '{"spec":{"template":{"spec":{"containers":[{"name":"server","resources":{"limits":{"nvidia.com/gpu":null,"nvidia.com/mig-3g.40gb":1},"requests":{"nvidia.com/gpu":null,"nvidia.com/mig-3g.40gb":1}}}],"nodeSelector":{"gpu-trust.io/pool":"h100","nvidia.com/mig-3g.40gb.replicas":"1","nvidia.com/mig-3g.40gb.sharing-strategy":"none"},"tolerations":[{"effect":"NoSchedule","key":"gpu-trust.io/tenants","operator":"Equal","value":"shared-1"},{"effect":"NoSchedule","key":"gpu-trust.io/tenants","operator":"Equal","value":"shared-2"}]}}}}'

# Not in the current cluster, so not patched here (create them with their planned request): cust-acme/acme-infer, search-prod/embed, research/lab, search-prod/pretrain.
# Not used by the plan, left as they are: gpu-h100-04.
