/**
 * `cairn sim serve` as a practice cluster, driven by the real (pinned) kubectl: by default virtual
 * time follows the real clock from the real now with no Talos stream open, so AGE reads right,
 * evicted pods finish terminating and `kubectl drain` of a free worker completes; a drain held by
 * a PodDisruptionBudget fails at its --timeout citing the budget.
 */
import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startSimServe } from "../_helpers/sim_serve.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const KUBECTL = Deno.env.get("CAIRN_KUBECTL") ?? "kubectl";

interface Served {
  readonly kubeconfig: string;
  readonly control: string;
  stop(): Promise<void>;
}

/** Starts `cairn sim serve` (the real CLI) with `extra` options; stopping it must exit 0. */
async function serve(extra: string[]): Promise<Served> {
  const twin = await startSimServe(extra, "cairn-practice-");
  return {
    kubeconfig: String(twin.facts["kubeconfig"]),
    control: String(twin.facts["control"]),
    async stop() {
      assertEquals(await twin.stop(), 0);
      Deno.removeSync(twin.stateDir, { recursive: true });
    },
  };
}

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

async function twinNow(control: string): Promise<number> {
  const state = await (await fetch(`${control}/state`)).json() as { nowMs: number };
  return state.nowMs;
}

Deno.test("sim serve runs on the real clock by default: time moves with no stream open, AGE is valid", async () => {
  const twin = await serve([]);
  try {
    const first = await twinNow(twin.control);
    // The twin's clock starts at the real now, never ahead of it.
    assert(Math.abs(first - Date.now()) < 5_000, `twin now ${first} vs real ${Date.now()}`);
    await new Promise((r) => setTimeout(r, 1_500));
    const second = await twinNow(twin.control);
    assert(second - first >= 1_000, `virtual time moved only ${second - first} ms in 1.5 s`);
    assert(second <= Date.now() + 1_000, "the twin's clock ran ahead of the real one");
    const nodes = await kubectl(twin.kubeconfig, "get", "nodes");
    assertEquals(nodes.code, 0, nodes.err);
    assert(!nodes.out.includes("<invalid>"), nodes.out);
    // The pinned kubectl is within one minor of the twin's apiserver (no skew warning).
    const version = await kubectl(twin.kubeconfig, "version");
    assertEquals(version.code, 0, version.err);
    assertMatch(version.out, /Server Version: v1\.35\.2/);
    assert(!/version skew/.test(version.out + version.err), version.out + version.err);
    const pods = await kubectl(twin.kubeconfig, "get", "pods", "-A");
    assertEquals(pods.code, 0, pods.err);
    assert(!pods.out.includes("<invalid>"), pods.out);
  } finally {
    await twin.stop();
  }
});

/** Rows of kubectl's table output as header name → cell (columns split on 2+ spaces). */
function rows(out: string): Record<string, string>[] {
  const [head, ...lines] = out.trimEnd().split("\n");
  const names = head!.trim().split(/\s{2,}/);
  return lines.map((l) => {
    const cells = l.trim().split(/\s{2,}/);
    return Object.fromEntries(names.map((n, i) => [n, cells[i] ?? ""]));
  });
}

Deno.test("kubectl get prints the real apiserver's columns from the twin's server-side Table", async () => {
  const twin = await serve([]);
  try {
    const cordon = await kubectl(twin.kubeconfig, "cordon", "worker-2");
    assertEquals(cordon.code, 0, cordon.err);
    const nodes = await kubectl(twin.kubeconfig, "get", "nodes");
    assertEquals(nodes.code, 0, nodes.err);
    assertMatch(nodes.out, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\n/);
    const byName = Object.fromEntries(rows(nodes.out).map((r) => [r["NAME"], r]));
    assertEquals(byName["worker-2"]!["STATUS"], "Ready,SchedulingDisabled");
    assertEquals(byName["worker-1"]!["STATUS"], "Ready");
    assertEquals(byName["cp-1"]!["ROLES"], "control-plane");
    assertEquals(byName["worker-1"]!["ROLES"], "<none>");
    assertEquals(byName["cp-1"]!["VERSION"], "v1.35.2");
    assertMatch(byName["cp-1"]!["AGE"]!, /^\d+s$/);

    const wideNodes = await kubectl(twin.kubeconfig, "get", "nodes", "-o", "wide");
    assertMatch(
      wideNodes.out,
      /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME\n/,
    );
    assertEquals(rows(wideNodes.out)[0]!["OS-IMAGE"], "Talos (v1.13.9)");

    const pods = await kubectl(twin.kubeconfig, "get", "pods", "-n", "database", "-o", "wide");
    assertEquals(pods.code, 0, pods.err);
    assertMatch(
      pods.out,
      /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES\n/,
    );
    const pg1 = rows(pods.out).find((r) => r["NAME"] === "postgres18-1")!;
    assertEquals(pg1["NODE"], "worker-1");
    assertMatch(pg1["IP"]!, /^10\.244\.\d+\.\d+$/);
    const ips = rows(pods.out).map((r) => r["IP"]);
    assertEquals(new Set(ips).size, ips.length, "pod IPs are unique");
    assertEquals(pg1["STATUS"], "Running");
    assertEquals(pg1["READY"], "1/1");

    const pdb = await kubectl(twin.kubeconfig, "get", "pdb", "-n", "database");
    assertMatch(pdb.out, /^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\n/);
    const primary = rows(pdb.out).find((r) => r["NAME"] === "postgres18-primary")!;
    assertEquals([
      primary["MIN AVAILABLE"],
      primary["MAX UNAVAILABLE"],
      primary["ALLOWED DISRUPTIONS"],
    ], [
      "1",
      "N/A",
      "0",
    ]);

    const deploy = await kubectl(twin.kubeconfig, "get", "deployments", "-n", "network");
    assertMatch(
      deploy.out,
      /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\necho\s+2\/2\s+2\s+2\s+\d+s\n/,
    );
    const ds = await kubectl(twin.kubeconfig, "get", "daemonsets", "-n", "kube-system");
    assertMatch(
      ds.out,
      /^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE\ncilium\s+7\s+7\s+7\s+7\s+7\s+<none>\s+\d+s\n/,
    );
    // `all` is a category the discovery documents carry; ReplicaSets report their pods.
    const all = await kubectl(twin.kubeconfig, "get", "all", "-n", "network");
    assertEquals(all.code, 0, all.err);
    assertMatch(all.out, /^deployment\.apps\/echo\s+2\/2\s+2\s+2\s/m);
    assertMatch(all.out, /^replicaset\.apps\/echo-\S+\s+2\s+2\s+2\s/m);
    assertMatch(all.out, /^pod\/echo-\S+\s+1\/1\s+Running\s/m);
    const ev = await kubectl(twin.kubeconfig, "get", "ev", "-A");
    assertEquals([ev.code, ev.err.includes("Warning")], [0, false], ev.err);
    const sts = await kubectl(twin.kubeconfig, "get", "statefulsets", "-A");
    assertEquals(sts.code, 0, sts.err);
    const leases = await kubectl(twin.kubeconfig, "get", "leases", "-A");
    assertEquals(leases.code, 0, leases.err);
    for (const out of [nodes.out, wideNodes.out, pods.out, pdb.out, deploy.out, ds.out]) {
      assert(!out.includes("<invalid>"), out);
    }
  } finally {
    await twin.stop();
  }
});

Deno.test("the real kubectl drains a free worker of sim serve, and a PDB-blocked drain fails citing the budget", async () => {
  const twin = await serve([]);
  try {
    const started = Date.now();
    const drain = await kubectl(
      twin.kubeconfig,
      "drain",
      "worker-4",
      "--ignore-daemonsets",
      "--delete-emptydir-data",
      "--timeout=60s",
    );
    const seconds = (Date.now() - started) / 1000;
    assertEquals(drain.code, 0, drain.err + drain.out);
    assertMatch(drain.out, /node\/worker-4 drained/);
    assert(seconds < 60, `drain took ${seconds} s`);
    const left = await kubectl(
      twin.kubeconfig,
      "get",
      "pods",
      "-A",
      "--field-selector",
      "spec.nodeName=worker-4",
      "-o",
      'jsonpath={range .items[*]}{.metadata.ownerReferences[0].kind}{"\\n"}{end}',
    );
    assertEquals(left.code, 0, left.err);
    assertEquals(left.out.trim().split("\n").filter((k) => k !== "DaemonSet" && k !== ""), []);
    // The drain is on the record, as a real cluster's events would have it.
    const events = await kubectl(twin.kubeconfig, "get", "events", "-A");
    assertEquals(events.code, 0, events.err);
    assertMatch(events.out, /^NAMESPACE\s+LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/);
    assertMatch(
      events.out,
      /Normal\s+NodeNotSchedulable\s+node\/worker-4\s+Node worker-4 status is now: NodeNotSchedulable/,
    );
    assertMatch(
      events.out,
      /Normal\s+Killing\s+pod\/cert-manager-\S+\s+Stopping container cert-manager/,
    );
    const described = await kubectl(twin.kubeconfig, "describe", "node", "worker-4");
    assertMatch(
      described.out,
      /Events:\n(.*\n)*\s+Normal\s+NodeNotSchedulable\s+\S+\s+kubelet\s+Node worker-4 status is now/,
    );

    // worker-1 holds the postgres primary, which postgres18-primary (minAvailable 1) protects.
    const blocked = await kubectl(
      twin.kubeconfig,
      "drain",
      "worker-1",
      "--ignore-daemonsets",
      "--delete-emptydir-data",
      "--timeout=8s",
    );
    assert(blocked.code !== 0, "a drain against the budget must fail");
    assertMatch(
      blocked.err + blocked.out,
      /Cannot evict pod as it would violate the pod's disruption budget/,
    );
    assertMatch(blocked.err, /The disruption budget postgres18-primary needs 1 healthy pods/);
    assertMatch(blocked.err, /unable to drain node "worker-1".*global timeout reached: 8s/);
  } finally {
    await twin.stop();
  }
});

/** Reads `stream` until `pred(text so far)` holds or `ms` of wall time pass; returns the text. */
async function readUntil(
  stream: ReadableStream<Uint8Array>,
  pred: (text: string) => boolean,
  ms: number,
): Promise<string> {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let text = "";
  const deadline = setTimeout(() => void reader.cancel(), ms);
  try {
    while (!pred(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value);
    }
  } finally {
    clearTimeout(deadline);
    reader.releaseLock();
  }
  return text;
}

Deno.test("kubectl rollout status, get -w and describe node behave as on a real cluster", async () => {
  const twin = await serve([]);
  try {
    // rollout status returns once the deployment is rolled out (the watch answers at once).
    const started = Date.now();
    const rollout = await kubectl(
      twin.kubeconfig,
      "rollout",
      "status",
      "deployment/echo",
      "-n",
      "network",
      "--timeout=20s",
    );
    assertEquals(rollout.code, 0, rollout.err);
    assertMatch(rollout.out, /deployment "echo" successfully rolled out/);
    assert(Date.now() - started < 10_000, `rollout status took ${Date.now() - started} ms`);

    // Workloads carry the apiserver's defaults, so a DaemonSet has its RollingUpdate strategy.
    const ds = await kubectl(
      twin.kubeconfig,
      "rollout",
      "status",
      "daemonset/cilium",
      "-n",
      "kube-system",
      "--timeout=20s",
    );
    assertEquals(ds.code, 0, ds.err);
    assertMatch(ds.out, /daemon set "cilium" successfully rolled out/);

    // describe node shows the kubelet's lease and the node's system facts.
    const describe = await kubectl(twin.kubeconfig, "describe", "node", "worker-1");
    assertEquals(describe.code, 0, describe.err);
    assertMatch(describe.out, /Lease:\s*\n\s+HolderIdentity:\s+worker-1\n/);
    assertMatch(describe.out, /Kubelet Version:\s+v1\.35\.2/);
    // The pod count is the node's, as a field-selected list of the same API sees it.
    const onNode = await kubectl(
      twin.kubeconfig,
      "get",
      "pods",
      "-A",
      "--field-selector",
      "spec.nodeName=worker-1",
      "-o",
      "name",
    );
    assertEquals(onNode.code, 0, onNode.err);
    const count = onNode.out.trim().split("\n").filter((l) => l.length > 0).length;
    assert(count > 0, onNode.out);
    assertMatch(describe.out, new RegExp(`Non-terminated Pods:\\s+\\(${count} in total\\)`));

    // get -w prints the table, then a row per change: a deleted pod terminates, a new one starts.
    const watcher = new Deno.Command(KUBECTL, {
      args: ["--kubeconfig", twin.kubeconfig, "get", "pods", "-n", "network", "-w"],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    try {
      const pods = await kubectl(twin.kubeconfig, "get", "pods", "-n", "network", "-o", "name");
      const victim = pods.out.trim().split("\n")[0]!.replace("pod/", "");
      const del = await kubectl(
        twin.kubeconfig,
        "delete",
        "pod",
        "-n",
        "network",
        victim,
        "--wait=false",
      );
      assertEquals(del.code, 0, del.err);
      const before = new Set(pods.out.trim().split("\n").map((n) => n.replace("pod/", "")));
      const terminating = new RegExp(`^${victim}\\s+\\d/1\\s+Terminating\\s`, "m");
      // The replacement: a pod that was not there before, reported Running and ready.
      const replacementRunning = (t: string) =>
        t.split("\n").some((l) => {
          const [name, ready, status] = l.trim().split(/\s+/);
          return name !== undefined && !before.has(name) && name !== "NAME" &&
            ready === "1/1" && status === "Running";
        });
      const seen = await readUntil(
        watcher.stdout,
        (t) => terminating.test(t) && replacementRunning(t),
        30_000,
      );
      assertMatch(seen, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n/);
      assertMatch(seen, terminating);
      assert(replacementRunning(seen), seen);
      assert(!seen.includes("<invalid>"), seen);
    } finally {
      watcher.kill("SIGTERM");
      await watcher.status;
    }
  } finally {
    await twin.stop();
  }
});

Deno.test("kubectl rollout restart rolls a deployment pod by pod and rollout status waits for it", async () => {
  const twin = await serve([]);
  try {
    const before = await kubectl(twin.kubeconfig, "get", "pods", "-n", "network", "-o", "name");
    const restart = await kubectl(
      twin.kubeconfig,
      "rollout",
      "restart",
      "deployment/echo",
      "-n",
      "network",
    );
    assertEquals(restart.code, 0, restart.err);
    const status = await kubectl(
      twin.kubeconfig,
      "rollout",
      "status",
      "deployment/echo",
      "-n",
      "network",
      "--timeout=50s",
    );
    assertEquals(status.code, 0, status.err + status.out);
    // It waited for new pods to come up and old ones to go, then reported success.
    assertMatch(status.out, /Waiting for deployment "echo" rollout to finish/);
    assertMatch(status.out, /deployment "echo" successfully rolled out\n$/);
    const rs = await kubectl(twin.kubeconfig, "get", "replicasets", "-n", "network");
    const sets = rows(rs.out);
    assertEquals(sets.length, 2, rs.out);
    assertEquals(sets.map((r) => r["DESIRED"]).sort(), ["0", "2"]);
    const running = await kubectl(twin.kubeconfig, "get", "pods", "-n", "network");
    const fresh = rows(running.out).filter((r) =>
      !before.out.includes(`pod/${r["NAME"]}\n`) && r["STATUS"] === "Running" &&
      r["READY"] === "1/1"
    );
    assertEquals(fresh.length, 2, running.out);
  } finally {
    await twin.stop();
  }
});

Deno.test("sim serve --speed 20 runs virtual time twenty times as fast; kubectl get ages stay valid", async () => {
  const twin = await serve(["--speed", "20"]);
  try {
    const first = await twinNow(twin.control);
    await new Promise((r) => setTimeout(r, 1_000));
    const moved = await twinNow(twin.control) - first;
    assert(moved >= 15_000, `virtual time moved only ${moved} ms in 1 s at speed 20`);
    // AGE comes from the twin's clock (server-side printing), so it reads right although the
    // twin is ahead of the real clock.
    const nodes = await kubectl(twin.kubeconfig, "get", "nodes");
    assertEquals(nodes.code, 0, nodes.err);
    assert(!nodes.out.includes("<invalid>"), nodes.out);
  } finally {
    await twin.stop();
  }
});

Deno.test("sim serve --manual-time keeps time still until a client moves it", async () => {
  const twin = await serve(["--manual-time"]);
  try {
    const first = await twinNow(twin.control);
    await new Promise((r) => setTimeout(r, 500));
    assertEquals(await twinNow(twin.control), first);
  } finally {
    await twin.stop();
  }
});

Deno.test("sim serve refuses a speed that is not positive, and --speed with --manual-time, before starting", async () => {
  for (
    const [args, message] of [
      [["--speed", "0"], /UsageInvalid: --speed must be a positive number, got "0"/],
      [["--speed", "fast"], /UsageInvalid: --speed must be a positive number, got "fast"/],
      [
        ["--speed", "2", "--manual-time"],
        /UsageInvalid: --speed and --manual-time exclude each other/,
      ],
    ] as const
  ) {
    const o = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "src/main.ts",
        "sim",
        "serve",
        "--cluster",
        "fixtures/clusters/home-ops.yaml",
        ...args,
      ],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(o.code, 2);
    assertMatch(new TextDecoder().decode(o.stderr), message);
    assertEquals(new TextDecoder().decode(o.stdout), "");
  }
});
