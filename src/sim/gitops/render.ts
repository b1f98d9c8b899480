/**
 * Renders a {@link HomeOpsState} as the files of a home-ops-style GitOps repository: Talos
 * config under `talos/`, Flux apps under `kubernetes/apps/<namespace>/<app>/` (OCIRepository,
 * HelmRelease, Kustomization, values files), `.mise.toml` and `.renovaterc.json5`. The paths and
 * values are the ones the shipped playbooks select, so a generated repository is what the review
 * is tested on. A dropped deviation renders as the edit that drops it (a chart default restored,
 * a block removed, a file deleted).
 */
import { stringify } from "yaml";
import { type HomeOpsState, keeps, pinVersion, plain, vtag } from "./state.ts";

/** Repository-relative path → file text. */
export type RepoFiles = Record<string, string>;

const A = "kubernetes/apps";

/** YAML text of one document, `---` first as home-ops files have it. */
function doc(value: unknown, header?: string): string {
  return `---\n${header ? `${header}\n` : ""}${stringify(value, { lineWidth: 0 })}`;
}

function docs(...values: unknown[]): string {
  return values.map((v) => doc(v)).join("");
}

function ociRepository(name: string, url: string, tag: string): string {
  return doc(
    {
      apiVersion: "source.toolkit.fluxcd.io/v1",
      kind: "OCIRepository",
      metadata: { name },
      spec: {
        interval: "15m",
        layerSelector: {
          mediaType: "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
          operation: "copy",
        },
        ref: { tag },
        url,
      },
    },
    "# yaml-language-server: $schema=https://kube-schemas.pages.dev/source.toolkit.fluxcd.io/ocirepository_v1.json",
  );
}

function helmRelease(name: string, values: unknown, extra: Record<string, unknown> = {}): string {
  return doc({
    apiVersion: "helm.toolkit.fluxcd.io/v2",
    kind: "HelmRelease",
    metadata: { name },
    spec: {
      interval: "1h",
      chartRef: { kind: "OCIRepository", name },
      install: { remediation: { retries: -1 } },
      upgrade: { cleanupOnFail: true, remediation: { retries: 3 } },
      ...extra,
      ...(values === undefined ? {} : { values }),
    },
  });
}

function fluxKs(
  name: string,
  namespace: string,
  path: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: "kustomize.toolkit.fluxcd.io/v1",
    kind: "Kustomization",
    metadata: { name },
    spec: {
      commonMetadata: { labels: { "app.kubernetes.io/name": name } },
      interval: "1h",
      path,
      prune: true,
      sourceRef: { kind: "GitRepository", name: "flux-system", namespace: "flux-system" },
      targetNamespace: namespace,
      ...extra,
    },
  };
}

/** A `kustomization.yaml` listing `resources`. */
function kustomization(resources: readonly string[]): string {
  return doc({
    apiVersion: "kustomize.config.k8s.io/v1beta1",
    kind: "Kustomization",
    resources: [...resources],
  });
}

/** A plain chart app: ks.yaml, app/ocirepository.yaml, app/helmrelease.yaml, kustomization. */
function chartApp(
  files: RepoFiles,
  ns: string,
  name: string,
  url: string,
  tag: string,
  values?: unknown,
  extraResources: readonly string[] = [],
): void {
  const dir = `${A}/${ns}/${name}`;
  files[`${dir}/ks.yaml`] = doc(fluxKs(name, ns, `./${dir}/app`));
  files[`${dir}/app/ocirepository.yaml`] = ociRepository(name, url, tag);
  files[`${dir}/app/helmrelease.yaml`] = helmRelease(name, values);
  files[`${dir}/app/kustomization.yaml`] = kustomization([
    "./ocirepository.yaml",
    "./helmrelease.yaml",
    ...extraResources,
  ]);
}

function digestOf(text: string): string {
  // A stable 64-hex stand-in for an image digest, derived from the tag (FNV-1a, repeated).
  let h = 0x811c9dc5;
  let out = "";
  for (let round = 0; out.length < 64; round++) {
    for (const ch of `${text}#${round}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    out += h.toString(16).padStart(8, "0");
  }
  return out.slice(0, 64);
}

/** Every file of the repository in `state`, sorted by path. */
export function renderRepo(state: HomeOpsState): RepoFiles {
  const f: RepoFiles = {};
  const v = (set: string, pin: string) => pinVersion(state, set, pin);
  const keep = (d: string) => keeps(state, d);

  // --- repository root -----------------------------------------------------------------------
  f[".mise.toml"] = [
    "[env]",
    'KUBECONFIG = "{{config_root}}/kubeconfig"',
    'TALOSCONFIG = "{{config_root}}/talos/clusterconfig/talosconfig"',
    "",
    "[tools]",
    `"aqua:siderolabs/talos" = "${plain(v("talos/talos", "talosctl"))}"`,
    `"aqua:budimanjojo/talhelper" = "${plain(state.talhelper)}"`,
    '"aqua:casey/just" = "1.43.0"',
    '"aqua:kubernetes/kubectl" = "1.36.0"',
    "",
  ].join("\n");
  f[".renovaterc.json5"] = renovateConfig();

  // --- Talos ---------------------------------------------------------------------------------
  f["talos/talconfig.yaml"] = [
    "# yaml-language-server: $schema=https://raw.githubusercontent.com/budimanjojo/talhelper/master/pkg/config/schemas/talconfig.json",
    "---",
    "clusterName: home-ops",
    "# renovate: datasource=custom.talos-factory depName=siderolabs/talos",
    `talosVersion: ${vtag(v("talos/talos", "talconfig"))}`,
    "# renovate: datasource=docker depName=ghcr.io/siderolabs/kubelet",
    `kubernetesVersion: ${vtag(v("kubernetes/kubernetes", "talconfig"))}`,
    "endpoint: https://10.0.10.10:6443",
    "nodes:",
    ...[0, 1, 2].flatMap((i) => [
      `  - hostname: k8s-${i}`,
      `    ipAddress: 10.0.10.${11 + i}`,
      "    controlPlane: true",
      "    installDiskSelector:",
      "      model: Samsung SSD 990 PRO*",
    ]),
    "controlPlane:",
    "  patches:",
    '    - "@./patches/controller/etcd-encryption.yaml"',
    "",
  ].join("\n");
  f["talos/talenv.yaml"] = [
    "---",
    "# renovate: datasource=custom.talos-factory depName=siderolabs/talos",
    `talosVersion: ${vtag(v("talos/talos", "talenv"))}`,
    "# renovate: datasource=docker depName=ghcr.io/siderolabs/kubelet",
    `kubernetesVersion: ${vtag(v("kubernetes/kubernetes", "talenv"))}`,
    "",
  ].join("\n");
  f["talos/patches/controller/etcd-encryption.yaml"] = doc({
    apiVersion: "v1alpha1",
    kind: "KubeEtcdEncryptionConfig",
    keys: [{ name: keep("talos/etcd-encryption-key-name") ? "key2" : "key1", secretbox: {} }],
  });

  // --- system-upgrade / tuppr -------------------------------------------------------------------
  const tuppr = `${A}/system-upgrade/tuppr`;
  chartApp(
    f,
    "system-upgrade",
    "tuppr",
    "oci://ghcr.io/home-operations/charts/tuppr",
    plain(state.versions["tuppr/chart"]!),
    {
      resources: { limits: { memory: keep("tuppr/memory-limit") ? "768Mi" : "256Mi" } },
      prometheusRule: { enabled: !keep("tuppr/chart-rules-off") },
    },
  );
  f[`${tuppr}/upgrades/talosupgrade.yaml`] = doc({
    apiVersion: "tuppr.home-operations.com/v1alpha1",
    kind: "TalosUpgrade",
    metadata: { name: "talos" },
    spec: {
      talos: { version: vtag(v("talos/talos", "talosupgrade")) },
      policy: {
        rebootMode: keep("tuppr/reboot-mode") ? "default" : "powercycle",
        drain: { deleteEmptyDirData: true, ignoreDaemonSets: true },
      },
      healthChecks: [
        {
          apiVersion: "ceph.rook.io/v1",
          kind: "CephCluster",
          namespace: "rook-ceph",
          expr: "status.ceph.health in ['HEALTH_OK']",
        },
        {
          apiVersion: "volsync.backube/v1alpha1",
          kind: "ReplicationSource",
          expr:
            "status.conditions.filter(c, c.type == 'Synchronizing').all(c, c.status == 'False')",
        },
      ],
    },
  });
  f[`${tuppr}/upgrades/kubernetesupgrade.yaml`] = doc({
    apiVersion: "tuppr.home-operations.com/v1alpha1",
    kind: "KubernetesUpgrade",
    metadata: { name: "kubernetes" },
    spec: { kubernetes: { version: vtag(v("kubernetes/kubernetes", "kubernetesupgrade")) } },
  });
  f[`${tuppr}/upgrades/prometheusrule.yaml`] = doc({
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PrometheusRule",
    metadata: { name: "tuppr" },
    spec: {
      groups: [{
        name: "tuppr",
        rules: [{ alert: "TupprJobFailed", expr: "tuppr_job_failed > 0" }],
      }],
    },
  });

  // --- kube-system -------------------------------------------------------------------------------
  const defragTag = vtag(v("talos/talos", "etcd-defrag"));
  chartApp(f, "kube-system", "etcd-defrag", "oci://ghcr.io/bjw-s-labs/helm/app-template", "4.4.0", {
    controllers: {
      "etcd-defrag": {
        type: "cronjob",
        cronjob: { schedule: "0 3 * * 0" },
        containers: {
          app: {
            image: { repository: "ghcr.io/home-operations/alpine", tag: "3.22" },
            command: ["/bin/sh", "-c"],
            args: [
              `curl -fsSL -o /tmp/talosctl https://github.com/siderolabs/talos/releases/download/${defragTag}/talosctl-linux-amd64 && chmod +x /tmp/talosctl && /tmp/talosctl etcd defrag`,
            ],
          },
        },
      },
    },
  });
  const cilium = `${A}/kube-system/cilium`;
  f[`${cilium}/ks.yaml`] = docs(
    fluxKs("cilium", "kube-system", `./${cilium}/app`, { wait: true }),
    fluxKs("cilium-policies", "kube-system", `./${A}/kube-system/cilium-policies`, {
      dependsOn: [{ name: "cilium" }],
    }),
  );
  f[`${cilium}/app/ocirepository.yaml`] = ociRepository(
    "cilium",
    "oci://quay.io/cilium/charts/cilium",
    plain(state.versions["cilium/chart"]!),
  );
  f[`${cilium}/app/helmrelease.yaml`] = helmRelease("cilium", undefined, {
    valuesFrom: [{ kind: "ConfigMap", name: "cilium-values" }],
  });
  f[`${cilium}/app/kustomization.yaml`] = doc({
    apiVersion: "kustomize.config.k8s.io/v1beta1",
    kind: "Kustomization",
    resources: ["./ocirepository.yaml", "./helmrelease.yaml", "./networks.yaml"],
    configMapGenerator: [{ name: "cilium-values", files: ["values.yaml=./helm/values.yaml"] }],
    configurations: ["./helm/kustomizeconfig.yaml"],
  });
  f[`${cilium}/app/helm/values.yaml`] = doc({
    autoDirectNodeRoutes: true,
    bpf: { masquerade: true },
    cni: { exclusive: false },
    ipam: { mode: "kubernetes" },
    k8sServiceHost: "127.0.0.1",
    k8sServicePort: 7445,
    kubeProxyReplacement: keep("cilium/kube-proxy-replacement"),
    l2announcements: { enabled: keep("cilium/l2-announcements") },
    loadBalancer: { algorithm: "maglev", mode: keep("cilium/lb-mode-dsr") ? "dsr" : "snat" },
    routingMode: keep("cilium/routing-native") ? "native" : "tunnel",
    socketLB: keep("cilium/no-host-namespace-only")
      ? { enabled: keep("cilium/socket-lb") }
      : { enabled: keep("cilium/socket-lb"), hostNamespaceOnly: true },
  });
  f[`${cilium}/app/networks.yaml`] = docs(
    {
      apiVersion: "cilium.io/v2alpha1",
      kind: "CiliumL2AnnouncementPolicy",
      metadata: { name: "l2-policy" },
      spec: { loadBalancerIPs: true, interfaces: ["^enp.*"] },
    },
    {
      apiVersion: "cilium.io/v2alpha1",
      kind: "CiliumLoadBalancerIPPool",
      metadata: { name: "l2-pool" },
      spec: { blocks: [{ start: "10.0.10.100", stop: "10.0.10.199" }] },
    },
  );
  f[`${A}/kube-system/cilium-policies/allow-dns.yaml`] = doc({
    apiVersion: "cilium.io/v2",
    kind: "CiliumClusterwideNetworkPolicy",
    metadata: { name: "allow-dns" },
    spec: {
      endpointSelector: {},
      egress: [{ toEndpoints: [{ matchLabels: { "k8s-app": "kube-dns" } }] }],
    },
  });

  const coredns = `${A}/kube-system/coredns`;
  chartApp(
    f,
    "kube-system",
    "coredns",
    "oci://ghcr.io/coredns/charts/coredns",
    plain(state.versions["coredns/chart"]!),
  );
  f[`${coredns}/app/helm/values.yaml`] = doc({
    fullnameOverride: "coredns",
    image: { repository: "mirror.gcr.io/coredns/coredns" },
    k8sAppLabelOverride: keep("coredns/kube-dns-label") ? "kube-dns" : "coredns",
    podDisruptionBudget: { minAvailable: keep("coredns/pdb") ? 1 : 0 },
    replicaCount: 2,
    service: keep("coredns/fixed-cluster-ip")
      ? { name: "kube-dns", clusterIP: "10.43.0.10" }
      : { name: "kube-dns" },
    servers: [{
      zones: [{ zone: "." }],
      port: 53,
      plugins: [
        { name: "errors" },
        { name: "health", configBlock: "lameduck 5s" },
        { name: "ready" },
        { name: "kubernetes", parameters: "cluster.local in-addr.arpa ip6.arpa" },
        ...(keep("coredns/aaaa-template")
          ? [{ name: "template", parameters: "ANY AAAA", configBlock: "rcode NOERROR" }]
          : []),
        { name: "forward", parameters: ". /etc/resolv.conf" },
        { name: "cache", parameters: 30 },
        { name: "loop" },
        { name: "reload" },
      ],
    }],
  });

  const spegel = `${A}/kube-system/spegel`;
  chartApp(
    f,
    "kube-system",
    "spegel",
    "oci://ghcr.io/spegel-org/helm-charts/spegel",
    `v${plain(state.versions["spegel/chart"]!)}`,
  );
  f[`${spegel}/app/helm/values.yaml`] = doc({
    grafanaDashboard: { enabled: true },
    spegel: {
      containerdRegistryConfigPath: keep("spegel/containerd-hosts-path")
        ? "/etc/cri/conf.d/hosts"
        : "/etc/containerd/certs.d",
    },
    service: { registry: { hostPort: 29999 } },
  });
  chartApp(
    f,
    "kube-system",
    "snapshot-controller",
    "oci://ghcr.io/piraeusdatastore/helm-charts/snapshot-controller",
    plain(state.versions["volsync/snapshot-controller"]!),
    { controller: { serviceMonitor: { create: true } } },
  );

  // --- rook-ceph -----------------------------------------------------------------------------------
  const rook = `${A}/rook-ceph/rook-ceph`;
  f[`${rook}/ks.yaml`] = docs(
    fluxKs("rook-ceph", "rook-ceph", `./${rook}/app`, { wait: true }),
    fluxKs("rook-ceph-csi-drivers", "rook-ceph", `./${rook}/csi-drivers`, {
      dependsOn: [{ name: "rook-ceph" }],
      wait: true,
    }),
    fluxKs("rook-ceph-cluster", "rook-ceph", `./${rook}/cluster`, {
      dependsOn: [{ name: "rook-ceph-csi-drivers" }],
      healthCheckExprs: [{
        apiVersion: "ceph.rook.io/v1",
        kind: "CephCluster",
        failed: "status.ceph.health == 'HEALTH_ERR'",
        current: "status.ceph.health in ['HEALTH_OK', 'HEALTH_WARN']",
      }],
    }),
  );
  f[`${rook}/app/ocirepository.yaml`] = ociRepository(
    "rook-ceph",
    "oci://ghcr.io/rook/rook-ceph",
    vtag(v("rook-ceph/rook", "operator-chart")),
  );
  f[`${rook}/app/helmrelease.yaml`] = helmRelease("rook-ceph", {
    csi: { rookUseCsiOperator: true },
    monitoring: { enabled: true },
    resources: { requests: { cpu: "100m", memory: "128Mi" } },
  });
  f[`${rook}/app/kustomization.yaml`] = kustomization([
    "./ocirepository.yaml",
    "./helmrelease.yaml",
  ]);
  f[`${rook}/csi-drivers/ocirepository.yaml`] = ociRepository(
    "rook-ceph-csi-drivers",
    "oci://ghcr.io/home-operations/charts-mirror/ceph-csi-drivers",
    vtag(v("rook-ceph/csi-drivers", "drivers-chart")),
  );
  const rbd: Record<string, unknown> = { enabled: true };
  if (keep("rook-ceph/rbd-driver-name")) rbd["name"] = "rook-ceph.rbd.csi.ceph.com";
  if (keep("rook-ceph/rbd-snapshot-policy")) rbd["snapshotPolicy"] = "volumeSnapshot";
  f[`${rook}/csi-drivers/helmrelease.yaml`] = helmRelease("rook-ceph-csi-drivers", {
    drivers: { rbd, cephfs: { enabled: true, name: "rook-ceph.cephfs.csi.ceph.com" } },
  });
  f[`${rook}/csi-drivers/kustomization.yaml`] = kustomization([
    "./ocirepository.yaml",
    "./helmrelease.yaml",
  ]);
  f[`${rook}/cluster/ocirepository.yaml`] = ociRepository(
    "rook-ceph-cluster",
    "oci://ghcr.io/rook/rook-ceph-cluster",
    vtag(v("rook-ceph/rook", "cluster-chart")),
  );
  const global: Record<string, unknown> = {
    bdev_enable_discard: "true",
    osd_class_update_on_start: "false",
  };
  if (keep("rook-ceph/mon-clock-drift")) global["mon_clock_drift_allowed"] = "0.3";
  const spec: Record<string, unknown> = {
    cephConfig: { global },
    dashboard: { enabled: true, ssl: false },
    mon: { count: 3 },
    network: { provider: "host" },
    storage: { useAllNodes: true, useAllDevices: false, deviceFilter: "nvme1n1" },
  };
  if (keep("rook-ceph/cephx-keys")) {
    spec["security"] = {
      cephx: {
        daemon: { keyGeneration: 2 },
        csi: { keyGeneration: 2, keyType: "aes256k" },
        rbdMirrorPeer: { keyGeneration: 2, keyType: "aes256k" },
        allowedCiphers: ["aes256k"],
      },
    };
  }
  f[`${rook}/cluster/helmrelease.yaml`] = helmRelease("rook-ceph-cluster", {
    toolbox: { enabled: true },
    monitoring: { enabled: true, createPrometheusRules: true },
    cephClusterSpec: spec,
    cephBlockPools: [{ name: "ceph-block", spec: { replicated: { size: 3 } } }],
  });
  f[`${rook}/cluster/kustomization.yaml`] = kustomization([
    "./ocirepository.yaml",
    "./helmrelease.yaml",
  ]);

  // --- flux-system ---------------------------------------------------------------------------------
  const fo = `${A}/flux-system/flux-operator`;
  f[`${fo}/ks.yaml`] = doc(fluxKs("flux-operator", "flux-system", `./${fo}/app`, { wait: true }));
  f[`${fo}/app/ocirepository.yaml`] = ociRepository(
    "flux-operator",
    "oci://ghcr.io/controlplaneio-fluxcd/charts/flux-operator",
    vtag(v("flux/flux", "operator-chart")),
  );
  f[`${fo}/app/helmrelease.yaml`] = helmRelease("flux-operator", undefined, {
    valuesFrom: [{ kind: "ConfigMap", name: "flux-operator-values" }],
  });
  f[`${fo}/app/helm/values.yaml`] = doc({
    serviceMonitor: { create: true },
    mcp: { enabled: true, image: { tag: "v0.1.0" } },
  });
  const fi = `${A}/flux-system/flux-instance`;
  f[`${fi}/ks.yaml`] = doc(fluxKs("flux-instance", "flux-system", `./${fi}/app`, {
    dependsOn: [{ name: "flux-operator" }],
  }));
  f[`${fi}/app/ocirepository.yaml`] = ociRepository(
    "flux-instance",
    "oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance",
    vtag(v("flux/flux", "instance-chart")),
  );
  const patches: unknown[] = [];
  if (keep("flux/source-controller-memory")) {
    patches.push({
      target: { kind: "Deployment", name: "source-controller" },
      patch: [
        "apiVersion: apps/v1",
        "kind: Deployment",
        "metadata:",
        "  name: source-controller",
        "spec:",
        "  template:",
        "    spec:",
        "      containers:",
        "        - name: manager",
        "          resources:",
        "            limits:",
        "              memory: 1Gi",
        "",
      ].join("\n"),
    });
  }
  patches.push({
    target: { kind: "Deployment" },
    patch: "- op: remove\n  path: /spec/template/spec/containers/0/resources/limits/cpu\n",
  });
  const distribution: Record<string, unknown> = {
    registry: "ghcr.io/fluxcd",
    artifact: `oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:${
      vtag(v("flux/flux", "manifests"))
    }`,
  };
  if (!keep("flux/no-distribution-version")) distribution["version"] = "2.x";
  f[`${fi}/app/helmrelease.yaml`] = helmRelease("flux-instance", {
    instance: {
      distribution,
      components: [
        "source-controller",
        "kustomize-controller",
        "helm-controller",
        "notification-controller",
      ],
      cluster: { networkPolicy: false },
      kustomize: { patches },
    },
  });

  // --- cert-manager --------------------------------------------------------------------------------
  const cm = `${A}/cert-manager/cert-manager`;
  const cmExtra: Record<string, unknown> = {};
  if (keep("cert-manager/wait")) cmExtra["wait"] = true;
  if (keep("cert-manager/clusterissuer-health")) {
    cmExtra["healthCheckExprs"] = [{
      apiVersion: "cert-manager.io/v1",
      kind: "ClusterIssuer",
      failed: "status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'False')",
      current: "status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')",
    }];
  }
  f[`${cm}/ks.yaml`] = docs(
    fluxKs("cert-manager", "cert-manager", `./${cm}/app`, cmExtra),
    fluxKs("cert-manager-tls", "cert-manager", `./${cm}/tls`, {
      dependsOn: [{ name: "cert-manager" }],
    }),
  );
  f[`${cm}/app/ocirepository.yaml`] = ociRepository(
    "cert-manager",
    "oci://quay.io/jetstack/charts/cert-manager",
    vtag(state.versions["cert-manager/chart"]!),
  );
  f[`${cm}/app/helmrelease.yaml`] = helmRelease("cert-manager", undefined, {
    valuesFrom: [{ kind: "ConfigMap", name: "cert-manager-values" }],
  });
  f[`${cm}/app/helm/values.yaml`] = doc({
    crds: { enabled: true },
    replicaCount: 1,
    prometheus: { servicemonitor: { enabled: true } },
  });
  f[`${cm}/app/clusterissuer.yaml`] = doc({
    apiVersion: "cert-manager.io/v1",
    kind: "ClusterIssuer",
    metadata: { name: "letsencrypt-production" },
    spec: {
      acme: {
        server: "https://acme-v02.api.letsencrypt.org/directory",
        solvers: [{ dns01: { cloudflare: {} } }],
      },
    },
  });
  f[`${cm}/tls/certificate.yaml`] = doc({
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: { name: "wildcard" },
    spec: {
      secretName: "wildcard-tls",
      issuerRef: { kind: "ClusterIssuer", name: "letsencrypt-production" },
    },
  });

  // --- external-secrets ------------------------------------------------------------------------------
  chartApp(
    f,
    "external-secrets",
    "external-secrets",
    "oci://ghcr.io/external-secrets/charts/external-secrets",
    plain(state.versions["external-secrets/external-secrets"]!),
    { installCRDs: true },
    keep("external-secrets/operator-pdb") ? ["./pdb.yaml"] : [],
  );
  if (keep("external-secrets/operator-pdb")) {
    f[`${A}/external-secrets/external-secrets/app/pdb.yaml`] = doc({
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "external-secrets" },
      spec: {
        minAvailable: 1,
        selector: { matchLabels: { "app.kubernetes.io/name": "external-secrets" } },
      },
    });
  }
  chartApp(
    f,
    "external-secrets",
    "onepassword-connect",
    "oci://ghcr.io/1password/connect",
    plain(state.versions["external-secrets/onepassword-connect"]!),
    { connect: { serviceType: "ClusterIP" } },
    ["./clustersecretstore.yaml"],
  );
  f[`${A}/external-secrets/onepassword-connect/app/clustersecretstore.yaml`] = doc({
    apiVersion: keep("external-secrets/store-api-version")
      ? "external-secrets.io/v1"
      : "external-secrets.io/v1beta1",
    kind: "ClusterSecretStore",
    metadata: { name: "onepassword-connect" },
    spec: {
      provider: {
        onepassword: { connectHost: "http://onepassword-connect:8080", vaults: { "home-ops": 1 } },
      },
    },
  });

  // --- database / CloudNative-PG --------------------------------------------------------------------
  const pg = `${A}/database/cloudnative-pg`;
  chartApp(
    f,
    "database",
    "cloudnative-pg",
    "oci://ghcr.io/cloudnative-pg/charts/cloudnative-pg",
    plain(state.versions["cloudnative-pg/operator"]!),
    { crds: { create: true } },
  );
  const pgImage = state.versions["cloudnative-pg/postgres-image"]!;
  const pgTag = `${pgImage.major}.${pgImage.minor}-standard-trixie`;
  f[`${pg}/cluster/cluster.yaml`] = doc({
    apiVersion: "postgresql.cnpg.io/v1",
    kind: "Cluster",
    metadata: { name: "postgres18" },
    spec: {
      imageName: `ghcr.io/cloudnative-pg/postgresql:${pgTag}@sha256:${digestOf(pgTag)}`,
      instances: keep("cloudnative-pg/instances") ? 3 : 1,
      primaryUpdateStrategy: keep("cloudnative-pg/unsupervised-updates")
        ? "unsupervised"
        : "supervised",
      failoverDelay: keep("cloudnative-pg/failover-delay") ? 60 : 0,
      storage: {
        size: "20Gi",
        storageClass: keep("cloudnative-pg/storage-class") ? "miroir-local" : "ceph-block",
      },
      plugins: [{
        name: "barman-cloud.cloudnative-pg.io",
        isWALArchiver: true,
        parameters: { barmanObjectName: "r2" },
      }],
    },
  });
  f[`${pg}/cluster/scheduledbackup.yaml`] = doc({
    apiVersion: "postgresql.cnpg.io/v1",
    kind: "ScheduledBackup",
    metadata: { name: "postgres18" },
    spec: { schedule: "0 0 2 * * *", cluster: { name: "postgres18" }, method: "plugin" },
  });
  f[`${pg}/barman-cloud/ocirepository.yaml`] = ociRepository(
    "barman-cloud",
    "oci://ghcr.io/cloudnative-pg/charts/plugin-barman-cloud",
    plain(state.versions["cloudnative-pg/barman-cloud"]!),
  );

  // --- gpu-operator --------------------------------------------------------------------------------
  const gpu = `${A}/gpu-operator/gpu-operator`;
  f[`${gpu}/ks.yaml`] = doc(fluxKs("gpu-operator", "gpu-operator", `./${gpu}/app`));
  f[`${gpu}/app/helmrepository.yaml`] = doc({
    apiVersion: "source.toolkit.fluxcd.io/v1",
    kind: "HelmRepository",
    metadata: { name: "nvidia" },
    spec: { interval: "1h", url: "https://helm.ngc.nvidia.com/nvidia" },
  });
  f[`${gpu}/app/helmrelease.yaml`] = doc({
    apiVersion: "helm.toolkit.fluxcd.io/v2",
    kind: "HelmRelease",
    metadata: { name: "gpu-operator" },
    spec: {
      interval: "1h",
      chart: {
        spec: {
          chart: "gpu-operator",
          version: vtag(state.versions["gpu-operator/chart"]!),
          sourceRef: { kind: "HelmRepository", name: "nvidia" },
        },
      },
      values: {
        cdi: { enabled: keep("gpu-operator/cdi-enabled") },
        devicePlugin: {
          config: {
            name: keep("gpu-operator/time-slicing") ? "time-slicing-config" : "",
            default: "any",
          },
        },
        driver: { enabled: !keep("gpu-operator/driver-disabled") },
        toolkit: { enabled: !keep("gpu-operator/toolkit-disabled") },
      },
    },
  });
  f[`${gpu}/app/time-slicing-config.yaml`] = doc({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "time-slicing-config" },
    data: {
      any: [
        "version: v1",
        "sharing:",
        "  timeSlicing:",
        "    resources:",
        "      - name: nvidia.com/gpu",
        `        replicas: ${keep("gpu-operator/time-slicing-replicas") ? 5 : 1}`,
        "",
      ].join("\n"),
    },
  });
  f[`${gpu}/app/runtimeclass.yaml`] = doc({
    apiVersion: "node.k8s.io/v1",
    kind: "RuntimeClass",
    metadata: { name: "nvidia" },
    handler: "nvidia",
  });

  // --- network / envoy-gateway -----------------------------------------------------------------------
  const eg = `${A}/network/envoy-gateway`;
  f[`${eg}/ks.yaml`] = docs(
    fluxKs("envoy-gateway-crds", "network", `./${eg}/crds`),
    fluxKs("envoy-gateway", "network", `./${eg}/app`, {
      dependsOn: [{ name: "envoy-gateway-crds" }, {
        name: "cert-manager",
        namespace: "cert-manager",
      }],
    }),
  );
  f[`${eg}/crds/kustomization.yaml`] = kustomization([
    `https://github.com/kubernetes-sigs/gateway-api/releases/download/${
      vtag(v("envoy-gateway/gateway-api", "crds"))
    }/experimental-install.yaml`,
  ]);
  f[`${eg}/app/ocirepository.yaml`] = ociRepository(
    "envoy-gateway",
    "oci://docker.io/envoyproxy/gateway-helm",
    vtag(state.versions["envoy-gateway/chart"]!),
  );
  f[`${eg}/app/helmrelease.yaml`] = helmRelease("envoy-gateway", { deployment: { replicas: 2 } }, {
    install: { crds: keep("envoy-gateway/crd-policy") ? "CreateReplace" : "Skip" },
    upgrade: { crds: keep("envoy-gateway/crd-policy-upgrade") ? "CreateReplace" : "Skip" },
  });
  f[`${eg}/app/envoy.yaml`] = docs(
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "envoy-internal" },
      spec: { gatewayClassName: "envoy", addresses: [{ value: "10.0.10.120" }] },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "envoy-external" },
      spec: { gatewayClassName: "envoy", addresses: [{ value: "10.0.10.121" }] },
    },
  );

  // --- volsync ---------------------------------------------------------------------------------------
  const vs = `${A}/volsync-system/volsync`;
  chartApp(
    f,
    "volsync-system",
    "volsync",
    "oci://ghcr.io/home-operations/charts-mirror/volsync",
    plain(state.versions["volsync/volsync"]!),
    { manageCRDs: true, metrics: { disableAuth: true } },
    keep("volsync/mover-jitter") ? ["./mutatingadmissionpolicy.yaml"] : [],
  );
  if (keep("volsync/mover-jitter")) {
    f[`${vs}/app/mutatingadmissionpolicy.yaml`] = doc({
      apiVersion: "admissionregistration.k8s.io/v1beta1",
      kind: "MutatingAdmissionPolicy",
      metadata: { name: "volsync-mover-jitter" },
      spec: {
        matchConstraints: {
          resourceRules: [{
            apiGroups: ["batch"],
            apiVersions: ["v1"],
            operations: ["CREATE"],
            resources: ["jobs"],
          }],
        },
      },
    });
  }
  f["kubernetes/components/volsync/replicationsource.yaml"] = doc({
    apiVersion: "volsync.backube/v1alpha1",
    kind: "ReplicationSource",
    metadata: { name: "${APP}" },
    spec: {
      sourcePVC: "${APP}",
      trigger: { schedule: "0 * * * *" },
      kopia: { copyMethod: "Snapshot", repository: "${APP}-volsync-secret" },
    },
  });

  // --- ai / litellm ----------------------------------------------------------------------------------
  chartApp(
    f,
    "ai",
    "litellm-operator",
    "oci://ghcr.io/home-operations/charts/litellm-operator",
    plain(state.versions["litellm-operator/chart"]!),
    {
      resources: {
        limits: { memory: keep("litellm-operator/operator-memory") ? "512Mi" : "128Mi" },
      },
    },
  );
  f[`${A}/ai/litellm/app/litellmproxy.yaml`] = doc({
    apiVersion: "litellm.home-operations.com/v1alpha1",
    kind: "LiteLLMProxy",
    metadata: { name: "litellm" },
    spec: {
      image: "ghcr.io/berriai/litellm:v1.105.0",
      livenessProbe: {
        initialDelaySeconds: keep("litellm-operator/liveness-delay") ? 180 : 30,
        periodSeconds: 10,
      },
      readinessProbe: { initialDelaySeconds: 20 },
    },
  });

  // --- miroir ----------------------------------------------------------------------------------------
  chartApp(
    f,
    "miroir-system",
    "miroir",
    "oci://ghcr.io/home-operations/charts/miroir",
    plain(state.versions["miroir/chart"]!),
    { storageClass: { name: "miroir-local" } },
  );

  // --- an ordinary, unprotected app (Renovate auto-merges it) -------------------------------------------
  chartApp(f, "default", "echo", "oci://ghcr.io/bjw-s-labs/helm/app-template", "4.4.0", {
    controllers: {
      echo: {
        containers: {
          app: { image: { repository: "ghcr.io/mendhak/http-https-echo", tag: "38" } },
        },
      },
    },
  });

  return Object.fromEntries(Object.entries(f).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0));
}

function renovateConfig(): string {
  return `{
  $schema: "https://docs.renovatebot.com/renovate-schema.json",
  extends: ["config:recommended", "docker:enableMajor", ":automergeBranch"],
  flux: { managerFilePatterns: ["/(^|/)kubernetes/.+\\\\.ya?ml$/"] },
  "helm-values": { managerFilePatterns: ["/(^|/)kubernetes/.+\\\\.ya?ml$/"] },
  packageRules: [
    {
      description: "Auto-merge minor and patch bumps of everything not protected",
      matchUpdateTypes: ["minor", "patch", "digest"],
      automerge: true,
    },
    {
      description: "Protected infra: never auto-merged, reviewed against its playbook",
      matchPackageNames: [
        "/talos/", "/kubelet/", "/cilium/", "/rook/", "/ceph-csi/", "/flux-operator/", "/flux-instance/",
        "/cert-manager/", "/external-secrets/", "/1password/", "/coredns/", "/spegel/", "/cloudnative-pg/",
        "/postgresql/", "/gpu-operator/", "/envoyproxy/", "/gateway-api/", "/tuppr/", "/volsync/",
        "/snapshot-controller/", "/litellm-operator/", "/miroir/",
      ],
      automerge: false,
      labels: ["protected-infra"],
    },
    { groupName: "Talos", matchPackageNames: ["/siderolabs\\\\/talos/", "/siderolabs\\\\/talosctl/"] },
    { groupName: "Kubernetes", matchPackageNames: ["/siderolabs\\\\/kubelet/", "/kube-apiserver/"] },
    { groupName: "Rook-Ceph", matchPackageNames: ["/rook-ceph/"] },
    { groupName: "Flux", matchPackageNames: ["/flux-operator/", "/flux-instance/"] },
  ],
  customManagers: [
    {
      customType: "regex",
      description: "talosctl download baked into etcd-defrag",
      managerFilePatterns: ["/etcd-defrag/app/helmrelease\\\\.yaml$/"],
      matchStrings: ["siderolabs/talos/releases/download/(?<currentValue>v[^/]+)/talosctl"],
      datasourceTemplate: "custom.talos-factory",
      depNameTemplate: "siderolabs/talos",
    },
  ],
}
`;
}
