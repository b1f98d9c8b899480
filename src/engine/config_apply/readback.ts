/**
 * Reads a node's machine configuration and each changed setting's activation back from the running
 * node (docs/config-apply.md#the-activation-table). A matching persistent document never proves
 * activation: each setting is judged by its own probe — a status the running service publishes, a
 * boot that started after the store, or nothing at all for install-only settings. A read that
 * fails is `unreadable`, never `active` and never `not-active`.
 */
import { parse } from "yaml";
import type { Classification } from "../../domain/config_apply/classify.ts";
import { type ConfigValue, sameValue, valueAt } from "../../domain/config_apply/config_diff.ts";
import { CairnError } from "../../domain/errors.ts";
import type { Talos } from "../../ports/talos.ts";

/** `MachineConfigs.config.talos.dev`: `v1alpha1` is the active document, `persistent` the stored. */
export const MACHINE_CONFIG = { namespace: "config", type: "MachineConfigs.config.talos.dev" };

/** A configuration document as read, or why it could not be. */
export type ConfigRead =
  | { readonly ok: true; readonly doc: ConfigValue; readonly version: string }
  | { readonly ok: false; readonly error: string };

function errText(e: unknown): string {
  return e instanceof CairnError
    ? `${e.reason}: ${e.message}`
    : e instanceof Error
    ? e.message
    : String(e);
}

/** Reads the active (`v1alpha1`) or persistent machine configuration of the node at `address`. */
export async function readMachineConfig(
  talos: Talos,
  address: string,
  id: "v1alpha1" | "persistent",
  timeoutMs: number,
): Promise<ConfigRead> {
  try {
    const r = await talos.resource(address, { ...MACHINE_CONFIG, id }, { timeoutMs });
    const doc = parse(r.yamlSpec) as ConfigValue;
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
      return { ok: false, error: `MachineConfigs ${id} is not a YAML mapping` };
    }
    return { ok: true, doc, version: r.version };
  } catch (e) {
    return { ok: false, error: errText(e) };
  }
}

/** One changed setting's activation as observed on the running node. */
export interface SettingActivation {
  readonly path: string;
  readonly class: string;
  /**
   * `active`: observed in effect; `not-active`: stored, not (yet) in effect; `install-only`:
   * stored, takes effect only at an install or upgrade; `unreadable`: the probe could not be read.
   */
  readonly state: "active" | "not-active" | "install-only" | "unreadable";
  /** How it was observed (the probe and what it showed, never a configuration value). */
  readonly basis: string;
}

/** What the readback needs besides the node. */
export interface ReadbackInput {
  readonly talos: Talos;
  readonly address: string;
  readonly timeoutMs: number;
  readonly classification: Classification;
  /** The document that was sent. */
  readonly target: ConfigValue;
  /**
   * Whether a boot started after the store was accepted (boot ID read before the reboot attempt
   * differs from the one read now); false when no reboot was part of the step.
   */
  readonly bootedAfterStore: boolean;
}

/** Reads every changed setting's activation. */
export async function readActivation(i: ReadbackInput): Promise<SettingActivation[]> {
  const active = await readMachineConfig(i.talos, i.address, "v1alpha1", i.timeoutMs);
  const out: SettingActivation[] = [];
  for (const c of i.classification.changes) {
    const path = c.change.path;
    const base = { path: labelOf(c.change), class: c.class };
    const probe = c.rule?.probe;
    if (!probe) {
      out.push({ ...base, state: "unreadable", basis: "no activation rule covers it" });
      continue;
    }
    switch (probe.kind) {
      case "never-by-apply":
        out.push({
          ...base,
          state: "install-only",
          basis: "applies at the next install or upgrade",
        });
        break;
      case "boot-after-store": {
        if (!active.ok) {
          out.push({
            ...base,
            state: "unreadable",
            basis: `active configuration: ${active.error}`,
          });
        } else if (!i.bootedAfterStore) {
          out.push({ ...base, state: "not-active", basis: "no boot since it was stored" });
        } else {
          const holds = sameValue(valueAt(active.doc, path), valueAt(i.target, path));
          out.push({
            ...base,
            state: holds ? "active" : "not-active",
            basis: holds
              ? "booted after the store; the active configuration holds it"
              : "booted after the store, but the active configuration does not hold it",
          });
        }
        break;
      }
      case "status":
        out.push({ ...base, ...await statusProbe(i, probe, path) });
        break;
      case "status-exists":
        out.push({ ...base, ...await existsProbe(i, probe, c.change.modules?.added ?? []) });
        break;
    }
  }
  return out;
}

function labelOf(
  change: {
    path: string;
    modules?: { added: readonly string[]; removed: readonly string[]; changed: readonly string[] };
  },
): string {
  const m = change.modules;
  if (!m) return change.path;
  const parts = [
    ...m.removed.map((n) => `-${n}`),
    ...m.changed.map((n) => `~${n}`),
    ...m.added.map((n) => `+${n}`),
  ];
  return `${change.path}[${parts.join(",")}]`;
}

async function statusProbe(
  i: ReadbackInput,
  probe: { namespace: string; type: string; id: string; field: string },
  path: string,
): Promise<Pick<SettingActivation, "state" | "basis">> {
  const where = `${probe.type}/${probe.id} ${probe.field}`;
  try {
    const r = await i.talos.resource(i.address, probe, { timeoutMs: i.timeoutMs });
    const spec = parse(r.yamlSpec) as Record<string, ConfigValue> | null;
    const running = spec?.[probe.field];
    const holds = sameValue(running, valueAt(i.target, path));
    return {
      state: holds ? "active" : "not-active",
      basis: holds ? `${where} matches` : `${where} still differs`,
    };
  } catch (e) {
    return { state: "unreadable", basis: `${where}: ${errText(e)}` };
  }
}

async function existsProbe(
  i: ReadbackInput,
  probe: { namespace: string; type: string },
  names: readonly string[],
): Promise<Pick<SettingActivation, "state" | "basis">> {
  const missing: string[] = [];
  for (const id of names) {
    try {
      await i.talos.resource(i.address, { ...probe, id }, { timeoutMs: i.timeoutMs });
    } catch (e) {
      if (e instanceof CairnError && e.reason === "TalosNotFound") missing.push(id);
      else return { state: "unreadable", basis: `${probe.type}/${id}: ${errText(e)}` };
    }
  }
  return missing.length === 0
    ? { state: "active", basis: `${probe.type} lists ${names.join(", ")}` }
    : { state: "not-active", basis: `${probe.type} lacks ${missing.join(", ")}` };
}

/** The step's postcondition reading from the persistent document and every setting's state. */
export function activationReading(
  storedHoldsTarget: boolean | undefined,
  settings: readonly SettingActivation[],
): "established" | "contradicted" | "unreadable" {
  if (storedHoldsTarget === undefined || settings.some((s) => s.state === "unreadable")) {
    return "unreadable";
  }
  if (!storedHoldsTarget || settings.some((s) => s.state === "not-active")) return "contradicted";
  return "established";
}
