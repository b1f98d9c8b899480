/**
 * Machine identity (seed 000: "select one node by declared inventory, derive address and client
 * … a reused address must not select another machine"). A plan names a node and its address;
 * neither proves which machine answers. The machine is the SMBIOS system UUID, observed on both
 * sides: the kubelet's `status.nodeInfo.systemUUID` on the Kubernetes Node of that name, and
 * Talos `SystemInformations.hardware.talos.dev` (`uuid`) read at the plan's address. The
 * commitment binds what was observed; every attempt observes again and must find the same.
 *
 * Pure: the reads happen in the executor; this module only compares.
 */
import { parse } from "yaml";
import { ContentMemo } from "./content_memo.ts";

/** The COSI resource holding the SMBIOS facts (reader role, namespace `hardware`). */
export const SYSTEM_INFORMATION = {
  namespace: "hardware",
  type: "SystemInformations.hardware.talos.dev",
  id: "systeminformation",
} as const;

/** The identity bound at commitment and compared at every attempt. */
export interface MachineIdentity {
  /** The plan's node name (= the Kubernetes Node name). */
  readonly node: string;
  /** The plan's declared address: where every Talos call for this node is sent. */
  readonly address: string;
  /** SMBIOS system UUID, lower case, as both sides reported it. */
  readonly machineUuid: string;
}

/** One side's reading: the UUID it reported, or why there is none. */
export type UuidReading =
  | { readonly ok: true; readonly uuid: string }
  | { readonly ok: false; readonly error: string };

/** What one identity observation read. */
export interface IdentityObservation {
  readonly node: string;
  readonly address: string;
  /** The Kubernetes Node named `node`: its `status.nodeInfo.systemUUID`. */
  readonly kube: UuidReading;
  /** Talos at `address`: `SystemInformation.uuid`. */
  readonly talos: UuidReading;
}

export type IdentityVerdict =
  | { readonly ok: true; readonly identity: MachineIdentity }
  | {
    readonly ok: false;
    readonly reason: "MachineIdentityMismatch" | "MachineIdentityUnreadable";
    readonly detail: string;
  };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Normalizes a UUID as firmware and the kernel print it (either case) for comparison; anything
 * that is not a UUID is no reading at all. All-zero and all-F UUIDs are what boards without a
 * real UUID report: they identify nothing, so they count as unreadable, never as a match.
 */
export function normalizeUuid(raw: string): string | undefined {
  const u = raw.trim().toLowerCase();
  if (!UUID.test(u)) return undefined;
  const hex = u.replaceAll("-", "");
  if (/^0+$/.test(hex) || /^f+$/.test(hex)) return undefined;
  return u;
}

/** The `uuid` of a SystemInformation resource's YAML spec. */
export function uuidFromSystemInformation(yamlSpec: string): UuidReading {
  // The executor reads the identity at every commitment and attempt, and a machine answers the
  // same text each time: parsed once per text (issue 16). The reading is frozen, so shared.
  return readings.get(yamlSpec, () => Object.freeze(parseSystemInformation(yamlSpec)));
}

const readings = new ContentMemo<UuidReading>(64);

function parseSystemInformation(yamlSpec: string): UuidReading {
  let doc: unknown;
  try {
    doc = parse(yamlSpec);
  } catch (e) {
    return { ok: false, error: `SystemInformation spec is not YAML: ${(e as Error).message}` };
  }
  const raw = (doc as { uuid?: unknown } | null)?.uuid;
  const uuid = typeof raw === "string" ? normalizeUuid(raw) : undefined;
  return uuid
    ? { ok: true, uuid }
    : { ok: false, error: `SystemInformation has no usable uuid (${JSON.stringify(raw ?? null)})` };
}

/** A Kubernetes Node's `systemUUID` as a reading. */
export function uuidFromNode(systemUUID: string): UuidReading {
  const uuid = normalizeUuid(systemUUID);
  return uuid
    ? { ok: true, uuid }
    : { ok: false, error: `Node reports no usable systemUUID (${JSON.stringify(systemUUID)})` };
}

/**
 * Judges one observation: both sides must be read, must name the same machine, and — once a
 * commitment bound an identity — that machine must be the committed one. Unreadable is never a
 * match and never a mismatch: it is its own verdict.
 */
export function judgeIdentity(
  o: IdentityObservation,
  committed?: MachineIdentity,
): IdentityVerdict {
  const unreadable: string[] = [];
  if (!o.kube.ok) unreadable.push(`Kubernetes Node ${o.node}: ${o.kube.error}`);
  if (!o.talos.ok) unreadable.push(`Talos at ${o.address}: ${o.talos.error}`);
  if (!o.kube.ok || !o.talos.ok) {
    return { ok: false, reason: "MachineIdentityUnreadable", detail: unreadable.join("; ") };
  }
  if (o.kube.uuid !== o.talos.uuid) {
    return {
      ok: false,
      reason: "MachineIdentityMismatch",
      detail: `Node ${o.node} is machine ${o.kube.uuid} but Talos at ${o.address} is machine ` +
        `${o.talos.uuid}: the address reaches another machine`,
    };
  }
  if (committed) {
    if (committed.node !== o.node || committed.address !== o.address) {
      return {
        ok: false,
        reason: "MachineIdentityMismatch",
        detail: `observed ${o.node} at ${o.address}, committed ${committed.node} at ` +
          `${committed.address}`,
      };
    }
    if (committed.machineUuid !== o.kube.uuid) {
      return {
        ok: false,
        reason: "MachineIdentityMismatch",
        detail: `${o.node} at ${o.address} is now machine ${o.kube.uuid}; the commitment bound ` +
          `machine ${committed.machineUuid} (replaced or re-imaged)`,
      };
    }
  }
  return { ok: true, identity: { node: o.node, address: o.address, machineUuid: o.kube.uuid } };
}

/** The canonical text of an identity, as the journal records it. */
export function identityRecord(i: MachineIdentity): string {
  return `machine=${i.machineUuid} node=${i.node} address=${i.address}`;
}

/** Reads back an {@link identityRecord}; undefined for anything else. */
export function parseIdentityRecord(text: string): MachineIdentity | undefined {
  const m = /^machine=(\S+) node=(\S+) address=(\S+)$/.exec(text);
  const uuid = m ? normalizeUuid(m[1]!) : undefined;
  return m && uuid ? { machineUuid: uuid, node: m[2]!, address: m[3]! } : undefined;
}
