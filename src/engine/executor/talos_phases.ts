import type { TalosHop } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { ContainerdInstance } from "../../ports/talos.ts";
import type { StepState } from "./deps.ts";
import { failed, halt, type PhaseResult, proceed, unresolved } from "./halt.ts";
import { failureSent, mutate, type Sent, talosSent } from "./mutation.ts";

/** talosctl's default `--namespace system`; pull and install must use the same instance. */
const SYSTEM: ContainerdInstance = { driver: "CRI", namespace: "NS_SYSTEM" };

function deadlines(s: StepState) {
  return s.bound.plan.spec.phases.deadlines;
}

/** The reasons of a Talos phase whose response was not an acceptance: lost, or refused. */
const NOT_ACCEPTED = {
  pull: { lost: "PullResponseLost", refused: "PullRefused" },
  install: { lost: "InstallResponseLost", refused: "InstallRefused" },
  reboot: { lost: "RebootResponseLost", refused: "RebootRefused" },
} as const satisfies Record<string, { lost: Reason; refused: Reason }>;

/** Turns a non-accepted response into the halt its class demands. */
function haltFor(phase: keyof typeof NOT_ACCEPTED, sent: Sent<unknown>): PhaseResult<never> {
  const lost = sent.responseClass === "lost" || sent.responseClass === "transport-failure";
  return halt(unresolved(
    NOT_ACCEPTED[phase][lost ? "lost" : "refused"],
    `${phase}: ${sent.responseClass}: ${sent.detail}`,
  ));
}

/** Pulls the installer by digest into the system containerd store. */
export async function pullPhase(s: StepState, hop: TalosHop): Promise<PhaseResult> {
  const image = hop.installer.image;
  const r = await mutate(s, {
    phase: "pull",
    request: {
      rpc: "ImageService.Pull",
      node: s.node,
      address: s.address,
      image,
      containerd: SYSTEM,
    },
    route: `apid:node=${s.address}`,
    deadline: deadlines(s).pull,
    send: async (timeoutMs) =>
      talosSent(await s.deps.talos.pull(s.address, image, SYSTEM, { timeoutMs })),
  });
  if (r.kind === "refused") return halt(unresolved(r.reason, r.detail));
  return r.sent.responseClass === "accepted" ? proceed(undefined) : haltFor("pull", r.sent);
}

/**
 * Installs the hop's image into the other boot slot. Runs at most once per reboot: a second
 * install before the reboot would overwrite the fallback slot, so any outcome other than exit
 * code 0 halts the step and is never retried here.
 */
export async function installPhase(s: StepState, hop: TalosHop): Promise<PhaseResult> {
  const image = hop.installer.image;
  const lifecycle = hop.rpcPath === "lifecycle";
  const r = await mutate(s, {
    phase: "install",
    request: {
      rpc: lifecycle ? "LifecycleService.Upgrade" : "MachineService.Upgrade",
      node: s.node,
      address: s.address,
      image,
      ...(lifecycle ? { containerd: SYSTEM } : {}),
    },
    route: `apid:node=${s.address}`,
    deadline: deadlines(s).install,
    send: async (timeoutMs): Promise<Sent<number>> => {
      if (!lifecycle) {
        const legacy = await s.deps.talos.legacyUpgrade(s.address, image, { timeoutMs });
        return legacy.outcome === "ok"
          ? { responseClass: "accepted", detail: `ack ${legacy.value.ack}`, value: 0 }
          : failureSent(legacy);
      }
      const up = await s.deps.talos.upgrade(s.address, image, SYSTEM, { timeoutMs });
      if (up.outcome !== "ok") return failureSent(up);
      const code = up.value.exitCode;
      // A non-zero exit is the target's own answer: it accounts for the attempt, nothing more.
      return code === 0
        ? {
          responseClass: "accepted",
          detail: `exit 0 ${up.value.completedTag ?? ""}`.trim(),
          value: 0,
        }
        : { responseClass: "target-error", detail: `installer exit code ${code}`, value: code };
    },
  });
  if (r.kind === "refused") return halt(unresolved(r.reason, r.detail));
  if (r.sent.responseClass === "accepted") return proceed(undefined);
  if (r.sent.value !== undefined && r.sent.value !== 0) {
    return halt(failed("InstallFailed", `installer exited ${r.sent.value}`));
  }
  return haltFor("install", r.sent);
}

/** Reboots the node; returns the boot ID read before the request. */
export async function rebootPhase(s: StepState, bootIdBefore: string): Promise<PhaseResult> {
  const mode = s.bound.plan.spec.phases.rebootMode === "powercycle" ? "POWERCYCLE" : "DEFAULT";
  const r = await mutate(s, {
    phase: "reboot",
    request: {
      rpc: "MachineService.Reboot",
      node: s.node,
      address: s.address,
      mode,
      bootIdBefore,
    },
    route: `apid:node=${s.address}`,
    deadline: deadlines(s).reboot,
    send: async (timeoutMs) => talosSent(await s.deps.talos.reboot(s.address, mode, { timeoutMs })),
  });
  if (r.kind === "refused") return halt(unresolved(r.reason, r.detail));
  return r.sent.responseClass === "accepted" ? proceed(undefined) : haltFor("reboot", r.sent);
}
