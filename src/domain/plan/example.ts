/**
 * Builds TalosUpgrade plan YAML text for tests, fixtures and benchmarks (e.g. a 500-node plan).
 * The defaults are the shared world: cluster home-ops, v1.13.9 → v1.14.2, workers first.
 */
import { DEFAULT_TALOS_DEADLINES } from "./author.ts";

/** The home-ops schematic (world facts). */
export const HOME_OPS_SCHEMATIC =
  "30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b";
/** Installer digest of the v1.14.2 metal installer for that schematic (world facts). */
export const HOME_OPS_INSTALLER_DIGEST =
  "ab24c2b78ee916b5dbc6ddefe4d83bebd13346573d4c56f9c18210ea9f01a0b3";
/** SHA-256 of `policies/home-ops.yaml` (a test keeps the two in step). */
export const HOME_OPS_HEALTH_POLICY_SHA256 =
  "93e6ebeccdff543e329b475f85a66e2392c09a7483cf98012bf64f4824cac9e7";

/** Options of {@link buildTalosUpgradePlanYaml}. */
export interface TalosPlanOptions {
  /** SHA-256 of the catalogue file the plan binds (required: it depends on the snapshot). */
  readonly catalogueSha256: string;
  /** Total nodes; the last three are control planes (at least 1 worker when > 3). Default 7. */
  readonly nodes?: number;
  readonly name?: string;
  readonly expires?: string;
  readonly author?: string;
  /** Digest bound for `policies/home-ops.yaml`; default {@link HOME_OPS_HEALTH_POLICY_SHA256}. */
  readonly healthPolicySha256?: string;
  /** Evidence manifest to bind under `spec.evidence`; none by default. */
  readonly evidence?: { readonly path: string; readonly sha256: string };
}

function nodeList(total: number): string[] {
  const cps = Math.min(3, total);
  const workers = total - cps;
  const lines: string[] = [];
  for (let i = 1; i <= workers; i++) {
    const a = exampleNodeAddress("worker", i);
    lines.push(`    - name: worker-${i}`, "      role: worker", `      address: ${a}`);
  }
  for (let i = 1; i <= cps; i++) {
    const a = exampleNodeAddress("controlplane", i);
    lines.push(`    - name: cp-${i}`, "      role: controlplane", `      address: ${a}`);
  }
  return lines;
}

/**
 * The address of `cp-<i>` / `worker-<i>` in example plans (and in synthetic twins, which must
 * agree: the twin routes by these addresses).
 */
export function exampleNodeAddress(role: "controlplane" | "worker", i: number): string {
  const n = role === "worker" ? 3 + i : i;
  return `10.5.${Math.floor(n / 250)}.${(n % 250) + 2}`;
}

/**
 * Renders a valid TalosUpgrade plan (schema and semantics) for the shipped catalogue.
 *
 * @example
 * ```ts ignore
 * const yaml = buildTalosUpgradePlanYaml({ catalogueSha256: cat.sha256, nodes: 500 });
 * ```
 */
export function buildTalosUpgradePlanYaml(options: TalosPlanOptions): string {
  const image = `factory.talos.dev/metal-installer/${HOME_OPS_SCHEMATIC}:v1.14.2` +
    `@sha256:${HOME_OPS_INSTALLER_DIGEST}`;
  return [
    "apiVersion: cairn.dev/v1alpha1",
    "kind: TalosUpgrade",
    "metadata:",
    `  name: ${options.name ?? "talos-v1.14.2"}`,
    "  cluster: home-ops",
    `  author: ${options.author ?? "alice@example.com"}`,
    `  expires: ${options.expires ?? "2026-12-20T00:00:00Z"}`,
    "spec:",
    "  catalogue:",
    "    path: catalogue/talos.yaml",
    `    sha256: ${options.catalogueSha256}`,
    "  healthPolicy:",
    "    path: policies/home-ops.yaml",
    `    sha256: ${options.healthPolicySha256 ?? HOME_OPS_HEALTH_POLICY_SHA256}`,
    ...(options.evidence
      ? [
        "  evidence:",
        `    path: ${options.evidence.path}`,
        `    sha256: ${options.evidence.sha256}`,
      ]
      : []),
    "  retry:",
    "    maxAttempts: 3",
    "  platform: metal",
    "  arch: amd64",
    "  kubernetes:",
    "    version: v1.35.2",
    "    kubelet: v1.35.2",
    "  hops:",
    "    - from: v1.13.9",
    "      to: v1.14.2",
    "      rpcPath: lifecycle",
    "      installer:",
    `        image: ${image}`,
    `        schematic: ${HOME_OPS_SCHEMATIC}`,
    "  nodes:",
    ...nodeList(options.nodes ?? 7),
    "  rollout:",
    "    maxParallel: 1",
    "  phases:",
    "    drainTimeoutSeconds: 600",
    "    rebootMode: default",
    "    deadlines:",
    ...Object.entries(DEFAULT_TALOS_DEADLINES).map(([p, [t, v]]) =>
      `      ${p}: { transportSeconds: ${t}, verificationSeconds: ${v} }`
    ),
    "  recovery:",
    "    - action: uncordonOwnedCordon",
    "",
  ].join("\n");
}
