/**
 * deploy/ against the code: the real kubectl applies the kustomize manifests to the Kubernetes
 * twin, and the RBAC they grant the `cairn` ServiceAccount must be exactly what cairn's code
 * calls. What the code calls is derived three ways:
 *
 * - recorded: every method of the `Kube` and `LeaseStore` ports is driven once through the real
 *   adapters over HTTPS, and the twin records each request's verb and resource (a port method
 *   without a driver here is a type error; a new request inside a method shows up recorded);
 * - named: every resource the code names in a `{ group, …, plural }` reference is read (get);
 * - configured: what the shipped health policies' readers list and watch (`resourcesFor`).
 *
 * A request the manifests do not grant turns this red, and so does a grant no request uses.
 * The shipped sample configuration must also load under the config schema.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { createClientNodeKube, NODES, PODS } from "../../src/adapters/kube/client_node_kube.ts";
import { createLeaseClient } from "../../src/adapters/kube/lease_client.ts";
import { safeLoadConfig } from "../../src/config.ts";
import { parseHealthPolicy } from "../../src/domain/health/policy_parse.ts";
import { resourcesFor } from "../../src/domain/health/resources.ts";
import { brokerTarget, objectStoreTarget } from "../../src/domain/health/routes.ts";
import type { Kube } from "../../src/ports/kube.ts";
import { JOBS } from "../../src/engine/operating/hooks.ts";
import type { LeaseStore } from "../../src/ports/lease.ts";
import { ClusterDescriptionSchema } from "../../src/sim/cluster_description.ts";
import { SimClock } from "../../src/sim/clock.ts";
import { FaultSchedule } from "../../src/sim/faults.ts";
import { type KubeSim, startKubeSim, writeKubeconfig } from "../../src/sim/kube/server.ts";
import { mintPki } from "../../src/sim/pki.ts";
import { ROOT } from "../_helpers/twin_world.ts";

const KUBECTL = Deno.env.get("CAIRN_KUBECTL") ?? "kubectl";
const NAMESPACE = "cairn-system";
const DAEMONSETS = { group: "apps", version: "v1", plural: "daemonsets", namespaced: true };
const LEASE = "cairn-leader";

/** `verb group/resource[/sub]`, with RBAC's verb names. */
type Grant = string;

async function kubectl(kubeconfig: string, ...args: string[]) {
  const o = await new Deno.Command(KUBECTL, {
    args: ["--kubeconfig", kubeconfig, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: o.code,
    out: new TextDecoder().decode(o.stdout),
    err: new TextDecoder().decode(o.stderr),
  };
}

async function withTwin(fn: (sim: KubeSim, kubeconfig: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), "cairn-rbac-"));
  const d = ClusterDescriptionSchema.parse(
    parse(Deno.readTextFileSync(join(ROOT, "fixtures/clusters/home-ops.yaml"))),
  );
  const pki = mintPki({ dir, caName: "twin-ca", algorithm: "p256", clients: { admin: [] } });
  const sim = await startKubeSim({
    clock: new SimClock(Date.parse(d.spec.startTime)),
    faults: new FaultSchedule(),
    description: d,
    tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
  });
  const kubeconfig = join(dir, "kubeconfig");
  writeKubeconfig(kubeconfig, {
    url: sim.url,
    caPem: pki.ca.certPem,
    clientCertPem: pki.clients.admin!.certPem,
    clientKeyPem: pki.clients.admin!.keyPem,
  });
  try {
    await fn(sim, kubeconfig);
  } finally {
    await sim.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

/** The twin's verb names → RBAC's. */
const RBAC_VERB: Readonly<Record<string, string>> = {
  get: "get",
  list: "list",
  watch: "watch",
  create: "create",
  update: "update",
  patch: "patch",
  apply: "patch",
  delete: "delete",
  deletecollection: "deletecollection",
  evict: "create",
};

/** Drives every method of the Kube port once (the record makes a new method a type error). */
function kubeDrivers(
  node: string,
  pod: { namespace: string; name: string },
  ds: { namespace: string; name: string; container: string; image: string; rv: string },
) {
  return {
    serverVersion: (k) => k.serverVersion(),
    requestedDeprecatedApis: (k) => k.requestedDeprecatedApis(),
    proxyGet: (k) =>
      k.proxyGet(
        { namespace: pod.namespace, kind: "pod", name: pod.name, port: "8080", path: "/" },
        { maxBytes: 1024 },
      ),
    getNode: (k) => k.getNode(node),
    listNodes: (k) => k.listNodes(),
    listPods: (k) => k.listPods(node),
    getPod: (k) => k.getPod(pod),
    listPdbs: (k) => k.listPdbs(),
    cordon: async (k) => {
      const n = await k.getNode(node);
      return k.cordon(node, n!.resourceVersion);
    },
    uncordon: async (k) => {
      const n = await k.getNode(node);
      return k.uncordon(node, n!.resourceVersion);
    },
    evict: (k) => k.evict(pod, { dryRun: true }),
    getObject: (k) => k.getObject(NODES, node),
    createObject: (k) =>
      k.createObject(JOBS, "default", {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name: "rbac-probe" },
        spec: { template: { spec: { restartPolicy: "Never", containers: [] } } },
      }),
    listObjects: (k) => k.listObjects(PODS, { namespace: pod.namespace }),
    // The same image again: the request is what RBAC must grant, not the change.
    setContainerImage: (k) =>
      k.setContainerImage(DAEMONSETS, ds.namespace, ds.name, {
        container: ds.container,
        image: ds.image,
        expectedResourceVersion: ds.rv,
      }),
    watch: (k) => {
      const stop = new AbortController();
      const ended = k.watch(NODES, { signal: stop.signal }, () => {});
      setTimeout(() => stop.abort(), 200);
      return ended;
    },
  } satisfies Record<keyof Kube, (k: Kube) => Promise<unknown>>;
}

/** Drives every call of the LeaseStore port (create, then a renewal on the version read). */
const leaseDrivers = {
  get: (l) => l.get(),
  create: (l) => l.create({ holderIdentity: "x", leaseDurationSeconds: 15, leaseTransitions: 0 }),
  update: async (l) => {
    const cur = await l.get();
    return l.update({ ...cur!.spec, renewTimeMs: Date.now() }, cur!.resourceVersion);
  },
} satisfies Record<Exclude<keyof LeaseStore, "where">, (l: LeaseStore) => Promise<unknown>>;

/** `{ group: "…", …, plural: "…" }` references in the code: each is read (get). */
async function namedResources(): Promise<Set<Grant>> {
  const out = new Set<Grant>();
  const skip = [/^src\/sim\//, /^src\/app\/dst\//];
  const walk = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(join(ROOT, dir))) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(rel);
      else if (rel.endsWith(".ts") && !skip.some((r) => r.test(rel))) {
        // Code only: a reference in a comment is an example, not a call.
        const text = (await Deno.readTextFile(join(ROOT, rel)))
          .replace(/\/\*[\s\S]*?\*\//g, "")
          .replace(/^\s*\/\/.*$/gm, "");
        for (
          const m of text.matchAll(/\{[^{}]*?group:\s*"([^"]*)"[^{}]*?plural:\s*"([^"]+)"[^{}]*\}/g)
        ) {
          out.add(`get ${m[1]}/${m[2]}`);
        }
      }
    }
  };
  await walk("src");
  return out;
}

/** What the shipped health policies' readers list and watch. */
async function policyReads(): Promise<Set<Grant>> {
  const out = new Set<Grant>();
  for await (const e of Deno.readDir(join(ROOT, "policies"))) {
    if (!e.name.endsWith(".yaml")) continue;
    const file = join(ROOT, "policies", e.name);
    const r = parseHealthPolicy(await Deno.readTextFile(file), file);
    assert(r.ok, `${e.name} parses`);
    for (const b of r.policy.bindings) {
      for (const need of resourcesFor(b)) {
        out.add(`list ${need.group}/${need.plural}`);
        out.add(`watch ${need.group}/${need.plural}`);
      }
      // Readers that GET through the API server's proxy subresource.
      const route = b.reader === "object-store-endpoint"
        ? objectStoreTarget(b)
        : b.reader === "broker-streams"
        ? brokerTarget(b, { metadata: { name: "p", namespace: "n" } })
        : undefined;
      if (route) out.add(`get /${route.kind === "pod" ? "pods" : "services"}/proxy`);
    }
  }
  return out;
}

interface Rule {
  readonly apiGroups?: string[];
  readonly resources?: string[];
  readonly verbs?: string[];
  readonly resourceNames?: string[];
  readonly nonResourceURLs?: string[];
}

function grants(rules: readonly Rule[]): Set<Grant> {
  const out = new Set<Grant>();
  for (const r of rules) {
    for (const u of r.nonResourceURLs ?? []) {
      for (const v of r.verbs ?? []) out.add(`${v} nonResource:${u}`);
    }
    for (const g of r.apiGroups ?? []) {
      for (const res of r.resources ?? []) {
        for (const v of r.verbs ?? []) out.add(`${v} ${g}/${res}`);
      }
    }
  }
  return out;
}

Deno.test("deploy/: kubectl applies it to the twin; its RBAC grants exactly what cairn's code calls", async () => {
  await withTwin(async (sim, kubeconfig) => {
    // The twin serves no OpenAPI document, which kubectl's client-side schema check downloads.
    const applied = await kubectl(
      kubeconfig,
      "apply",
      "--server-side",
      "--validate=false",
      "-k",
      join(ROOT, "deploy"),
    );
    assertEquals(applied.code, 0, applied.err);
    for (
      const kind of [
        "deployment/cairn",
        "serviceaccount/cairn",
        "networkpolicy/cairn",
        "role/cairn-leader-election",
      ]
    ) {
      const got = await kubectl(kubeconfig, "get", "-n", NAMESPACE, kind, "-o", "name");
      assertEquals(got.code, 0, `${kind}: ${got.err}`);
    }
    const deployment = JSON.parse(
      (await kubectl(kubeconfig, "get", "-n", NAMESPACE, "deployment/cairn", "-o", "json")).out,
    );
    assertEquals(deployment.spec.replicas, 2);
    const container = deployment.spec.template.spec.containers[0];
    assertEquals(container.livenessProbe.httpGet.path, "/healthz");
    assertEquals(container.readinessProbe.httpGet.path, "/readyz");
    assertEquals(deployment.spec.template.spec.serviceAccountName, "cairn");

    // What the manifests grant the ServiceAccount, read back through kubectl.
    const roleJson = (kind: string, name: string, ns?: string) =>
      kubectl(kubeconfig, "get", ...(ns ? ["-n", ns] : []), kind, name, "-o", "json").then((r) => {
        assertEquals(r.code, 0, r.err);
        return JSON.parse(r.out) as { rules: Rule[] };
      });
    const bindings = JSON.parse(
      (await kubectl(kubeconfig, "get", "clusterrolebindings", "-o", "json")).out,
    ).items as Array<
      { roleRef: { name: string }; subjects: Array<{ name: string; namespace: string }> }
    >;
    const clusterRoles = bindings.filter((b) =>
      b.subjects.some((s) => s.name === "cairn" && s.namespace === NAMESPACE)
    ).map((b) => b.roleRef.name).sort();
    assertEquals(clusterRoles, ["cairn", "cairn-health-reader"]);
    const cluster = new Set<Grant>();
    for (const name of clusterRoles) {
      for (const g of grants((await roleJson("clusterrole", name)).rules)) cluster.add(g);
    }
    const leaseRole = (await roleJson("role", "cairn-leader-election", NAMESPACE)).rules;
    const namespaced = grants(leaseRole);
    for (const r of leaseRole.filter((r) => r.resourceNames)) {
      assertEquals(r.resourceNames, [LEASE]);
    }

    // What the code calls, recorded by the twin (kubectl's own requests are not counted).
    const pod = sim.store.list(sim.controllers.pods).find((p) =>
      !(p.metadata.ownerReferences ?? []).some((o) => o.kind === "DaemonSet")
    )!;
    const node = String((pod.spec as { nodeName: string }).nodeName);
    const daemon = sim.store.list(sim.store.findType("apps", "v1", "daemonsets")!)[0]!;
    const first =
      (daemon.spec as { template: { spec: { containers: { name: string; image: string }[] } } })
        .template.spec.containers[0]!;
    const ds = {
      namespace: daemon.metadata.namespace!,
      name: daemon.metadata.name,
      container: first.name,
      image: first.image,
      rv: String(daemon.metadata.resourceVersion),
    };
    sim.access.clear();
    const kube = await createClientNodeKube({ kubeconfigPath: kubeconfig });
    for (
      const [name, drive] of Object.entries(kubeDrivers(node, {
        namespace: pod.metadata.namespace!,
        name: pod.metadata.name,
      }, ds))
    ) {
      await drive(kube).catch((e) => assert(false, `${name}: ${e}`));
    }
    const clusterCalls = new Set<Grant>();
    for (const key of sim.access.keys()) {
      const [verb, resource] = key.split(" ");
      clusterCalls.add(`${RBAC_VERB[verb!] ?? verb} ${resource}`);
    }
    sim.access.clear();
    const lease = await createLeaseClient({
      kubeconfigPath: kubeconfig,
      namespace: NAMESPACE,
      name: LEASE,
    });
    for (const drive of Object.values(leaseDrivers)) await drive(lease);
    const leaseCalls = new Set([...sim.access.keys()].map((k) => {
      const [verb, resource] = k.split(" ");
      return `${RBAC_VERB[verb!] ?? verb} ${resource}`;
    }));
    assertEquals([...leaseCalls].sort(), [
      "create coordination.k8s.io/leases",
      "get coordination.k8s.io/leases",
      "update coordination.k8s.io/leases",
    ]);

    const named = await namedResources();
    // The Lease reference names the namespaced Lease (granted by the Role, not cluster-wide).
    named.delete("get coordination.k8s.io/leases");
    const needed = new Set([...clusterCalls, ...named, ...(await policyReads())]);
    const missing = [...needed].filter((g) => !cluster.has(g)).sort();
    const unused = [...cluster].filter((g) => !needed.has(g)).sort();
    assertEquals(missing, [], "requests cairn makes that deploy/rbac.yaml does not grant");
    assertEquals(unused, [], "grants in deploy/rbac.yaml that no code path uses");
    assertEquals(
      [...namespaced].sort(),
      [...leaseCalls].sort(),
      "the Lease Role: exactly the election's calls",
    );
  });
});

Deno.test("deploy/: the sample configuration loads with the pod's environment", async () => {
  const cm = parse(await Deno.readTextFile(join(ROOT, "deploy/config.yaml")));
  const r = safeLoadConfig({
    file: { text: cm.data["cairn.yaml"], name: "deploy/config.yaml#cairn.yaml" },
    env: {
      CAIRN_LEASE_NAMESPACE: NAMESPACE,
      CAIRN_LEASE_IDENTITY: "cairn-7d4b9c-abcde",
      CAIRN_JOURNAL: "postgres://cairn:x@postgres:5432/cairn",
      CAIRN_POD_NAMESPACE: NAMESPACE,
      CAIRN_POD_NAME: "cairn-7d4b9c-abcde",
    },
  });
  assert(r.ok, JSON.stringify(!r.ok && r.problems));
  assertEquals(r.config.leaderElection?.namespace, NAMESPACE);
  assertEquals(r.config.leaderElection?.name, LEASE);
  assertEquals(r.config.selfHosting?.replicaSelector, "app.kubernetes.io/name=cairn");
  // The Deployment gives the pod the variables the configuration reads.
  const deployment = parse(await Deno.readTextFile(join(ROOT, "deploy/deployment.yaml")));
  const env = deployment.spec.template.spec.containers[0].env.map((e: { name: string }) => e.name);
  for (
    const v of [
      "CAIRN_LEASE_NAMESPACE",
      "CAIRN_LEASE_IDENTITY",
      "CAIRN_POD_NAMESPACE",
      "CAIRN_POD_NAME",
      "CAIRN_JOURNAL",
    ]
  ) {
    assert(env.includes(v), v);
  }
  const kc = parse(cm.data["kubeconfig"]);
  assertEquals(kc.users[0].user["auth-provider"].name, "tokenFile");
});
