import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import {
  type Command,
  type CommandIO,
  EXIT,
  OUTPUT_OPTION,
  parseRegistryMirrors,
  printJson,
  UsageError,
  wantsJson,
} from "./command.ts";
import { parseNow } from "./plan_check.ts";
import { suggest } from "./suggest.ts";
import { checkPlanFile } from "../app/plan_check_run.ts";
import {
  componentBranchChange,
  newPlanInstallerResolver,
  newPlanRepositoryRoot,
  readFileToBind,
} from "../app/plan_new_run.ts";
import { parseCatalogue } from "../domain/catalogue.ts";
import { CairnError, formatProblem, type Problem } from "../domain/errors.ts";
import {
  commonFact,
  type ComponentPlanDraft,
  installerReference,
  parseNodeSource,
  renderComponentUpgradePlan,
  renderConfigApplyPlan,
  renderKubernetesUpgradePlan,
  renderTalosUpgradePlan,
  rolloutOrder,
  rpcPathFor,
  talosHopChain,
} from "../domain/plan/author.ts";
import { sha256Hex } from "../domain/plan/digest.ts";
import { formatPath, loadYaml, locate } from "../domain/plan/yaml_load.ts";
import type { TalosHop } from "../domain/plan/schema.ts";
import type { Reason } from "../domain/reasons.ts";
import { isVersion } from "../domain/version.ts";

function refuse(message: string, reason: Reason = "AuthoringInputInvalid"): never {
  throw new CairnError({ reason, message });
}

function str(args: Parameters<Command["run"]>[0], name: string): string | undefined {
  const v = args.values[name];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** Default expiry: two weeks after `nowMs`, to the second (reviews take days, not months). */
const DEFAULT_EXPIRY_MS = 14 * 24 * 3600 * 1000;

/**
 * Reads a file the plan will bind, exactly as `plan check` will read it (from the plan's
 * directory upwards, inside the repository, no symlinks): the digest written is the digest of
 * the bytes the check will hash.
 */
async function bindFile(
  outAbs: string,
  root: string,
  given: string,
  cwd: string,
  flag: string,
): Promise<{ path: string; sha256: string; bytes: Uint8Array }> {
  const abs = resolve(cwd, given);
  const rel = relative(root, abs);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) {
    refuse(`${flag} ${given} is outside the repository (${root}); a plan binds repository files`);
  }
  const path = rel.split(sep).join("/");
  const read = await readFileToBind(outAbs, path, { cwd, root });
  if (read.status === "missing") refuse(`${flag} ${given}: ${read.detail}`, "FileUnreadable");
  if (read.status === "refused") refuse(`${flag} ${given}: ${read.detail}`, read.reason);
  return { path, sha256: await sha256Hex(read.bytes), bytes: read.bytes };
}

async function writeNew(path: string, text: string): Promise<string> {
  await Deno.mkdir(dirname(path), { recursive: true });
  const tmp = await Deno.makeTempFile({
    dir: dirname(path),
    prefix: ".cairn-plan-",
    suffix: ".yaml",
  });
  await Deno.writeTextFile(tmp, text);
  return tmp;
}

async function run(args: Parameters<Command["run"]>[0], io: CommandIO): Promise<number> {
  const kind = args.positionals[0]!;
  const kinds = ["talos", "kubernetes", "config", "component"];
  if (!kinds.includes(kind)) {
    const near = suggest(kind, kinds);
    throw new UsageError(
      `plan new ${kind}: expected talos, kubernetes, config or component` +
        (near ? ` — did you mean "${near}"?` : ""),
    );
  }
  const nowMs = parseNow(str(args, "now")) ?? Date.now();
  const required = (name: string) => {
    const v = str(args, name);
    if (!v) throw new UsageError(`--${name} is required`);
    return v;
  };
  // A ConfigApply changes no version: it is the one kind without --to.
  const to = kind === "config" ? "" : required("to");
  const author = required("author");
  const expires = str(args, "expires") ??
    new Date(nowMs + DEFAULT_EXPIRY_MS).toISOString().replace(/\.\d{3}Z$/, "Z");
  for (const [flag, v] of [["to", str(args, "to")], ["from", str(args, "from")]] as const) {
    if (v !== undefined && !(v.startsWith("v") && isVersion(v))) {
      throw new UsageError(`--${flag} must be a v-prefixed version like v1.14.2, got ${v}`);
    }
  }

  // Where the plan goes, and the files it binds (repository-relative, digests computed).
  const planFiles = async (name: string, cluster: string) => {
    const out = str(args, "out") ?? join("plans", `${name}.yaml`);
    const outAbs = resolve(io.cwd, out);
    const exists = await Deno.lstat(outAbs).then(() => true, () => false);
    if (exists && !args.values["force"]) refuse(`${out} exists; --force to overwrite it`);
    const root = await newPlanRepositoryRoot(dirname(outAbs), io.cwd);
    const catalogue = await bindFile(
      outAbs,
      root,
      str(args, "catalogue") ?? "catalogue/talos.yaml",
      io.cwd,
      "--catalogue",
    );
    const healthPolicy = await bindFile(
      outAbs,
      root,
      str(args, "health-policy") ?? `policies/${cluster}.yaml`,
      io.cwd,
      "--health-policy",
    );
    const evidenceFlag = str(args, "evidence");
    const evidence = evidenceFlag
      ? await bindFile(outAbs, root, evidenceFlag, io.cwd, "--evidence")
      : undefined;
    return { out, outAbs, root, catalogue, healthPolicy, ...(evidence ? { evidence } : {}) };
  };

  if (kind === "component") {
    const cluster = required("cluster"), component = required("component");
    const from = required("from");
    const name = str(args, "name") ?? `${component}-${to.replace(/^v/, "")}`;
    const { out, outAbs, root, healthPolicy } = await planFiles(name, cluster);
    const text = renderComponentUpgradePlan({
      name,
      cluster,
      author,
      expires,
      healthPolicy,
      component,
      flux: {
        kind: str(args, "flux-kind") ?? "HelmRelease",
        namespace: required("flux-namespace"),
        name: str(args, "flux-name") ?? component,
      },
      from,
      to,
      ...(await componentChange(args, root, component)),
    });
    return await keepIfChecked(text, out, outAbs, {
      name,
      summary: `${component} ${from}→${to}`,
      json: { component, from, to },
      nodes: 0,
    });
  }

  // The nodes, and the facts they agree on.
  const nodesFile = required("nodes");
  const nodesBytes = await Deno.readFile(resolve(io.cwd, nodesFile)).catch(() =>
    refuse(`--nodes ${nodesFile} cannot be read`, "FileUnreadable")
  );
  const loaded = loadYaml(nodesBytes, { file: nodesFile });
  if (!loaded.ok) throw new CairnError(loaded.problems[0]!);
  const parsedNodes = parseNodeSource(loaded.loaded.value);
  if (!parsedNodes.ok) {
    const at = locate(loaded.loaded, parsedNodes.path);
    throw new CairnError({
      reason: "AuthoringInputInvalid",
      message: `not a cluster description or node inventory: ${parsedNodes.message}`,
      location: { file: nodesFile, ...at, path: formatPath(parsedNodes.path) },
    });
  }
  const source = parsedNodes.source;
  const cluster = str(args, "cluster") ?? source.cluster;
  if (cluster !== source.cluster) {
    refuse(`--cluster ${cluster} but ${nodesFile} describes cluster ${source.cluster}`);
  }
  const fact = (flag: string, key: Parameters<typeof commonFact>[1], fallback?: string) => {
    const given = str(args, flag);
    if (given) return given;
    const c = commonFact(source.nodes, key);
    if (c.conflict) refuse(`${nodesFile}: ${c.conflict}; give --${flag}`);
    return c.value ?? fallback;
  };
  /** The Talos version every node runs (--talos, else the node source's): required. */
  const talosVersionOfNodes = (): string => {
    const v = fact("talos", "talosVersion");
    if (!v) throw new UsageError(`--talos is required (${nodesFile} does not say it)`);
    return v;
  };
  if (kind === "kubernetes") {
    const from = str(args, "from") ?? source.kubernetesVersion;
    if (!from) throw new UsageError(`--from is required (${nodesFile} does not say it)`);
    const talosVersion = talosVersionOfNodes();
    const name = str(args, "name") ?? `kubernetes-${to}`;
    const { out, outAbs, catalogue, healthPolicy, evidence } = await planFiles(name, cluster);
    const text = renderKubernetesUpgradePlan({
      name,
      cluster,
      author,
      expires,
      catalogue,
      healthPolicy,
      ...(evidence ? { evidence } : {}),
      talosVersion,
      from,
      to,
      nodes: rolloutOrder(source.nodes, "controlPlanesFirst"),
    });
    return await keepIfChecked(text, out, outAbs, {
      name,
      summary: `${from}→${to} on Talos ${talosVersion}`,
      json: { from, to, talosVersion },
      nodes: source.nodes.length,
    });
  }

  if (kind === "config") {
    const talosVersion = talosVersionOfNodes();
    const mode = required("mode"),
      activation = required("activation"),
      configFile = required("config");
    const name = str(args, "name") ?? `config-${basename(configFile).replace(/\.ya?ml$/, "")}`;
    const { out, outAbs, root, catalogue, healthPolicy } = await planFiles(name, cluster);
    const config = await bindFile(outAbs, root, configFile, io.cwd, "--config");
    const text = renderConfigApplyPlan({
      name,
      cluster,
      author,
      expires,
      catalogue,
      healthPolicy,
      config,
      talosVersion,
      mode,
      activation,
      nodes: rolloutOrder(source.nodes),
    });
    return await keepIfChecked(text, out, outAbs, {
      name,
      summary: `mode ${mode}, activation ${activation} on Talos ${talosVersion}`,
      json: { talosVersion, mode, activation },
      nodes: source.nodes.length,
    });
  }

  const from = fact("from", "talosVersion");
  if (!from) {
    throw new UsageError(`--from is required (${nodesFile} does not say what the nodes run)`);
  }
  const behind = source.nodes.find((n) => n.talosVersion !== undefined && n.talosVersion !== from);
  if (behind) refuse(`node ${behind.name} runs Talos ${behind.talosVersion}, not --from ${from}`);
  const schematic = fact("schematic", "schematic");
  if (!schematic || !/^[0-9a-f]{64}$/.test(schematic)) {
    refuse(`the installer schematic is ${schematic ? "not 64 hex" : "unknown"}: give --schematic`);
  }
  const platform = fact("platform", "platform", "metal")!;
  const arch = fact("arch", "arch", "amd64")!;
  const k8s = str(args, "kubernetes") ?? source.kubernetesVersion;
  if (!k8s) refuse(`the Kubernetes version is unknown: give --kubernetes`);
  const kubelet = fact("kubelet", "kubeletVersion", k8s)!;

  const name = str(args, "name") ?? `talos-${to}`;
  const { out, outAbs, catalogue, healthPolicy, evidence } = await planFiles(name, cluster);
  const cat = await parseCatalogue(catalogue.bytes, catalogue.path);

  // The hop chain, each hop's installer resolved to its per-platform digest. Never a bare tag.
  const chain = talosHopChain(cat, from, to);
  if (!chain.ok) refuse(chain.refusal.message, chain.refusal.reason);
  const registry = str(args, "installer-registry") ?? "factory.talos.dev";
  const resolver = newPlanInstallerResolver(
    parseRegistryMirrors(args.values["registry-mirror"]),
    30_000,
  );
  const hops: TalosHop[] = [];
  for (const step of chain.hops) {
    const reference = installerReference(registry, platform, schematic!, step.to);
    const r = await resolver.resolve(reference, { os: "linux", architecture: arch });
    if (!r.ok) {
      refuse(
        `cannot resolve the installer ${reference} for linux/${arch} through ` +
          `${resolver.describe()}: ${r.failure.message} (a plan never binds a tag without its ` +
          "digest; --registry-mirror HOST=URL reaches a mirror)",
        r.failure.reason,
      );
    }
    hops.push({
      from: step.from,
      to: step.to,
      rpcPath: rpcPathFor(step.from),
      installer: { image: `${reference}@${r.value.digest}`, schematic: schematic! },
    });
  }

  const text = renderTalosUpgradePlan({
    name,
    cluster,
    author,
    expires,
    catalogue,
    healthPolicy,
    ...(evidence ? { evidence } : {}),
    platform,
    arch,
    kubernetes: { version: k8s!, kubelet },
    hops,
    nodes: rolloutOrder(source.nodes),
  });

  return await keepIfChecked(text, out, outAbs, {
    name,
    summary: chain.hops.map((h) => `${h.from}→${h.to}`).join(", "),
    json: { hops: chain.hops },
    nodes: source.nodes.length,
  });

  /** Kept only when it passes every check `plan check` runs on it, in place. */
  async function keepIfChecked(
    text: string,
    out: string,
    outAbs: string,
    what: { name: string; summary: string; json: Record<string, unknown>; nodes: number },
  ): Promise<number> {
    const tmp = await writeNew(outAbs, text);
    try {
      const checked = await checkPlanFile(tmp, { nowMs, cwd: io.cwd });
      if (!checked.ok) {
        for (const p of checked.problems) io.stderr(formatProblem(rename(p, tmp, out)) + "\n");
        io.stderr(`refused: the plan written for ${out} fails plan check; nothing written\n`);
        return EXIT.refused;
      }
      await Deno.rename(tmp, outAbs);
      if (wantsJson(args)) {
        printJson(io, {
          file: out,
          name: what.name,
          sha256: checked.sha256,
          ...what.json,
          nodes: what.nodes,
        });
      } else {
        io.stdout(
          `wrote ${out}: ${what.name}, ${what.summary}, ${what.nodes} nodes, ` +
            `sha256:${checked.sha256}; it passes plan check — sign it with: ` +
            `cairn plan sign ${out} --key KEY\n`,
        );
      }
      return EXIT.ok;
    } finally {
      await Deno.remove(tmp).catch(() => {});
    }
  }
}

function rename(p: Problem, tmp: string, out: string): Problem {
  if (!p.location || basename(p.location.file) !== basename(tmp)) return p;
  return { ...p, location: { ...p.location, file: out } };
}

export const command: Command = {
  path: ["plan", "new"],
  summary: "Write a new plan with bound digests, hop chain and installer digests filled in",
  usage: "talos|kubernetes|config|component --to VERSION --author P [--nodes FILE] [...]",
  help: `
Writes a TalosUpgrade plan (plans/talos-<to>.yaml unless --out) that passes plan check:

- nodes from --nodes, a cluster description (fixtures/clusters/*.yaml) or a NodeInventory
  (kind: NodeInventory, spec.nodes: [{name, role, address, schematic?, talosVersion?, ...}]),
  workers first, then control planes;
- the files it binds, by repository-relative path and the SHA-256 of their bytes: the
  catalogue (--catalogue, default catalogue/talos.yaml), the health policy (--health-policy,
  default policies/<cluster>.yaml) and, with --evidence, the evidence manifest;
- the hop chain from the catalogue: the latest patch of the current minor first, then one
  minor at a time to the latest patch of each, ending at --to;
- each hop's installer (<registry>/<platform>-installer/<schematic>:<to>) resolved to its
  linux/<arch> manifest digest through the OCI registry; when it cannot be resolved the plan
  is refused (a tag without a digest is never written).

\`plan new kubernetes\` writes a KubernetesUpgrade (plans/kubernetes-<to>.yaml): --from defaults
to the node source's Kubernetes version, --talos to the Talos version every node runs; control
planes first, then the kubelets on workers; the same bound files.

\`plan new config\` writes a ConfigApply (--mode, --activation, --config PATCH bound by digest,
--talos defaulting to what every node runs; workers first). \`plan new component\` writes a
ComponentUpgrade (--cluster, --component, --flux-namespace, --flux-kind HelmRelease,
--flux-name <component>, --from, --to; no nodes, no catalogue). With --base REF --head REF
(the reviewed branch, in the plan's repository) it binds both commits and every pin file of the
component's playbook the branch changes, by its SHA-256 at head; --flux-source
KIND/NAMESPACE/NAME names the Flux source that must reach --to, and each --expect-image
'NAMESPACE|SELECTOR|CONTAINER|IMAGE' an image operator-rendered pods must run once it landed.

An existing file is never overwritten without --force. The written plan is checked as
\`cairn plan check\` checks it and only kept if it passes.

Options:
  --nodes FILE            cluster description or node inventory (required)
  --to V                  target Talos (talos) or Kubernetes (kubernetes) version (required)
  --author P              the plan's author, an SSH principal (required)
  --from V                source version (default: what the nodes run)
  --talos V               kubernetes: the Talos version every node runs (default: the nodes')
  --cluster C             cluster name (must match the node source)
  --kubernetes V          Kubernetes version (default: the cluster description's)
  --kubelet V             kubelet version (default: the nodes', else --kubernetes)
  --schematic ID          Image Factory schematic (default: the nodes')
  --platform P, --arch A  installer platform and architecture (default: the nodes', metal/amd64)
  --installer-registry H  installer registry host (default factory.talos.dev)
  --registry-mirror H=URL resolve references naming host H at URL (repeatable)
  --catalogue F, --health-policy F, --evidence F   the files the plan binds
  --name N, --out F       plan name (default talos-<to> / kubernetes-<to>) and file
                          (default plans/<name>.yaml)
  --expires T             RFC 3339 UTC expiry (default: 14 days from now)
  --now T                 check as of this RFC 3339 time instead of the system clock
  --force                 overwrite an existing file
  --output json           print {file, name, sha256, hops, nodes} as JSON`,
  options: {
    nodes: { type: "string" },
    to: { type: "string" },
    from: { type: "string" },
    talos: { type: "string" },
    mode: { type: "string" },
    activation: { type: "string" },
    config: { type: "string" },
    component: { type: "string" },
    base: { type: "string" },
    head: { type: "string" },
    "flux-source": { type: "string" },
    "expect-image": { type: "string", multiple: true },
    "flux-kind": { type: "string" },
    "flux-namespace": { type: "string" },
    "flux-name": { type: "string" },
    author: { type: "string" },
    cluster: { type: "string" },
    kubernetes: { type: "string" },
    kubelet: { type: "string" },
    schematic: { type: "string" },
    platform: { type: "string" },
    arch: { type: "string" },
    "installer-registry": { type: "string" },
    "registry-mirror": { type: "string", multiple: true },
    catalogue: { type: "string" },
    "health-policy": { type: "string" },
    evidence: { type: "string" },
    name: { type: "string" },
    out: { type: "string" },
    expires: { type: "string" },
    now: { type: "string" },
    force: { type: "boolean" },
    ...OUTPUT_OPTION,
  },
  positionals: { min: 1, max: 1 },
  run,
};

/** `--base/--head` (the reviewed branch) and `--flux-source/--expect-image` (what must land). */
async function componentChange(
  args: Parameters<Command["run"]>[0],
  root: string,
  component: string,
): Promise<Pick<ComponentPlanDraft, "change" | "delivery">> {
  const base = args.values["base"] as string | undefined;
  const head = args.values["head"] as string | undefined;
  if ((base === undefined) !== (head === undefined)) {
    throw new UsageError("--base and --head go together (the reviewed branch)");
  }
  const out: { -readonly [K in "change" | "delivery"]?: NonNullable<ComponentPlanDraft[K]> } = {};
  if (base !== undefined && head !== undefined) {
    out.change = await componentBranchChange({
      root,
      cairnRoot: resolve(dirname(new URL(import.meta.url).pathname), "../.."),
      component,
      base,
      head,
    });
  }
  const source = args.values["flux-source"] as string | undefined;
  const images = (args.values["expect-image"] as string[] | undefined) ?? [];
  if (source === undefined && images.length > 0) {
    throw new UsageError("--expect-image needs --flux-source (the source that must reach --to)");
  }
  if (source !== undefined) {
    const m = /^(OCIRepository|GitRepository)\/([a-z0-9-]+)\/([a-z0-9-]+)$/.exec(source);
    if (!m) throw new UsageError(`--flux-source ${source}: expected KIND/NAMESPACE/NAME`);
    out.delivery = {
      source: { kind: m[1]!, namespace: m[2]!, name: m[3]! },
      images: images.map((x) => {
        const i = /^([a-z0-9-]+)\|([^|\s]+)\|([a-z0-9-]+)\|([^|\s]+)$/.exec(x);
        if (!i) {
          throw new UsageError(
            `--expect-image ${x}: expected NAMESPACE|SELECTOR|CONTAINER|IMAGE`,
          );
        }
        return {
          namespace: i[1]!,
          selector: i[2]!,
          container: i[3]!,
          image: i[4]!,
          renderedBy: `the operator reconciling ${component}`,
        };
      }),
    };
  }
  return out;
}
