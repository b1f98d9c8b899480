/**
 * The activation classification of a whole effective diff: the seed's examples (etcd settings,
 * kernel module removal, volume encryption-key rotation, install settings), unknown holding, and
 * the mode rules per Talos minor.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import {
  classifyDiff,
  declaredClassRefusal,
  modeFitsClass,
  modeRejectedByVersion,
  talosMode,
} from "../../../src/domain/config_apply/classify.ts";
import {
  type ConfigValue,
  diffConfigs,
  mergePatch,
  PatchInvalid,
} from "../../../src/domain/config_apply/config_diff.ts";
import { ACTIVATION_TABLE, ruleFor } from "../../../src/domain/config_apply/activation_table.ts";

const RUNNING: ConfigValue = {
  version: "v1alpha1",
  machine: {
    type: "controlplane",
    install: { disk: "/dev/sda", image: "ghcr.io/siderolabs/installer:v1.14.2" },
    time: { servers: ["time.cloudflare.com"] },
    kernel: {
      modules: [{ name: "br_netfilter" }, {
        name: "drbd",
        parameters: ["usermode_helper=disabled"],
      }],
    },
    systemDiskEncryption: { ephemeral: { provider: "luks2", keys: [{ slot: 0, nodeID: {} }] } },
  },
  cluster: { etcd: { extraArgs: { "election-timeout": "5000" } } },
};

function classify(minor: number, patch: ConfigValue) {
  return classifyDiff(minor, diffConfigs(RUNNING, mergePatch(RUNNING, patch)));
}

Deno.test("a time-server change is immediate on 1.13 and 1.14, observed through TimeServerStatuses", () => {
  for (const minor of [13, 14]) {
    const c = classify(minor, { machine: { time: { servers: ["pool.ntp.org"] } } });
    assertEquals(c.overall, "immediate");
    assertEquals(c.changes.map((x) => x.change.path), ["machine.time.servers"]);
    const probe = c.changes[0]!.rule!.probe;
    ok(probe.kind === "status" && probe.type === "TimeServerStatuses.net.talos.dev");
  }
});

Deno.test("etcd settings need explicit activation (documented for 1.14, assumed stricter on 1.13)", () => {
  const patch = { cluster: { etcd: { extraArgs: { "election-timeout": "10000" } } } };
  const c14 = classify(14, patch);
  assertEquals(c14.overall, "explicitActivation");
  assertEquals(c14.changes[0]!.change.path, "cluster.etcd.extraArgs.election-timeout");
  assertEquals(c14.changes[0]!.rule!.basis, "documented");
  const c13 = classify(13, patch);
  assertEquals(c13.overall, "explicitActivation");
  assertEquals(c13.changes[0]!.rule!.basis, "assumed-stricter");
});

Deno.test("kernel module removal needs explicit activation; an addition alone does not hide it", () => {
  const removal = classify(14, { machine: { kernel: { modules: [{ name: "br_netfilter" }] } } });
  assertEquals(removal.overall, "explicitActivation");
  assertEquals(removal.changes[0]!.change.modules!.removed, ["drbd"]);
  const paramChange = classify(14, {
    machine: { kernel: { modules: [{ name: "br_netfilter" }, { name: "drbd", parameters: [] }] } },
  });
  assertEquals(paramChange.overall, "explicitActivation");
  assertEquals(paramChange.changes[0]!.change.modules!.changed, ["drbd"]);
  const addOnly = classify(14, {
    machine: {
      kernel: {
        modules: [{ name: "br_netfilter" }, {
          name: "drbd",
          parameters: ["usermode_helper=disabled"],
        }, {
          name: "nvme_tcp",
        }],
      },
    },
  });
  assertEquals(addOnly.overall, "immediate");
  const addAndRemove = classify(14, {
    machine: { kernel: { modules: [{ name: "br_netfilter" }, { name: "nvme_tcp" }] } },
  });
  assertEquals(addAndRemove.changes.map((x) => x.class).sort(), [
    "explicitActivation",
    "immediate",
  ]);
  assertEquals(addAndRemove.overall, "explicitActivation");
});

Deno.test("a module addition on 1.13 has no rule (no status to observe it by): unknown holds", () => {
  const c = classify(13, {
    machine: {
      kernel: {
        modules: [{ name: "br_netfilter" }, {
          name: "drbd",
          parameters: ["usermode_helper=disabled"],
        }, {
          name: "nvme_tcp",
        }],
      },
    },
  });
  assertEquals(c.overall, "unknown");
  assertEquals(modeFitsClass("noReboot", c.overall)?.reason, "ConfigActivationUnknown");
});

Deno.test("volume encryption-key rotation needs explicit activation", () => {
  const c = classify(14, {
    machine: { systemDiskEncryption: { ephemeral: { keys: [{ slot: 1, tpm: {} }] } } },
  });
  assertEquals(c.overall, "explicitActivation");
  assertEquals(c.changes[0]!.change.path, "machine.systemDiskEncryption.ephemeral.keys");
});

Deno.test("install settings are install-or-upgrade only; with an immediate change the diff is installUpgradeOnly", () => {
  const c = classify(14, { machine: { install: { disk: "/dev/nvme0n1" } } });
  assertEquals(c.overall, "installUpgradeOnly");
  assertEquals(c.changes[0]!.rule!.probe.kind, "never-by-apply");
  const both = classify(13, {
    machine: { install: { disk: "/dev/nvme0n1" }, time: { servers: ["pool.ntp.org"] } },
  });
  assertEquals(both.overall, "installUpgradeOnly");
});

Deno.test("the whole effective diff is classified: an unrelated setting makes it unknown", () => {
  const c = classify(14, {
    machine: { time: { servers: ["pool.ntp.org"] }, features: { rbac: false } },
  });
  assertEquals(c.overall, "unknown");
  assertEquals(
    c.changes.filter((x) => x.class === "unknown").map((x) => x.change.path),
    ["machine.features.rbac"],
  );
});

Deno.test("a minor the table does not know classifies nothing", () => {
  assertEquals(
    classify(15, { machine: { time: { servers: ["pool.ntp.org"] } } }).overall,
    "unknown",
  );
  assertEquals(ruleFor(12, "machine.install.disk", "any"), undefined);
});

Deno.test("every rule names a source, and prefixes match whole segments only", () => {
  for (const r of ACTIVATION_TABLE) ok(r.source.length > 20, r.path);
  assertEquals(ruleFor(14, "machine.installer", "any"), undefined);
  assertEquals(ruleFor(14, "machine.install.disk", "any")?.class, "installUpgradeOnly");
});

Deno.test("an empty diff is immediate and names no change", () => {
  const c = classify(14, { machine: { time: { servers: ["time.cloudflare.com"] } } });
  assertEquals(c.changes, []);
  assertEquals(c.overall, "immediate");
});

Deno.test("patch directives are refused, not guessed at", () => {
  let err: unknown;
  try {
    mergePatch(RUNNING, { machine: { $patch: "delete" } });
  } catch (e) {
    err = e;
  }
  ok(err instanceof PatchInvalid);
  assertEquals((err as PatchInvalid).path, "machine.$patch");
});

Deno.test("1.14 rejects REBOOT; 1.13 accepts it but cairn never sends it (one opaque step)", () => {
  assertEquals(modeRejectedByVersion(14, "reboot")?.reason, "ConfigApplyModeUnsupported");
  assertEquals(modeRejectedByVersion(13, "reboot"), undefined);
  assertEquals(modeRejectedByVersion(14, "staged"), undefined);
  assertEquals(modeFitsClass("reboot", "explicitActivation")?.reason, "ConfigApplyModeMismatch");
  assertEquals(modeFitsClass("try", "immediate")?.reason, "ConfigApplyModeMismatch");
});

Deno.test("each class has the mode that brings it about; others are refused", () => {
  assertEquals(modeFitsClass("noReboot", "immediate"), undefined);
  assertEquals(modeFitsClass("staged", "immediate")?.reason, "ConfigApplyModeMismatch");
  assertEquals(modeFitsClass("staged", "explicitActivation"), undefined);
  assertEquals(modeFitsClass("noReboot", "explicitActivation")?.reason, "ConfigApplyModeMismatch");
  assertEquals(modeFitsClass("noReboot", "installUpgradeOnly"), undefined);
  assertEquals(modeFitsClass("staged", "installUpgradeOnly"), undefined);
  assertEquals(talosMode("staged"), "STAGED");
  assertEquals(talosMode("noReboot"), "NO_REBOOT");
});

Deno.test("the declared class must be the diff's class", () => {
  const c = classify(14, { cluster: { etcd: { extraArgs: { "election-timeout": "1" } } } });
  assertEquals(declaredClassRefusal("immediate", c)?.reason, "ConfigActivationMismatch");
  assertEquals(declaredClassRefusal("explicitActivation", c), undefined);
});
